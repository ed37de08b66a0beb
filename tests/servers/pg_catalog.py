"""The PostgreSQL oracle: replay statements in a real PostgreSQL 15 and read back every table
in the model's shape.

The server's side of the comparison is ``ddlcore_postgres.catalog.table_from_description`` over
``ddlcore.describe_table(oid)`` (the SQL the capture's event trigger uses, from
``sql/capture_install.sql``; its event triggers are dropped again, only the functions stay), read
in the replaying session so that ``format_type`` and ``pg_get_expr`` print names under the same
``search_path`` ddlcore's model ended with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from ddlcore.model import Table

__all__ = ["Replay", "replay_statements", "catalog_tables", "install_describe"]


@dataclass
class Replay:
    """What the server did with each statement: ``accepted`` texts in order, ``refused``
    ``(text, error)`` pairs."""

    accepted: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)


def install_describe(conn: Any) -> None:
    """The ``ddlcore`` schema's describing functions, without the event triggers."""
    from ddlcore_postgres.event_trigger import TRIGGERS, install_sql

    with conn.cursor() as cur:
        for name in TRIGGERS:
            cur.execute(f"DROP EVENT TRIGGER IF EXISTS {name}")
        cur.execute(install_sql())
        for name in TRIGGERS:
            cur.execute(f"DROP EVENT TRIGGER IF EXISTS {name}")


def replay_statements(conn: Any, statements: Iterable[str]) -> Replay:
    """Run each statement in autocommit mode; a refused one is recorded and skipped."""
    out = Replay()
    for text in statements:
        try:
            conn.execute(text)
        except Exception as exc:  # noqa: BLE001 - the server's verdict is the data
            out.refused.append((text, str(exc).strip().splitlines()[0]))
        else:
            out.accepted.append(text)
    return out


def catalog_tables(conn: Any, database: str | None) -> dict[tuple[str, str], Table]:
    """Every described table (not ``ddlcore``'s own) as the model, by ``(schema, name)``."""
    from ddlcore_postgres.catalog import table_from_description

    rows = conn.execute(
        "SELECT ddlcore.describe_table(c.oid) FROM pg_catalog.pg_class c "
        "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
        "WHERE ddlcore.is_described(c.oid) AND n.nspname <> 'ddlcore'").fetchall()
    out = {}
    for (doc,) in rows:
        t = table_from_description(doc, database)
        out[(t.id.schema, t.id.name)] = t
    return out
