"""Recording DDL events: versions, idempotence, ordering, failures, content addressing,
schema change events, database defaults and session state."""

from __future__ import annotations

import json

import pytest

from ddlcore import DdlParseError, TableId
from ddlcore.history import (DdlEvent, HistoryError, MemoryStore, SchemaHistory, SQLiteStore,
                             StoreConflict)

from .minisql import MiniParser


def _record_script(h: SchemaHistory, text: str, start: int = 1, database: str | None = None):
    out = []
    for i, st in enumerate(h.parser.split(text), start):
        out.append(h.record({"seq": i, "position": f"bin.000001:{i * 100}", "ddl": st.text,
                             "database": database if i == start else None, "ts": 1_700_000_000_000 + i}))
    return out


@pytest.fixture(params=["memory", "sqlite"])
def history(request, tmp_path, mini):
    store = MemoryStore() if request.param == "memory" else SQLiteStore(tmp_path / "h.db")
    h = SchemaHistory(store, parser=mini)
    yield h
    h.close()


def test_record_stores_one_version_per_changed_table(history):
    evs = _record_script(history, """
        CREATE TABLE a (id int NOT NULL, PRIMARY KEY (id));
        CREATE TABLE b (x varchar(10));
        ALTER TABLE a ADD COLUMN y bigint;
        DROP TABLE b;
    """, database="shop")
    assert [e.status for e in evs] == ["applied"] * 4
    va = history.versions("shop.a")
    assert [(v.version, v.kind, v.valid_from_seq, v.valid_to_seq) for v in va] == [
        (1, "create", 1, 3), (2, "alter", 3, None)]
    assert va[0].position == "bin.000001:100" and va[0].ts == 1_700_000_000_001
    assert va[1].ddl == "ALTER TABLE a ADD COLUMN y bigint"
    assert va[1].table.column_names == ["id", "y"]
    assert va[1].fingerprint == va[1].table.fingerprint()
    vb = history.versions(TableId("shop", None, "b"))
    assert [(v.kind, v.table is None) for v in vb] == [("create", False), ("drop", True)]
    assert history.table_at("shop.b", 2) is not None and history.table_at("shop.b", 4) is None
    assert history.table_at("shop.a", 0) is None


def test_recording_a_recorded_seq_is_a_no_op(history):
    ev = {"seq": 5, "position": "p5", "ddl": "CREATE TABLE t (id int)", "database": "d"}
    first = history.record(ev)
    again = history.record(ev)
    assert first.recorded and not again.recorded
    assert again.changes[0].after == first.changes[0].after
    assert len(history.versions("d.t")) == 1
    assert history.store.event_count() == 1


def test_recorded_seq_with_other_ddl_is_an_error(history):
    history.record({"seq": 1, "ddl": "CREATE TABLE t (id int)", "database": "d"})
    with pytest.raises(HistoryError, match="already recorded with different DDL"):
        history.record({"seq": 1, "ddl": "CREATE TABLE u (id int)", "database": "d"})


def test_events_must_arrive_in_seq_order(history):
    history.record({"seq": 10, "ddl": "CREATE TABLE t (id int)", "database": "d"})
    with pytest.raises(HistoryError, match="increasing seq order"):
        history.record({"seq": 7, "ddl": "CREATE TABLE u (id int)", "database": "d"})
    history.record({"seq": 12, "ddl": "CREATE TABLE u (id int)"})  # gaps are fine
    assert history.table_at("d.u").id == TableId("d", None, "u")  # current database carried


def test_strict_failure_leaves_the_event_unrecorded(history):
    history.record({"seq": 1, "ddl": "CREATE TABLE t (id int)", "database": "d"})
    with pytest.raises(DdlParseError):
        history.record({"seq": 2, "ddl": "ALTER TABLE d.t FROB x", "database": "other"})
    assert history.last_seq == 1
    assert history.store.event(2) is None
    assert history.current_tables().current_database == "d"  # the event's database undone
    ev = history.record({"seq": 2, "ddl": "ALTER TABLE t ADD COLUMN y int"})
    assert ev.changes[0].after.id.database == "d"


