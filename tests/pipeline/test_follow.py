"""``ddlcore run --follow`` (``ddlcore.spark.follow``, docs/operations.md): batches as a
capture's directory grows, each one ordinary commit; bounded by ``--max-batch-events``; the
output's lock held; SIGKILL and SIGTERM of the follower, then a restart, end with the output
of one uninterrupted batch run over the whole log."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.pipeline.growing import CaptureDir, checkpoint, rows_by_version, seqs

pyspark = pytest.importorskip("pyspark")

from ddlcore.spark import outlock  # noqa: E402
from ddlcore.spark import pipeline as pl  # noqa: E402
from ddlcore.spark.follow import batch_end, follow  # noqa: E402

#: generous bounds, only to catch a hang on a loaded machine
HANG = 600


def _reference(spark, cap: CaptureDir, tmp: Path) -> Path:
    whole, ref = tmp / "whole", tmp / "ref"
    shutil.copytree(cap.dir, whole)
    pl.run_pipeline(whole, ref, spark=spark)
    return ref


def _wait(cond, what: str) -> None:
    end = time.monotonic() + HANG
    while not cond():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.2)


def test_batch_end_is_the_end_of_the_line_of_a_seq(tmp_path):
    cap = CaptureDir(tmp_path / "cap")
    cap.grow(3000)  # more than the 64 KB scanned at the end of the binary search
    data = cap.log.read_bytes()
    ends = [i + 1 for i, b in enumerate(data) if b == ord("\n")]
    for seq in (1, 2, 17, 1234, 2999, 3002):
        assert batch_end(cap.log, len(data), seq) == ends[seq - 1]
    assert batch_end(cap.log, ends[9], 11) is None  # past the durable bytes
    assert batch_end(cap.log, len(data), 3003) is None


def test_a_follower_commits_batches_as_the_log_grows_and_holds_the_lock(spark, tmp_path):
    cap = CaptureDir(tmp_path / "cap", alter_every=25)
    cap.grow(10)
    out = tmp_path / "out"
    stop = threading.Event()
    batches: list = []
    box: dict = {}

    def run() -> None:
        try:
            box["stats"] = follow(cap.dir, out, spark=spark, interval=0.2, max_batch_events=15, stop=stop,
                                  on_batch=batches.append)
        except BaseException as exc:  # noqa: BLE001 - reported below
            box["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    try:
        _wait(lambda: checkpoint(out) == cap.seq or "error" in box, "the first batches")
        assert outlock.holder(out)["command"] == "ddlcore run --follow"
        with pytest.raises(outlock.OutputLocked, match="ddlcore run --follow, pid"):
            pl.run_pipeline(cap.dir, out, spark=spark)
        for _ in range(3):
            cap.grow(20)  # more than a batch takes: two batches
            _wait(lambda: checkpoint(out) == cap.seq or "error" in box, "a batch of the new events")
    finally:
        stop.set()
        thread.join(HANG)
    assert "error" not in box, box.get("error")
    stats = box["stats"]
    assert stats.batches == len(batches) >= 7 and not stats.abandoned
    assert all(r.events <= 15 for r in batches)  # --max-batch-events
    assert [r.previous_seq for r in batches[1:]] == [r.last_seq for r in batches[:-1]]  # one commit each, in order
    assert outlock.holder(out) is None
    ref = _reference(spark, cap, tmp_path)
    assert seqs(out) == seqs(ref) and rows_by_version(out) == rows_by_version(ref)


def _follower(cap: CaptureDir, out: Path, log: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ddlcore.cli", "run", "--follow", "--interval", "0.3",
                             "--max-batch-events", "40", "--dialect", "mysql", "--changelog", str(cap.dir),
                             "--out", str(out),
                             "--conf", "spark.driver.memory=512m", "--concurrent-jobs", "1"],
                            stdout=open(log, "a"), stderr=subprocess.STDOUT, start_new_session=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})


def test_a_follower_killed_and_stopped_then_restarted_ends_with_the_batch_output(spark, tmp_path):
    """SIGKILL (driver and JVM: its process group) while the log grows, a restart, SIGTERM
    (exit 0), a restart that catches up (in this process): every seq once, the output of one
    batch run."""
    cap = CaptureDir(tmp_path / "cap", alter_every=70)
    cap.grow(30)
    out, log = tmp_path / "out", tmp_path / "follower.txt"
    growing = threading.Event()
    grower = cap.grow_for(seconds=HANG, every=0.3, n=6, stop=growing)
    try:
        proc = _follower(cap, out, log)
        _wait(lambda: (checkpoint(out) or 0) > 0 or proc.poll() is not None, "the first batch")
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(HANG)
        proc = _follower(cap, out, log)
        first = checkpoint(out)
        _wait(lambda: (checkpoint(out) or 0) > first or proc.poll() is not None, "a batch after the restart")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(HANG) == 0, log.read_text()
    finally:
        growing.set()
    grower.join(HANG)
    text = log.read_text()
    assert "stopped following" in text and "Traceback" not in text, text
    stop = threading.Event()  # the last restart in this process (a JVM less): until it caught up
    last = threading.Thread(target=follow, args=(cap.dir, out),
                            kwargs={"spark": spark, "interval": 0.2, "max_batch_events": 40, "stop": stop})
    last.start()
    try:
        _wait(lambda: checkpoint(out) == cap.seq or not last.is_alive(), "the follower to catch up")
    finally:
        stop.set()
        last.join(HANG)
    ref = _reference(spark, cap, tmp_path)
    assert seqs(out) == seqs(ref) and rows_by_version(out) == rows_by_version(ref)


def test_a_second_signal_abandons_the_batch_in_flight_and_a_restart_does_it_again(spark, tmp_path):
    cap = CaptureDir(tmp_path / "cap")
    cap.grow(10)
    out = tmp_path / "out"
    pl.run_pipeline(cap.dir, out, spark=spark)
    committed = checkpoint(out)
    cap.grow(10)
    signals = []

    def progress(msg: str) -> None:  # two SIGTERMs at the commit of the batch: the second abandons it
        if msg == "committing" and not signals:
            for _ in range(2):
                signals.append(signal.SIGTERM)
                os.kill(os.getpid(), signal.SIGTERM)  # the second raises here

    before = signal.getsignal(signal.SIGTERM)
    stats = follow(cap.dir, out, spark=spark, interval=0.1, progress=progress, handle_signals=True)
    assert signal.getsignal(signal.SIGTERM) is before  # put back
    assert stats.abandoned and stats.batches == 0 and len(signals) == 2
    assert checkpoint(out) == committed and not (out / "_state" / "staging").exists()
    assert not (out / "_state" / "pending.json").exists() and outlock.holder(out) is None
    stop = threading.Event()
    stats = follow(cap.dir, out, spark=spark, stop=stop, interval=0.1, on_batch=lambda r: stop.set())
    assert stats.batches == 1 and checkpoint(out) == cap.seq
    ref = _reference(spark, cap, tmp_path)
    assert seqs(out) == seqs(ref) and rows_by_version(out) == rows_by_version(ref)


@pytest.mark.parametrize("args", [["--interval", "5"], ["--max-batch-events", "10"],
                                  ["--follow", "--replay-quarantine"]])
def test_follow_options_without_follow_or_with_a_replay_are_usage_errors(tmp_path, args):
    from click.testing import CliRunner

    from ddlcore.cli import main

    res = CliRunner().invoke(main, ["run", "--changelog", str(tmp_path), "--out", str(tmp_path / "o"), *args])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, res.output
    assert not (tmp_path / "o").exists()
