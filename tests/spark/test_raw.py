"""``ddlcore.raw``: raw value kinds, their tagged JSON encoding and their text form — and that
Spark's JSON reader, reading a change log's arrays as ``array<string>``, gives exactly the
text form, so a JSON-Lines change log converts the same in Spark as its decoded values do in
Python."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlcore import raw
from ddlcore.raw import RawDate, RawDateTime, RawJson, RawTime

VALUES = [
    None, 0, -12, 2 ** 64, 1.5, -0.0, 1e300, "abc", "", "12", "-3.5e7", '{"$b64":"AAE="}', "{}", "é😀",
    b"", b"\x00\xff", bytearray(b"ab"), Decimal("-1.50"), Decimal("0"), dt.date(2024, 2, 29),
    RawDate("0000-00-00"), dt.datetime(2024, 1, 2, 3, 4, 5, 120000), RawDateTime("2023-02-30 00:00:00"),
    dt.timedelta(hours=-838, minutes=-59, seconds=-59), dt.time(23, 59, 59, 1), RawTime("x"),
    {"a": [1, "é"]}, [1, 2], True,
]


@pytest.mark.parametrize("value", VALUES, ids=[repr(v)[:30] for v in VALUES])
def test_json_round_trip_keeps_the_kind(value):
    encoded = raw.encode_json(value)
    text = json.dumps(encoded, ensure_ascii=False)
    decoded = raw.decode_json(json.loads(text))
    assert raw.kind_of(decoded) == raw.kind_of(value)
    assert raw.text_form(decoded) == raw.text_form(value)


def test_encoding_table():
    assert raw.encode_json(b"\x00\x01") == {"$b64": "AAE="}
    assert raw.encode_json(Decimal("-1.50")) == {"$dec": "-1.50"}
    assert raw.encode_json(Decimal("1E+3")) == {"$dec": "1000"}
    assert raw.encode_json(dt.date(2024, 2, 29)) == {"$date": "2024-02-29"}
    assert raw.encode_json(dt.datetime(2024, 1, 2, 3, 4, 5)) == {"$datetime": "2024-01-02 03:04:05"}
    aware = dt.datetime(2024, 1, 2, 3, 0, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert raw.encode_json(aware) == {"$datetime": "2024-01-02 01:00:00"}
    assert raw.encode_json(dt.timedelta(hours=-1, seconds=-0.5)) == {"$time": "-01:00:00.500000"}
    assert raw.encode_json({"b": None}) == {"$json": '{"b": null}'}
    assert raw.encode_json({"q", "p"}) == "p,q"
    assert raw.encode_json(True) == 1


@pytest.mark.parametrize("text", ["12", "-1", "1.5", "1e3", "-0.0", '{"$dec":"1"}', '{"$'])
def test_strings_that_would_read_as_another_kind_are_wrapped(text):
    assert raw.encode_json(text) == {"$s": text}
    assert raw.decode_json(raw.encode_json(text)) == text


@pytest.mark.parametrize("text", ["abc", "", " 12", "1,2", "2024-01-02", "{}", "{\"a\":1}", "true"])
def test_other_strings_stay_plain(text):
    assert raw.encode_json(text) == text


def test_values_no_kind_holds_are_refused():
    with pytest.raises(ValueError):
        raw.encode_json(float("nan"))
    with pytest.raises(TypeError):
        raw.encode_json(object())
    with pytest.raises(ValueError, match="unknown raw value tag"):
        raw.decode_json({"$zzz": "1"})


def test_tagged_objects_of_a_capture():
    class Tagged:
        def __init__(self, tag, text):
            self.tag, self.text = tag, text

    assert raw.encode_json(Tagged("$date", "0000-00-00")) == {"$date": "0000-00-00"}
    assert raw.kind_of(Tagged("$json", "[]")) == "json"
    assert isinstance(raw.decode_json({"$json": "[]"}), RawJson)


SCALARS = st.one_of(
    st.none(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",))), st.binary(),
    st.decimals(allow_nan=False, allow_infinity=False), st.dates(), st.datetimes(), st.timedeltas(),
)


@settings(max_examples=200)
@given(SCALARS)
def test_text_form_and_json_agree(value):
    assert raw.from_text(raw.text_form(value)) == raw.decode_json(json.loads(json.dumps(raw.encode_json(value))))


def test_spark_json_reader_gives_the_text_form(spark, mysql):
    """A JSON-Lines change log read by Spark with ``after ARRAY<STRING>`` converts exactly as
    its decoded values do in Python."""
    from ddlcore.spark import RowConverter
    from ddlcore_mysql.types import DataTypeSpec as D

    from .support import column, table

    t = table(column("i", D("INT", unsigned=True)), column("s", D("VARCHAR", 10), 2),
              column("e", D("ENUM", values=("1", "0")), 3), column("d", D("DECIMAL", 5, 2), 4),
              column("f", D("DOUBLE"), 5), column("b", D("VARCHAR", 5, charset="latin1"), 6),
              column("ts", D("DATETIME", 6), 7), column("tm", D("TIME"), 8), column("j", D("JSON"), 9, flavor="mysql"),
              column("st", D("SET", values=("a", "b")), 10))
    rows = [
        [-1, "12", 1, Decimal("1.25"), 1e300, b"\x80\xe9", dt.datetime(2020, 1, 1, 0, 0, 0, 5), dt.timedelta(hours=-1), {"k": "\"q\""}, 3],
        [5, '{"$b64":"AAE="}', "1", Decimal("-0.5"), -0.0, "caf", RawDateTime("0000-00-00 00:00:00"), "838:59:59", "[1]", "b,a"],
        [None, "plain", "0", 3, 1.5, b"", "2020-02-30 00:00:00", None, None, {"a"}],
    ]
    lines = [json.dumps({"after": raw.encode_row(r)}, ensure_ascii=False) for r in rows]
    df = spark.read.schema("after ARRAY<STRING>").json(spark.sparkContext.parallelize(lines, 1))
    conv = RowConverter(t, dialect=mysql)
    got = df.select(*conv.columns("after")).collect()
    for line, out in zip(lines, got):
        decoded = raw.decode_row(json.loads(line)["after"])
        want, errors = conv.try_convert(decoded)
        assert not errors and out[-1] == []
        assert tuple(out[:-1]) == want
