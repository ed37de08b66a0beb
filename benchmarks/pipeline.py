"""Throughput of `ddlcore run` against baselines measured in the same run.

Generates a change log of ``--rows`` row events over ``--tables`` tables, each table with
``--versions`` schema versions (a column added by ALTER TABLE between them), mixed MySQL
types (unsigned ints, enum, set, latin1 text, decimal, datetime(3), date), 80% inserts, 15%
updates, 5% deletes; ``--skew F``: a share F of the tables holds 90% of the rows (the many-tables
scenario: ``--tables 500 --versions 4 --skew 0.1``).  Then, each with a ``local[*]`` session:

* **limit**: plain Spark reads the same JSON Lines with a hand-written schema, casts the
  raw array elements to the target types (no unsigned fix, no enum/set/charset decoding) and
  writes Parquet — the cost of reading and writing alone; in ``spark_session``'s session, as
  ddlcore's (the parallel collector with its adaptive size policy: ``ddlcore.spark.localjvm``);
* **ddlcore**: ``run_pipeline`` (history, version tagging, conversion — in local mode in the
  driver's worker processes, ``ddlcore.spark.driver`` —, quarantine, commit);
* **naive UDF** (``--no-udf`` leaves it out): the same job (``run_pipeline``, same history,
  tagging and commit) with each table version converted by a per-row Python UDF applying
  ``RowConverter.try_convert`` in a Spark job instead of ddlcore's converters (every
  conversion group a Spark job: none converted on the driver); its output is compared with
  ddlcore's, row for row (every table version, both ways);
* **incremental** (``--incremental N``, default 1,000; 0 leaves it out): N more row events
  appended to the log, then ``ddlcore run`` as a fresh process on the ddlcore output, next to
  a fresh process that only starts a Spark session (``spark_session()``); the target is the first ≤ 2× the
  second.

Each of the three runs in a fresh process (its own Spark session and JVM, as a user's
``ddlcore run`` or ``spark-submit`` does), its job timed once its session has started:
the JVM compiles its hot code during the first job that runs it (in one JVM, the limit's job
ran 42.7 s, then 24.6 s and 25.3 s again), so in a shared JVM the first job paid for the
others' warm-up (6d7d3bc; docs/pipeline.md, "Performance").  ``--repeat N``
runs the limit and ddlcore in turn N times and reports the medians (the ratio: the median of
the N pairs' ratios): a cold job's time varies by a third from run to run on 2 cores.

Prints rows/s of each and the ratios (with the UDF: also the conversion phase's ratio, the
stage where the two runs differ, ``ConversionPhase``), the per-version overhead (``(ddlcore − limit) /
versions written``: the seconds each table version costs beyond the rows it holds, if the
rows cost what the limit pays for them), and the peak resident memory of the ddlcore run's
driver: its Python process and its JVM (``VmHWM``), the largest of the processes the driver
forks to convert groups (``ru_maxrss`` of its children), and the JVM's live heap (the most
its old generation held after a full collection: the data it kept, apart from how far the
collector let the heap grow).

``python benchmarks/pipeline.py [--rows N] [--tables T] [--versions V] [--skew F]
[--incremental N] [--distinct] [--no-udf] [--concurrent-jobs J] [--repeat N] [--keep]``.  Tables ``i`` and
``i + 8`` have the same columns (as sharded tables do), so ``ddlcore run`` converts their
versions with one plan; ``--distinct`` gives every table columns of its own.  The default (200,000 events,
20 × 3) takes a few minutes on 2 cores; the reference sizes: ``--rows 2000000`` (20 × 3) and
``--rows 2000000 --tables 500 --versions 4 --skew 0.1 --no-udf``.
"""

from __future__ import annotations

import argparse
import decimal
import json
import os
import resource
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ddlcore.raw import encode_json


