"""``RowConverter``'s behaviour: the conversions the issue names (unsigned wrap-around, enum
index → label, set bitmask → labels, BIT, charsets, zero dates, TIME beyond a day, fsp), errors
from both faces, arity, and the Spark error column."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import pytest

from ddlcore.errors import RowConversionError
from ddlcore.raw import RawDate
from ddlcore.spark import RowConverter
from ddlcore_mysql.types import DataTypeSpec as D
from ddlcore_mysql.values import decoding_table, inet6_text, text_codec

from .support import column, compare_faces, failed_flags, spark_rows, table


def conv_for(*specs, **options) -> RowConverter:
    return RowConverter(table(*specs), dialect="mysql", **options)


@pytest.mark.parametrize("spec,raw,want", [
    (D("TINYINT", unsigned=True), -128, 128),
    (D("SMALLINT", unsigned=True), -32768, 32768),
    (D("MEDIUMINT", unsigned=True), -8388608, 8388608),
    (D("INT", unsigned=True), -2147483648, 2147483648),
    (D("BIGINT", unsigned=True), -(2 ** 63), Decimal(2 ** 63)),
    (D("INT", unsigned=True), 4294967295, 4294967295),
])
def test_unsigned_wrap_around(spec, raw, want):
    assert conv_for(spec).convert([raw]) == (want,)


def test_enum_index_label_and_error_value():
    conv = conv_for(D("ENUM", values=("2", "1", "x")))
    assert [conv.convert([v])[0] for v in (1, 2, 3, 0, "1", "", b"x")] == ["2", "1", "x", "", "1", "", "x"]
    big = conv_for(D("ENUM", values=tuple(f"v{i}" for i in range(1, 201))))
    assert big.convert([-56]) == ("v200",)  # index 200 read as a signed byte
    for bad, reason in ((4, "enum index out of range"), (-1, "enum index out of range"),
                        ("y", "not a label of the enum"), (1.0, "not a valid raw value")):
        with pytest.raises(RowConversionError, match=reason):
            conv.convert([bad])


def test_set_bitmask_labels_in_definition_order():
    conv = conv_for(D("SET", values=("a", "b", "c")))
    assert conv.convert([0]) == ([],)
    assert conv.convert([7]) == (["a", "b", "c"],)
    assert conv.convert([5]) == (["a", "c"],)
    assert conv.convert(["c,a,a"]) == (["a", "c"],)
    assert conv.convert([{"b"}]) == (["b"],)
    assert conv.convert([""]) == ([],)
    with pytest.raises(RowConversionError, match="set bitmask out of range"):
        conv.convert([8])
    with pytest.raises(RowConversionError, match="not a member of the set"):
        conv.convert(["a,z"])


def test_bit_values():
    assert conv_for(D("BIT", 1)).convert([1]) == (True,)
    assert conv_for(D("BIT", 1)).convert([b"\x00"]) == (False,)
    assert conv_for(D("BIT", 9)).convert(["100000001"]) == (b"\x01\x01",)
    assert conv_for(D("BIT", 9)).convert([b"\x01"]) == (b"\x00\x01",)
    with pytest.raises(RowConversionError, match="out of range for bit"):
        conv_for(D("BIT", 9)).convert([512])


def test_text_bytes_decoded_with_the_column_charset():
    conv = conv_for(D("VARCHAR", 9, charset="latin1"), D("VARCHAR", 9, charset="cp1251"),
                    D("VARCHAR", 9, charset="ucs2"), D("VARCHAR", 9, charset="koi8r"))
    assert conv.convert([b"\x80\x81\xe9", b"\xc6\xe8", b"\x00A\x20\xac", b"\xe1"]) == ("€\x81é", "Жи", "A€", "\u0410")
    with pytest.raises(RowConversionError, match="bytes not valid in character set ucs2"):
        conv.convert([b"", b"", b"\x00", b""])
    with pytest.raises(RowConversionError, match="bytes not valid in character set utf8mb4"):
        conv_for(D("VARCHAR", 9)).convert([b"\xff"])


def test_mysql_latin1_is_cp1252_with_c1_controls():
    table_ = decoding_table("latin1")
    assert table_[0x80] == "€" and table_[0x81] == "\x81" and table_[0x9D] == "\x9d" and table_[0xFF] == "ÿ"
    assert decoding_table("ascii")[0x80] == "\ufffe"


def test_zero_and_invalid_dates_become_null():
    conv = conv_for(D("DATE"), D("DATETIME"), D("TIMESTAMP"))
    assert conv.convert([RawDate("0000-00-00"), "2023-02-30 00:00:00", dt.datetime(1970, 1, 1)]) == (None, None, None)
    assert conv.convert(["2024-02-29", "2016-12-31 23:59:60", 0]) == (dt.date(2024, 2, 29), None, None)
    with pytest.raises(RowConversionError, match="not a valid raw value for date"):
        conv.convert(["2024/02/29", None, None])


def test_time_outside_a_day_and_fsp():
    conv = conv_for(D("TIME", 0), D("TIME", 2), D("DATETIME", 3))
    row = conv.convert([dt.timedelta(hours=-838, minutes=-59, seconds=-59), "-00:00:00.567",
                        dt.datetime(2020, 1, 1, 0, 0, 0, 999999)])
    assert row == (-dt.timedelta(hours=838, minutes=59, seconds=59), -dt.timedelta(microseconds=560000),
                   dt.datetime(2020, 1, 1, 0, 0, 0, 999000))
    with pytest.raises(RowConversionError, match="out of range for time"):
        conv.convert(["839:00:00", None, None])


def test_json_as_text():
    conv = RowConverter(table(column("j", D("JSON"), flavor="mysql")), dialect="mysql")
    assert conv.convert([{"a": [1, None]}]) == ('{"a": [1, null]}',)
    assert conv.convert([b'{"a":1}']) == ('{"a":1}',)


def test_inet6_text_as_mariadb_writes_it():
    assert inet6_text(bytes(16)) == "::"
    assert inet6_text(bytes.fromhex("00000000000000000000ffff01020304")) == "::ffff:1.2.3.4"
    assert inet6_text(bytes.fromhex("00000000000000000000000001020304")) == "::1.2.3.4"
    assert inet6_text(bytes.fromhex("00010002000300040005000600070000")) == "1:2:3:4:5:6:7::"
    assert inet6_text(bytes.fromhex("20010db8000000000001000000000001")) == "2001:db8::1:0:0:1"


def test_errors_name_column_position_value_and_reason():
    conv = conv_for(D("INT"), D("TINYINT", unsigned=True))
    with pytest.raises(RowConversionError) as info:
        conv.convert([1, 300])
    err = info.value
    assert (err.column, err.position, err.value, err.reason) == ("c2", 1, 300, "out of range for tinyint(3) unsigned")
    row, errors = conv.try_convert(["x", 300])
    assert row == (None, None) and [e.position for e in errors] == [0, 1]


def test_wrong_arity():
    conv = conv_for(D("INT"), D("INT"))
    with pytest.raises(RowConversionError, match="expected 2 raw values, got 3") as info:
        conv.convert([1, 2, 3])
    assert info.value.column is None and info.value.position is None
    assert conv.convert(None) is None
    row, errors = conv.try_convert([1])
    assert row == (None, None) and len(errors) == 1 and errors[0].position is None


def test_a_charset_only_python_decodes_is_an_error_in_spark(spark):
    conv = conv_for(D("VARCHAR", 9, charset="gbk"))
    assert text_codec("gbk").native is False
    assert conv.convert([b"\xc4\xe3"]) == ("你",)
    got = spark_rows(spark, conv, [[b"\xc4\xe3"], ["你"]])
    assert got[0][0] is None and "no JVM-native decoder" in got[0][-1][0]["reason"]
    assert got[1][0] == "你" and got[1][-1] == []


def test_spark_error_column(spark):
    conv = conv_for(D("INT", unsigned=True), D("ENUM", values=("a",)), D("DATE"))
    got = spark_rows(spark, conv, [[-1, 1, "2024-02-29"], [2 ** 40, 9, "bad"], [1, 1], None, [None, None, None]])
    assert list(got[0]) == [4294967295, "a", dt.date(2024, 2, 29), []]
    values, errors = list(got[1])[:3], got[1][-1]
    assert values == [None, None, None]
    assert [(e["column"], e["position"], e["value"], e["reason"]) for e in errors] == [
        ("c1", 0, str(2 ** 40), "out of range for int(10) unsigned"),
        ("c2", 1, "9", "enum index out of range"),
        ("c3", 2, "bad", "not a valid raw value for date")]
    assert list(got[2])[:3] == [None, None, None]
    assert [(e["column"], e["position"], e["value"], e["reason"]) for e in got[2][-1]] == [
        (None, None, "2", "expected 3 raw values, got 2")]
    assert list(got[3]) == [None, None, None, []]
    assert list(got[4]) == [None, None, None, []]


def test_failed_flags_exactly_the_rows_with_errors(spark):
    """``failed`` reads the values computed earlier and flags a row as the error column would
    (a zero date is a legitimate null under the default ``invalid_date_handling``)."""
    conv = conv_for(D("INT", unsigned=True), D("ENUM", values=("a",)), D("DATE"))
    rows = [[-1, 1, "2024-02-29"], [1, 1, "0000-00-00"], [2 ** 40, 1, "2024-01-01"], [1, 1, "bad"],
            [1, 1], None, [None, None, None]]
    assert failed_flags(spark, conv, rows) == [False, False, True, True, True, False, False]
    strict = conv_for(D("DATE"), invalid_date_handling="error")
    assert failed_flags(spark, strict, [["0000-00-00"], ["2024-01-01"]]) == [True, False]


def test_a_wide_table_compiles_and_agrees(spark):
    """Hundreds of columns stay within the JVM's method-size limits (the reasons are
    interpreted, every value is a method of its own)."""
    specs = [D("INT", unsigned=True), D("VARCHAR", 20), D("DATETIME", 3), D("DECIMAL", 10, 2),
             D("ENUM", values=("a", "b")), D("SET", values=("x", "y")), D("TIME"), D("DATE")] * 16
    conv = RowConverter(table(*specs), dialect="mysql")
    row = [-1, "text", dt.datetime(2020, 1, 2, 3, 4, 5, 6000), Decimal("1.5"), 2, 3,
           dt.timedelta(hours=-5), dt.date(2020, 1, 1)] * 16
    bad = list(row)
    bad[0] = "x"
    assert not compare_faces(spark, conv, [row, bad])


def test_columns_without_the_error_column(spark):
    conv = conv_for(D("INT", unsigned=True), D("VARCHAR", 5), D("SET", values=("a", "b")))
    rows = [[-1, "x", 3], ["bad", "y", 1]]
    from ddlcore.raw import text_row

    df = spark.createDataFrame([(text_row(r),) for r in rows], "raw array<string>")
    plain = df.select(*conv.columns("raw", errors=None))
    assert plain.columns == ["c1", "c2", "c3"]
    assert [tuple(r) for r in plain.collect()] == [(4294967295, "x", ["a", "b"]), (None, "y", ["a"])]


def test_canonical_order_gives_tables_of_the_same_rules_the_same_value_code(spark):
    """Two tables with the same columns in another order: in ``canonical_order`` their value
    structs and failure tests are the same expressions (so Spark generates, compiles and the
    JVM optimises their code once); in ordinal order they differ."""
    cols = [D("INT", unsigned=True), D("ENUM", values=("x", "y")), D("VARCHAR", 10, charset="latin1"),
            D("DECIMAL", 8, 2)]
    one, two = conv_for(*cols), conv_for(*cols[2:], *cols[:2])
    assert [repr(one.rules[c]) for c in one.canonical_order()] == [repr(two.rules[c]) for c in two.canonical_order()]
    names = [f"_x{j}" for j in range(len(cols))]

    def text(conv, order):  # lambda variables are numbered by the session: not part of the code
        return tuple(re.sub(r"\b([a-z])_[0-9]+\b", r"\1", c._jc.toString()) for c in (
            conv.value_struct("raw", names, order), conv.failed("raw", "_v", names, order)))

    assert text(one, one.canonical_order()) == text(two, two.canonical_order())
    assert text(one, None) != text(two, None)
    with pytest.raises(ValueError, match="permutation"):
        one.value_struct("raw", names, [0, 1, 2, 2])
