"""``ddlcore run``: the pipeline from the command line (see ``ddlcore.spark.pipeline``)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table as RichTable

#: ``ddlcore.spark.pipeline.DEFAULT_CONCURRENT_JOBS`` (not imported: this module loads without pyspark)
DEFAULT_CONCURRENT_JOBS = 4

__all__ = ["run_cmd", "render_summary"]


def render_summary(console: Console, result, out: str | Path) -> None:
    """The end-of-run summary: rows per table, version and op; quarantine reasons."""
    rt = RichTable(title=f"ddlcore run → {out}", title_justify="left")
    for head in ("database", "table", "schema_version", "op", "rows"):
        rt.add_column(head, justify="right" if head in ("schema_version", "rows") else "left")
    for (d, t, v, o), n in sorted(result.counts.items()):
        rt.add_row(d, t, str(v), o, f"{n:,}")
    console.print(rt)
    console.print(f"events read past the checkpoint: {result.events:,}; DDL recorded: {result.ddl}; "
                  f"rows written: {result.rows:,}; quarantined: {result.quarantined:,}"
                  + (f"; replayed from the quarantine: {result.replayed:,}" if result.replayed else "")
                  + f"; checkpoint seq {result.previous_seq} → {result.last_seq}; {result.seconds:.1f} s",
                  highlight=False)
    if result.drift:
        console.print(f"[yellow]schema drift[/] ({len(result.drift)}): the source's catalog and the parsed DDL "
                      f"disagree (the catalog was recorded):", highlight=False)
        for w in result.drift[:20]:
            console.print(f"  {w}", highlight=False, markup=False)
    if result.quarantine_reasons:
        q = RichTable(title="quarantined (see _quarantine/)", title_justify="left")
        q.add_column("reason")
        q.add_column("events", justify="right")
        for reason, n in sorted(result.quarantine_reasons.items(), key=lambda kv: -kv[1]):
            q.add_row(reason, f"{n:,}")
        console.print(q)


def _changelog_arg(ctx, param, value):
    """``--changelog``: a URI of another filesystem as it is (the run lists it through
    Hadoop), else a path that must exist."""
    from .spark.fs import is_uri

    if value is None or is_uri(value):
        return value
    return click.Path(exists=True, path_type=Path).convert(value, param, ctx)


@click.command("run")
@click.option("--changelog", required=True, metavar="PATH|URI", callback=_changelog_arg,
              help="change log: JSON Lines (.jsonl, .jsonl.gz) or Parquet, a file or a directory of them; "
                   "a path or a Hadoop URI (hdfs://, s3a://, ...)")
@click.option("--out", required=True, metavar="DIR|URI",
              help="output directory: a path, or a Hadoop URI (file://, hdfs://, s3a://, ...)")
@click.option("--dialect", default=None,
              help="dialect of the DDL events (default: the one the change log's source event names, else mysql)")
@click.option("--history", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="schema history store (default OUT/_history.sqlite)")
@click.option("--master", default=None, help="Spark master URL (default local[*], or spark-submit's)")
@click.option("--conf", "spark_conf", multiple=True, metavar="KEY=VALUE",
              help="Spark property for the session, e.g. --conf spark.executor.memory=2g (repeatable)")
@click.option("--strict", is_flag=True, help="stop at the first event that cannot be interpreted")
@click.option("--spark-option", "-s", "spark_options", multiple=True, metavar="NAME=VALUE",
              help="type-mapping option, e.g. -s decimal_handling=string")
@click.option("--concurrent-jobs", type=click.IntRange(min=1), default=DEFAULT_CONCURRENT_JOBS,
              show_default=True, help="table versions converted at the same time (each a Spark job)")
@click.option("--replay-quarantine", is_flag=True,
              help="also re-interpret quarantined rows whose schema is known now (after a resync)")
@click.option("--format", "output_format", type=click.Choice(["parquet", "iceberg"]), default="parquet",
              show_default=True, help="parquet: a directory per table version; iceberg: also an Iceberg "
                                      "changes table per source table (docs/tables.md)")
@click.option("--catalog", default=None, metavar="NAME",
              help="--format iceberg: a pyiceberg-configured catalog (default: SQLite in OUT/_catalog.sqlite)")
def run_cmd(changelog: Path | str, out: str, dialect: str | None, history: Path | None, master: str | None,
            spark_conf: tuple[str, ...], strict: bool, spark_options: tuple[str, ...], concurrent_jobs: int,
            replay_quarantine: bool, output_format: str, catalog: str | None) -> None:
    """Turn a change log into typed Parquet tables, one directory per table version.

    Only events past the last committed seq are processed; a killed run is finished by the
    next.  Events that cannot be interpreted go to OUT/_quarantine with the reason (with
    --strict the run stops, exit status 1, naming the first)."""
    from .cli import _parse_options
    from .errors import DdlCoreError
    from .spark.pipeline import PipelineError, check_run_options, run_pipeline

    console = Console(stderr=True)
    opts = _parse_options(spark_options)
    conf = {}
    for item in spark_conf:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            click.echo(f"error: --conf {item!r}: expected KEY=VALUE, e.g. spark.executor.memory=2g", err=True)
            sys.exit(2)
        conf[key.strip()] = value
    try:  # before Spark starts: a bad option costs no JVM and leaves nothing behind
        check_run_options(out, dialect, opts)
    except PipelineError as exc:
        click.echo(f"error: {exc}", err=True)  # one line, never wrapped
        sys.exit(2)
    with console.status("starting Spark") as status:
        try:
            result = run_pipeline(changelog, out, dialect=dialect, history=history, master=master,
                                  strict=strict, spark_options=opts, spark_conf=conf,
                                  concurrent_jobs=concurrent_jobs, replay_quarantine=replay_quarantine,
                                  output_format=output_format, catalog=catalog,
                                  progress=lambda msg: status.update(msg))
        except PipelineError as exc:
            status.stop()
            click.echo(f"stopped: {exc}", err=True)
            sys.exit(1)
        except DdlCoreError as exc:
            status.stop()
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)
    render_summary(Console(), result, out)
