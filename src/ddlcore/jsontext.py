"""JSON text as ddlcore reads and writes it: the standard library's results, at msgspec's speed.

Owns: ``loads`` (what ``json.loads`` returns or raises, for every input) and ``dumps`` (the
bytes of ``json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)``
encoded as UTF-8: the change log's line format, docs/changelog.md).  Must not know: events,
change logs, any source.

The fast path is msgspec (``msgspec.json``), used only where its results are the standard
library's, byte for byte; everything else goes through ``json``:

* Reading: msgspec decodes integers of any size exactly, floats correctly rounded, the last
  of duplicate keys, as ``json`` does.  What it refuses — ``NaN`` / ``Infinity`` (which
  ``json`` accepts), a lone surrogate escape, a number beyond a double, malformed text, bytes
  that are not UTF-8 — is handed to ``json``, whose value or ``ValueError`` (with its message)
  is the result.
* Writing: msgspec escapes strings as ``json`` does with ``ensure_ascii=False`` (``\\"``,
  ``\\\\``, ``\\n`` ..., ``\\u00XX`` for the other control characters, everything else as
  UTF-8), but writes floats in its own notation (``1e16`` for ``1e+16``), ``NaN`` as ``null``
  and encodes types ``json`` refuses (``Decimal``, ``datetime``, dataclasses).  So ``dumps``
  uses it only for a value the caller declares *plain* (``plain=True``): dicts with ``str``
  keys, lists, ``str``, ``int``, ``bool`` and ``None``, no float (or a ``msgspec.Struct`` of
  such values, written as the dict of its fields in order: ``ddlcore.changelog.event_line``);
  anything msgspec cannot encode still falls back to ``json``.

Both equivalences are tested on generated values (``tests/core/test_jsontext.py``).
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

__all__ = ["loads", "loads_lines", "dumps", "dumps_plain"]

_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode
#: the change log's encoder (``ddlcore.changelog``): compact, UTF-8 text, no NaN
_std_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def loads(data: bytes | str) -> Any:
    """``json.loads`` of ``data`` (bytes: of their UTF-8 text): the same value, or the same
    ``ValueError`` (``JSONDecodeError``; ``UnicodeDecodeError`` for bytes that are not UTF-8)."""
    try:
        return _decode(data)
    except ValueError:  # msgspec.DecodeError, or a UnicodeError: the standard library's answer
        return json.loads(data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data)


def loads_lines(lines: list[bytes]) -> list[Any] | None:
    """``[loads(line) for line in lines]`` when msgspec decodes every line (no Python call per
    line); ``None`` when one of them needs the standard library or is not JSON (a blank line
    included): then ``loads`` each line."""
    try:
        return [_decode(line) for line in lines]
    except ValueError:
        return None


def dumps(obj: Any, *, plain: bool = False) -> bytes:
    """``json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)`` as UTF-8
    bytes, raising what it raises (``TypeError``, ``ValueError``, ``UnicodeEncodeError``).
    ``plain``: the caller guarantees ``obj`` holds only dicts with ``str`` keys, lists, ``str``,
    ``int``, ``bool`` and ``None`` (module docstring): then msgspec writes it."""
    if plain:
        line = dumps_plain(obj)
        if line is not None:
            return line
    return _std_dumps(obj).encode("utf-8")


def dumps_plain(obj: Any) -> bytes | None:
    """``dumps(obj)`` of a *plain* value (``dumps``: the caller's guarantee), by msgspec;
    ``None`` when msgspec cannot write it (then ``dumps`` it: the standard library writes it or
    raises its own error)."""
    try:
        return _encode(obj)
    except (msgspec.EncodeError, TypeError, ValueError, UnicodeError, OverflowError):
        return None
