"""Debezium's PostgreSQL connector for ``ddlcore capture debezium``
(``ddlcore.debezium.DebeziumConnector``).

Owns: the order and position of the connector's records, the DDL in ddlcore's event-trigger
messages, and a row's values as the text pgoutput sends (what ``ddlcore capture postgres``
writes, docs/changelog.md "PostgreSQL specifics").

**DDL.** Debezium's connector carries no DDL.  With ddlcore's event trigger installed
(``ddlcore capture postgres --install``), every DDL command emits a transactional logical
decoding message with prefix ``ddlcore`` (``pg_logical_emit_message``); Debezium passes such
messages through as ``op: "m"`` events (``message.prefix``, ``message.content`` base64;
include them with ``message.prefix.include.list=ddlcore``).  They become ``ddl`` events with
the command's text, search path and catalog description, in order with the rows.  Without the
trigger nothing says when a table changed: rows of a table no DDL described are typed by the
messages' own field schemas when they have them (``debezium_schema``: a ``CREATE TABLE`` /
``ALTER TABLE`` derived from them, the table marked by its comment), else quarantined ("not in
the schema history ... no schema to type it by").

**Order.** ``source.sequence`` is ``[last commit LSN, LSN]`` (Debezium's documented ordering
pair); the key is ``(last commit LSN, LSN, phase, n)``: snapshot rows (phase 1, ``n`` the
arrival order) before streamed DDL (2) and rows (3, ``n`` 0 for a delete, 1 else: a primary-key
change is a delete and a create at one LSN).  ``position`` is the LSN as
PostgreSQL writes it (``0/16B3748``).

**Values** (Debezium's PostgreSQL documentation, "Data type mappings") → pgoutput's text with
ddlcore's session settings (``DateStyle`` ISO, ``IntervalStyle`` postgres, ``TimeZone`` UTC):
booleans ``t``/``f``; numbers as text; ``numeric`` from ``precise`` bytes (scale from the
schema or the DDL) or ``VariableScaleDecimal`` ``{scale, value}``, ``string``, or ``double``
(lossy beyond 15 digits and for unconstrained ``numeric``); ``bytea`` → ``\\x`` hex; ``date``
days, ``time`` / ``timestamp`` ms / µs / ns, ``timestamptz`` / ``timetz`` ISO strings in UTC →
``+00``; ``interval`` ISO-8601 (``interval.handling.mode=string``) → the postgres style, or
microseconds (``numeric``: months approximated by Debezium, so lossy); arrays → ``{...}``;
``hstore`` (``json`` or ``map``) → ``"k"=>"v"``; ``__debezium_unavailable_value`` (an unchanged
TOASTed value) → absent; a ``before`` image without non-key columns (``REPLICA IDENTITY
DEFAULT``) → those columns absent.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import decimal
import json
import re
from typing import Any, Callable

from ddlcore import raw
from ddlcore.debezium import DebeziumSettings, FieldSchema, Loss, Record
from ddlcore.model import Column, TableId

__all__ = ["PostgresConnector", "format_lsn", "UNAVAILABLE"]

#: Debezium's default ``unavailable.value.placeholder``
UNAVAILABLE = "__debezium_unavailable_value"
_UNAVAILABLE_B64 = base64.b64encode(UNAVAILABLE.encode()).decode()
_EPOCH = _dt.datetime(1970, 1, 1)
_ISO_INTERVAL = re.compile(r"^(-)?P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)D)?"
                           r"(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?\d+(?:\.\d+)?)S)?)?$")


def format_lsn(lsn: int) -> str:
    """An LSN as PostgreSQL writes it: ``hi/lo`` in hexadecimal (``0/16B3748``)."""
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


class DecodeError(ValueError):
    """A value that does not fit its column's type."""


def _frac(us: int) -> str:
    return ("." + f"{us:06d}".rstrip("0")) if us else ""


