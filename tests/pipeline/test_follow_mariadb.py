"""``ddlcore run --follow`` beside a live MariaDB capture (docs/operations.md): a workload of
inserts, updates, deletes and an ``ALTER TABLE`` runs while the capture streams the binlog and
the follower commits batches; once the workload's last row is captured and followed, the
output equals one batch run over the capture's directory, and the current rows equal the
server's table."""

from __future__ import annotations

import base64
import json
import shutil
import threading
import time

import pytest

from tests.capture.support import connection
from tests.pipeline.growing import checkpoint, rows_by_version, seqs

pyspark = pytest.importorskip("pyspark")

from ddlcore_mysql.capture import CaptureOptions, MySqlCapture  # noqa: E402

from ddlcore.spark import pipeline as pl  # noqa: E402
from ddlcore.spark.follow import follow  # noqa: E402

HANG = 600
#: the last row's name as the change log carries it (text is base64: ddlcore.raw)
LAST = json.dumps({"$b64": base64.b64encode(b"last").decode()}).replace(" ", "")


def _wait(cond, what: str) -> None:
    end = time.monotonic() + HANG
    while not cond():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.2)


def _captured_seq(cap) -> int:
    try:
        return json.loads((cap / "checkpoint.json").read_text())["seq"]
    except (FileNotFoundError, ValueError, KeyError):
        return 0


def test_follow_beside_a_live_capture_ends_equal_to_a_batch_run(spark, mariadb_db, tmp_path):
    conn = mariadb_db.connect(autocommit=False)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE items (id int PRIMARY KEY AUTO_INCREMENT, name varchar(40), qty int)")
        cur.execute("INSERT INTO items (name, qty) VALUES ('before', 1)")
    conn.commit()
    cap, out = tmp_path / "cap", tmp_path / "out"
    capture = MySqlCapture(CaptureOptions(connection(mariadb_db.server), server_id=4250, out=cap, progress=False,
                                          include=(f"{mariadb_db.name}.*",), checkpoint_interval=0.2))
    stop = threading.Event()
    errors: list = []

    def guarded(fn):
        def run() -> None:
            try:
                fn()
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)
        return threading.Thread(target=run)

    threads = [guarded(capture.run),
               guarded(lambda: follow(cap, out, spark=spark, interval=0.2, max_batch_events=25, stop=stop))]
    for t in threads:
        t.start()
    try:
        with conn.cursor() as cur:
            for rnd in range(6):
                for i in range(8):
                    cur.execute("INSERT INTO items (name, qty) VALUES (%s, %s)", (f"r{rnd}-{i}", i))
                cur.execute("UPDATE items SET qty = qty + 10 WHERE id %% 3 = %s", (rnd % 3,))
                cur.execute("DELETE FROM items WHERE id = %s", (rnd * 4 + 2,))
                conn.commit()
                if rnd == 2:
                    cur.execute("ALTER TABLE items ADD COLUMN note varchar(10) DEFAULT 'n'")
                time.sleep(0.3)
            cur.execute("INSERT INTO items (name, qty) VALUES ('last', 0)")
            conn.commit()
        _wait(lambda: errors or any(LAST in ln for ln in _tail(cap / "changelog.jsonl"))
              and _captured_seq(cap) >= _last_seq(cap), "the capture of the last row")
        target = _captured_seq(cap)
        _wait(lambda: errors or (checkpoint(out) or 0) >= target, "the follower to catch up")
    finally:
        stop.set()
        capture.stop()
        for t in threads:
            t.join(HANG)
    assert not errors, errors
    whole, ref = tmp_path / "whole", tmp_path / "ref"
    shutil.copytree(cap, whole, ignore=shutil.ignore_patterns("capture.lock"))
    pl.run_pipeline(whole, ref, spark=spark)
    assert seqs(out) == seqs(ref) and rows_by_version(out) == rows_by_version(ref)
    with conn.cursor() as cur:
        cur.execute("SELECT id, name, qty FROM items ORDER BY id")
        server = [list(r) for r in cur.fetchall()]
    assert _current(out) == server


def _tail(path) -> list[str]:
    try:
        return path.read_text().splitlines()[-5:]
    except FileNotFoundError:
        return []


def _last_seq(cap) -> int:
    lines = _tail(cap / "changelog.jsonl")
    return json.loads(lines[-1])["seq"] if lines else 1 << 62


def _current(out) -> list[list]:
    """The table's current rows from the output: the last change per id (deletes remove it)."""
    last: dict[int, tuple[int, str, dict]] = {}
    for version in rows_by_version(out).values():
        for text in version:
            r = json.loads(text)
            if r["id"] is not None and (r["id"] not in last or last[r["id"]][0] < r["_seq"]):
                last[r["id"]] = (r["_seq"], r["_op"], r)
    return [[i, r["name"], r["qty"]] for i, (_, op, r) in sorted(last.items()) if op != "d"]
