"""What every ``ddlcore`` command shares: the root group that turns every error into one line,
the option vocabulary (``-o`` dialect options, ``-s`` Spark options, ``--conf`` Spark
properties, ``--dialect``, ``-v``), and the JSON / terminal renderings of the table model.

Owns: error reporting and exit statuses of the whole command line, ``--debug``, and the
helpers commands import (no command imports another command's module).
Must not know: any dialect by name, pyspark.

Exit statuses: 0 success; 1 an error in the input or the run (one line on stderr:
``error: <where>: <why>``); 2 a usage error (one line: ``error: <option>: <why> (ddlcore CMD
--help)``); 130 interrupted.  ``--debug`` anywhere on the command line (or ``DDLCORE_DEBUG=1``)
shows the Python traceback of any error as well.
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Any, Iterable

import click
from rich.console import Console
from rich.table import Table as RichTable

from ..errors import DdlCoreError, one_line
from ..model import Table, Tables

__all__ = ["DdlcoreGroup", "COLUMN_FIELDS", "table_json", "model_json", "render_tables",
           "assignments", "dialect_options", "resolve_dialect", "verbose_option", "dialect_option",
           "dialect_options_option", "debug_enabled", "capture_options", "parse_error_line"]

#: the column fields of ``ddlcore parse --format json`` (the public shape), in order
COLUMN_FIELDS = ("name", "ordinal_position", "data_type", "column_type", "nullable",
                 "column_default", "character_maximum_length", "numeric_precision",
                 "numeric_scale", "datetime_precision", "character_set_name", "collation_name",
                 "auto_increment", "generation_expression", "enum_values", "set_values",
                 "unsigned", "on_update", "comment")

_TABLE_KEYS = ("database", "schema", "name", "columns", "primary_key", "default_character_set_name",
               "default_collation_name", "comment")


# ------------------------------------------------------------------------- errors and exit


def parse_error_line(path: Any, exc: Any) -> str:
    """A ``DdlParseError`` in ``path`` as one line: ``FILE:LINE:COLUMN: reason (at ...); expected
    ...; in statement: ...`` (the form of a compiler's messages, which editors jump to; the
    column is 0-based, as ``DdlParseError.column``)."""
    text = one_line(str(exc))
    if getattr(exc, "line", None) is None:
        return f"{path}: {text}"
    return f"{path}:{exc.line}:{exc.column}: " + text.removeprefix(f"line {exc.line}, column {exc.column}: ")


def debug_enabled() -> bool:
    """Whether ``--debug`` was given (or ``DDLCORE_DEBUG`` is set to a non-empty value but 0)."""
    return os.environ.get("DDLCORE_DEBUG", "") not in ("", "0")


def _java_reason(exc: BaseException) -> str | None:
    """The Java exception's own message of a Spark/py4j error (its first line), if it is one."""
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            return one_line(str(java.toString()).splitlines()[0])
        except Exception:  # noqa: BLE001 - the JVM may be gone
            return None
    return None


