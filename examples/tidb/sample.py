"""Write a small sample of TiDB's secondary binlog for ``ddlcore capture tidb --from-file``.

The file holds what TiDB Binlog's Drainer sends to Kafka, one ``Binlog`` protobuf message per
transaction, each preceded by its length as a varint (protobuf's delimited framing:
``ddlcore_mysql.tidb_capture.write_delimited``).  The messages are filled as Drainer's
translator fills them (docs/capture.md, "The message and what is written"): signed integers in
``int64_value``, unsigned ones and ENUM indexes in ``uint64_value``, DECIMAL, DATETIME and
text in ``string_value``; ``commit_ts`` is a TSO whose physical part (``commit_ts >> 18``) is
the commit time in milliseconds.

The transactions: ``CREATE DATABASE shop``, ``CREATE TABLE shop.orders``, three inserts in one
transaction, an update, ``ALTER TABLE ... ADD COLUMN note``, an insert with the new column and a
delete — seven messages, committed one second apart from 2025-11-24 16:00:00 UTC.

    python examples/tidb/sample.py tidb-sample.binlog
    ddlcore capture tidb --from-file tidb-sample.binlog --out tidb-capture
    ddlcore run --changelog tidb-capture --out tidb-out

Needs ``ddlcore-mysql[tidb]`` (protobuf).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ddlcore_mysql.tidb_capture import binlog_pb2, write_delimited

DATABASE = "shop"
TABLE = "orders"
#: physical time of the first transaction (milliseconds since the epoch: 2025-11-24 16:00:00 UTC)
FIRST_COMMIT_MS = 1_764_000_000_000
#: (name, Drainer's ``mysql_type``, the ``Column`` field its values travel in)
COLUMNS = [("id", "bigint", "uint64_value"), ("status", "enum", "uint64_value"),
           ("total", "decimal", "string_value"), ("placed", "datetime", "string_value")]
CREATE_TABLE = (f"CREATE TABLE `{TABLE}` (`id` bigint unsigned NOT NULL, "
                "`status` enum('new','paid','shipped') NOT NULL DEFAULT 'new', "
                "`total` decimal(10,2) NOT NULL, `placed` datetime NOT NULL, PRIMARY KEY (`id`))")
ADD_NOTE = f"ALTER TABLE `{TABLE}` ADD COLUMN `note` varchar(40) DEFAULT NULL"
NOTE = ("note", "varchar", "string_value")


class SampleWriter:
    """Builds the messages in commit order; ``commit_ts`` of the i-th is one second after the
    (i-1)-th, with a small logical part."""

    def __init__(self) -> None:
        self.pb = binlog_pb2()
        self.messages: list[Any] = []

    def _next(self, kind: Any) -> Any:
        i = len(self.messages)
        message = self.pb.Binlog(type=kind, commit_ts=((FIRST_COMMIT_MS + i * 1000) << 18) | 1)
        self.messages.append(message)
        return message

    def ddl(self, query: str, schema: str = DATABASE, table: str = "") -> None:
        """One DDL transaction; ``schema`` is the session's database (empty: none)."""
        message = self._next(self.pb.DDL)
        message.ddl_data.schema_name, message.ddl_data.table_name = schema, table
        message.ddl_data.ddl_query = query.encode("utf-8")

    def dml(self, columns: list[tuple[str, str, str]], *changes: tuple[str, list | None, list | None]) -> None:
        """One transaction of row changes ``(op, before, after)`` on ``shop.orders``; ``op`` is
        ``c``, ``u`` or ``d``, the images are lists of values in ``columns``' order (``None``:
        SQL NULL)."""
        table = self._next(self.pb.DML).dml_data.tables.add()
        table.schema_name, table.table_name = DATABASE, TABLE
        for k, (name, mysql_type, _field) in enumerate(columns):
            info = table.column_info.add()
            info.name, info.mysql_type, info.is_primary_key = name, mysql_type, k == 0
        key = table.unique_keys.add()
        key.name = "PRIMARY"
        key.column_names.append(columns[0][0])
        kinds = {"c": self.pb.Insert, "u": self.pb.Update, "d": self.pb.Delete}
        for op, before, after in changes:
            mutation = table.mutations.add()
            mutation.type = kinds[op]
            mutation.row.columns.extend(self._columns(columns, after if op in ("c", "u") else before))
            if op == "u":
                mutation.change_row.columns.extend(self._columns(columns, before))

    def _columns(self, columns: list[tuple[str, str, str]], values: list) -> list[Any]:
        out = []
        for (_name, _type, field), value in zip(columns, values, strict=True):
            column = self.pb.Column()
            if value is None:
                column.is_null = True
            else:
                setattr(column, field, value)
            out.append(column)
        return out


def build() -> list[Any]:
    """The sample's ``Binlog`` messages in commit order."""
    w = SampleWriter()
    w.ddl(f"CREATE DATABASE `{DATABASE}`", schema="")
    w.ddl(CREATE_TABLE, table=TABLE)
    w.dml(COLUMNS, ("c", None, [1, 1, "12.50", "2025-11-24 16:00:02"]),
          ("c", None, [2, 1, "7.00", "2025-11-24 16:00:02"]),
          ("c", None, [3, 2, "99.99", "2025-11-24 16:00:02"]))
    w.dml(COLUMNS, ("u", [1, 1, "12.50", "2025-11-24 16:00:02"], [1, 2, "12.50", "2025-11-24 16:00:02"]))
    w.ddl(ADD_NOTE, table=TABLE)
    with_note = COLUMNS + [NOTE]
    w.dml(with_note, ("c", None, [4, 1, "3.20", "2025-11-24 16:00:05", "gift wrap"]))
    w.dml(with_note, ("d", [2, 1, "7.00", "2025-11-24 16:00:02", None], None))
    return w.messages


def write_sample(path: Path) -> int:
    """Write the sample to ``path``; returns the number of messages."""
    messages = build()
    with open(path, "wb") as fh:
        for message in messages:
            write_delimited(fh, message)
    return len(messages)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", type=Path, help="the file to write (delimited Binlog messages)")
    args = ap.parse_args(argv)
    n = write_sample(args.path)
    print(f"wrote {args.path}: {n} Binlog messages ({args.path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
