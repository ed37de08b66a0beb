"""Raw values of MySQL / MariaDB binlog row events, exactly as the binlog stores them.

Owns: decoding one column value of a ``WRITE/UPDATE/DELETE_ROWS`` event from its binlog
format into the change log's raw value (``ddlcore.changelog``'s tagged encoding), and the
hook that makes ``pymysqlreplication`` use this decoding instead of its own.  Must not know:
the table model, the schema history, how values are converted later (the converter owns
that).

Why our own decoding: the library turns values into what it thinks they mean — it decodes
strings with a charset it guesses when the binlog carries none, maps ENUM/SET to labels (or
``None`` without FULL metadata), turns zero and invalid dates into ``None``, reads ``YEAR 0000``
as 1900 and BIT as a string of ``0``/``1``.  A change log must carry what the source gave.
The binlog formats are documented in the MySQL source (``sql/field.cc`` ``Field_*::pack``,
``mysys/my_time.cc`` ``my_*_packed_from_binary``, ``libbinlogevents`` ``rows_event.h``) and the
MySQL internals manual "Date and Time Data Type Representation".

=====================================  ====================================================
binlog type (``FIELD_TYPE``)           raw value (encoded by ``ddlcore.raw``, ``ddlcore.changelog``)
=====================================  ====================================================
TINY, SHORT, INT24, LONG, LONGLONG     ``int`` — signed, unless the binlog's own table-map
                                       metadata (SIGNEDNESS) marks the column UNSIGNED
FLOAT, DOUBLE                          ``float`` (FLOAT: the exact single-precision value)
NEWDECIMAL                             ``Decimal`` with the column's scale → ``{"$dec": …}``
VARCHAR, STRING (CHAR/BINARY), BLOB    ``bytes``, never decoded → ``{"$b64": …}`` (TEXT and
 (all TEXT/BLOB sizes), GEOMETRY        BLOB are BLOB in the binlog)
ENUM                                   ``int``: the 1-based index (0: the '' error value)
SET                                    ``int``: the bitmask (0: the empty set)
BIT(M)                                 ``bytes``: ⌈M/8⌉ bytes, big-endian
YEAR                                   ``int`` (0 for ``0000``, else 1901–2155)
DATE                                   ``Tagged("$date", "YYYY-MM-DD")`` (zero parts kept)
DATETIME2 / DATETIME                   ``Tagged("$datetime", "YYYY-MM-DD hh:mm:ss[.ffffff]")``
TIMESTAMP2 / TIMESTAMP                 ``Tagged("$datetime", …)`` in UTC; zero: ``0000-00-00 00:00:00``
TIME2 / TIME                           ``Tagged("$time", "[-]hh:mm:ss[.ffffff]")`` (hours to 838)
JSON (MySQL's binary JSON)             ``Tagged("$json", text)`` (MariaDB's JSON is LONGTEXT: bytes)
=====================================  ====================================================

Temporal text is ``ddlcore.raw``'s notation: the fraction only when it is not zero, always
six digits (``DATETIME(3)`` ``…05.120`` → ``…05.120000``), whatever the column's precision.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import decimal
import json
import struct
import threading
from typing import Any, Iterator

from ddlcore.raw import ABSENT

__all__ = ["Tagged", "canonical_fraction", "date_text", "datetime_packed_text", "datetime2_text",
           "timestamp_text", "time2_text", "time_packed_text", "datetime_v1_text",
           "time_v1_text", "year_value", "json_text", "read_raw_value", "read_type_values_raw",
           "raw_row_decoding", "fsp_length"]

# FIELD_TYPE codes (MySQL include/field_types.h); pymysqlreplication.constants.FIELD_TYPE
# holds the same numbers, spelled here so the decoder is readable without it.
DECIMAL, TINY, SHORT, LONG, FLOAT, DOUBLE, NULL, TIMESTAMP, LONGLONG, INT24 = range(10)
DATE, TIME, DATETIME, YEAR, NEWDATE, VARCHAR, BIT = 10, 11, 12, 13, 14, 15, 16
TIMESTAMP2, DATETIME2, TIME2 = 17, 18, 19
JSON, NEWDECIMAL, ENUM, SET = 245, 246, 247, 248
TINY_BLOB, MEDIUM_BLOB, LONG_BLOB, BLOB, VAR_STRING, STRING, GEOMETRY = 249, 250, 251, 252, 253, 254, 255


class Tagged:
    """A raw value given as text with the tag of its kind: ``tag`` (``$date``, ``$datetime``,
    ``$time``, ``$json``) and ``text`` (Python's ``date``/``datetime`` cannot hold
    ``0000-00-00``, so binlog temporal values stay text).  ``ddlcore.raw`` encodes any object
    with ``tag`` and ``text`` as the kind its tag names."""

    __slots__ = ("tag", "text")

    def __init__(self, tag: str, text: str):
        self.tag = tag
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tagged) and (self.tag, self.text) == (other.tag, other.text)

    def __hash__(self) -> int:
        return hash((self.tag, self.text))

    def __repr__(self) -> str:
        return f"Tagged({self.tag!r}, {self.text!r})"


# ---------------------------------------------------------------------------- temporal formats


def fsp_length(fsp: int) -> int:
    """Bytes of the fractional part of TIME2/DATETIME2/TIMESTAMP2 with precision ``fsp``."""
    return (fsp + 1) // 2


def _frac_text(micros: int, fsp: int) -> str:
    """The fraction in ``ddlcore.raw`` notation: none when zero, else six digits."""
    return f".{micros:06d}" if micros else ""


def canonical_fraction(text: str) -> str:
    """Server temporal text (``2024-01-02 03:04:05.120``, ``00:00:00.00``) in ``ddlcore.raw``
    notation: the fraction padded to six digits, or dropped when it is zero."""
    head, dot, frac = text.partition(".")
    if not dot:
        return text
    frac = frac.ljust(6, "0")
    return head if int(frac) == 0 else f"{head}.{frac}"


def date_text(v: int) -> str:
    """DATE: 3 bytes little-endian, ``day | month << 5 | year << 9`` (``Field_newdate``)."""
    return f"{v >> 9:04d}-{(v >> 5) & 15:02d}-{v & 31:02d}"


def datetime_packed_text(packed: int, fsp: int) -> str:
    """A packed DATETIME (``MY_PACKED_TIME_MAKE(intpart, frac)``) as text:
    ``ymd << 17 | hms`` in the integer part, ``ym = year * 13 + month``, ``ymd = ym << 5 | day``,
    ``hms = hour << 12 | minute << 6 | second`` (``TIME_from_longlong_datetime_packed``)."""
    sign = "-" if packed < 0 else ""
    packed = abs(packed)
    intpart, frac = packed >> 24, packed & 0xFFFFFF
    ymd, hms = intpart >> 17, intpart & 0x1FFFF
    ym = ymd >> 5
    return (f"{sign}{ym // 13:04d}-{ym % 13:02d}-{ymd & 31:02d} "
            f"{hms >> 12:02d}:{(hms >> 6) & 63:02d}:{hms & 63:02d}{_frac_text(frac, fsp)}")


def _frac_signed(data: bytes, fsp: int) -> int:
    """The fractional part of DATETIME2/TIMESTAMP2 in microseconds (signed big-endian read,
    as ``my_datetime_packed_from_binary`` does)."""
    n = fsp_length(fsp)
    if n == 0:
        return 0
    v = int.from_bytes(data[:n], "big", signed=True)
    return v * (10_000 if n == 1 else 100 if n == 2 else 1)


def datetime2_text(data: bytes, fsp: int) -> str:
    """DATETIME2: 5 bytes big-endian holding ``intpart + 0x8000000000`` (the sign bit set for
    non-negative values), then ``fsp_length(fsp)`` bytes of fraction."""
    intpart = int.from_bytes(data[:5], "big") - 0x8000000000
    return datetime_packed_text((intpart << 24) + _frac_signed(data[5:], fsp), fsp)


def timestamp_text(seconds: int, micros: int, fsp: int) -> str:
    """TIMESTAMP(2): seconds since the epoch (UTC); ``0`` is the zero timestamp."""
    if seconds == 0 and micros == 0:
        return "0000-00-00 00:00:00" + _frac_text(0, fsp)
    t = _dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=seconds)
    return t.strftime("%Y-%m-%d %H:%M:%S") + _frac_text(micros, fsp)


def time_packed_text(packed: int, fsp: int) -> str:
    """A packed TIME (``MY_PACKED_TIME_MAKE(intpart, frac)``, negative for negative times):
    ``hour << 12 | minute << 6 | second`` in the integer part (``TIME_from_longlong_time_packed``)."""
    sign = "-" if packed < 0 else ""
    packed = abs(packed)
    hms, frac = packed >> 24, packed & 0xFFFFFF
    return f"{sign}{(hms >> 12) & 0x3FF:02d}:{(hms >> 6) & 63:02d}:{hms & 63:02d}{_frac_text(frac, fsp)}"


def time2_text(data: bytes, fsp: int) -> str:
    """TIME2: 3 bytes big-endian ``intpart + 0x800000`` then the fraction, decoded as
    ``my_time_packed_from_binary`` does (the fraction of a negative time borrows one second)."""
    n = fsp_length(fsp)
    if n == 3:
        packed = int.from_bytes(data[:6], "big") - 0x800000000000
    else:
        intpart = int.from_bytes(data[:3], "big") - 0x800000
        frac = int.from_bytes(data[3:3 + n], "big") if n else 0
        if intpart < 0 and frac:
            intpart += 1
            frac -= 0x100 if n == 1 else 0x10000
        packed = (intpart << 24) + frac * (10_000 if n == 1 else 100 if n == 2 else 1)
    return time_packed_text(packed, fsp)


def datetime_v1_text(v: int) -> str:
    """Old DATETIME (before MySQL 5.6.4): 8 bytes little-endian, the decimal number
    ``YYYYMMDDhhmmss``."""
    d, t = divmod(v, 1_000_000)
    return f"{d // 10000:04d}-{(d // 100) % 100:02d}-{d % 100:02d} {t // 10000:02d}:{(t // 100) % 100:02d}:{t % 100:02d}"


def time_v1_text(v: int) -> str:
    """Old TIME: 3 bytes little-endian signed, the decimal number ``[-]hhhmmss``."""
    sign = "-" if v < 0 else ""
    v = abs(v)
    return f"{sign}{v // 10000:02d}:{(v // 100) % 100:02d}:{v % 100:02d}"


def year_value(b: int) -> int:
    """YEAR: one byte, ``year - 1900``; 0 is the year ``0000``."""
    return 0 if b == 0 else 1900 + b


# ---------------------------------------------------------------------------- JSON (MySQL)


def _plain(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {_plain_key(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, (bytes, bytearray)):
        return bytes(obj).decode("utf-8", errors="surrogateescape")
    if isinstance(obj, decimal.Decimal):
        return int(obj) if obj == obj.to_integral_value() else float(obj)
    if isinstance(obj, (_dt.date, _dt.time, _dt.timedelta)):
        return str(obj)
    return obj


def _plain_key(k: Any) -> str:
    return k.decode("utf-8", errors="surrogateescape") if isinstance(k, (bytes, bytearray)) else str(k)


def json_text(doc: Any) -> str:
    """MySQL's binary JSON, as ``pymysqlreplication`` parsed it (bytes keys and strings), →
    JSON text in MySQL's own rendering (``", "`` and ``": "`` separators, as ``SELECT`` shows)."""
    plain = _plain(doc)
    return json.dumps(plain, ensure_ascii=False, separators=(", ", ": "), default=str)


