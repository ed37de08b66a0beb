"""The history's typed schema changes, as a sink receives them.

Owns: turning two consecutive versions of one table (``ddlcore.model.Table``, ``None`` where
the table does not exist) into the changes between them, by column identity
(``Column.column_id``: a rename is a rename, ``DROP`` + ``ADD`` a drop and an add).  The names
follow Flink CDC 3's schema change events (``CreateTableEvent``, ``AddColumnEvent``,
``DropColumnEvent``, ``RenameColumnEvent``, ``AlterColumnTypeEvent``, ``DropTableEvent``; a
table rename as ``TableRenamed``).  Must not know: sinks, Spark.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Column, Table, TableId

__all__ = ["SchemaChange", "TableCreated", "TableDropped", "TableRenamed", "ColumnAdded", "ColumnDropped",
           "ColumnRenamed", "ColumnRetyped", "schema_changes"]


@dataclass(frozen=True)
class SchemaChange:
    """One change of one table at ``seq`` (the DDL event that made the new version)."""

    table_id: TableId
    seq: int


@dataclass(frozen=True)
class TableCreated(SchemaChange):
    table: Table


@dataclass(frozen=True)
class TableDropped(SchemaChange):
    pass


@dataclass(frozen=True)
class TableRenamed(SchemaChange):
    previous_id: TableId


@dataclass(frozen=True)
class ColumnAdded(SchemaChange):
    column: Column
    after: str | None  # the column it follows (None: first)


@dataclass(frozen=True)
class ColumnDropped(SchemaChange):
    column: Column


@dataclass(frozen=True)
class ColumnRenamed(SchemaChange):
    column_id: int
    previous_name: str
    name: str


@dataclass(frozen=True)
class ColumnRetyped(SchemaChange):
    """The column's native type changed (``column_type`` before and after)."""

    column_id: int
    name: str
    previous_type: str
    column_type: str


def schema_changes(before: Table | None, after: Table | None, seq: int) -> list[SchemaChange]:
    """The changes from ``before`` to ``after`` (consecutive versions of one table; either
    ``None`` where it did not exist), in this order: table created / renamed / dropped, columns
    dropped, renamed, retyped, added.  Columns are matched by ``column_id`` (tables without ids
    get them by ``Table.identified``)."""
    if before is None and after is None:
        return []
    if after is None:
        return [TableDropped(before.id, seq)]  # type: ignore[union-attr]
    after = after.identified()
    if before is None:
        return [TableCreated(after.id, seq, after)]
    before = before.identified()
    out: list[SchemaChange] = []
    if before.id != after.id:
        out.append(TableRenamed(after.id, seq, before.id))
    new = {c.column_id: c for c in after.columns}
    old = {c.column_id: c for c in before.columns}
    out += [ColumnDropped(after.id, seq, c) for i, c in old.items() if i not in new]
    for i, c in new.items():
        o = old.get(i)
        if o is not None and o.name != c.name:
            out.append(ColumnRenamed(after.id, seq, i, o.name, c.name))
    for i, c in new.items():
        o = old.get(i)
        if o is not None and o.column_type != c.column_type:
            out.append(ColumnRetyped(after.id, seq, i, c.name, o.column_type, c.column_type))
    prev = None
    for c in after.columns:
        if c.column_id not in old:
            out.append(ColumnAdded(after.id, seq, c, prev))
        prev = c.name
    return out
