"""Hypothesis strategies: MySQL column types with random parameters, Spark options, and raw
values for a column — values of every kind a capture can hand over, biased to each type's
edges (min/max, negative readings of unsigned columns, the empty and the full set, zero and
invalid dates, leap seconds, 38-digit decimals), with some of the wrong kind and nulls."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

from hypothesis import strategies as st

from ddlcore import Column
from ddlcore.raw import RawDate, RawDateTime, RawTime
from ddlcore.spark import SparkOptions
from ddlcore.spark.rules import (BinaryRule, BitRule, ColumnRule, DateRule, DateTimeRule,
                                 DecimalRule, EnumRule, FloatRule, IntegerRule, SetRule, TextRule,
                                 TimeRule)
from ddlcore_mysql import charsets
from ddlcore_mysql.types import DataTypeSpec as D
from ddlcore_mysql.values import Inet4Rule, Inet6Rule, UuidRule, YearRule

from .support import column

#: charsets the Spark face decodes natively (the East Asian ones decode in Python only)
NATIVE_CHARSETS = ["utf8mb4", "utf8mb3", "latin1", "ascii", "cp1250", "cp1251", "cp1256", "koi8r",
                   "greek", "hebrew", "latin2", "latin7", "macroman", "tis620", "cp866", "swe7",
                   "ucs2", "utf16", "utf16le", "utf32"]

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
TRICKY_TEXT = st.sampled_from(["", " ", "12", "-3", "007", "1.5", "1e3", "-0.0", '{"$b64":"AAE="}',
                               '{"$s":"x"}', '{"$', "a\\b", 'q"uote', "tab\there", "\x00", "é€",
                               "0000-00-00", "true", "null", "a,b", "\u2028", "😀", "  trail  "])

LABEL = st.text(alphabet=st.sampled_from("abcXYZ019 é_-"), min_size=1, max_size=5).map(str.strip).filter(bool)


def labels() -> st.SearchStrategy[tuple[str, ...]]:
    """ENUM/SET labels: unique, no commas, no trailing spaces; often digits (so that an index
    and a label look alike)."""
    base = st.lists(st.one_of(LABEL, st.sampled_from(["0", "1", "2", "10", "-1"])),
                    min_size=1, max_size=9, unique=True)
    return base.map(tuple)


@st.composite
def column_specs(draw) -> tuple[D, str]:
    """``(DataTypeSpec, flavor)`` of any MySQL / MariaDB type."""
    kind = draw(st.sampled_from(["int", "tinyint1", "decimal", "float", "bit", "date", "datetime",
                                 "timestamp", "time", "year", "char", "text", "binary", "blob",
                                 "enum", "set", "json", "spatial", "inet4", "inet6", "uuid"]))
    if kind == "int":
        return D(draw(st.sampled_from(["TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT"])),
                 unsigned=draw(st.booleans())), "mariadb"
    if kind == "tinyint1":
        return D("TINYINT", 1, unsigned=draw(st.booleans())), "mariadb"
    if kind == "decimal":
        p = draw(st.sampled_from([1, 5, 10, 18, 19, 20, 37, 38, 39, 50, 65]) | st.integers(1, 65))
        return D("DECIMAL", p, draw(st.integers(0, min(p, 30)))), "mariadb"
    if kind == "float":
        return D(draw(st.sampled_from(["FLOAT", "DOUBLE"]))), "mariadb"
    if kind == "bit":
        return D("BIT", draw(st.sampled_from([1, 2, 7, 8, 9, 16, 63, 64]) | st.integers(1, 64))), "mariadb"
    if kind in ("datetime", "timestamp", "time"):
        return D(kind.upper(), draw(st.integers(0, 6))), "mariadb"
    if kind in ("date", "year"):
        return D(kind.upper()), "mariadb"
    if kind == "char":
        name = draw(st.sampled_from(["CHAR", "VARCHAR"]))
        return D(name, draw(st.integers(1, 30)), charset=draw(st.sampled_from(NATIVE_CHARSETS))), "mariadb"
    if kind == "text":
        name = draw(st.sampled_from(["TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT"]))
        return D(name, charset=draw(st.sampled_from(NATIVE_CHARSETS))), "mariadb"
    if kind == "binary":
        return D(draw(st.sampled_from(["BINARY", "VARBINARY"])), draw(st.integers(1, 8))), "mariadb"
    if kind == "blob":
        return D(draw(st.sampled_from(["TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB"]))), "mariadb"
    if kind in ("enum", "set"):
        return D(kind.upper(), values=draw(labels()), charset=draw(st.sampled_from(NATIVE_CHARSETS))), "mariadb"
    if kind == "json":
        return D("JSON"), "mysql"
    if kind == "spatial":
        return D(draw(st.sampled_from(["GEOMETRY", "POINT", "POLYGON"]))), "mariadb"
    return D(kind.upper()), "mariadb"


@st.composite
def columns(draw, name: str = "c") -> Column:
    spec, flavor = draw(column_specs())
    return column(name, spec, flavor=flavor, nullable=draw(st.booleans()))


def options() -> st.SearchStrategy[SparkOptions]:
    return st.builds(
        SparkOptions,
        dialect=st.just("mysql"),
        decimal_handling=st.sampled_from(["precise", "precise", "double", "string"]),
        bigint_unsigned_handling=st.sampled_from(["precise", "long"]),
        binary_handling=st.sampled_from(["bytes", "bytes", "base64", "hex"]),
        time_precision=st.sampled_from(["adaptive", "adaptive", "adaptive_time_microseconds", "connect"]),
        tinyint1_as_boolean=st.booleans(),
        invalid_date_handling=st.sampled_from(["null", "null", "error"]),
    )


# --------------------------------------------------------------------------------------------
# raw values
# --------------------------------------------------------------------------------------------

FINITE = st.floats(allow_nan=False, allow_infinity=False)
DECIMALS = st.decimals(allow_nan=False, allow_infinity=False)
#: a raw value of any kind (the wrong kind for most columns)
ANY_RAW = st.one_of(
    st.none(), st.integers(-(2 ** 70), 2 ** 70), FINITE, TEXT, TRICKY_TEXT, st.binary(max_size=6),
    DECIMALS, st.dates(), st.datetimes(), st.timedeltas(), st.booleans(),
    st.builds(RawDate, st.sampled_from(["0000-00-00", "2023-02-30", "2020-13-01"])),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)

DATE_TEXT = st.from_regex(r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")
DATETIME_TEXT = st.from_regex(r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}( [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?)?\Z")
TIME_TEXT = st.from_regex(r"\A-?[0-9]{1,4}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?\Z")
LEAP = ["2016-12-31 23:59:60", "2016-12-31 23:59:60.5"]


def _encode(codec: str):
    return lambda s: s.encode(codec, errors="ignore")


def _codec_of(rule: ColumnRule) -> str:
    charset = getattr(getattr(rule, "codec", None), "charset", "utf8mb4")
    return charsets.python_codec(charset)


def raw_values(col: Column, rule: ColumnRule) -> st.SearchStrategy:
    """Raw values for ``col`` under ``rule``: mostly of the kinds it accepts, edges included,
    plus nulls and values of any kind."""
    return st.one_of(st.none(), _valid(col, rule), _valid(col, rule), _valid(col, rule), ANY_RAW)


def _valid(col: Column, rule: ColumnRule) -> st.SearchStrategy:
    if isinstance(rule, IntegerRule):
        edges = [rule.lo, rule.hi, rule.lo - 1, rule.hi + 1, -1, 0, 1, 2, 127, 128, 255, 256,
                 2 ** 63 - 1, -(2 ** 63), 2 ** 64 - 1, 2 ** 64]
        return st.one_of(st.sampled_from(edges), st.integers(rule.lo, rule.hi), st.booleans())
    if isinstance(rule, DecimalRule):
        p, s = rule.p, rule.s
        exact = st.integers(-(10 ** p - 1), 10 ** p - 1).map(lambda i: Decimal(i).scaleb(-s))
        edges = [Decimal(10 ** p - 1).scaleb(-s), -Decimal(10 ** p - 1).scaleb(-s), Decimal(10 ** p).scaleb(-s),
                 Decimal("-0").scaleb(-s), Decimal("0.5").scaleb(-s), Decimal("-0.5").scaleb(-s),
                 Decimal("1" * 38), Decimal("9" * 38 + ".5"), Decimal("1E+40"), Decimal("1.23456789"),
                 Decimal("NaN"), Decimal("-Infinity")]
        return st.one_of(exact, exact, st.sampled_from(edges), DECIMALS, st.integers(-(10 ** 40), 10 ** 40))
    if isinstance(rule, FloatRule):
        edges = [3.4028234663852886e38, 3.4028235677973366e38, 3.5e38, 1e-45, 1.4e-45, 7e-46, -0.0,
                 1.7976931348623157e308, 5e-324, 16777217.0, 2 ** 70, Decimal("1e400"), Decimal("0.1")]
        return st.one_of(FINITE, st.sampled_from(edges), st.integers(-(2 ** 1100), 2 ** 1100), DECIMALS)
    if isinstance(rule, BitRule):
        n, nb = rule.bits, rule.nbytes
        return st.one_of(st.integers(-2, 2 ** n + 1), st.sampled_from([0, 2 ** n - 1, 2 ** n, -1]),
                         st.binary(min_size=0, max_size=nb + 1),
                         st.text(alphabet="01", min_size=1, max_size=n + 1),
                         st.sampled_from([b"\xff" * nb, b"\x00" * nb, "1" * n]))
    if isinstance(rule, DateRule):
        return st.one_of(st.dates(), DATE_TEXT, st.sampled_from(
            ["0000-00-00", "2023-02-30", "2020-00-10", "2024-02-29", "2023-02-29", "0000-01-01",
             "9999-12-31", "0001-01-01", "2020-13-01", "2020-1-2"]).map(RawDate), st.sampled_from(["0000-00-00", "2024-02-29"]))
    if isinstance(rule, DateTimeRule):
        texts = ["0000-00-00 00:00:00", "1970-01-01 00:00:00", "1970-01-01 00:00:00.000", "1970-01-01",
                 "1970-01-01 00:00:00.4", "2038-01-19 03:14:07.999999", "9999-12-31 23:59:59.999999",
                 "2020-02-30 10:00:00", "2020-01-01 24:00:00"] + LEAP
        parts = [st.datetimes(), st.datetimes(timezones=st.just(dt.timezone.utc)), st.dates(), DATETIME_TEXT,
                 st.sampled_from(texts), st.sampled_from(texts).map(RawDateTime),
                 st.just(dt.datetime(1970, 1, 1))]
        if rule.utc:
            parts += [st.integers(-5, 2 ** 35), st.sampled_from([0, 1, 2 ** 31 - 1, 253402300799, 253402300800]),
                      st.decimals(min_value=-1, max_value=2 ** 34, places=7, allow_nan=False),
                      st.sampled_from([Decimal("0.0000004"), Decimal("-0.0000004"), Decimal("1E+20")])]
        return st.one_of(*parts)
    if isinstance(rule, TimeRule):
        texts = ["838:59:59", "838:59:59.000000", "838:59:59.000001", "-838:59:59", "839:00:00",
                 "00:60:00", "00:00:60", "-00:00:00.5", "0838:59:59", "12:34:56.789"]
        return st.one_of(st.timedeltas(min_value=dt.timedelta(hours=-900), max_value=dt.timedelta(hours=900)),
                         TIME_TEXT, st.sampled_from(texts), st.sampled_from(texts).map(RawTime), st.times(),
                         st.sampled_from([dt.timedelta(hours=838, minutes=59, seconds=59),
                                          -dt.timedelta(hours=838, minutes=59, seconds=59, microseconds=1)]))
    if isinstance(rule, YearRule):
        return st.one_of(st.integers(-5, 2200), st.sampled_from([0, 1, 255, 256, 1900, 1901, 2155, 2156]))
    if isinstance(rule, TextRule):
        codec = _codec_of(rule)
        parts = [TEXT, TRICKY_TEXT, TEXT.map(_encode(codec)), TRICKY_TEXT.map(_encode(codec)),
                 st.binary(max_size=8)]
        if col.data_type == "json":
            parts.append(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=4),
                                      lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
                                      max_leaves=5))
        return st.one_of(*parts)
    if isinstance(rule, EnumRule):
        codec = _codec_of(rule)
        n = len(rule.labels)
        return st.one_of(st.integers(-2, n + 2), st.sampled_from([0, n, n + 1, -1, -128, -129, 255, 256]),
                         st.sampled_from(("",) + rule.labels),
                         st.sampled_from(rule.labels).map(_encode(codec)), TEXT)
    if isinstance(rule, SetRule):
        codec = _codec_of(rule)
        n = len(rule.labels)
        subsets = st.lists(st.sampled_from(rule.labels), max_size=n + 1)
        return st.one_of(st.integers(0, 2 ** n), st.sampled_from([0, 2 ** n - 1, 2 ** n, -1, -(2 ** 63)]),
                         subsets.map(",".join), subsets.map(set), subsets.map(lambda s: ",".join(s).encode(codec, "ignore")),
                         st.sampled_from(["", ",", "nope", "a,,b"]))
    if isinstance(rule, BinaryRule):
        limit = (rule.pad_to or 6) + 2
        return st.one_of(st.binary(max_size=limit), st.just(b""), st.just(b"\x00\x00"))
    if isinstance(rule, (Inet4Rule, Inet6Rule, UuidRule)):
        size = rule.size
        return st.one_of(st.binary(min_size=size, max_size=size), st.binary(min_size=size, max_size=size),
                         st.sampled_from([b"\x00" * size, b"\xff" * size, b"\x00" * 10 + b"\xff\xff\x01\x02\x03\x04"
                                          if size == 16 else b"\x01\x02\x03\x04"]),
                         st.binary(max_size=size + 1), TEXT)
    return ANY_RAW


def json_doc() -> st.SearchStrategy:
    return st.dictionaries(st.text(max_size=3), st.integers(), max_size=3).map(lambda d: json.loads(json.dumps(d)))
