"""The PostgreSQL registry of user-defined types and sequences (``Tables.types``) is part of the
schema history's persisted state: a history reopened from its SQLite file goes on with the
enums, domains, composite types, sequences and search path in force, without re-parsing."""

from __future__ import annotations

from ddlcore import TableId
from ddlcore.history import SchemaHistory


def _record(h: SchemaHistory, seq: int, ddl: str) -> None:
    h.record({"seq": seq, "ddl": ddl, "position": f"0/{seq:X}"})


def test_types_and_search_path_survive_reopening(tmp_path):
    store = tmp_path / "history.sqlite"
    with SchemaHistory(store, dialect="postgres") as h:
        _record(h, 1, "CREATE SCHEMA shop")
        _record(h, 2, "SET search_path = shop, public")
        _record(h, 3, "CREATE TYPE mood AS ENUM ('sad', 'ok')")
        _record(h, 4, "CREATE DOMAIN short AS varchar(5) NOT NULL")
        _record(h, 5, "CREATE TYPE pair AS (x int, y text)")
        _record(h, 6, "CREATE TABLE t (id serial, m mood, s short)")
    with SchemaHistory(store) as h:
        _record(h, 7, "ALTER TYPE mood ADD VALUE 'happy' BEFORE 'ok'")
        _record(h, 8, "ALTER TABLE t ADD COLUMN s2 short, ADD COLUMN p pair")
        _record(h, 9, "CREATE TABLE tp OF pair")
        _record(h, 10, "ALTER SEQUENCE t_id_seq RENAME TO t_seq")
        t = h.table_at(TableId(None, "shop", "t"))
        tp = h.table_at(TableId(None, "shop", "tp"))
        types = h.tables_at().types
    cols = {c.name: c for c in t.columns}
    assert cols["m"].enum_values == ("sad", "happy", "ok")
    assert (cols["s2"].domain_name, cols["s2"].column_type, cols["s2"].nullable) == ("short", "short", False)
    assert cols["p"].data_type == "USER-DEFINED" and cols["p"].udt_name == "pair"
    assert cols["id"].column_default == "nextval('t_seq'::regclass)"
    assert [c.name for c in tp.columns] == ["x", "y"]
    assert {"shop.mood", "shop.short", "shop.pair", "shop.t_seq"} <= set(types)
    assert "shop.t_id_seq" not in types


def test_types_at_an_earlier_position(tmp_path):
    with SchemaHistory(tmp_path / "h.sqlite", dialect="postgres") as h:
        _record(h, 1, "CREATE TYPE color AS ENUM ('red')")
        _record(h, 2, "CREATE TABLE c (x color)")
        _record(h, 3, "ALTER TYPE color ADD VALUE 'blue'")
        before = h.table_at(TableId(None, "public", "c"), 2)
        after = h.table_at(TableId(None, "public", "c"))
    assert before.columns[0].enum_values == ("red",)
    assert after.columns[0].enum_values == ("red", "blue")