def _unit(field: FieldSchema | None, col: Column, s: DebeziumSettings, kind: str) -> int:
    """Microseconds per unit of an integer ``time`` / ``timestamp`` (negative: nanoseconds per
    microsecond): the field's schema name, else ``time.precision.mode`` (the connector's default
    ``adaptive``: ms for precision ≤ 3; ``adaptive_time_microseconds``: the same but ``time``
    always µs) and the precision."""
    names = {"io.debezium.time.Time": 1000, "io.debezium.time.MicroTime": 1, "io.debezium.time.NanoTime": -1000,
             "io.debezium.time.Timestamp": 1000, "io.debezium.time.MicroTimestamp": 1,
             "io.debezium.time.NanoTimestamp": -1000, "org.apache.kafka.connect.data.Time": 1000,
             "org.apache.kafka.connect.data.Timestamp": 1000}
    if field is not None and field.name in names:
        return names[field.name]
    mode = s.time_precision_mode or "adaptive"
    if mode == "connect":
        return 1000
    if mode == "nanoseconds":
        return -1000
    if mode == "adaptive_time_microseconds" and kind == "time":
        return 1
    if mode.startswith("adaptive") and (col.datetime_precision if col.datetime_precision is not None else 6) <= 3:
        return 1000
    return 1


def _micros(value: int, unit: int) -> int:
    return value * unit if unit > 0 else value // -unit


def _bytes(value: Any, field: FieldSchema | None, s: DebeziumSettings) -> bytes:
    mode = "bytes" if field is not None and field.type == "bytes" else s.binary_handling_mode
    try:
        if mode == "hex":
            return bytes.fromhex(value)
        if mode == "base64-url-safe":
            return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError, TypeError):
        raise DecodeError(f"{str(value)[:40]!r} is not {mode}") from None


