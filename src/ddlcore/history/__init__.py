"""Schema history: every table version by log position, persisted, recoverable at any
position without re-parsing.

Owns: ``SchemaHistory`` (record DDL events, query the model at any seq), its stores
(``SQLiteStore`` by default, ``MemoryStore`` for tests; ``HistoryStore`` is the interface a
backend plugin implements), table filters and version diffs.  Must not know: any dialect (the
parser comes from a plugin), Spark.

::

    from ddlcore.history import SchemaHistory
    with SchemaHistory.open("history.db", dialect="mysql") as h:
        h.record({"seq": 1, "position": "bin.000001:4", "database": "shop",
                  "ddl": "CREATE TABLE orders (id bigint PRIMARY KEY)"})
        h.tables_at(1)                 # Tables: the model just after seq 1
        h.table_at("shop.orders", 1)   # Table | None
        h.versions("shop.orders")      # [TableVersion, ...]
        h.diff("shop.orders", 1, 2)    # TableDiff

See docs/history.md.
"""

from .diff import ColumnChange, TableDiff, diff_tables
from .filters import TableFilter
from .history import (DdlEvent, HistoryError, SchemaChange, SchemaChangeEvent, SchemaHistory,
                      TableVersion)
from .sqlite import SQLiteStore
from .store import (ChangeRow, EventRow, HistoryStore, MemoryStore, ShadowRow, StoreConflict,
                    VersionRow, WriteBatch)

__all__ = [
    "SchemaHistory", "DdlEvent", "TableVersion", "SchemaChange", "SchemaChangeEvent",
    "HistoryError", "TableDiff", "ColumnChange", "diff_tables", "TableFilter",
    "HistoryStore", "MemoryStore", "SQLiteStore", "StoreConflict", "EventRow", "VersionRow",
    "ChangeRow", "ShadowRow", "WriteBatch",
]
