"""`ddlcore run --format iceberg` against `--format parquet` on the same change log (issue 31).

Generates the pipeline benchmark's change log (``benchmarks/pipeline.py``'s ``LogWriter``:
mixed MySQL types, 80% inserts, 15% updates, 5% deletes, an ``ADD COLUMN`` between versions)
for two shapes — ``--tables 20 --versions 3`` and ``--tables 500 --versions 4 --skew 0.1`` —
and runs ``ddlcore run`` on each in turn with ``--format parquet`` and ``--format iceberg``,
each in a fresh process (its own Spark session and JVM; the job timed once its session has
started).  Issue 31 wants the Iceberg run at **least 0.8×** the Parquet run's throughput; the
difference is the driver's Iceberg commit (one ``pyiceberg`` transaction per table: schema
changes, a fast append of the run's files registered from their footers).  Also checks that
every Iceberg changes table holds as many rows as its Parquet versions.

``python benchmarks/iceberg.py [--rows N] [--shapes 20x3,500x4] [--repeat N]``; the default
(100,000 row events per shape) takes a few minutes on 2 cores.
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
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pipeline import LogWriter  # noqa: E402  (the pipeline benchmark's log generator)

SHAPES = {"20x3": (20, 3, None), "500x4": (500, 4, 0.1)}


def job_main(fmt: str, log: Path, out: Path) -> int:
    """One timed run in this process: prints seconds, rows and the Iceberg tables' row count."""
    from ddlcore.spark.pipeline import run_pipeline, spark_session

    spark = spark_session(None, f"ddlcore benchmark: --format {fmt}")
    spark.sparkContext.setLogLevel("ERROR")
    t0 = time.perf_counter()
    result = run_pipeline(log, out, spark=spark, output_format=fmt)
    seconds = time.perf_counter() - t0
    iceberg_rows = None
    if fmt == "iceberg":
        from ddlcore.sinks.iceberg import CATALOG_FILE, WAREHOUSE_DIR, open_catalog

        cat = open_catalog({"name": "ddlcore", "uri": f"sqlite:///{out / CATALOG_FILE}",
                            "warehouse": f"file://{out / WAREHOUSE_DIR}"})
        snapshots = [cat.load_table(t).current_snapshot() for ns in cat.list_namespaces() for t in cat.list_tables(ns)]
        iceberg_rows = sum(int(s.summary["total-records"]) for s in snapshots if s is not None)  # None: no rows
    print(json.dumps({"seconds": seconds, "rows": result.rows, "iceberg_rows": iceberg_rows}))
    return 0


def run_job(fmt: str, log: Path, out: Path) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    done = subprocess.run([sys.executable, __file__, "--job", fmt, "--job-log", str(log), "--job-out", str(out)],
                          stdout=subprocess.PIPE, text=True)
    if done.returncode:
        raise RuntimeError(f"the --format {fmt} run failed (exit status {done.returncode})")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=100_000, help="row events per shape")
    ap.add_argument("--shapes", default="20x3,500x4", help="tables x versions (500x4 is skewed 0.1)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each format in turn; medians reported")
    ap.add_argument("--job", choices=("parquet", "iceberg"), help=argparse.SUPPRESS)
    ap.add_argument("--job-log", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--job-out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.job:
        return job_main(args.job, args.job_log, args.job_out)
    work = Path(tempfile.mkdtemp(prefix="ddlcore-bench-iceberg-"))
    status = 0
    try:
        for shape in args.shapes.split(","):
            tables, versions, skew = SHAPES[shape]
            log = work / f"{shape}.jsonl"
            LogWriter(tables, versions, skew).generate(log, args.rows)
            times: dict[str, list[float]] = {"parquet": [], "iceberg": []}
            for _ in range(args.repeat):
                for fmt in ("parquet", "iceberg"):
                    got = run_job(fmt, log, work / f"{shape}-{fmt}")
                    if got["rows"] != args.rows or (fmt == "iceberg" and got["iceberg_rows"] != args.rows):
                        print(f"ERROR: {shape} --format {fmt}: {got}", file=sys.stderr)
                        return 1
                    times[fmt].append(got["seconds"])
            p, i = statistics.median(times["parquet"]), statistics.median(times["iceberg"])
            ratio = p / i
            print(f"{shape} ({args.rows:,} row events, load {os.getloadavg()[0]:.1f}): --format parquet "
                  f"{args.rows / p:,.0f} rows/s ({p:.1f} s), --format iceberg {args.rows / i:,.0f} rows/s "
                  f"({i:.1f} s): {ratio:.2f}x the Parquet throughput (issue 31: >= 0.8x)", flush=True)
            if ratio < 0.8:
                print(f"{shape}: below the issue's 0.8x", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
