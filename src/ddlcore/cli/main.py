"""``ddlcore.cli.main``: the root ``ddlcore`` command (click + rich).

Owns: argument handling and terminal rendering.  Must not know: any dialect by name (dialects
come from plugins).

Commands: ``ddlcore dialects``; ``ddlcore parse [--dialect D] [--lenient] [--format json|table]
[--database DB] [-o NAME=VALUE ...] [--strict-warnings] [-v] FILE...``; ``ddlcore history ...``
(schema history); ``ddlcore run`` (the pipeline); ``ddlcore capture SOURCE ...`` (commands from
plugins' ``ddlcore_capture_commands`` hook).  Exit statuses and error lines: ``ddlcore.cli.common``.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table as RichTable

from ..errors import DdlParseError
from ..plugins import available_dialects
from .common import (DdlcoreGroup, dialect_option, dialect_options, dialect_options_option, model_json,
                     parse_error_line, render_tables, resolve_dialect, verbose_option)
from .history_cli import history
from .debezium_cli import debezium_capture_command
from .run_cli import run_cmd
from .status_cli import status_cmd
from .tables_cli import tables_cmd

__all__ = ["main", "model_json", "render_tables"]

#: warnings ``ddlcore parse`` lists without ``-v``
SHOWN_WARNINGS = 5


@click.group(cls=DdlcoreGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ddlcore")
def main() -> None:
    """ddlcore: DDL in a change log → a versioned table model → typed rows.

    Errors are one line on stderr (exit status 1; 2 for usage errors); --debug anywhere on the
    command line adds the Python traceback.  -o NAME=VALUE sets a dialect parser option, -s
    NAME=VALUE a Spark type-mapping option, --conf KEY=VALUE a Spark property."""


@main.command("dialects")
def dialects_cmd() -> None:
    """List the installed dialects (from plugins)."""
    console = Console()
    rt = RichTable(title="installed ddlcore dialects", title_justify="left")
    rt.add_column("name")
    rt.add_column("aliases")
    rt.add_column("plugin")
    rt.add_column("description")
    for name, d in available_dialects().items():
        rt.add_row(name, ", ".join(d.aliases), type(d).__module__.split(".")[0], d.description)
    console.print(rt)


@main.command("parse")
@dialect_option("dialect name (see `ddlcore dialects`; default: the only installed one)")
@click.option("--lenient", is_flag=True, help="record unparsable statements and go on")
@click.option("--format", "fmt", type=click.Choice(["json", "table"]), default="json", show_default=True)
@click.option("--database", default=None, help="current database before the first statement")
@dialect_options_option()
@click.option("--encoding", default="utf-8", show_default=True,
              help="the files' text encoding (a Python codec name)")
@click.option("--strict-warnings", is_flag=True,
              help="warnings are errors: exit status 1 when a statement has any (for CI)")
@verbose_option("list every warning (default: the count and the first few)")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
def parse_cmd(dialect_name: str | None, lenient: bool, fmt: str, database: str | None,
              options: tuple[str, ...], encoding: str, strict_warnings: bool, verbose: bool,
              files: tuple[Path, ...]) -> None:
    """Parse DDL FILEs in order and print the resulting table model.

    Unparsable statements stop with exit status 1 and the error (line, column, what was
    expected), or with --lenient are listed on stderr and skipped.  Warnings (a statement on a
    table the model does not know, what the model cannot follow) go to stderr with their file
    and line: their count and the first few, all with -v.  A file that is not text in ENCODING
    (binary data, UTF-16 without --encoding utf-16, invalid bytes, truncated gzip) stops with
    exit status 1 naming the file and the byte offset, before anything is printed; gzip files
    are read decompressed."""
    from ..inputs import read_ddl_text

    dialect = resolve_dialect(dialect_name)
    parser = dialect.parser(**dialect_options(dialect, options))
    try:
        import codecs
        codecs.lookup(encoding)
    except LookupError:
        raise click.UsageError(f"--encoding {encoding}: no such codec") from None
    texts = [(path, read_ddl_text(path, encoding)) for path in files]  # all read before any is parsed
    tables = parser.new_tables()
    if database:
        tables.current_database = database
    failed: list[str] = []
    warnings: list[str] = []
    for path, text in texts:
        try:
            result = parser.parse(text, tables, lenient=lenient)
        except DdlParseError as exc:
            raise click.ClickException(parse_error_line(path, exc)) from None
        for s in result.statements:
            if s.error is not None:
                failed.append(parse_error_line(path, s.error))
            warnings += [f"{path}:{s.statement.line}: {w}" for w in s.warnings]
    if fmt == "json":
        click.echo(json.dumps(model_json(tables), indent=2, ensure_ascii=False))
    else:
        render_tables(Console(), tables)
    _report(failed, warnings, verbose)
    if strict_warnings and warnings:
        raise click.ClickException(f"{len(warnings)} warning(s) with --strict-warnings")


def _report(failed: list[str], warnings: list[str], verbose: bool) -> None:
    """The failed statements (--lenient) and the warnings of ``ddlcore parse`` on stderr."""
    for line in failed:
        click.echo(f"skipped unparsable statement {line}", err=True)
    shown = warnings if verbose else warnings[:SHOWN_WARNINGS]
    for line in shown:
        click.echo(f"warning {line}", err=True)
    parts = [f"{len(failed)} statement(s) could not be parsed (--lenient)"] if failed else []
    if warnings:
        more = f" ({len(warnings) - len(shown)} more with -v)" if len(shown) < len(warnings) else ""
        parts.append(f"{len(warnings)} warning(s){more}")
    if parts:
        click.echo("; ".join(parts), err=True)


main.add_command(history)
main.add_command(run_cmd)
main.add_command(status_cmd)
main.add_command(tables_cmd)


class _CaptureGroup(click.Group):
    """``ddlcore capture``: its commands come from plugins (hook ``ddlcore_capture_commands``),
    loaded when the group is listed or invoked."""

    def _plugin_commands(self) -> dict[str, click.Command]:
        from ..plugins import capture_commands
        return {**capture_commands(), **self.commands}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self._plugin_commands())

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return self._plugin_commands().get(name)


@main.group("capture", cls=_CaptureGroup)
def capture_group() -> None:
    """Capture a database's change stream into a change log (sources come from plugins,
    e.g. `ddlcore capture mysql`)."""


capture_group.add_command(debezium_capture_command)
