"""``ddlcore capture debezium --from-file``: Debezium's own published messages, order, losses,
bad input and resuming (fixtures: tests/debezium/fixtures/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ddlcore.debezium import DebeziumError, DebeziumSettings, parse_record
from ddlcore.debezium_capture import DebeziumCapture, DebeziumCaptureOptions

FIX = Path(__file__).parent / "fixtures"
HISTORY = FIX / "mysql_history.jsonl"


def capture(out: Path, *files: Path, history: Path | None = HISTORY, **kw) -> tuple[list[dict], object]:
    cap = DebeziumCapture(DebeziumCaptureOptions(out=out, from_files=files, history=history, progress=False, **kw))
    stats = cap.run()
    events = [json.loads(x) for x in (out / "changelog.jsonl").read_text().splitlines()]
    return events, stats


def lines(path: Path, *values: object) -> Path:
    path.write_text("".join(json.dumps(v) + "\n" for v in values))
    return path


def row(op: str, pos: int, after: dict | None, before: dict | None = None, table: str = "customers", **src) -> dict:
    return {"op": op, "ts_ms": 1, "before": before, "after": after,
            "source": {"connector": "mysql", "name": "s", "db": "inventory", "table": table,
                       "file": "mysql-bin.000003", "pos": pos, "row": 0, "snapshot": "false", **src}}


def test_documented_events_become_the_rows_their_statements_wrote(tmp_path):
    events, stats = capture(tmp_path / "o", FIX / "mysql_docs_events.jsonl")
    ops = [e["op"] for e in events]
    assert ops == ["source", "ddl", "ddl", "ddl", "c", "u", "d"]  # the tombstone is skipped
    assert events[0]["source"]["dialect"] == "mysql" and events[0]["source"]["flavor"] == "mysql"
    assert events[4]["after"] == [1004, "Anne", "Kretchmar", "annek@noanswer.org"]
    assert events[5]["before"][1] == "Anne" and events[5]["after"][1] == "Anne Marie"  # UPDATE ... SET first_name
    assert events[6]["before"][0] == 1004 and events[6]["after"] is None
    assert events[5]["position"] == "mysql-bin.000003:484"
    assert stats.skipped == 1 and stats.quarantined == 0


def test_messages_with_schemas_from_an_old_connector_need_no_connector_field_with_connector_option(tmp_path):
    events, _ = capture(tmp_path / "o", FIX / "mysql_tutorial_with_schema.jsonl", connector="mysql")
    rows = [e for e in events if e["op"] == "c"]
    assert [r["after"] for r in rows] == [[1005, "Sarah", "Thompson", "kitt@acme.com"],
                                          [1006, "Kenneth", "Anderson", "kander@acme.com"]]


def test_documented_schema_change_is_a_ddl_event_in_binlog_order(tmp_path):
    docs = [json.loads(x) for x in (FIX / "mysql_docs_events.jsonl").read_text().splitlines() if x != "null"]
    alter = json.loads((FIX / "mysql_docs_schema_change.jsonl").read_text())
    create, update = docs[0], docs[1]
    after_alter = row("u", 700, {**update["after"], "middle_name": "M"},
                      {**update["after"], "middle_name": None})
    src = lines(tmp_path / "in.jsonl", after_alter, alter, update, create)  # arrival order scrambled
    events, stats = capture(tmp_path / "o", src)
    body = [(e["op"], e["position"]) for e in events if e["op"] != "source"][3:]
    assert body == [("c", "mysql-bin.000003:154"), ("u", "mysql-bin.000003:484"),
                    ("ddl", "mysql-bin.000003:570"), ("u", "mysql-bin.000003:700")]
    assert events[-1]["after"] == [1004, "Anne Marie", "M", "Kretchmar", "annek@noanswer.org"]
    assert "quarantine" not in events[-1] and stats.quarantined == 0


def test_double_decimals_are_quarantined_and_reported_once_with_the_setting(tmp_path):
    ddl = "CREATE TABLE t (id int primary key, big decimal(20,2), small decimal(5,2))"
    hist = lines(tmp_path / "h.jsonl", {"position": {"file": "b.000001", "pos": 4}, "databaseName": "d", "ddl": ddl,
                                        "tableChanges": []})
    msgs = [{"op": "c", "after": {"id": i, "big": 1.5, "small": 2.25},
             "source": {"connector": "mysql", "db": "d", "table": "t", "file": "b.000001", "pos": 10 + i, "row": 0}}
            for i in range(3)]
    warnings: list[str] = []
    double = DebeziumSettings(decimal_handling_mode="double")
    cap = DebeziumCapture(DebeziumCaptureOptions(out=tmp_path / "o", from_files=(lines(tmp_path / "m.jsonl", *msgs),),
                                                 history=hist, settings=double, progress=False),
                          on_warning=warnings.append)
    stats = cap.run()
    events = [json.loads(x) for x in (tmp_path / "o" / "changelog.jsonl").read_text().splitlines()]
    rows = [e for e in events if e["op"] == "c"]
    assert all("lossy: big: decimal.handling.mode=double" in r["quarantine"] for r in rows)
    assert all("small" not in r["quarantine"] for r in rows)
    assert rows[0]["after"] == [0, {"$dec": "1.50"}, {"$dec": "2.25"}]
    assert len([w for w in warnings if "d.t.big" in w]) == 1 and "decimal.handling.mode=precise" in warnings[0]
    sources = [e for e in events if e["op"] == "source"]
    assert sources[-1]["source"]["settings"]["losses"] == ["d.t.big: double"]
    assert stats.lossy == 3


def test_resumed_capture_writes_no_duplicate(tmp_path):
    out = tmp_path / "o"
    first, _ = capture(out, FIX / "mysql_docs_events.jsonl")
    again, stats = capture(out, FIX / "mysql_docs_events.jsonl")
    assert again == first and stats.duplicates == len(first) - 1  # the source event is not a record
    more = lines(tmp_path / "more.jsonl", row("c", 900, {"id": 1, "first_name": "a", "last_name": "b", "email": "c"}))
    grown, _ = capture(out, FIX / "mysql_docs_events.jsonl", more)
    assert grown[:len(first)] == first and [e["seq"] for e in grown[len(first):]] == [len(first) + 1]
    assert grown[-1]["after"] == [1, "a", "b", "c"] and "quarantine" not in grown[-1]  # typed by the history


def test_rows_of_a_table_the_history_never_created_are_quarantined(tmp_path):
    src = lines(tmp_path / "in.jsonl", row("c", 200, {"id": 1}, table="ghost"))
    events, stats = capture(tmp_path / "o", src)
    assert events[-1]["quarantine"] == "table inventory.ghost is not in the schema history at mysql-bin.000003:200"
    assert events[-1]["after"] == [1]


def test_a_row_before_the_history_is_an_error_naming_both_positions(tmp_path):
    src = lines(tmp_path / "in.jsonl", row("c", 2, {"id": 1}, table="ghost", file="mysql-bin.000002"))
    with pytest.raises(DebeziumError, match=r"in.jsonl:1: a row of inventory.ghost at mysql-bin.000002:2 "
                                            r"precedes the schema history, which starts at 3.4"):
        capture(tmp_path / "o", src)


def test_not_json_and_truncated_lines_name_the_file_and_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(row("c", 200, {"id": 1})) + "\n{not json\n")
    with pytest.raises(DebeziumError, match=r"bad.jsonl:2: not JSON"):
        capture(tmp_path / "o", bad)
    cut = tmp_path / "cut.jsonl"
    cut.write_text(json.dumps(row("c", 200, {"id": 1})) + "\n" + json.dumps(row("c", 300, {"id": 2}))[:40])
    with pytest.raises(DebeziumError, match=r"cut.jsonl:2: not JSON \(the file ends inside it: truncated\?\)"):
        capture(tmp_path / "o2", cut)


def test_a_value_that_does_not_fit_quarantines_the_row_with_the_column(tmp_path):
    src = lines(tmp_path / "in.jsonl", row("c", 200, {"id": "x", "first_name": "a", "last_name": "b", "email": "c"}))
    events, _ = capture(tmp_path / "o", src)
    assert events[-1]["quarantine"] == "cannot decode: column id (int): 'x' is not an integer"


def test_envelope_forms():
    assert parse_record(None).kind == "skip"
    assert parse_record({"schema": {}, "payload": None}).note == "tombstone"
    assert parse_record({"status": "BEGIN", "id": "x", "event_count": None}).note == "transaction metadata"
    flat = parse_record({"id": 1, "__op": "u", "__source_file": "f.000001", "__source_pos": 5, "__deleted": "false"})
    assert (flat.op, flat.after, flat.source["pos"]) == ("u", {"id": 1}, 5)
    gone = parse_record({"id": 1, "__op": "d", "__deleted": "true"})
    assert (gone.op, gone.before, gone.after) == ("d", {"id": 1}, None)
    with pytest.raises(DebeziumError, match="without __op"):
        parse_record({"id": 1, "__deleted": "false"})
    with pytest.raises(DebeziumError, match="not a Debezium event"):
        parse_record({"id": 1})
    tx = parse_record({"op": "c", "after": {}, "source": {}, "transaction": {"id": "tx-9", "total_order": 1}})
    assert tx.tx == "tx-9"


def test_history_set_character_set_server_is_the_parsers_default(tmp_path):
    from ddlcore.changelog import read_changelog
    from ddlcore.history import SchemaHistory
    from ddlcore.model import TableId

    pos = {"file": "b.000001", "pos": 4, "snapshot": True}
    hist = lines(tmp_path / "h.jsonl",
                 {"position": pos, "databaseName": "", "tableChanges": [],
                  "ddl": "SET character_set_server=latin1, collation_server=latin1_swedish_ci"},
                 {"position": pos, "databaseName": "d", "ddl": "CREATE DATABASE d", "tableChanges": []},
                 {"position": pos, "databaseName": "d", "ddl": "CREATE TABLE t (id int primary key, c varchar(5))",
                  "tableChanges": []})
    msg = lines(tmp_path / "m.jsonl", {"op": "c", "after": {"id": 1, "c": "é"},
                                       "source": {"connector": "mysql", "db": "d", "table": "t", "file": "b.000001",
                                                  "pos": 10, "row": 0}})
    capture(tmp_path / "o", msg, history=hist)
    h = SchemaHistory.open(":memory:", dialect="mysql")
    for ev in read_changelog(tmp_path / "o" / "changelog.jsonl"):
        if ev.op in ("source", "ddl"):
            h.record(ev.to_json())
    assert h.table_at(TableId("d", None, "t"), 10 ** 6).columns[1].character_set_name == "latin1"


def test_documented_table_changes_agree_with_the_parsed_ddl_and_drift_is_reported(tmp_path):
    docs = [json.loads(x) for x in (FIX / "mysql_docs_events.jsonl").read_text().splitlines() if x != "null"]
    alter = json.loads((FIX / "mysql_docs_schema_change.jsonl").read_text())
    _, stats = capture(tmp_path / "o", lines(tmp_path / "a.jsonl", docs[0], alter))
    assert stats.drift == []  # Debezium's documented tableChanges describe what ddlcore parsed
    wrong = json.loads(json.dumps(alter))
    wrong["tableChanges"][0]["table"]["columns"][2]["typeName"] = "INT"
    wrong["tableChanges"][0]["table"]["primaryKeyColumnNames"] = []
    _, stats = capture(tmp_path / "w", lines(tmp_path / "w.jsonl", docs[0], wrong))
    assert stats.drift == [
        "drift at mysql-bin.000003:570: inventory.customers: column middle_name: INT in tableChanges, "
        "varchar(255) in the history",
        "drift at mysql-bin.000003:570: inventory.customers: primary key () in tableChanges, (id) in the history"]


def test_primary_key_change_is_a_delete_and_a_create_of_one_binlog_row(tmp_path):
    old = {"id": 1, "first_name": "a", "last_name": "b", "email": "c"}
    new = {**old, "id": 2}
    src = lines(tmp_path / "in.jsonl", row("d", 300, None, old), None, row("c", 300, new))  # as Debezium sends them
    events, stats = capture(tmp_path / "o", src)
    assert [(e["op"], e["position"]) for e in events[-2:]] == [("d", "mysql-bin.000003:300"),
                                                               ("c", "mysql-bin.000003:300")]
    assert events[-1]["after"][0] == 2 and stats.duplicates == 0


def test_truncate_and_rows_without_any_ddl_say_what_is_missing(tmp_path):
    trunc = {"op": "t", "ts_ms": 5, "source": {"connector": "mysql", "db": "inventory", "table": "customers",
                                               "file": "mysql-bin.000003", "pos": 950, "row": 0}}
    events, _ = capture(tmp_path / "o", lines(tmp_path / "t.jsonl", trunc))
    assert (events[-1]["op"], events[-1]["table"], events[-1]["position"]) == ("t", "customers", "mysql-bin.000003:950")
    warnings: list[str] = []
    DebeziumCapture(DebeziumCaptureOptions(out=tmp_path / "n", from_files=(FIX / "mysql_docs_events.jsonl",),
                                           progress=False), on_warning=warnings.append).run()
    assert warnings == ["3 row(s) of tables the schema history never described were quarantined and this run read "
                        "no DDL: give the connector's schema history (--history FILE, "
                        "schema.history.internal.file.filename) or its schema change topic "
                        "(include.schema.changes=true)"]


def test_snapshot_reads_come_before_streamed_rows_whatever_the_arrival(tmp_path):
    person = {"id": 7, "first_name": "a", "last_name": "b", "email": "c"}
    snap = [dict(row("r", 4, {**person, "id": i}), ts_ms=1) for i in (1, 2)]
    for s, flag in zip(snap, ("first", "last")):
        s["source"]["snapshot"] = flag
    events, _ = capture(tmp_path / "o", lines(tmp_path / "in.jsonl", row("c", 500, person), *snap))
    assert [(e["op"], e["position"]) for e in events[4:]] == [
        ("r", "mysql-bin.000003:4"), ("r", "mysql-bin.000003:4"), ("c", "mysql-bin.000003:500")]
    assert [e["after"][0] for e in events[4:6]] == [1, 2] and "row" not in events[4]


def test_flattened_messages_with_op_and_position_fields(tmp_path):
    flat = {"id": 1004, "first_name": "Anne", "last_name": "K", "email": "a@b", "__op": "u", "__db": "inventory",
            "__table": "customers", "__source_file": "mysql-bin.000003", "__source_pos": 600, "__source_row": 0,
            "__source_ts_ms": 9, "__deleted": "false"}
    gone = {**flat, "__op": "d", "__source_pos": 700, "__deleted": "true"}
    events, _ = capture(tmp_path / "o", lines(tmp_path / "in.jsonl", flat, gone), connector="mysql")
    u, d = events[-2:]
    assert (u["op"], u["ts"], u["after"]) == ("u", 9, [1004, "Anne", "K", "a@b"])
    assert u["before"] == [1004] + [{"$absent": True}] * 3  # no old image: the key, the rest absent
    assert (d["op"], d["before"], d["after"]) == ("d", [1004, "Anne", "K", "a@b"], None)
