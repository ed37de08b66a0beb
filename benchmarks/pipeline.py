"""Throughput of `ddlcore run` against two baselines measured in the same run.

Generates a change log of ``--rows`` row events (default 2,000,000) over ``--tables`` tables
(default 20), each table with ``--versions`` schema versions (a column added by ALTER TABLE
between them), mixed MySQL types (unsigned ints, enum, set, latin1 text, decimal,
datetime(3), date).  Then, in one Spark session (``local[*]``):

* **limit**: plain Spark reads the same JSON Lines with a hand-written schema, casts the
  raw array elements to the target types (no unsigned fix, no enum/set/charset decoding) and
  writes Parquet — the cost of reading and writing alone;
* **ddlcore**: ``run_pipeline`` (history, version tagging, JVM conversion, quarantine, commit);
* **naive UDF**: the same job (``run_pipeline`` with the same history, tagging, staging and
  commit) with each table version converted by a per-row Python UDF applying
  ``RowConverter.convert`` instead of ``RowConverter.columns`` — what a hand-written Python
  converter costs in the same pipeline.

Prints rows/s of each and the ratios, and the peak memory of the driver (Python process and
its JVM).  ``python benchmarks/pipeline.py [--rows N] [--tables T] [--versions V]
[--concurrent-jobs J]``.
"""

from __future__ import annotations

import argparse
import os
import decimal
import json
import random
import resource
import shutil
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


def table_ddl(i: int) -> str:
    return f"CREATE TABLE t{i:02d} (" + ", ".join(COLUMNS[c][0] for c in _order(i)) + ")"


def raw_row(rng: random.Random, i: int, key: int, extra: int) -> list:
    """A row of table ``i`` (its column order) with ``extra`` added int columns."""
    return [COLUMNS[c][1](rng, key) for c in _order(i)] + [rng.randint(0, 1000) for _ in range(extra)]


def generate(path: Path, rows: int, tables: int, versions: int, seed: int = 7) -> None:
    """``rows`` row events (inserts, updates, deletes) over ``tables`` tables, each with
    ``versions`` versions (an ALTER TABLE ... ADD COLUMN between them)."""
    rng = random.Random(seed)
    seq = 0
    per_version = rows // (tables * versions)
    with open(path, "w") as fh:
        def emit(**ev):
            nonlocal seq
            seq += 1
            ev.update(seq=seq, position=f"bin.000001:{seq}", ts=1_700_000_000_000 + seq)
            fh.write(json.dumps(ev, separators=(",", ":")) + "\n")

        emit(op="ddl", database="bench", ddl="CREATE DATABASE bench")
        for i in range(tables):
            emit(op="ddl", database="bench", ddl=table_ddl(i))
        key = 0
        for v in range(versions):
            if v:
                for i in range(tables):
                    emit(op="ddl", database="bench", ddl=f"ALTER TABLE t{i:02d} ADD COLUMN x{v} int")
            for _ in range(per_version):
                for i in range(tables):
                    key += 1
                    r = rng.random()
                    image = [encode_json(x) for x in raw_row(rng, i, key, v)]
                    if r < DELETES:
                        emit(op="d", database="bench", table=f"t{i:02d}", before=image)
                    elif r < DELETES + UPDATES:
                        emit(op="u", database="bench", table=f"t{i:02d}", before=image,
                             after=[encode_json(x) for x in raw_row(rng, i, key, v)])
                    else:
                        emit(op="c", database="bench", table=f"t{i:02d}", after=image)


