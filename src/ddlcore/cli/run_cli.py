"""``ddlcore run``: the pipeline from the command line (see ``ddlcore.spark.pipeline``)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table as RichTable

from ..errors import one_line
from ..runconfig import DEFAULT_CONCURRENT_JOBS
from .common import assignments, verbose_option

__all__ = ["run_cmd", "render_summary", "check_local_changelog"]


def render_summary(console: Console, result, out: str | Path) -> None:
    """The end-of-run summary: rows per table, version and op; quarantine reasons."""
    rt = RichTable(title=f"ddlcore run → {out}", title_justify="left")
    for head in ("database", "table", "schema_version", "op", "rows"):
        rt.add_column(head, justify="right" if head in ("schema_version", "rows") else "left")
    for (d, t, v, o), n in sorted(result.counts.items()):
        rt.add_row(d, t, str(v), o, f"{n:,}")
    if not result.events and not result.replayed:
        console.print(f"no events past the checkpoint (seq {result.previous_seq}): nothing to do" if
                      result.previous_seq is not None else "no events in the change log: nothing to do",
                      highlight=False)
        return
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
    for line in result.held:
        console.print(f"[yellow]left for a later run:[/] {line}", highlight=False)
    if result.quarantine_reasons:
        q = RichTable(title="quarantined (see _quarantine/)", title_justify="left")
        q.add_column("reason")
        q.add_column("events", justify="right")
        for reason, n in sorted(result.quarantine_reasons.items(), key=lambda kv: -kv[1]):
            q.add_row(reason, f"{n:,}")
        console.print(q)


def _see(log_file: Path | None) -> str:
    return f" (Spark's log: {log_file})" if log_file is not None else ""


def _check_out(out: str) -> None:
    """``--out`` must not be an existing regular file (checked before Spark starts)."""
    from ..spark.fs import is_uri

    if not is_uri(out) and Path(out).exists() and not Path(out).is_dir():
        raise click.ClickException(f"--out {out}: a file, not a directory")


def check_local_changelog(changelog: Path | str) -> None:
    """Every change-log file of a local ``--changelog`` is one (``ddlcore.inputs.
    check_change_log_file``: JSON Lines or Parquet, gzip complete), before Spark starts; a
    directory must hold change-log files (``ddlcore.changelog.changelog_files``).  Raises
    ``DdlCoreError`` (one line naming the file and why).  A URI of another filesystem is
    checked by the run itself."""
    from ..changelog import changelog_files
    from ..inputs import check_change_log_file

    if not isinstance(changelog, Path):
        return
    for f in changelog_files(changelog):
        check_change_log_file(f)


def _changelog_arg(ctx, param, value):
    """``--changelog``: a URI of another filesystem as it is (the run lists it through
    Hadoop), else a path that must exist."""
    from ..spark.fs import is_uri

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
              help="dialect of the DDL events (default: the one the change log's source event or the output "
                   "names; required when neither does)")
@click.option("--history", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="schema history store (default OUT/_history.sqlite)")
@click.option("--master", default=None, help="Spark master URL (default local[*], or spark-submit's)")
@click.option("--conf", "spark_conf", multiple=True, metavar="KEY=VALUE",
              help="Spark property for the session, e.g. --conf spark.executor.memory=2g (repeatable)")
@click.option("--strict", is_flag=True, help="stop at the first event that cannot be interpreted")
@click.option("--spark-option", "-s", "spark_options", multiple=True, metavar="NAME=VALUE",
              help="Spark type-mapping option (repeatable), e.g. -s decimal_handling=string (docs/spark.md); "
                   "-o is for dialect parser options, --conf for Spark properties")
@click.option("--concurrent-jobs", type=click.IntRange(min=1), default=DEFAULT_CONCURRENT_JOBS,
              show_default=True, help="table versions converted at the same time (each a Spark job)")
@click.option("--replay-quarantine", is_flag=True,
              help="also re-interpret quarantined rows whose schema is known now (after a resync)")
@click.option("--follow", is_flag=True,
              help="keep running: a batch (one commit) whenever the change log grows; SIGTERM/Ctrl-C stop it")
@click.option("--interval", type=click.FloatRange(min=0.1), default=5.0, show_default=True, metavar="SECONDS",
              help="with --follow: seconds between two looks at the change log")
@click.option("--max-batch-events", type=click.IntRange(min=1), default=None, metavar="N",
              help="with --follow: at most N events per batch (a directory of files: whole files, "
                   "one at least)")
@click.option("--format", "output_format", type=click.Choice(["parquet", "iceberg"]), default="parquet",
              show_default=True, help="parquet: a directory per table version; iceberg: also an Iceberg "
                                      "changes table per source table (docs/tables.md)")
@click.option("--catalog", default=None, metavar="NAME",
              help="--format iceberg: a pyiceberg-configured catalog (default: SQLite in OUT/_catalog.sqlite)")
@verbose_option("show Spark's WARN and ERROR lines on the terminal too (DDLCORE_SPARK_LOG=LEVEL: that level)")
def run_cmd(changelog: Path | str, out: str, dialect: str | None, history: Path | None, master: str | None,
            spark_conf: tuple[str, ...], strict: bool, spark_options: tuple[str, ...], concurrent_jobs: int,
            replay_quarantine: bool, follow: bool, interval: float, max_batch_events: int | None,
            output_format: str, catalog: str | None, verbose: bool) -> None:
    """Turn a change log into typed Parquet tables, one directory per table version.

    Only events past the last committed seq are processed; a killed run is finished by the
    next.  Events that cannot be interpreted go to OUT/_quarantine with the reason (with
    --strict the run stops, exit status 1, naming the first).  With --follow the run goes on
    in batches as the log grows (docs/operations.md)."""
    params = dict(locals())
    if follow:  # SIGTERM/SIGINT stop a follower from now on, before pyspark is imported (exit status 0)
        from .follow_cli import early_stop

        stop, restore = early_stop()
    try:
        _run(**params, stop=stop if follow else None)
    finally:
        if follow:
            restore()


def _run(*, changelog, out, dialect, history, master, spark_conf, strict, spark_options, concurrent_jobs,
         replay_quarantine, follow, interval, max_batch_events, output_format, catalog, verbose, stop) -> None:
    """``run_cmd``'s work (its parameters; ``stop``: a follower's stop event, ``early_stop``)."""
    from ..errors import DdlCoreError
    from ..spark import logs
    from ..spark.pipeline import PipelineError, check_run_options, run_pipeline, spark_session

    console = Console(stderr=True)
    opts = assignments(spark_options, "-s")
    conf = assignments(spark_conf, "--conf")
    try:  # before Spark starts: a bad option costs no JVM and leaves nothing behind
        check_run_options(out, dialect, opts)
    except PipelineError as exc:
        raise click.UsageError(str(exc)) from None
    given = click.get_current_context().get_parameter_source("interval") is not click.core.ParameterSource.DEFAULT
    if (given or max_batch_events) and not follow:
        raise click.UsageError("--interval and --max-batch-events need --follow")
    if follow and replay_quarantine:
        raise click.UsageError("--replay-quarantine is a run of its own: not with --follow")
    _check_out(out)
    check_local_changelog(changelog)
    try:
        log_file = logs.configure(out, verbose=verbose, conf=conf)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None

    def start_spark():
        try:
            with logs.jvm_launch(log_file, quiet=not verbose and logs.level_from_env() is None):
                return spark_session(master, conf=conf)  # the JVM keeps the log file as its stderr
        except Exception as exc:  # noqa: BLE001 - no JVM (Java missing, a bad --conf): one line, the log named
            raise click.ClickException(f"Spark did not start: {type(exc).__name__}: "
                                       f"{one_line(str(exc)).split('; ')[0]}{_see(log_file)}") from exc

    def fail(exc: BaseException) -> None:
        prefix = "stopped: " if isinstance(exc, PipelineError) else ""
        raise click.ClickException(f"{prefix}{one_line(str(exc))}{_see(log_file)}") from None

    if follow:
        from .follow_cli import follow_main

        follow_main(changelog, out, stop=stop, start_spark=start_spark, on_error=fail, interval=interval,
                    max_batch_events=max_batch_events, dialect=dialect, history=history, strict=strict,
                    spark_options=opts, concurrent_jobs=concurrent_jobs, output_format=output_format,
                    catalog=catalog)
        return
    spark = start_spark()
    with console.status("starting Spark") as status:
        try:
            result = run_pipeline(changelog, out, dialect=dialect, history=history, master=master, spark=spark,
                                  strict=strict, spark_options=opts, spark_conf=conf,
                                  concurrent_jobs=concurrent_jobs, replay_quarantine=replay_quarantine,
                                  output_format=output_format, catalog=catalog,
                                  progress=lambda msg: status.update(msg))
        except DdlCoreError as exc:
            status.stop()
            fail(exc)
    render_summary(Console(), result, out)
