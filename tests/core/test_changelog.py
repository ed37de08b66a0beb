"""The change-log contract: tagged encoding round trip, validation with line and reason."""

from __future__ import annotations

import datetime as dt
import decimal
import gzip
import dataclasses
import json
import re

import pytest
from hypothesis import given, strategies as st

from ddlcore.changelog import (BadEvent, ChangeEvent, ChangeLogError, ChangeLogWriter, decode_value,
                               encode_value, iter_changelog, read_changelog, write_parquet)

raw_values = st.one_of(
    st.none(), st.integers(-(2 ** 70), 2 ** 70), st.floats(allow_nan=False, allow_infinity=False),
    st.text(), st.binary(), st.decimals(allow_nan=False, allow_infinity=False, places=4),
)


@given(raw_values)
def test_encode_decode_round_trip(value):
    enc = encode_value(value)
    json.dumps(enc, allow_nan=False)  # always plain JSON
    back = decode_value(json.loads(json.dumps(enc)))
    assert back == value and type(back) is type(value)


def test_temporal_values_are_tagged_text_and_zero_dates_survive():
    assert encode_value(dt.date(2020, 1, 2)) == {"$date": "2020-01-02"}
    assert encode_value(dt.datetime(2020, 1, 2, 3, 4, 5, 120)) == {"$datetime": "2020-01-02 03:04:05.000120"}
    assert encode_value(dt.timedelta(hours=-838, minutes=-59, seconds=-59)) == {"$time": "-838:59:59"}
    assert encode_value("12") == {"$s": "12"}  # a string that would read as a number
    assert decode_value({"$date": "0000-00-00"}) == "0000-00-00"
    with pytest.raises(ValueError, match="unknown raw value tag"):
        decode_value({"$nope": 1})
    with pytest.raises(ValueError):
        decode_value({"$dec": "1.2.3"})


def test_writer_reader_round_trip_gzip(tmp_path):
    path = tmp_path / "log.jsonl.gz"
    evs = [ChangeEvent(1, "bin.1:4", 1000, "ddl", "shop", None, "CREATE TABLE t (a int)"),
           ChangeEvent(2, "bin.1:90", 1001, "c", "shop", "t", None, None, [encode_value(b"\x00\xff"), 5]),
           ChangeEvent(3, "bin.1:150", 1002, "u", "shop", "t", None, [1], [2])]
    with ChangeLogWriter(path) as w:
        for e in evs:
            w.write(e)
        with pytest.raises(ValueError, match="seq must increase"):
            w.write(evs[0])
    assert list(read_changelog(path)) == evs
    write_parquet(evs, tmp_path / "log.parquet")
    assert list(read_changelog(tmp_path / "log.parquet")) == evs


def test_malformed_events_are_reported_with_line_and_reason(tmp_path):
    lines = [
        json.dumps({"seq": 1, "position": "p", "ts": 1, "op": "ddl", "ddl": "CREATE TABLE t (a int)"}),
        "{not json",
        json.dumps({"seq": 3, "position": "p", "ts": 1, "op": "c", "table": "t"}),
        json.dumps({"seq": 4, "position": "p", "ts": 1, "op": "x", "table": "t"}),
        json.dumps({"seq": 5, "position": "p", "ts": 1, "op": "c", "table": "t", "after": [{"$b64": "!!"}]}),
        json.dumps({"seq": 6, "position": "p", "ts": 1, "op": "d", "table": "t", "before": [1], "extra": 1}),
        '{"seq": 7, "posi',  # torn last line
    ]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines))
    got = list(iter_changelog(path))
    assert isinstance(got[0], ChangeEvent)
    bad = [(g.line, g.reason) for g in got if isinstance(g, BadEvent)]
    assert [b[0] for b in bad] == [2, 3, 4, 5, 6, 7]
    assert "not JSON" in bad[0][1]
    assert "needs after" in bad[1][1]
    assert "op must be one of" in bad[2][1]
    assert bad[3][1].startswith("after[0]: ")
    assert "unknown field" in bad[4][1]
    with pytest.raises(ChangeLogError, match=r"bad.jsonl:2: not JSON"):
        list(read_changelog(path))


def test_truncated_gzip_is_a_bad_event_not_a_crash(tmp_path):
    path = tmp_path / "t.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        for i in range(1, 200):
            fh.write(json.dumps({"seq": i, "position": "p", "ts": 1, "op": "c", "table": "t", "after": [i]}) + "\n")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    got = list(iter_changelog(path))
    assert isinstance(got[-1], BadEvent) and "unreadable" in got[-1].reason
    assert all(isinstance(g, ChangeEvent) for g in got[:-1]) and len(got) > 1


# ---------------------------------------------------------------------------- contract v2

from ddlcore import raw  # noqa: E402
from ddlcore.changelog import SourceInfo, changelog_files  # noqa: E402
from ddlcore.model import Column, Table, TableId  # noqa: E402

SOURCE = {"dialect": "mysql", "flavor": "mariadb", "epoch": "e-1",
          "server": {"server_id": 1, "version": "10.11.6-MariaDB"},
          "parser_options": {"lower_case_table_names": 1}, "settings": {"sql_mode": ""},
          "capture": {"tool": "test"}}


