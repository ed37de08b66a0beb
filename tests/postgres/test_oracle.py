"""Oracle tests against a real PostgreSQL 15: every PostgreSQL corpus file is replayed statement
by statement in a fresh database; the statements the server accepted are parsed by ddlcore, and
the model must equal the server's catalog (``information_schema.columns`` + ``pg_attribute`` /
``pg_type`` / ``pg_constraint``, read by ``tests/servers/pg_catalog.py``) for every table, field
by field, and the primary key in key order.

The comparison (fields compared, how differences read) is tests/postgres/oracle.py.
"""

from __future__ import annotations

import pytest

from tests.postgres.oracle import run_oracle

pytestmark = pytest.mark.postgres

#: (corpus file, files replayed before it in the same database)
PG_FILES = [
    ("pagila/pagila-schema.sql", ()),
    ("pagila/pagila-schema-jsonb.sql", ()),
    ("sakila-jooq/postgres-sakila-schema.sql", ()),
    ("sakila-jooq/yugabytedb-sakila-schema.sql", ()),
    ("guacamole/postgresql/schema/001-create-schema.sql", ()),
    ("guacamole/postgresql/schema/upgrade/upgrade-pre-1.0.0.sql", ()),
    ("guacamole/postgresql/schema/upgrade/upgrade-pre-0.9.10.sql", ()),
    # drop-objects after the schema it drops
    ("sakila-jooq/postgres-sakila-drop-objects.sql", ("sakila-jooq/postgres-sakila-schema.sql",)),
]


@pytest.mark.parametrize("rel,before", PG_FILES, ids=[f for f, _ in PG_FILES])
def test_corpus_file_model_equals_postgres_catalog(postgres, postgres_db, corpora, rel, before):
    path = corpora / rel
    if not path.is_file():
        pytest.fail(f"corpus file {rel} missing from {corpora}")
    diffs, failures, accepted = run_oracle(postgres, postgres_db, corpora, [*before, rel])
    assert not failures, "ddlcore could not apply statements the server accepted:\n" + "\n".join(failures)
    assert not diffs, f"{len(diffs)} differences from PostgreSQL 15:\n" + "\n".join(diffs[:60])
    assert accepted > 0 or rel.endswith("upgrade-pre-0.9.10.sql"), "the server accepted no statement"
