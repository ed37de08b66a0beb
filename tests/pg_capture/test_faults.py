"""Faults of issue 30 tried against a real PostgreSQL 15: the server crashing while a large
transaction streams, a publication altered while capturing, a transaction larger than the
server's ``logical_decoding_work_mem``.  Each ends with the change log equal to the server's
rows (every row once, in commit order) or with the capture stopped with one line."""

from __future__ import annotations

import threading
import time

import pytest

from tests.servers.fixtures import started_postgres

from .support import create_capture_db, drop_capture_db, events, options, row_text, run_capture

ROWS = 20_000  # one transaction: streaming it takes the capture a second or more


@pytest.fixture(scope="module")
def own_server():
    """A PostgreSQL 15 of this module's own, which the tests may crash and restart; its
    ``logical_decoding_work_mem`` is the smallest allowed, so that a transaction of a few
    thousand rows is larger than the memory decoding may hold (it spills to disk)."""
    server = started_postgres("PostgreSQL (faults)", wal_level="logical", max_replication_slots=4,
                              max_wal_senders=4, logical_decoding_work_mem="'64kB'")
    try:
        yield server
    finally:
        server.stop()


def _ids(out) -> list[int]:
    return [int(row_text(ev["after"][0])) for ev in events(out) if ev["op"] in ("r", "c")]


def _wait_for(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.02)


def test_a_server_crash_while_a_large_transaction_streams_loses_and_repeats_nothing(own_server, tmp_path):
    from ddlcore_postgres.capture import PostgresCapture

    db = create_capture_db(own_server)
    try:
        out = tmp_path / "out"
        db.execute("CREATE TABLE k (id int PRIMARY KEY, v text)")
        run_capture(db, out)  # the slot exists from here on; streaming starts after the DDL
        warnings: list[str] = []
        cap = PostgresCapture(options(db, out, until_end=False, retry_for=60, retry_wait_max=0.5),
                              on_warning=warnings.append)
        thread = threading.Thread(target=cap.run)
        thread.start()
        try:
            _wait_for(lambda: cap.checkpoint is not None)
            db.execute(f"INSERT INTO k SELECT g, repeat('x', 40) FROM generate_series(1, {ROWS}) g")
            _wait_for(lambda: cap.stats.ops["c"] >= 1)
            assert cap.stats.ops["c"] < ROWS, "the transaction was read whole before the crash: make it larger"
            own_server.restart(immediate=True)
            db.execute(f"INSERT INTO k VALUES ({ROWS + 1}, 'after')")
            _wait_for(lambda: cap.stats.reconnects >= 1)
        finally:
            cap.stop()
            thread.join(60)
        assert not thread.is_alive()
        run_capture(db, out)  # the rest, to the end of the WAL
        assert any("reconnecting" in w for w in warnings), warnings
        server_ids = [int(r[0]) for r in db.select_text("SELECT id FROM k ORDER BY id")]
        assert _ids(out) == server_ids == list(range(1, ROWS + 2))
        seqs = [ev["seq"] for ev in events(out)]
        assert seqs == list(range(1, len(seqs) + 1))
    finally:
        drop_capture_db(db)


def test_a_transaction_larger_than_the_decoding_memory_is_written_whole_once(own_server, tmp_path):
    """The capture holds no transaction in memory (each row is written as it arrives; the
    checkpoint moves only at a transaction's end); the server holds at most
    ``logical_decoding_work_mem`` of one and spills the rest.  A transaction far larger than
    that, and a stop requested in its middle, give every row once."""
    db = create_capture_db(own_server)
    try:
        out = tmp_path / "out"
        db.execute("CREATE TABLE big (id int PRIMARY KEY, v text)")
        run_capture(db, out)
        n = 5000
        db.execute(f"INSERT INTO big SELECT g, repeat('y', 60) FROM generate_series(1, {n}) g")
        stats, _ = run_capture(db, out, stop_after_events=10)  # asked to stop 10 rows in: ends at its end
        assert stats.ops["c"] == n
        db.execute(f"INSERT INTO big VALUES ({n + 1}, 'z')")
        run_capture(db, out)
        assert _ids(out) == list(range(1, n + 2))
        with own_server.connect() as conn:
            spilled = conn.execute("SELECT spill_txns FROM pg_stat_replication_slots WHERE slot_name = %s",
                                   ("ddlcore_test",)).fetchone()[0]
        assert spilled >= 1  # the transaction did exceed the decoding memory
    finally:
        drop_capture_db(db)


