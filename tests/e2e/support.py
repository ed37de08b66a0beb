"""What the kill tests share: ``run_until`` runs ``ddlcore run`` and SIGKILLs its whole process
group (driver and Spark JVM) at a moment anchored on what the run is doing (``early``, while
``writing`` a table version into its staging directory, at its ``commit`` point)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path
from typing import Callable

#: seconds: the longest a single ``ddlcore run`` may take here before the test gives up
RUN_TIMEOUT = 600


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the run's process group (its own session: the driver and its Spark JVM)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def fresh(path: Path, since: float) -> bool:
    """``path`` exists and was made by the current run (not left by a killed one)."""
    try:
        return path.stat().st_mtime >= since
    except FileNotFoundError:
        return False


def staged_data(out: Path, since: float) -> bool:
    """The current run has started writing a table version into its staging directory."""
    staging = out / "_state" / "staging"
    try:
        return any(p.name.startswith("schema_version=") and fresh(p, since) for p in staging.rglob("*"))
    except FileNotFoundError:  # removed while listed
        return False


def run_until(out: Path, trigger: str, rng: random.Random, start: Callable[[Path], subprocess.Popen]) -> str:
    """Run ``ddlcore run`` (``start(out)``: a process in a session of its own) and SIGKILL
    it at the moment ``trigger`` names; return what happened (``killed ...`` or
    ``finished``)."""
    since = time.time()
    proc = start(out)
    started = time.monotonic()
    pending = out / "_state" / "pending.json"
    armed_at = None
    # ``iceberg``: a moment after the commit point, while the Iceberg commit runs (--format iceberg)
    delay = {"early": rng.uniform(2.0, 20.0), "writing": rng.uniform(0.0, 6.0), "commit": 0.0,
             "iceberg": rng.uniform(0.02, 0.3)}[trigger]
    try:
        while proc.poll() is None:
            now = time.monotonic()
            assert now - started < RUN_TIMEOUT, f"ddlcore run did not end within {RUN_TIMEOUT} s"
            if armed_at is None:
                if (trigger == "early" or (trigger == "writing" and staged_data(out, since))
                        or (trigger in ("commit", "iceberg") and fresh(pending, since))):
                    armed_at = now
            if armed_at is not None and now - armed_at >= delay:
                kill_group(proc)
                proc.wait(30)
                left = [name for name, path in (("staging", out / "_state" / "staging"), ("pending.json", pending),
                                                ("checkpoint", out / "_state" / "checkpoint.json"))
                        if path.exists()]
                return (f"killed {trigger} at {now - started:.1f} s (+{delay:.1f} s); "
                        f"left: {', '.join(left) or 'nothing'}")
            time.sleep(0.005 if trigger == "commit" else 0.05)
        out_text, err_text = proc.communicate()
        assert proc.returncode == 0, err_text[-3000:]
        return f"finished before the {trigger} kill, in {time.monotonic() - started:.1f} s"
    finally:
        if proc.poll() is None:  # an assertion above: never leave a run behind
            kill_group(proc)
            proc.wait(30)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
