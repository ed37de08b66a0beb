"""The ``ddlcore`` command line (click + rich).

Owns: argument handling and terminal rendering.  Must not know: any dialect by name (dialects
come from plugins).

Commands: ``ddlcore dialects``; ``ddlcore parse --dialect D [--lenient] [--format json|table]
[--database DB] [--option NAME=VALUE ...] FILE...``; ``ddlcore history ...`` (schema history);
``ddlcore capture SOURCE ...`` (commands from plugins' ``ddlcore_capture_commands`` hook).
Exit status: 0 success, 1 a statement failed (strict mode), 2 usage errors.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Iterable

import click
from rich.console import Console
from rich.table import Table as RichTable

from .errors import DdlCoreError, DdlParseError
from .model import Table, Tables
from .plugins import available_dialects, get_dialect

__all__ = ["main", "model_json", "render_tables"]

#: the column fields of ``ddlcore parse --format json`` (the public shape), in order
COLUMN_FIELDS = ("name", "ordinal_position", "data_type", "column_type", "nullable",
                 "column_default", "character_maximum_length", "numeric_precision",
                 "numeric_scale", "datetime_precision", "character_set_name", "collation_name",
                 "auto_increment", "generation_expression", "enum_values", "set_values",
                 "unsigned", "on_update", "comment")


def table_json(table: Table) -> dict[str, Any]:
    """One table in the public JSON shape: the documented keys first, then the model's other
    fields (``generation_stored``, ``zerofill``, ``invisible``, ``indexes``, ...)."""
    full = table.to_json()
    cols = []
    for c in full["columns"]:
        cols.append({**{k: c[k] for k in COLUMN_FIELDS}, **{k: v for k, v in c.items() if k not in COLUMN_FIELDS}})
    return {"database": full["database"], "schema": full["schema"], "name": full["name"],
            "columns": cols, "primary_key": full["primary_key"],
            "default_character_set_name": full["default_character_set_name"],
            "default_collation_name": full["default_collation_name"], "comment": full["comment"],
            **{k: v for k, v in full.items() if k not in (
                "database", "schema", "name", "columns", "primary_key",
                "default_character_set_name", "default_collation_name", "comment")}}


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


def render_tables(console: Console, tables: Iterable[Table]) -> None:
    """A readable terminal rendering: one rich table per table."""
    for t in tables:
        rt = RichTable(title=f"{t.id}", title_justify="left", show_lines=False)
        for head in ("#", "column", "type", "null", "default", "charset / collation", "extra", "comment"):
            rt.add_column(head)
        pk = {c.lower() for c in t.primary_key}
        for c in t.columns:
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
            cs = f"{c.character_set_name} / {c.collation_name}" if c.character_set_name else ""
            rt.add_row(str(c.ordinal_position), c.name, c.column_type, "yes" if c.nullable else "no",
                       _yn(c.column_default), cs, ", ".join(extra), c.comment or "")
        console.print(rt)
        facts = [f"primary key ({', '.join(t.primary_key)})" if t.primary_key else "no primary key"]
        if t.default_character_set_name:
            facts.append(f"charset {t.default_character_set_name} / {t.default_collation_name}")
        for k, v in t.options:
            facts.append(f"{k.lower()}={v}")
        if t.comment:
            facts.append(f"comment {t.comment!r}")
        console.print("  " + "; ".join(facts), style="dim")


_MAGIC = ((b"\x1f\x8b", "gzip data: decompress it first"),
          (b"PK\x03\x04", "a zip archive"),
          (b"\xff\xfe\x00\x00", "UTF-32 text (little endian BOM): use --encoding utf-32"),
          (b"\x00\x00\xfe\xff", "UTF-32 text (big endian BOM): use --encoding utf-32"),
          (b"\xff\xfe", "UTF-16 text (little endian BOM): use --encoding utf-16"),
          (b"\xfe\xff", "UTF-16 text (big endian BOM): use --encoding utf-16"))


def read_text_file(path: Path, encoding: str = "utf-8") -> str:
    """The text of a DDL file in ``encoding``.  Raises ``ValueError`` naming the file and the
    byte offset for what is not text in that encoding: gzip or zip data, a UTF-16/32 byte-order
    mark under another encoding, a NUL byte (binary data), bytes invalid in the encoding.  A
    UTF-8 byte-order mark is dropped."""
    data = path.read_bytes()
    utf16or32 = encoding.lower().replace("_", "-").startswith(("utf-16", "utf16", "utf-32", "utf32"))
    for magic, what in _MAGIC:
        if data.startswith(magic) and not (utf16or32 and "UTF-" in what):
            raise ValueError(f"{path}: byte 0: {what}, not DDL text")
    if not utf16or32:
        nul = data.find(b"\x00")
        if nul >= 0:
            raise ValueError(f"{path}: byte {nul}: a NUL byte: binary data, not DDL text in {encoding}")
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: byte {exc.start}: not valid {encoding} ({exc.reason}); "
                         f"give the file's encoding with --encoding") from None
    return text[1:] if text.startswith("\ufeff") else text


def _parse_options(pairs: Iterable[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for p in pairs:
        if "=" not in p:
            raise click.BadParameter(f"{p!r}: expected NAME=VALUE")
        k, v = p.split("=", 1)
        low = v.lower()
        out[k.strip()] = (True if low == "true" else False if low == "false"
                          else int(v) if v.lstrip("-").isdigit() else v)
    return out


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ddlcore")
def main() -> None:
    """ddlcore: DDL in a change log → a versioned table model → typed rows."""


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
@click.option("--dialect", "dialect_name", required=True, help="dialect name (see `ddlcore dialects`)")
@click.option("--lenient", is_flag=True, help="record unparsable statements and go on")
@click.option("--format", "fmt", type=click.Choice(["json", "table"]), default="json", show_default=True)
@click.option("--database", default=None, help="current database before the first statement")
@click.option("--option", "-o", "options", multiple=True, metavar="NAME=VALUE",
              help="dialect parser option, e.g. -o flavor=mysql")
@click.option("--encoding", default="utf-8", show_default=True,
              help="the files' text encoding (a Python codec name)")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
def parse_cmd(dialect_name: str, lenient: bool, fmt: str, database: str | None,
              options: tuple[str, ...], encoding: str, files: tuple[Path, ...]) -> None:
    """Parse DDL FILEs in order and print the resulting table model.

    Unparsable statements stop with exit status 1 and the error (line, column, what was
    expected), or with --lenient are listed on stderr and skipped.  A file that is not text in
    ENCODING (binary data, gzip, UTF-16 without --encoding utf-16, invalid bytes) stops with
    exit status 1 naming the file and the byte offset, before anything is printed."""
    err = Console(stderr=True)
    try:
        dialect = get_dialect(dialect_name)
        parser = dialect.parser(**_parse_options(options))
    except (DdlCoreError, TypeError) as exc:
        raise click.UsageError(str(exc)) from None
    try:
        import codecs
        codecs.lookup(encoding)
    except LookupError:
        raise click.UsageError(f"--encoding {encoding}: no such codec") from None
    texts = []
    for path in files:  # every file is read before anything is parsed or printed
        try:
            texts.append((path, read_text_file(path, encoding)))
        except ValueError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)
    tables = parser.new_tables()
    if database:
        tables.current_database = database
    failed = 0
    for path, text in texts:
        try:
            result = parser.parse(text, tables, lenient=lenient)
        except DdlParseError as exc:
            err.print(f"[bold red]error[/] {path}:{exc}", highlight=False, markup=True)
            sys.exit(1)
        for s in result.statements:
            if s.error is not None:
                failed += 1
                err.print(f"[yellow]skipped unparsable statement[/] {path}:{s.error}", highlight=False)
    if fmt == "json":
        click.echo(json.dumps(model_json(tables), indent=2, ensure_ascii=False))
    else:
        render_tables(Console(), tables)
    if failed:
        err.print(f"{failed} statement(s) could not be parsed (--lenient)")


from .history_cli import history; main.add_command(history)  # noqa: E402,E702
from .run_cli import run_cmd; main.add_command(run_cmd)  # noqa: E402,E702
from .tables_cli import tables_cmd; main.add_command(tables_cmd)  # noqa: E402,E702


class _CaptureGroup(click.Group):
    """``ddlcore capture``: its commands come from plugins (hook ``ddlcore_capture_commands``),
    loaded when the group is listed or invoked."""

    def _plugin_commands(self) -> dict[str, click.Command]:
        from .plugins import capture_commands
        return {**capture_commands(), **self.commands}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self._plugin_commands())

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return self._plugin_commands().get(name)


@main.group("capture", cls=_CaptureGroup)
def capture_group() -> None:
    """Capture a database's change stream into a change log (sources come from plugins,
    e.g. `ddlcore capture mysql`)."""


if __name__ == "__main__":  # pragma: no cover
    main()
