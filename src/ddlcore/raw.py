"""Raw row values: what a change log's ``before`` / ``after`` arrays hold, and how they are
written down.

Owns: the *kinds* of raw value a capture can hand over, their tagged JSON encoding (the
change-log contract, docs/changelog.md), and their *text form* (one string per value, the
element type of the ``array<string>`` that ``ddlcore.spark.RowConverter.columns`` reads).
Must not know: any SQL dialect, Spark, the table model.  No third-party imports, so a capture
process can use it without the ``spark`` extra.

A raw value is what the source gives, unchanged: an ``INT UNSIGNED`` may be negative, an
``ENUM`` its 1-based index, a ``SET`` a bitmask, text bytes in the column's charset, a date
``0000-00-00``.  Interpreting it is the converter's job (it knows the column); this module only
carries it without loss.  The kinds:

=========  =============================================  =======================  ======================
kind       Python values                                  JSON (change log)        text form
=========  =============================================  =======================  ======================
null       ``None``                                       ``null``                 SQL NULL
int        ``int`` (``bool`` as 0/1)                      number ``-12``           ``-12``
float      finite ``float``                               number ``1.5``           ``1.5`` (``repr``)
str        ``str`` (see *ambiguous* below)                string ``"abc"``         ``abc``
bytes      ``bytes``, ``bytearray``, ``memoryview``       ``{"$b64": "AAE="}``     ``{"$b64":"AAE="}``
decimal    ``decimal.Decimal``                            ``{"$dec": "-1.50"}``    ``{"$dec":"-1.50"}``
date       ``datetime.date``, ``RawDate``                 ``{"$date": "2024-02-29"}``  same, compact
datetime   ``datetime.datetime``, ``RawDateTime``         ``{"$datetime": "2024-02-29 13:14:15.123456"}``
time       ``datetime.timedelta``, ``datetime.time``,     ``{"$time": "-838:59:59.000000"}``  same
           ``RawTime``
json       ``dict``, ``list``, ``tuple`` (a parsed JSON   ``{"$json": "{\"a\": 1}"}``  same, compact
           document), ``RawJson`` (its text)
absent     ``ABSENT`` (the one instance of ``Absent``)    ``{"$absent": true}``    ``{"$absent":true}``
=========  =============================================  =======================  ======================

*Absent* is not a value: it marks a column the source did not put in this row image (a
partial binlog row image under ``binlog_row_image=MINIMAL|NOBLOB``, a PostgreSQL TOASTed value
that an update left unchanged).  It is never SQL NULL and a converter must never turn it into
NULL silently: the pipeline records which columns were absent (docs/changelog.md).

Rules of the encoding:

* Tag payloads are text in the source's own notation: decimals in plain notation (no
  exponent); dates ``YYYY-MM-DD``; datetimes ``YYYY-MM-DD hh:mm:ss[.ffffff]`` (an aware
  datetime is converted to UTC first, a naive one is written as is); times
  ``[-]h:mm:ss[.ffffff]`` with as many hour digits as needed.  Only ``$s`` and ``$json``
  payloads can hold JSON escapes.  Zero and invalid dates
  (``0000-00-00``, ``2023-02-30``), which Python cannot hold, are carried as ``RawDate`` /
  ``RawDateTime`` text; ``decode_json`` returns them so, and the real types where valid.
* *Ambiguous strings.*  A JSON reader that reads an array as ``array<string>`` (Spark's does)
  keeps a string's content but writes every other token as its JSON text, so ``"12"`` and
  ``12`` would both read as ``12``.  To keep kinds apart, a ``str`` whose text looks like a
  JSON number (``-?[0-9]+(\\.[0-9]+)?([eE][+-]?[0-9]+)?``) or begins with ``{"$`` is written
  as ``{"$s": "..."}``.  Every other string is a plain JSON string.
* Derived Python values are written as the kind MySQL itself would give them as text: a
  ``set``/``frozenset`` of labels (what mysql-replication returns for a ``SET``) as the string
  of its labels joined by ``,`` (sorted); a ``dict``/``list``/``tuple`` (a parsed JSON document)
  as its JSON text (``json.dumps`` with MySQL's separators ``", "`` / ``": "``, the text
  ``SELECT`` shows for MySQL's binary JSON), kind json.
* An object with ``tag`` and ``text`` attributes (a capture's tagged value, e.g.
  ``Tagged("$date", "0000-00-00")``) is the kind its tag names, holding that text.
* Non-finite floats and other Python types raise ``ValueError`` / ``TypeError``: no source
  column holds them.

The *text form* of a value is exactly what Spark's JSON reader yields for the value's JSON
encoding read as ``array<string>``: the content of a plain string, the compact JSON text of
everything else (for floats Spark writes Java's notation, e.g. ``1.0E300``; both notations
parse the same).  So a JSON-Lines change log read with ``before array<string>`` feeds
``RowConverter.columns`` directly, and ``text_form`` builds the same arrays from Python values.
"""