def test_a_publication_altered_between_or_during_runs_stops_the_capture(capdb, tmp_path):
    """pgoutput filters by the publication as it is when a change is decoded: rows of a table
    added later, or of one removed, are not in the stream.  The capture stops with one line
    naming the change instead of going on with an output that differs from the server."""
    from ddlcore_postgres.capture import CaptureError

    capdb.execute("CREATE TABLE a (id int PRIMARY KEY)", "CREATE TABLE b (id int PRIMARY KEY)",
                  "CREATE TABLE gone (id int PRIMARY KEY)", "INSERT INTO a VALUES (1)", "INSERT INTO b VALUES (1)",
                  "CREATE PUBLICATION part FOR TABLE a, gone")
    out = tmp_path / "out"
    run_capture(capdb, out, publication="part")
    # a member table dropped is no change (its DROP is in the change log)
    capdb.execute("DROP TABLE gone", "INSERT INTO a VALUES (2)")
    run_capture(capdb, out, publication="part")
    capdb.execute("INSERT INTO b VALUES (2)", "ALTER PUBLICATION part ADD TABLE b", "INSERT INTO b VALUES (3)")
    with pytest.raises(CaptureError, match=r"publication part changed .*table public\.b added"):
        run_capture(capdb, out, publication="part")
    with pytest.raises(CaptureError, match=r"table public\.b added"):  # and every later run
        run_capture(capdb, out, publication="part")

    capdb.execute("CREATE PUBLICATION other FOR TABLE a, b")
    out2 = tmp_path / "out2"
    run_capture(capdb, out2, publication="other", slot="other")
    capdb.execute("ALTER PUBLICATION other DROP TABLE a", "ALTER PUBLICATION other SET (publish = 'insert')",
                  "INSERT INTO a VALUES (3)")
    with pytest.raises(CaptureError, match=r"publish was delete, insert, truncate, update, is insert; "
                                           r"table public\.a removed"):
        run_capture(capdb, out2, publication="other", slot="other")


def test_a_publication_altered_while_the_capture_streams_stops_it(capdb, tmp_path, monkeypatch):
    from ddlcore_postgres import capture as pgc

    monkeypatch.setattr(pgc, "PUBLICATION_CHECK_INTERVAL", 0.2)
    capdb.execute("CREATE TABLE a (id int PRIMARY KEY)", "CREATE TABLE b (id int PRIMARY KEY)",
                  "CREATE PUBLICATION part FOR TABLE a")
    cap = pgc.PostgresCapture(options(capdb, tmp_path / "out", publication="part", until_end=False),
                              on_warning=lambda w: None)
    failed: list[BaseException] = []

    def run() -> None:
        try:
            cap.run()
        except BaseException as exc:  # noqa: BLE001 - what the run ended with is the result
            failed.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        _wait_for(lambda: cap.checkpoint is not None and cap.checkpoint.phase == "streaming")
        capdb.execute("ALTER PUBLICATION part ADD TABLE b", "INSERT INTO b VALUES (1)")
        thread.join(30)
    finally:
        cap.stop()
        thread.join(30)
    assert len(failed) == 1 and isinstance(failed[0], pgc.CaptureError), failed
    assert "publication part changed" in str(failed[0]) and "table public.b added" in str(failed[0])
