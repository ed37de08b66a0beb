"""Spark: the schema and row converter of each table version (needs the ``spark`` extra).

Owns: ``struct_type(table)`` (``schema``), ``RowConverter`` (``convert``), the type-mapping
options (``options``) and the dialect-neutral conversion rules a dialect's type mapping is
made of (``rules``).  The raw-value encoding the converter reads lives in ``ddlcore.raw``
(no Spark needed).  Must not know: any dialect — its rules come from
``get_dialect(name).spark_rules()``.

Usage::

    from ddlcore.spark import struct_type, RowConverter
    schema = struct_type(table, dialect="mysql", decimal_handling="string")
    conv = RowConverter(table, "mysql", decimal_handling="string")  # the same arguments
    conv.convert([-1, 2, b"caf\\xe9"])                      # Python: a tuple
    df.select(*conv.columns("after"))                       # Spark: typed columns + _errors

The mapping of every native type is documented in docs/spark.md.
"""

from ..errors import RowConversionError
from ..raw import text_form, text_row
from .convert import ERROR_TYPE, ERRORS_TYPE, RAW_ARRAY_TYPE, RowConverter
from .options import BINARY_HANDLING, DECIMAL_HANDLING, SparkOption, SparkOptions
from .rules import ColumnRule, MappingRow, SparkRules
from .schema import field_metadata, struct_type

__all__ = [
    "struct_type", "RowConverter", "SparkOptions", "RowConversionError", "ColumnRule",
    "SparkRules", "MappingRow", "field_metadata", "text_form", "text_row", "RAW_ARRAY_TYPE",
    "ERROR_TYPE", "ERRORS_TYPE", "DECIMAL_HANDLING", "SparkOption",
    "BINARY_HANDLING", "mapping", "mapping_table",
]


def mapping(dialect: str | None = None) -> list[MappingRow]:
    """The documented type mapping of ``dialect`` (every native type → Spark type under the
    default options)."""
    from .schema import resolve_rules

    return resolve_rules(dialect)[1].mapping()


def mapping_table(dialect: str | None = None) -> str:
    """The type mapping of ``dialect`` as a Markdown table (the one in docs/spark.md)."""
    lines = ["| native type | Spark type | notes |", "|---|---|---|"]
    for row in mapping(dialect):
        lines.append(f"| `{row.native}` | `{row.spark}` | {row.notes} |".replace("|  |", "| |"))
    return "\n".join(lines)
