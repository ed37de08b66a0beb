"""`ddlcore run --format iceberg` against `--format parquet` on the same change log (issue 31).

Generates the pipeline benchmark's change log (``benchmarks/pipeline.py``'s ``LogWriter``:
mixed MySQL types, 80% inserts, 15% updates, 5% deletes, an ``ADD COLUMN`` between versions)
for two shapes — ``--tables 20 --versions 3`` and ``--tables 500 --versions 4 --skew 0.1`` —
and runs ``ddlcore run`` on each in turn with ``--format parquet`` and ``--format iceberg``,
each in a fresh process (its own Spark session and JVM; the job timed once its session has
started).  Issue 31 wants the Iceberg run at **least 0.8×** the Parquet run's throughput; the
difference is the current-state tables (``IcebergSink.stage``: in local mode computed on the
driver with Arrow in forked processes, docs/tables.md, "Where it is computed") and the
driver's Iceberg commit (each new table created in one step with the run's files registered
from their footers, ``ddlcore.sinks.icecreate``; the new tables of 16 source tables
registered in one catalog transaction).  Also checks that
every Iceberg changes table holds as many rows as its Parquet versions.

The current-state merge (``--merge CHANGED:TABLE,...``, after the shapes): one table of
``TABLE`` rows written by a first run, then a second run of ``CHANGED`` updates of existing
keys spread over the table, timed on two copies of that output: with the current-state table
(the merge: the table's key columns scanned for the rows the run replaces, position delete
files written, the run's rows merged and appended, one snapshot) and without it
(``IcebergSink.stage`` skipped: the run writes and appends the ``CHANGED`` row events to the
changes table only).  Issue 31 wants the merge of 100,000 changed rows into a 2,000,000-row
table at most 3x the append, and the merge not growing with ``TABLE``.

``python benchmarks/iceberg.py [--rows N] [--shapes 20x3,500x4] [--repeat N] [--merge C:T,...]``;
the default (``make bench``: 20,000 row events per shape, one merge of 20,000 changed rows
into 200,000) finishes in a few minutes on 2 cores.  The issue's merge case and larger logs:
``--rows 100000 --merge 20000:100000,20000:800000,100000:2000000`` (well over ten minutes
here, most of it the first runs writing the merged tables).
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
    result = run_pipeline(log, out, spark=spark, output_format=fmt, dialect="mysql")
    seconds = time.perf_counter() - t0
    iceberg_rows = None
    if fmt == "iceberg":
        from ddlcore.sinks.iceberg import CATALOG_FILE, WAREHOUSE_DIR, open_catalog

        cat = open_catalog({"name": "ddlcore", "uri": f"sqlite:///{out / CATALOG_FILE}",
                            "warehouse": f"file://{out / WAREHOUSE_DIR}"})
        snapshots = [cat.load_table(t).current_snapshot() for ns in cat.list_namespaces() for t in cat.list_tables(ns)
                     if t[-1].endswith("__changes")]
        iceberg_rows = sum(int(s.summary["total-records"]) for s in snapshots if s is not None)  # None: no rows
    print(json.dumps({"seconds": seconds, "rows": result.rows, "iceberg_rows": iceberg_rows}))
    return 0


def _merge_log(path: Path, table_rows: int, changed: int, first: bool) -> None:
    """The merge benchmark's log: ``CREATE TABLE`` and ``table_rows`` inserts, then (unless
    ``first``) ``changed`` updates of keys spread over the table."""
    def ev(seq: int, **k) -> str:
        return json.dumps({"seq": seq, "position": f"p:{seq}", "ts": 1_718_000_000_000 + seq,
                           "database": "bench", **k})

    lines = [ev(1, op="ddl", ddl="CREATE TABLE m (id BIGINT PRIMARY KEY, v INT, s VARCHAR(20))")]
    lines += [ev(2 + i, op="c", table="m", after=[i, i, f"s{i}"]) for i in range(table_rows)]
    if not first:
        step = max(1, table_rows // changed)
        lines += [ev(2 + table_rows + j, op="u", table="m", before=[j * step, j * step, f"s{j * step}"],
                     after=[j * step, -j, "changed"]) for j in range(changed)]
    path.write_text("\n".join(lines) + "\n")


def _current_summary(out: Path) -> dict:
    """The merged table's current-state snapshot summary."""
    from ddlcore.sinks.iceberg import CATALOG_FILE, WAREHOUSE_DIR, open_catalog

    cat = open_catalog({"name": "ddlcore", "uri": f"sqlite:///{out / CATALOG_FILE}",
                        "warehouse": f"file://{out / WAREHOUSE_DIR}"})
    return dict(cat.load_table(("bench", "m")).current_snapshot().summary.additional_properties)


