"""Per-batch cost of a warm ``ddlcore run --follow`` against a cold ``ddlcore run`` on the same
small batch, measured in one run (issue 29: the follower's fixed cost per batch must be far
below a cold run's).

A capture's directory (``changelog.jsonl`` + ``checkpoint.json``) of one table gets ``--start``
row events, committed by a first run.  Then, ``--batches`` times, ``--batch`` more events are
appended and checkpointed, and

* **cold**: ``ddlcore run`` as a fresh process (Python start, imports, a new JVM and Spark
  session, the run, exit) on a copy of the output — what a scheduler starting a run per batch
  pays — timed from its start to its exit;
* **warm**: one batch of ``ddlcore.spark.follow.follow``'s loop on the same events: the lock
  is held, the session, the imported parsers and the JIT-compiled code stay from the batches
  before — timed from the moment the follower sees the change to its commit.

Prints each side's median seconds per batch and the ratio cold / warm.

``python benchmarks/follow.py [--start N] [--batch N] [--batches K]`` (defaults 2,000, 200, 3:
about a minute on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


class Capture:
    """A capture's directory of one table ``shop.t`` (``changelog.jsonl``, ``checkpoint.json``)."""

    def __init__(self, directory: Path):
        self.dir = directory
        directory.mkdir(parents=True)
        self.seq = 0
        self.append([{"op": "ddl", "database": "shop", "ddl": "CREATE DATABASE shop"},
                     {"op": "ddl", "database": "shop",
                      "ddl": "CREATE TABLE t (id int NOT NULL PRIMARY KEY, note varchar(40), total decimal(10,2))"}])

    def rows(self, n: int) -> None:
        self.append([{"op": "c", "database": "shop", "table": "t",
                      "after": [self.seq + i, f"note {self.seq + i}", {"$dec": f"{self.seq + i}.25"}]}
                     for i in range(1, n + 1)])

    def append(self, events: list[dict]) -> None:
        with open(self.dir / "changelog.jsonl", "a") as fh:
            for e in events:
                self.seq += 1
                fh.write(json.dumps({"seq": self.seq, "position": f"bin.000001:{self.seq}",
                                     "ts": 1_700_000_000_000 + self.seq, **e}) + "\n")
            size = fh.tell()
        (self.dir / "checkpoint.json.tmp").write_text(
            json.dumps({"seq": self.seq, "changelog_bytes": size, "phase": "streaming"}))
        os.replace(self.dir / "checkpoint.json.tmp", self.dir / "checkpoint.json")


def cold_run(capture: Path, out: Path) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ddlcore.cli", "run", "--changelog", str(capture), "--out", str(out)],
                          capture_output=True, text=True)
    took = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(f"ddlcore run failed:\n{proc.stderr[-2000:]}")
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--start", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=200)
    ap.add_argument("--batches", type=int, default=3)
    args = ap.parse_args()

    from ddlcore.spark.follow import follow
    from ddlcore.spark.pipeline import run_pipeline, spark_session

    tmp = Path(tempfile.mkdtemp(prefix="ddlcore-bench-follow-"))
    try:
        cap = Capture(tmp / "cap")
        cap.rows(args.start)
        warm_out, cold_out = tmp / "warm", tmp / "cold"
        spark = spark_session()
        spark.sparkContext.setLogLevel("ERROR")
        run_pipeline(cap.dir, cold_out, spark=spark, dialect="mysql")  # the cold side's output before its batches

        stop, committed = threading.Event(), threading.Event()
        seen: list[float] = []

        def on_batch(result) -> None:
            seen.append(time.perf_counter())
            committed.set()

        follower = threading.Thread(target=follow, args=(cap.dir, warm_out), daemon=True,
                                    kwargs={"spark": spark, "interval": 0.05, "stop": stop, "on_batch": on_batch,
                                            "dialect": "mysql"})
        follower.start()
        committed.wait()  # the first batch: the whole log so far
        cold, warm = [], []
        for _ in range(args.batches + 1):  # the first batch warms the follower's code for this shape
            committed.clear()
            cap.rows(args.batch)
            t0 = time.perf_counter()
            committed.wait()
            warm.append(seen[-1] - t0)
            shutil.rmtree(tmp / "cold-copy", ignore_errors=True)
            shutil.copytree(cold_out, tmp / "cold-copy")
            cold.append(cold_run(cap.dir, tmp / "cold-copy"))
            shutil.rmtree(cold_out)
            (tmp / "cold-copy").rename(cold_out)
        stop.set()
        follower.join()
        warm, cold = warm[1:], cold[1:]
        w, c = statistics.median(warm), statistics.median(cold)
        print(f"batch of {args.batch} events after {args.start:,} ({args.batches} batches, medians):")
        print(f"  warm follower: {w:.2f} s per batch  ({', '.join(f'{x:.2f}' for x in warm)})")
        print(f"  cold ddlcore run: {c:.2f} s per batch  ({', '.join(f'{x:.2f}' for x in cold)})")
        print(f"  cold / warm: {c / w:.1f}x")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
