"""The history and the change-log contract's DDL-side fields: source events (parser options
from the log), snapshot events (resync), catalog descriptions (drift), blocked tables."""

from __future__ import annotations

import pytest

from ddlcore.history import SchemaHistory
from ddlcore.history.history import HistoryError
from ddlcore.model import TableId

SOURCE = {"dialect": "mysql", "flavor": "mariadb", "epoch": "e1",
          "parser_options": {"lower_case_table_names": 1, "character_set_server": "utf8mb4",
                             "collation_server": "utf8mb4_general_ci"}}


def ddl(seq, text, db="shop", **kw):
    return {"seq": seq, "op": "ddl", "position": f"bin.1:{seq}", "database": db, "ddl": text, **kw}


def source(seq, **over):
    return {"seq": seq, "op": "source", "position": f"bin.1:{seq}", "source": {**SOURCE, **over}}


@pytest.fixture
def history(tmp_path):
    h = SchemaHistory.open(tmp_path / "h.sqlite", dialect="mysql", lenient=True)
    yield h
    h.close()


# ---------------------------------------------------------------------------- source events


def test_source_event_options_apply_from_its_seq_and_survive_a_restart(tmp_path):
    path = tmp_path / "h.sqlite"
    with SchemaHistory.open(path, dialect="mysql", lenient=True) as h:
        ev = h.record(source(1))
        assert ev.status == "source" and "lower_case_table_names" in ev.reason
        h.record(ddl(2, "CREATE DATABASE shop"))
        h.record(ddl(3, "CREATE TABLE Orders (id int)"))
        # lower_case_table_names=1: the server stores and compares the name in lower case
        assert h.table_at("shop.orders", 3) is not None
        assert h.current_tables().get("shop.orders").default_character_set_name == "utf8mb4"
    with SchemaHistory.open(path, dialect="mysql", lenient=True) as h:
        h.record(ddl(4, "ALTER TABLE ORDERS ADD x int"))
        assert [c.name for c in h.table_at("shop.orders").columns] == ["id", "x"]
        assert h.options["lower_case_table_names"] == 1


def test_source_event_of_another_dialect_or_with_unknown_options_is_refused(history):
    with pytest.raises(HistoryError, match="dialect 'postgres'"):
        history.record(source(1, dialect="postgres"))
    with pytest.raises(HistoryError, match="unknown mysql parser option"):
        history.record(source(1, parser_options={"search_path": "public"}))


def test_table_name_rules_cannot_change_after_tables_exist(history):
    history.record(ddl(1, "CREATE TABLE t (id int)"))
    with pytest.raises(HistoryError, match="lower_case_table_names"):
        history.record(source(2))
    history.record(source(3, parser_options={"lower_case_table_names": 0}))  # unchanged: fine


# ---------------------------------------------------------------------------- blocked tables


def test_a_failed_alter_blocks_the_table_until_a_resync(history):
    history.record(ddl(1, "CREATE TABLE t (id int, a int)"))
    ev = history.record(ddl(2, "ALTER TABLE t ADD COLUMN ((("))
    assert ev.status == "failed"
    v = history.version_at("shop.t", 2)
    assert v.blocked and v.table is None and v.reason.startswith("schema unknown since seq 2: ")
    assert history.table_at("shop.t", 2) is None and history.table_at("shop.t", 1) is not None
    # a later ALTER cannot give it a guessed schema: it stays blocked with the first reason
    history.record(ddl(3, "ALTER TABLE t ADD COLUMN b int"))
    assert history.version_at("shop.t", 3).reason == v.reason
    # the resync (SHOW CREATE TABLE at the current position) gives it a schema again
    history.record(ddl(4, "CREATE TABLE `t` (`id` int(11), `a` int(11), `c` int(11))", snapshot=True))
    v4 = history.version_at("shop.t", 4)
    assert v4.kind == "snapshot" and [c.name for c in v4.table.columns] == ["id", "a", "c"]
    assert [v.kind for v in history.versions("shop.t")] == ["create", "blocked", "snapshot"]


def test_blocked_survives_a_restart_and_create_unblocks(tmp_path):
    path = tmp_path / "h.sqlite"
    with SchemaHistory.open(path, dialect="mysql", lenient=True) as h:
        h.record(ddl(1, "CREATE TABLE t (id int)"))
        h.record(ddl(2, "ALTER TABLE t MODIFY nope int"))  # applies to no known column: fails
        assert h.version_at("shop.t").blocked
    with SchemaHistory.open(path, dialect="mysql", lenient=True) as h:
        h.record(ddl(3, "ALTER TABLE t ADD b int"))
        assert h.version_at("shop.t").blocked
        h.record(ddl(4, "CREATE TABLE t (id bigint)"))
        assert h.version_at("shop.t").kind == "create"


def test_failed_rename_blocks_both_sides_and_unreadable_names_block_the_database(history):
    history.record(ddl(1, "CREATE TABLE a (id int)"))
    history.record(ddl(2, "CREATE TABLE other (id int)"))
    history.record(ddl(3, "RENAME TABLE a TO b junk junk"))
    assert history.version_at("shop.a").blocked and history.version_at("shop.b").blocked
    assert not history.version_at("shop.other").blocked
    history.record(ddl(4, "ALTER TABLE ((( x"))
    assert history.version_at("shop.other").blocked
    assert "could not be read" in history.version_at("shop.other").reason


def test_strict_mode_still_raises_and_blocks_nothing(tmp_path):
    from ddlcore.errors import DdlParseError

    with SchemaHistory.open(tmp_path / "h.sqlite", dialect="mysql") as h:
        h.record(ddl(1, "CREATE TABLE t (id int)"))
        with pytest.raises(DdlParseError):
            h.record(ddl(2, "ALTER TABLE t ADD ((("))
        assert h.version_at("shop.t").kind == "create"


