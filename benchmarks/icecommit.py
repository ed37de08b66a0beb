"""The Iceberg commit of a first run (``ddlcore.sinks.icecommit.commit``: every table new to the
embedded catalog) and of a second one (every table exists), against ``pyiceberg``'s floor,
measured in the same run (issue 31).

``TABLES`` source tables of the pipeline benchmark (``benchmarks/pipeline.py``'s ``table_ddl``:
the 8 column orders of its mixed MySQL table) each with 4 versions (an ``ADD COLUMN`` between
them) and one small Parquet file per version; their changes tables committed by ddlcore, each
case into a fresh output: with its worker processes (``Tuning.driver_workers``: one per CPU)
and with one process (threads), both creating each table in one step
(``ddlcore.sinks.icecreate``, the SQL catalog's path); in one process through ``pyiceberg``'s
transactions (the path of every other catalog: REST, Hive, Glue, ...); and a second run (one
new file per table, every table existing: ``pyiceberg``'s transactions) in one process.  The
baseline, ``pyiceberg floor``: for each table, the least ``pyiceberg`` does to commit it —
``create_table_transaction`` with the final schema (the one ddlcore gave it) and its
properties, one fast append of the same files (``DataFile`` from each footer),
``commit_transaction`` — one table after another into a fresh catalog of the same kind
(SQLite, WAL mode).  Prints ms per table (wall and CPU of the process and its workers), the
machine's load, and the ratios to the floor.  No Spark: the files are written by pyarrow.

``python benchmarks/icecommit.py [--tables 300]``; a few seconds on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pipeline import table_ddl  # noqa: E402  (the pipeline benchmark's tables)

from ddlcore.history import SchemaHistory  # noqa: E402
from ddlcore.sinks.iceberg import IcebergSink, open_catalog  # noqa: E402
from ddlcore.runconfig import Tuning  # noqa: E402
from ddlcore.sinks import icecreate  # noqa: E402
from ddlcore.sinks.icecommit import commit  # noqa: E402
from ddlcore.spark.layout import version_dir  # noqa: E402

VERSIONS = 4


class _Out:
    """The output directory calls ``IcebergSink.plan`` and ``commit`` make, on a local one."""

    def __init__(self, root: Path):
        self.root = root

    def exists(self, rel: str = "") -> bool:
        return (self.root / rel.lstrip("/")).exists()

    @property
    def local_root(self) -> str:
        return str(self.root)

    def local(self, rel: str = "") -> str:
        return str(self.root / rel)

    def str(self, rel: str = "") -> str:
        return f"file://{self.root / rel}"


def _cpu() -> float:
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def _output(root: Path, tables: int, workers: int | None) -> tuple[dict, _Out, IcebergSink, int]:
    """A first run's output before its Iceberg commit: the files, the commit plan, the sink
    and the last seq."""
    hist = SchemaHistory(dialect="mysql")
    seq = 0
    for v in range(VERSIONS):
        for i in range(tables):
            seq += 1
            ddl = table_ddl(i) if v == 0 else f"ALTER TABLE t{i:02d} ADD COLUMN x{v} int"
            hist.record({"seq": seq, "ddl": ddl, "database": "bench"})
    sink = IcebergSink(str(root), dialect="mysql", tuning=Tuning(driver_workers=workers))
    versions = sink.prepare(hist, hist.all_versions(), dialect="mysql")
    for v in versions:
        d = root / version_dir("bench", None, v.table_id.name, v.version)
        d.mkdir(parents=True)
        pq.write_table(DATA, d / "r1-part-00000.parquet")
    out = _Out(root)
    return sink.plan(out, "", "r1", seq, None), out, sink, seq


DATA = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "_op": ["c"] * 3, "_seq": pa.array([1, 2, 3], pa.int64())})


def _ddlcore(root: Path, tables: int, workers: int | None, one_step: bool = True) -> tuple[float, float, dict]:
    """The first run's commit (``one_step``: new tables created by ``icecreate`` where the
    catalog allows it, else through ``pyiceberg``'s transactions)."""
    plan, out, _, _ = _output(root, tables, workers)
    supports = icecreate.supports
    icecreate.supports = supports if one_step else (lambda catalog: False)
    try:
        c0, t0 = _cpu(), time.perf_counter()
        commit(plan, out)
        return time.perf_counter() - t0, _cpu() - c0, plan
    finally:
        icecreate.supports = supports


def _second_run(root: Path, tables: int) -> tuple[float, float]:
    """A second run's commit, in one process: one new file in each table's last version."""
    plan, out, sink, seq = _output(root, tables, 1)
    commit(plan, out)
    for entry in plan["tables"]:
        pq.write_table(DATA, root / entry["dirs"][-1] / "r2-part-00000.parquet")
    second = sink.plan(out, "", "r2", seq + 1, seq)
    c0, t0 = _cpu(), time.perf_counter()
    commit(second, out)
    return time.perf_counter() - t0, _cpu() - c0


def _floor(root: Path, plan: dict, done: Path) -> tuple[float, float]:
    """``pyiceberg``'s least work per table (module docstring), on the tables ``done`` holds."""
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.typedef import Record

    made = open_catalog({"name": "ddlcore", "uri": f"sqlite:///{done}/_catalog.sqlite",
                         "warehouse": f"file://{done}/_iceberg"})
    jobs = []
    for entry in plan["tables"]:
        table = made.load_table(tuple(entry["identifier"]))
        files = [Path(done, d, "r1-part-00000.parquet") for d in entry["dirs"]]
        jobs.append((tuple(entry["identifier"]), table.schema(), dict(table.properties), files))
    root.mkdir(parents=True)
    cat = open_catalog({"name": "floor", "uri": f"sqlite:///{root}/_catalog.sqlite", "warehouse": f"file://{root}"})
    cat.create_namespace("bench")
    c0, t0 = _cpu(), time.perf_counter()
    for ident, schema, props, files in jobs:
        tx = cat.create_table_transaction(ident, schema, location=f"file://{root}/{ident[-1]}", properties=props)
        with tx.update_snapshot(snapshot_properties={"ddlcore.run": "r1"}).fast_append() as append:
            for f in files:
                append.append_data_file(DataFile.from_args(
                    content=DataFileContent.DATA, file_path=f"file://{f}", file_format=FileFormat.PARQUET,
                    partition=Record(), record_count=pq.read_metadata(f).num_rows, file_size_in_bytes=f.stat().st_size))
        tx.commit_transaction()
    return time.perf_counter() - t0, _cpu() - c0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=300)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ddlcore-bench-icecommit-"))
    try:
        results = {}
        for name, workers, one_step in (("ddlcore, worker processes", None, True), ("ddlcore, one process", 1, True),
                                        ("ddlcore, one process, transactions", 1, False)):
            wall, cpu, plan = _ddlcore(work / name.replace(" ", "_").replace(",", ""), args.tables, workers, one_step)
            results[name] = (wall, cpu)
        results["ddlcore, second run, one process"] = _second_run(work / "second", args.tables)
        done = work / "ddlcore_worker_processes"
        results["pyiceberg floor"] = _floor(work / "floor", plan, done)
        base = results["pyiceberg floor"][0]
        for name, (wall, cpu) in results.items():
            print(json.dumps({"case": name, "tables": args.tables, "ms_per_table": round(wall / args.tables * 1000, 2),
                              "cpu_ms_per_table": round(cpu / args.tables * 1000, 2),
                              "vs_floor": round(wall / base, 2), "load": round(os.getloadavg()[0], 1)}))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
