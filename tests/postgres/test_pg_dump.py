"""pg_dump round trip: each construct case of test_statements runs in a real PostgreSQL 15,
``pg_dump --schema-only`` writes the database back as DDL (its own spellings: ``set_config``
of an empty search_path, schema-qualified names, sequences created apart and attached with
``ALTER SEQUENCE ... OWNED BY`` / ``ALTER TABLE ... SET DEFAULT``, constraints added by ``ALTER
TABLE ONLY`` ...), the dump is restored with psql into a second database, and ddlcore's model
of the dump must equal the restored database's catalog, read under the dump's (empty) search
path.  (The restored tables, not the original ones: a dump does not keep attnum gaps or
declared array dimensions, so neither does its model.)"""

from __future__ import annotations

import subprocess

import pytest

import ddlcore
from tests.postgres.oracle import model_diffs
from tests.postgres.test_statements import CASES
from tests.servers.pg_catalog import catalog_tables, install_describe
from tests.servers.postgres import PG_BIN

pytestmark = pytest.mark.postgres


@pytest.mark.parametrize("name", list(CASES))
def test_pg_dump_of_the_case_parses_to_the_restored_catalog(postgres, postgres_db, name):
    with postgres.connect(postgres_db) as conn:
        conn.execute("SET search_path = public")
        for text in CASES[name]:
            conn.execute(text)
    dump = subprocess.run([str(PG_BIN / "pg_dump"), "--schema-only", "--no-owner", "-d", postgres.dsn(postgres_db)],
                          capture_output=True, text=True, timeout=60, check=True).stdout
    restored = postgres_db + "_r"
    postgres.create_database(restored)
    try:
        subprocess.run([str(PG_BIN / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", postgres.dsn(restored)],
                       input=dump, capture_output=True, text=True, timeout=60, check=True)
        with postgres.connect(restored) as conn:
            install_describe(conn)
            conn.execute("SELECT pg_catalog.set_config('search_path', '', false)")
            server = catalog_tables(conn, postgres_db)
    finally:
        with postgres.connect() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{restored}" WITH (FORCE)')
    parser = ddlcore.get_dialect("postgres").parser(database=postgres_db)
    tables = parser.new_tables()
    results = parser.parse(dump, tables)
    assert not [r for r in results if r.status == "failed"]
    assert tables.search_path == ()  # pg_dump's set_config('search_path', '', false)
    model = {(t.id.schema, t.id.name): t for t in tables}
    diffs = model_diffs(model, server)
    assert not diffs, "\n".join(diffs)
