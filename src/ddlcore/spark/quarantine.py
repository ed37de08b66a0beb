"""The quarantine of ``ddlcore run``: its records, their reasons, and the staged partitions of
rows that are not a table version's.

Owns: ``QuarantineRecord`` (one ``OUT/_quarantine/*.json`` line: ``seq, position, op, database,
schema, table, reason, event``, every key present even when null), the reasons the tagging and
the conversion give (one text on every execution path: Spark's and the driver's), the summary's
key of a reason (``short_reason``), and ``PartKind``: what a staged row that is not a table
version's is (the staged ``_part`` column holds a version's index, ``>= 0``, or one of these).
Must not know: Spark (the Spark path builds the same texts in the JVM from these constants).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from enum import IntEnum

__all__ = ["QuarantineRecord", "QUARANTINE_FIELDS", "QUARANTINE_SCHEMA", "PartKind", "STMT_REASON",
           "STMT_TEXT_CHARS", "CAPTURE_REASON", "UNKNOWN_TABLE_REASON", "CANNOT_CONVERT", "conversion_reason",
           "short_reason"]

#: the fields of a quarantine record, in their order (the JSON keys and ``QUARANTINE_SCHEMA``'s)
QUARANTINE_FIELDS = ("seq", "position", "op", "database", "schema", "table", "reason", "event")
#: the same as a Spark DDL field list
QUARANTINE_SCHEMA = ("seq LONG, position STRING, op STRING, database STRING, `schema` STRING, "
                     "`table` STRING, reason STRING, event STRING")


@dataclass(frozen=True)
class QuarantineRecord:
    """An event that could not be interpreted: its ``seq`` (``None`` for a line without one),
    ``position``, ``op``, ``database``, ``schema``, ``table`` (the table's name) as the event
    gives them, the ``reason``, and ``event``: the event's raw text."""

    seq: int | None
    position: str | None
    op: str | None
    database: str | None
    schema: str | None
    table: str | None
    reason: str
    event: str | None

    def as_tuple(self) -> tuple:
        """The values in ``QUARANTINE_FIELDS``' order (a row of ``QUARANTINE_SCHEMA``)."""
        return dataclasses.astuple(self)

    def to_line(self) -> str:
        """The record as its JSON line (no newline), every key present."""
        return json.dumps(dict(zip(QUARANTINE_FIELDS, self.as_tuple())), ensure_ascii=False, separators=(",", ":"))

    def by_seq(self) -> tuple:
        """The sort key of the quarantine's order: by ``seq``, those without one first (Spark's
        ``asc_nulls_first``)."""
        return (self.seq is not None, self.seq or 0)


class PartKind(IntEnum):
    """A staged row that is not a table version's (its ``_part``; a version's index is ``>= 0``):
    a malformed line (``INVALID``), a row of a table with no version in force
    (``UNKNOWN_TABLE``), of a blocked version or one whose columns collide with the pipeline's
    (``BLOCKED``), statement-format DML (``STATEMENT``), a row the capture marked (``CAPTURE``).
    The values are the staged directories' names (``_grp=-2``) and never change."""

    UNKNOWN_TABLE = -1
    INVALID = -2
    BLOCKED = -3
    STATEMENT = -4
    CAPTURE = -5


#: the quarantine reasons the tagging (``tagging.tag``) and the conversion build: a statement-format DML event
#: (then its first ``STMT_TEXT_CHARS`` characters), a row the capture marked (then the
#: capture's reason), a row of a table with no version in force (the table's dotted name
#: between the two parts), a row that cannot be converted (``conversion_reason``)
STMT_REASON, STMT_TEXT_CHARS = "statement-format DML: the change log does not carry its rows: ", 300
CAPTURE_REASON = "capture: "
UNKNOWN_TABLE_REASON = ("unknown table: no schema of ", " in force at this seq")
CANNOT_CONVERT = "cannot convert: "


def conversion_reason(errors: list[tuple[str | None, str | None, str | None]]) -> str:
    """The quarantine reason of a row that cannot be converted, from its errors ``(column,
    raw value's text form, reason)`` (column ``None``: the row's arity), after image first:
    ``cannot convert: status (9): enum index out of range; row (3): expected 4 raw values, got
    3``.  The Spark path builds the same text in the JVM (``ddlcore.spark.pipeline``)."""
    return CANNOT_CONVERT + "; ".join(f"{'row' if c is None else c} ({'null' if v is None else v}): {r or ''}"
                                      for c, v, r in errors)


from ..reasons import short_reason  # noqa: E402,F401  (ddlcore status, without pyspark, groups by it too)
