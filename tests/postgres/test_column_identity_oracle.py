"""Column identity (``Column.column_id``) of PostgreSQL tables is the server's ``attnum``:
checked against ``pg_attribute`` after renames, retypes, drops and re-adds (issue 31, item 0)."""

from __future__ import annotations

import uuid

import pytest

import ddlcore

STATEMENTS = [
    "CREATE TABLE t (id int PRIMARY KEY, a text, c int, tags text[])",
    "ALTER TABLE t RENAME COLUMN a TO b",
    "ALTER TABLE t DROP COLUMN c, ADD COLUMN c bigint, ALTER COLUMN b TYPE varchar(9)",
    "ALTER TABLE t DROP COLUMN tags",
    "ALTER TABLE t ADD COLUMN tags int[], ADD COLUMN a text",
    "ALTER TABLE t RENAME TO u",
]


@pytest.mark.postgres
def test_column_ids_equal_pg_attribute_attnum(postgres):
    name = f"ident_{uuid.uuid4().hex[:8]}"
    postgres.create_database(name)
    parser = ddlcore.get_dialect("postgres").parser(database=name)
    tables = parser.new_tables()
    try:
        with postgres.connect(name) as conn:
            for text in STATEMENTS:
                conn.execute(text)
                parser.apply(text, tables)
                rel = "u" if text.endswith("TO u") else "t"
                server = dict(conn.execute(
                    "SELECT attname, attnum FROM pg_attribute WHERE attrelid = %s::regclass "
                    "AND attnum > 0 AND NOT attisdropped", (f"public.{rel}",)).fetchall())
                ours = {c.name: c.column_id for c in tables.get(f"{name}.public.{rel}").columns}
                assert ours == server, text
        assert ours == {"id": 1, "b": 2, "c": 5, "tags": 6, "a": 7}
    finally:
        with postgres.connect() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
