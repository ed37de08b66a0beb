"""The MySQL / MariaDB type mapping onto Spark, as data: which ``ddlcore.spark.rules`` rule
(and parameters) each native type gets.  Reached through ``Dialect.spark_rules()``
(``SPARK_RULES``); core never imports this module by name.

Manual references: MySQL 8.0 manual 13.1 (integer ranges, 13.1.2; ``DECIMAL`` up to 65
digits, 13.1.3; ``FLOAT``/``DOUBLE``, 13.1.4; ``BIT``, 13.1.5), 13.2 (``DATE``/``DATETIME``/
``TIMESTAMP`` ranges and zero values, 13.2.2; fractional seconds, 13.2.6; ``TIME``
-838:59:59..838:59:59, 13.2.3; ``YEAR``, 13.2.4), 13.3 (``CHAR`` trailing spaces, 13.3.2;
``BINARY`` padding with 0x00, 13.3.3; ``ENUM`` index 0 for the error value, 13.3.5; ``SET``
bitmask and its 1/2/3/4/8-byte storage, 13.3.6), 13.4 (spatial values in the internal
geometry format: 4-byte SRID + WKB) and 13.5 (``JSON``); MariaDB KB ``INET4``, ``INET6``,
``UUID``.  Raw values are what the binlog row events hold (MySQL internals manual, "Rows
Event"): signed readings of unsigned integers, enum indexes, set bitmasks, text in the
column's charset, ``0000-00-00``.
"""

from __future__ import annotations

from ddlcore.model import Column, Table
from ddlcore.spark.options import SparkOptions
from ddlcore.spark.rules import (BinaryRule, BitRule, ColumnRule, DateRule, DateTimeRule,
                                 DecimalRule, EnumRule, FloatRule, IntegerRule, MappingRow,
                                 SetRule, SparkRules, TextRule, TimeRule, Utf8Codec,
                                 spark_type_name)
from pyspark.sql.types import (BooleanType, ByteType, DataType, DecimalType, IntegerType,
                               LongType, ShortType)

from .types import TYPES, DataTypeSpec, column_fields
from .values import Inet4Rule, Inet6Rule, UuidRule, YearRule, text_codec

__all__ = ["MySqlSparkRules", "SPARK_RULES", "INTEGER_BITS", "set_pack_length"]

