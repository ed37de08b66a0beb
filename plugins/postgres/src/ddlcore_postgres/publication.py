"""What a publication streams, and whether that changed since a capture's output began.

Owns: ``Publication`` — a publication's definition as the catalog holds it (``pg_publication``:
``puballtables`` and the ``publish`` actions; ``pg_publication_rel``: its tables, with their
row filter and column list; ``pg_publication_namespace``: its ``TABLES IN SCHEMA``), read with
``read``, kept in the capture's checkpoint (``to_json`` / ``from_json``) and compared with
``changes``.  Must not know: the replication stream, the change log.

Why: pgoutput filters the stream by the publication *as it is when each change is decoded*.
A table added to the publication mid-stream has no rows before that point in the change log (nor
in the snapshot, which reads the publication's tables), a table removed stops streaming, a
``publish`` action removed drops those changes, a row filter or column list changed changes
the rows and columns sent — each leaves the output different from the server, with nothing in
the stream to say so.  The capture records the definition in force when its output began and
stops (``CaptureError``) when it differs (``changes``).  A member table dropped since is not a
change (its DROP is in the change log).  PostgreSQL 15 manual: ``CREATE PUBLICATION``,
``ALTER PUBLICATION``, 53.17 ``pg_publication``, 53.18 ``pg_publication_namespace``, 53.19
``pg_publication_rel``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Publication", "read", "changes", "existing_oids"]

#: ``pg_publication`` columns → the ``publish`` action they stand for
ACTIONS = {"pubinsert": "insert", "pubupdate": "update", "pubdelete": "delete", "pubtruncate": "truncate"}

_TABLES = """
SELECT pr.prrelid, n.nspname || '.' || c.relname,
       coalesce(pg_catalog.pg_get_expr(pr.prqual, pr.prrelid), ''), coalesce(pr.prattrs::text, '')
  FROM pg_catalog.pg_publication_rel pr
  JOIN pg_catalog.pg_class c ON c.oid = pr.prrelid
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE pr.prpubid = %s"""
_SCHEMAS = """
SELECT n.nspname FROM pg_catalog.pg_publication_namespace pn
  JOIN pg_catalog.pg_namespace n ON n.oid = pn.pnnspid WHERE pn.pnpubid = %s"""


@dataclass(frozen=True)
class Publication:
    """A publication's definition: ``all_tables`` (``FOR ALL TABLES``), ``actions`` (the
    ``publish`` list, sorted), ``via_root`` (``publish_via_partition_root``), ``tables``
    (``(oid, "schema.table", row filter, column numbers)`` of its ``FOR TABLE`` members, by
    oid), ``schemas`` (its ``TABLES IN SCHEMA``, sorted)."""

    all_tables: bool
    actions: tuple[str, ...]
    via_root: bool
    tables: tuple[tuple[int, str, str, str], ...]
    schemas: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"all_tables": self.all_tables, "actions": list(self.actions), "via_root": self.via_root,
                "tables": [list(t) for t in self.tables], "schemas": list(self.schemas)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Publication":
        return cls(bool(d["all_tables"]), tuple(d["actions"]), bool(d["via_root"]),
                   tuple((int(t[0]), str(t[1]), str(t[2]), str(t[3])) for t in d["tables"]), tuple(d["schemas"]))


def read(conn: Any, name: str) -> Publication | None:
    """The definition of publication ``name`` (``None`` when it does not exist), read over a
    DB-API connection (psycopg2) in the caller's transaction."""
    with conn.cursor() as cur:
        cur.execute(f"SELECT oid, puballtables, pubviaroot, {', '.join(ACTIONS)} "
                    f"FROM pg_catalog.pg_publication WHERE pubname = %s", (name,))
        row = cur.fetchone()
        if row is None:
            return None
        oid, all_tables, via_root, *flags = row
        actions = tuple(sorted(action for action, on in zip(ACTIONS.values(), flags) if on))
        cur.execute(_TABLES, (oid,))
        tables = tuple(sorted((int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in cur.fetchall()))
        cur.execute(_SCHEMAS, (oid,))
        schemas = tuple(sorted(str(r[0]) for r in cur.fetchall()))
    return Publication(bool(all_tables), actions, bool(via_root), tables, schemas)


def changes(recorded: Publication, current: Publication, existing: set[int]) -> list[str]:
    """What differs between the ``recorded`` definition and the ``current`` one, as phrases
    (empty: nothing that changes what is streamed).  ``existing``: the oids of ``recorded``'s
    tables that still exist — a member dropped since left the publication with its DROP."""
    out = []
    for what, old, new in (("FOR ALL TABLES", recorded.all_tables, current.all_tables),
                           ("publish", ", ".join(recorded.actions), ", ".join(current.actions)),
                           ("publish_via_partition_root", recorded.via_root, current.via_root),
                           ("TABLES IN SCHEMA", ", ".join(recorded.schemas), ", ".join(current.schemas))):
        if old != new:
            out.append(f"{what} was {_text(old)}, is {_text(new)}")
    old_tables = {t[0]: t for t in recorded.tables if t[0] in existing}
    new_tables = {t[0]: t for t in current.tables}
    for oid in sorted(old_tables.keys() - new_tables.keys()):
        out.append(f"table {old_tables[oid][1]} removed")
    for oid in sorted(new_tables.keys() - old_tables.keys()):
        out.append(f"table {new_tables[oid][1]} added")
    for oid in sorted(old_tables.keys() & new_tables.keys()):
        if old_tables[oid][2:] != new_tables[oid][2:]:
            out.append(f"the row filter or column list of table {new_tables[oid][1]} changed")
    return out


def _text(value: bool | str) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return value or "none"


def existing_oids(conn: Any, oids: list[int]) -> set[int]:
    """Those of ``oids`` that are tables in ``pg_class`` now."""
    if not oids:
        return set()
    with conn.cursor() as cur:
        cur.execute("SELECT oid::int8 FROM pg_catalog.pg_class WHERE oid = ANY(%s::oid[])", (list(oids),))
        return {int(r[0]) for r in cur.fetchall()}