class DdlcoreGroup(click.Group):
    """The root command group: runs a command and turns whatever it raises into one line on
    stderr and an exit status (module docstring)."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        cut = argv.index("--") if "--" in argv else len(argv)
        if "--debug" in argv[:cut]:
            argv.remove("--debug")
            os.environ["DDLCORE_DEBUG"] = "1"
        if not standalone_mode:
            return super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as exc:
            cmd = exc.ctx.command_path if exc.ctx is not None else "ddlcore"
            self._fail(exc, f"{one_line(exc.format_message())} ({cmd} --help)", 2)
        except click.ClickException as exc:
            self._fail(exc, one_line(exc.format_message()), exc.exit_code)
        except click.Abort as exc:
            self._fail(exc, "aborted", 1)
        except KeyboardInterrupt as exc:
            self._fail(exc, "interrupted", 130)
        except DdlCoreError as exc:
            self._fail(exc, one_line(str(exc)), 1)
        except OSError as exc:
            where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
            self._fail(exc, f"{where}{exc.strerror or exc}", 1)
        except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, not a traceback
            reason = _java_reason(exc) or one_line(str(exc)) or type(exc).__name__
            self._fail(exc, f"{type(exc).__name__}: {reason} (--debug shows the traceback)", 1)
        sys.exit(rv if isinstance(rv, int) else 0)

    @staticmethod
    def _fail(exc: BaseException, message: str, status: int) -> None:
        if debug_enabled():
            traceback.print_exception(exc)
        click.echo(f"error: {message}", err=True)
        sys.exit(status)


# ---------------------------------------------------------------------- option vocabulary


def assignments(pairs: Iterable[str], flag: str) -> dict[str, str]:
    """``NAME=VALUE`` words given after ``flag`` (``-o``, ``-s``, ``--conf``) → a dict of text
    values; ``click.UsageError`` naming the flag and the word otherwise."""
    from ..options import parse_assignments

    try:
        return parse_assignments(pairs, flag, "KEY=VALUE" if flag == "--conf" else "NAME=VALUE")
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None


def dialect_options(dialect: Any, pairs: Iterable[str]) -> dict[str, Any]:
    """``-o NAME=VALUE`` words checked and normalised by ``dialect`` (a ``Dialect``)
    (``Dialect.check_options``); ``click.UsageError`` with the option's one-line reason."""
    from ..dialect import check_dialect_options

    given: dict[str, Any] = assignments(pairs, "-o")
    if not hasattr(dialect, "check_options"):  # shaped like a Dialect, no typed options: read as before
        given = {k: _plain_value(v) for k, v in given.items()}
    try:
        return check_dialect_options(dialect, given)
    except (TypeError, ValueError) as exc:
        raise click.UsageError(f"-o: {exc}") from None


def _plain_value(text: str) -> Any:
    """``true``/``false`` → bool, a decimal integer → int, else the text (options without a
    declared type)."""
    low = text.lower()
    return True if low == "true" else False if low == "false" else int(text) if text.lstrip("-").isdigit() else text


def resolve_dialect(name: str | None, *, default: str | None = None) -> Any:
    """The ``Dialect`` named ``name`` (or ``default``; with neither, the only installed dialect);
    ``click.UsageError`` when none is found or several are installed and none is named.
    The one rule behind ``--dialect`` in every command: named, else what the input names (a
    store, a change log's source event), else the only installed dialect."""
    from ..plugins import available_dialects, get_dialect

    chosen = name or default
    if chosen is None:
        installed = sorted(available_dialects())
        if len(installed) != 1:
            raise click.UsageError(f"--dialect is required: {len(installed)} dialects are installed "
                                   f"({', '.join(installed)})")
        chosen = installed[0]
    try:
        return get_dialect(chosen)
    except DdlCoreError as exc:
        raise click.UsageError(f"--dialect {chosen}: {exc}") from None


def verbose_option(help_text: str = "say more on stderr"):
    """``-v`` / ``--verbose``, the same flag in every command that has one."""
    return click.option("--verbose", "-v", is_flag=True, help=help_text)


def dialect_option(help_text: str):
    """``--dialect NAME``: optional everywhere (see ``resolve_dialect`` for the default)."""
    return click.option("--dialect", "dialect_name", default=None, metavar="NAME", help=help_text)


def dialect_options_option():
    """``-o`` / ``--option NAME=VALUE``: a dialect parser option (docs/mysql.md and
    docs/postgres.md "Parser options"); ``-s`` is for Spark options (``ddlcore run``)."""
    return click.option("--option", "-o", "options", multiple=True, metavar="NAME=VALUE",
                        help="dialect parser option (repeatable), e.g. -o flavor=mysql; the dialect's docs list "
                             "them")