def merge_main(work: Path, table_rows: int, changed: int) -> int:
    """One merge measurement in this process (module docstring): prints the two second runs'
    seconds."""
    from ddlcore.sinks.iceberg import IcebergSink
    from ddlcore.spark.pipeline import run_pipeline, spark_session

    spark = spark_session(None, "ddlcore benchmark: current-state merge")
    spark.sparkContext.setLogLevel("ERROR")
    log = work / "merge.jsonl"
    _merge_log(log, table_rows, changed, first=True)
    out, saved = work / "out", work / "saved"
    run_pipeline(log, out, spark=spark, output_format="iceberg", dialect="mysql")
    shutil.copytree(out, saved)  # (put back at the same path: the catalog and metadata hold absolute paths)
    _merge_log(log, table_rows, changed, first=False)
    real = IcebergSink.stage
    times = {}
    for name in ("without", "with"):
        IcebergSink.stage = real if name == "with" else (lambda self, *a, **k: None)
        if name == "with":  # (moved aside, not deleted: see ``run_job``)
            out.rename(work / "out-without")
            saved.rename(out)
        t0 = time.perf_counter()
        result = run_pipeline(log, out, spark=spark, output_format="iceberg", dialect="mysql")
        times[name] = time.perf_counter() - t0
        assert result.rows == changed, result.rows
    IcebergSink.stage = real
    summary = _current_summary(out)
    assert int(summary["total-records"]) - int(summary.get("total-position-deletes", 0)) == table_rows, summary
    times["delete_files"] = int(summary.get("total-delete-files", 0))
    print(json.dumps(times))
    return 0


def merge_bench(work: Path, table_rows: int, changed: int) -> tuple[float, float]:
    """The merge measurement in a fresh process: (append seconds, merge seconds)."""
    work.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([sys.executable, __file__, "--job", "merge", "--job-out", str(work),
                           "--merge", f"{changed}:{table_rows}"],
                          stdout=subprocess.PIPE, text=True)
    if done.returncode:
        raise RuntimeError(f"the merge benchmark failed (exit status {done.returncode})")
    times = json.loads(done.stdout.strip().splitlines()[-1])
    return times["without"], times["with"] - times["without"]


def run_job(fmt: str, log: Path, out: Path) -> dict:
    """One timed run in a fresh process, into ``out``, which must not exist: outputs are
    deleted only when the benchmark ends.  A deletion just before a timed run would be charged
    to it: ext4's inode allocator skips inodes deleted in the last few seconds
    (``recently_deleted``, scanning the inode table for each new file: seen with ``perf`` as
    most of the Iceberg commit's system time after the previous run's output was deleted), and
    an Iceberg run creates about twice the files of a Parquet run."""
    if out.exists():
        raise RuntimeError(f"{out} exists: every timed run writes a new output")
    done = subprocess.run([sys.executable, __file__, "--job", fmt, "--job-log", str(log), "--job-out", str(out)],
                          stdout=subprocess.PIPE, text=True)
    if done.returncode:
        raise RuntimeError(f"the --format {fmt} run failed (exit status {done.returncode})")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=20_000, help="row events per shape")
    ap.add_argument("--shapes", default="20x3,500x4", help="tables x versions (500x4 is skewed 0.1)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each format in turn; medians reported")
    ap.add_argument("--merge", default="20000:200000",
                    help="CHANGED:TABLE,... rows changed by a run merged into a table of TABLE rows ('': none; "
                         "issue 31's case: 100000:2000000)")
    ap.add_argument("--job", choices=("parquet", "iceberg", "merge"), help=argparse.SUPPRESS)
    ap.add_argument("--job-log", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--job-out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    merges = [tuple(int(n) for n in m.split(":")) for m in args.merge.split(",") if m]
    if args.job == "merge":
        (changed, size), = merges
        return merge_main(args.job_out, size, changed)
    if args.job:
        return job_main(args.job, args.job_log, args.job_out)
    work = Path(tempfile.mkdtemp(prefix="ddlcore-bench-iceberg-"))
    status = 0
    try:
        for shape in [x for x in args.shapes.split(",") if x]:
            tables, versions, skew = SHAPES[shape]
            log = work / f"{shape}.jsonl"
            LogWriter(tables, versions, skew).generate(log, args.rows)
            times: dict[str, list[float]] = {"parquet": [], "iceberg": []}
            for i in range(args.repeat):
                for fmt in ("parquet", "iceberg"):
                    got = run_job(fmt, log, work / f"{shape}-{fmt}-{i}")
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
        for changed, size in merges:
            append, merge = merge_bench(work / f"merge-{changed}-{size}", size, changed)
            print(f"merge of {changed:,} changed rows into {size:,} rows (load {os.getloadavg()[0]:.1f}): "
                  f"run appending them to the changes table {append:.1f} s, current-state merge +{merge:.1f} s: "
                  f"{merge / append:.2f}x the append (issue 31: <= 3x)", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