from __future__ import annotations

import base64
import datetime as _dt
import decimal
import json
import math
import re
from typing import Any, Iterable

__all__ = [
    "KINDS", "TAGS", "NUMBER_RX", "NUMBER", "NUMBER_START", "INT_RX", "ABSENT", "ABSENT_TEXT", "Absent", "is_absent",
    "RawDate", "RawDateTime", "RawTime", "RawJson",
    "kind_of", "canonical", "encode_json", "decode_json", "text_form", "from_text", "from_payload",
    "encode_row", "decode_row", "text_row", "date_text", "datetime_text", "time_text",
]

#: the kinds of raw value, in the order of the table above
KINDS = ("null", "int", "float", "str", "bytes", "decimal", "date", "datetime", "time", "json", "absent")

#: JSON tag → kind
TAGS = {"$b64": "bytes", "$dec": "decimal", "$date": "date", "$datetime": "datetime",
        "$time": "time", "$json": "json", "$s": "str"}
_KIND_TAG = {v: k for k, v in TAGS.items() if k != "$s"}

#: a JSON number's text (what a str must not look like to be written as a plain string)
NUMBER_RX = r"^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$"
#: an integer's text
INT_RX = r"^-?[0-9]+$"
#: ``NUMBER_RX`` compiled
NUMBER = re.compile(NUMBER_RX)
_INT = re.compile(INT_RX)
_UTC = _dt.timezone.utc
_COMPACT = (",", ":")


class Absent:
    """The marker of a column missing from a row image (see the module docstring).  There is
    one instance, ``ABSENT``; it is falsy and compares equal only to itself."""

    __slots__ = ()
    _instance: "Absent | None" = None

    def __new__(cls) -> "Absent":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "ABSENT"


#: the absent marker
ABSENT = Absent()
#: its text form (the element of the ``array<string>`` Spark reads)
ABSENT_TEXT = '{"$absent":true}'


def is_absent(value: Any) -> bool:
    """``value`` is the absent marker (the Python ``ABSENT`` or its JSON ``{"$absent": true}``)."""
    return value is ABSENT or (type(value) is dict and len(value) == 1 and value.get("$absent") is True)


class RawDate(str):
    """A ``date`` raw value given as text (``"0000-00-00"``, ``"2023-02-30"``): the form of
    dates Python cannot hold.  ``decode_json`` returns one for every ``$date`` it cannot
    turn into ``datetime.date``."""

    __slots__ = ()


class RawDateTime(str):
    """A ``datetime`` raw value given as text (``"0000-00-00 00:00:00"``)."""

    __slots__ = ()


class RawTime(str):
    """A ``time`` raw value given as text (``"-838:59:59"``) that is not a valid duration text."""

    __slots__ = ()


class RawJson(str):
    """A ``json`` raw value: the text of a JSON document (what ``decode_json`` returns for
    ``{"$json": ...}``)."""

    __slots__ = ()


# --------------------------------------------------------------------------------------------
# Python value → (kind, canonical value)
# --------------------------------------------------------------------------------------------


def date_text(d: _dt.date) -> str:
    """``YYYY-MM-DD``."""
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"


def datetime_text(d: _dt.datetime) -> str:
    """``YYYY-MM-DD hh:mm:ss[.ffffff]`` (an aware value converted to UTC; the fraction only
    when non-zero, always six digits)."""
    if d.tzinfo is not None:
        d = d.astimezone(_UTC).replace(tzinfo=None)
    text = f"{d.year:04d}-{d.month:02d}-{d.day:02d} {d.hour:02d}:{d.minute:02d}:{d.second:02d}"
    return text + f".{d.microsecond:06d}" if d.microsecond else text


def time_text(t: _dt.timedelta | _dt.time) -> str:
    """``[-]h:mm:ss[.ffffff]`` (hours two digits at least)."""
    if isinstance(t, _dt.time):
        t = _dt.timedelta(hours=t.hour, minutes=t.minute, seconds=t.second, microseconds=t.microsecond)
    micros = t // _dt.timedelta(microseconds=1)
    sign = "-" if micros < 0 else ""
    micros = abs(micros)
    secs, us = divmod(micros, 1_000_000)
    mins, s = divmod(secs, 60)
    h, m = divmod(mins, 60)
    text = f"{sign}{h:02d}:{m:02d}:{s:02d}"
    return text + f".{us:06d}" if us else text


