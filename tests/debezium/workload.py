"""A MariaDB workload and ddlcore's own capture of it, for the tests that re-encode that capture
as another tool's messages (Debezium, Canal, TiCDC)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Callable

from ddlcore.changelog import read_changelog

from tests.capture.support import run_capture


def capture_workload(mariadb: Any, out: Path, tables: list[str], statements: list[Any], *,
                     after: Callable[[Any, str], None] | None = None,
                     finish: Callable[[Any], Any] = lambda cur: None) -> tuple[str, list, Any]:
    """In a new database: create ``tables``, capture the schema (``ddlcore capture mysql``,
    schema only), run ``statements`` (SQL text, or a callable of the cursor; each committed, then
    ``after(cursor, sql)``), capture again into ``out``, ``finish(cursor)``, drop the database.
    Returns ``(database, the change log's events, what finish returned)``."""
    db = f"w_{uuid.uuid4().hex[:10]}"
    with mariadb.connect() as conn, conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE `{db}`")
        cur.execute(f"USE `{db}`")
        for ddl in tables:
            cur.execute(ddl)
        run_capture(mariadb, out, snapshot="schema_only", include=(f"{db}.*",))
        for sql in statements:
            sql(cur) if callable(sql) else cur.execute(sql)
            conn.commit()
            if after is not None:
                after(cur, sql)
        run_capture(mariadb, out)
        result = finish(cur)
        cur.execute(f"DROP DATABASE `{db}`")
    return db, list(read_changelog(out / "changelog.jsonl")), result