def test_lenient_failure_is_recorded_and_listed(history):
    history.lenient = True
    history.record({"seq": 1, "ddl": "CREATE TABLE t (id int)", "database": "d"})
    ev = history.record({"seq": 2, "position": "p2", "ddl": "ALTER TABLE t FROB x"})
    assert ev.status == "failed" and ev.error["reason"]
    history.record({"seq": 3, "ddl": "ALTER TABLE t ADD COLUMN y int"})
    failed = history.failed()
    assert [(e.seq, e.position, e.status) for e in failed] == [(2, "p2", "failed")]
    assert history.table_at("d.t").column_names == ["id", "y"]
    # strict per call even on a lenient history
    with pytest.raises(DdlParseError):
        history.record({"seq": 4, "ddl": "CREATE TABLE (", "database": "d"}, lenient=False)


def test_skipped_statements_are_recorded_without_versions(history):
    evs = _record_script(history, "CREATE TABLE t (id int); INSERT INTO t VALUES (1); /* only a comment */",
                         database="d")
    assert [e.status for e in evs] == ["applied", "skipped"]
    assert history.store.event(2).reason
    ev = history.record({"seq": 3, "ddl": "-- nothing but a comment"})
    assert ev.status == "skipped"
    assert [e.seq for e in history.schema_changes()] == [1]
    assert [e.seq for e in history.schema_changes(include_skipped=True)] == [1, 2, 3]


def test_identical_bodies_are_stored_once(tmp_path, mini):
    h = SchemaHistory(SQLiteStore(tmp_path / "h.db"), parser=mini)
    for i in range(20):
        h.record({"seq": i + 1, "ddl": f"CREATE TABLE shard_{i} (id bigint NOT NULL, v varchar(20), PRIMARY KEY (id))",
                  "database": "d"})
    store = h.store
    assert len(store.dump("versions")) == 20
    assert len(store.dump("bodies")) == 1  # the id is not part of a body
    fps = {v.fingerprint for i in range(20) for v in h.versions(f"d.shard_{i}")}
    assert len(fps) == 1
    h.close()


def test_no_op_alter_makes_no_version(history):
    _record_script(history, "CREATE TABLE t (id int); ALTER TABLE t ENGINE = InnoDB; ALTER TABLE t ENGINE = InnoDB;"
                            " TRUNCATE TABLE t;", database="d")
    assert [v.kind for v in history.versions("d.t")] == ["create", "alter"]
    ev = history.event(4)
    assert [c.kind for c in ev.changes] == ["truncate"]
    assert ev.changes[0].version == 2


def test_rename_swap_keeps_versions(history):
    _record_script(history, """
        CREATE TABLE a (id int);
        CREATE TABLE b (x varchar(5));
        RENAME TABLE a TO tmp, b TO a, tmp TO b;
    """, database="d")
    assert history.table_at("d.a").column_names == ["x"]
    assert history.table_at("d.b").column_names == ["id"]
    assert history.table_at("d.tmp") is None and history.versions("d.tmp") == []
    (_, va2), (_, vb2) = history.versions("d.a"), history.versions("d.b")
    assert (va2.kind, va2.previous_id) == ("rename", TableId("d", None, "b"))
    assert (vb2.kind, vb2.previous_id) == ("rename", TableId("d", None, "a"))
    ev = history.event(3)
    assert [(c.kind, str(c.table_id), str(c.previous_id)) for c in ev.changes] == [
        ("rename", "d.tmp", "d.a"), ("rename", "d.a", "d.b"), ("rename", "d.b", "d.tmp")]
    assert ev.changes[0].version is None and ev.changes[1].version == 2


def test_rename_away_makes_a_tombstone(history):
    _record_script(history, "CREATE TABLE a (id int); RENAME TABLE a TO b;", database="d")
    va = history.versions("d.a")
    assert (va[-1].kind, va[-1].table, va[-1].renamed_to) == ("rename", None, TableId("d", None, "b"))
    vb = history.versions("d.b")
    assert (vb[0].kind, vb[0].previous_id) == ("rename", TableId("d", None, "a"))
    assert vb[0].fingerprint == va[0].fingerprint  # a rename keeps the fingerprint


def test_schema_change_event_json(history):
    _record_script(history, "CREATE TABLE t (id int); ALTER TABLE t ADD COLUMN v varchar(9);", database="d")
    ev = history.event(2)
    data = json.loads(json.dumps(ev.to_json()))
    assert data["seq"] == 2 and data["status"] == "applied" and data["database"] == "d"
    (c,) = data["changes"]
    assert c["kind"] == "alter" and c["table_id"] == {"database": "d", "schema": None, "name": "t"}
    assert [x["name"] for x in c["before"]["columns"]] == ["id"]
    assert [x["name"] for x in c["after"]["columns"]] == ["id", "v"]
    assert c["version"] == 2 and c["fingerprint"] == history.versions("d.t")[1].fingerprint
    stream = list(history.schema_changes(2, 2))
    assert stream[0].to_json() == ev.to_json()


