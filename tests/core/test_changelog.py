"""The change-log contract: tagged encoding round trip, validation with line and reason."""

from __future__ import annotations

import datetime as dt
import decimal
import gzip
import json

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
