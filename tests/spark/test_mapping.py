"""The documented type mapping, row by row: each native type's Spark type, one raw value and
the value it converts to (both faces), the docs table kept identical to the rules, the field
metadata, nullability, and the options."""

from __future__ import annotations

import datetime as dt
import pickle
import struct
from decimal import Decimal
from pathlib import Path

import pytest

from ddlcore.errors import DdlCoreError
from ddlcore.model import Table
from ddlcore.raw import RawDate
from ddlcore.spark import (RowConverter, SparkOptions, field_metadata, mapping, mapping_table,
                           struct_type)
from ddlcore_mysql.types import DataTypeSpec as D

from .support import column, normalize, normalize_spark, spark_rows, table

DOCS = Path(__file__).resolve().parents[2] / "docs" / "spark.md"
UTC = dt.timezone.utc


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


#: one raw value per row of the mapping table and the value the mapping makes of it
SAMPLES: dict[str, tuple[object, object]] = {
    "TINYINT": (-5, -5),
    "TINYINT UNSIGNED": (-1, 255),
    "TINYINT(1)": (3, 3),
    "SMALLINT": (-300, -300),
    "SMALLINT UNSIGNED": (-1, 65535),
    "MEDIUMINT": (-8388608, -8388608),
    "MEDIUMINT UNSIGNED": (-1, 16777215),
    "INT": (7, 7),
    "INT UNSIGNED": (-2, 4294967294),
    "BIGINT": (-(2 ** 63), -(2 ** 63)),
    "BIGINT UNSIGNED": (-1, Decimal(2 ** 64 - 1)),
    "DECIMAL(10,2)": (Decimal("1.005"), Decimal("1.01")),
    "DECIMAL(65,30)": (Decimal("-0.5"), "-0." + "5".ljust(30, "0")),
    "FLOAT": (0.1, f32(0.1)),
    "DOUBLE": (Decimal("0.1"), 0.1),
    "BIT(1)": ("1", True),
    "BIT(10)": (513, b"\x02\x01"),
    "DATE": (RawDate("0000-00-00"), None),
    "DATETIME(6)": ("2024-01-02 03:04:05.123456", dt.datetime(2024, 1, 2, 3, 4, 5, 123456)),
    "TIMESTAMP(6)": (1700000000, dt.datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)),
    "TIME(6)": ("-838:59:59", -dt.timedelta(hours=838, minutes=59, seconds=59)),
    "YEAR": (24, 1924),
    "CHAR(10)": (b"ab  ", "ab"),
    "VARCHAR(255)": (b"caf\xc3\xa9", "café"),
    "TINYTEXT": ("x", "x"),
    "TEXT": ("12", "12"),
    "MEDIUMTEXT": ('{"$b64":"x"}', '{"$b64":"x"}'),
    "LONGTEXT": (b"\xf0\x9f\x98\x80", "😀"),
    "BINARY(16)": (b"ab", b"ab" + b"\x00" * 14),
    "VARBINARY(255)": (b"\x00", b"\x00"),
    "TINYBLOB": (b"z", b"z"),
    "BLOB": (b"", b""),
    "MEDIUMBLOB": (b"\xff", b"\xff"),
    "LONGBLOB": (b"\x01\x02", b"\x01\x02"),
    "ENUM('a','b')": (2, "b"),
    "SET('a','b')": (3, ["a", "b"]),
    "JSON": ({"a": [1, "é"]}, '{"a": [1, "é"]}'),
    "GEOMETRY": (b"\x00\x00\x00\x00\x01", b"\x00\x00\x00\x00\x01"),
    "POINT": (b"\x00", b"\x00"),
    "LINESTRING": (b"\x01", b"\x01"),
    "POLYGON": (b"\x02", b"\x02"),
    "MULTIPOINT": (b"\x03", b"\x03"),
    "MULTILINESTRING": (b"\x04", b"\x04"),
    "MULTIPOLYGON": (b"\x05", b"\x05"),
    "GEOMETRYCOLLECTION": (b"\x06", b"\x06"),
    "INET4": (b"\x0a\x00\x00", "10.0.0.0"),
    "INET6": (b"\x00" * 15 + b"\x01", "::1"),
    "UUID": (bytes.fromhex("123e4567e89b12d3a456426614174000"), "123e4567-e89b-12d3-a456-426614174000"),
}


