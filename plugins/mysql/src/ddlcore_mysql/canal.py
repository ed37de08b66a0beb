"""Canal's flat messages and TiCDC's canal-json for ``ddlcore capture canal``: one reader, two
flavours, plugged into the Debezium capture's machinery (``ddlcore.debezium_capture``: order,
checkpoint, duplicates, losses, quarantine) as its connector.

Owns: what one message is (``parse``: a DDL, or one record per row of ``data``), the order of
the records, and each value in ddlcore's raw form by the DDL-derived column type, with the
message's ``mysqlType`` checked against the history's column (drift).

The formats:

* **Canal** (``FlatMessage``, github.com/alibaba/canal ``protocol/.../FlatMessage.java``, built by
  ``connector/core/.../producer/MQMessageUtils.java``): ``isDdl`` + ``sql`` the DDL; ``data`` the
  rows (after images; the before images of a ``DELETE``); ``old`` for an ``UPDATE`` holds only the
  columns the update changed (``column.getUpdated()``), so the before image is ``data`` overlaid
  with ``old``.  Values are text (``parse/.../dbsync/LogEventConvert.java``): integers (unsigned
  already made positive), ``BIT`` and ``ENUM`` / ``SET`` as numbers (index / bitmask), decimals in
  plain notation, temporal values as the server's text (``TIMESTAMP`` in the server's zone),
  binary columns as ISO-8859-1 text (one character per byte).
* **TiCDC canal-json** (github.com/pingcap/tiflow ``pkg/sink/codec/canal/canal_json_message.go``):
  the same fields; ``old`` holds the whole before image; with ``enable-tidb-extension`` each
  message has ``_tidb.commitTs`` and ``TIDB_WATERMARK`` messages (``_tidb.watermarkTs``, sent to
  every partition) say that everything at or below it was sent to that partition (``release``
  holds rows above the lowest watermark of the partitions read); the DDL is TiDB's (the ``tidb``
  flavour of the MySQL parser).

**Order.** Canal: the order of the messages; from Kafka their offsets (one Kafka partition: Canal
sends DDL to partition 0 and may hash rows to others — read one partition, or several only with a
total order, which Canal does not give).  TiCDC with the extension: by ``commitTs``, then what the
record is (``order_key``); a record at or below the last one written is a redelivery (the
capture's duplicate rule).
Records ordered by arrival only (``total_order`` false) from a second Kafka partition stop the
capture.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import json
import struct
import zlib
from typing import Any, Callable

from ddlcore.debezium import DebeziumSettings, FieldSchema, Record
from ddlcore.model import Column, TableId, casefold_key

from .binlog_values import Tagged, canonical_fraction
from .debezium_values import set_mask
from .tidb_capture import TIDB_PARSER_OPTIONS

__all__ = ["CanalReader", "canal_value", "time_zone"]

_OPS = {"INSERT": "c", "UPDATE": "u", "DELETE": "d", "TRUNCATE": "t"}
#: mysqlType base names that differ from the model's data_type
_ALIASES = {"integer": "int", "bool": "tinyint", "boolean": "tinyint", "numeric": "decimal", "real": "double",
            "var_string": "varchar", "geomcollection": "geometrycollection"}


def _int(text: str, col: Column) -> int:
    return int(text)


def _bytes(text: str, col: Column) -> bytes:
    return text.encode("latin-1")  # Canal/TiCDC write bytes as ISO-8859-1 text


def _enum(text: str, col: Column) -> int:
    if text.isdigit():
        return int(text)
    if text == "":
        return 0
    labels = [x.lower() for x in col.enum_values or ()]
    try:
        return labels.index(text.lower()) + 1
    except ValueError:
        raise ValueError(f"{text!r} is not a label of {col.column_type}") from None


def _set(text: str, col: Column) -> int:
    return int(text) if text.isdigit() else set_mask(text, col)


def _decimal(text: str, col: Column) -> decimal.Decimal:
    try:
        return decimal.Decimal(text)
    except decimal.InvalidOperation:
        raise ValueError(f"{text!r} is not a decimal") from None


def _float(text: str, col: Column) -> float:
    v = float(text)
    return struct.unpack("<f", struct.pack("<f", v))[0] if col.data_type.lower() == "float" else v


_TEXT = ("char", "varchar", "tinytext", "text", "mediumtext", "longtext", "inet4", "inet6", "uuid")
_BLOB = ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "geometry", "point", "linestring",
         "polygon", "multipoint", "multilinestring", "multipolygon", "geometrycollection")
DECODERS: dict[str, Callable[[str, Column], Any]] = {
    **{t: _int for t in ("tinyint", "smallint", "mediumint", "int", "bigint", "year", "bit")},
    "decimal": _decimal, "float": _float, "double": _float,
    **{t: (lambda t, c: t) for t in _TEXT}, **{t: _bytes for t in _BLOB}, "enum": _enum, "set": _set,
    "date": lambda t, c: Tagged("$date", t), "datetime": lambda t, c: Tagged("$datetime", canonical_fraction(t)),
    "time": lambda t, c: Tagged("$time", canonical_fraction(t)), "json": lambda t, c: Tagged("$json", t),
}


def canal_value(text: str | None, col: Column, zone: _dt.tzinfo | None = None) -> Any:
    """The raw value of one Canal / TiCDC value text for ``col`` (module docstring); a
    ``TIMESTAMP`` is converted from ``zone`` to UTC.  Raises ``ValueError`` when it does not fit."""
    if text is None:
        return None
    if not isinstance(text, str):
        text = str(text)
    t = col.data_type.lower()
    if t == "timestamp":
        if zone is None or text.startswith("0000-00-00"):
            return Tagged("$datetime", canonical_fraction(text))
        head, dot, frac = text.partition(".")
        local = _dt.datetime.strptime(head, "%Y-%m-%d %H:%M:%S").replace(tzinfo=zone)
        utc = local.astimezone(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        return Tagged("$datetime", canonical_fraction(utc + (dot + frac if dot else "")))
    fn = DECODERS.get(t)
    return text if fn is None else fn(text, col)


def time_zone(name: str) -> _dt.tzinfo | None:
    """``UTC`` (``None``: no conversion), ``+hh:mm`` / ``-hh:mm``, or an IANA zone name.  Raises
    ``ValueError`` for anything else."""
    if name.upper() in ("UTC", "Z", "+00:00"):
        return None
    if name[:1] in "+-" and ":" in name:
        h, m = name[1:].split(":")
        return _dt.timezone((-1 if name[0] == "-" else 1) * _dt.timedelta(hours=int(h), minutes=int(m)))
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"--time-zone {name!r}: not UTC, +hh:mm or a zone name such as Asia/Shanghai") from None


def _base_type(mysql_type: str) -> str:
    t = mysql_type.lower().split("(")[0].split()[0] if mysql_type else ""
    return _ALIASES.get(t, t)


class CanalReader:
    """The connector of ``ddlcore capture canal`` (``flavor`` ``canal`` or ``ticdc``)."""

    name = "canal"
    source_connectors = ()
    dialect = "mysql"
    system_databases = ("mysql", "information_schema", "performance_schema", "sys", "metrics_schema")
    tool = "ddlcore capture canal"

    def __init__(self, flavor: str = "canal", time_zone: _dt.tzinfo | None = None):
        if flavor not in ("canal", "ticdc"):
            raise ValueError(f"flavor {flavor!r}: canal or ticdc")
        self.kind = flavor
        self.zone = time_zone
        self.default_flavor = "tidb" if flavor == "ticdc" else "mysql"
        self._n = 0
        self._at: tuple[str, int, int] | None = None  # the Kafka message being parsed
        self._partitions: set[tuple[str, int]] = set()
        self._marks: dict[tuple[str, int], int] = {}  # the last TIDB_WATERMARK of each partition
        self._held: list[tuple[str, Record]] = []

    def flavor(self, source: dict[str, Any]) -> str | None:
        return self.default_flavor

    def parser_options(self, flavor: str | None) -> dict[str, Any]:
        return dict(TIDB_PARSER_OPTIONS) if flavor == "tidb" else {"flavor": flavor or "mysql"}

    # -- messages -----------------------------------------------------------------------------

    def parse(self, value: Any) -> list[Record]:
        """The records of one message: one ``ddl``, or one ``row`` per entry of ``data``; a
        ``TIDB_WATERMARK`` or a tombstone is skipped.  Raises ``ValueError`` for a message that is
        not a flat message."""
        if value is None:
            return [Record("skip", note="tombstone")]
        if not isinstance(value, dict) or "isDdl" not in value or "type" not in value:
            raise ValueError("not a Canal flat message / canal-json message (no isDdl and type)")
        self._n += 1
        kind = value["type"]
        tidb = value.get("_tidb") or {}
        source = {"db": value.get("database") or None, "table": value.get("table") or None,
                  "commit_ts": tidb.get("commitTs"), "n": self._n, "id": value.get("id")}
        if self._at is not None:
            source["kafka_at"] = self._at
            if tidb.get("commitTs") is None or self.kind != "ticdc":  # ordered by arrival: the offset
                source.update(offset=self._at[2], kafka=f"{self._at[0]}[{self._at[1]}]@{self._at[2]}")
        ts = value.get("es")
        if kind == "TIDB_WATERMARK":
            if self._at is not None and tidb.get("watermarkTs") is not None:
                self._marks[self._at[:2]] = int(tidb["watermarkTs"])
            return [Record("skip", note="TiCDC watermark")]
        if value["isDdl"]:
            return [Record("ddl", source=source, ts_ms=ts, ddl=value.get("sql") or "", database=source["db"])]
        op = _OPS.get(kind)
        if op is None:
            raise ValueError(f"unknown message type {kind!r}")
        types = {k: FieldSchema(str(v)) for k, v in (value.get("mysqlType") or {}).items()}
        if op == "t":
            return [Record("row", "t", source, ts_ms=ts)]
        data, old = value.get("data") or [], value.get("old") or []
        out = []
        for i, row in enumerate(data):
            src = {**source, "row": i}
            if op == "u":
                prev = old[i] if i < len(old) else {}
                before = dict(prev) if self.kind == "ticdc" else {**row, **prev}
                out.append(Record("row", "u", src, before, row, types, ts))
            elif op == "d":
                out.append(Record("row", "d", src, row, None, types, ts))
            else:
                out.append(Record("row", "c", src, None, row, types, ts))
        return out

    def order_key(self, record: Record, arrival: int) -> tuple:
        """Canal: ``(message number, row)``, from Kafka ``(offset, row)`` (``kafka_message``).  TiCDC
        with ``commitTs``: ``(commitTs, 0 for DDL / 1 for rows, database, table, row index, CRC-32
        of the row)`` — what a message is, not when it arrived, so a redelivered message has the
        key of its first delivery (TiCDC keeps one change per row key and transaction: two equal
        keys are one change)."""
        src = record.source
        if self.kind == "ticdc" and src.get("commit_ts") is not None:
            row = record.after if record.after is not None else record.before
            digest = zlib.crc32(json.dumps(row, sort_keys=True).encode()) if row is not None else 0
            return (int(src["commit_ts"]), 0 if record.kind == "ddl" else 1, src.get("db") or "",
                    src.get("table") or "", src.get("row") or 0, record.op or "", digest)
        if src.get("offset") is not None:
            return (src["offset"], src.get("row") or 0)
        return (src.get("n") or 0, src.get("row") or 0)

    def kafka_message(self, topic: str, partition: int, offset: int) -> None:
        """Kafka only: the message ``parse`` reads next is ``topic[partition]@offset``.  A record
        ordered by arrival (``total_order`` false) takes the offset as its order and position (one
        partition only: the capture refuses a second), so a resumed capture drops what it wrote
        before by it; a ``TIDB_WATERMARK`` is that partition's watermark (``release``)."""
        self._at = (topic, partition, offset)
        self._partitions.add((topic, partition))

    def release(self, records: list[tuple[str, Record]]) -> tuple[list[tuple[str, Record]], dict]:
        """Kafka, TiCDC: of the records held so far and ``records``, those that may be written —
        every one with a ``commitTs`` at or below the lowest watermark of the partitions read
        (TiCDC sends a watermark to every partition once it has sent everything below it there,
        so nothing lower can still come) — and ``{(topic, partition): offset}`` of the first
        record held in each partition (its offset must not be committed).  Until every partition
        read has sent a watermark (or without the extension) nothing is held."""
        pending, self._held = self._held + records, []
        known = [self._marks.get(p) for p in self._partitions]
        if not known or None in known:
            return pending, {}
        bound = min(known)
        ready = []
        first: dict[tuple[str, int], int] = {}
        for where, rec in pending:
            ts, at = rec.source.get("commit_ts"), rec.source.get("kafka_at")
            if ts is not None and at is not None and int(ts) > bound:
                self._held.append((where, rec))
                first[at[:2]] = min(at[2], first.get(at[:2], at[2]))
            else:
                ready.append((where, rec))
        return ready, first

    #: what to do when ``total_order`` refuses a second Kafka partition
    partition_hint = ("read one partition (TiCDC: a topic of one partition, or a dispatcher to one partition) or "
                      "enable TiCDC's enable-tidb-extension=true (_tidb.commitTs orders every partition)")

    def total_order(self, record: Record) -> bool:
        """Whether ``record``'s order key orders it against records of other Kafka partitions:
        only TiCDC's with ``_tidb.commitTs`` (Canal's and TiCDC's without the extension are
        ordered by arrival, which holds within one partition only)."""
        return self.kind == "ticdc" and record.source.get("commit_ts") is not None

    def position(self, record: Record) -> str:
        src = record.source
        if src.get("commit_ts") is not None:
            return str(src["commit_ts"])
        if src.get("kafka") is not None:
            return src["kafka"] + (f"#{src['row']}" if src.get("row") else "")
        return f"message {src.get('n')}" + (f"#{src['row']}" if src.get("row") else "")

    def table_id(self, record: Record) -> TableId:
        return TableId(record.source.get("db"), None, record.source.get("table") or "")

    def message_ddl(self, record: Record) -> None:
        return None

    def decode_row(self, table: Any, values: dict[str, Any], fields: dict[str, FieldSchema],
                   settings: DebeziumSettings, image: str = "after") -> tuple[list[Any], list[tuple[str, Any]]]:
        """Raw values in ordinal order (no losses: the values are the server's text).  Raises
        ``ValueError`` for drift — columns or ``mysqlType`` that differ from the history's — and
        for a value that does not fit its column."""
        by_key = {casefold_key(k): k for k in values}
        cols = table.columns
        if len(by_key) != len(cols) or any(casefold_key(c.name) not in by_key for c in cols):
            raise ValueError(f"drift: the message has columns [{', '.join(values)}], the history "
                             f"[{', '.join(c.name for c in cols)}]")
        out = []
        for col in cols:
            name = by_key[casefold_key(col.name)]
            declared = fields.get(name)
            if declared is not None and declared.type and _base_type(declared.type) != col.data_type.lower():
                raise ValueError(f"drift: column {col.name} is {declared.type} in the message, {col.column_type} "
                                 f"in the history")
            try:
                out.append(canal_value(values[name], col, self.zone))
            except (ValueError, ArithmeticError) as exc:
                raise ValueError(f"column {col.name} ({col.column_type}): {exc}") from None
        return out, []
