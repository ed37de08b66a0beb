"""The event triggers that write PostgreSQL DDL into the WAL: install, uninstall, status.

Owns: ``sql/capture_install.sql`` (the ``ddlcore`` schema: ``ddlcore.describe_table``, the
trigger functions, ``ddlcore.relations``) and the two event triggers, ``ddlcore_ddl_command_end``
(``ddl_command_end``) and ``ddlcore_sql_drop`` (``sql_drop``), both ``ENABLE ALWAYS`` so that
they fire whatever the session's ``session_replication_role``.  Must not know: the replication
stream, the change log (``capture`` reads the messages these triggers emit).

Each DDL command that creates, changes or drops a table (or a type, domain, schema, sequence,
index, view a table may depend on) emits one transactional logical decoding message with the
prefix ``MESSAGE_PREFIX`` whose content is a JSON document (``format`` 1)::

    {"format": 1, "tag": "ALTER TABLE", "query": "<current_query()>",
     "search_path": ["public"], "database": "shop",
     "commands": [{"tag": "ALTER TABLE", "object_type": "table", "schema": "public",
                   "identity": "public.orders", "in_extension": false}],
     "tables": [<ddlcore.describe_table(oid)>, ...],
     "dropped": [{"oid": 16390, "schema": "public", "name": "old"}],
     "renamed": [{"oid": 16385, "from": {"schema": "public", "name": "a"},
                  "to": {"schema": "public", "name": "b"}}],
     "error": "<SQLSTATE: message>"}          # only when describing failed

PostgreSQL 15 manual: chapter 40 "Event Triggers" (40.2 the firing matrix), 9.29 "Event
Trigger Functions", 9.27.6 ``pg_logical_emit_message``.  Creating event triggers needs a
superuser (manual, ``CREATE EVENT TRIGGER``).

Functions take a DB-API connection (psycopg2 or psycopg 3); they commit or roll back their own
transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Any

__all__ = ["MESSAGE_PREFIX", "SQL_VERSION", "TRIGGERS", "InstallStatus", "install_sql", "install",
           "uninstall", "status", "EventTriggerError"]

#: the prefix of the logical decoding messages the triggers emit
MESSAGE_PREFIX = "ddlcore"
#: ``ddlcore.capture_version()`` of ``sql/capture_install.sql``; a capture refuses another
SQL_VERSION = 2
#: event trigger name → (event, function)
TRIGGERS = {
    "ddlcore_ddl_command_end": ("ddl_command_end", "ddlcore.on_ddl_command_end()"),
    "ddlcore_sql_drop": ("sql_drop", "ddlcore.on_sql_drop()"),
}
#: ``pg_event_trigger.evtenabled`` → what it means
ENABLED = {"O": "origin and local", "D": "disabled", "R": "replica only", "A": "always"}


class EventTriggerError(RuntimeError):
    """The triggers cannot be installed or are not usable (no superuser, wrong version)."""


def install_sql() -> str:
    """The text of ``sql/capture_install.sql``."""
    return resources.files(__package__).joinpath("sql/capture_install.sql").read_text(encoding="utf-8")


@dataclass(frozen=True)
class InstallStatus:
    """What a database has: ``version`` (``ddlcore.capture_version()``, ``None`` when the
    ``ddlcore`` schema is not installed) and ``triggers`` (name → ``evtenabled``, ``O``/``D``/
    ``R``/``A``, for the ddlcore triggers that exist)."""

    version: int | None
    triggers: dict[str, str]

    @property
    def ready(self) -> bool:
        """Installed at ``SQL_VERSION`` with both triggers firing always."""
        return self.version == SQL_VERSION and all(self.triggers.get(t) == "A" for t in TRIGGERS)

    def problem(self) -> str | None:
        """Why DDL would not reach the stream (``None`` when ``ready``)."""
        if self.version is None:
            return "the ddlcore event triggers are not installed in this database"
        if self.version != SQL_VERSION:
            return (f"the ddlcore event triggers in this database are version {self.version}; this "
                    f"capture needs version {SQL_VERSION}")
        for name in TRIGGERS:
            state = self.triggers.get(name)
            if state is None:
                return f"event trigger {name} is missing"
            if state != "A":
                return f"event trigger {name} is {ENABLED.get(state, state)}, not ENABLE ALWAYS"
        return None


def _is_superuser(cur: Any) -> bool:
    cur.execute("SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user")
    row = cur.fetchone()
    return bool(row and row[0])


def install(conn: Any) -> InstallStatus:
    """Create (or replace) the ``ddlcore`` schema's objects and the two event triggers, in one
    transaction, and record the name of every existing table in ``ddlcore.relations``.
    Idempotent: run it again to upgrade.  Raises ``EventTriggerError`` when the role is not a
    superuser (event triggers need one)."""
    with conn.cursor() as cur:
        try:
            if not _is_superuser(cur):
                raise EventTriggerError("installing event triggers needs a superuser (PostgreSQL 15 manual, "
                                        "CREATE EVENT TRIGGER); connect as one for --install")
            # dropped first, so that re-installing does not describe ddlcore's own objects
            for name in TRIGGERS:
                cur.execute(f"DROP EVENT TRIGGER IF EXISTS {name}")
            cur.execute(install_sql())
            cur.execute(
                "INSERT INTO ddlcore.relations AS r (relid, schema_name, table_name) "
                "SELECT c.oid, n.nspname, c.relname FROM pg_catalog.pg_class c "
                "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE ddlcore.is_described(c.oid) "
                "ON CONFLICT (relid) DO UPDATE SET schema_name = EXCLUDED.schema_name, "
                "table_name = EXCLUDED.table_name")
            cur.execute("DELETE FROM ddlcore.relations r WHERE NOT ddlcore.is_described(r.relid)")
            for name, (event, function) in TRIGGERS.items():
                cur.execute(f"CREATE EVENT TRIGGER {name} ON {event} EXECUTE FUNCTION {function}")
                cur.execute(f"ALTER EVENT TRIGGER {name} ENABLE ALWAYS")
            conn.commit()
        except BaseException:
            conn.rollback()
            raise
    return status(conn)


def uninstall(conn: Any) -> InstallStatus:
    """Drop the event triggers and the ``ddlcore`` schema (``CASCADE``), in one transaction.
    Replication slots and publications are left alone (drop them yourself: a slot keeps WAL)."""
    with conn.cursor() as cur:
        try:
            for name in TRIGGERS:
                cur.execute(f"DROP EVENT TRIGGER IF EXISTS {name}")
            cur.execute("DROP SCHEMA IF EXISTS ddlcore CASCADE")
            conn.commit()
        except BaseException:
            conn.rollback()
            raise
    return status(conn)


def status(conn: Any) -> InstallStatus:
    """The installed version and the state of the ddlcore event triggers (read only)."""
    with conn.cursor() as cur:
        try:
            cur.execute("SELECT evtname, evtenabled FROM pg_catalog.pg_event_trigger WHERE evtname = ANY(%s)",
                        (list(TRIGGERS),))
            triggers = {str(n): (e.decode() if isinstance(e, bytes) else str(e)) for n, e in cur.fetchall()}
            cur.execute("SELECT to_regprocedure('ddlcore.capture_version()') IS NOT NULL")
            version = None
            if cur.fetchone()[0]:
                cur.execute("SELECT ddlcore.capture_version()")
                version = int(cur.fetchone()[0])
            conn.commit()
        except BaseException:
            conn.rollback()
            raise
    return InstallStatus(version, triggers)
