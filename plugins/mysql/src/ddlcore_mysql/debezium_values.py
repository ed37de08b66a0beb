"""Debezium MySQL/MariaDB connector values → ddlcore raw values, typed by the DDL in force.

Owns: turning one field value of a Debezium change event (as Kafka Connect's ``JsonConverter``
writes it, with or without schemas) into the raw value ddlcore's own binlog capture writes for
that column (``binlog_values``), given the column of the history's table model, the field's
Connect schema when the message has one, and the connector's value settings
(``ddlcore.debezium.DebeziumSettings``); and saying when the value is not exact because of the
producer's settings (a *loss*).  Must not know: envelopes, Kafka, the change-log file.

The encodings are Debezium's, from its MySQL/MariaDB connector documentation ("Data type
mappings", ``documentation/modules/ROOT/partials/modules/all-connectors/shared-mariadb-mysql.adoc``
in github.com/debezium/debezium) and Kafka Connect's logical types:

================================  ================================================  =====================
column (model ``data_type``)      Debezium value                                    raw value
================================  ================================================  =====================
tinyint … bigint                  number; ``BOOLEAN`` → true/false; BIGINT UNSIGNED  ``int`` (unsigned: the
                                  ``long``: negative above 2^63, ``precise``:       true value, 2^64 added)
                                  Decimal bytes (scale 0)
decimal, numeric                  ``precise``: base64 of the big-endian two's-      ``Decimal`` with the
                                  complement unscaled value, ``scale`` parameter    column's scale
                                  (else the DDL's); ``string``: text; ``double``
float (single precision), real    number (a Java float's text)                      the float32 value
double                            number                                            ``float``
char, varchar, *text              string                                            ``str``
binary, varbinary, *blob          ``binary.handling.mode``: bytes (base64 in JSON),  ``bytes``
                                  base64, base64-url-safe, hex
enum / set                        label / labels joined by ``,``                    index / bitmask
bit(1) / bit(n)                   boolean / bytes, little-endian                    big-endian bytes
year                              number                                            ``int``
date                              days since 1970-01-01 (``isostring``: text)       ``$date``
time                              ms / µs / ns by ``time.precision.mode`` and fsp    ``$time``
datetime                          ms / µs / ns by mode and fsp (``isostring``: text) ``$datetime``
timestamp                         ``ZonedTimestamp``: ISO-8601 text in UTC           ``$datetime`` (UTC)
json                              text                                              ``$json``
geometry types                    ``{"wkb": bytes, "srid": int}``                   SRID (4 bytes LE) + WKB
================================================================================================

Losses (``Loss``): ``decimal.handling.mode=double`` on a ``DECIMAL(p,s)`` with p > 15 (a double
keeps 15 significant digits); ``time.precision.mode=connect`` on ``TIME(fsp)`` / ``DATETIME(fsp)``
with fsp > 3 (milliseconds); a null in a ``NOT NULL`` column (Debezium writes null for a zero
date of a nullable column — undetectable — and for a value it failed to convert under
``event.converting.failure.handling.mode=warn``); the epoch (day 0, ``1970-01-01 00:00:00``) in a
``NOT NULL`` ``DATE`` / ``DATETIME`` column (how Debezium writes a zero date there).
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import decimal
import functools
import struct
import sys
from typing import Any, Callable

from ddlcore.debezium import DebeziumSettings, FieldSchema, Loss
from ddlcore.model import Column
from ddlcore.raw import encode_json

from .binlog_values import Tagged

__all__ = ["Loss", "decode_value", "column_decoder", "column_fast", "LossyNull", "set_mask", "DECODERS", "GEOMETRY_TYPES"]

_EPOCH_DAY = _dt.date(1970, 1, 1)
_EPOCH = _dt.datetime(1970, 1, 1)
GEOMETRY_TYPES = frozenset({"geometry", "point", "linestring", "polygon", "multipoint", "multilinestring",
                            "multipolygon", "geometrycollection", "geomcollection"})
_UNITS = {"ms": 1_000, "us": 1, "ns": None}
#: Connect schema names of temporal values → their unit
_TIME_NAMES = {"io.debezium.time.Time": "ms", "io.debezium.time.MicroTime": "us", "io.debezium.time.NanoTime": "ns",
               "org.apache.kafka.connect.data.Time": "ms", "io.debezium.time.Timestamp": "ms",
               "io.debezium.time.MicroTimestamp": "us", "io.debezium.time.NanoTimestamp": "ns",
               "org.apache.kafka.connect.data.Timestamp": "ms"}


class DecodeError(ValueError):
    """A value that does not fit its column's type under the given settings."""


