"""Oracle tests against a real PostgreSQL 15: every PostgreSQL corpus file is replayed statement
by statement in a fresh database; the statements the server accepted are parsed by ddlcore, and
the model must equal the server's catalog (``information_schema.columns`` + ``pg_attribute`` /
``pg_type`` / ``pg_constraint``, read by ``tests/servers/pg_catalog.py``) for every table, field
by field, and the primary key in key order.

Generation expressions are kept by ddlcore as written while the server re-prints them
(``pg_get_expr``): they are compared after ``normalize_expression``.  Everything else is
compared exactly.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ddlcore
from tests.servers.pg_catalog import catalog_tables, install_describe, replay_statements

pytestmark = pytest.mark.postgres

COMPARED_TABLE_FIELDS = ("primary_key", "comment", "replica_identity", "options")
COMPARED_COLUMN_FIELDS = ("name", "ordinal_position", "data_type", "column_type", "nullable",
                          "column_default", "character_maximum_length", "character_octet_length",
                          "numeric_precision", "numeric_scale", "datetime_precision", "interval_type",
                          "collation_name", "identity", "generation_expression", "generation_stored",
                          "array_dimensions", "enum_values", "udt_schema", "udt_name", "domain_schema",
                          "domain_name", "domain_base_type", "comment")

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


def normalize_expression(text: str | None) -> str | None:
    """An expression compared modulo printing: no quotes, no white space, lower case, no
    parentheses, no casts the server adds (``(qty)::numeric``)."""
    if text is None:
        return None
    t = re.sub(r"::[a-z_]+(?: (?:precision|varying|without time zone|with time zone))?", "", text.replace('"', "").lower())
    return re.sub(r"[\s()]+", "", t)


def _balanced(t: str) -> bool:
    depth = 0
    for ch in t:
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            return False
    return depth == 0


def statements_of(path: Path) -> list[str]:
    """The statements of a corpus file, split by ddlcore's PostgreSQL splitter."""
    parser = ddlcore.get_dialect("postgres").parser()
    return [s.text for s in parser.split(path.read_text(encoding="utf-8"))]


def column_diffs(ours: dict, theirs: dict) -> list[str]:
    out = []
    for f in COMPARED_COLUMN_FIELDS:
        a, b = ours.get(f), theirs.get(f)
        if f == "generation_expression":
            a, b = normalize_expression(a), normalize_expression(b)
        if isinstance(a, tuple):
            a = list(a)
        if isinstance(b, tuple):
            b = list(b)
        if a != b:
            out.append(f"{theirs['name']}.{f}: ddlcore {a!r} != server {b!r}")
    return out


def model_diffs(model: dict, server: dict) -> list[str]:
    diffs = []
    for key in sorted(set(model) | set(server)):
        if key not in model:
            diffs.append(f"{key}: only in the server")
            continue
        if key not in server:
            diffs.append(f"{key}: only in ddlcore")
            continue
        a, b = model[key].to_json(), server[key].to_json()
        for f in COMPARED_TABLE_FIELDS:
            if a.get(f) != b.get(f):
                diffs.append(f"{key}: {f}: ddlcore {a.get(f)!r} != server {b.get(f)!r}")
        if [c["name"] for c in a["columns"]] != [c["name"] for c in b["columns"]]:
            diffs.append(f"{key}: columns ddlcore {[c['name'] for c in a['columns']]} != server "
                         f"{[c['name'] for c in b['columns']]}")
            continue
        for ca, cb in zip(a["columns"], b["columns"]):
            diffs.extend(f"{key}: {d}" for d in column_diffs(ca, cb))
    return diffs


def run_oracle(postgres, dbname: str, corpora: Path, files: list[str]) -> tuple[list[str], list[str], int]:
    """Replay ``files`` in order into ``dbname`` and ddlcore; return (diffs, ddlcore failures,
    statements accepted)."""
    parser = ddlcore.get_dialect("postgres").parser(database=dbname)
    tables = parser.new_tables()
    failures: list[str] = []
    accepted = 0
    with postgres.connect(dbname) as conn:
        install_describe(conn)
        conn.execute("SET search_path = public")  # the installer's script leaves its own
        for rel in files:
            replay = replay_statements(conn, statements_of(corpora / rel))
            accepted += len(replay.accepted)
            for text in replay.accepted:
                r = parser.apply(text, tables, lenient=True)
                if r.status == "failed":
                    failures.append(f"{rel}: {r.error}")
        server = catalog_tables(conn, dbname)
    model = {(t.id.schema, t.id.name): t for t in tables}
    return model_diffs(model, server), failures, accepted


@pytest.mark.parametrize("rel,before", PG_FILES, ids=[f for f, _ in PG_FILES])
def test_corpus_file_model_equals_postgres_catalog(postgres, postgres_db, corpora, rel, before):
    path = corpora / rel
    if not path.is_file():
        pytest.fail(f"corpus file {rel} missing from {corpora}")
    diffs, failures, accepted = run_oracle(postgres, postgres_db, corpora, [*before, rel])
    assert not failures, "ddlcore could not apply statements the server accepted:\n" + "\n".join(failures)
    assert not diffs, f"{len(diffs)} differences from PostgreSQL 15:\n" + "\n".join(diffs[:60])
    assert accepted > 0 or rel.endswith("upgrade-pre-0.9.10.sql"), "the server accepted no statement"
