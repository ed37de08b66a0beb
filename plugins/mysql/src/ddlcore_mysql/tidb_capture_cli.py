"""``ddlcore capture tidb``: TiDB Binlog (Drainer → Kafka, or a file of ``Binlog`` messages)
into a change log (``tidb_capture``).  Attached under ``ddlcore capture`` through the
``ddlcore_capture_commands`` hook (``plugin.py``); ``confluent-kafka`` and ``protobuf`` are
imported only when the command runs.

Exit status: 0 success (the end was reached with ``--until-end``, or SIGINT/SIGTERM stopped it
with a checkpoint); 1 the capture failed (the message says why; the checkpoint holds the last
complete message); 2 usage errors.
"""

from __future__ import annotations

import click

from ddlcore.cli.common import capture_options

__all__ = ["tidb_capture_command"]


@click.command("tidb")
@click.option("--from-file", "from_file", default=None, type=click.Path(exists=True, dir_okay=False), metavar="PATH",
              help="read Binlog messages from this file (each preceded by its varint length) instead of Kafka")
@click.option("--brokers", default=None, metavar="HOST:PORT[,...]", help="Kafka bootstrap servers")
@click.option("--topic", default=None, metavar="TOPIC", help="Drainer's topic, <cluster_id>_obinlog")
@click.option("--partition", default=0, show_default=True, type=click.IntRange(0), help="the topic's partition")
@click.option("--commit-ts", "commit_ts", default=None, type=click.IntRange(0), metavar="TSO",
              help="first run only: capture transactions committed after this TSO")
@click.option("--offset", default=None, type=click.IntRange(0), metavar="N",
              help="first run only: start at this Kafka offset (default: the earliest)")
@click.option("--time-zone", default="UTC", show_default=True, metavar="ZONE",
              help="zone of TIMESTAMP values when a message names none (Drainer's host zone)")
@capture_options(patterns="db.table, db.*, db.prefix%, %.table",
                 until_end="stop at the end of the file / the topic's current end", retry=False)
def tidb_capture_command(from_file: str | None, brokers: str | None, topic: str | None, partition: int,
                         commit_ts: int | None, offset: int | None, out: str, include: tuple[str, ...],
                         exclude: tuple[str, ...], until_end: bool, time_zone: str,
                         checkpoint_interval: float, no_progress: bool, as_json: bool) -> None:
    """Capture TiDB Binlog messages (Drainer with db-type = "kafka") into DIR/changelog.jsonl.

    Every later run resumes from DIR/checkpoint.json; messages Drainer sends again after a
    restart (commit_ts not above the last one written) are dropped."""
    from rich.console import Console

    from ddlcore.capture import CaptureError, run_capture_command, warning_printer

    err = Console(stderr=True)
    from .tidb_capture import TidbCapture, TidbCaptureOptions

    try:
        options = TidbCaptureOptions(out=out, from_file=from_file, brokers=brokers, topic=topic,
                                     partition=partition, commit_ts=commit_ts, offset=offset,
                                     until_end=until_end or from_file is not None, include=include,
                                     exclude=exclude, time_zone=time_zone,
                                     checkpoint_interval=checkpoint_interval, progress=not no_progress)
    except (ValueError, CaptureError) as exc:
        raise click.UsageError(str(exc)) from None
    try:
        cap = TidbCapture(options, on_warning=warning_printer(err))
    except CaptureError as exc:  # the message module is missing: say how to install it
        raise click.ClickException(str(exc)) from exc
    run_capture_command(cap, err, as_json=as_json, summary=lambda stats: (
        f"{stats.summary()}, commit_ts {cap.checkpoint.commit_ts if cap.checkpoint else '-'}; "
        f"{stats.messages:,} messages read, {stats.duplicates:,} duplicate(s) dropped"
        + (f"; {len(stats.drift)} drift warning(s)" if stats.drift else "")))
