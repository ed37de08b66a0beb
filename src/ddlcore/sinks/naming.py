"""Iceberg names of a source table's two tables (docs/tables.md, "Naming").

Owns: the namespace and table names.  Must not know: catalogs.

Namespace: ``(<database>,)`` for MySQL, MariaDB and TiDB, ``(<database>, <schema>)`` for
PostgreSQL; table: ``<table>__changes`` (every row event) and ``<table>`` (the current state).
A dropped table whose name another table takes by a rename keeps its two tables as
``<table>__dropped<seq>__changes`` and ``<table>__dropped<seq>`` (``seq``: its ``DROP``'s).
Every component is the source name escaped as ``ddlcore.spark.layout.escape_name`` does
(characters outside ``[A-Za-z0-9_-]`` and a leading ``_`` as ``%XX``) and, in addition, every
``_`` that follows a ``_`` as ``%5F``: an escaped name never contains ``__``, so no source
table's name can be another's ``__changes`` name, and two different source names never give the
same component.
"""

from __future__ import annotations

from ..model import TableId
from ..spark.layout import escape_name

__all__ = ["component", "namespace", "changes_name", "current_name", "dropped_names", "CHANGES_SUFFIX"]

CHANGES_SUFFIX = "__changes"
DROPPED_INFIX = "__dropped"


def component(name: str | None) -> str:
    """The escaped Iceberg name component of a source name (module docstring)."""
    text = escape_name(name)
    out = []
    for ch in text:
        out.append("%5F" if ch == "_" and out and out[-1].endswith("_") else ch)
    return "".join(out)


def namespace(tid: TableId) -> tuple[str, ...]:
    """The Iceberg namespace of a source table."""
    return (component(tid.database),) + ((component(tid.schema),) if tid.schema is not None else ())


def changes_name(tid: TableId) -> tuple[str, ...]:
    """The identifier of the changes table (namespace + name)."""
    return namespace(tid) + (component(tid.name) + CHANGES_SUFFIX,)


def current_name(tid: TableId) -> tuple[str, ...]:
    """The identifier of the current-state table."""
    return namespace(tid) + (component(tid.name),)


def dropped_names(tid: TableId, seq: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The identifiers (changes, current state) a dropped table's two tables move to when a
    rename gives its name to another table; ``seq``: the ``DROP``'s (module docstring)."""
    base = component(tid.name) + f"{DROPPED_INFIX}{seq}"
    return namespace(tid) + (base + CHANGES_SUFFIX,), namespace(tid) + (base,)