def _spec(native: str) -> tuple[D, str]:
    """The ``DataTypeSpec`` of a mapping row's native type text."""
    from ddlcore_mysql.spark_types import _MAPPING, _native

    for spec, _notes, flavor in _MAPPING:
        if _native(spec) == native:
            return spec, flavor
    raise KeyError(native)


ROWS = mapping("mysql")


def test_every_row_of_the_mapping_has_a_sample():
    assert sorted(r.native for r in ROWS) == sorted(SAMPLES)


def test_every_type_of_the_catalogue_is_in_the_mapping():
    from ddlcore_mysql.types import TYPES

    natives = {r.native.split("(")[0].split(" ")[0].lower() for r in ROWS}
    assert set(TYPES) <= natives


def test_docs_hold_the_mapping_table_as_the_rules_make_it():
    assert mapping_table("mysql") in DOCS.read_text(encoding="utf-8")


@pytest.mark.parametrize("row", ROWS, ids=[r.native for r in ROWS])
def test_mapping_row(row, mysql):
    spec, flavor = _spec(row.native)
    col = column("c", spec, flavor=flavor)
    t = table(col)
    schema = struct_type(t, mysql)
    from ddlcore.spark.rules import spark_type_name

    assert spark_type_name(schema.fields[0].dataType) == row.spark
    raw, want = SAMPLES[row.native]
    assert RowConverter(t, dialect=mysql).convert([raw]) == (want,)


def test_every_mapping_row_converts_the_same_in_spark(spark, mysql):
    cols = []
    for i, row in enumerate(ROWS, start=1):
        spec, flavor = _spec(row.native)
        cols.append(column(f"c{i}", spec, i, flavor=flavor))
    t = table(*cols)
    conv = RowConverter(t, dialect=mysql)
    raw = [SAMPLES[r.native][0] for r in ROWS]
    got = spark_rows(spark, conv, [raw])[0]
    assert got[-1] == []
    from pyspark.sql.types import TimestampType

    for i, row in enumerate(ROWS):
        want = SAMPLES[row.native][1]
        instant = isinstance(conv.struct_type.fields[i].dataType, TimestampType)
        assert normalize_spark(got[i], instant) == normalize(want), row.native


# --------------------------------------------------------------------------------------------
# options
# --------------------------------------------------------------------------------------------


def convert_one(spec: D, raw, flavor: str = "mariadb", **options):
    t = table(column("c", spec, flavor=flavor))
    conv = RowConverter(t, dialect="mysql", **options)
    return conv.struct_type.fields[0].dataType, conv.convert([raw])[0]


def test_tinyint1_is_boolean_only_when_configured():
    from pyspark.sql.types import BooleanType, ByteType

    assert convert_one(D("TINYINT", 1), 3) == (ByteType(), 3)
    assert convert_one(D("TINYINT", 1), 3, tinyint1_as_boolean=True) == (BooleanType(), True)
    assert convert_one(D("TINYINT", 1), 0, tinyint1_as_boolean=True) == (BooleanType(), False)
    assert convert_one(D("TINYINT", 4), 3, tinyint1_as_boolean=True) == (ByteType(), 3)


def test_decimal_handling():
    from pyspark.sql.types import DecimalType, DoubleType, StringType

    assert convert_one(D("DECIMAL", 5, 2), Decimal("-1.5")) == (DecimalType(5, 2), Decimal("-1.50"))
    assert convert_one(D("DECIMAL", 5, 2), Decimal("-1.5"), decimal_handling="double") == (DoubleType(), -1.5)
    assert convert_one(D("DECIMAL", 5, 2), Decimal("-0.001"), decimal_handling="string") == (StringType(), "0.00")
    assert convert_one(D("DECIMAL", 38, 0), Decimal("9" * 38)) == (DecimalType(38, 0), Decimal("9" * 38))
    assert convert_one(D("DECIMAL", 39, 1), 5) == (StringType(), "5.0")


def test_bigint_unsigned_handling():
    from pyspark.sql.types import DecimalType, LongType

    assert convert_one(D("BIGINT", unsigned=True), -1) == (DecimalType(20, 0), Decimal(2 ** 64 - 1))
    assert convert_one(D("BIGINT", unsigned=True), -1, bigint_unsigned_handling="long") == (LongType(), -1)
    assert convert_one(D("BIGINT", unsigned=True), 2 ** 64 - 1, bigint_unsigned_handling="long") == (LongType(), -1)
    assert convert_one(D("BIGINT", unsigned=True), 5, bigint_unsigned_handling="long") == (LongType(), 5)


