"""Row conversion throughput: ``RowConverter.convert`` (Python) and ``RowConverter.columns``
(Spark, local mode) on generated rows of a 20-column mixed MySQL table, with two baselines
measured in the same run:

* ``plain cast``: each raw text cast straight to the column's Spark type — what Spark alone
  does with the same input, without the semantics (wrong for unsigned readings, enum indexes,
  tagged values...), i.e. the floor for reading the raw arrays;
* ``python udf``: a naive per-row Python UDF applying ``convert`` — what ``columns`` replaces.

Usage::

    .venv/bin/python benchmarks/convert.py [--rows 1000000] [--udf-rows N] [--master local[2]]

The raw rows are generated in Spark (no Python per row), written once to Parquet in a temporary
directory and read back for every measurement, so each run reads the same bytes.  Spark runs
write to the ``noop`` sink (every value computed, nothing stored).  Prints rows/s and ratios.
Not a test: run it by hand.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import sys
import tempfile
import time
from decimal import Decimal

from ddlcore import Column, Table, TableId
from ddlcore.raw import from_text
from ddlcore.spark import RowConverter

from ddlcore_mysql.types import DataTypeSpec as D, column_fields  # noqa: E402  (the plugin is installed with the repo)

#: the 20 columns: (name, type, Spark SQL generating the raw value's text form from ``id``)
COLUMNS: list[tuple[str, D, str]] = [
    ("id_u", D("INT", unsigned=True), "cast(pmod(id * 2654435761, 4294967296) - 2147483648 as string)"),
    ("big", D("BIGINT"), "cast(id * 1000003 - 500000000000 as string)"),
    ("name", D("VARCHAR", 50), "concat('name-', id)"),
    ("city", D("VARCHAR", 20, charset="latin1"),
     "concat('{\"$b64\":\"', base64(encode(concat('Zürich ', id % 1000), 'ISO-8859-1')), '\"}')"),
    ("price", D("DECIMAL", 12, 2), "concat('{\"$dec\":\"', cast(cast(pmod(id * 7919, 100000000) as decimal(12,0)) / 100 as string), '\"}')"),
    ("created", D("DATETIME", 3),
     "concat('{\"$datetime\":\"', date_format(timestamp_seconds(1500000000 + id * 37), 'yyyy-MM-dd HH:mm:ss.SSS'), '\"}')"),
    ("updated", D("TIMESTAMP"),
     "concat('{\"$datetime\":\"', date_format(timestamp_seconds(1600000000 + id * 11), 'yyyy-MM-dd HH:mm:ss'), '\"}')"),
    ("born", D("DATE"), "concat('{\"$date\":\"', cast(date_add(date'1950-01-01', cast(pmod(id, 25000) as int)) as string), '\"}')"),
    ("status", D("ENUM", values=("new", "paid", "shipped", "void")), "cast(pmod(id, 5) as string)"),
    ("flags", D("SET", values=("a", "b", "c", "d", "e")), "cast(pmod(id, 32) as string)"),
    ("level", D("TINYINT", unsigned=True), "cast(pmod(id, 256) - 128 as string)"),
    ("score", D("DOUBLE"), "cast(id * 1.25 as string)"),
    ("ratio", D("FLOAT"), "cast(id / 3.0 as string)"),
    ("notes", D("TEXT"), "repeat('lorem ipsum ', cast(pmod(id, 8) as int) + 1)"),
    ("active", D("BIT", 1), "cast(pmod(id, 2) as string)"),
    ("duration", D("TIME"),
     "concat('{\"$time\":\"', if(pmod(id, 2) = 0, '-', ''), lpad(cast(pmod(id, 839) as string), 2, '0'), ':', "
     "lpad(cast(pmod(id, 60) as string), 2, '0'), ':', lpad(cast(pmod(id * 7, 60) as string), 2, '0'), '\"}')"),
    ("year", D("YEAR"), "cast(pmod(id, 255) + 1 as string)"),
    ("qty", D("SMALLINT"), "cast(pmod(id, 65536) - 32768 as string)"),
    ("code", D("CHAR", 4), "concat('c', pmod(id, 1000))"),
    ("blob", D("BLOB"), "concat('{\"$b64\":\"', base64(unhex(hex(id))), '\"}')"),
]


def table() -> Table:
    cols = []
    for i, (name, spec, _) in enumerate(COLUMNS, start=1):
        f = column_fields(spec)
        f.pop("serial", None)
        cols.append(Column(name=name, ordinal_position=i, **f))
    return Table(TableId("bench", None, "mixed"), tuple(cols))


def python_rows(start: int, stop: int) -> list[list]:
    """The same raw values as the Spark generator, as Python objects (the form a capture holds)."""
    rows = []
    epoch = dt.datetime(1970, 1, 1)
    for i in range(start, stop):
        rows.append([
            (i * 2654435761) % 4294967296 - 2147483648, i * 1000003 - 500000000000, f"name-{i}",
            f"Zürich {i % 1000}".encode("latin-1"), Decimal((i * 7919) % 100000000).scaleb(-2),
            epoch + dt.timedelta(seconds=1500000000 + i * 37), epoch + dt.timedelta(seconds=1600000000 + i * 11),
            dt.date(1950, 1, 1) + dt.timedelta(days=i % 25000), i % 5, i % 32, i % 256 - 128, i * 1.25, i / 3.0,
            "lorem ipsum " * (i % 8 + 1), i % 2,
            (-1 if i % 2 == 0 else 1) * dt.timedelta(hours=i % 839, minutes=i % 60, seconds=(i * 7) % 60),
            i % 255 + 1, i % 65536 - 32768, f"c{i % 1000}", bytes.fromhex(f"{i:X}".rjust(len(f"{i:X}") + len(f"{i:X}") % 2, "0")),
        ])
    return rows


def rate(rows: int, seconds: float) -> float:
    return rows / seconds if seconds > 0 else float("inf")


def timed(fn, repeat: int = 2) -> float:
    """The best of ``repeat`` runs (the first one also compiles), in seconds."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--udf-rows", type=int, default=None, help="rows for the Python UDF baseline (default: --rows)")
    ap.add_argument("--python-rows", type=int, default=None, help="rows for .convert (default: --rows)")
    ap.add_argument("--master", default="local[2]")
    args = ap.parse_args(argv)

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # UDF workers run this interpreter
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType

    spark = (SparkSession.builder.master(args.master).appName("ddlcore benchmark")
             .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
             .config("spark.sql.session.timeZone", "UTC").config("spark.driver.memory", "2g")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    t = table()
    conv = RowConverter(t, dialect="mysql")
    n = args.rows
    workdir = tempfile.mkdtemp(prefix="ddlcore-bench-")
    try:
        path = os.path.join(workdir, "raw.parquet")
        t0 = time.perf_counter()
        (spark.range(n, numPartitions=4)
         .select(F.array(*[F.expr(sql) for _, _, sql in COLUMNS]).alias("raw"))
         .write.parquet(path))
        print(f"generated {n:,} rows x {len(COLUMNS)} columns in {time.perf_counter() - t0:.1f} s "
              f"({spark.sparkContext.master}, {os.cpu_count()} cpus)")
        raw = spark.read.parquet(path)

        def run(df) -> None:
            df.write.format("noop").mode("overwrite").save()

        results: dict[str, float] = {}
        results["spark: read only"] = rate(n, timed(lambda: run(raw.select(F.size("raw")))))
        def plain_cast(i: int, f) -> "F.Column":
            x = F.get(F.col("raw"), i)
            if isinstance(f.dataType, ArrayType):  # a SET: split the text
                return F.split(x, ",").alias(f.name)
            return x.try_cast(f.dataType).alias(f.name)

        plain = [plain_cast(i, f) for i, f in enumerate(conv.struct_type.fields)]
        results["spark: plain cast (baseline)"] = rate(n, timed(lambda: run(raw.select(*plain))))
        results["spark: .columns"] = rate(n, timed(lambda: run(raw.select(*conv.columns("raw")))))
        results["spark: .columns, no error column"] = rate(
            n, timed(lambda: run(raw.select(*conv.columns("raw", errors=None)))))

        udf_rows = args.udf_rows or n
        udf = F.udf(lambda arr: conv.convert([from_text(v) for v in arr]), conv.struct_type, useArrow=False)
        sample = raw.limit(udf_rows) if udf_rows < n else raw
        results["spark: python udf (baseline)"] = rate(udf_rows, timed(lambda: run(sample.select(udf("raw").alias("row"))), 1))

        py_n = args.python_rows or n
        convert, spent, chunk = conv.convert, 0.0, 100_000
        for start in range(0, py_n, chunk):
            rows = python_rows(start, min(py_n, start + chunk))
            t0 = time.perf_counter()
            for r in rows:
                convert(r)
            spent += time.perf_counter() - t0
        results["python: .convert"] = rate(py_n, spent)
        problems = sum(1 for r in python_rows(0, 1000) if conv.try_convert(r)[1])
        bad = raw.limit(1000).select(F.size(conv.columns("raw")[-1]).alias("e")).where("e > 0").count()
        if problems or bad:
            print(f"warning: conversion errors in the first 1000 rows: python {problems}, spark {bad}",
                  file=sys.stderr)

        base = results["spark: plain cast (baseline)"]
        udf_rate = results["spark: python udf (baseline)"]
        print(f"{'measurement':38s} {'rows/s':>12s} {'vs plain cast':>14s} {'vs python udf':>14s}")
        for name, value in results.items():
            print(f"{name:38s} {value:12,.0f} {value / base:13.2f}x {value / udf_rate:13.2f}x")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