def _numeric(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> str:
    if isinstance(value, dict):  # io.debezium.data.VariableScaleDecimal
        n = int.from_bytes(_bytes(value.get("value"), None, DebeziumSettings()), "big", signed=True)
        return format(_scaled(n, int(value.get("scale") or 0)), "f")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        d = decimal.Decimal(repr(float(value)))
        if col.numeric_scale is None:
            return format(d, "f")
        try:  # a double has up to 309 integer digits, a numeric(p,s) up to 1000 fraction digits
            return format(d.quantize(decimal.Decimal(1).scaleb(-col.numeric_scale), context=_WIDE), "f")
        except decimal.InvalidOperation:
            raise DecodeError(f"{value!r} does not fit {col.column_type}") from None
    if not isinstance(value, str):
        raise DecodeError(f"{value!r} is not a numeric")
    if s.decimal_handling_mode == "precise" and (field is None or field.type == "bytes"):
        scale = int((field.parameters or {}).get("scale", col.numeric_scale or 0)) if field else col.numeric_scale or 0
        n = int.from_bytes(_bytes(value, None, DebeziumSettings()), "big", signed=True)
        return format(_scaled(n, scale), "f")
    return value


_WIDE = decimal.Context(prec=1400)


def _scaled(unscaled: int, scale: int) -> decimal.Decimal:
    """``unscaled`` × 10^-``scale`` exactly (``Decimal.scaleb`` rounds to the context's 28 digits;
    a numeric holds up to 131072)."""
    return decimal.Decimal(f"{unscaled}E{-scale}")


def _date(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> str:
    if isinstance(value, str):
        return value.rstrip("Z")
    return (_EPOCH.date() + _dt.timedelta(days=value)).isoformat()


def _time(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> str:
    if isinstance(value, str):
        return value.rstrip("Z")
    us = _micros(value, _unit(field, col, s, "time"))
    secs, frac = divmod(us, 1_000_000)
    return f"{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}{_frac(frac)}"


def _timestamp(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> str:
    if isinstance(value, str):
        return value.rstrip("Z").replace("T", " ")
    t = _EPOCH + _dt.timedelta(microseconds=_micros(value, _unit(field, col, s, "timestamp")))
    return f"{t.year:04d}-{t:%m-%d %H:%M:%S}" + _frac(t.microsecond)


def _zoned(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> str:
    if not isinstance(value, str):
        raise DecodeError(f"{value!r} is not a ZonedTimestamp / ZonedTime")
    if "T" not in value and "-" not in value[:5]:  # timetz, io.debezium.time.ZonedTime: 10:00:00.5Z
        t = value[:-1] if value.endswith("Z") else value
        return t + "+00" if value.endswith("Z") else t
    t = _dt.datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(_dt.timezone.utc)
    return f"{t.year:04d}-{t:%m-%d %H:%M:%S}" + _frac(t.microsecond) + "+00"


def _plural(n: int, unit: str, plural: str) -> str:
    return f"{n} {unit if abs(n) == 1 else plural}"


def _interval(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> str:
    """``interval`` in the postgres style (``1 year 2 mons 3 days 04:05:06.78``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        days, us = divmod(value, 86_400_000_000)
        y = m = 0
    else:
        mt = _ISO_INTERVAL.match(str(value))
        if not mt:
            raise DecodeError(f"{value!r} is not an ISO-8601 duration")
        neg = -1 if mt[1] else 1
        y, m, days = (neg * int(x or 0) for x in mt.group(2, 3, 4))
        us = neg * round((int(mt[5] or 0) * 3600 + int(mt[6] or 0) * 60) * 1_000_000
                         + decimal.Decimal(mt[7] or 0) * 1_000_000)
    parts = [p for n, p in ((y, _plural(y, "year", "years")), (m, _plural(m, "mon", "mons")),
                            (days, _plural(days, "day", "days"))) if n]
    if us or not parts:
        sign = "-" if us < 0 else ""
        secs, frac = divmod(abs(us), 1_000_000)
        parts.append(f"{sign}{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}{_frac(frac)}")
    return " ".join(parts)


def _hstore(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> str:
    pairs = json.loads(value) if isinstance(value, str) else value
    return ", ".join(f"{_quote_hstore(k)}=>{'NULL' if v is None else _quote_hstore(v)}" for k, v in pairs.items())


def _quote_hstore(x: Any) -> str:
    return '"' + str(x).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _scalar(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> str:
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, (int, float)):
        return repr(value) if isinstance(value, float) else str(value)
    if isinstance(value, (dict, list)):
        raise DecodeError(f"no decoding for {col.column_type} values like {value!r}")
    return value


def _bytea(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> str:
    return "\\x" + _bytes(value, field, s).hex()


#: udt name (element type for arrays) → decoder(value, column, field, settings) → pgoutput text
DECODERS: dict[str, Callable[[Any, Column, FieldSchema | None, DebeziumSettings], str]] = {
    "numeric": _numeric, "date": _date, "time": _time, "timestamp": _timestamp, "timestamptz": _zoned,
    "timetz": _zoned, "interval": _interval, "hstore": _hstore, "bytea": _bytea,
}

_NEEDS_QUOTE = re.compile(r'[{}",\\\s]')


def _array_text(values: list, element: Callable[[Any], str]) -> str:
    out = []
    for v in values:
        if isinstance(v, list):
            out.append(_array_text(v, element))
        elif v is None:
            out.append("NULL")
        else:
            t = element(v)
            quote = t == "" or t.upper() == "NULL" or _NEEDS_QUOTE.search(t)
            out.append('"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"' if quote else t)
    return "{" + ",".join(out) + "}"


def _loss(col: Column, s: DebeziumSettings, value: Any) -> tuple[str, str, str] | None:
    udt = (col.udt_name or "").lstrip("_")
    if udt == "numeric" and isinstance(value, float) and (col.numeric_precision or 1000) > 15:
        return ("double", f"decimal.handling.mode=double keeps 15 significant digits, {col.column_type} holds "
                          f"{col.numeric_precision or 'any number of'}", "decimal.handling.mode=precise or string")
    if udt == "interval" and isinstance(value, int):
        return ("interval", "interval.handling.mode=numeric approximates months and years in microseconds",
                "interval.handling.mode=string")
    if udt in ("time", "timestamp") and s.time_precision_mode == "connect" and isinstance(value, int) \
            and (col.datetime_precision if col.datetime_precision is not None else 6) > 3:
        return ("connect", f"time.precision.mode=connect keeps milliseconds, {col.column_type} holds microseconds",
                "time.precision.mode=adaptive")
    return None


class PostgresConnector:
    """Debezium's ``io.debezium.connector.postgresql.PostgresConnector`` (``source.connector``
    ``postgresql``)."""

    name = "postgresql"
    source_connectors = ("postgresql",)
    dialect = "postgres"
    #: not captured unless included: the catalogs, and the event trigger's own bookkeeping
    system_schemas = ("pg_catalog", "information_schema", "ddlcore")
    #: what to say when a run reads rows but no DDL
    no_ddl_hint = ("Debezium's PostgreSQL connector carries no DDL; install ddlcore's event trigger "
                   "(ddlcore capture postgres --install) before the tables are created and let its messages "
                   "through (message.prefix.include.list=ddlcore), or send the messages with their schemas "
                   "(value.converter.schemas.enable=true) to type the rows by them")

    def flavor(self, source: dict[str, Any]) -> str | None:
        return None

    def parser_options(self, flavor: str | None) -> dict[str, Any]:
        return {}

    def order_key(self, record: Record, arrival: int) -> tuple:
        src = record.source
        seq = src.get("sequence")
        try:
            pair = json.loads(seq) if isinstance(seq, str) else (seq or [None, None])
            commit = int(pair[0] or 0)
        except (ValueError, TypeError, IndexError):
            commit = 0
        lsn = int(src.get("lsn") or 0)
        snap = str(src.get("snapshot", "false")).lower() not in ("false", "none", "")
        if record.op == "r" or snap:
            return (commit, lsn, 1, arrival)
        # what a change is, not when it arrived (a redelivery has the key of its first delivery);
        # a primary-key change is a delete and a create at one LSN: the delete first
        return (commit, lsn, 2 if record.kind == "ddl" else 3, 0 if record.op == "d" else 1)

    def position(self, record: Record) -> str:
        return format_lsn(int(record.source.get("lsn") or 0))

    def table_id(self, record: Record) -> TableId:
        s = record.source
        return TableId(s.get("db"), s.get("schema"), s.get("table") or "")

    def message_ddl(self, record: Record) -> dict[str, Any] | None:
        """The ``ddl`` event of a ``ddlcore`` message (``{}``: the trigger's ``ddlcore-pad``
        message, skipped silently; ``None``: any other message)."""
        if record.prefix == "ddlcore-pad":
            return {}
        if record.prefix != "ddlcore":
            return None
        from .catalog import MessageError, parse_ddl_message

        db = record.source.get("db")
        try:
            doc = parse_ddl_message(base64.b64decode(record.content or ""), database=db)
        except (MessageError, binascii.Error, ValueError) as exc:
            raise ValueError(f"the ddlcore message at {self.position(record)} cannot be read: {exc}") from None
        out: dict[str, Any] = {"ddl": doc.query, "database": db, "search_path": list(doc.search_path)}
        if doc.catalog is not None:
            out["catalog"] = doc.catalog
        return out

    def schema_ddl(self, record: Record, table: Any) -> Any:
        """DDL describing a table no DDL described by its messages' field schemas
        (``debezium_schema.schema_ddl``)."""
        from .debezium_schema import schema_ddl

        return schema_ddl(record, table)

    def value_text(self, value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> Any:
        """pgoutput's text of one Debezium value of ``col`` (``None`` for null, ``ddlcore.raw.ABSENT``
        for the unavailable-value placeholder).  Raises ``ValueError`` when it does not fit."""
        if value is None:
            return None
        if value == UNAVAILABLE or value == _UNAVAILABLE_B64:
            return raw.ABSENT
        udt = col.udt_name or ""
        if col.array_dimensions:
            fn = DECODERS.get(udt.lstrip("_"), _scalar)
            if not isinstance(value, list):
                raise DecodeError(f"{value!r} is not an array")
            return _array_text(value, lambda v: fn(v, col, None, s))
        return DECODERS.get(udt, _scalar)(value, col, field, s)

    def decode_row(self, table: Any, values: dict[str, Any], fields: dict[str, FieldSchema],
                   settings: DebeziumSettings, image: str = "after") -> tuple[list[Any], list[tuple[str, Any]]]:
        """pgoutput text of each column in ordinal order and the losses; columns missing from a
        ``before`` image (``REPLICA IDENTITY DEFAULT``: the key only) are absent.  Raises
        ``ValueError`` naming the column for a value that does not fit, and for fields that are
        not the table's columns (drift)."""
        names = {c.name for c in table.columns}
        unknown = [k for k in values if k not in names]
        missing = [c.name for c in table.columns if c.name not in values]
        if unknown or (missing and image == "after"):
            raise ValueError(f"drift: the message has columns [{', '.join(values)}], the history "
                             f"[{', '.join(c.name for c in table.columns)}]")
        out, losses = [], []
        for col in table.columns:
            if col.name not in values:
                out.append(raw.ABSENT)
                continue
            v = values[col.name]
            try:
                out.append(self.value_text(v, col, fields.get(col.name), settings))
            except (DecodeError, ValueError, TypeError, KeyError) as exc:
                raise ValueError(f"column {col.name} ({col.column_type}): {exc}") from None
            loss = _loss(col, settings, v) if v is not None else None
            if loss is not None:
                losses.append((col.name, Loss(*loss)))
        return out, losses

