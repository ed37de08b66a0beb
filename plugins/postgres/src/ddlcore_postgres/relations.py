"""Row images from pgoutput tuples, aligned with the schema history's table, and drift checks.

Owns: ``Layout`` — for one pgoutput Relation message and the history's table at the current
``seq``, where each column of the table's row image comes from in the relation's tuples (or
that it is absent), which relation columns form the replica identity key, and what disagrees
(drift); building ``before`` / ``after`` images from decoded tuples.  Must not know: the
replication connection, the change-log writer.

Why a layout: a change-log row image holds one raw value per column of the table version in
force, in ordinal order (docs/changelog.md).  pgoutput's tuples hold the *published* columns:
PostgreSQL 15 leaves out generated columns (``logicalrep_write_tuple`` skips ``attgenerated``)
and columns outside a publication's column list (``CREATE PUBLICATION ... FOR TABLE t (a, b)``).
Those are written ``{"$absent": true}``.

Drift (the Relation message contradicts the history at this ``seq``: DDL the event trigger did
not see — triggers disabled, ``--snapshot never`` started after the DDL — or a wrong model):
column names not in the table, another order, a non-generated column of the table missing
from the stream, or another type (``format_type(type_oid, typmod)`` of a built-in type against
``column_type``; the Type message's name of a user type against ``udt_schema.udt_name``).  The
rows are then written as the stream has them (its columns, in its order: nothing the stream
carried is left out) and carry the drift as their ``quarantine`` reason.

``before`` by replica identity (PostgreSQL 15 manual 55.9 Update/Delete; ``ALTER TABLE ...
REPLICA IDENTITY``):

==========================  ==============================================================
Update/Delete carries       ``before`` holds
==========================  ==============================================================
``O`` (``FULL``)            every published column of the old row
``K`` (``DEFAULT`` /        the old key columns; every other column absent (the server sends
``USING INDEX``)            them as ``n``, which is not a NULL)
no old tuple (an Update     the key columns, equal to the new row's (the server leaves the
that kept its key)          old key out only when it did not change); every other column
                            absent.  ``NOTHING``: every column absent
==========================  ==============================================================

An unchanged TOASTed value (``u``) is absent too, in either image.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from ddlcore import raw
from ddlcore.model import Table

from .pgoutput import UNCHANGED, Relation

__all__ = ["Layout", "build_layout", "FIRST_USER_OID"]

#: OIDs below this are built-in (``FirstNormalObjectId``, ``access/transam.h``): their names
#: and ``format_type`` never change
FIRST_USER_OID = 16384

_ABSENT_JSON = {"$absent": True}


def _raw(v: Any) -> Any:
    """A decoded tuple value → its change-log JSON (``ddlcore.raw``): ``None`` stays null, an
    unchanged TOASTed value is absent, text is the text (``{"$s": ...}`` when it reads as a
    number)."""
    if v is None:
        return None
    if v is UNCHANGED:
        return _ABSENT_JSON
    return raw.encode_json(v)


@dataclass(frozen=True)
class Layout:
    """How one relation's tuples become row images.

    ``sources``: per image position (the table's columns, or the relation's when the history
    has no table) the index into the relation tuple, or ``-1`` (absent).  ``key``: the tuple
    indexes of the replica identity key.  ``drift``: the disagreements as text (empty: none).
    ``known``: whether the history had the table."""

    sources: tuple[int, ...]
    key: frozenset[int]
    drift: tuple[str, ...]
    known: bool

    @property
    def quarantine(self) -> str | None:
        """The ``quarantine`` reason for this relation's rows (``None`` without drift)."""
        return ("drift: " + "; ".join(self.drift)) if self.drift else None

    def image(self, values: Sequence[Any]) -> list:
        """A full tuple (``N`` or ``O``) → the row image."""
        return [_ABSENT_JSON if i < 0 or i >= len(values) else _raw(values[i]) for i in self.sources]

    def key_image(self, values: Sequence[Any]) -> list:
        """The key columns of ``values`` (an ``K`` tuple, or the new tuple of an Update that
        kept its key); every other column absent."""
        key = self.key
        return [_raw(values[i]) if i in key and 0 <= i < len(values) else _ABSENT_JSON for i in self.sources]


def build_layout(rel: Relation, table: Table | None, *, type_name: Callable[[int, int], str | None],
                 user_types: Mapping[int, tuple[str, str]], where: str,
                 column_list: frozenset[str] | None = None) -> Layout:
    """The layout of ``rel`` against ``table`` (the history's table at this seq, or ``None``).

    ``type_name(oid, typmod)``: ``format_type`` of a built-in type (``None`` when unknown);
    ``user_types``: the Type messages seen (oid → (namespace, name)); ``where``: text naming
    the position, for the drift messages; ``column_list``: the publication's explicit column
    list for this table (``None``: every column is published) — a column outside it is absent,
    not drift."""
    key = frozenset(i for i, c in enumerate(rel.columns) if c.key)
    name = f"{rel.namespace}.{rel.name}"
    if table is None:
        return Layout(tuple(range(len(rel.columns))), key, (), False)
    index = {c.name: i for i, c in enumerate(rel.columns)}
    drift: list[str] = []
    sources: list[int] = []
    for col in table.columns:
        i = index.get(col.name, -1)
        sources.append(i)
        if i < 0:
            if not col.is_generated and (column_list is None or col.name in column_list):
                drift.append(f"schema drift in {name} column {col.name} at {where}: the history's table has "
                             f"it ({col.column_type}) but the stream does not (a DROP COLUMN the history did "
                             f"not see)")
            continue
        rc = rel.columns[i]
        if rc.type_oid < FIRST_USER_OID:
            got = type_name(rc.type_oid, rc.typmod)
            if got is not None and got != col.column_type:
                drift.append(f"schema drift in {name} column {col.name} (type) at {where}: the stream has "
                             f"{got}, the history has {col.column_type}")
        elif col.domain_name is None:
            named = user_types.get(rc.type_oid)
            if named is not None and (named[0], named[1]) != (col.udt_schema, col.udt_name):
                drift.append(f"schema drift in {name} column {col.name} (type) at {where}: the stream has "
                             f"{named[0]}.{named[1]}, the history has {col.udt_schema}.{col.udt_name}")
    known = {c.name for c in table.columns}
    extra = [c.name for c in rel.columns if c.name not in known]
    if extra:
        drift.append(f"schema drift in {name} at {where}: the stream has column(s) {', '.join(extra)} that the "
                     f"history's table ({', '.join(table.column_names)}) does not")
    order = [i for i in sources if i >= 0]
    if order != sorted(order):
        drift.append(f"schema drift in {name} at {where}: the stream's column order "
                     f"({', '.join(c.name for c in rel.columns)}) is not the history's "
                     f"({', '.join(table.column_names)})")
    if drift:  # written as the stream has them: a quarantined row keeps every value it carried
        return Layout(tuple(range(len(rel.columns))), key, tuple(drift), True)
    return Layout(tuple(sources), key, (), True)