def _udf_write_version(rows, table, sopts, dialect, target, bad_dir):
    """``ddlcore.spark.pipeline._write_version`` with a per-row Python UDF as the converter
    (``RowConverter.convert`` on each image); same output layout and counts."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    from ddlcore.raw import from_text
    from ddlcore.spark import RowConverter

    conv = RowConverter(table, sopts, dialect=dialect)

    def convert(arr):
        return None if arr is None else conv.convert([from_text(x) for x in arr])

    udf = F.udf(convert, conv.struct_type)
    tally = Observation()
    df = rows.select("seq", "position", "op", "ts", udf("after").alias("_a"), udf("before").alias("_b"))
    df = df.observe(tally, *[F.count(F.when(F.col("op") == op, 1)).alias(op) for op in ("c", "u", "d", "r")])
    names = [f.name for f in conv.struct_type.fields]
    df.select(*[F.when(F.col("op") == "d", F.col("_b")[n]).otherwise(F.col("_a")[n]).alias(n) for n in names],
              F.col("op").alias("_op"), F.col("seq").alias("_seq"), F.col("position").alias("_position"),
              F.col("ts").alias("_ts"), F.when(F.col("op").isin("u", "d"), F.col("_b")).alias("_before")) \
        .write.mode("overwrite").parquet(str(target))
    m = tally.get
    return {op: m[op] for op in ("c", "u", "d", "r") if m.get(op)}, False


def _same_output(spark, a: Path, b: Path, versions) -> bool:
    """Both jobs wrote the same rows (every table version, compared as sets)."""
    for db, t, v in versions:
        x = spark.read.parquet(str(a / db / t / f"schema_version={v}"))
        y = spark.read.parquet(str(b / db / t / f"schema_version={v}")).select(*x.columns)
        if x.exceptAll(y).count() or y.exceptAll(x).count():
            return False
    return True


def jvm_peak_mb(spark) -> float | None:
    try:
        pid = spark._jvm.java.lang.ProcessHandle.current().pid()
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except Exception:  # noqa: BLE001 - informational
        return None
    return None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--tables", type=int, default=20)
    ap.add_argument("--versions", type=int, default=3)
    ap.add_argument("--concurrent-jobs", type=int, default=None, help="run_pipeline's (default: its own)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()

    from pyspark.sql import functions as F

    from ddlcore.spark import pipeline
    from ddlcore.spark.pipeline import EVENT_SCHEMA_DDL, run_pipeline, spark_session

    if args.concurrent_jobs is None:
        args.concurrent_jobs = pipeline.DEFAULT_CONCURRENT_JOBS

    work = Path(tempfile.mkdtemp(prefix="ddlcore-bench-"))
    log = work / "changelog.jsonl"
    t0 = time.perf_counter()
    generate(log, args.rows, args.tables, args.versions)
    n_rows = sum(1 for line in open(log) if '"op":"ddl"' not in line)
    print(f"change log: {n_rows:,} row events, {args.tables} tables x {args.versions} versions, "
          f"{log.stat().st_size / 1e6:.0f} MB, generated in {time.perf_counter() - t0:.0f} s; "
          f"{os.cpu_count()} cpus, concurrent jobs {args.concurrent_jobs}")

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the UDF baseline's workers need ddlcore
    spark = spark_session(None, "ddlcore benchmark")
    spark.sparkContext.setLogLevel("ERROR")

    # -- limit: hand-written schema, plain casts ------------------------------------------------
    t0 = time.perf_counter()
    ev = spark.read.text(str(log)).select(F.from_json("value", EVENT_SCHEMA_DDL).alias("e")).select("e.*")
    casts = ["long", "string", "string", "string", "decimal(10,2)", "timestamp_ntz", "date", "int"]

    def payload(x):  # a tagged value's payload ({"$dec":"1.50"} → 1.50), else the text
        return F.when(x.startswith('{"$'), F.regexp_extract(x, r'^\{"\$\w+":"(.*)"\}$', 1)).otherwise(x)

    def image(arr):  # every table's columns are rotated: cast by position in table 0's order
        return [payload(F.get(arr, i)).try_cast(t).alias(f"c{i}") for i, t in enumerate(casts)]

    row = F.when(F.col("op") == "d", F.col("before")).otherwise(F.col("after"))
    plain = ev.where(F.col("op").isin("c", "u", "d")).select(
        "table", *image(row), F.when(F.col("op").isin("u", "d"), F.struct(*image(F.col("before")))).alias("_before"))
    plain.write.mode("overwrite").partitionBy("table").parquet(str(work / "limit"))
    limit_s = time.perf_counter() - t0
    print(f"limit (plain Spark casts)   : {n_rows / limit_s:12,.0f} rows/s  ({limit_s:.1f} s)", flush=True)

    # -- ddlcore ---------------------------------------------------------------------------------
    t0 = time.perf_counter()
    res = run_pipeline(log, work / "ddlcore", spark=spark, concurrent_jobs=args.concurrent_jobs)
    ddl_s = time.perf_counter() - t0
    assert res.rows == n_rows, (res.rows, n_rows, res.quarantine_reasons)
    print(f"ddlcore run                 : {n_rows / ddl_s:12,.0f} rows/s  ({ddl_s:.1f} s)", flush=True)

    # -- naive per-row Python UDF, same job ------------------------------------------------------
    t0 = time.perf_counter()
    real = pipeline._write_version
    pipeline._write_version = _udf_write_version
    try:
        res_udf = run_pipeline(log, work / "udf", spark=spark, concurrent_jobs=args.concurrent_jobs)
    finally:
        pipeline._write_version = real
    udf_s = time.perf_counter() - t0
    assert res_udf.rows == n_rows and res_udf.counts == res.counts, "the UDF job wrote other rows"
    same = _same_output(spark, work / "ddlcore", work / "udf", res.versions_written)

    print(f"naive Python UDF, same job  : {n_rows / udf_s:12,.0f} rows/s  ({udf_s:.1f} s)")
    print(f"ddlcore / limit             : {limit_s / ddl_s:12.2f}x")
    print(f"ddlcore / naive UDF         : {udf_s / ddl_s:12.2f}x   (outputs equal: {same})")
    py_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    jvm = jvm_peak_mb(spark)
    print(f"peak driver memory          : python {py_peak:.0f} MB, JVM {jvm:.0f} MB" if jvm else
          f"peak driver memory          : python {py_peak:.0f} MB")
    spark.stop()
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"kept {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
