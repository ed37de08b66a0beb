"""The PostgreSQL 15 type mapping onto Spark, as data: which rule (``values``) each type gets.
Reached through the ``ddlcore_spark_rules`` plugin hook; core never imports this module by name.

Types are recognised by ``udt_name`` (``pg_type.typname``; a domain column carries its base
type's, an array ``_`` + the element's), so a domain maps as its base type.  The table is
rendered in docs/postgres.md ("Spark type mapping") from ``mapping()``.
"""

from __future__ import annotations

from ddlcore.model import Column, Table
from ddlcore.spark.options import SparkOptions
from ddlcore.spark.rules import ColumnRule, MappingRow, SparkRules, spark_type_name
from pyspark.sql.types import IntegerType, LongType, ShortType

from .types import column_fields
from .values import (PgArrayRule, PgBitRule, PgBoolRule, PgByteaRule, PgDateRule, PgFloatRule, PgIntegerRule,
                     PgMoneyRule, PgNumericRule, PgTextRule, PgTimestampRule)

__all__ = ["PostgresSparkRules", "SPARK_RULES"]

_INTS = {"int2": (16, ShortType()), "int4": (32, IntegerType()), "int8": (64, LongType())}


class PostgresSparkRules(SparkRules):
    """PostgreSQL 15 types → ``ColumnRule``s (the table in docs/postgres.md)."""

    def rule(self, column: Column, options: SparkOptions, table: Table | None = None) -> ColumnRule:
        udt = column.udt_name or ""
        label = column.domain_base_type or column.column_type
        dims = column.array_dimensions or (1 if column.data_type == "ARRAY" else 0)
        if dims or (udt.startswith("_") and column.data_type == "ARRAY"):
            if options.get("array_dimensions") == "text":
                return PgTextRule(label)
            element = self.scalar(udt[1:] if udt.startswith("_") else udt, label.removesuffix("[]"), column, options)
            if dims > 2:
                return PgTextRule(label)
            return PgArrayRule(label, element, max(dims, 1))
        return self.scalar(udt, label, column, options)

    def scalar(self, udt: str, label: str, column: Column, options: SparkOptions) -> ColumnRule:
        if udt in _INTS:
            bits, t = _INTS[udt]
            return PgIntegerRule(label, bits, t)
        if udt == "numeric":
            p, s = column.numeric_precision, column.numeric_scale
            if p is None or column.data_type == "ARRAY" or "(" not in label:
                if options.get("numeric_unconstrained") == "string":
                    return PgTextRule(label)
                return PgNumericRule(label, 38, 18, options.decimal_handling, limit_digits=True)
            return PgNumericRule(label, p, s or 0, options.decimal_handling)
        if udt in ("float4", "float8"):
            return PgFloatRule(label, single=udt == "float4")
        if udt == "bool":
            return PgBoolRule(label)
        if udt == "date":
            return PgDateRule(label, options.get("temporal_infinity"))
        if udt in ("timestamp", "timestamptz"):
            return PgTimestampRule(label, tz=udt == "timestamptz", infinity=options.get("temporal_infinity"))
        if udt == "bytea":
            return PgByteaRule(label, options.binary_handling)
        if udt == "money":
            return PgMoneyRule(label)
        if udt == "bit" and label in ("bit(1)", "bit"):
            return PgBitRule(label)
        # text, varchar, bpchar, name, "char", enums, uuid, json, jsonb, xml, inet, cidr, macaddr,
        # time, timetz, interval, bit(n), varbit, ranges, tsvector, geometric types, composite
        # types: the server's text, unchanged
        return PgTextRule(label)

    def mapping(self) -> list[MappingRow]:
        """Every type of the table in docs/postgres.md with its Spark type under the default
        options (computed by ``rule``)."""
        rows = []
        for written, typname, mods, dims, notes in _MAPPING:
            f = column_fields(typname, mods, dims=dims, explicit_char=typname in ("bpchar", "bit"))
            col = Column(name="c", ordinal_position=1, **f)
            rows.append(MappingRow(written, spark_type_name(self.rule(col, SparkOptions(dialect="postgres")).spark_type), notes))
        return rows


_MAPPING = [
    ("smallint / int2", "int2", [], 0, ""),
    ("integer / int4 / serial", "int4", [], 0, ""),
    ("bigint / int8 / bigserial", "int8", [], 0, ""),
    ("numeric(10,2)", "numeric", ["10", "2"], 0, "`decimal_handling` as for MySQL; `NaN`/`Infinity` → quarantined"),
    ("numeric", "numeric", [], 0, "`numeric_unconstrained=decimal` (default): `DecimalType(38,18)`, a value with more "
     "than 20 integer or 18 fraction digits is quarantined (never rounded); `string`: the exact text"),
    ("real", "float4", [], 0, "`NaN`, `Infinity` kept"),
    ("double precision", "float8", [], 0, "`NaN`, `Infinity` kept"),
    ("boolean", "bool", [], 0, "`t`/`f`"),
    ("date", "date", [], 0, "BC dates → quarantined; `infinity`/`-infinity`: `temporal_infinity`"),
    ("timestamp(p)", "timestamp", [], 0, "wall time; BC → quarantined; `infinity`/`-infinity`: `temporal_infinity`"),
    ("timestamptz(p)", "timestamptz", [], 0, "the text's offset applied: a UTC instant; BC → quarantined; "
     "`infinity`/`-infinity`: `temporal_infinity`"),
    ("time / timetz", "time", [], 0, "the server's text (`13:14:15.5`, `13:14:15+02`): Spark has no time-of-day type"),
    ("interval", "interval", [], 0, "the server's text (IntervalStyle postgres): months do not fit Spark's "
     "`DayTimeIntervalType`"),
    ("character varying(n) / text", "varchar", ["20"], 0, ""),
    ("character(n)", "bpchar", ["3"], 0, "padded with spaces to n, as the server returns it"),
    ("bytea", "bytea", [], 0, "hex format; `binary_handling`"),
    ("money", "money", [], 0, "`$1,234.56` under lc_monetary C/en_US; other locales → quarantined"),
    ("bit(1)", "bit", [], 0, "`1` is true"),
    ("bit(n), bit varying", "varbit", [], 0, "the bits as `0`/`1` text"),
    ("uuid, json, jsonb, xml, inet, cidr, macaddr, tsvector, ranges", "uuid", [], 0, "the server's text"),
    ("enum", "text", [], 0, "the label"),
    ("domain", "int4", [], 0, "its base type's mapping (here a domain over integer)"),
    ("integer[]", "int4", [], 1, "`{1,2,NULL}`; an element that does not convert fails the value; "
     "`array_dimensions=text`: the array's text"),
    ("text[][]", "text", [], 2, "two dimensions; three or more: the array's text"),
]

#: the rules the ``ddlcore_spark_rules`` hook answers for the postgres dialect
SPARK_RULES = PostgresSparkRules()
