"""Table filters: which tables a schema history versions.

Owns: the pattern language (as DeltaForge's schema loader and most CDC tools write it) and
matching a ``TableId`` against it.  Must not know: DDL, stores.

Patterns (several may be given; a table is versioned when any matches):

* ``db.table``   — one table;
* ``db.*``       — every table of a database;
* ``db.prefix%`` — ``%`` matches any run of characters (``*`` is the same), in any part;
* ``%.table``    — a table name in every database;
* ``table``      — one part: the same as ``%.table``;
* ``db.schema.table`` — three parts for dialects with schemas (PostgreSQL); a two-part pattern
  matched against an id that has a schema compares ``schema.table``.

``_`` is a literal (table names are full of underscores), unlike SQL ``LIKE``.  Names compare
case-sensitively unless the dialect folds table names (MySQL ``lower_case_table_names`` 1/2).
"""

from __future__ import annotations

import re
from typing import Iterable

from ..model import TableId

__all__ = ["TableFilter"]


def _part(p: str, flags: int) -> re.Pattern[str]:
    if p in ("*", "%"):
        return re.compile(r".*", re.DOTALL)
    rx = "".join(".*" if ch in "%*" else re.escape(ch) for ch in p)
    return re.compile(rx, flags | re.DOTALL)


class TableFilter:
    """Include-patterns over table ids (see the module docstring).  An empty filter matches
    every table.  Raises ``ValueError`` for a pattern with an empty part or more than three
    parts."""

    def __init__(self, patterns: Iterable[str] | str | None = None, *, case_sensitive: bool = True):
        if isinstance(patterns, str):
            patterns = [patterns]
        items: list[str] = []
        for p in patterns or ():
            items += [x.strip() for x in p.split(",") if x.strip()]
        self.patterns: tuple[str, ...] = tuple(items)
        self.case_sensitive = case_sensitive
        flags = 0 if case_sensitive else re.IGNORECASE
        self._compiled: list[tuple[re.Pattern[str], ...]] = []
        for p in self.patterns:
            parts = p.split(".")
            if any(x == "" for x in parts) or len(parts) > 3:
                raise ValueError(f"bad table filter {p!r}: expected db.table, db.*, db.prefix%, %.table "
                                 f"or db.schema.table")
            if len(parts) == 1:
                parts = ["%"] + parts
            self._compiled.append(tuple(_part(x, flags) for x in parts))

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def __repr__(self) -> str:
        return f"TableFilter({list(self.patterns)!r})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TableFilter) and self.patterns == other.patterns
                and self.case_sensitive == other.case_sensitive)

    def __hash__(self) -> int:
        return hash((self.patterns, self.case_sensitive))

    def matches(self, table_id: TableId) -> bool:
        """Whether ``table_id`` is selected (always ``True`` for an empty filter)."""
        if not self._compiled:
            return True
        db, schema, name = table_id.database or "", table_id.schema, table_id.name
        for parts in self._compiled:
            if len(parts) == 3:
                ok = (parts[0].fullmatch(db) and parts[1].fullmatch(schema or "")
                      and parts[2].fullmatch(name))
            else:
                first = db if schema is None else schema
                ok = parts[0].fullmatch(first) and parts[1].fullmatch(name)
            if ok:
                return True
        return False
