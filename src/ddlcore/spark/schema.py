"""``struct_type(table)``: the Spark schema of a table version.

Owns: finding the dialect's type rules (through ``ddlcore.get_dialect`` and
``Dialect.spark_rules()``, never by importing a dialect package), one ``StructField`` per
column in ordinal order, nullability, and the field metadata that carries the source facts.
Must not know: any dialect's types (the dialect's ``SparkRules`` decide).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from pyspark.sql.types import StructField, StructType

from ..errors import DdlCoreError
from ..model import Column, Table
from ..plugins import available_dialects, get_dialect
from .options import SparkOptions
from .rules import ColumnRule, SparkRules

if TYPE_CHECKING:  # pragma: no cover
    from ..dialect import Dialect

__all__ = ["struct_type", "field_metadata", "resolve_rules", "column_rules"]

#: Column fields never copied into metadata (the field's name and type say them)
_SKIP = frozenset({"name"})


def _dialect(name: "str | Dialect | None") -> "Dialect":
    from ..dialect import Dialect

    if isinstance(name, Dialect):
        return name
    if name is None:
        candidates = [d for d in available_dialects().values() if d.spark_rules() is not None]
        if len(candidates) == 1:
            return candidates[0]
        installed = ", ".join(d.name for d in candidates) or "none"
        raise TypeError("the table does not know its dialect (not made by a parser): name it, e.g. "
                        f"struct_type(table, dialect=...) (dialects with Spark rules: {installed})")
    return get_dialect(name)


def resolve_rules(dialect: "str | Dialect | None") -> tuple["Dialect", SparkRules]:
    """``(dialect, its SparkRules)``; ``dialect`` a name, a ``Dialect`` or ``None`` (the only
    installed dialect that has Spark rules).  Raises ``DialectNotFound``, ``TypeError`` (no or
    several candidates) or ``DdlCoreError`` (the dialect has no Spark rules)."""
    d = _dialect(dialect)
    rules = d.spark_rules()
    if rules is None:
        raise DdlCoreError(f"dialect {d.name!r} provides no Spark type rules")
    return d, rules


def resolve_for(table: Table, dialect: "str | Dialect | SparkOptions | Mapping[str, Any] | None",
                options: "SparkOptions | Mapping[str, Any] | None",
                overrides: Mapping[str, Any]) -> tuple[SparkOptions, "Dialect", SparkRules]:
    """The arguments ``struct_type`` and ``RowConverter`` share — ``(table, dialect=None, *,
    options=None, **overrides)`` — resolved: the options, and the dialect named by
    ``dialect``, else ``options.dialect``, else the one whose parser made ``table``
    (``Table.dialect``), else the only installed dialect with Spark rules.  A ``SparkOptions``
    or mapping given in the ``dialect`` place (the older ``RowConverter(table, options)``
    form) is read as ``options``."""
    if isinstance(dialect, (SparkOptions, Mapping)):
        if options is not None:
            raise TypeError("options given twice: as the second argument and as options=")
        dialect, options = None, dialect
    opts = SparkOptions.of(options, **overrides)
    d, rules = resolve_rules(dialect if dialect is not None else opts.dialect or table.dialect)
    return opts, d, rules


def column_rules(table: Table, options: SparkOptions, rules: SparkRules) -> list[ColumnRule]:
    """The ``ColumnRule`` of every column of ``table``, in ordinal order."""
    return [rules.rule(col, options, table) for col in table.columns]


def field_metadata(column: Column, rule: ColumnRule, dialect: str) -> dict[str, Any]:
    """The source facts of ``column`` as Spark field metadata: every non-null
    ``information_schema``-named field of the model (``column_type``, ``data_type``,
    ``character_set_name``, ``collation_name``, ``enum_values``/``set_values``, ``unsigned``,
    ``numeric_precision``, ``datetime_precision``, ``column_default``, ...), ``comment``
    (the key Spark itself shows as a column comment), ``dialect`` and ``raw_rule`` (the rule's
    label)."""
    md: dict[str, Any] = {}
    for key, value in column.to_json().items():
        if key in _SKIP or value is None:
            continue
        md[key] = value
    md["dialect"] = dialect
    md["raw_rule"] = rule.label
    return md


def build_fields(table: Table, rules: list[ColumnRule], dialect: str) -> list[StructField]:
    fields = []
    for col, rule in zip(table.columns, rules):
        nullable = col.nullable or rule.produces_null
        fields.append(StructField(col.name, rule.spark_type, nullable, field_metadata(col, rule, dialect)))
    return fields


def struct_type(table: Table, dialect: "str | Dialect | None" = None, *,
                options: "SparkOptions | Mapping[str, Any] | None" = None, **overrides: Any) -> StructType:
    """The Spark schema of ``table``: one ``StructField`` per column in ordinal order, typed by
    the dialect's mapping (docs/spark.md), with the column's facts as field metadata
    (``field_metadata``).

    A field is nullable when the column is, and also when the mapping turns some non-null raw
    values into null (zero dates under ``invalid_date_handling="null"``, MySQL's zero
    ``TIMESTAMP``).  ``dialect``: its name (``"mysql"``) or ``Dialect``; ``None`` picks the
    dialect whose parser made ``table``, else the only installed dialect with Spark rules
    (``resolve_for``).  ``options`` / ``overrides``: ``SparkOptions`` fields
    (``decimal_handling="string"``, ...).  The same signature as ``RowConverter``.  Raises
    ``TypeError`` for an unknown option or an unnamed dialect when several are installed and
    the table does not know its own, ``ValueError`` for a bad option value or a column type
    the dialect cannot map, ``DialectNotFound``."""
    opts, d, rules = resolve_for(table, dialect, options, overrides)
    return StructType(build_fields(table, column_rules(table, opts, rules), d.name))
