"""Helpers of the PostgreSQL capture tests: a database ready for capture on the session's
PostgreSQL 15 (``wal_level=logical``), reading a change log, reading the server's text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

#: what the capture's sessions run with (``ddlcore_postgres.capture.SESSION_SETTINGS``), set
#: here independently for the SELECTs the tests compare with
SESSION = {"DateStyle": "ISO", "IntervalStyle": "postgres", "TimeZone": "UTC", "extra_float_digits": "3",
           "bytea_output": "hex"}


@dataclass
class CaptureDb:
    """One database with the ddlcore triggers installed and a publication ``pub`` FOR ALL
    TABLES; ``search_path`` is ``public`` (the fixture's role is called ``ddlcore``, whose
    ``"$user"`` schema would otherwise be ddlcore's own) and commits are synchronous."""

    server: Any
    name: str

    @property
    def dsn(self) -> str:
        return self.server.dsn(self.name)

    def connect(self, **kw: Any):
        """psycopg 3, autocommit, with the capture's session settings."""
        import psycopg

        opts = " ".join(f"-c {k}={v}" for k, v in SESSION.items())
        return psycopg.connect(self.dsn, autocommit=True, options=opts, **kw)

    def execute(self, *statements: str) -> None:
        with self.connect() as conn:
            for sql in statements:
                conn.execute(sql)

    def select_text(self, sql: str) -> list[list[str | None]]:
        """Rows of ``sql`` as the server's text (the output functions' bytes, decoded), read
        from the wire result without any client-side conversion."""
        with self.connect() as conn:
            cur = conn.execute(sql)
            res = cur.pgresult
            out = []
            for r in range(res.ntuples):
                row = []
                for c in range(res.nfields):
                    v = res.get_value(r, c)
                    row.append(None if v is None else bytes(v).decode("utf-8"))
                out.append(row)
            return out

    def slot_lsn(self, slot: str) -> str | None:
        with self.server.connect() as conn:
            row = conn.execute("SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = %s",
                               (slot,)).fetchone()
        return None if row is None else row[0]


def create_capture_db(server, *, install: bool = True) -> CaptureDb:
    import psycopg2

    name = f"cap_{uuid.uuid4().hex[:10]}"
    with server.connect() as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
        conn.execute(f'ALTER DATABASE "{name}" SET search_path = public')
        conn.execute(f'ALTER DATABASE "{name}" SET synchronous_commit = on')
    db = CaptureDb(server, name)
    if install:
        from ddlcore_postgres.event_trigger import install as install_triggers

        c2 = psycopg2.connect(db.dsn)
        try:
            install_triggers(c2)
        finally:
            c2.close()
    db.execute("CREATE PUBLICATION pub FOR ALL TABLES")
    return db


def drop_capture_db(db: CaptureDb) -> None:
    with db.server.connect() as conn:
        # a walsender of a capture that just ended may still hold its slot for a moment
        conn.execute("SELECT pg_terminate_backend(active_pid, 5000) FROM pg_replication_slots "
                     "WHERE database = %s AND active_pid IS NOT NULL", (db.name,))
        for (slot,) in conn.execute("SELECT slot_name FROM pg_replication_slots WHERE database = %s",
                                    (db.name,)).fetchall():
            conn.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
        conn.execute(f'DROP DATABASE IF EXISTS "{db.name}" WITH (FORCE)')


def events(out: Path | str) -> list[dict]:
    path = Path(out) / "changelog.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def row_text(value: Any) -> Any:
    """A change-log raw value back to the text pgoutput sent (``{"$s": ...}`` unwrapped)."""
    if isinstance(value, dict) and "$s" in value:
        return value["$s"]
    return value


def options(db: CaptureDb, out: Path | str, **kw: Any):
    from ddlcore_postgres.capture import CaptureOptions, ConnectionSettings

    kw.setdefault("slot", "ddlcore_test")
    kw.setdefault("publication", "pub")
    kw.setdefault("until_end", True)
    kw.setdefault("progress", False)
    kw.setdefault("retry_for", 0)
    return CaptureOptions(ConnectionSettings(dsn=db.dsn), out=out, **kw)


def run_capture(db: CaptureDb, out: Path | str, *, allow_warnings: bool = False, **kw: Any):
    """One capture run (``until_end`` by default); returns ``(stats, warnings)``.  Unless
    ``allow_warnings``, a warning other than "the history is unavailable" (no PostgreSQL
    dialect installed) fails the test: drift or a history that cannot read the DDL is a bug."""
    from ddlcore_postgres.capture import PostgresCapture

    warnings: list[str] = []
    cap = PostgresCapture(options(db, out, **kw), on_warning=warnings.append)
    stats = cap.run()
    if not allow_warnings:
        unexpected = [w for w in warnings if not w.startswith("schema history unavailable")]
        assert not unexpected, unexpected
    return stats, warnings


def dialect_installed() -> bool:
    from ddlcore.errors import DialectNotFound
    from ddlcore.plugins import get_dialect

    try:
        get_dialect("postgres")
        return True
    except DialectNotFound:
        return False


def cli(db: CaptureDb, out: Path | str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(cli_args(db, out, *args), cwd=REPO, capture_output=True, text=True, timeout=timeout)


def cli_args(db: CaptureDb, out: Path | str, *args: str) -> list[str]:
    return [sys.executable, "-m", "ddlcore.cli", "capture", "postgres", "--dsn", db.dsn, "--slot", "ddlcore_test",
            "--publication", "pub", "--out", str(out), "--no-progress", *args]


def env() -> dict[str, str]:
    return dict(os.environ)


def pg_shop_workload():
    """``examples/pg_shop/workload.py`` as a module (examples/ is not a package), loaded once."""
    import importlib.util

    name = "pg_shop_workload"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "examples" / "pg_shop" / "workload.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


# ---------------------------------------------------------------------- kills and checkpoints

def kill_once(db, out, rng, span) -> bool:
    """Run ``ddlcore capture postgres --until-end`` on ``db`` into ``out`` and SIGKILL it after a
    random time up to ``span`` seconds unless it ended first; whether it was killed."""
    proc = subprocess.Popen(cli_args(db, out, "--until-end", "--checkpoint-interval", "0.05",
                                     "--retry-for", "0"), env=env(), cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        proc.wait(timeout=rng.uniform(0.1, span))
        killed = False
    except subprocess.TimeoutExpired:
        proc.kill()  # SIGKILL of our own child
        proc.wait(timeout=30)
        killed = True
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.stderr.close()
    assert killed or proc.returncode == 0, err
    return killed


def commit_ends(db, slot):
    """xid → the end LSN of its commit, for every transaction the slot has (consumed)."""
    from ddlcore_postgres import pgoutput as po

    with db.connect() as conn:
        rows = conn.execute("SELECT data FROM pg_logical_slot_get_binary_changes(%s, NULL, NULL, 'proto_version', "
                            "'1', 'publication_names', 'pub', 'messages', 'true')", (slot,)).fetchall()
    ends, xid = {}, None
    for (data,) in rows:
        m = po.decode(data)
        if isinstance(m, po.Begin):
            xid = m.xid
        elif isinstance(m, po.Commit):
            ends[str(xid)] = m.end_lsn
    return ends


def capture_phase(out):
    """The ``phase`` of the capture's checkpoint in ``out`` (None before the first)."""
    path = out / "checkpoint.json"
    return json.loads(path.read_text())["phase"] if path.exists() else None


def durable_transactions(out):
    """The ``tx`` of every event in the part of the change log the checkpoint covers."""
    cp = json.loads((out / "checkpoint.json").read_text())
    data = (out / "changelog.jsonl").read_bytes()[:cp["changelog_bytes"]]
    return {json.loads(line).get("tx") for line in data.decode().splitlines() if line.strip()}