#: storage bits of each integer type (manual 13.1.2, Table 13.1)
INTEGER_BITS = {"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "bigint": 64}

_SIGNED_TYPE: dict[str, DataType] = {"tinyint": ByteType(), "smallint": ShortType(),
                                     "mediumint": IntegerType(), "int": IntegerType(), "bigint": LongType()}
_UNSIGNED_TYPE: dict[str, DataType] = {"tinyint": ShortType(), "smallint": IntegerType(),
                                       "mediumint": IntegerType(), "int": LongType(),
                                       "bigint": DecimalType(20, 0)}
_OTHER_RULES = {"inet4": Inet4Rule, "inet6": Inet6Rule, "uuid": UuidRule}


def set_pack_length(members: int) -> int:
    """Bytes a SET value takes in a row (and its binlog bitmask): 1, 2, 3, 4 or 8
    (``Field_set``: ``(n + 7) / 8``, 8 when above 4)."""
    n = (members + 7) // 8
    return 8 if n > 4 else max(n, 1)


def _bit_width(column: Column) -> int:
    if column.numeric_precision:
        return int(column.numeric_precision)
    text = column.column_type
    return int(text[text.index("(") + 1:text.index(")")]) if "(" in text else 1


class MySqlSparkRules(SparkRules):
    """MySQL 8.0 / MariaDB 10.11 types → ``ColumnRule``s (the table in docs/spark.md)."""

    def rule(self, column: Column, options: SparkOptions, table: Table | None = None) -> ColumnRule:
        """The rule of ``column`` under ``options``; raises ``ValueError`` for a data type the
        catalogue (``types.TYPES``) does not know."""
        dt = column.data_type.lower()
        info = TYPES.get(dt)
        if info is None:
            raise ValueError(f"no Spark mapping for MySQL type {column.column_type!r} (column {column.name!r})")
        label = column.column_type
        fam = info.family
        if fam == "integer":
            return self._integer(column, dt, label, options)
        if fam == "decimal":
            p = column.numeric_precision if column.numeric_precision is not None else 10
            s = column.numeric_scale or 0
            return DecimalRule(label, p, s, options.decimal_handling)
        if fam == "float":
            return FloatRule(label, single=dt == "float")
        if fam == "bit":
            return BitRule(label, _bit_width(column), options.binary_handling)
        if fam == "date":
            return DateRule(label, options.invalid_date_handling)
        if fam == "time":
            fsp = column.datetime_precision or 0
            if options.time_precision == "connect":
                fsp = min(fsp, 3)
            if dt == "time":
                return TimeRule(label, fsp, micros=options.time_precision == "adaptive_time_microseconds")
            return DateTimeRule(label, fsp, utc=dt == "timestamp", invalid_dates=options.invalid_date_handling)
        if fam == "year":
            return YearRule(label)
        charset = column.character_set_name or (table.default_character_set_name if table else None)
        if fam in ("char", "text"):
            return TextRule(label, text_codec(charset), rstrip=dt == "char")
        if fam == "enum":
            return EnumRule(label, column.enum_values or (), text_codec(charset))
        if fam == "set":
            values = column.set_values or ()
            return SetRule(label, values, text_codec(charset), set_pack_length(len(values)))
        if fam == "json":
            return TextRule(label, Utf8Codec("utf8mb4"))
        if fam == "binary":
            pad = column.character_maximum_length if dt == "binary" else None
            return BinaryRule(label, options.binary_handling, pad_to=pad)
        if fam in ("blob", "spatial"):
            return BinaryRule(label, options.binary_handling)
        if dt in _OTHER_RULES:
            return _OTHER_RULES[dt](label)
        raise ValueError(f"no Spark mapping for MySQL type {column.column_type!r} (column {column.name!r})")

    @staticmethod
    def _integer(column: Column, dt: str, label: str, options: SparkOptions) -> ColumnRule:
        bits = INTEGER_BITS[dt]
        lo = -(1 << (bits - 1))
        if options.tinyint1_as_boolean and label.lower().startswith("tinyint(1)"):
            hi = (1 << bits) - 1 if column.unsigned else (1 << (bits - 1)) - 1
            return IntegerRule(label, lo, hi, (1 << bits) if column.unsigned else None, BooleanType(), "bool")
        if not column.unsigned:
            return IntegerRule(label, lo, (1 << (bits - 1)) - 1, None, _SIGNED_TYPE[dt])
        if dt == "bigint" and options.bigint_unsigned_handling == "long":
            return IntegerRule(label, lo, (1 << 64) - 1, 1 << 64, LongType(), "signed64")
        return IntegerRule(label, lo, (1 << bits) - 1, 1 << bits, _UNSIGNED_TYPE[dt])

    # -- documentation ---------------------------------------------------------------------

    def mapping(self) -> list[MappingRow]:
        """Every native type of the catalogue (and the variants that map differently) with its
        Spark type under the default options; the Spark types are computed by ``rule``."""
        rows = []
        for spec, notes, flavor in _MAPPING:
            f = column_fields(spec, flavor=flavor)
            f.pop("serial", None)
            col = Column(name="c", ordinal_position=1, **f)
            rule = self.rule(col, SparkOptions())
            rows.append(MappingRow(_native(spec), spark_type_name(rule.spark_type), notes))
        return rows


def _native(spec: DataTypeSpec) -> str:
    text = spec.name
    if spec.values is not None:
        text += "(" + ",".join(f"'{v}'" for v in spec.values) + ")"
    elif spec.length is not None:
        text += f"({spec.length}" + (f",{spec.scale})" if spec.scale is not None else ")")
    if spec.unsigned:
        text += " UNSIGNED"
    if spec.charset:
        text += f" CHARACTER SET {spec.charset}"
    return text


_D = DataTypeSpec
_WRAP = "negative raw values (signed readings) get 2^{} added"
#: (type as written, notes, flavor) — one row per native type and per variant that maps
#: differently; the Spark column is computed
_MAPPING: list[tuple[DataTypeSpec, str, str]] = [
    (_D("TINYINT"), "raw int -128..127", "mariadb"),
    (_D("TINYINT", unsigned=True), _WRAP.format(8), "mariadb"),
    (_D("TINYINT", 1), "`BooleanType` (non-zero is true) with `tinyint1_as_boolean=True`", "mariadb"),
    (_D("SMALLINT"), "", "mariadb"),
    (_D("SMALLINT", unsigned=True), _WRAP.format(16), "mariadb"),
    (_D("MEDIUMINT"), "", "mariadb"),
    (_D("MEDIUMINT", unsigned=True), _WRAP.format(24), "mariadb"),
    (_D("INT"), "", "mariadb"),
    (_D("INT", unsigned=True), _WRAP.format(32), "mariadb"),
    (_D("BIGINT"), "", "mariadb"),
    (_D("BIGINT", unsigned=True), _WRAP.format(64) + "; `bigint_unsigned_handling=long`: `LongType` "
     "holding the 64 bits signed", "mariadb"),
    (_D("DECIMAL", 10, 2), "raw int or decimal, rounded half up to the scale; `decimal_handling`: "
     "`double` → `DoubleType`, `string` → `StringType` (plain text, exactly s fraction digits)", "mariadb"),
    (_D("DECIMAL", 65, 30), "beyond 38 digits: plain text, exact (more fraction digits → error)", "mariadb"),
    (_D("FLOAT"), "raw int, float or decimal, rounded to binary32", "mariadb"),
    (_D("DOUBLE"), "", "mariadb"),
    (_D("BIT", 1), "raw int 0/1, bytes, or `0`/`1` text", "mariadb"),
    (_D("BIT", 10), "⌈n/8⌉ bytes big-endian; raw int, bytes or `0`/`1` text; `binary_handling`", "mariadb"),
    (_D("DATE"), "zero/invalid dates (`0000-00-00`, `2023-02-30`) → null (`invalid_date_handling`)", "mariadb"),
    (_D("DATETIME", 6), "wall time; fraction truncated to fsp; zero/invalid → null", "mariadb"),
    (_D("TIMESTAMP", 6), "raw wall time is UTC (or seconds since the epoch); zero (epoch 0) → null", "mariadb"),
    (_D("TIME", 6), "-838:59:59..838:59:59; `time_precision=adaptive_time_microseconds`: `LongType` µs", "mariadb"),
    (_D("YEAR"), "binlog byte, 1901–2155, 0 (and mysql-replication's 1900 for 0000)", "mariadb"),
    (_D("CHAR", 10), "bytes decoded with the column charset; trailing spaces removed", "mariadb"),
    (_D("VARCHAR", 255), "bytes decoded with the column charset (latin1 is cp1252)", "mariadb"),
    (_D("TINYTEXT"), "", "mariadb"),
    (_D("TEXT"), "", "mariadb"),
    (_D("MEDIUMTEXT"), "", "mariadb"),
    (_D("LONGTEXT"), "MariaDB's `JSON` is `LONGTEXT`", "mariadb"),
    (_D("BINARY", 16), "right-padded with 0x00 to n (the binlog drops trailing zero bytes); `binary_handling`", "mariadb"),
    (_D("VARBINARY", 255), "`binary_handling`", "mariadb"),
    (_D("TINYBLOB"), "", "mariadb"),
    (_D("BLOB"), "", "mariadb"),
    (_D("MEDIUMBLOB"), "", "mariadb"),
    (_D("LONGBLOB"), "", "mariadb"),
    (_D("ENUM", values=("a", "b")), "raw index (0 → `''`) or label", "mariadb"),
    (_D("SET", values=("a", "b")), "raw bitmask or `a,b` text; labels in definition order", "mariadb"),
    (_D("JSON"), "MySQL's binary JSON as text", "mysql"),
    (_D("GEOMETRY"), "internal format: 4-byte SRID + WKB; `binary_handling`", "mariadb"),
    (_D("POINT"), "", "mariadb"),
    (_D("LINESTRING"), "", "mariadb"),
    (_D("POLYGON"), "", "mariadb"),
    (_D("MULTIPOINT"), "", "mariadb"),
    (_D("MULTILINESTRING"), "", "mariadb"),
    (_D("MULTIPOLYGON"), "", "mariadb"),
    (_D("GEOMETRYCOLLECTION"), "", "mariadb"),
    (_D("INET4"), "4 bytes (trailing zero bytes restored) → `a.b.c.d`; text passes", "mariadb"),
    (_D("INET6"), "16 bytes → MariaDB's text (`::ffff:1.2.3.4`, `2001:db8::1`); text passes", "mariadb"),
    (_D("UUID"), "16 bytes → `xxxxxxxx-xxxx-…` lower case; text passes", "mariadb"),
]

#: the rules ``MySqlDialect.spark_rules()`` returns
SPARK_RULES = MySqlSparkRules()