# ---------------------------------------------------------------------------- helpers


if sys.version_info >= (3, 11):
    #: ``base64.b64decode(text, validate=True)``: ``binascii.a2b_base64`` in strict mode refuses
    #: the same texts, without the regular expression
    _b64_strict = functools.partial(binascii.a2b_base64, strict_mode=True)
else:  # pragma: no cover - no strict_mode before Python 3.11
    _b64_strict = functools.partial(base64.b64decode, validate=True)


def _b64(text: str, where: str) -> bytes:
    try:
        return _b64_strict(text)
    except (binascii.Error, ValueError, TypeError):
        raise DecodeError(f"{where}: {text[:40]!r} is not base64") from None


def _binary(value: Any, field: FieldSchema | None, s: DebeziumSettings) -> bytes:
    if not isinstance(value, str):
        raise DecodeError(f"binary value {value!r} is not a string")
    mode = "bytes" if field is not None and field.type == "bytes" else s.binary_handling_mode
    if mode == "hex":
        try:
            return bytes.fromhex(value)
        except ValueError:
            raise DecodeError(f"{value[:40]!r} is not hex (binary.handling.mode=hex)") from None
    if mode == "base64-url-safe":
        try:
            return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        except (binascii.Error, ValueError):
            raise DecodeError(f"{value[:40]!r} is not URL-safe base64") from None
    return _b64(value, f"binary.handling.mode={mode}")


def _unscaled(value: str) -> int:
    try:
        return int.from_bytes(_b64_strict(value), "big", signed=True)
    except (binascii.Error, ValueError, TypeError):
        raise DecodeError(f"Decimal bytes: {value[:40]!r} is not base64") from None


#: a context for quantizing a double to a DECIMAL's scale: a double has up to 309 integer
#: digits, a DECIMAL 30 fraction digits (the default context rounds to 28 digits)
_WIDE = decimal.Context(prec=400)


def _scaled(unscaled: int, scale: int) -> decimal.Decimal:
    """``unscaled`` × 10^-``scale`` exactly (``Decimal.scaleb`` rounds to the context's 28 digits;
    a DECIMAL holds up to 65)."""
    return decimal.Decimal(f"{unscaled}E{-scale}")


def _fsp(col: Column) -> int:
    return col.datetime_precision or 0


def _unit(col: Column, field: FieldSchema | None, s: DebeziumSettings, kind: str) -> str:
    """The unit of an integer TIME / DATETIME value: from the field's schema name when there is
    one, else from ``time.precision.mode`` and the column's fsp (Debezium's table above)."""
    if field is not None and field.name in _TIME_NAMES:
        return _TIME_NAMES[field.name]
    mode = s.time_precision_mode or "adaptive_time_microseconds"  # the MySQL connector's default
    if mode in ("connect",):
        return "ms"
    if mode == "microseconds":
        return "us"
    if mode == "nanoseconds":
        return "ns"
    if mode == "adaptive_time_microseconds" and kind == "time":
        return "us"
    return "ms" if _fsp(col) <= 3 else "us"


def _micros(value: int, unit: str) -> int:
    if unit == "ms":
        return value * 1000
    if unit == "ns":
        return value // 1000
    return value


def _frac(us: int) -> str:
    return f".{us:06d}" if us else ""


def _iso(text: str) -> str:
    """ISO-8601 text without ``Z``, ``T`` as a space, the fraction as ``ddlcore.raw`` writes it."""
    t = text.rstrip("Z").replace("T", " ")
    head, dot, frac = t.partition(".")
    if not dot:
        return head
    frac = frac[:6].ljust(6, "0")
    return head if int(frac) == 0 else f"{head}.{frac}"


