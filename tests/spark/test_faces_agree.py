"""The two faces of ``RowConverter`` — ``convert`` in Python and ``columns`` in the JVM — give
the same values and the same errors (position and reason) for every raw value of every type.

Hypothesis draws tables of random MySQL/MariaDB columns, random options and rows of raw
values of every kind (biased to each type's edges); one Spark job per example.  The edge
table below is run every time, whatever hypothesis draws."""

from __future__ import annotations

import datetime as dt
import os
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddlcore.raw import RawDate, RawDateTime, RawTime
from ddlcore.spark import RowConverter, SparkOptions
from ddlcore_mysql.types import DataTypeSpec as D

from .strategies import columns, options, raw_values
from .support import compare_faces, table


#: examples per run (one Spark job each); DDLCORE_SPARK_EXAMPLES=500 for a longer search
EXAMPLES = int(os.environ.get("DDLCORE_SPARK_EXAMPLES", "40"))


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_python_and_spark_faces_agree_on_generated_raw_values(spark, mysql, data):
    opts = data.draw(options(), label="options")
    cols = data.draw(st.lists(columns(), min_size=1, max_size=6), label="columns")
    t = table(*cols)
    conv = RowConverter(t, mysql, options=opts)
    row = st.tuples(*[raw_values(c, r) for c, r in zip(t.columns, conv.rules)])
    rows = data.draw(st.lists(row, min_size=1, max_size=10), label="rows")
    problems = compare_faces(spark, conv, rows)
    assert not problems, "\n".join(problems[:20])