# ---------------------------------------------------------------------------- the row hook


def read_raw_value(self: Any, column: Any, null_bitmap: bytes, null_bitmap_index: int,
                   is_partial: bool, cols_bitmap: bytes, unsigned: bool, i: int) -> Any:
    """Replacement for ``RowsEvent._RowsEvent__read_values_name`` (same signature): read one
    column of one row image from ``self.packet`` and return its raw value (table above).

    ``unsigned`` is what the table map's metadata says (the library fills it from FULL
    metadata; ``MySqlCapture`` also from the SIGNEDNESS field that MINIMAL metadata carries);
    without it integers are read signed and the converter fixes them from the table model."""
    if not (cols_bitmap[i >> 3] >> (i & 7)) & 1:
        return ABSENT  # left out of the image (binlog_row_image=MINIMAL/NOBLOB): not NULL
    if (null_bitmap[null_bitmap_index >> 3] >> (null_bitmap_index & 7)) & 1:
        return None
    packet = self.packet
    t = column.type
    if t == LONG:
        return struct.unpack("<I" if unsigned else "<i", packet.read(4))[0]
    if t == VARCHAR or t == STRING or t == VAR_STRING:
        n = packet.read(1 if column.max_length <= 255 else 2)
        return packet.read(int.from_bytes(n, "little"))
    if t == LONGLONG:
        return struct.unpack("<Q" if unsigned else "<q", packet.read(8))[0]
    if t == BLOB or t == GEOMETRY or t in (TINY_BLOB, MEDIUM_BLOB, LONG_BLOB):
        n = packet.read(column.length_size)
        return packet.read(int.from_bytes(n, "little"))
    if t == TINY:
        return struct.unpack("<B" if unsigned else "<b", packet.read(1))[0]
    if t == SHORT:
        return struct.unpack("<H" if unsigned else "<h", packet.read(2))[0]
    if t == INT24:
        return int.from_bytes(packet.read(3), "little", signed=not unsigned)
    if t == NEWDECIMAL:
        return self._RowsEvent__read_new_decimal(column)
    if t == DATETIME2:
        return Tagged("$datetime", datetime2_text(packet.read(5 + fsp_length(column.fsp)), column.fsp))
    if t == TIMESTAMP2:
        secs = int.from_bytes(packet.read(4), "big")
        micros = _frac_signed(packet.read(fsp_length(column.fsp)), column.fsp)
        return Tagged("$datetime", timestamp_text(secs, micros, column.fsp))
    if t == TIME2:
        return Tagged("$time", time2_text(packet.read(3 + fsp_length(column.fsp)), column.fsp))
    if t == DATE or t == NEWDATE:
        return Tagged("$date", date_text(int.from_bytes(packet.read(3), "little")))
    if t == DOUBLE:
        return struct.unpack("<d", packet.read(8))[0]
    if t == FLOAT:
        return struct.unpack("<f", packet.read(4))[0]
    if t == ENUM or t == SET:
        return int.from_bytes(packet.read(column.size), "little")
    if t == BIT:
        return packet.read(column.bytes)
    if t == YEAR:
        return year_value(packet.read(1)[0])
    if t == JSON:
        length = int.from_bytes(packet.read(column.length_size), "little")
        if length == 0:
            return Tagged("$json", "null")
        from pymysqlreplication.json_binary import parse_json
        data = packet.read(length)
        if is_partial:
            raise NotImplementedError("partial JSON updates (binlog_row_value_options=PARTIAL_JSON) "
                                      "carry a diff, not a value; capture needs full JSON images")
        return Tagged("$json", json_text(parse_json(data[0], data[1:])))
    if t == DATETIME:
        return Tagged("$datetime", datetime_v1_text(struct.unpack("<Q", packet.read(8))[0]))
    if t == TIMESTAMP:
        return Tagged("$datetime", timestamp_text(struct.unpack("<I", packet.read(4))[0], 0, 0))
    if t == TIME:
        return Tagged("$time", time_v1_text(int.from_bytes(packet.read(3), "little", signed=True)))
    raise NotImplementedError(f"binlog column type {t} (column {i + 1}) has no raw decoding")


