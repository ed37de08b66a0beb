"""One output, one writer (docs/pipeline.md, "Guarantees"): a run holds the output's lock for
its whole length (``ddlcore.spark.outlock``), a second run is refused with one line naming the
holder and touches nothing, a commit whose staged file is gone fails instead of skipping it, and
``ddlcore run`` processes started at random moments on one output while its change log grows
write every ``seq`` exactly once — the output of one uninterrupted run."""

from __future__ import annotations

import json
import os
import random
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.pipeline.growing import CaptureDir, checkpoint, rows_by_version, seqs
from tests.pipeline.test_commit import sharded_log

pyspark = pytest.importorskip("pyspark")

from ddlcore.spark import commit  # noqa: E402
from ddlcore.spark import outlock  # noqa: E402
from ddlcore.spark import pipeline as pl  # noqa: E402
from ddlcore.spark.fs import OutputFS  # noqa: E402

DDLCORE = [sys.executable, "-m", "ddlcore.cli"]


def _tree(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_size for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_run_on_a_locked_output_is_refused_naming_the_holder_and_changes_nothing(spark, tmp_path):
    log = sharded_log(tmp_path)
    out = tmp_path / "out"
    pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    # a run killed before its commit point left staging files: only the lock's holder may remove them
    staged = out / "_state" / "staging" / "20260101T000000-deadbeef" / "x.parquet"
    staged.parent.mkdir(parents=True)
    staged.write_bytes(b"another run's file")
    fs = OutputFS(spark, str(out))
    try:
        with outlock.OutputLock(fs, command="ddlcore run --follow"):
            before = _tree(out)
            assert outlock.holder(out)["pid"] == os.getpid()
            with pytest.raises(outlock.OutputLocked) as err:
                pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
            msg = str(err.value)
            assert "\n" not in msg and f"pid {os.getpid()}" in msg and socket.gethostname() in msg, msg
            assert "ddlcore run --follow" in msg and "since 20" in msg, msg
            assert _tree(out) == before  # the staging area of the holder is left alone
    finally:
        fs.close()
    assert outlock.holder(out) is None
    assert pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql").events == 0  # the lock is free again
    assert not staged.exists()


def test_a_lock_on_another_filesystem_is_a_file_created_atomically(spark, tmp_path, mounted):
    uri, target, _ = mounted
    log = sharded_log(tmp_path)
    out = f"{uri}/o"
    pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    lock_file = target / "o" / outlock.LOCK_PATH
    assert not lock_file.exists()  # removed at the end of the run
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        for host, pid, age, live in ((socket.gethostname(), sleeper.pid, 0, True),   # a live process here
                                     ("elsewhere", 1, 0, True),                       # renewed recently
                                     ("elsewhere", 1, outlock.STALE_SECONDS + 5, False),  # not renewed
                                     (socket.gethostname(), 2 ** 22 + 7, 0, False)):  # a dead process here
            lock_file.write_text(json.dumps({"pid": pid, "host": host, "since": "2026-01-01T00:00:00Z"}))
            os.utime(lock_file, (time.time() - age, time.time() - age))
            if live:
                with pytest.raises(outlock.OutputLocked, match=f"pid {pid}, host {host}, since 2026"):
                    pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
                assert lock_file.exists()
            else:  # a killed run's lock: taken over, and removed at the end
                assert pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql").events == 0
                assert not lock_file.exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_commit_whose_staged_file_is_gone_fails_and_is_not_skipped(spark, tmp_path, monkeypatch):
    log = sharded_log(tmp_path)
    out = tmp_path / "out"
    real = commit.plan_moves

    def plan_then_lose_one(fs, staging, run_id):
        moves = real(fs, staging, run_id)
        fs.delete(moves[-1][0], recursive=True)
        return moves

    monkeypatch.setattr(commit, "plan_moves", plan_then_lose_one)
    with pytest.raises(pl.PipelineError, match=r"commit: .* is missing and was not moved"):
        pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    assert checkpoint(out) is None  # never committed as if the rows were there


def _start(changelog: Path, out: Path, logs: Path, i: int) -> subprocess.Popen:
    fh = open(logs / f"run{i}.txt", "w")
    return subprocess.Popen(DDLCORE + ["run", "--dialect", "mysql", "--changelog", str(changelog), "--out", str(out),
                                       "--conf", "spark.driver.memory=512m", "--concurrent-jobs", "1"],
                            stdout=fh, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def test_runs_started_at_random_moments_on_a_growing_log_write_every_seq_once(spark, tmp_path):
    """Three ``ddlcore run`` processes, each started at a random moment while the capture
    directory grows; each either commits or is refused with the lock's one line.  A last run
    then finds the output equal to that of one run over the whole log."""
    rnd = random.Random(os.environ.get("PYTEST_SEED", 30))
    cap = CaptureDir(tmp_path / "cap", alter_every=60)
    cap.grow(20)
    out, logs = tmp_path / "out", tmp_path / "logs"
    logs.mkdir()
    grower = cap.grow_for(seconds=12.0, every=0.25, n=4)
    procs = []
    for i in range(3):
        time.sleep(rnd.uniform(0.0, 3.0))
        procs.append(_start(cap.dir, out, logs, i))
    for p in procs:
        assert p.wait(timeout=600) in (0, 1)
    grower.join()
    texts = [(logs / f"run{i}.txt").read_text() for i in range(3)]
    for p, text in zip(procs, texts):
        if p.returncode:  # refused, with the holder's pid: nothing else may stop it
            lines = [ln for ln in text.splitlines() if ln.startswith("error: stopped:")]
            assert len(lines) == 1 and "is being written by another run (ddlcore run, pid" in lines[0], text
    assert any(p.returncode == 0 for p in procs), texts
    pl.run_pipeline(cap.dir, out, spark=spark, dialect="mysql")  # the last run, once the log stopped growing
    assert seqs(out) == sorted(e for e in range(1, cap.seq + 1) if e not in _ddl_seqs(cap.log))
    ref = tmp_path / "ref"
    whole = tmp_path / "whole"
    shutil.copytree(cap.dir, whole)
    pl.run_pipeline(whole, ref, spark=spark, dialect="mysql")
    assert rows_by_version(out) == rows_by_version(ref)
    assert checkpoint(out) == checkpoint(ref) == cap.seq


def _ddl_seqs(log: Path) -> set[int]:
    return {e["seq"] for e in map(json.loads, log.read_text().splitlines()) if e["op"] == "ddl"}
