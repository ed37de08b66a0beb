"""Column identity (``Column.column_id``): given where the DDL is applied, kept through renames
and retypes, new for DROP + ADD, never reused within a table, persisted in the history and used
by its diff (issue 31, item 0)."""

from __future__ import annotations

import json

import hypothesis.strategies as st
from hypothesis import given, settings

import ddlcore
from ddlcore.history import SchemaHistory
from ddlcore.history.sqlite import SQLiteStore
from ddlcore.model import Column, Table, TableId


def _mysql():
    return ddlcore.get_dialect("mysql").parser()


def _pg():
    return ddlcore.get_dialect("postgres").parser()


def _ids(table) -> dict[str, int]:
    return {c.name: c.column_id for c in table.columns}


def _history(parser, script: str, database: str = "d", **kw) -> SchemaHistory:
    h = SchemaHistory(parser=parser, **kw)
    for i, st_ in enumerate(parser.split(script), 1):
        h.record({"seq": i, "ddl": st_.text, "database": database})
    return h


def test_drop_and_add_in_one_alter_is_not_a_rename():
    """The issue's example: the old values of ``a`` must never appear under ``b``."""
    h = _history(_mysql(), "CREATE TABLE t (id INT PRIMARY KEY, a INT, c INT);"
                           "ALTER TABLE t DROP COLUMN a, ADD COLUMN b INT AFTER id;")
    d = h.diff("d.t", 1, 2)
    assert d.renamed == ()
    assert [c.name for c in d.dropped] == ["a"] and [c.name for c in d.added] == ["b"]
    t = h.table_at("d.t", 2)
    assert _ids(t) == {"id": 1, "b": 4, "c": 3} and t.next_column_id == 5


def test_rename_change_modify_keep_identity_and_ids_are_never_reused():
    h = _history(_mysql(), """
        CREATE TABLE t (id INT PRIMARY KEY, a INT, c INT);
        ALTER TABLE t RENAME COLUMN a TO a2;
        ALTER TABLE t CHANGE a2 a3 BIGINT, MODIFY c VARCHAR(5) FIRST;
        ALTER TABLE t DROP COLUMN c;
        ALTER TABLE t ADD COLUMN c INT;
        ALTER TABLE t CHANGE a3 x INT, CHANGE id a3 INT;
    """)
    assert _ids(h.table_at("d.t", 2)) == {"id": 1, "a2": 2, "c": 3}
    assert _ids(h.table_at("d.t", 3)) == {"c": 3, "id": 1, "a3": 2}
    assert _ids(h.table_at("d.t", 5)) == {"id": 1, "a3": 2, "c": 4}  # not 3: ids are never reused
    assert _ids(h.table_at("d.t", 6)) == {"a3": 1, "x": 2, "c": 4}  # simultaneous CHANGEs
    d = h.diff("d.t", 1, 5)
    assert d.renamed == (("a", "a3"),)
    assert [c.name for c in d.dropped] == ["c"] and [c.name for c in d.added] == ["c"]
    assert [c.name for c in h.diff("d.t", 4, 5).added] == ["c"]


def test_postgres_identity_is_attnum():
    h = _history(_pg(), """
        CREATE TABLE t (id int PRIMARY KEY, a text, c int);
        ALTER TABLE t RENAME COLUMN a TO b;
        ALTER TABLE t DROP COLUMN c, ADD COLUMN c bigint, ALTER COLUMN b TYPE varchar(9);
    """, database="db")
    t = h.table_at("db.public.t", 3)
    assert _ids(t) == {"id": 1, "b": 2, "c": 4}
    assert all(c.column_id == c.ordinal_position for c in t.columns)  # attnum, as pg_attribute
    d = h.diff("db.public.t", 1, 3)
    assert d.renamed == (("a", "b"),) and [c.name for c in d.retyped] == ["b"]
    assert [c.name for c in d.dropped] == ["c"] and [c.name for c in d.added] == ["c"]


def test_identity_round_trips_through_json_and_the_sqlite_history(tmp_path):
    path = tmp_path / "h.sqlite"
    script = "CREATE TABLE t (id INT, a INT); ALTER TABLE t DROP COLUMN a, ADD COLUMN a INT;"
    h = _history(_mysql(), script, store=SQLiteStore(path))
    t = h.table_at("d.t", 2)
    assert Table.from_json(json.loads(t.to_json_text())) == t
    h.close()
    again = SchemaHistory(store=SQLiteStore(path), parser=_mysql())
    assert again.table_at("d.t", 2) == t and _ids(t) == {"id": 1, "a": 3}
    again.record({"seq": 3, "ddl": "ALTER TABLE t ADD COLUMN b INT", "database": "d"})
    assert _ids(again.table_at("d.t", 3)) == {"id": 1, "a": 3, "b": 4}


