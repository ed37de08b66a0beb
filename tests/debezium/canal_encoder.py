"""A test-only encoder of Canal flat messages and TiCDC canal-json, written from their documented
formats (not from ``ddlcore_mysql.canal``): a change log of ``ddlcore capture mysql`` (raw values
of a real MariaDB workload) turned into the messages either tool would have sent for it.

* **Canal** (github.com/alibaba/canal: ``protocol/.../FlatMessage.java``, built by
  ``connector/core/.../producer/MQMessageUtils.java`` ``messageConverter``): one message per
  binlog row event (all its rows in ``data``); ``old`` holds, per row, only the columns the update
  changed; ``mysqlType`` the full column type, ``sqlType`` the JDBC type code; ``pkNames``; ``es``
  the event's time, ``ts`` when Canal sent it; a DDL is ``isDdl`` with ``sql`` and type ``QUERY``
  (or ``CREATE`` / ``ALTER`` ...).  Values as ``LogEventConvert`` writes them: text; unsigned
  values positive; ``BIT`` a number; ``ENUM`` / ``SET`` their index / bitmask; binary columns as
  ISO-8859-1 text.
* **TiCDC canal-json** (docs.pingcap.com "TiCDC Canal-JSON Protocol"; tiflow
  ``pkg/sink/codec/canal/canal_json_message.go``): one message per row; ``old`` the whole before
  image; ``mysqlType`` without type parameters (``decimal``, ``enum``); with
  ``enable-tidb-extension`` ``_tidb.commitTs`` (the transaction's TSO, ``physical_ms << 18 |
  logical``) and ``TIDB_WATERMARK`` messages (``_tidb.watermarkTs``) sent to every partition, as
  are DDL messages.
"""

from __future__ import annotations

import datetime as dt
import decimal
import zlib
from typing import Any, Iterator

from ddlcore import raw
from ddlcore.history import SchemaHistory
from ddlcore.model import TableId

#: java.sql.Types codes Canal writes in ``sqlType`` (``JdbcTypeUtil``), by the model's data_type
SQL_TYPES = {"tinyint": -6, "smallint": 5, "mediumint": 4, "int": 4, "bigint": -5, "decimal": 3, "float": 7,
             "double": 8, "char": 1, "varchar": 12, "text": 2005, "binary": -2, "varbinary": -3, "blob": 2004,
             "date": 91, "datetime": 93, "timestamp": 93, "time": 92, "year": 12, "bit": -7, "enum": 4, "set": -7}
_BINARY = ("varbinary", "binary", "blob", "tinyblob", "mediumblob", "longblob", "geometry")


def canal_text(value: Any, col: Any) -> str | None:
    """A raw value of ``ddlcore capture mysql`` as Canal's ``LogEventConvert`` writes it."""
    if value is None:
        return None
    t = col.data_type
    if t in _BINARY:
        return value.decode("latin-1")
    if isinstance(value, bytes):  # text columns (utf8mb4) and BIT (a number)
        return str(int.from_bytes(value, "big")) if t == "bit" else value.decode("utf-8")
    if t == "bigint" and col.unsigned and value < 0:
        return str(value + (1 << 64))
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, dt.datetime):
        return raw.datetime_text(value)
    if isinstance(value, dt.timedelta):
        return raw.time_text(value)
    return value.text if hasattr(value, "text") else str(value)


def message(kind: str, data: list | None, old: list | None = None, mysql_type: dict | None = None,
            sql: str = "", ddl: bool = False, database: str = "shop", table: str = "t", es: int = 1700000000000,
            pk: list | None = None) -> dict:
    """One flat message (Canal's field order)."""
    return {"id": 3, "database": database, "table": table, "pkNames": pk, "isDdl": ddl, "type": kind, "es": es,
            "ts": es + 100, "sql": sql, "sqlType": None if mysql_type is None else
            {k: SQL_TYPES.get(v.split("(")[0].split()[0], 12) for k, v in mysql_type.items()},
            "mysqlType": mysql_type, "data": data, "old": old}


