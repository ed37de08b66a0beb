"""One ``server_id``, one capture (``ddlcore_mysql.replica_identity``): when a second capture
streams with the ``server_id`` of a running one, MariaDB ends the older dump; the older capture
stops with one line naming the ``server_id`` and its directory — it does not reconnect and
knock the other off in turn — and loses nothing: it resumes from its checkpoint with its own
``server_id``."""

from __future__ import annotations

import threading
import time

from ddlcore_mysql.capture import CaptureError, CaptureOptions, MySqlCapture

from .support import checkpoint, connection, events, run_capture


def _start(server, out, db: str, server_id: int) -> tuple[MySqlCapture, threading.Thread, dict]:
    """A streaming capture in a thread (reconnecting for 60 s, as a service would); its
    outcome lands in the dict returned."""
    cap = MySqlCapture(CaptureOptions(connection(server), server_id=server_id, out=out, snapshot="schema_only",
                                      include=(f"{db}.*",), progress=False, retry_for=60, retry_wait_max=1,
                                      heartbeat=0.5), on_warning=lambda w: None)
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["stats"] = cap.run()
        except Exception as exc:  # noqa: BLE001 - the test inspects it
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (
            (out / "checkpoint.json").exists() and checkpoint(out)["phase"] == "streaming"):
        time.sleep(0.1)
    time.sleep(0.5)  # its binlog dump is open
    return cap, thread, outcome


def _insert(db, value: int) -> None:
    with db.connect() as conn, conn.cursor() as cur:
        cur.execute("INSERT INTO s VALUES (%s)", (value,))
        conn.commit()


def _rows(out) -> list[int]:
    return [e.after[0] for e in events(out) if e.op == "c"]


def test_two_captures_with_one_server_id(mariadb, mariadb_db, tmp_path):
    db = mariadb_db.name
    with mariadb_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE s (id int PRIMARY KEY)")
    a, b = tmp_path / "A", tmp_path / "B"
    cap_a, thread_a, out_a = _start(mariadb, a, db, 4251)
    _insert(mariadb_db, 1)
    cap_b, thread_b, out_b = _start(mariadb, b, db, 4251)
    try:
        thread_a.join(30)
        assert not thread_a.is_alive(), "A kept reconnecting (and knocking B off)"
        err = out_a.get("error")
        assert isinstance(err, CaptureError), out_a
        msg = str(err)
        assert "\n" not in msg and "server_id 4251" in msg and str(a) in msg and "--server-id" in msg
        _insert(mariadb_db, 2)
        deadline = time.monotonic() + 30  # B was not knocked off: it still streams
        while time.monotonic() < deadline and 2 not in _rows(b):
            time.sleep(0.2)
        assert thread_b.is_alive() and _rows(b) == [2]
    finally:
        cap_b.stop()
        thread_b.join(60)
        cap_a.stop()
    assert not thread_b.is_alive() and "error" not in out_b
    run_capture(mariadb, a, server_id=4252)  # A resumes at its checkpoint with its own server_id
    assert _rows(a) == [1, 2]