#: the columns of every table: (definition, raw value generator); each table has them in its
#: own order (rotated by its number), so that no two tables share generated code
COLUMNS = [
    ("id int unsigned NOT NULL", lambda rng, key: key - 2 ** 31 if key % 7 == 0 else key),
    ("status enum('new','paid','sent')", lambda rng, key: rng.randint(1, 3)),
    ("flags set('a','b','c')", lambda rng, key: rng.randint(0, 7)),
    ("name varchar(40) CHARACTER SET latin1", lambda rng, key: f"caf\u00e9 {key}".encode("cp1252")),
    ("total decimal(10,2)", lambda rng, key: decimal.Decimal(rng.randint(0, 10 ** 7)) / 100),
    ("created datetime(3)",
     lambda rng, key: f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)} 12:34:56.{rng.randint(0, 999):03d}"),
    ("day date", lambda rng, key: f"2024-02-{rng.randint(10, 28)}"),
    ("qty smallint unsigned", lambda rng, key: rng.randint(-32768, 32767)),
]
#: the share of row events that are updates and deletes (the rest are inserts)
UPDATES, DELETES = 0.15, 0.05


def _order(i: int) -> list[int]:
    k = i % len(COLUMNS)
    return list(range(k, len(COLUMNS))) + list(range(k))


def table_ddl(i: int, distinct: bool = False) -> str:
    """Table ``i``: the columns in its own order (8 orders: tables ``i`` and ``i + 8`` have the
    same columns); ``distinct``: its text column's length is ``40 + i``, so that no two tables
    have the same columns (no table version shares a conversion plan with another)."""
    cols = [COLUMNS[c][0] for c in _order(i)]
    if distinct:
        cols = [c.replace("varchar(40)", f"varchar({40 + i})") for c in cols]
    return f"CREATE TABLE t{i:02d} (" + ", ".join(cols) + ")"


def raw_row(rng: random.Random, i: int, key: int, extra: int) -> list:
    """A row of table ``i`` (its column order) with ``extra`` added int columns."""
    return [COLUMNS[c][1](rng, key) for c in _order(i)] + [rng.randint(0, 1000) for _ in range(extra)]


def _table_weights(tables: int, skew: float | None) -> list[float]:
    """Each table's share of the rows: equal, or (``skew``) a share ``skew`` of the tables
    (at least one) holding 90% of them."""
    if not skew:
        return [1.0] * tables
    hot = max(1, round(tables * skew))
    cold = tables - hot
    if not cold:
        return [1.0] * tables
    return [0.9 / hot] * hot + [0.1 / cold] * cold


class LogWriter:
    """Writes the benchmark's change log: DDL and row events with ``seq`` 1, 2, 3, ...; keeps
    its place so that more events can be appended later (the incremental run)."""

    def __init__(self, tables: int, versions: int, skew: float | None = None, seed: int = 7,
                 distinct: bool = False):
        self.rng = random.Random(seed)
        self.distinct = distinct
        self.tables, self.versions = tables, versions
        self.weights = _table_weights(tables, skew)
        self.seq = 0
        self.key = 0

    def _emit(self, fh, **ev) -> None:
        self.seq += 1
        ev.update(seq=self.seq, position=f"bin.000001:{self.seq}", ts=1_700_000_000_000 + self.seq)
        fh.write(json.dumps(ev, separators=(",", ":")) + "\n")

    def _rows(self, fh, n: int, version: int) -> None:
        rng, tables = self.rng, self.tables
        if self.weights.count(self.weights[0]) == tables:  # round robin: every table alike
            picks = (k % tables for k in range(n))
        else:
            picks = iter(rng.choices(range(tables), weights=self.weights, k=n))
        for i in picks:
            self.key += 1
            r = rng.random()
            image = [encode_json(x) for x in raw_row(rng, i, self.key, version)]
            name = f"t{i:02d}"
            if r < DELETES:
                self._emit(fh, op="d", database="bench", table=name, before=image)
            elif r < DELETES + UPDATES:
                self._emit(fh, op="u", database="bench", table=name, before=image,
                           after=[encode_json(x) for x in raw_row(rng, i, self.key, version)])
            else:
                self._emit(fh, op="c", database="bench", table=name, after=image)

    def generate(self, path: Path, rows: int) -> None:
        """``rows`` row events (inserts, updates, deletes) over the tables, each table with
        ``versions`` versions (an ALTER TABLE ... ADD COLUMN between them)."""
        per_version = rows // self.versions
        with open(path, "w") as fh:
            self._emit(fh, op="ddl", database="bench", ddl="CREATE DATABASE bench")
            for i in range(self.tables):
                self._emit(fh, op="ddl", database="bench", ddl=table_ddl(i, self.distinct))
            for v in range(self.versions):
                if v:
                    for i in range(self.tables):
                        self._emit(fh, op="ddl", database="bench", ddl=f"ALTER TABLE t{i:02d} ADD COLUMN x{v} int")
                self._rows(fh, per_version if v < self.versions - 1 else rows - per_version * v, v)

    def append(self, path: Path, rows: int) -> None:
        """``rows`` more row events in the last versions."""
        with open(path, "a") as fh:
            self._rows(fh, rows, self.versions - 1)