def _set_text(labels: Iterable[Any]) -> str:
    items = sorted(labels)
    if not all(isinstance(x, str) for x in items):
        raise TypeError(f"a set raw value must hold label strings, not {items!r}")
    return ",".join(items)


def canonical(value: Any) -> tuple[str, Any]:
    """``(kind, value)`` for a Python raw value: ``value`` as the kind's canonical Python
    object (``int``, ``float``, ``str``, ``bytes``, ``Decimal``, ``date``/``RawDate``,
    naive ``datetime``/``RawDateTime``, ``timedelta``/``RawTime``) — derived values (sets,
    JSON documents, ``bytearray``, aware datetimes, ``time``) turned into the kind they are
    written as.  Raises ``TypeError`` for a type no kind holds and ``ValueError`` for a
    non-finite float."""
    t = type(value)
    if value is None:
        return "null", None
    if value is ABSENT:
        return "absent", ABSENT
    if t is int:
        return "int", value
    if t is str:
        return "str", value
    if t is bytes:
        return "bytes", value
    if t is float:
        if not math.isfinite(value):
            raise ValueError(f"a raw float must be finite, not {value!r}")
        return "float", value
    if t is decimal.Decimal:
        return "decimal", value
    if isinstance(value, bool):
        return "int", int(value)
    if isinstance(value, RawDate):
        return "date", value
    if isinstance(value, RawDateTime):
        return "datetime", value
    if isinstance(value, RawTime):
        return "time", value
    if isinstance(value, RawJson):
        return "json", value
    if isinstance(value, str):
        return "str", str(value)
    if isinstance(value, int):
        return "int", int(value)
    if isinstance(value, float):
        return canonical(float(value))
    if isinstance(value, (bytearray, memoryview)):
        return "bytes", bytes(value)
    if isinstance(value, decimal.Decimal):
        return "decimal", value
    if isinstance(value, _dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(_UTC).replace(tzinfo=None)
        return "datetime", value
    if isinstance(value, _dt.date):
        return "date", value
    if isinstance(value, _dt.timedelta):
        return "time", value
    if isinstance(value, _dt.time):
        return "time", _dt.timedelta(hours=value.hour, minutes=value.minute,
                                     seconds=value.second, microseconds=value.microsecond)
    if isinstance(value, (set, frozenset)):
        return "str", _set_text(value)
    if isinstance(value, (dict, list, tuple)):
        return "json", json.dumps(value, ensure_ascii=False, default=_json_default)
    tag, text = getattr(value, "tag", None), getattr(value, "text", None)
    if isinstance(tag, str) and isinstance(text, str) and tag in TAGS:
        return canonical(from_payload(TAGS[tag], text))
    raise TypeError(f"{t.__name__} is not a raw value kind ({', '.join(KINDS)})")


def kind_of(value: Any) -> str:
    """The kind of a Python raw value (one of ``KINDS``)."""
    return canonical(value)[0]


def _json_default(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (_dt.date, _dt.datetime, _dt.time)):
        return value.isoformat()
    raise TypeError(f"not JSON serialisable: {value!r}")


def _payload(kind: str, value: Any) -> str:
    if kind == "bytes":
        return base64.b64encode(value).decode("ascii")
    if kind == "decimal":
        return format(value, "f")
    if kind == "date":
        return value if isinstance(value, str) else date_text(value)
    if kind == "datetime":
        return value if isinstance(value, str) else datetime_text(value)
    if kind == "time":
        return value if isinstance(value, str) else time_text(value)
    if kind == "json":
        return value
    raise AssertionError(kind)


def _ambiguous(text: str) -> bool:
    return text.startswith('{"$') or (text[:1] in NUMBER_START and NUMBER.match(text) is not None)


#: the first characters a JSON number's text can have
NUMBER_START = frozenset("-0123456789")


# --------------------------------------------------------------------------------------------
# JSON
# --------------------------------------------------------------------------------------------


def encode_json(value: Any) -> Any:
    """The JSON-ready encoding of one raw value (``None``, ``int``, ``float``, ``str`` or a
    one-key tag ``dict``); see the module docstring.  Raises ``TypeError`` / ``ValueError``
    for values no kind holds."""
    kind, v = canonical(value)
    if kind in ("null", "int", "float"):
        return v
    if kind == "str":
        return {"$s": v} if _ambiguous(v) else v
    if kind == "absent":
        return {"$absent": True}
    return {_KIND_TAG[kind]: _payload(kind, v)}


def decode_json(value: Any) -> Any:
    """Inverse of ``encode_json``: JSON-decoded data → Python raw value.  Tags become
    ``bytes``, ``Decimal``, ``date``/``datetime``/``timedelta`` (``RawDate``/``RawDateTime``/
    ``RawTime`` text where the text is not a valid value of the Python type).  Raises
    ``ValueError`` for an unknown tag or a malformed payload."""
    if value is None or type(value) in (int, float, str, bool):
        return int(value) if type(value) is bool else value
    if isinstance(value, dict) and len(value) == 1:
        (tag, payload), = value.items()
        if tag == "$absent":
            if payload is not True:
                raise ValueError(f"the absent marker is {{\"$absent\": true}}, not {value!r}")
            return ABSENT
        kind = TAGS.get(tag)
        if kind is None or not isinstance(payload, str):
            raise ValueError(f"unknown raw value tag {value!r}")
        return from_payload(kind, payload)
    raise ValueError(f"not an encoded raw value: {value!r}")


_DATE_RX = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2})$")
_DT_RX = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,6}))?$")
_TIME_RX = re.compile(r"^(-)?([0-9]+):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,6}))?$")


