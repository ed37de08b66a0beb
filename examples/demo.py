"""`make demo`: the main job on the bundled example, end to end, no database needed.

``examples/shop/changelog.jsonl`` is a change log captured from MariaDB 10.11 by
``ddlcore capture mysql`` while ``examples/shop/workload.py`` ran (re-record it with
``examples/shop/record.py``): an initial snapshot, then row changes interleaved with DDL —
columns added, dropped, modified and renamed, an ENUM's labels changed, a latin1 table
converted to utf8mb4, a table renamed.  Its row images are raw binlog values: unsigned
integers, ENUM indexes, SET bitmasks, undecoded latin1/utf8mb4 bytes, UTC timestamps.

The demo runs the pipeline (``ddlcore run``) on it into ``demo-out/`` (fresh each time), prints
the run summary, a few typed rows of every table version (and one version's schema), and the
schema versions of one table with what changed between them.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table as RichTable

from ddlcore.history import SchemaHistory
from ddlcore.cli.history_cli import render_diff
from ddlcore.cli.run_cli import render_summary
from ddlcore.spark.pipeline import run_pipeline, spark_session

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CHANGELOG = HERE / "shop" / "changelog.jsonl"
OUT = REPO / "demo-out"
#: the table whose schema versions are shown
TIMELINE = "shop.customers"
#: the table version whose Spark schema is printed
SCHEMA_OF = ("orders", 1)


def main() -> None:
    console = Console()
    if OUT.exists():
        shutil.rmtree(OUT)
    console.rule(f"ddlcore run: {CHANGELOG.relative_to(REPO)} → {OUT.relative_to(REPO)}/")
    with console.status("starting Spark (local mode)") as status:
        spark = spark_session("local[*]", app_name="ddlcore demo")
        spark.sparkContext.setLogLevel("ERROR")
        result = run_pipeline(CHANGELOG, OUT, spark=spark, progress=lambda msg: status.update(msg))
    render_summary(console, result, OUT)

    console.rule("typed rows per table version (3 rows each)")
    for vdir in sorted(OUT.glob("*/*/schema_version=*"), key=lambda p: (p.parent.name, int(p.name.split("=")[1]))):
        table, version = vdir.parent.name, int(vdir.name.split("=")[1])
        df = spark.read.parquet(str(vdir))
        console.print(f"[bold]{vdir.parent.parent.name}.{table}[/] schema_version={version} "
                      f"({df.count()} rows)", highlight=False)
        sys.stdout.flush()
        df.orderBy("_seq").drop("_before", "_position").show(3, truncate=28)
        sys.stdout.flush()
        if (table, version) == SCHEMA_OF:
            console.print(f"[bold]schema of {table} version {version}[/] (raw binlog values → Spark types):")
            sys.stdout.flush()
            df.printSchema()
            sys.stdout.flush()

    console.rule(f"schema versions of {TIMELINE}")
    with SchemaHistory.open(OUT / "_history.sqlite", dialect="mysql") as history:
        versions = history.versions(TIMELINE)
        timeline = RichTable(title_justify="left")
        for head in ("version", "seqs", "change", "columns", "ddl"):
            timeline.add_column(head, overflow="fold")
        for v in versions:
            seqs = f"{v.valid_from_seq}–" + ("" if v.valid_to_seq is None else str(v.valid_to_seq - 1))
            cols = "—" if v.table is None else str(len(v.table.columns))
            ddl = " ".join(v.ddl.split())
            timeline.add_row(str(v.version), seqs, v.kind, cols, ddl if len(ddl) <= 70 else ddl[:69] + "…")
        console.print(timeline)
        for older, newer in zip(versions, versions[1:]):
            render_diff(console, TIMELINE, history.diff(TIMELINE, older.version, newer.version))
    console.print(f"\noutput: {OUT}/ (Parquet per table version, _schemas/, _run.json, _history.sqlite)",
                  highlight=False)


if __name__ == "__main__":
    main()