def _udf_write_version(rows, table, sopts, dialect, target, bad_dir, *, after=True, before=True,
                       partition_by=None, partitions=1):
    """``ddlcore.spark.convertpass.write_version`` with a per-row Python UDF as the converter
    (``RowConverter.try_convert`` on each image, absent markers listed as the pipeline lists
    them); the same output columns and field metadata.  Rows that cannot be converted are not
    quarantined here: the benchmark's log has none, and an error says so if it had."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, BooleanType, StringType, StructField, StructType

    from ddlcore.raw import ABSENT, from_text
    from ddlcore.spark import RowConverter
    from ddlcore.spark.pipeline import META_COLUMNS, META_METADATA

    conv = RowConverter(table, dialect, options=sopts)
    positional = StructType([StructField(f"_{i}", f.dataType) for i, f in enumerate(conv.struct_type.fields, 1)])
    names = conv.names
    out_type = StructType([StructField("v", positional), StructField("bad", BooleanType()),
                           StructField("absent", ArrayType(StringType()))])

    def convert(arr):
        if arr is None:
            return None
        values = [from_text(x) for x in arr]
        absent = [n for n, v in zip(names, values) if v is ABSENT] if len(values) == len(names) else []
        row, errors = conv.try_convert([None if v is ABSENT else v for v in values])
        return row, bool(errors), (absent or None)

    udf = F.udf(convert, out_type)
    tally = Observation()
    keep = ["seq", "position", "op", "ts", "tx", "row", "_part"]
    df = rows.select(*keep, udf("after").alias("_a"), udf("before").alias("_b"))
    is_bad = F.coalesce(F.col("_a.bad"), F.lit(False)) | F.coalesce(F.col("_b.bad"), F.lit(False))
    df = df.observe(tally, F.count(F.when(is_bad, 1)).alias("_bad"))
    fields = [(f"_{i}", f.name, f.metadata) for i, f in enumerate(conv.struct_type.fields, start=1)]
    is_delete, has_before = F.col("op") == "d", F.col("op").isin("u", "d")
    meta = [F.col("op"), F.col("seq"), F.col("position"), F.col("ts"), F.col("tx"), F.col("row"),
            F.when(is_delete, F.col("_b.absent")).otherwise(F.col("_a.absent")),
            F.when(has_before, F.struct(*[F.col(f"_b.v.{p}").alias(n, metadata=md) for p, n, md in fields])),
            F.when(has_before, F.col("_b.absent"))]
    writer = df.where(~is_bad).select(
        *[F.when(is_delete, F.col(f"_b.v.{p}")).otherwise(F.col(f"_a.v.{p}")).alias(n, metadata=md)
          for p, n, md in fields],
        *[c.alias(n, metadata=META_METADATA[n]) for c, n in zip(meta, META_COLUMNS)],
        *([F.col(partition_by)] if partition_by else [])).write.mode("overwrite")
    if partition_by:  # as the pipeline writes: one open file per version and task (set by _run)
        writer.partitionBy(partition_by).parquet(str(target))
    else:
        writer.parquet(str(target))
    if tally.get.get("_bad"):
        raise RuntimeError(f"the UDF baseline found {tally.get['_bad']} rows it cannot convert in {table.id}")
    return False


def limit_job(spark, log: Path, out: Path) -> None:
    """The limit: plain Spark reads ``log`` with a hand-written schema, casts the raw array
    elements to the target types by position and writes Parquet partitioned by table."""
    from pyspark.sql import functions as F

    from ddlcore.spark.pipeline import EVENT_SCHEMA_DDL

    ev = spark.read.text(str(log)).select(F.from_json("value", EVENT_SCHEMA_DDL).alias("e")).select("e.*")
    casts = ["long", "string", "string", "string", "decimal(10,2)", "timestamp_ntz", "date", "int"]

    def payload(x):  # a tagged value's payload ({"$dec":"1.50"} → 1.50), else the text
        return F.when(x.startswith('{"$'), F.regexp_extract(x, r'^\{"\$\w+":"(.*)"\}$', 1)).otherwise(x)

    def image(arr):  # every table's columns are rotated: cast by position in table 0's order
        return [payload(F.get(arr, i)).try_cast(t).alias(f"c{i}") for i, t in enumerate(casts)]

    row = F.when(F.col("op") == "d", F.col("before")).otherwise(F.col("after"))
    plain = ev.where(F.col("op").isin("c", "u", "d")).select(
        "table", *image(row), F.when(F.col("op").isin("u", "d"), F.struct(*image(F.col("before")))).alias("_before"))
    plain.write.mode("overwrite").partitionBy("table").parquet(str(out))


class ConversionPhase:
    """``run_pipeline``'s ``progress`` callback that times its conversion phase: from its first
    ``converting ...`` message to ``writing N schema file(s)`` (the stage where ddlcore's and
    the naive UDF's runs differ; the DDL pass, the staging and the commit are the same job).
    ``seconds``: ``None`` until both were seen."""

    def __init__(self):
        self.start: float | None = None
        self.seconds: float | None = None

    def __call__(self, message: str) -> None:
        now = time.perf_counter()
        if self.start is None and message.startswith("converting"):
            self.start = now
        elif self.start is not None and self.seconds is None and message.startswith("writing "):
            self.seconds = now - self.start


def ddlcore_job(spark, log: Path, out: Path, jobs: int, progress=None):
    """``run_pipeline`` on ``log`` into ``out`` (``progress``: its callback); its result."""
    from ddlcore.spark.pipeline import run_pipeline

    return run_pipeline(log, out, spark=spark, concurrent_jobs=jobs, progress=progress, dialect="mysql")


def udf_job(spark, log: Path, out: Path, jobs: int, progress=None):
    """``run_pipeline`` with every table version converted by the naive per-row Python UDF
    (``_udf_write_version``) in a Spark job (``progress``: its callback); its result."""
    from ddlcore.runconfig import Tuning
    from ddlcore.spark import convertpass, pipeline

    real = convertpass.write_version
    convertpass.write_version = _udf_write_version
    try:
        return pipeline.run_pipeline(log, out, spark=spark, concurrent_jobs=jobs, progress=progress,
                                     tuning=Tuning(driver_max_rows=-1), dialect="mysql")
    finally:
        convertpass.write_version = real


def run_job(kind: str, log: Path, out: Path, jobs: int) -> dict:
    """Run one timed job (``limit``, ``ddlcore`` or ``udf``) in a fresh process (``--job``):
    each job starts its own Spark session and JVM, as a user's ``ddlcore run`` or
    ``spark-submit`` does, and none warms the JVM for another.  What it measured: ``seconds``
    (the job alone, after the session started), ``rows``, ``versions``, ``counts``, and the
    process's peaks in MB (``python_mb``, ``jvm_mb``, ``workers_mb``, ``live_mb``)."""
    env = {**os.environ, "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable)}
    done = subprocess.run([sys.executable, __file__, "--job", kind, "--job-log", str(log), "--job-out", str(out),
                           "--concurrent-jobs", str(jobs)], env=env, stdout=subprocess.PIPE, text=True)
    if done.returncode:
        raise RuntimeError(f"the {kind} job failed (exit status {done.returncode})")
    return json.loads(done.stdout.strip().splitlines()[-1])


def job_main(kind: str, log: Path, out: Path, jobs: int) -> int:
    """The process of one timed job (``run_job``): prints what it measured as one JSON line."""
    import threading

    from ddlcore.spark.pipeline import spark_session

    spark = spark_session(None, f"ddlcore benchmark: {kind}")
    spark.sparkContext.setLogLevel("ERROR")
    jvm = _jvm_pid(spark)
    live = _LiveHeap(spark)
    threading.Thread(target=live.watch, daemon=True).start()
    _reset_peak(os.getpid())
    if jvm:
        _reset_peak(jvm)
    t0 = time.perf_counter()
    if kind == "limit":
        limit_job(spark, log, out)
        seconds = time.perf_counter() - t0
        measured = {"rows": spark.read.parquet(str(out)).count(), "versions": None, "counts": None}
    else:
        phase = ConversionPhase()
        res = (ddlcore_job if kind == "ddlcore" else udf_job)(spark, log, out, jobs, progress=phase)
        seconds = time.perf_counter() - t0
        measured = {"rows": res.rows, "versions": len(res.versions_written),
                    "counts": sorted([*k, n] for k, n in res.counts.items()), "conversion_seconds": phase.seconds}
    live.stop()
    measured.update(seconds=seconds, python_mb=_peak_mb(os.getpid()), jvm_mb=_peak_mb(jvm) if jvm else None,
                    # the largest child that ended (the JVM has not): the driver's conversion workers
                    workers_mb=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
                    live_mb=live.peak_mb)
    spark.stop()
    print(json.dumps(measured, default=str))
    return 0


class _LiveHeap:
    """The most the JVM's old generation held after a full collection while the job ran: the
    data it kept, apart from how far the collector let its heap grow (``MemoryPoolMXBean``
    ``getCollectionUsage``, read twice a second)."""

    def __init__(self, spark):
        self._jvm = spark._jvm
        self.peak_mb = 0.0
        self._stopped = False

    def watch(self) -> None:
        mf = self._jvm.java.lang.management.ManagementFactory
        pools = [p for p in mf.getMemoryPoolMXBeans() if "Old Gen" in p.getName() or "Tenured" in p.getName()]
        while not self._stopped:
            for p in pools:
                used = p.getCollectionUsage()
                if used is not None:
                    self.peak_mb = max(self.peak_mb, used.getUsed() / 2 ** 20)
            time.sleep(0.5)

    def stop(self) -> None:
        self._stopped = True


def _canonical_rows(spark, root: Path):
    """Every row file under ``root`` (all tables and versions, one DataFrame: the tables
    share column names and types) as ``(table, version, row JSON)``."""
    from pyspark.sql import functions as F

    df = spark.read.option("mergeSchema", "true").parquet(*[str(p) for p in sorted(root.glob("*/*/schema_version=*"))])
    path = F.input_file_name()
    cols = sorted(df.columns)
    return df.select(F.regexp_extract(path, r"/([^/]+)/schema_version=", 1).alias("t"),
                     F.regexp_extract(path, r"schema_version=(\d+)", 1).alias("v"),
                     F.to_json(F.struct(*[F.col(c) for c in cols])).alias("row"))


def same_output(spark, a: Path, b: Path) -> tuple[bool, int]:
    """Whether both outputs hold the same rows (every table version, compared as multisets,
    both ways), and how many rows they hold."""
    x, y = _canonical_rows(spark, a), _canonical_rows(spark, b)
    n = x.count()
    return n == y.count() and not x.exceptAll(y).limit(1).count() and not y.exceptAll(x).limit(1).count(), n


def _reset_peak(pid: int) -> None:
    """Reset the peak resident set (``VmHWM``) of a process (Linux: ``clear_refs`` 5)."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        pass


def _peak_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _jvm_pid(spark) -> int | None:
    try:
        return int(spark._jvm.java.lang.ProcessHandle.current().pid())
    except Exception:  # noqa: BLE001 - informational
        return None


_STARTUP = """
import time, sys
t0 = time.perf_counter()
from ddlcore.spark.pipeline import spark_session
s = spark_session(None, "start-up")
s.range(1).count()
print(time.perf_counter() - t0)
s.stop()
"""


def spark_startup_seconds() -> float:
    """A fresh process's Spark start-up: import, ``spark_session()`` and a first (trivial) job."""
    out = subprocess.run([sys.executable, "-c", _STARTUP], check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def incremental_seconds(log: Path, out: Path, jobs: int) -> tuple[float, dict]:
    """``ddlcore run`` as a fresh process on an existing output: wall seconds and its
    ``_run.json`` ``last_run``."""
    ddlcore = Path(sys.executable).with_name("ddlcore")
    t0 = time.perf_counter()
    subprocess.run([str(ddlcore), "run", "--changelog", str(log), "--out", str(out),
                    "--concurrent-jobs", str(jobs)], check=True, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    return seconds, json.loads((out / "_run.json").read_text())["last_run"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=200_000, help="row events (reference size: 2,000,000)")
    ap.add_argument("--tables", type=int, default=20)
    ap.add_argument("--versions", type=int, default=3)
    ap.add_argument("--skew", type=float, default=None,
                    help="a share of the tables holding 90%% of the rows (many-tables scenario: 0.1)")
    ap.add_argument("--incremental", type=int, default=1000,
                    help="row events appended for the incremental run (0: no incremental run)")
    ap.add_argument("--distinct", action="store_true",
                    help="no two tables with the same columns (default: 8 column orders, as sharded tables)")
    ap.add_argument("--no-udf", action="store_true", help="leave out the naive-UDF baseline")
    ap.add_argument("--concurrent-jobs", type=int, default=None, help="run_pipeline's (default: its own)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run the limit and ddlcore in turn this many times and report the medians")
    ap.add_argument("--job", choices=("limit", "ddlcore", "udf"), help=argparse.SUPPRESS)
    ap.add_argument("--job-log", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--job-out", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()

    from ddlcore.spark import pipeline

    if args.concurrent_jobs is None:
        args.concurrent_jobs = pipeline.DEFAULT_CONCURRENT_JOBS
    if args.job:
        return job_main(args.job, args.job_log, args.job_out, args.concurrent_jobs)

    work = Path(tempfile.mkdtemp(prefix="ddlcore-bench-"))
    log = work / "changelog.jsonl"
    t0 = time.perf_counter()
    writer = LogWriter(args.tables, args.versions, args.skew, distinct=args.distinct)
    writer.generate(log, args.rows)
    n_rows = args.rows
    load = os.getloadavg()[0]
    print(f"change log: {n_rows:,} row events, {args.tables} tables x {args.versions} versions"
          f"{f', {args.skew:.0%} of the tables hold 90% of the rows' if args.skew else ''}, "
          f"{args.tables if args.distinct else min(args.tables, len(COLUMNS))} distinct column lists per version, "
          f"{log.stat().st_size / 1e6:.0f} MB, generated in {time.perf_counter() - t0:.0f} s; "
          f"{os.cpu_count()} cpus (load average {load:.1f} before Spark), concurrent jobs {args.concurrent_jobs}",
          flush=True)

    # -- the timed jobs: each in a fresh process ------------------------------------------------
    # ``--repeat N``: the limit and ddlcore in turn, N times; the medians are reported (a cold
    # job's time varied by a third from run to run on this 2-core machine)
    limits, ddls, ratios = [], [], []
    for r in range(args.repeat):
        limit = run_job("limit", log, work / "limit", args.concurrent_jobs)
        shutil.rmtree(work / "ddlcore", ignore_errors=True)  # a fresh output: not an incremental run
        ddl = run_job("ddlcore", log, work / "ddlcore", args.concurrent_jobs)
        if ddl["rows"] != n_rows:
            print(f"ERROR: ddlcore wrote {ddl['rows']:,} rows, not {n_rows:,}", file=sys.stderr)
            return 1
        limits.append(limit["seconds"])
        ddls.append(ddl)
        ratios.append(limit["seconds"] / ddl["seconds"])
        print(f"limit (plain Spark casts)   : {n_rows / limit['seconds']:12,.0f} rows/s  ({limit['seconds']:.1f} s; "
              f"{limit['rows']:,} rows)", flush=True)
        print(f"ddlcore run                 : {n_rows / ddl['seconds']:12,.0f} rows/s  ({ddl['seconds']:.1f} s; "
              f"{ddl['versions']} table versions written)" + (f"; ratio {ratios[-1]:.2f}x" if args.repeat > 1 else ""),
              flush=True)
    limit_s = statistics.median(limits)
    ddl, ddl_s = ddls[-1], statistics.median(d["seconds"] for d in ddls)  # the last run wrote work/ddlcore
    n_versions = ddl["versions"]
    udf_s = None
    if not args.no_udf:
        udf = run_job("udf", log, work / "udf", args.concurrent_jobs)
        udf_s = udf["seconds"]
        if udf["rows"] != n_rows or udf["counts"] != ddl["counts"]:
            print("ERROR: the UDF job wrote other rows than ddlcore", file=sys.stderr)
            return 1
        print(f"naive Python UDF, same job  : {n_rows / udf_s:12,.0f} rows/s  ({udf_s:.1f} s)", flush=True)
        from ddlcore.spark.pipeline import spark_session

        spark = spark_session(None, "ddlcore benchmark: compare")
        spark.sparkContext.setLogLevel("ERROR")
        same, compared = same_output(spark, work / "ddlcore", work / "udf")
        spark.stop()
        print(f"outputs equal (ddlcore, UDF): {same} ({compared:,} rows compared)", flush=True)
        if not same:
            print("ERROR: ddlcore and the naive UDF wrote different rows", file=sys.stderr)
            return 1

    # -- incremental run, fresh process ---------------------------------------------------------
    inc = None
    if args.incremental:
        writer.append(log, args.incremental)
        startup_s = spark_startup_seconds()
        inc_s, last_run = incremental_seconds(log, work / "ddlcore", args.concurrent_jobs)
        if last_run["rows"] != args.incremental:
            print(f"ERROR: the incremental run wrote {last_run['rows']} rows, not {args.incremental}", file=sys.stderr)
            return 1
        inc = (inc_s, startup_s)
        print(f"incremental run ({args.incremental:,} new)  : {inc_s:12.1f} s  (fresh process; "
              f"Spark start-up alone {startup_s:.1f} s; the run itself says {last_run['seconds']:.1f} s)", flush=True)

    pairs = f"  (median of {args.repeat} pairs: {', '.join(f'{x:.2f}' for x in ratios)})" if args.repeat > 1 else ""
    print(f"ddlcore / limit             : {statistics.median(ratios):12.2f}x{pairs}")
    if udf_s is not None:
        print(f"ddlcore / naive UDF         : {udf_s / ddl_s:12.2f}x")
        conv = (ddl["conversion_seconds"], udf["conversion_seconds"])
        if None not in conv:
            print(f"conversion phase / UDF's    : {conv[1] / conv[0]:12.2f}x  (ddlcore {conv[0]:.1f} s, naive UDF "
                  f"{conv[1]:.1f} s: from the first 'converting' to the schema files; the rest is the same job)")
    print(f"per-version overhead        : {(ddl_s - limit_s) / max(1, n_versions) * 1000:12.1f} ms  "
          f"((ddlcore - limit) / {n_versions} versions)")
    if inc:
        print(f"incremental / start-up      : {inc[0] / inc[1]:12.2f}x")
    peak = {k: max((d[k] or 0) for d in ddls) for k in ("python_mb", "jvm_mb", "workers_mb", "live_mb")}
    print(f"peak driver RSS (ddlcore run{'s' if args.repeat > 1 else ''}): python {peak['python_mb']:.0f} MB"
          + (f", JVM {peak['jvm_mb']:.0f} MB" if peak["jvm_mb"] else "")
          + f", largest child process that ended (the conversion workers) {peak['workers_mb']:.0f} MB; "
          f"the JVM's live heap (old generation after full collections, at most) {peak['live_mb']:.0f} MB")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"kept {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