# ---------------------------------------------------------------------------- snapshot


def test_snapshot_replaces_without_warning_and_an_equal_one_makes_no_version(history):
    history.record(ddl(1, "CREATE TABLE t (id int)"))
    ev = history.record(ddl(2, "CREATE TABLE `t` (`id` int(11) DEFAULT NULL, `x` int(11))", snapshot=True))
    assert not ev.warnings
    assert [v.kind for v in history.versions("shop.t")] == ["create", "snapshot"]
    history.record(ddl(3, "CREATE TABLE `t` (`id` int(11) DEFAULT NULL, `x` int(11))", snapshot=True))
    assert len(history.versions("shop.t")) == 2
    ev = history.record(ddl(4, "CREATE TABLE t (id int)"))  # a plain CREATE over it still says so
    assert any("already existed" in w for w in ev.warnings)


# ---------------------------------------------------------------------------- catalog


def _table(name, columns, db="shop"):
    """The table ``CREATE TABLE name (columns)`` gives (what a catalog would describe)."""
    h = SchemaHistory(dialect="mysql")
    h.record(ddl(1, f"CREATE TABLE {name} ({columns})", db=db))
    return h.table_at(f"{db}.{name}")


def test_catalog_is_recorded_as_given_and_disagreement_is_drift(history):
    t = _table("t", "id int, a bigint")
    ev = history.record(ddl(1, "CREATE TABLE t (id int, a int)", catalog={"tables": [t.to_json()]}))
    assert history.table_at("shop.t") == t
    assert [w for w in ev.warnings if w.startswith("drift: ")] == [
        "drift: shop.t: column a: data_type parsed 'int', catalog 'bigint'"]
    t2 = _table("t", "id int, a bigint, b int")
    ev = history.record(ddl(2, "ALTER TABLE t ADD b int", catalog={"tables": [t2.to_json()]}))
    assert history.table_at("shop.t") == t2  # the parse of a bigint column would differ: catalog wins
    assert not [w for w in ev.warnings if w.startswith("drift")]


def test_catalog_of_unparsable_text_is_recorded_and_blocks_nothing(history):
    t = _table("t", "id int")
    ev = history.record(ddl(1, "CREATE TABLE t (id int,,, WE CANNOT PARSE",
                            catalog={"tables": [t.to_json()]}))
    assert ev.status == "applied" and history.table_at("shop.t") == t
    assert any(w.startswith("drift: the DDL text could not be parsed") for w in ev.warnings)


def test_one_query_string_with_several_commands_is_applied_once(history):
    history.record(ddl(1, "CREATE TABLE a (id int)"))
    history.record(ddl(2, "CREATE TABLE b (id int)"))
    text = "ALTER TABLE a ADD x int; ALTER TABLE b ADD y int"
    a = _table("a", "id int, x int")
    b = _table("b", "id int, y int")
    e1 = history.record(ddl(3, text, catalog={"tables": [a.to_json()]}))
    e2 = history.record(ddl(4, text, catalog={"tables": [b.to_json()]}))
    assert e1.status == e2.status == "applied"
    assert not [w for w in e1.warnings + e2.warnings if w.startswith("drift")], e1.warnings + e2.warnings
    assert history.table_at("shop.a") == a and history.table_at("shop.b") == b


def test_catalog_rename_and_drop(history):
    history.record(ddl(1, "CREATE TABLE a (id int)"))
    history.record(ddl(2, "CREATE TABLE gone (id int)"))
    a2 = _table("a2", "id int")
    history.record(ddl(3, "ALTER TABLE a RENAME TO a2", catalog={
        "tables": [a2.to_json()], "renamed": [{"from": TableId("shop", None, "a").to_json(),
                                               "to": TableId("shop", None, "a2").to_json()}]}))
    assert history.table_at("shop.a") is None
    v = history.version_at("shop.a2")
    assert v.kind == "rename" and v.previous_id == TableId("shop", None, "a")
    history.record(ddl(4, "DROP TABLE gone", catalog={"tables": [], "dropped": [TableId("shop", None, "gone").to_json()]}))
    assert history.table_at("shop.gone") is None and history.version_at("shop.gone").kind == "drop"


def test_history_cli_records_source_and_catalog_events_of_a_change_log(tmp_path):
    import json

    from click.testing import CliRunner

    from ddlcore.cli import main

    log = tmp_path / "changelog.jsonl"
    events = [source(1), ddl(2, "CREATE DATABASE shop", db=None), ddl(3, "CREATE TABLE Orders (id int)"),
              {"seq": 4, "op": "c", "position": "bin.1:4", "database": "shop", "table": "ORDERS", "after": [1]},
              ddl(5, "ALTER TABLE t ((("), ddl(6, "CREATE TABLE `orders` (`id` bigint(20))", snapshot=True)]
    log.write_text("".join(json.dumps({"ts": None, "table": None, "before": None, "after": None, **e}) + "\n"
                           for e in events))
    store = tmp_path / "h.sqlite"
    r = CliRunner().invoke(main, ["history", "record", "--dialect", "mysql", "--store", str(store), "--lenient", str(log)])
    assert r.exit_code == 0, r.output
    assert "1 source event(s)" in r.output + (r.stderr if r.stderr_bytes else "")
    with SchemaHistory.open(store) as h:
        assert [v.kind for v in h.versions("shop.orders")] == ["create", "snapshot"]
        assert h.options["lower_case_table_names"] == 1