def _changes(events) -> Iterator[tuple[Any, Any]]:
    """``(event, table in force)`` of a change log's ddl and row events (``None`` for a DDL)."""
    hist = SchemaHistory.open(":memory:", dialect="mysql")
    try:
        for ev in events:
            if ev.op in ("source", "ddl"):
                hist.record(ev.to_json())
                if ev.op == "ddl":
                    yield ev, None
                continue
            yield ev, hist.table_at(TableId(ev.database, None, ev.table), ev.seq)
    finally:
        hist.close()


def _images(ev, table) -> tuple[dict | None, dict | None]:
    def image(vals):
        return None if vals is None else {c.name: canal_text(raw.decode_json(v), c)
                                          for c, v in zip(table.columns, vals)}

    return image(ev.before), image(ev.after)


_KINDS = {"c": "INSERT", "u": "UPDATE", "d": "DELETE"}


def canal_messages(events) -> list[dict]:
    """Canal flat messages of a change log: one per binlog row event (rows of one ``position``)."""
    out: list[dict] = []
    last_event = None
    for ev, table in _changes(events):
        if table is None:
            out.append(message("QUERY", None, sql=ev.ddl, ddl=True, database=ev.database or "", table="",
                               es=ev.ts or 0))
            last_event = None
            continue
        before, after = _images(ev, table)
        event = (ev.position.split("#")[0], ev.op, ev.table)
        if event != last_event:
            types = {c.name: c.column_type for c in table.columns}
            out.append(message(_KINDS[ev.op], [], [] if ev.op == "u" else None, types, database=ev.database,
                               table=ev.table, es=ev.ts or 0, pk=list(table.primary_key)))
            last_event = event
        out[-1]["data"].append(before if ev.op == "d" else after)
        if ev.op == "u":
            out[-1]["old"].append({k: v for k, v in before.items() if after[k] != v})
    return out


def ticdc_messages(events, *, partitions: int = 1, watermark_every: int = 5) -> list[tuple[int, dict]]:
    """``(partition, message)`` of TiCDC canal-json with ``enable-tidb-extension``: rows hashed to
    a partition by primary key (TiCDC's ``index-value`` dispatcher), DDL and a watermark after
    every ``watermark_every`` transactions and at the end sent to every partition; ``commitTs``
    one per source transaction (``tx``), increasing."""
    out: list[tuple[int, dict]] = []
    ts, last_tx, txs = 0, object(), 0
    for ev, table in _changes(events):
        tx = ev.tx or ev.position
        if tx != last_tx or table is None:
            ts, last_tx, txs = ts + 1, tx, txs + 1
            if txs % watermark_every == 0:
                mark = message("TIDB_WATERMARK", None, database="", table="")
                mark["_tidb"] = {"watermarkTs": _tso(ts - 1)}
                out += [(p, mark) for p in range(partitions)]
        commit = _tso(ts)
        if table is None:
            m = message("QUERY", None, sql=ev.ddl, ddl=True, database=ev.database or "", table="", es=ev.ts or 0)
            m["_tidb"] = {"commitTs": commit}
            out += [(p, m) for p in range(partitions)]
            continue
        before, after = _images(ev, table)
        types = {c.name: c.data_type + (" unsigned" if c.unsigned else "") for c in table.columns}
        m = message(_KINDS[ev.op], [before if ev.op == "d" else after], [before] if ev.op == "u" else None, types,
                    database=ev.database, table=ev.table, es=ev.ts or 0, pk=list(table.primary_key))
        m["_tidb"] = {"commitTs": commit}
        key = (before or after)[table.primary_key[0]]
        out.append((zlib.crc32(str(key).encode()) % partitions, m))
    mark = message("TIDB_WATERMARK", None, database="", table="")
    mark["_tidb"] = {"watermarkTs": _tso(ts)}  # everything sent
    return out + [(p, mark) for p in range(partitions)]


def _tso(n: int) -> int:
    """The TSO of the ``n``-th transaction: ``physical_ms << 18 | logical``, the physical part
    one ms per transaction from 2023-11-14 (the change log's ``ts`` of a snapshot's DDL is the
    capture's time, later than the rows it precedes: not an order)."""
    return (1_700_000_000_000 + n) << 18