def capture_options(*, patterns: str, until_end: str, checkpoint: str = "at most this long between checkpoints",
                    retry: bool = True, out_required: bool = True):
    """The options every ``ddlcore capture SOURCE`` command has, declared once (a decorator):
    ``--out DIR``, ``--include`` / ``--exclude PATTERN`` (``patterns``: the pattern forms the
    source names tables with), ``--until-end`` (``until_end``: where the end is), ``--checkpoint-
    interval SECONDS`` (``checkpoint``: what a checkpoint does there), ``--retry-for SECONDS``
    (unless ``retry`` is false), ``--no-progress`` and ``--json``.  The command receives them as
    ``out, include, exclude, until_end, checkpoint_interval, [retry_for,] no_progress, as_json``."""
    options = [
        click.option("--out", "out", required=out_required, default=None, type=click.Path(file_okay=False),
                     metavar="DIR", help="output directory: changelog.jsonl, checkpoint.json, history.sqlite"),
        click.option("--include", multiple=True, metavar="PATTERN",
                     help=f"capture rows of these tables only ({patterns}); repeatable"),
        click.option("--exclude", multiple=True, metavar="PATTERN",
                     help="do not capture rows of these tables; repeatable"),
        click.option("--until-end", is_flag=True, help=until_end),
        click.option("--checkpoint-interval", default=0.5, show_default=True, type=click.FloatRange(0),
                     metavar="SECONDS", help=checkpoint),
    ]
    if retry:
        options.append(click.option(
            "--retry-for", default=300.0, show_default=True, type=click.FloatRange(0), metavar="SECONDS",
            help="keep reconnecting (exponential backoff) this long when the connection drops; 0: no retry"))
    options += [click.option("--no-progress", is_flag=True, help="no live progress on stderr"),
                click.option("--json", "as_json", is_flag=True, help="print the run's statistics as JSON on stdout")]

    def decorate(command):
        for option in reversed(options):
            command = option(command)
        return command
    return decorate


# ---------------------------------------------------------------------------- rendering


def table_json(table: Table) -> dict[str, Any]:
    """One table in the public JSON shape: the documented keys first, then the model's other
    fields (``generation_stored``, ``zerofill``, ``invisible``, ``indexes``, ...)."""
    full = table.to_json()
    cols = [{**{k: c[k] for k in COLUMN_FIELDS}, **{k: v for k, v in c.items() if k not in COLUMN_FIELDS}}
            for c in full["columns"]]
    head = {k: full[k] for k in _TABLE_KEYS}
    head["columns"] = cols
    return {**head, **{k: v for k, v in full.items() if k not in _TABLE_KEYS}}


def model_json(tables: Tables | Iterable[Table]) -> dict[str, Any]:
    """``{"tables": [...], "databases": [...], "views": [...]}`` — the ``ddlcore parse``
    JSON (tables sorted by database, schema, name)."""
    if isinstance(tables, Tables):
        full = tables.to_json()
        return {"tables": [table_json(t) for t in tables], "databases": full["databases"],
                "views": full["views"]}
    return {"tables": [table_json(t) for t in tables]}


def _yn(v: Any) -> str:
    return "" if v is None or v is False else ("yes" if v is True else str(v))


def _extra(c: Any, pk: set[str]) -> str:
    extra = []
    if c.name.lower() in pk:
        extra.append("PK")
    if c.auto_increment:
        extra.append("auto_increment")
    if c.on_update:
        extra.append(f"on update {c.on_update}")
    if c.generation_expression is not None:
        extra.append(("stored " if c.generation_stored else "virtual ") + f"as ({c.generation_expression})")
    if c.invisible:
        extra.append("invisible")
    return ", ".join(extra)


def render_tables(console: Console, tables: Iterable[Table]) -> None:
    """A readable terminal rendering: one rich table per table."""
    for t in tables:
        rt = RichTable(title=f"{t.id}", title_justify="left", show_lines=False)
        for head in ("#", "column", "type", "null", "default", "charset / collation", "extra", "comment"):
            rt.add_column(head)
        pk = {c.lower() for c in t.primary_key}
        for c in t.columns:
            cs = f"{c.character_set_name} / {c.collation_name}" if c.character_set_name else ""
            rt.add_row(str(c.ordinal_position), c.name, c.column_type, "yes" if c.nullable else "no",
                       _yn(c.column_default), cs, _extra(c, pk), c.comment or "")
        console.print(rt)
        facts = [f"primary key ({', '.join(t.primary_key)})" if t.primary_key else "no primary key"]
        if t.default_character_set_name:
            facts.append(f"charset {t.default_character_set_name} / {t.default_collation_name}")
        facts += [f"{k.lower()}={v}" for k, v in t.options]
        if t.comment:
            facts.append(f"comment {t.comment!r}")
        console.print("  " + "; ".join(facts), style="dim")