def test_database_defaults_and_session_survive_a_restart(tmp_path, parser_factory):
    path = tmp_path / "h.db"
    with SchemaHistory(path, parser=parser_factory()) as h:
        _record_script(h, "CREATE DATABASE shop DEFAULT CHARACTER SET latin1; USE shop; SET NAMES utf8;")
    with SchemaHistory(path, parser=parser_factory()) as h:
        state = h.tables_at()
        assert state.current_database == "shop"
        assert state.databases["shop"].default_character_set_name == "latin1"
        assert state.session.get("character_set_client") in ("utf8", "utf8mb3")
        ev = h.record({"seq": 4, "ddl": "CREATE TABLE t (id int, v varchar(10))"})
        t = ev.changes[0].after
        assert t.id == TableId("shop", None, "t")
        assert t.column("v").character_set_name == "latin1"  # inherited from the database


def test_drop_database_versions_its_tables(history):
    _record_script(history, "CREATE DATABASE x; CREATE TABLE x.a (id int); CREATE TABLE x.b (id int); DROP DATABASE x;")
    assert history.table_at("x.a") is None and history.table_at("x.b") is None
    assert "x" not in history.tables_at().databases
    assert "x" in history.tables_at(3).databases


def test_store_remembers_dialect_options_and_filters(tmp_path, mini):
    path = tmp_path / "h.db"
    SchemaHistory(path, parser=mini, filters=["d.*"]).close()
    with pytest.raises(HistoryError, match="filters"):
        SchemaHistory(path, parser=mini, filters=["e.*"])
    with pytest.raises(HistoryError, match="options"):
        SchemaHistory(path, parser=MiniParser(lower_case_table_names=1))
    with SchemaHistory(path) as h:  # reading needs no parser
        assert h.dialect_name == "minisql" and h.filter.patterns == ("d.*",)


def test_another_writer_is_detected(tmp_path, mini):
    path = tmp_path / "h.db"
    a = SchemaHistory(path, parser=mini)
    b = SchemaHistory(path, parser=MiniParser())
    a.record({"seq": 1, "ddl": "CREATE TABLE t (id int)", "database": "d"})
    b.current_tables()  # b loads its state now...
    a.record({"seq": 2, "ddl": "CREATE TABLE u (id int)", "database": "d"})
    with pytest.raises(StoreConflict):  # ...and must not write over a's event
        b.record({"seq": 3, "ddl": "CREATE TABLE v (id int)", "database": "d"})
    b.record({"seq": 3, "ddl": "CREATE TABLE v (id int)", "database": "d"})  # reloaded: fine
    assert a.tables_at().get("d.u") is not None
    a.close()
    b.close()


def test_lower_case_table_names_folds_keys(tmp_path):
    h = SchemaHistory(tmp_path / "h.db", parser=MiniParser(lower_case_table_names=1))
    _record_script(h, "CREATE TABLE Orders (id int); ALTER TABLE ORDERS ADD COLUMN x int;", database="Shop")
    assert [v.version for v in h.versions("shop.orders")] == [1, 2]
    assert h.table_at("SHOP.Orders").column_names == ["id", "x"]
    h.close()
    with SchemaHistory(tmp_path / "h.db") as r:  # without the parser: the fold is remembered
        assert r.table_at("shop.ORDERS") is not None


def test_ddl_event_coercion():
    ev = DdlEvent.coerce({"seq": 3, "ddl": "x", "position": 17, "op": "ddl", "table": None})
    assert ev == DdlEvent(3, "x", "17", None, None)
    with pytest.raises(TypeError):
        DdlEvent.coerce({"seq": "3", "ddl": "x"})
    with pytest.raises(ValueError):
        DdlEvent.coerce({"ddl": "x"})


def test_compound_statement_event_is_one_statement(mysql_parser):
    h = SchemaHistory(parser=mysql_parser)
    ev = h.record({"seq": 1, "database": "d", "ddl":
                   "CREATE PROCEDURE p() BEGIN CREATE TABLE inner_t (id int); SELECT 1; END"})
    assert ev.status == "skipped" and h.tables_at().get("d.inner_t") is None
