"""Debezium change events as ddlcore reads them: the envelope, shared by every connector.

Owns: recognising what one Kafka message value (JSON, as Kafka Connect's ``JsonConverter``
writes it) is — a row change (``op`` ``c``/``u``/``d``/``r``/``t``, or ``m`` a logical
decoding message), a schema change (the schema change topic, or a ``FileSchemaHistory``
record), a transaction metadata event, a tombstone — with or without its Connect schema
(``{"schema": ..., "payload": ...}`` or the payload alone), and the flattened form of the
``ExtractNewRecordState`` transformation when it kept the op (``add.fields=op,...``:
``__op``, ``__source_*``, ``__deleted``); the value settings of a connector
(``DebeziumSettings``); the connectors the plugins provide (``DebeziumConnector``, hook
``ddlcore_debezium_connectors``).
Must not know: any connector's value encodings or positions (the plugins'), Kafka, files.

References: Debezium documentation, "Debezium connector for MySQL" → "Data change events",
"Schema change topic", "Transaction metadata"; "New Record State Extraction"
(``ExtractNewRecordState``: ``add.fields``, ``delete.handling.mode=rewrite`` → ``__deleted``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Protocol

from .errors import CaptureError

__all__ = ["DebeziumError", "DebeziumSettings", "FieldSchema", "Loss", "Record", "DebeziumConnector", "NO_FIELDS",
           "parse_record", "field_schemas", "connectors", "connector_for", "SETTINGS", "ROW_OPS"]

#: Debezium's ops that carry rows (``m``: a PostgreSQL logical decoding message)
ROW_OPS = frozenset({"c", "u", "d", "r", "t", "m"})

#: the value settings ddlcore reads, their values (the first is Debezium's default)
SETTINGS: dict[str, tuple[str, ...]] = {
    "decimal.handling.mode": ("precise", "string", "double"),
    "bigint.unsigned.handling.mode": ("long", "precise"),
    "time.precision.mode": ("adaptive_time_microseconds", "adaptive", "connect", "isostring",
                            "microseconds", "nanoseconds"),
    "binary.handling.mode": ("bytes", "base64", "base64-url-safe", "hex"),
    "interval.handling.mode": ("numeric", "string"),
}


class DebeziumError(CaptureError):
    """A message ddlcore cannot read as a Debezium event (the text says where and why)."""


@dataclass(frozen=True)
class DebeziumSettings:
    """The connector's value settings (Debezium connector properties of the same names with
    ``.`` → ``_``).  A message with its schema says most of them itself (the field's logical
    type); without schemas these are how its values are read."""

    decimal_handling_mode: str = "precise"
    bigint_unsigned_handling_mode: str = "long"
    #: ``None``: the connector's own default (MySQL: ``adaptive_time_microseconds``, PostgreSQL: ``adaptive``)
    time_precision_mode: str | None = None
    binary_handling_mode: str = "bytes"
    interval_handling_mode: str = "numeric"

    def __post_init__(self) -> None:
        for name, allowed in SETTINGS.items():
            value = getattr(self, name.replace(".", "_"))
            if value not in allowed and not (value is None and name == "time.precision.mode"):
                raise ValueError(f"{name}={value!r}: one of {', '.join(allowed)}")

    @classmethod
    def of(cls, pairs: Iterable[tuple[str, str]]) -> "DebeziumSettings":
        """From ``(property, value)`` pairs (``decimal.handling.mode``, ...); raises ``ValueError``
        for an unknown property or value."""
        kw = {}
        for name, value in pairs:
            if name not in SETTINGS:
                raise ValueError(f"unknown Debezium setting {name!r} (known: {', '.join(SETTINGS)})")
            kw[name.replace(".", "_")] = value
        return cls(**kw)

    def to_json(self) -> dict[str, str]:
        return {name: getattr(self, name.replace(".", "_")) for name in SETTINGS}


@dataclass(frozen=True)
class Loss:
    """A value the producer made inexact: ``kind`` (one word; a loss is reported once per column
    and kind), ``reason`` (what was lost) and ``avoid`` (the connector setting that keeps it)."""

    kind: str
    reason: str
    avoid: str


@dataclass(frozen=True)
class FieldSchema:
    """One field of a Connect struct schema: ``type`` (``int32``, ``bytes``, ``string``,
    ``struct``, ...), ``name`` (the logical type, e.g. ``io.debezium.time.MicroTimestamp``,
    ``org.apache.kafka.connect.data.Decimal``) and ``parameters`` (``scale``, ``length``,
    ``allowed``)."""

    type: str
    name: str | None = None
    parameters: dict[str, Any] | None = None


def field_schemas(struct: dict[str, Any] | None) -> dict[str, FieldSchema]:
    """``{field name: FieldSchema}`` of a Connect ``struct`` schema (``{}`` for none)."""
    out: dict[str, FieldSchema] = {}
    for f in (struct or {}).get("fields") or ():
        if isinstance(f, dict) and "field" in f:
            out[f["field"]] = FieldSchema(str(f.get("type")), f.get("name"), f.get("parameters"))
    return out


#: the ``fields`` of a record whose message had no schema (shared: read-only)
NO_FIELDS: Mapping[str, FieldSchema] = MappingProxyType({})


@dataclass(slots=True)
class Record:
    """What one message is.  ``kind``: ``row`` (``op``, ``before`` / ``after`` as field → value
    dicts, ``fields`` their schemas when the message had one), ``ddl`` (``ddl`` text,
    ``database``, ``table_changes``), ``message`` (``op`` ``m``: ``prefix``, ``content``
    base64), ``skip`` (a tombstone or a transaction metadata event: ``note`` says which).
    ``source``: the ``source`` block (for a history record, its ``position`` block plus
    ``server`` name); ``ts_ms`` the event's commit time; ``tx`` ``transaction.id``.
    ``unwrapped``: the message was flattened by ``ExtractNewRecordState``."""

    kind: str
    op: str | None = None
    source: dict[str, Any] = field(default_factory=dict)
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    fields: dict[str, FieldSchema] = field(default_factory=dict)
    ts_ms: int | None = None
    tx: str | None = None
    ddl: str | None = None
    database: str | None = None
    table_changes: list[Any] | None = None
    prefix: str | None = None
    content: str | None = None
    note: str | None = None
    unwrapped: bool = False
    ddl_extra: dict[str, Any] | None = None


def _envelope(payload: dict[str, Any], schema: dict[str, Any] | None) -> Record:
    op = payload["op"]
    if op not in ROW_OPS:
        raise DebeziumError(f"unknown op {op!r}")
    fields: Mapping[str, FieldSchema] = NO_FIELDS
    if schema:
        fields = {}
        for part in schema.get("fields") or ():
            if isinstance(part, dict) and part.get("field") in ("before", "after"):
                fields.update(field_schemas(part))
    get = payload.get
    source = get("source") or {}
    # the transaction: PostgreSQL's xid, else the transaction metadata's id, else the GTID
    tx = source.get("txId")
    if tx is None:
        meta = get("transaction")
        tx = (meta.get("id") if meta else None) or source.get("gtid")
    ts = source.get("ts_ms") or get("ts_ms")  # the commit time; the event's own when the source has none
    rec = Record("row", op, source, get("before"), get("after"), fields, ts,
                 (tx if type(tx) is str else str(tx)) if tx is not None else None)
    if op == "m":
        msg = payload.get("message") or {}
        rec.kind, rec.prefix, rec.content = "message", msg.get("prefix"), msg.get("content")
    return rec


def _unwrapped(payload: dict[str, Any], schema: dict[str, Any] | None) -> Record:
    """``ExtractNewRecordState``'s flat row: ``__op`` (required: without it an update cannot be
    told from an insert), ``__source_<field>`` / ``__db`` / ``__table`` / ``__ts_ms``,
    ``__deleted`` (``delete.handling.mode=rewrite``: the row is the before image)."""
    op = payload.get("__op")
    if op not in ROW_OPS:
        raise DebeziumError("a flattened (ExtractNewRecordState) message without __op: configure "
                            "add.fields=op,source.file,source.pos,source.row,... so the op and position are kept")
    source: dict[str, Any] = {}
    values: dict[str, Any] = {}
    for k, v in payload.items():
        if k.startswith("__source_"):
            source[k[len("__source_"):]] = v
        elif k in ("__db", "__table", "__name", "__connector"):
            source.setdefault(k[2:], v)
        elif not k.startswith("__"):
            values[k] = v
    fields = {k: v for k, v in field_schemas(schema).items() if not k.startswith("__")}
    deleted = str(payload.get("__deleted", "false")).lower() == "true" or op == "d"
    ts = payload.get("__source_ts_ms", payload.get("__ts_ms"))
    if deleted:
        return Record("row", "d", source, values, None, fields, ts, unwrapped=True)
    return Record("row", op, source, None, values, fields, ts, unwrapped=True)


def parse_record(value: Any) -> Record:
    """What one JSON-decoded message value is (``Record``).  Raises ``DebeziumError`` (without
    the location: the caller adds it) when it is none of the forms in the module docstring."""
    if value is None:
        return Record("skip", note="tombstone")
    if not isinstance(value, dict):
        raise DebeziumError(f"a message value must be a JSON object, not {type(value).__name__}")
    schema = None
    if "payload" in value and "schema" in value and len(value) == 2:
        schema, value = value["schema"], value["payload"]
        if value is None:
            return Record("skip", note="tombstone")
        if not isinstance(value, dict):
            raise DebeziumError("the payload is not a JSON object")
    if "op" in value:
        return _envelope(value, schema)
    if "ddl" in value and ("tableChanges" in value or "databaseName" in value):
        if "position" in value:  # FileSchemaHistory / the schema history topic
            pos = dict(value.get("position") or {})
            pos.setdefault("server", (value.get("source") or {}).get("server"))
            ts = pos.get("ts_sec")
            return Record("ddl", source=pos, ts_ms=int(ts) * 1000 if ts is not None else None, ddl=value["ddl"],
                          database=value.get("databaseName") or None, table_changes=value.get("tableChanges"))
        src = value.get("source") or {}
        return Record("ddl", source=src, ts_ms=src.get("ts_ms"), ddl=value["ddl"],
                      database=value.get("databaseName") or None, table_changes=value.get("tableChanges"))
    if value.get("status") in ("BEGIN", "END") and "id" in value:
        return Record("skip", note="transaction metadata")
    if "__op" in value or "__deleted" in value:
        return _unwrapped(value, schema)
    raise DebeziumError("not a Debezium event: no op, ddl or transaction status (a flattened message needs "
                        "ExtractNewRecordState's add.fields=op,...)")


class DebeziumConnector(Protocol):
    """What a plugin provides for one Debezium connector (hook ``ddlcore_debezium_connectors``).

    * ``name``: ``--connector`` value (``mysql``); ``source_connectors``: the values of
      ``source.connector`` its messages carry (``mysql``, ``mariadb``); ``dialect``: the
      ddlcore dialect of its DDL.
    * ``flavor(source)`` and ``parser_options(flavor)``: the source event's flavor and the
      parser options the DDL is read with until a record changes them.
    * ``order_key(record, arrival)``: a tuple ordering every record of the stream (rows and
      DDL) as the source wrote them; ``position(record)``: the position text.
    * ``table_id(record)``: the ``TableId`` of a row record (the history's key).
    * ``message_ddl(record)``: for a logical decoding message (op ``m``) that carries DDL,
      the ``ddl`` event's fields (``ddl``, ``database``, and optional ``search_path``,
      ``catalog``); ``None`` for any other message (skipped with a warning).
    * optional ``total_order(record)``: whether the order key orders the record against
      records of other Kafka partitions (absent: always; binlog coordinates and LSNs do), and
      ``partition_hint``: what to configure when it does not (the capture refuses such records
      from a second partition).
    * optional, Kafka: ``kafka_message(topic, partition, offset)``: the position of the message
      parsed next (Canal: offsets are the order); ``release(records) -> (records, held)``: the
      ``(where, record)`` pairs that may be written now, the rest kept for a later batch, and
      ``{(topic, partition): offset}`` not to commit past (TiCDC's watermarks).
    * optional: ``schema_ddl(record, table)``: for a row whose table no DDL described (``table``
      ``None``) or described by the messages themselves, an object with ``statements`` (DDL
      recorded at the row's position first), ``warning`` and ``reason`` (added to the
      quarantine reason when nothing can be described); ``None`` to leave the row as it is
      (PostgreSQL without ddlcore's trigger: ``ddlcore_postgres.debezium_schema``).
    * ``decode_row(table, values, fields, settings, image)``: ``(raw values in ordinal order,
      losses [(column name, loss)])`` of the ``before`` or ``after`` image; raises
      ``ValueError`` naming the column for a value that does not fit.
    * optional ``row_encoder(table, settings)``: ``encode(values, fields, image)`` giving what
      ``decode_row`` gives with the values already encoded for the change log
      (``ddlcore.raw.encode_row``), for rows of one table version (the capture keeps it until
      the next DDL: decoders chosen once per column).  Absent: ``decode_row`` then encoding.
    """

    name: str
    source_connectors: tuple[str, ...]
    dialect: str

    def flavor(self, source: dict[str, Any]) -> str | None: ...

    def parser_options(self, flavor: str | None) -> dict[str, Any]: ...

    def order_key(self, record: Record, arrival: int) -> tuple: ...

    def position(self, record: Record) -> str: ...

    def table_id(self, record: Record) -> Any: ...

    def message_ddl(self, record: Record) -> dict[str, Any] | None: ...

    def decode_row(self, table: Any, values: dict[str, Any], fields: dict[str, FieldSchema],
                   settings: DebeziumSettings, image: str) -> tuple[list[Any], list[tuple[str, Any]]]: ...


def connectors() -> dict[str, DebeziumConnector]:
    """Every installed connector by ``name`` (plugins' ``ddlcore_debezium_connectors``)."""
    from .plugins import plugin_manager

    found: dict[str, DebeziumConnector] = {}
    for provided in plugin_manager().hook.ddlcore_debezium_connectors():
        for c in provided or ():
            found.setdefault(c.name, c)
    return found


def connector_for(name: str | None = None, source_connector: str | None = None) -> DebeziumConnector:
    """The connector called ``name``, or the one whose messages say ``source.connector`` is
    ``source_connector``.  Raises ``DebeziumError`` naming the installed ones."""
    found = connectors()
    for c in found.values():
        if (name is not None and c.name == name) or (name is None and source_connector in c.source_connectors):
            return c
    what = f"--connector {name}" if name is not None else f"source.connector {source_connector!r}"
    installed = ", ".join(sorted(found)) or "none"
    raise DebeziumError(f"no installed plugin reads Debezium's {what} (installed: {installed}); "
                        f"install its dialect plugin, e.g. pip install ddlcore-mysql")