# ---------------------------------------------------------------------------- per type


def _integer(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str) and col.unsigned and col.data_type.lower() == "bigint":
        # BIGINT UNSIGNED under bigint.unsigned.handling.mode=precise: Decimal bytes, scale 0
        scale = int((field.parameters or {}).get("scale", 0)) if field is not None else 0
        return int(_scaled(_unscaled(value), scale))
    if not isinstance(value, int):
        raise DecodeError(f"{value!r} is not an integer")
    if value < 0 and col.unsigned:
        return value + (1 << 64) if col.data_type.lower() == "bigint" else value
    return value


def _decimal(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> Any:
    scale = col.numeric_scale or 0
    if field is not None and field.name == "org.apache.kafka.connect.data.Decimal":
        scale = int((field.parameters or {}).get("scale", scale))
        return _scaled(_unscaled(value), scale)
    if isinstance(value, bool):
        raise DecodeError(f"{value!r} is not a decimal")
    if isinstance(value, (int, float)):  # decimal.handling.mode=double
        try:
            return decimal.Decimal(repr(float(value))).quantize(decimal.Decimal(1).scaleb(-scale), context=_WIDE)
        except decimal.InvalidOperation:
            raise DecodeError(f"{value!r} does not fit {col.column_type}") from None
    if not isinstance(value, str):
        raise DecodeError(f"{value!r} is not a decimal")
    if s.decimal_handling_mode == "precise" and (field is None or field.type == "bytes"):
        return _scaled(_unscaled(value), scale)
    try:
        return decimal.Decimal(value)
    except decimal.InvalidOperation:
        raise DecodeError(f"{value!r} is not a decimal (decimal.handling.mode=string)") from None


def _float(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DecodeError(f"{value!r} is not a number")
    if col.data_type.lower() == "float":  # single precision (the model makes FLOAT(p > 24) a double)
        return struct.unpack("<f", struct.pack("<f", value))[0]
    return float(value)


def _text(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> Any:
    if not isinstance(value, str):
        raise DecodeError(f"{value!r} is not text")
    return value


def _bytes(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> Any:
    return _binary(value, field, s)


def _enum(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> Any:
    if value == "":
        return 0
    labels = col.enum_values or ()
    for i, label in enumerate(labels, start=1):
        if label == value:
            return i
    lower = str(value).lower()  # ENUM comparisons follow the column's (usually _ci) collation
    for i, label in enumerate(labels, start=1):
        if label.lower() == lower:
            return i
    raise DecodeError(f"{value!r} is not a label of {col.column_type}")


def set_mask(text: str, col: Column) -> int:
    """The bitmask of a SET value given as its labels joined by ``,`` (compared as the column's
    ``_ci`` collation does); raises ``ValueError`` for a label not in ``col.set_values``."""
    labels = [x.lower() for x in (col.set_values or ())]
    mask = 0
    for part in filter(None, text.split(",")):
        try:
            mask |= 1 << labels.index(part.lower())
        except ValueError:
            raise DecodeError(f"{part!r} is not a member of {col.column_type}") from None
    return mask


def _set(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> Any:
    if not isinstance(value, str):
        raise DecodeError(f"{value!r} is not a SET value")
    return set_mask(value, col)


def _bit(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> Any:
    bits = col.numeric_precision or 1
    n = (bits + 7) // 8
    if isinstance(value, bool):
        return bytes([int(value)]).rjust(n, b"\0")
    if isinstance(value, int):
        return value.to_bytes(n, "big")
    if not isinstance(value, str):
        raise DecodeError(f"{value!r} is not io.debezium.data.Bits")
    little = _b64(value, "io.debezium.data.Bits (bytes, whatever binary.handling.mode says)")
    return bytes(reversed(little))[-n:].rjust(n, b"\0")


def _year(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> Any:
    if isinstance(value, bool) or not isinstance(value, int):
        raise DecodeError(f"{value!r} is not a year")
    return value


def _date(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> Any:
    if isinstance(value, str):
        return Tagged("$date", value.rstrip("Z"))
    if isinstance(value, bool) or not isinstance(value, int):
        raise DecodeError(f"{value!r} is not a date (days since 1970-01-01)")
    return Tagged("$date", _day_text(value))


def _time(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> Any:
    if isinstance(value, str):
        return Tagged("$time", _iso(value))
    if isinstance(value, bool) or not isinstance(value, int):
        raise DecodeError(f"{value!r} is not a time")
    us = _micros(value, _unit(col, field, s, "time"))
    sign = "-" if us < 0 else ""
    secs, frac = divmod(abs(us), 1_000_000)
    mins, sec = divmod(secs, 60)
    h, m = divmod(mins, 60)
    return Tagged("$time", f"{sign}{h:02d}:{m:02d}:{sec:02d}{_frac(frac)}")


@functools.lru_cache(maxsize=4096)
def _day_text(day: int) -> str:
    """``YYYY-MM-DD`` of days since 1970-01-01; ``DecodeError`` outside the years 1-9999 (a
    value in another unit than the settings say, e.g. microseconds read as milliseconds)."""
    try:
        d = _EPOCH_DAY + _dt.timedelta(days=day)
    except OverflowError:
        raise DecodeError(f"day {day} since 1970-01-01 is outside the years 1-9999") from None
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"


@functools.lru_cache(maxsize=4096)
def _minute_text(minute: int) -> str:
    """``YYYY-MM-DD hh:mm`` of minutes since 1970-01-01 00:00 (a stream's rows cluster in time)."""
    day, m = divmod(minute, 1440)
    return f"{_day_text(day)} {m // 60:02d}:{m % 60:02d}"


#: ``00`` ... ``59``
_TWO_DIGITS = tuple(f"{i:02d}" for i in range(60))


def _epoch_text(us: int) -> str:
    """``YYYY-MM-DD hh:mm:ss[.ffffff]`` of microseconds since 1970-01-01 00:00:00."""
    minute, rest = divmod(us, 60_000_000)
    sec, frac = divmod(rest, 1_000_000)
    text = f"{_minute_text(minute)}:{_TWO_DIGITS[sec]}"
    return f"{text}.{frac:06d}" if frac else text


def _datetime(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> Any:
    if isinstance(value, str):
        return Tagged("$datetime", _iso(value))
    if isinstance(value, bool) or not isinstance(value, int):
        raise DecodeError(f"{value!r} is not a datetime")
    return Tagged("$datetime", _epoch_text(_micros(value, _unit(col, field, s, "datetime"))))


def _timestamp(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return _datetime(value, col, field, s)
    if not isinstance(value, str):
        raise DecodeError(f"{value!r} is not a ZonedTimestamp")
    if value.endswith("Z") and len(value) >= 20 and value[10] == "T":  # UTC already: Debezium's usual form
        return Tagged("$datetime", _iso(value))
    try:
        t = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise DecodeError(f"{value!r} is not an ISO-8601 timestamp") from None
    if t.tzinfo is not None:
        t = t.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    return Tagged("$datetime", f"{t.year:04d}-{t:%m-%d %H:%M:%S}" + _frac(t.microsecond))


def _json(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> Any:
    if not isinstance(value, str):
        raise DecodeError(f"{value!r} is not JSON text")
    return Tagged("$json", value)


def _geometry(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> Any:
    if not isinstance(value, dict) or "wkb" not in value:
        raise DecodeError(f"{value!r} is not a io.debezium.data.geometry.Geometry struct")
    srid = value.get("srid") or 0
    return int(srid).to_bytes(4, "little") + _binary(value["wkb"], None, DebeziumSettings())


_INTS = ("tinyint", "smallint", "mediumint", "int", "integer", "bigint", "bool", "boolean")
_TEXTS = ("char", "varchar", "tinytext", "text", "mediumtext", "longtext", "nchar", "nvarchar",
          "inet4", "inet6", "uuid")
_BLOBS = ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob")

#: model ``data_type`` → decoder(value, column, field schema or None, settings) → raw value
DECODERS: dict[str, Callable[[Any, Column, FieldSchema | None, DebeziumSettings], Any]] = {
    **{t: _integer for t in _INTS}, "decimal": _decimal, "numeric": _decimal, "dec": _decimal,
    "float": _float, "real": _float, "double": _float, **{t: _text for t in _TEXTS},
    **{t: _bytes for t in _BLOBS}, "enum": _enum, "set": _set, "bit": _bit, "year": _year,
    "date": _date, "time": _time, "datetime": _datetime, "timestamp": _timestamp, "json": _json,
    **{t: _geometry for t in GEOMETRY_TYPES},
}


# ---------------------------------------------------------------------------- losses


def _setting_loss(col: Column, s: DebeziumSettings, value: Any) -> Loss | None:
    t = col.data_type.lower()
    if t in ("decimal", "numeric", "dec") and isinstance(value, (int, float)) and not isinstance(value, bool) \
            and (col.numeric_precision or 10) > 15:
        return Loss("double", f"decimal.handling.mode=double keeps 15 significant digits, {col.column_type} "
                              f"holds {col.numeric_precision}", "decimal.handling.mode=precise or string")
    if t in ("time", "datetime") and isinstance(value, int) and _fsp(col) > 3 \
            and (s.time_precision_mode == "connect"):
        return Loss("connect", f"time.precision.mode=connect keeps milliseconds, {col.column_type} holds "
                               f"{_fsp(col)} fraction digits", "time.precision.mode=adaptive_time_microseconds")
    if t in ("date", "datetime") and value == 0 and not col.nullable:
        return Loss("zero-date", f"{col.column_type} NOT NULL holds the epoch: how Debezium writes a zero date "
                                 f"there (a real 1970-01-01 cannot be told apart)",
                    "none in Debezium (zero dates are not kept); ddlcore capture mysql keeps them")
    return None


def decode_value(value: Any, col: Column, field: FieldSchema | None, s: DebeziumSettings) -> tuple[Any, Loss | None]:
    """``(raw value, loss or None)`` of one Debezium field value for ``col`` (module docstring).
    A null in a ``NOT NULL`` column is a loss (a zero date or a failed conversion).  Raises
    ``DecodeError`` for a value that does not fit the column's type."""
    return column_decoder(col, s)(value, field)


def _null_loss(col: Column) -> Loss | None:
    if col.nullable or col.generation_expression is not None:
        return None
    temporal = col.data_type.lower() in ("date", "datetime", "timestamp")
    return Loss("null", f"null in {col.column_type} NOT NULL: " + ("a zero date or " if temporal else "")
                + "a value Debezium failed to convert", "event.converting.failure.handling.mode=fail")


def _may_lose(col: Column, s: DebeziumSettings) -> bool:
    """Whether ``_setting_loss`` can say anything for this column under ``s`` (most columns: no)."""
    t = col.data_type.lower()
    return ((t in ("decimal", "numeric", "dec") and s.decimal_handling_mode == "double")
            or (t in ("time", "datetime") and s.time_precision_mode == "connect")
            or (t in ("date", "datetime") and not col.nullable))


# ---------------------------------------------------------------------------- fast paths
#
# A message without schemas (``field`` None) is decoded by the column and the settings alone:
# for the common types a decoder specialised once per column takes the value's usual JSON type
# and hands any other to ``slow`` (the general decoder above: same results, same errors).  A
# factory builds it for raw values (``tag`` = ``Tagged``) or for the change log's encoded
# values directly (``tag`` = ``_tag_json``: ``{tag: text}``, ``ddlcore.raw.encode_json``'s form;
# the factories of the commonest types write that dict literally, a call less per value).

def _tag_json(tag: str, text: str) -> dict[str, str]:
    return {tag: text}


def _fast_int(col: Column, s: DebeziumSettings, slow: Callable, tag: Callable) -> Callable[[Any], Any] | None:
    if col.unsigned:
        return None

    def fast(value: Any) -> Any:
        return value if type(value) is int else slow(value)
    return fast


#: the first characters of a text ``ddlcore.raw`` may write as ``{"$s": ...}`` (a number's, ``{"$``)
_AMBIGUOUS_START = frozenset("-0123456789{")


def _fast_text(col: Column, s: DebeziumSettings, slow: Callable, tag: Callable) -> Callable[[Any], Any] | None:
    if tag is _tag_json:  # encoded: a text that may read as a number goes through slow (encode_json)
        def fast_encoded(value: Any) -> Any:
            return value if type(value) is str and value[:1] not in _AMBIGUOUS_START else slow(value)
        return fast_encoded

    def fast(value: Any) -> Any:
        return value if type(value) is str else slow(value)
    return fast


def _fast_decimal(col: Column, s: DebeziumSettings, slow: Callable, tag: Callable) -> Callable[[Any], Any] | None:
    if s.decimal_handling_mode != "precise":
        return None
    scale = col.numeric_scale or 0
    if tag is _tag_json:
        def fast_encoded(value: Any) -> Any:
            return {"$dec": scaled_text(_unscaled(value), scale)} if type(value) is str else slow(value)
        return fast_encoded

    def fast(value: Any) -> Any:
        return Tagged("$dec", scaled_text(_unscaled(value), scale)) if type(value) is str else slow(value)
    return fast


def scaled_text(unscaled: int, scale: int) -> str:
    """``format(Decimal(unscaled).scaleb(-scale), "f")`` (``ddlcore.raw``'s decimal text: all
    ``scale`` fraction digits) without building the ``Decimal``; ``scale`` >= 0."""
    if scale == 0:
        return str(unscaled)
    digits = str(abs(unscaled)).rjust(scale + 1, "0")
    return f"{'-' if unscaled < 0 else ''}{digits[:-scale]}.{digits[-scale:]}"


def _fast_datetime(col: Column, s: DebeziumSettings, slow: Callable, tag: Callable) -> Callable[[Any], Any] | None:
    unit = _unit(col, None, s, "datetime")
    scale = 1000 if unit == "ms" else 1 if unit == "us" else None
    if scale is None:
        return None

    if tag is _tag_json:
        def fast_encoded(value: Any) -> Any:
            return {"$datetime": _epoch_text(value * scale)} if type(value) is int else slow(value)
        return fast_encoded

    def fast(value: Any) -> Any:
        return Tagged("$datetime", _epoch_text(value * scale)) if type(value) is int else slow(value)
    return fast


def _fast_timestamp(col: Column, s: DebeziumSettings, slow: Callable, tag: Callable) -> Callable[[Any], Any] | None:
    if tag is _tag_json:
        def fast_encoded(value: Any) -> Any:
            if type(value) is str and len(value) >= 20 and value[-1] == "Z" and value[10] == "T":
                return {"$datetime": _iso(value)}
            return slow(value)
        return fast_encoded

    def fast(value: Any) -> Any:
        if type(value) is str and len(value) >= 20 and value[-1] == "Z" and value[10] == "T":
            return Tagged("$datetime", _iso(value))
        return slow(value)
    return fast


def _fast_enum(col: Column, s: DebeziumSettings, slow: Callable, tag: Callable) -> Callable[[Any], Any] | None:
    index: dict[str, int] = {}
    for i, label in enumerate(col.enum_values or (), start=1):
        if label:  # "" is the error value 0 whatever the labels (_enum)
            index.setdefault(label, i)  # the first of equal labels, as _enum finds it

    def fast(value: Any) -> Any:
        i = index.get(value) if type(value) is str else None
        return i if i is not None else slow(value)
    return fast


def _fast_json(col: Column, s: DebeziumSettings, slow: Callable, tag: Callable) -> Callable[[Any], Any] | None:
    if tag is _tag_json:
        def fast_encoded(value: Any) -> Any:
            return {"$json": value} if type(value) is str else slow(value)
        return fast_encoded

    def fast(value: Any) -> Any:
        return Tagged("$json", value) if type(value) is str else slow(value)
    return fast


#: model ``data_type`` → factory(column, settings, slow, tag) → ``fast(value) -> raw value`` for
#: messages without schemas (``slow(value)``: the general decoder, for values of other JSON
#: types; ``tag(tag, text)``: a tagged value), or ``None`` where the general decoder is used
FAST: dict[str, Callable[[Column, DebeziumSettings, Callable, Callable], Callable[[Any], Any] | None]] = {
    **{t: _fast_int for t in _INTS if t not in ("bool", "boolean")}, **{t: _fast_text for t in _TEXTS},
    "decimal": _fast_decimal, "numeric": _fast_decimal, "dec": _fast_decimal, "datetime": _fast_datetime,
    "timestamp": _fast_timestamp, "enum": _fast_enum, "json": _fast_json,
}
#: the factories whose ``fast`` returns a value of this JSON type unchanged (raw and encoded)
_UNCHANGED = {_fast_int: int}
_UNCHANGED_RAW = {_fast_int: int, _fast_text: str}


class LossyNull(DecodeError):
    """A null in a column where a null is a loss (``column_fast``: decode the row with
    ``column_decoder`` instead, which reports it)."""


class _Never:
    """No JSON value is of this type (``column_fast``: no value passes unchanged)."""


def column_fast(col: Column, s: DebeziumSettings, *, encoded: bool = False) -> tuple[type, Callable[[Any], Any]] | None:
    """``(unchanged, fast)`` for decoding this column's values of messages without schemas when
    none of its non-null values can be lossy under ``s`` (``None`` for the other columns: use
    ``column_decoder``): a value of type ``unchanged`` is its own raw value, any other is
    ``fast(value)``.  ``encoded``: the values are the change log's (``ddlcore.raw.encode_json``
    of the raw value) instead.  ``fast`` raises ``DecodeError`` as the general decoder does,
    ``LossyNull`` for a null that is a loss (a ``NOT NULL`` column)."""
    t = col.data_type.lower()
    fn = DECODERS.get(t)
    factory = FAST.get(t)
    if factory is None or fn is None or _may_lose(col, s):
        return None
    lossy_null = _null_loss(col) is not None

    def slow(value: Any) -> Any:
        if value is None:
            if lossy_null:
                raise LossyNull(col.name)
            return None
        return fn(value, col, None, s)

    if encoded:
        def slow_encoded(value: Any) -> Any:
            return encode_json(slow(value))
        fast = factory(col, s, slow_encoded, _tag_json)
        return None if fast is None else (_UNCHANGED.get(factory, _Never), fast)
    fast = factory(col, s, slow, Tagged)
    return None if fast is None else (_UNCHANGED_RAW.get(factory, _Never), fast)


def column_decoder(col: Column, s: DebeziumSettings) -> Callable[[Any, FieldSchema | None], tuple[Any, Loss | None]]:
    """``decode(value, field) -> (raw value, loss or None)`` for one column under ``s``: what
    ``decode_value`` does, with what depends only on the column worked out once (a row decoder
    keeps one per column of a table version; ``FAST`` for messages without schemas)."""
    t = col.data_type.lower()
    fn = DECODERS.get(t)
    null = (None, _null_loss(col))
    check = _may_lose(col, s)
    fast = FAST[t](col, s, lambda value: fn(value, col, None, s), Tagged) if t in FAST and fn is not None else None

    if fast is not None and not check:
        def decode_fast(value: Any, field: FieldSchema | None) -> tuple[Any, Loss | None]:
            if value is None:
                return null
            return (fast(value) if field is None else fn(value, col, field, s)), None
        return decode_fast

    def decode(value: Any, field: FieldSchema | None) -> tuple[Any, Loss | None]:
        if value is None:
            return null
        if fn is None:
            if isinstance(value, (dict, list)):
                raise DecodeError(f"no decoding for {col.column_type} values like {value!r}")
            return value, None
        return fn(value, col, field, s), (_setting_loss(col, s, value) if check else None)

    return decode
