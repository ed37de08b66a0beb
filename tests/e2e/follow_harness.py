"""A capture and ``ddlcore run --follow`` side by side, both as the command-line processes a
user starts, while a workload changes a real server; the follower interrupted (SIGKILL of
its process group: driver and JVM; SIGTERM: a clean stop, exit status 0) at seeded random
moments and started again (docs/operations.md).  Used by ``test_follow_servers.py``.

The seed is ``DDLCORE_FOLLOW_SEED`` when set, else a fresh one; every assertion message and
the printed log carry it, so a failure can be replayed (the moments are relative to each
follower's start, so a replay is close to, not exactly, the same interleaving).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ddlcore.runlock import probe
from tests.pipeline.growing import checkpoint, rows_by_version

REPO = Path(__file__).resolve().parents[2]
#: generous bounds, only to catch a hang on a loaded machine (seconds)
HANG = 300
#: after the workload stops and the capture checkpointed its last event, the follower must
#: commit it within this many seconds
CATCH_UP = 240


def seed() -> int:
    return int(os.environ.get("DDLCORE_FOLLOW_SEED") or random.SystemRandom().randrange(1 << 32))


def capture_seq(cap: Path) -> int:
    """The capture's checkpointed seq (0 before the first checkpoint or while it snapshots)."""
    try:
        cp = json.loads((cap / "checkpoint.json").read_text())
    except (FileNotFoundError, ValueError):
        return 0
    return int(cp["seq"]) if cp.get("phase", "streaming") == "streaming" else 0


def last_line_seq(cap: Path) -> int:
    """The seq of the change log's last complete line (0: none)."""
    try:
        data = (cap / "changelog.jsonl").read_bytes()
    except FileNotFoundError:
        return 0
    lines = data[:data.rfind(b"\n") + 1].splitlines()
    return json.loads(lines[-1])["seq"] if lines else 0


def wait_for(cond: Callable[[], bool], what: str, timeout: float, note: str) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, f"timed out ({timeout:.0f} s) waiting for {what}; {note}"
        time.sleep(0.2)


@dataclass
class Follower:
    """``ddlcore run --follow --changelog cap --out out`` as a process (its own session, so
    that a SIGKILL reaches its JVM too); every start appends to ``log``."""

    cap: Path
    out: Path
    log: Path
    args: tuple[str, ...] = ()
    proc: subprocess.Popen | None = None
    events: list[str] = field(default_factory=list)

    def start(self) -> None:
        cmd = [sys.executable, "-m", "ddlcore.cli", "run", "--follow", "--changelog", str(self.cap),
               "--out", str(self.out), "--interval", "0.3", "--master", "local[1]",
               "--conf", "spark.driver.memory=512m", "--concurrent-jobs", "1", *self.args]
        with open(self.log, "a") as fh:
            self.proc = subprocess.Popen(cmd, cwd=REPO, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True,
                                         env={**os.environ, "PYTHONUNBUFFERED": "1",
                                              "PYSPARK_PYTHON": sys.executable})

    def interrupt(self, sig: signal.Signals, note: str) -> None:
        """SIGKILL the process group (driver and JVM), or SIGTERM the driver and require exit
        status 0 (the batch in flight finished)."""
        assert self.proc is not None
        ended = self.proc.poll()
        assert ended is None, f"the follower ended by itself (status {ended}); {note}\n{self.log.read_text()[-3000:]}"
        if sig == signal.SIGKILL:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(HANG)
        else:
            self.proc.send_signal(signal.SIGTERM)
            status = self.proc.wait(HANG)
            assert status == 0, f"SIGTERM: exit status {status}; {note}\n{self.log.read_text()[-3000:]}"
            try:  # its JVM ends with it (the gateway's stdin closes); a group kill for any straggler
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def stop(self, note: str) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.interrupt(signal.SIGTERM, note)


def interruptions(rng: random.Random, rounds: int) -> list[tuple[signal.Signals, str, float]]:
    """``rounds`` interruptions ``(signal, when, seconds)`` in a random order, at least one
    SIGKILL and one SIGTERM, at least one at each ``when``: ``start`` (``seconds``, 1 to 5,
    after the follower started: while its JVM starts) and ``batch`` (``seconds``, 0 to 2, after
    a batch of this follower was committed: in the next batch or between two).  (Not earlier
    than 1 s: a signal before ``ddlcore run`` has read its command line — the interpreter's
    start, about 0.3 s — ends it as the signal's default does.)"""
    kinds = [signal.SIGKILL, signal.SIGTERM] + [rng.choice([signal.SIGKILL, signal.SIGTERM])
                                                for _ in range(rounds - 2)]
    whens = ["start", "batch"] + [rng.choice(["start", "batch"]) for _ in range(rounds - 2)]
    rng.shuffle(kinds)
    rng.shuffle(whens)
    return [(kind, when, rng.uniform(1.0, 5.0) if when == "start" else rng.uniform(0.0, 2.0))
            for kind, when in zip(kinds, whens)]


def batches_logged(log: Path) -> int:
    """The per-batch lines in the followers' log (``ddlcore.cli.follow_cli.batch_line``)."""
    try:
        return len(re.findall(r"^batch \d+: seq ", log.read_text(), re.M))
    except FileNotFoundError:
        return 0