#: every type with its edge values (min/max, negative readings of unsigned columns, the empty
#: and the full set, zero and invalid dates, leap seconds, 38-digit decimals, ...)
EDGES: list[tuple[D, list]] = [
    (D("TINYINT"), [-128, 127, -129, 128, 0]),
    (D("TINYINT", unsigned=True), [-1, -128, 255, 256, -129, 0]),
    (D("SMALLINT", unsigned=True), [-1, -32768, 65535, 65536]),
    (D("MEDIUMINT"), [-8388608, 8388607, 8388608]),
    (D("MEDIUMINT", unsigned=True), [-1, 16777215, -8388608]),
    (D("INT"), [-2147483648, 2147483647, 2147483648]),
    (D("INT", unsigned=True), [-1, -2147483648, 4294967295, 4294967296]),
    (D("BIGINT"), [-(2 ** 63), 2 ** 63 - 1, 2 ** 63]),
    (D("BIGINT", unsigned=True), [-1, -(2 ** 63), 2 ** 64 - 1, 2 ** 64, 2 ** 63]),
    (D("DECIMAL", 38, 0), [Decimal("9" * 38), Decimal("-" + "9" * 38), Decimal("1" + "0" * 38), 0]),
    (D("DECIMAL", 38, 10), [Decimal("9" * 28 + "." + "9" * 10), Decimal("1.00000000005"), Decimal("-1.00000000005")]),
    (D("DECIMAL", 65, 30), [Decimal("9" * 35 + "." + "9" * 30), Decimal("-0.000"), Decimal("1" * 36), Decimal("1e-31"), 12]),
    (D("DECIMAL", 5, 2), [Decimal("999.99"), Decimal("999.995"), Decimal("-999.994"), Decimal("1E+2"), 1000]),
    (D("FLOAT"), [3.4028234663852886e38, 3.5e38, 1e-45, -0.0, 0.1, Decimal("0.1"), 2 ** 200]),
    (D("DOUBLE"), [1.7976931348623157e308, 5e-324, 2 ** 1024, Decimal("1e309"), 1]),
    (D("BIT", 1), [0, 1, 2, b"\x01", b"\x00", b"\x02", "1", "0", -1]),
    (D("BIT", 9), [0, 511, 512, b"\x01\xff", b"\x02\x00", "111111111", "1111111111", b"", b"\x00\x00\x00"]),
    (D("BIT", 64), [2 ** 64 - 1, 2 ** 64, b"\xff" * 8, "1" * 64, -1]),
    (D("DATE"), [dt.date(1, 1, 1), dt.date(9999, 12, 31), RawDate("0000-00-00"), RawDate("2023-02-30"),
                 RawDate("2020-00-05"), "2024-02-29", "0000-01-01", "2020-13-01", "2020-1-2", dt.datetime(2020, 1, 2)]),
    (D("DATETIME", 0), [dt.datetime(2020, 1, 2, 3, 4, 5, 999999), RawDateTime("0000-00-00 00:00:00"),
                        "2016-12-31 23:59:60", "2020-01-01 24:00:00", "2020-01-01", dt.date(2020, 1, 1)]),
    (D("DATETIME", 6), [dt.datetime(9999, 12, 31, 23, 59, 59, 999999), "2020-01-01 00:00:00.1",
                        dt.datetime(2020, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=2)))]),
    (D("TIMESTAMP", 3), [dt.datetime(1970, 1, 1), "1970-01-01 00:00:00.000", dt.datetime(2038, 1, 19, 3, 14, 7, 999999),
                         0, 1, 2 ** 31 - 1, Decimal("1700000000.1239"), -1, "0000-00-00 00:00:00", "2016-12-31 23:59:60"]),
    (D("TIME", 0), [dt.timedelta(hours=838, minutes=59, seconds=59), -dt.timedelta(hours=838, minutes=59, seconds=59),
                    dt.timedelta(hours=839), "838:59:59.5", "-00:00:00.5", dt.time(23, 59, 59, 999999), RawTime("x")]),
    (D("TIME", 6), ["838:59:59.000001", "838:59:59.000000", "-838:59:59", "0838:59:59", "12:60:00", "-1:02:03.4"]),
    (D("YEAR"), [0, 1, 155, 255, 256, 1900, 1901, 2155, 2156, -1]),
    (D("CHAR", 5, charset="latin1"), [b"\xe9\x80\x81", b"caf\xe9  ", "abc  ", 12, "12"]),
    (D("VARCHAR", 10, charset="ascii"), [b"\x80", b"ok", "ünicode"]),
    (D("VARCHAR", 10), [b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc3\xa9", "😀", '{"$b64":"AAE="}', "1e3", "-"]),
    (D("TEXT", charset="ucs2"), [b"\x00A\xd8\x3d\xde\x00", b"\xd8\x3d", b"\x00", b"\xfe\xff\x00A"]),
    (D("TEXT", charset="utf16le"), [b"A\x00=\xd8\x00\xde", b"\x00\xdc", b"A"]),
    (D("TEXT", charset="utf32"), [b"\x00\x00\xfe\xff\x00\x00\x00A", b"\x00\x11\x00\x00", b"\x00\x00\xd8\x00", b"\x00\x01\xf6\x00"]),
    (D("BINARY", 4), [b"ab", b"", b"abcd", b"abcde", "ab"]),
    (D("VARBINARY", 4), [b"\x00\xff", b""]),
    (D("ENUM", values=("0", "1", "b")), [0, 1, 2, 3, 4, -1, "0", "1", "", "x", b"b", 255, -256]),
    (D("SET", values=tuple("abcdefgh")), [0, 255, 256, -1, -128, -129, "", "h,a,a", "a,z", {"c", "b"}, b"a,b", ",", 2 ** 63]),
    (D("SET", values=tuple(f"m{i}" for i in range(64))), [2 ** 64 - 1, -1, -(2 ** 63), 2 ** 63, 0, 2 ** 64]),
    (D("JSON"), [{"a": [1, 2]}, '{"b": null}', b'{"c": "\xc3\xa9"}', [1, "x"]]),
    (D("POINT"), [b"\x00\x00\x00\x00\x01\x01\x00\x00\x00", "POINT(1 2)"]),
    (D("INET4"), [b"\x01\x02\x03\x04", b"\x01\x02\x03", "10.0.0.1"]),
    (D("INET6"), [b"\x00" * 16, b"\x00" * 15 + b"\x01", b"\x00" * 10 + b"\xff\xff\x01\x02\x03\x04",
                  b"\x00" * 12 + b"\x01\x02\x03\x04", b"\x00" * 12 + b"\x00\x01\x00\x00",
                  bytes.fromhex("20010db8000000000001000000000001"), bytes.fromhex("00010002000300040005000600070000"),
                  bytes.fromhex("00000002000300040005000600070008"), bytes.fromhex("0000000000000000ffff000000000001"),
                  bytes.fromhex("fe800000000000000001000000000000"), "::1"]),
    (D("UUID"), [bytes.fromhex("123e4567e89b12d3a456426614174000"), b"\x00" * 15]),
]


@pytest.mark.parametrize("opts", [SparkOptions(dialect="mysql"),
                                  SparkOptions(dialect="mysql", decimal_handling="string", binary_handling="hex",
                                               bigint_unsigned_handling="long", time_precision="connect",
                                               tinyint1_as_boolean=True, invalid_date_handling="error"),
                                  SparkOptions(dialect="mysql", decimal_handling="double", binary_handling="base64",
                                               time_precision="adaptive_time_microseconds")],
                         ids=["defaults", "string-hex-long-connect-error", "double-base64-micros"])
def test_faces_agree_on_the_edges_of_every_type(spark, mysql, opts):
    flavors = ["mysql" if spec.name == "JSON" else "mariadb" for spec, _ in EDGES]
    from .support import column

    t = table(*[column(f"c{i}", spec, i, flavor=f) for i, (spec, f) in enumerate(zip([s for s, _ in EDGES], flavors), 1)])
    conv = RowConverter(t, mysql, options=opts)
    depth = max(len(v) for _, v in EDGES)
    rows = [[values[r] if r < len(values) else None for _, values in EDGES] for r in range(depth)]
    rows.append([None] * len(EDGES))
    problems = compare_faces(spark, conv, rows)
    assert not problems, "\n".join(problems[:30])
