"""The command line (``--install`` / ``--uninstall``, a capture run, exit statuses, ``--json``),
a capture role that is not a superuser (``REPLICATION`` and ``SELECT`` only), and reconnecting
after the server restarts while streaming."""

from __future__ import annotations

import json
import threading
import time

import psycopg

from tests.servers.fixtures import started_postgres

from .support import CaptureDb, cli, create_capture_db, drop_capture_db, events, row_text, run_capture


def test_cli_install_capture_uninstall(postgres, tmp_path):
    db = create_capture_db(postgres, install=False)
    try:
        out = tmp_path / "out"
        refused = cli(db, out, "--until-end")
        assert refused.returncode == 1 and "not installed" in refused.stderr and "--install" in refused.stderr
        assert not (out / "changelog.jsonl").exists() or (out / "changelog.jsonl").stat().st_size == 0
        done = cli(db, out, "--install")
        assert done.returncode == 0 and "installed" in done.stderr, done.stderr
        db.execute("CREATE TABLE t (id int PRIMARY KEY)", "INSERT INTO t VALUES (1)")
        run = cli(db, out, "--until-end", "--json")
        assert run.returncode == 0, run.stderr
        stats = json.loads(run.stdout)
        assert stats["ops"] == {"source": 1, "ddl": 1, "r": 1} and stats["last_seq"] == 3
        usage = cli(db, out, "--snapshot", "sometimes")
        assert usage.returncode == 2
        gone = cli(db, out, "--uninstall")
        assert gone.returncode == 0 and "uninstalled" in gone.stderr
        with db.connect() as conn:
            assert conn.execute("SELECT count(*) FROM pg_event_trigger").fetchone()[0] == 0
    finally:
        drop_capture_db(db)


def test_a_replication_role_without_superuser_captures(capdb, tmp_path):
    capdb.execute("CREATE ROLE cdc LOGIN REPLICATION", "CREATE TABLE r (id int PRIMARY KEY, v text)",
                  "GRANT SELECT ON ALL TABLES IN SCHEMA public TO cdc", "INSERT INTO r VALUES (1, 'a')")
    try:
        as_cdc = CaptureDb(capdb.server, capdb.name)
        dsn = capdb.dsn.replace(f"user={capdb.server.user}", "user=cdc")
        as_cdc.__class__ = type("CdcDb", (CaptureDb,), {"dsn": property(lambda self: dsn)})
        out = tmp_path / "out"
        run_capture(as_cdc, out)
        capdb.execute("INSERT INTO r VALUES (2, 'b')", "ALTER TABLE r ADD COLUMN w int")
        run_capture(as_cdc, out)
        assert [(ev["op"], ev["after"] and row_text(ev["after"][0])) for ev in events(out) if ev["op"] != "source"] == [
            ("ddl", None), ("r", "1"), ("c", "2"), ("ddl", None)]
    finally:
        with psycopg.connect(capdb.server.dsn(), autocommit=True) as c:
            for (slot,) in c.execute("SELECT slot_name FROM pg_replication_slots WHERE database = %s",
                                     (capdb.name,)).fetchall():
                c.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
        capdb.execute("DROP OWNED BY cdc", "DROP ROLE cdc")


def test_the_capture_reconnects_after_a_server_restart(tmp_path):
    from ddlcore_postgres.capture import PostgresCapture

    from .support import options

    server = started_postgres("PostgreSQL (restart test)", wal_level="logical", max_replication_slots=4,
                              max_wal_senders=4, max_prepared_transactions=2)
    try:
        db = create_capture_db(server)
        db.execute("CREATE TABLE k (id int PRIMARY KEY)", "INSERT INTO k VALUES (1)")
        warnings: list[str] = []
        cap = PostgresCapture(options(db, tmp_path / "out", until_end=False, retry_for=60, retry_wait_max=1.0),
                              on_warning=warnings.append)
        thread = threading.Thread(target=cap.run)
        thread.start()
        try:
            _wait_for(lambda: cap.checkpoint is not None and cap.checkpoint.phase == "streaming")
            db.execute("INSERT INTO k VALUES (2)")
            _wait_for(lambda: cap.stats.ops["c"] >= 1)
            # a transaction prepared across the restart comes once, at its COMMIT PREPARED
            db.execute("BEGIN; INSERT INTO k VALUES (100); PREPARE TRANSACTION 'pr'")
            server.restart()
            db.execute("INSERT INTO k VALUES (3)", "COMMIT PREPARED 'pr'", "INSERT INTO k VALUES (4)")
            _wait_for(lambda: cap.stats.ops["c"] >= 4)
        finally:
            cap.stop()
            thread.join(60)
        assert not thread.is_alive()
        ids = [row_text(ev["after"][0]) for ev in events(tmp_path / "out") if ev["op"] in ("r", "c")]
        assert ids == ["1", "2", "3", "100", "4"]
        assert cap.stats.reconnects >= 1 and any("reconnecting" in w for w in warnings)
    finally:
        server.stop()


def _wait_for(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.1)