def read_type_values_raw(self: Any, length: int) -> list[list[bytes]] | None:
    """Replacement for ``TableMapEvent._read_type_values``: the ENUM / SET labels of FULL
    metadata as the bytes the binlog holds (they are in the column's charset, which the
    event names only later; the library decodes them as UTF-8 and turns what fails into
    ``''``).  ``drift.binlog_columns`` decodes them with the column's charset."""
    packet = self.packet
    read_until = packet.read_bytes + length
    if packet.read_bytes >= read_until:
        return None
    result: list[list[bytes]] = []
    while packet.read_bytes < read_until:
        count = packet.read_length_coded_binary()
        result.append([bytes(packet.read_variable_length_string()) for _ in range(count)])
    return result


_patch_lock = threading.Lock()
_patch_depth = 0
_originals: list[tuple[Any, str, Any]] = []


@contextlib.contextmanager
def raw_row_decoding() -> Iterator[None]:
    """While active, ``pymysqlreplication`` decodes row values with ``read_raw_value`` (the
    library's name-mangled ``RowsEvent.__read_values_name`` is replaced) and keeps TABLE_MAP
    ENUM/SET labels as bytes (``read_type_values_raw``).  Nested and concurrent uses share one
    patch, undone when the last ends.  The patch is process-wide: do not run the library's
    own decoding in the same process meanwhile."""
    global _patch_depth
    from pymysqlreplication.row_event import RowsEvent, TableMapEvent

    with _patch_lock:
        if _patch_depth == 0:
            for cls, attr, new in ((RowsEvent, "_RowsEvent__read_values_name", read_raw_value),
                                   (TableMapEvent, "_read_type_values", read_type_values_raw)):
                _originals.append((cls, attr, cls.__dict__[attr]))
                setattr(cls, attr, new)
        _patch_depth += 1
    try:
        yield
    finally:
        with _patch_lock:
            _patch_depth -= 1
            if _patch_depth == 0:
                while _originals:
                    cls, attr, old = _originals.pop()
                    setattr(cls, attr, old)
