"""``ddlcore capture canal``: Canal flat messages or TiCDC canal-json (files of message values,
or TiCDC's Kafka topic) into a change log (``canal``, on ``ddlcore.debezium_capture``).

Exit status: 0 success; 1 the capture failed (one line says where and why); 2 usage errors.
"""

from __future__ import annotations

import click

from ddlcore.cli.debezium_cli import output_options

__all__ = ["canal_capture_command"]


@click.command("canal")
@click.option("--from-file", "from_files", multiple=True, type=click.Path(exists=True, dir_okay=False),
              metavar="PATH", help="JSON Lines of message values (repeatable), in the order they were sent")
@click.option("--flavor", type=click.Choice(["canal", "ticdc"]), default="canal", show_default=True,
              help="Canal flat messages, or TiCDC canal-json (enable-tidb-extension for commitTs)")
@click.option("--brokers", default=None, metavar="HOST:PORT[,...]", help="Kafka bootstrap servers")
@click.option("--topics", default=None, metavar="T1,...",
              help="topics to read (messages without _tidb.commitTs: one partition, its offsets are their positions)")
@click.option("--group", default="ddlcore-capture-canal", show_default=True, metavar="ID", help="consumer group")
@click.option("--parser-flavor", type=click.Choice(["mysql", "mariadb"]), default=None,
              help="the server the DDL comes from (default: mysql; --flavor ticdc reads TiDB's)")
@click.option("--time-zone", "time_zone_name", default="UTC", show_default=True, metavar="ZONE",
              help="the zone TIMESTAMP values are written in (the server's, for Canal; the changefeed's, for TiCDC)")
@output_options
def canal_capture_command(from_files: tuple[str, ...], flavor: str, brokers: str | None, topics: str | None,
                          group: str, parser_flavor: str | None, time_zone_name: str, out: str,
                          include: tuple[str, ...], exclude: tuple[str, ...], until_end: bool, no_progress: bool,
                          as_json: bool) -> None:
    """Capture Canal flat messages or TiCDC canal-json into DIR/changelog.jsonl, typed by the DDL
    the stream carries (isDdl + sql), each row by the DDL in force at its position."""
    from rich.console import Console

    from ddlcore.capture import run_capture_command, warning_printer
    from ddlcore.debezium_capture import DebeziumCapture, DebeziumCaptureOptions

    from .canal import CanalReader, time_zone

    err = Console(stderr=True)
    if parser_flavor and flavor == "ticdc":
        raise click.UsageError("--parser-flavor is for Canal's messages; TiCDC's DDL is read as TiDB's")
    try:
        zone = time_zone(time_zone_name)
        options = DebeziumCaptureOptions(
            out=out, from_files=tuple(from_files), brokers=brokers,
            topics=tuple(t for t in (topics or "").split(",") if t), group=group,
            connector_impl=CanalReader(flavor, zone), flavor=parser_flavor, include=include, exclude=exclude,
            until_end=until_end, progress=not no_progress)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    cap = DebeziumCapture(options, on_warning=warning_printer(err))
    run_capture_command(cap, err, as_json=as_json, summary=lambda stats: (
        f"{stats.summary()}; {stats.messages:,} messages read, {stats.duplicates:,} duplicate(s) dropped, "
        f"{stats.quarantined:,} row(s) quarantined"))