def test_binary_handling():
    from pyspark.sql.types import BinaryType, StringType

    assert convert_one(D("VARBINARY", 8), b"\x00\xff") == (BinaryType(), b"\x00\xff")
    assert convert_one(D("VARBINARY", 8), b"\x00\xff", binary_handling="base64") == (StringType(), "AP8=")
    assert convert_one(D("VARBINARY", 8), b"\x00\xff", binary_handling="hex") == (StringType(), "00ff")
    assert convert_one(D("BIT", 12), 4095, binary_handling="hex") == (StringType(), "0fff")
    assert convert_one(D("BLOB"), b"\xfa" * 60, binary_handling="base64")[1] == "+vr6" * 20  # no line breaks


def test_time_precision():
    from pyspark.sql.types import DayTimeIntervalType, LongType, TimestampNTZType

    d = dt.timedelta(hours=-838, minutes=-59, seconds=-59)
    assert convert_one(D("TIME", 0), "-838:59:59")[1] == d
    assert convert_one(D("TIME", 3), "-00:00:01.2345", time_precision="adaptive_time_microseconds") == (
        LongType(), -1_234_000)
    assert convert_one(D("TIME", 6), "00:00:01.234567", time_precision="connect")[1] == dt.timedelta(
        seconds=1, microseconds=234000)
    assert isinstance(convert_one(D("TIME", 6), "00:00:01")[0], DayTimeIntervalType)
    assert convert_one(D("DATETIME", 6), "2020-01-01 00:00:00.999999", time_precision="connect") == (
        TimestampNTZType(), dt.datetime(2020, 1, 1, 0, 0, 0, 999000))


def test_invalid_date_handling():
    from ddlcore.errors import RowConversionError

    assert convert_one(D("DATE"), "2023-02-30")[1] is None
    with pytest.raises(RowConversionError, match="zero or invalid date"):
        convert_one(D("DATE"), "2023-02-30", invalid_date_handling="error")
    with pytest.raises(RowConversionError, match="zero or invalid datetime"):
        convert_one(D("DATETIME"), "0000-00-00 00:00:00", invalid_date_handling="error")
    # the zero TIMESTAMP (the epoch) is null under both
    assert convert_one(D("TIMESTAMP"), dt.datetime(1970, 1, 1), invalid_date_handling="error")[1] is None


def test_options_are_checked():
    with pytest.raises(TypeError, match="unknown Spark option"):
        SparkOptions.of(decimal_mode="string")
    with pytest.raises(ValueError, match="decimal_handling=.exact.: expected one of"):
        SparkOptions(decimal_handling="exact")
    with pytest.raises(TypeError):
        struct_type(table(D("INT")), "mysql", nonsense=1)
    assert SparkOptions.of({"binary_handling": "hex"}, decimal_handling=None).binary_handling == "hex"


# --------------------------------------------------------------------------------------------
# schema facts
# --------------------------------------------------------------------------------------------


def test_field_metadata_carries_the_source_facts(mysql):
    col = column("status", D("ENUM", values=("new", "paid"), charset="latin1"), comment="order state")
    schema = struct_type(table(col), mysql)
    md = schema.fields[0].metadata
    assert md["column_type"] == "enum('new','paid')"
    assert md["character_set_name"] == "latin1" and md["collation_name"] == "latin1_swedish_ci"
    assert md["enum_values"] == ["new", "paid"]
    assert md["comment"] == "order state" and md["dialect"] == "mysql"
    assert md["data_type"] == "enum" and md["ordinal_position"] == 1


def test_metadata_and_names_survive_the_spark_columns(spark, mysql):
    col = column("amount", D("DECIMAL", 10, 2), comment="in cents")
    conv = RowConverter(table(col), dialect=mysql)
    df = spark.createDataFrame([(["1"],)], "raw array<string>").select(*conv.columns("raw"))
    assert df.schema.fields[0].name == "amount"
    assert df.schema.fields[0].metadata["column_type"] == "decimal(10,2)"
    assert df.schema.fields[0].dataType == conv.struct_type.fields[0].dataType
    assert df.schema.fields[1].name == "_errors"


