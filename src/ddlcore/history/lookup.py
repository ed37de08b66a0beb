"""Finding a table id a user typed among the ids a history holds, the way the dialect resolves
names: the parts given are the last parts of the id (``items`` and ``public.items`` both name
``shop.public.items``: the database, then the schema, default as in the DDL), an unqualified name
goes through the history's ``search_path`` in order (PostgreSQL 15 manual 5.9.3 "The Schema
Search Path"), and names compare in lower case where the history folds them
(``lower_case_table_names``).

Owns: ``resolve_table_id``.  Must not know: click, any dialect by name.
"""

from __future__ import annotations

import difflib
from typing import Iterable, Sequence

from ..model import TableId

__all__ = ["resolve_table_id", "TableNotFound"]


class TableNotFound(LookupError):
    """No id, or several, fit the text; the message is one line and names the closest ids."""


def _parts(tid: TableId) -> tuple[str, ...]:
    return tuple(p for p in (tid.database, tid.schema, tid.name) if p is not None)


def resolve_table_id(text: str, ids: Iterable[TableId], *, fold: bool = False,
                     search_path: Sequence[str] = ()) -> TableId:
    """The one id of ``ids`` that ``text`` (``name``, ``schema.name``, ``db.name`` or
    ``db.schema.name``) names: an exact match, else the ids whose last parts are ``text``'s
    (compared in lower case with ``fold``); several of them with an unqualified ``text`` are
    decided by ``search_path`` (the first schema on it that has the table).  Raises
    ``TableNotFound`` naming the candidates (ambiguous) or the closest ids (none fits)."""
    all_ids = list(ids)
    want = tuple(text.split("."))
    if not text or any(p == "" for p in want) or len(want) > 3:
        raise TableNotFound(f"not a table name: {text!r} (expected name, schema.name, db.name or db.schema.name)")
    norm = (lambda s: s.lower()) if fold else (lambda s: s)
    key = tuple(norm(p) for p in want)
    exact = [t for t in all_ids if tuple(map(norm, _parts(t))) == key]
    if len(exact) == 1:
        return exact[0]
    matches = exact or [t for t in all_ids if tuple(map(norm, _parts(t)))[-len(key):] == key]
    if len(matches) > 1 and len(want) == 1 and search_path:
        for schema in search_path:
            on_path = [t for t in matches if t.schema is not None and norm(t.schema) == norm(schema)]
            if len(on_path) == 1:
                return on_path[0]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise TableNotFound(f"{text} names several tables: {', '.join(map(str, matches))}; give the whole id")
    names = [str(t) for t in all_ids]
    close = difflib.get_close_matches(text, names, n=3, cutoff=0.5)
    close += [n for n in names if n not in close and norm(n.rsplit(".", 1)[-1]) == key[-1]][:3 - len(close)]
    hint = f"; closest: {', '.join(close)}" if close else f" ({len(names)} table id(s) in it)"
    raise TableNotFound(f"the history has no table {text}{hint}")
