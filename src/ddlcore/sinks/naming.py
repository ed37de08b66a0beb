"""Iceberg names of a source table's two tables (docs/tables.md, "Naming").

Owns: the namespace and table names.  Must not know: catalogs.

Namespace: ``(<database>,)`` for MySQL, MariaDB and TiDB, ``(<database>, <schema>)`` for
PostgreSQL; table: ``<table>__changes`` (every row event) and ``<table>`` (the current state).
Every component is the source name escaped as ``ddlcore.spark.layout.escape_name`` does
(characters outside ``[A-Za-z0-9_-]`` and a leading ``_`` as ``%XX``) and, in addition, every
``_`` that follows a ``_`` as ``%5F``: an escaped name never contains ``__``, so no source
table's name can be another's ``__changes`` name, and two different source names never give the
same component.
"""

from __future__ import annotations

from ..model import TableId
from ..spark.layout import escape_name

__all__ = ["component", "namespace", "changes_name", "current_name", "CHANGES_SUFFIX"]

CHANGES_SUFFIX = "__changes"


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
