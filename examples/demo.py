"""`make demo`: the main job on the bundled example, end to end, no database needed.

``examples/shop/changelog.jsonl`` is a change log captured from MariaDB 10.11 by
``ddlcore capture mysql`` while ``examples/shop/workload.py`` ran (re-record it with
``examples/shop/record.py``): an initial snapshot, then row changes interleaved with DDL —
columns added, dropped, modified and renamed, an ENUM's labels changed, a latin1 table
converted to utf8mb4, a table renamed.  Its row images are raw binlog values: unsigned
integers, ENUM indexes, SET bitmasks, undecoded latin1/utf8mb4 bytes, UTC timestamps.

The demo runs the pipeline (``ddlcore run --format iceberg``) on it into ``demo-out/`` (fresh
each time), prints the run summary, a few typed rows of every table version (and one version's
schema), the schema versions of one table with what changed between them, and ends with one
table as a user queries it: ``orders`` (renamed ``purchases``, a column renamed and one retyped)
read back through the Iceberg catalog, and its current state (docs/tables.md).
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
from ddlcore.sinks.iceberg import CATALOG_FILE, WAREHOUSE_DIR, open_catalog
from ddlcore.spark.pipeline import run_pipeline, spark_session

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CHANGELOG = HERE / "shop" / "changelog.jsonl"
OUT = REPO / "demo-out"
#: the table whose schema versions are shown
TIMELINE = "shop.customers"
#: the table version whose Spark schema is printed
SCHEMA_OF = ("orders", 1)
#: the Iceberg changes table shown at the end, and its source table
ICEBERG_TABLE = ("shop", "purchases__changes")
CURRENT_OF = "shop.purchases"


def main() -> None:
    console = Console()
    if OUT.exists():
        shutil.rmtree(OUT)
    console.rule(f"ddlcore run: {CHANGELOG.relative_to(REPO)} → {OUT.relative_to(REPO)}/")
    with console.status("starting Spark (local mode)") as status:
        spark = spark_session("local[*]", app_name="ddlcore demo")
        spark.sparkContext.setLogLevel("ERROR")
        result = run_pipeline(CHANGELOG, OUT, spark=spark, progress=lambda msg: status.update(msg),
                              output_format="iceberg")
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
    show_iceberg(console, spark)
    console.print(f"\noutput: {OUT}/ (Parquet per table version, _schemas/, _run.json, _history.sqlite, "
                  f"the Iceberg catalog {CATALOG_FILE} and metadata {WAREHOUSE_DIR}/)", highlight=False)


def show_iceberg(console: Console, spark) -> None:
    """The changes table of ``orders`` through the catalog (pyiceberg), and its current state."""
    import ddlcore

    console.rule(f"{ICEBERG_TABLE}: the Iceberg changes table, read back through the catalog")
    catalog = open_catalog({"name": "ddlcore", "uri": f"sqlite:///{OUT / CATALOG_FILE}",
                            "warehouse": f"file://{OUT / WAREHOUSE_DIR}"})
    table = catalog.load_table(ICEBERG_TABLE)
    fields = RichTable(title=f"schema of {'.'.join(ICEBERG_TABLE)} (native type in each field's doc)",
                       title_justify="left")
    for head in ("id", "field", "iceberg type", "doc"):
        fields.add_column(head)
    for f in table.schema().fields:
        if not f.name.startswith("_"):
            fields.add_row(str(f.field_id), f.name, str(f.field_type), f.doc or "")
    console.print(fields)
    cols = [f.name for f in table.schema().fields if not f.name.startswith("_")]
    changes = table.scan(selected_fields=("_seq", "_op", *cols)).to_pandas().sort_values("_seq")
    shown = ["_seq", "_op", "id", "quantity", "total__decimal10_2_v2", "total", "placed_on"]
    console.print(f"{len(changes)} row events (pyiceberg → pandas), the last 6, a few columns "
                  f"(the retyped total's old values are in total__decimal10_2_v2):")
    console.print(changes[[c for c in shown if c in changes]].tail(6).to_string(index=False), highlight=False)
    console.rule(f"{CURRENT_OF}: current state (ddlcore.read_table(current=True), plain Spark)")
    sys.stdout.flush()
    ddlcore.read_table(spark, OUT, CURRENT_OF, current=True).orderBy("_seq").show(6, truncate=24)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
