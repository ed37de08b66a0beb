"""Output sinks of ``ddlcore run``: where converted row events go, and how the schema history's
typed changes reach the output (as Flink CDC 3's ``MetadataApplier`` receives them).

Owns: the ``Sink`` interface (``ddlcore.sinks.base``), the typed schema changes a sink receives
(``ddlcore.sinks.changes``), and two implementations: ``parquet`` (one directory per table
version, the layout Spark writes: docs/pipeline.md) and ``iceberg`` (an Apache Iceberg changes
table per source table, committed from those same files: docs/tables.md).  Must not know: any
dialect, how rows are converted.
"""

from .base import Sink, make_sink
from .changes import (ColumnAdded, ColumnDropped, ColumnRenamed, ColumnRetyped, SchemaChange, TableCreated,
                      TableDropped, TableRenamed, schema_changes)

__all__ = ["Sink", "make_sink", "SchemaChange", "ColumnAdded", "ColumnDropped", "ColumnRenamed",
           "ColumnRetyped", "TableCreated", "TableDropped", "TableRenamed", "schema_changes"]
