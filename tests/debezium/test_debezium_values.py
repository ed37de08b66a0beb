"""Debezium MySQL values → raw values: every type under every value setting decodes back to
the raw value ddlcore's binlog capture writes, or is marked lossy exactly where the setting
loses (hypothesis; the encoder is tests/debezium/encoder.py, written from Debezium's docs)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import re
import types

import pytest
from hypothesis import given, settings, strategies as st

from ddlcore import raw
from ddlcore.debezium import SETTINGS, DebeziumSettings
from ddlcore.model import Column
from ddlcore_mysql.binlog_values import Tagged
from ddlcore_mysql.debezium_mysql import MySqlConnector
from ddlcore_mysql.debezium_values import decode_value, scaled_text

from .encoder import encode


def col(data_type: str, column_type: str | None = None, **kw) -> Column:
    return Column("c", 1, data_type, column_type or data_type, **kw)


def _frac(us: int) -> str:
    return f".{us:06d}" if us else ""


def _dt_text(d: dt.datetime) -> str:
    return d.strftime("%Y-%m-%d %H:%M:%S") + _frac(d.microsecond)


def _trunc(us: int, fsp: int) -> int:
    return us - us % (10 ** (6 - fsp))


datetimes = st.datetimes(min_value=dt.datetime(1000, 1, 1), max_value=dt.datetime(9999, 12, 31, 23, 59, 59))
fsps = st.integers(0, 6)


@st.composite
def cases(draw):
    """``(column, raw value)`` for a MySQL type drawn at random, the raw value as the binlog
    capture writes it (binlog_values)."""
    kind = draw(st.sampled_from(["int", "ubigint", "decimal", "float", "double", "text", "binary", "enum", "set",
                                 "bit1", "bitn", "year", "date", "datetime", "time", "timestamp", "json", "geometry"]))
    if kind == "int":
        return col("int", "int(11)"), draw(st.integers(-2**31, 2**31 - 1))
    if kind == "ubigint":
        return col("bigint", "bigint(20) unsigned", unsigned=True), draw(st.integers(0, 2**64 - 1))
    if kind == "decimal":
        p = draw(st.integers(1, 38))
        s = draw(st.integers(0, min(p, 30)))
        n = draw(st.integers(-(10**p) + 1, 10**p - 1))
        return col("decimal", f"decimal({p},{s})", numeric_precision=p, numeric_scale=s), \
            decimal.Decimal(f"{n}E-{s}")  # exact: scaleb would round to the context's 28 digits
    if kind == "float":
        import struct
        f = draw(st.floats(width=32, allow_nan=False, allow_infinity=False))
        return col("float"), struct.unpack("<f", struct.pack("<f", f))[0]
    if kind == "double":
        return col("double"), draw(st.floats(allow_nan=False, allow_infinity=False))
    if kind == "text":
        return col("varchar", "varchar(20)"), draw(st.text(max_size=20))
    if kind == "binary":
        return col("varbinary", "varbinary(20)"), draw(st.binary(max_size=20))
    if kind == "enum":
        labels = ("a", "b", "c")
        return col("enum", "enum('a','b','c')", enum_values=labels), draw(st.integers(0, 3))
    if kind == "set":
        labels = ("x", "y", "z")
        return col("set", "set('x','y','z')", set_values=labels), draw(st.integers(0, 7))
    if kind == "bit1":
        return col("bit", "bit(1)", numeric_precision=1), draw(st.sampled_from([b"\0", b"\1"]))
    if kind == "bitn":
        n = draw(st.integers(2, 64))
        v = draw(st.integers(0, 2**n - 1))
        return col("bit", f"bit({n})", numeric_precision=n), v.to_bytes((n + 7) // 8, "big")
    if kind == "year":
        return col("year"), draw(st.sampled_from([0]) | st.integers(1901, 2155))
    if kind == "date":
        d = draw(st.dates(min_value=dt.date(1000, 1, 1), max_value=dt.date(9999, 12, 31)))
        return col("date"), Tagged("$date", d.isoformat())
    if kind in ("datetime", "timestamp"):
        fsp = draw(fsps)
        d = draw(datetimes)
        d = d.replace(microsecond=_trunc(d.microsecond, fsp))
        if kind == "timestamp":
            d = max(d, dt.datetime(1970, 1, 1, 0, 0, 1))
        return col(kind, f"{kind}({fsp})", datetime_precision=fsp), Tagged("$datetime", _dt_text(d))
    if kind == "time":
        fsp = draw(fsps)
        us = _trunc(draw(st.integers(-838 * 3600 * 10**6, 838 * 3600 * 10**6)), fsp)
        sign = "-" if us < 0 else ""
        secs, frac = divmod(abs(us), 10**6)
        text = f"{sign}{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}{_frac(frac)}"
        return col("time", f"time({fsp})", datetime_precision=fsp), Tagged("$time", text)
    if kind == "json":
        return col("json"), Tagged("$json", draw(st.sampled_from(['{"a": 1}', "[1, 2]", "null", '"x"'])))
    srid = draw(st.integers(0, 4326))
    return col("geometry"), srid.to_bytes(4, "little") + draw(st.binary(min_size=5, max_size=30))


all_settings = st.fixed_dictionaries({name: st.sampled_from(values) for name, values in SETTINGS.items()})


def _lossy_setting(c: Column, s: dict) -> bool:
    if c.data_type == "decimal" and s["decimal.handling.mode"] == "double":
        return c.numeric_precision > 15
    if c.data_type in ("datetime", "time") and s["time.precision.mode"] == "connect":
        return (c.datetime_precision or 0) > 3
    return False


def _nanos_range(c: Column, value) -> bool:
    """``nanoseconds`` cannot hold datetimes outside 1677–2262 (Debezium's docs: the connector
    fails on them rather than writing them)."""
    return c.data_type == "datetime" and not (dt.datetime(1678, 1, 1) < dt.datetime.fromisoformat(value.text)
                                              < dt.datetime(2262, 1, 1))


@settings(max_examples=600, deadline=None)
@given(cases(), all_settings)
def test_every_type_under_every_setting_decodes_or_is_marked(case, s):
    c, value = case
    if s["time.precision.mode"] == "nanoseconds" and _nanos_range(c, value):
        return
    encoded = encode(value, c, s)
    got, loss = decode_value(encoded, c, None, DebeziumSettings.of(s.items()))
    exact = raw.encode_json(got) == raw.encode_json(value)
    if _lossy_setting(c, s):
        assert loss is not None, (c.column_type, s)
    else:
        assert exact, (c.column_type, value, encoded, got, s)
        assert loss is None or loss.kind == "zero-date"
    if loss is None:
        assert exact


def test_bigint_unsigned_long_negative_becomes_the_true_value():
    c = col("bigint", "bigint(20) unsigned", unsigned=True)
    assert decode_value(-1, c, None, DebeziumSettings())[0] == 2**64 - 1


def test_decimal_precise_uses_the_schema_scale_when_the_message_has_one():
    from ddlcore.debezium import FieldSchema
    c = col("decimal", "decimal(10,2)", numeric_precision=10, numeric_scale=2)
    f = FieldSchema("bytes", "org.apache.kafka.connect.data.Decimal", {"scale": "3"})
    assert decode_value("MDk=", c, f, DebeziumSettings())[0] == decimal.Decimal("12.345")  # 0x3039 = 12345


@pytest.mark.parametrize("data_type, value, kind", [("date", None, "null"), ("int", None, "null"),
                                                    ("date", 0, "zero-date"), ("datetime", 0, "zero-date")])
def test_not_null_column_losses_are_marked(data_type, value, kind):
    c = col(data_type, nullable=False)
    _, loss = decode_value(value, c, None, DebeziumSettings())
    assert loss is not None and loss.kind == kind and loss.avoid


def test_unknown_enum_label_is_an_error_naming_the_type():
    c = col("enum", "enum('a','b')", enum_values=("a", "b"))
    with pytest.raises(ValueError, match=r"'z' is not a label of enum\('a','b'\)"):
        decode_value("z", c, None, DebeziumSettings())


@settings(max_examples=300, deadline=None)
@given(cases(), all_settings, st.booleans(), st.sampled_from(["value", "null", "wrong type"]))
def test_a_row_decodes_as_each_of_its_values_does(case, s, nullable, what):
    """``MySqlConnector.decode_row`` (its fast path for rows that cannot be lossy included) gives
    exactly the values, losses and errors of ``decode_value`` column by column."""
    c, value = case
    c = dataclasses.replace(c, nullable=nullable)
    if s["time.precision.mode"] == "nanoseconds" and _nanos_range(c, value):
        return
    key = col("int", "int(11)", nullable=False)
    key = dataclasses.replace(key, name="k", ordinal_position=2)
    table = types.SimpleNamespace(columns=[c, key])
    cfg = DebeziumSettings.of(s.items())
    encoded = {"value": lambda: encode(value, c, s), "null": lambda: None, "wrong type": lambda: [1]}[what]()
    try:
        expected = [decode_value(encoded, c, None, cfg), decode_value(7, key, None, cfg)]
    except ValueError as exc:
        with pytest.raises(ValueError, match=re.escape(str(exc))):
            MySqlConnector().decode_row(table, {"c": encoded, "k": 7}, {}, cfg)
        return
    got, losses = MySqlConnector().decode_row(table, {"c": encoded, "k": 7}, {}, cfg)
    assert [raw.encode_json(v) for v in got] == [raw.encode_json(v) for v, _ in expected]
    assert [(n, x.kind) for n, x in losses] == [(n, x.kind) for n, (_, x) in zip("ck", expected) if x is not None]


@given(st.integers(-(10**40), 10**40), st.integers(0, 30))
def test_scaled_text_is_the_decimal_text(unscaled, scale):
    assert scaled_text(unscaled, scale) == format(decimal.Decimal(f"{unscaled}E-{scale}"), "f")


def test_decimal_beyond_28_digits_is_exact_with_and_without_schema():
    """DECIMAL(65,30) holds 65 digits; Python's default decimal context rounds to 28."""
    from ddlcore.debezium import FieldSchema
    c = col("decimal", "decimal(65,30)", numeric_precision=65, numeric_scale=30)
    want = decimal.Decimal("12345678901234567890123456789012345.123456789012345678901234567891")
    b64 = encode(want, c, {})
    f = FieldSchema("bytes", "org.apache.kafka.connect.data.Decimal", {"scale": "30"})
    for field in (None, f):
        assert raw.encode_json(decode_value(b64, c, field, DebeziumSettings())[0]) == {"$dec": format(want, "f")}


def test_double_decimal_with_more_than_28_digits_at_its_scale_is_marked_not_a_crash():
    """decimal.handling.mode=double into DECIMAL(40,30): 10 integer + 30 fraction digits."""
    c = col("decimal", "decimal(40,30)", numeric_precision=40, numeric_scale=30)
    got, loss = decode_value(1234567890.5, c, None, DebeziumSettings(decimal_handling_mode="double"))
    assert got == decimal.Decimal("1234567890.5") and raw.encode_json(got)["$dec"].endswith("5" + "0" * 29)
    assert loss is not None and loss.kind == "double"