def output_view(out: Path) -> dict:
    """All that a reader sees of ``out``: every row of every table version, the schema files'
    names, the quarantine's records and the row counts of ``_run.json`` — to compare two outputs."""
    quarantine = sorted(line for f in sorted((out / "_quarantine").glob("*.json"))
                        for line in f.read_text().splitlines() if line.strip())
    run = json.loads((out / "_run.json").read_text())["total"] if (out / "_run.json").exists() else None
    return {"rows": rows_by_version(out), "schemas": sorted(p.name for p in (out / "_schemas").glob("*.json")),
            "quarantine": quarantine, "run_total": run}


def follow_under_interruptions(*, spark, tmp: Path, start_capture: Callable[[Path], subprocess.Popen],
                               workload: Callable[[threading.Event], None], finish: Callable[[], None],
                               spark_options: dict[str, str], max_batch_events: int = 60, rounds: int = 2) -> dict:
    """The scenario of the module docstring; returns what it measured (for the caller's
    assertions beyond the equality checked here)."""
    from ddlcore.spark.pipeline import run_pipeline

    s = seed()
    rng = random.Random(s)
    note = f"seed {s} (DDLCORE_FOLLOW_SEED={s} replays it)"
    cap, out, log = tmp / "cap", tmp / "out", tmp / "follower.log"
    plan = interruptions(rng, rounds)
    print(f"{note}; interruptions: {[(k.name, w, round(t, 2)) for k, w, t in plan]}")
    capture = start_capture(cap)
    args = ("--max-batch-events", str(max_batch_events), *[a for k, v in spark_options.items()
                                                            for a in ("-s", f"{k}={v}")])
    follower = Follower(cap, out, log, args)
    done = threading.Event()
    errors: list[BaseException] = []

    def run_workload() -> None:
        try:
            workload(done)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    worker = threading.Thread(target=run_workload)
    worker.start()
    t0 = time.monotonic()
    try:  # a follower starts on a capture's directory once it holds a change log (docs/operations.md)
        wait_for(lambda: (cap / "changelog.jsonl").exists() or capture.poll() is not None,
                 "the capture's change log", HANG, note)
        follower.start()
        for kind, when, after in plan:
            if when == "batch":
                seen = batches_logged(log)
                wait_for(lambda: batches_logged(log) > seen or follower.proc.poll() is not None,
                         "a batch of the restarted follower", HANG, note)
            time.sleep(after)
            follower.interrupt(kind, note)
            print(f"{time.monotonic() - t0:6.1f} s: {kind.name} {after:.2f} s after {when}; committed seq "
                  f"{checkpoint(out)}, capture seq {capture_seq(cap)}")
            follower.start()
        done.set()
        worker.join(HANG)
        assert not errors, f"workload: {errors[0]!r}; {note}"
        finish()
        wait_for(lambda: capture_seq(cap) >= last_line_seq(cap) > 0 or capture.poll() is not None,
                 "the capture to checkpoint the workload's last event", HANG, note)
        assert capture.poll() is None, f"the capture ended (status {capture.returncode}); {note}"
        capture.send_signal(signal.SIGTERM)  # its last checkpoint: what the follower must reach
        assert capture.wait(HANG) == 0, f"the capture's exit status {capture.returncode}; {note}"
        target = capture_seq(cap)
        caught = time.monotonic()
        wait_for(lambda: (checkpoint(out) or 0) >= target or follower.proc.poll() is not None,
                 f"the follower to commit seq {target}", CATCH_UP, note)
        assert follower.proc.poll() is None, f"the follower ended; {note}\n{log.read_text()[-3000:]}"
        caught = time.monotonic() - caught
        # the last follower may have started after the last commit: stopped once it follows
        # (it holds the output's lock), past the interpreter's start (docs/operations.md)
        wait_for(lambda: probe(out).pid == follower.proc.pid and probe(out).held or follower.proc.poll() is not None,
                 "the last follower to hold the output's lock", HANG, note)
        follower.stop(note)
        print(f"caught up in {caught:.1f} s after the last capture checkpoint (seq {target})")
    finally:
        done.set()
        follower.stop(note) if follower.proc and follower.proc.poll() is None else None
        if capture.poll() is None:
            capture.send_signal(signal.SIGTERM)
            capture.wait(HANG)
        worker.join(HANG)
    text = log.read_text()
    assert "Traceback" not in text and "Exception" not in text, f"{note}\n{text[-3000:]}"
    whole, ref = tmp / "whole", tmp / "ref"
    shutil.copytree(cap, whole, ignore=shutil.ignore_patterns("capture.lock"))
    reference = run_pipeline(whole, ref, spark=spark, spark_options=spark_options)
    assert reference.last_seq == target, note
    got, expected = output_view(out), output_view(ref)
    for key in expected:
        assert got[key] == expected[key], f"{key} differ from the uninterrupted batch run's; {note}"
    return {"seed": s, "target": target, "catch_up_seconds": caught, "reference": reference, "log": text,
            "view": expected}