def test_absent_marker_is_not_null_and_round_trips():
    assert raw.encode_json(raw.ABSENT) == {"$absent": True}
    assert raw.decode_json({"$absent": True}) is raw.ABSENT
    assert raw.text_form(raw.ABSENT) == raw.ABSENT_TEXT == '{"$absent":true}'
    assert raw.from_text(raw.ABSENT_TEXT) is raw.ABSENT
    assert raw.ABSENT is not None and raw.ABSENT != None  # noqa: E711
    assert raw.is_absent({"$absent": True}) and not raw.is_absent(None)
    with pytest.raises(ValueError, match="absent marker"):
        decode_value({"$absent": False})
    import pickle
    assert pickle.loads(pickle.dumps(raw.ABSENT)) is raw.ABSENT


def _v2_events():
    table = Table(TableId("app", "public", "Orders"),
                  (Column("id", 1, "integer", "integer", nullable=False, udt_schema="pg_catalog",
                          udt_name="int4"),), primary_key=("id",))
    return [
        ChangeEvent(1, "0/16B3748", 1000, "source", source=SOURCE),
        ChangeEvent(2, "0/16B3750", 1000, "ddl", "app", None, "CREATE TABLE \"Orders\" (id int primary key)",
                    catalog={"tables": [table.to_json()], "dropped": []}, snapshot=True,
                    search_path=["app", "public"]),
        ChangeEvent(3, "0/16B3800", 1001, "u", "app", "Orders", None, [1, {"$absent": True}], [2, {"$absent": True}],
                    schema="public", tx="742", row=0),
        ChangeEvent(4, "0/16B3900", 1002, "t", "app", "Orders", schema="public", tx="743"),
        ChangeEvent(5, "0/16B3A00", 1003, "stmt", "app", "Orders", "UPDATE t SET a = 1"),
        ChangeEvent(6, "0/16B3B00", 1004, "c", "app", "Orders", None, None, [1], schema="public",
                    quarantine="table map: column 1 is varchar, the history says int"),
        ChangeEvent(7, "0/16B3C00", 1005, "ddl", "app", None, "ALTER TABLE \"Orders\" SET SCHEMA old",
                    catalog={"tables": [dataclasses.replace(table, id=TableId("app", "old", "Orders")).to_json()],
                             "dropped": [], "renamed": [{"from": {"database": "app", "schema": "public", "name": "Orders"},
                                                         "to": {"database": "app", "schema": "old", "name": "Orders"}}]},
                    search_path=["public"]),
    ]


def test_contract_v2_events_round_trip_jsonl_and_parquet(tmp_path):
    evs = _v2_events()
    with ChangeLogWriter(tmp_path / "changelog.jsonl") as w:
        for e in evs:
            w.write(e)
    assert list(read_changelog(tmp_path / "changelog.jsonl")) == evs
    write_parquet(evs, tmp_path / "log.parquet")
    assert list(read_changelog(tmp_path / "log.parquet")) == evs
    # optional fields are written only when set: a first-contract event's line is unchanged
    line = ChangeEvent(9, "p", 1, "c", "d", "t", None, None, [1]).to_line()
    assert json.loads(line).keys() == {"seq", "position", "ts", "op", "database", "table", "ddl",
                                       "before", "after"}
    assert SourceInfo.from_json(evs[0].source).identity()["epoch"] == "e-1"


@pytest.mark.parametrize("event, message", [
    ({"op": "source"}, "source as an object"),
    ({"op": "source", "source": {"dialect": "mysql"}}, "source.epoch"),
    ({"op": "source", "source": {**SOURCE, "extra": 1}}, "unknown field"),
    ({"op": "t"}, "needs its table"),
    ({"op": "t", "table": "x", "after": [1]}, "carries no row images"),
    ({"op": "stmt", "table": "x"}, "statement text"),
    ({"op": "c", "table": "x", "after": [1], "catalog": {"tables": []}}, "only a ddl event"),
    ({"op": "ddl", "ddl": "x", "catalog": {"tables": [{"columns": []}]}}, r"catalog.tables\[0\]"),
    ({"op": "ddl", "ddl": "x", "catalog": {"tables": [], "renamed": [{"from": {"name": "a"}}]}},
     r"catalog.renamed\[0\]"),
    ({"op": "ddl", "ddl": "x", "snapshot": "yes"}, "snapshot must be"),
    ({"op": "c", "table": "x", "after": [1], "row": -1}, "row must be"),
    ({"op": "c", "table": "x", "after": [1], "schema": 5}, "schema must be text"),
    ({"op": "c", "table": "x", "after": [1], "search_path": ["a"]}, "only a ddl event"),
    ({"op": "ddl", "ddl": "x", "search_path": "a,b"}, "search_path must be"),
])
def test_contract_v2_validation(tmp_path, event, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"seq": 1, "position": "p", "ts": 1, **event}) + "\n")
    (got,) = list(iter_changelog(path))
    assert isinstance(got, BadEvent) and re.search(message, got.reason), got.reason


def test_a_capture_directory_reads_only_change_log_files(tmp_path):
    evs = _v2_events()
    with ChangeLogWriter(tmp_path / "changelog.jsonl") as w:
        for e in evs[:3]:
            w.write(e)
    with ChangeLogWriter(tmp_path / "changelog.000002.jsonl.gz") as w:
        for e in evs[3:]:
            w.write(e)
    for name in ("checkpoint.json", "history.sqlite", "capture.log", "capture.lock", ".hidden.jsonl"):
        (tmp_path / name).write_text("not a change log")
    assert [f.name for f in changelog_files(tmp_path)] == ["changelog.000002.jsonl.gz", "changelog.jsonl"]
    assert sorted(e.seq for e in read_changelog(tmp_path)) == [e.seq for e in evs]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ChangeLogError, match="no change-log files"):
        changelog_files(empty)
