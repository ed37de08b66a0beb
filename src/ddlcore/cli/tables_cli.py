"""``ddlcore tables OUT``: the source tables of a ``ddlcore run`` output (docs/tables.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table as RichTable

__all__ = ["tables_cmd"]


@click.command("tables")
@click.argument("out", type=click.Path(file_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="json: one object per source table, for scripts")
def tables_cmd(out: Path, fmt: str) -> None:
    """List the source tables of the run output OUT: current schema version, rows of the
    changes table, last _seq, quarantined events, the Iceberg changes table's name and the rows
    of the current-state table."""
    from ..sinks.listing import list_tables

    if not (out / "_history.sqlite").exists():
        click.echo(f"error: {out}: no _history.sqlite: not a ddlcore run output", err=True)
        sys.exit(2)
    facts = list_tables(out)
    if fmt == "json":
        click.echo(json.dumps([f.to_json() for f in facts], indent=2))
        return
    rt = RichTable(title=f"{out}: {len(facts)} table(s)", title_justify="left")
    for head in ("table", "version", "changes rows", "last _seq", "quarantined", "iceberg", "current rows"):
        rt.add_column(head)
    for f in facts:
        rt.add_row(f.table + (" (dropped)" if f.dropped else ""), str(f.schema_version), str(f.changes_rows),
                   "" if f.last_seq is None else str(f.last_seq), str(f.quarantined), f.iceberg or "",
                   "" if f.current_rows is None else str(f.current_rows))
    Console().print(rt)
