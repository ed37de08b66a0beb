"""``ddlcore capture postgres``: the logical-decoding capture on the command line (click + rich).

Owns: the options of the command, ``--install`` / ``--uninstall`` of the event triggers, and
the terminal output.  Attached under ``ddlcore capture`` by core through the
``ddlcore_capture_commands`` hook (``plugin.py``); psycopg2 is imported only when it runs.

Exit status: 0 success (``--until-end`` reached the end, a signal stopped it with a checkpoint,
or ``--install`` / ``--uninstall`` done); 1 the capture failed (the message says why; the
checkpoint holds the last complete transaction); 2 usage errors.
"""

from __future__ import annotations

import os

import click

from ddlcore.cli.common import capture_options

__all__ = ["postgres_capture_command"]


def _connection(dsn, host, port, user, password_env, dbname):
    from .capture import ConnectionSettings

    password = None
    if password_env:
        if password_env not in os.environ:
            raise click.UsageError(f"--password-env {password_env}: the variable is not set")
        password = os.environ[password_env]
    if not dsn and not (host or dbname):
        raise click.UsageError("give --dsn, or --host/--port/--user/--dbname")
    return ConnectionSettings(dsn=dsn, host=host, port=port, user=user, password=password, dbname=dbname)


@click.command("postgres")
@click.option("--dsn", default=None, metavar="DSN",
              help="libpq connection string or postgresql:// URI (--host & co. override its parts)")
@click.option("--host", default=None, help="server host or Unix socket directory")
@click.option("--port", default=None, type=int, help="server port")
@click.option("--user", default=None, help="role (REPLICATION attribute and SELECT on the captured tables)")
@click.option("--password-env", default=None, metavar="VAR",
              help="environment variable holding the password (never given on the command line)")
@click.option("--dbname", default=None, help="the database to capture")
@click.option("--install", "do_install", is_flag=True,
              help="create (or upgrade) the ddlcore schema and its event triggers in the database, then exit "
                   "(needs a superuser)")
@click.option("--uninstall", "do_uninstall", is_flag=True,
              help="drop the ddlcore event triggers and schema, then exit")
@click.option("--slot", default=None, metavar="NAME", help="logical replication slot (created by the first run)")
@click.option("--publication", default=None, metavar="NAME",
              help="publication naming the tables whose rows are streamed (must exist)")
@click.option("--snapshot", type=click.Choice(["initial", "schema_only", "never"]), default="initial",
              show_default=True, help="first run only: schema and rows / schema only / nothing, in the slot's snapshot")
@capture_options(patterns="schema.table, schema.*, schema.prefix%",
                 until_end="stop once every transaction committed before the run is written",
                 checkpoint="at most this long between checkpoints (confirmed to the slot)", out_required=False)
def postgres_capture_command(dsn, host, port, user, password_env, dbname, do_install, do_uninstall, slot,
                             publication, out, snapshot, until_end, include, exclude, checkpoint_interval,
                             retry_for, no_progress, as_json) -> None:
    """Capture a PostgreSQL database into DIR/changelog.jsonl: rows by logical decoding
    (pgoutput), DDL in order through ddlcore's event triggers.

    Once per database, as a superuser: --install.  Then the first run creates the slot,
    snapshots (--snapshot) and streams; every later run resumes from DIR/checkpoint.json.
    Needs wal_level=logical."""
    from rich.console import Console

    err = Console(stderr=True)
    conn_settings = _connection(dsn, host, port, user, password_env, dbname)
    if do_install and do_uninstall:
        raise click.UsageError("--install and --uninstall exclude each other")
    if do_install or do_uninstall:
        _install(conn_settings, do_install, err)
        return
    missing = [name for name, value in (("--slot", slot), ("--publication", publication), ("--out", out))
               if not value]
    if missing:
        raise click.UsageError(f"missing {', '.join(missing)}")
    from ddlcore.capture import run_capture_command, warning_printer

    from .capture import CaptureOptions, PostgresCapture

    try:
        options = CaptureOptions(conn_settings, slot=slot, publication=publication, out=out, snapshot=snapshot,
                                 until_end=until_end, include=include, exclude=exclude,
                                 checkpoint_interval=checkpoint_interval, progress=not no_progress,
                                 retry_for=retry_for)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    cap = PostgresCapture(options, on_warning=warning_printer(err))
    run_capture_command(cap, err, as_json=as_json, summary=lambda stats: (
        f"{stats.summary()}, next LSN {cap.checkpoint.lsn if cap.checkpoint else '-'}"
        + (f"; {len(stats.drift)} drift warning(s)" if stats.drift else "")))


def _install(settings, install: bool, err) -> None:
    from ddlcore.errors import one_line

    from .event_trigger import EventTriggerError
    from .event_trigger import install as do_install
    from .event_trigger import uninstall as do_uninstall

    try:
        conn = settings.connect()
    except Exception as exc:  # noqa: BLE001
        raise click.ClickException(f"cannot connect: {one_line(str(exc))}") from exc
    try:
        status = (do_install if install else do_uninstall)(conn)
    except EventTriggerError as exc:
        raise click.ClickException(one_line(str(exc))) from exc
    except Exception as exc:  # noqa: BLE001
        raise click.ClickException(f"{type(exc).__name__}: {one_line(str(exc))}") from exc
    finally:
        conn.close()
    if install:
        err.print(f"installed: schema ddlcore (version {status.version}), event triggers "
                  f"{', '.join(sorted(status.triggers))} (ENABLE ALWAYS)", highlight=False)
    else:
        err.print("uninstalled: the ddlcore event triggers and schema are gone (replication slots and "
                  "publications are left as they are)", highlight=False)