def test_nullability_follows_the_model_and_the_mapping(mysql):
    t = table(column("a", D("INT"), nullable=False), column("b", D("INT"), 2),
              column("d", D("DATE"), 3, nullable=False), column("ts", D("TIMESTAMP"), 4, nullable=False))
    fields = struct_type(t, mysql).fields
    assert [f.nullable for f in fields] == [False, True, True, True]
    fields = struct_type(t, mysql, invalid_date_handling="error").fields
    assert [f.nullable for f in fields] == [False, True, False, True]


def test_the_dialect_is_found_through_its_plugin(mysql):
    from ddlcore.spark.rules import SparkRules

    assert isinstance(mysql.spark_rules(), SparkRules)
    t = table(D("INT"))
    assert struct_type(t, "mysql") == struct_type(t, mysql)
    assert struct_type(t, options={"dialect": "mariadb"}) == struct_type(t, "mysql")


def test_no_dialect_named_is_an_error_when_several_have_spark_rules(mysql):
    """A Table built by hand does not know its dialect: with mysql and postgres installed, the
    caller must say which rules apply (one dialect with rules installed would be taken without
    asking)."""
    import pytest

    from ddlcore.plugins import available_dialects

    with_rules = [d for d in available_dialects().values() if d.spark_rules() is not None]
    t = table(D("INT"))
    if len(with_rules) == 1:
        assert struct_type(t) == struct_type(t, with_rules[0])
    else:
        with pytest.raises(TypeError, match="does not know its dialect"):
            struct_type(t)


def test_a_dialect_without_spark_rules():
    from ddlcore import Dialect
    from ddlcore.spark.schema import resolve_rules

    class Bare(Dialect):
        name = "bare"

    assert Bare().spark_rules() is None
    with pytest.raises(DdlCoreError, match="no Spark type rules"):
        resolve_rules(Bare())


def test_unknown_types_are_refused(mysql):
    from ddlcore import Column

    odd = Column(name="v", ordinal_position=1, data_type="vector", column_type="vector(3)")
    with pytest.raises(ValueError, match="no Spark mapping"):
        struct_type(table(odd), mysql)


def test_a_converter_pickles(mysql):
    t = table(column("u", D("INT", unsigned=True)), column("f", D("FLOAT"), 2))
    conv = pickle.loads(pickle.dumps(RowConverter(t, dialect=mysql, binary_handling="hex")))
    assert conv.convert([-1, 0.1]) == (4294967295, f32(0.1))
    assert conv.options.binary_handling == "hex"


def test_field_metadata_function(mysql):
    col = column("x", D("BIT", 3))
    rule = mysql.spark_rules().rule(col, SparkOptions())
    assert field_metadata(col, rule, "mysql")["raw_rule"] == "bit(3)"


def test_struct_type_and_row_converter_take_one_signature_and_a_parsed_table_knows_its_dialect():
    """Issue 32 item 16: two dialects are installed; a table from a parser needs no dialect."""
    import ddlcore

    my = ddlcore.get_dialect("mysql").parser()
    tables = my.new_tables()
    my.parse("CREATE TABLE t (id bigint unsigned, flag tinyint(1))", tables, database="d")
    t = tables.get("d.t")
    assert t.dialect == "mysql"
    assert struct_type(t) == struct_type(t, "mysql") == RowConverter(t).struct_type
    assert RowConverter(t, "mysql", options={"tinyint1_as_boolean": True}).struct_type == \
        struct_type(t, "mysql", options={"tinyint1_as_boolean": True}) == \
        struct_type(t, tinyint1_as_boolean=True)
    assert RowConverter(t, {"tinyint1_as_boolean": True}).struct_type == RowConverter(
        t, tinyint1_as_boolean=True).struct_type  # the older RowConverter(table, options) form
    pg = ddlcore.get_dialect("postgres").parser()
    pgt = pg.new_tables()
    pg.parse("CREATE TABLE t (id bigint, tags text[])", pgt)
    p = next(iter(pgt))
    assert p.dialect == "postgres" and struct_type(p)["tags"].dataType.typeName() == "array"
    assert Table.from_json(t.to_json()) == t and "dialect" not in t.to_json()  # not part of its value
    with pytest.raises(TypeError, match="does not know its dialect"):
        struct_type(Table.from_json(t.to_json()))
