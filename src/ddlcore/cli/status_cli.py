"""``ddlcore status OUT``: what a ``ddlcore run`` output holds and how far it is behind its
capture (``ddlcore.status``), as text or ``--format json``."""

from __future__ import annotations

import json
import sys

import click
from rich.console import Console
from rich.table import Table as RichTable

__all__ = ["status_cmd", "render_status"]


def _when(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:,.1f} s"


def render_status(console: Console, st) -> None:
    """The text form of an ``OutputStatus``: committed seq, capture, lag, lock, tables,
    quarantine."""
    c, cap, lag, lock = st.committed, st.capture, st.lag, st.lock
    pending = " (a commit is being applied: the next run finishes it)" if c["pending"] else ""
    console.print(f"output     {st.out}", highlight=False)
    console.print(f"committed  seq {c['seq'] if c['seq'] is not None else 'none'} at {c['time'] or '-'} "
                  f"({_when(c['age_seconds'])} ago), position {c['position'] or '-'}{pending}", highlight=False)
    if cap is None:
        console.print("capture    - (the change log is not a capture directory)", highlight=False)
    else:
        console.print(f"capture    seq {cap['seq']} ({cap['phase']}) at {cap['position'] or '-'} in "
                      f"{cap['directory']}", highlight=False)
        console.print(f"lag        {lag['events'] if lag['events'] is not None else '-'} events, "
                      f"{_when(lag['seconds'])} of source time", highlight=False)
    held = f"held by pid {lock['pid']}" if lock["held"] and lock["pid"] else "held" if lock["held"] else "free"
    console.print(f"run lock   {held} ({lock['path']})", highlight=False)
    if st.tables:
        t = RichTable(title="tables", title_justify="left")
        for head in ("table", "version", "valid_to_seq", "rows"):
            t.add_column(head, justify="left" if head == "table" else "right")
        for r in st.tables:
            t.add_row(r.name, str(r.version), "-" if r.valid_to_seq is None else str(r.valid_to_seq), f"{r.rows:,}")
        console.print(t)
    q = st.quarantine
    console.print(f"quarantine {q['total']:,} record(s)", highlight=False)
    for reason, n in q["reasons"].items():
        console.print(f"  {n:>8,}  {reason}", highlight=False, markup=False)


@click.command("status")
@click.argument("out", metavar="OUT")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def status_cmd(out: str, fmt: str) -> None:
    """The state of the ddlcore run output OUT: last committed seq, the capture's checkpoint
    and the lag, tables, quarantine, and whether a run holds the output.  Reads files only
    (no Spark); OUT must be local (a path or a file: URI)."""
    from ..status import StatusError, output_status

    try:
        st = output_status(out)
    except StatusError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    if fmt == "json":
        click.echo(json.dumps(st.to_json(), indent=2, ensure_ascii=False))
    else:
        render_status(Console(soft_wrap=True), st)