def test_tables_without_ids_get_them_by_position_and_diff_by_name():
    """A history written before identities existed: its bodies have no ``column_id``."""
    old = Table(TableId("d", None, "t"), (Column("id", 1, "int", "int"), Column("a", 2, "int", "int")))
    assert old.identified().column_by_id(2).name == "a" and old.identified().next_column_id == 3
    new = Table(TableId("d", None, "t"), (Column("id", 1, "int", "int"), Column("b", 2, "int", "int")))
    from ddlcore.history.diff import diff_tables
    d = diff_tables([old, new], old.id, 1, 2)
    assert d.renamed == () and [c.name for c in d.dropped] == ["a"]


def test_a_snapshot_keeps_the_identities_of_same_named_columns():
    p = _mysql()
    h = SchemaHistory(parser=p)
    h.record({"seq": 1, "ddl": "CREATE TABLE t (id INT, a INT, b INT)", "database": "d"})
    h.record({"seq": 2, "ddl": "ALTER TABLE t DROP COLUMN a", "database": "d"})
    h.record({"seq": 3, "ddl": "CREATE TABLE t (id INT, b BIGINT, z INT)", "database": "d", "snapshot": True})
    assert _ids(h.table_at("d.t", 3)) == {"id": 1, "b": 3, "z": 4}


# -- property: random ALTER sequences against a reference fold of identities -----------------

_NAMES = ["a", "b", "c", "d", "e"]


@st.composite
def _alter_sequences(draw):
    """``(statements, expected ids by name, next id)``: a table and ALTERs made of ADD, DROP,
    RENAME, CHANGE and MODIFY clauses, with the identities a reference fold gives them (a
    column gets its id when the statement that adds it has been applied: one added and dropped
    in the same statement never had one)."""
    cols: dict[str, int | None] = {"id": 1, "a": 2, "b": 3}
    nxt = 4
    stmts = ["CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)"]
    for _ in range(draw(st.integers(1, 6))):
        clauses = []
        for _ in range(draw(st.integers(1, 3))):
            free = [n for n in _NAMES if n not in cols]
            mine = [n for n in cols if n != "id"]
            ops = (["add"] if free else []) + (["drop", "modify"] if mine else []) + \
                  (["rename", "change"] if mine and free else [])
            op = draw(st.sampled_from(ops))
            if op == "add":
                n = draw(st.sampled_from(free))
                clauses.append(f"ADD COLUMN {n} INT")
                cols[n] = None
            elif op == "drop":
                n = draw(st.sampled_from(mine))
                clauses.append(f"DROP COLUMN {n}")
                del cols[n]
            elif op == "modify":
                n = draw(st.sampled_from(mine))
                clauses.append(f"MODIFY {n} BIGINT")
            else:
                n, m = draw(st.sampled_from(mine)), draw(st.sampled_from(free))
                clauses.append(f"RENAME COLUMN {n} TO {m}" if op == "rename" else f"CHANGE {n} {m} TEXT")
                cols = {(m if k == n else k): v for k, v in cols.items()}
            if op in ("rename", "change"):
                break  # a later clause may not name the new column in the same statement (MySQL)
        stmts.append("ALTER TABLE t " + ", ".join(clauses))
        for k, v in cols.items():
            if v is None:
                cols[k], nxt = nxt, nxt + 1
    return stmts, cols, nxt


@settings(max_examples=60, deadline=None)
@given(_alter_sequences())
def test_generated_alter_sequences_keep_the_reference_identities(case):
    stmts, expected, nxt = case
    p = _mysql()
    h = SchemaHistory(parser=p)
    for i, text in enumerate(stmts, 1):
        h.record({"seq": i, "ddl": text, "database": "d"})
    last = h.table_at("d.t", len(stmts))
    assert _ids(last) == expected and last.next_column_id == nxt
    d = h.diff("d.t", 1, h.versions("d.t")[-1].version)
    initial = {"a": 2, "b": 3}
    by_id = {i: n for n, i in expected.items()}
    assert sorted(c.name for c in d.dropped) == sorted(n for n, i in initial.items() if i not in by_id)
    assert sorted(d.renamed) == sorted((n, by_id[i]) for n, i in initial.items() if by_id.get(i, n) != n)
    assert sorted(c.name for c in d.added) == sorted(n for n, i in expected.items() if i >= 4)
