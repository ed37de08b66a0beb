"""``ddlcore capture mysql``: the binlog capture on the command line (click + rich).

Owns: the options of the command and its terminal output.  The command is attached under
``ddlcore capture`` by core through the ``ddlcore_capture_commands`` hook (``plugin.py``); core
never imports this module by name.  ``pymysqlreplication`` is imported only when the command
runs.

Exit status: 0 success (``--until-end`` reached the end, or stopped by SIGINT/SIGTERM with a
checkpoint); 1 the capture failed (the message says why; the checkpoint holds the last
committed transaction); 2 usage errors.
"""

from __future__ import annotations

import os

import click

from ddlcore.cli.common import capture_options

__all__ = ["mysql_capture_command"]


@click.command("mysql")
@click.option("--host", default="127.0.0.1", show_default=True, help="server host (TCP)")
@click.option("--port", default=3306, show_default=True, type=int, help="server port (TCP)")
@click.option("--socket", default=None, metavar="PATH", help="Unix socket (instead of host/port)")
@click.option("--user", default="root", show_default=True, help="replication account")
@click.option("--password-env", default=None, metavar="VAR",
              help="environment variable holding the password (never given on the command line)")
@click.option("--server-id", required=True, type=click.IntRange(1, 2 ** 32 - 1),
              help="this replica's server id (unique among the source's replicas)")
@click.option("--snapshot", type=click.Choice(["initial", "schema_only", "never"]), default="initial",
              show_default=True, help="first run only: snapshot schema and rows / schema only / nothing")
@click.option("--start", default=None, metavar="FILE:POS",
              help="first run with --snapshot never: stream from this binlog position "
                   "(default: the current end)")
@click.option("--on-statement-dml", type=click.Choice(["stop", "quarantine"]), default="stop", show_default=True,
              help="statement-format DML on a captured table (its rows are not in the binlog): stop the "
                   "capture, or record it as a quarantined stmt event and go on")
@click.option("--resync", multiple=True, metavar="PATTERN",
              help="read these tables' definitions again (SHOW CREATE TABLE at the current position) and "
                   "record them as snapshot DDL events: the way back for a table whose schema was lost; repeatable")
@capture_options(patterns="db.table, db.*, db.prefix%, %.table", until_end="stop at the current end of the binlog")
def mysql_capture_command(host: str, port: int, socket: str | None, user: str, password_env: str | None,
                          server_id: int, out: str, snapshot: str, start: str | None, until_end: bool,
                          include: tuple[str, ...], exclude: tuple[str, ...], checkpoint_interval: float,
                          on_statement_dml: str, resync: tuple[str, ...], retry_for: float,
                          no_progress: bool, as_json: bool) -> None:
    """Capture a MySQL / MariaDB binlog into DIR/changelog.jsonl, as a replica.

    The first run snapshots (--snapshot) and then streams row events and DDL; every later run
    resumes from DIR/checkpoint.json.  Needs binlog_format=ROW and binlog_row_image=FULL;
    binlog_row_metadata=FULL adds drift checks of column names and ENUM/SET labels."""
    from rich.console import Console

    from ddlcore.capture import run_capture_command, warning_printer

    from .capture import CaptureOptions, ConnectionSettings, MySqlCapture


    err = Console(stderr=True)
    password = ""
    if password_env:
        if password_env not in os.environ:
            raise click.UsageError(f"--password-env {password_env}: the variable is not set")
        password = os.environ[password_env]
    try:
        options = CaptureOptions(ConnectionSettings(host=host, port=port, user=user, password=password,
                                                    socket=socket),
                                 server_id=server_id, out=out, snapshot=snapshot, start=start,
                                 until_end=until_end, include=include, exclude=exclude,
                                 checkpoint_interval=checkpoint_interval, progress=not no_progress,
                                 on_statement_dml=on_statement_dml, resync=resync, retry_for=retry_for)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    cap = MySqlCapture(options, on_warning=warning_printer(err))
    run_capture_command(cap, err, as_json=as_json, summary=lambda stats: (
        f"{stats.summary()}, next position {cap.checkpoint.position if cap.checkpoint else '-'}"
        + (f"; {len(stats.drift)} drift warning(s)" if stats.drift else "")))
