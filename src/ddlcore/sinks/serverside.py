"""Values the server changes without writing a row event (docs/tables.md, "Values the server
changes without row events").

Owns: which of them ddlcore can compute from the DDL alone, and how: the constant a
``ADD COLUMN ... DEFAULT`` gives every existing row, and whether a type change converts every
existing value deterministically.  Must not know: Spark, files.

Rules (MySQL 8.0 / MariaDB 10.11 manuals, "ALTER TABLE" and "Type Conversion in Expression
Evaluation"; PostgreSQL 15, "ALTER TABLE": ``ADD COLUMN`` with a non-volatile default stores it
for existing rows, ``ALTER COLUMN TYPE`` without ``USING`` applies the type's assignment cast):

* a default that is a number, a quoted string (PostgreSQL's ``'x'::type`` too) or ``NULL`` is
  that constant; ``CURRENT_TIMESTAMP`` / ``now()`` (any spelling and precision) is the time of
  the DDL event (its ``ts``); any other expression is not known;
* a conversion is known when it is exact in both servers and in Spark's cast: integers and
  decimals to a wider decimal or integer, numbers (but floating point) and dates to text,
  a date to a timestamp, text to longer text; everything else (narrowing, text to numbers, a
  ``USING`` expression, floating point to text) is not known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Default", "default_of", "conversion_known"]

_NUMBER = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$")
_QUOTED = re.compile(r"^'((?:[^']|'')*)'(::[A-Za-z_ \"().,\[\]0-9]+)?$")
_NOW = re.compile(r"^(current_timestamp|now|localtimestamp|localtime)(\s*\(\s*\d*\s*\))?$", re.IGNORECASE)


@dataclass(frozen=True)
class Default:
    """What an added column holds in the rows that existed: ``known``; ``value`` (text to cast
    to the field's type, ``None``: NULL) or ``ts`` (the DDL's time, ms since the epoch)."""

    known: bool
    value: str | None = None
    ts: int | None = None


def default_of(column_default: str | None, ts: int | None) -> Default:
    """The ``Default`` of a column added with ``column_default`` (the model's text) by a DDL
    event at ``ts``."""
    if column_default is None or column_default.upper() == "NULL":
        return Default(True)
    text = column_default.strip()
    if _NUMBER.match(text):
        return Default(True, text)
    m = _QUOTED.match(text)
    if m:
        return Default(True, m.group(1).replace("''", "'"))
    if _NOW.match(text) and ts is not None:
        return Default(True, ts=ts)
    return Default(False)


def _kind(spec: Any) -> str:
    return spec[0] if isinstance(spec, list) else spec


def conversion_known(old: Any, new: Any) -> bool:
    """Whether every value of Iceberg type spec ``old`` converts exactly to ``new`` (module
    docstring)."""
    o, n = _kind(old), _kind(new)
    if n == "string":
        return o in ("int", "long", "decimal", "date", "string")
    if o in ("int", "long") and n == "decimal":
        return new[1] - new[2] >= (10 if o == "int" else 19)
    if o == "decimal" and n == "decimal":
        return new[2] >= old[2] and new[1] - new[2] >= old[1] - old[2]
    if o == "int" and n == "long":
        return True
    if o == "date" and n in ("timestamp", "timestamptz"):
        return True
    return False
