"""``ddlcore capture debezium``: Debezium change events (Kafka, or JSON Lines files of message
values) and the connector's schema history into a change log (``debezium_capture``).  Core
owns the command; the connectors (positions, value encodings) come from the dialect plugins
(hook ``ddlcore_debezium_connectors``), chosen by ``--connector`` or by the messages'
``source.connector``.

Exit status: 0 success; 1 the capture failed (one line says where and why; the checkpoint
holds the last record written); 2 usage errors.
"""

from __future__ import annotations

from typing import Any

import click

__all__ = ["debezium_capture_command", "output_options"]


def _setting(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[tuple[str, str]]:
    out = []
    for v in values:
        name, eq, value = v.partition("=")
        if not eq:
            raise click.BadParameter(f"{v!r}: give PROPERTY=VALUE, e.g. decimal.handling.mode=string")
        out.append((name.strip(), value.strip()))
    return out


def output_options(command: Any) -> Any:
    """The options every stream importer shares (``capture debezium``, ``capture canal``):
    ``--out``, ``--include``, ``--exclude``, ``--until-end``, ``--no-progress``, ``--json``."""
    for option in reversed([
        click.option("--out", "out", required=True, type=click.Path(file_okay=False), metavar="DIR",
                     help="output directory: changelog.jsonl, checkpoint.json, history.sqlite"),
        click.option("--include", multiple=True, metavar="PATTERN",
                     help="capture rows of these tables only; repeatable"),
        click.option("--exclude", multiple=True, metavar="PATTERN",
                     help="do not capture rows of these tables; repeatable"),
        click.option("--until-end", is_flag=True, help="Kafka: stop once every partition is read to its end"),
        click.option("--no-progress", is_flag=True, help="no live progress on stderr"),
        click.option("--json", "as_json", is_flag=True, help="print the run's statistics as JSON on stdout")]):
        command = option(command)
    return command


@click.command("debezium")
@click.option("--from-file", "from_files", multiple=True, type=click.Path(exists=True, dir_okay=False),
              metavar="PATH", help="JSON Lines of message values (repeatable), instead of Kafka")
@click.option("--history", default=None, type=click.Path(exists=True, dir_okay=False), metavar="FILE",
              help="the connector's FileSchemaHistory file (schema.history.internal.file.filename)")
@click.option("--brokers", default=None, metavar="HOST:PORT[,...]", help="Kafka bootstrap servers")
@click.option("--topics", default=None, metavar="T1,T2,...", help="topics to read (rows, schema changes)")
@click.option("--topic-pattern", default=None, metavar="REGEX", help="read every topic matching REGEX")
@click.option("--group", default=None, metavar="ID", help="consumer group (default ddlcore-capture-debezium)")
@click.option("--connector", default=None, metavar="NAME", help="mysql, ... (default: source.connector)")
@click.option("--flavor", default=None, metavar="NAME", help="parser flavor (default: from source.connector)")
@click.option("-s", "--setting", "settings", multiple=True, callback=_setting, metavar="PROPERTY=VALUE",
              help="the connector's value settings for messages without schemas, e.g. "
                   "-s decimal.handling.mode=string -s time.precision.mode=connect")
@output_options
def debezium_capture_command(from_files: tuple[str, ...], history: str | None, brokers: str | None,
                             topics: str | None, topic_pattern: str | None, group: str | None,
                             connector: str | None, flavor: str | None, settings: list[tuple[str, str]],
                             out: str, include: tuple[str, ...], exclude: tuple[str, ...], until_end: bool,
                             no_progress: bool, as_json: bool) -> None:
    """Capture Debezium change events into DIR/changelog.jsonl, typed by the DDL in force.

    Rows whose values the producer already made inexact (decimal.handling.mode=double,
    time.precision.mode=connect, zero dates, failed conversions) are kept with a quarantine
    reason, and each such column is reported once with the setting that avoids it."""
    from rich.console import Console

    from ..capture import run_capture_command, warning_printer
    from ..debezium import DebeziumSettings
    from ..debezium_capture import DebeziumCapture, DebeziumCaptureOptions

    err = Console(stderr=True)
    try:
        options = DebeziumCaptureOptions(
            out=out, from_files=tuple(from_files), history=history, brokers=brokers,
            topics=tuple(t for t in (topics or "").split(",") if t), topic_pattern=topic_pattern, group=group,
            connector=connector, flavor=flavor, settings=DebeziumSettings.of(settings), include=include,
            exclude=exclude, until_end=until_end, progress=not no_progress)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    cap = DebeziumCapture(options, on_warning=warning_printer(err))
    run_capture_command(cap, err, as_json=as_json, summary=lambda stats: (
        f"{stats.summary()}; {stats.messages:,} messages read, {stats.duplicates:,} duplicate(s) dropped, "
        f"{stats.quarantined:,} row(s) quarantined ({stats.lossy:,} lossy)"))