def from_payload(kind: str, payload: str) -> Any:
    """The raw value of a tagged value (``{"$tag": payload}``) of ``kind`` (``TAGS[tag]``) from its
    ``payload`` text.  Raises ``ValueError`` (or ``TypeError``, ``KeyError``, ``OverflowError``)
    for a payload that is not one of that kind."""
    if kind == "str":
        return payload
    if kind == "bytes":
        try:
            return base64.b64decode(payload, validate=True)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"invalid base64 in raw value: {payload!r}") from exc
    if kind == "decimal":
        try:
            return decimal.Decimal(payload)
        except decimal.InvalidOperation as exc:
            raise ValueError(f"invalid decimal in raw value: {payload!r}") from exc
    if kind == "date":
        m = _DATE_RX.match(payload)
        try:
            return _dt.date(int(m[1]), int(m[2]), int(m[3])) if m else RawDate(payload)
        except ValueError:
            return RawDate(payload)
    if kind == "datetime":
        m = _DT_RX.match(payload)
        try:
            if m:
                us = int((m[7] or "").ljust(6, "0"))
                return _dt.datetime(int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]), int(m[6]), us)
        except ValueError:
            pass
        return RawDateTime(payload)
    if kind == "json":
        return RawJson(payload)
    if kind == "time":
        m = _TIME_RX.match(payload)
        if not m or int(m[3]) > 59 or int(m[4]) > 59:
            return RawTime(payload)
        us = int((m[5] or "").ljust(6, "0"))
        t = _dt.timedelta(hours=int(m[2]), minutes=int(m[3]), seconds=int(m[4]), microseconds=us)
        return -t if m[1] else t
    raise AssertionError(kind)


# --------------------------------------------------------------------------------------------
# Text form (the elements of the array<string> the Spark converter reads)
# --------------------------------------------------------------------------------------------


def text_form(value: Any) -> str | None:
    """The text form of one raw value (``None`` for null); see the module docstring."""
    kind, v = canonical(value)
    if kind == "null":
        return None
    if kind == "absent":
        return ABSENT_TEXT
    if kind == "int":
        return str(v)
    if kind == "float":
        return repr(v)
    if kind == "str":
        return json.dumps({"$s": v}, ensure_ascii=False, separators=_COMPACT) if _ambiguous(v) else v
    if kind == "json":
        return json.dumps({"$json": v}, ensure_ascii=False, separators=_COMPACT)
    return '{"' + _KIND_TAG[kind] + '":"' + _payload(kind, v) + '"}'


def from_text(text: str | None) -> Any:
    """Inverse of ``text_form`` (up to the kind: ``"12"`` is the int 12, ``"1.5"`` the float
    1.5).  Raises ``ValueError`` for an unknown tag."""
    if text is None:
        return None
    if text.startswith('{"$'):
        try:
            obj = json.loads(text)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            return decode_json(obj)
        return text
    if text[:1] in NUMBER_START and NUMBER.match(text):
        return int(text) if _INT.match(text) else float(text)
    return text


def encode_row(values: Iterable[Any] | None) -> list[Any] | None:
    """``encode_json`` of each value (``None`` stays ``None``: no image)."""
    return None if values is None else [encode_json(v) for v in values]


def decode_row(values: Iterable[Any] | None) -> list[Any] | None:
    """``decode_json`` of each value."""
    return None if values is None else [decode_json(v) for v in values]


def text_row(values: Iterable[Any] | None) -> list[str | None] | None:
    """``text_form`` of each value: a row as ``RowConverter.columns`` reads it."""
    return None if values is None else [text_form(v) for v in values]
