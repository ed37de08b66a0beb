"""``ddlcore run --follow`` (``ddlcore.spark.follow``, docs/operations.md): batches as a
capture's directory grows, each one ordinary commit; bounded by ``--max-batch-events``; the
output's lock held; a second signal abandons the batch in flight.  The follower as a process
beside a real capture, SIGKILLed and SIGTERMed: ``tests/e2e/test_follow_servers.py``."""

from __future__ import annotations

import json
import os
import shutil
import signal
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
    pl.run_pipeline(whole, ref, spark=spark, dialect="mysql")
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
                                  on_batch=batches.append, dialect="mysql")
        except BaseException as exc:  # noqa: BLE001 - reported below
            box["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    try:
        _wait(lambda: checkpoint(out) == cap.seq or "error" in box, "the first batches")
        assert outlock.holder(out)["command"] == "ddlcore run --follow"
        with pytest.raises(outlock.OutputLocked, match="ddlcore run --follow, pid"):
            pl.run_pipeline(cap.dir, out, spark=spark, dialect="mysql")
        cap.grow(20)  # more than a batch takes: two batches
        _wait(lambda: checkpoint(out) == cap.seq or "error" in box, "a batch of the new events")
    finally:
        stop.set()
        thread.join(HANG)
    assert "error" not in box, box.get("error")
    stats = box["stats"]
    assert stats.batches == len(batches) >= 3 and not stats.abandoned
    assert all(r.events <= 15 for r in batches)  # --max-batch-events
    assert [r.previous_seq for r in batches[1:]] == [r.last_seq for r in batches[:-1]]  # one commit each, in order
    assert outlock.holder(out) is None
    ref = _reference(spark, cap, tmp_path)
    assert seqs(out) == seqs(ref) and rows_by_version(out) == rows_by_version(ref)


def test_a_second_signal_abandons_the_batch_in_flight_and_a_restart_does_it_again(spark, tmp_path):
    cap = CaptureDir(tmp_path / "cap")
    cap.grow(10)
    out = tmp_path / "out"
    pl.run_pipeline(cap.dir, out, spark=spark, dialect="mysql")
    committed = checkpoint(out)
    cap.grow(10)
    signals = []

    def progress(msg: str) -> None:  # two SIGTERMs at the commit of the batch: the second abandons it
        if msg == "committing" and not signals:
            for _ in range(2):
                signals.append(signal.SIGTERM)
                os.kill(os.getpid(), signal.SIGTERM)  # the second raises here

    before = signal.getsignal(signal.SIGTERM)
    stats = follow(cap.dir, out, spark=spark, interval=0.1, progress=progress, handle_signals=True, dialect="mysql")
    assert signal.getsignal(signal.SIGTERM) is before  # put back
    assert stats.abandoned and stats.batches == 0 and len(signals) == 2
    assert checkpoint(out) == committed and not (out / "_state" / "staging").exists()
    assert not (out / "_state" / "pending.json").exists() and outlock.holder(out) is None
    stop = threading.Event()
    stats = follow(cap.dir, out, spark=spark, stop=stop, interval=0.1, on_batch=lambda r: stop.set(), dialect="mysql")
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


def test_choose_files_takes_whole_files_in_seq_order_within_the_span():
    from ddlcore.spark.filebatch import choose_files

    ranges = [("c.jsonl", (31, 60)), ("a.jsonl", (1, 10)), ("b.jsonl.gz", (11, 30)), ("empty.jsonl", None),
              ("d.parquet", (61, 65))]
    assert choose_files(ranges, None, 30) == ({"empty.jsonl", "a.jsonl", "b.jsonl.gz"}, True)
    assert choose_files(ranges, 30, 20) == ({"empty.jsonl", "a.jsonl", "b.jsonl.gz", "c.jsonl"}, True)  # one file > N
    assert choose_files(ranges, 30, 35) == ({"empty.jsonl", "a.jsonl", "b.jsonl.gz", "c.jsonl", "d.parquet"}, False)
    assert choose_files(ranges, 65, 5) == ({n for n, _ in ranges}, False)


@pytest.mark.parametrize("where", ["local", "viewfs"])
def test_a_directory_of_files_is_followed_in_batches_of_whole_files(spark, tmp_path, request, where):
    """--max-batch-events over a directory of change-log files that is not a capture's (local,
    or a URI of another filesystem): each batch ends at the end of a file, holds at most N
    events unless it is one file, and the end equals one batch run."""
    import gzip

    gen = CaptureDir(tmp_path / "gen", alter_every=30)
    gen.grow(70)
    lines = gen.log.read_bytes().splitlines(keepends=True)
    cuts = [0, 12, 20, 45, 50, 62, len(lines)]  # file 3 (25 events) is more than a batch
    if where == "local":
        logdir = uri = tmp_path / "logs"
        logdir.mkdir()
    else:
        uri, logdir, _cwd = request.getfixturevalue("mounted")
    out, ends = tmp_path / "out", []
    for i, (a, b) in enumerate(zip(cuts, cuts[1:])):
        data = b"".join(lines[a:b])
        name = f"part-{i}.jsonl" + (".gz" if i == 4 else "")
        (tmp_path / name).write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
        ends.append(json.loads(lines[b - 1])["seq"])
        if i == 2:  # the rest lands while the follower runs; each file put whole (mv)
            stop, batches, box = threading.Event(), [], {}
            thread = threading.Thread(target=lambda: box.update(stats=follow(
                uri, out, spark=spark, interval=0.2, max_batch_events=15, stop=stop, on_batch=batches.append,
                dialect="mysql")))
        os.replace(tmp_path / name, logdir / name)
        if i == 2:
            thread.start()
    try:
        _wait(lambda: checkpoint(out) == ends[-1] or not thread.is_alive(), "the follower to read every file")
    finally:
        stop.set()
        thread.join(HANG)
    assert "stats" in box, "the follower failed"
    assert [r.previous_seq for r in batches[1:]] == [r.last_seq for r in batches[:-1]]
    assert all(r.last_seq in ends for r in batches), ([r.last_seq for r in batches], ends)  # whole files
    for r in batches:  # within N events, or a single file
        assert r.last_seq - (r.previous_seq or 0) <= 15 or ends.index(r.last_seq) == \
            (0 if r.previous_seq is None else ends.index(r.previous_seq) + 1), (r.previous_seq, r.last_seq)
    assert len(batches) >= 4
    ref = tmp_path / "ref"
    pl.run_pipeline(logdir, ref, spark=spark, dialect="mysql")
    assert seqs(out) == seqs(ref) and rows_by_version(out) == rows_by_version(ref)
