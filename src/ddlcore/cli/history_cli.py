"""``ddlcore history …``: the schema history on the command line (click + rich).

Owns: the ``history`` command group — ``record``, ``show``, ``versions``, ``diff``,
``changes``, ``prune``, ``info`` — and reading DDL events from statement files and change logs.  Must
not know: any dialect by name.  Registered on ``ddlcore.cli.main`` at the bottom of
``ddlcore.cli.main``; shared helpers come from ``ddlcore.cli.common``.

Exit status: 0 success; 1 a statement failed (strict mode), an unknown table or version, a
store that cannot be used; 2 usage errors.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any, Iterator

import click
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from ..errors import one_line
from .common import (dialect_option, dialect_options, dialect_options_option, model_json, parse_error_line,
                     render_tables, resolve_dialect)

__all__ = ["history", "read_change_log", "is_change_log"]

def is_change_log(path: Path) -> bool:
    """Whether ``path`` is read as a change log rather than as a file of SQL statements: a
    directory, or a file named as one (``ddlcore.changelog.is_changelog_file``, ``named``)."""
    from ..changelog import is_changelog_file

    return path.is_dir() or is_changelog_file(path, named=True)


def read_change_log(path: Path) -> Iterator[dict[str, Any]]:
    """The events of a change log, in file order, as dicts with the change-log fields — read
    with ``ddlcore.changelog`` (JSON Lines, gzip, Parquet), or, for a ``.json`` file holding a
    JSON array, each element validated the same way.  A malformed DDL event raises
    ``click.ClickException`` (file, line, reason); a malformed row event is yielded as
    ``{"op": None, "bad": reason}`` (the history does not need rows)."""
    from ..changelog import BadEvent, iter_changelog, validate

    name = path.name.lower()
    if name.endswith((".json", ".json.gz")):
        opener: Any = gzip.open if name.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            head = f.read(4096).lstrip()
            if head.startswith("["):
                f.seek(0)
                data = json.load(f)
                for i, obj in enumerate(data if isinstance(data, list) else [data], 1):
                    try:
                        yield validate(obj).to_json()
                    except ValueError as exc:
                        if isinstance(obj, dict) and obj.get("op") == "ddl":
                            raise click.ClickException(f"{path}: event {i}: {exc}") from None
                        yield {"op": None, "bad": str(exc)}
                return
    for ev in iter_changelog(path):
        if isinstance(ev, BadEvent):
            try:
                op = json.loads(ev.text).get("op")
            except Exception:  # noqa: BLE001 - not even JSON: could have been anything
                op = "ddl"
            if op == "ddl":
                raise click.ClickException(f"{ev.source}:{ev.line}: {ev.reason}")
            yield {"op": None, "bad": ev.reason}
            continue
        yield ev.to_json()


def _open(store: Path, *, must_exist: bool = True, **kw: Any):
    from ..history import HistoryError, SchemaHistory
    import sqlite3

    if must_exist and not store.exists():
        raise click.ClickException(f"no schema history at {store}")
    try:
        return SchemaHistory.open(store, **kw)
    except (HistoryError, TypeError) as exc:
        raise click.UsageError(str(exc)) from None
    except sqlite3.DatabaseError as exc:
        raise click.ClickException(f"{store}: {exc}") from None


def _table_id(h, text: str, ids=None):
    """The id ``text`` names in the history ``h`` (``ddlcore.history.lookup.resolve_table_id``:
    the dialect's defaults, ``search_path``, case folding), among ``ids`` (default: every id
    the history has versions of); ``click.ClickException`` naming the closest ids."""
    from ..history.lookup import TableNotFound, resolve_table_id

    sp = h.options.get("search_path") or ()
    try:
        return resolve_table_id(text, h.all_table_ids() if ids is None else ids, fold=h.folds_table_names,
                                search_path=[sp] if isinstance(sp, str) else sp)
    except TableNotFound as exc:
        raise click.ClickException(str(exc)) from None


@click.group("history")
def history() -> None:
    """Schema history: every table version by log position (SQLite store)."""


# ------------------------------------------------------------------------------------ record


@history.command("record")
@dialect_option("dialect name (default: the one an existing store records, else the one the first change "
                "log's source event names, else the only installed one)")
@click.option("--store", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="the history's SQLite file (created if missing)")
@click.option("--database", default=None, help="current database before the first statement (SQL files)")
@click.option("--lenient", is_flag=True, help="record unparsable statements as failed and go on")
@click.option("--filter", "filters", multiple=True, metavar="PATTERN",
              help="version only matching tables: db.table, db.*, db.prefix%, %.table (repeatable)")
@dialect_options_option()
@click.option("--encoding", default="utf-8", show_default=True,
              help="the SQL files' text encoding (a Python codec name; change logs are UTF-8)")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
def record_cmd(dialect_name: str | None, store: Path, database: str | None, lenient: bool,
               filters: tuple[str, ...], options: tuple[str, ...], encoding: str, files: tuple[Path, ...]) -> None:
    """Record the DDL of FILEs, in order, into the history at --store.

    A file of SQL statements: every statement is an event — skipped ones included — so the
    N-th statement over all SQL files gets seq N (from 1) and position FILE:N.  A change log
    (docs/changelog.md "Files": *.jsonl, *.ndjson, *.json, each optionally .gz, *.parquet, or a
    directory of them): its op="ddl" events are recorded with their own seq, position, ts and
    database; row events are ignored.  Every file is checked before the store is opened (a
    binary, UTF-16, truncated gzip or non-change-log file stops with one line naming it), and a
    store this command created is removed again when nothing could be recorded into it.  Events
    already in the store are skipped, so recording again after an interruption continues where
    it stopped."""
    from ..errors import DdlParseError
    from ..history import HistoryError, StoreConflict

    err = Console(stderr=True, soft_wrap=True)
    existed = store.exists()
    inputs = _read_inputs(files, encoding)  # every file checked before the store is touched
    dialect = resolve_dialect(dialect_name or _stored_dialect(store) or _source_dialect(inputs))
    opts = dialect_options(dialect, options)
    h = _open(store, must_exist=False, dialect=dialect_name or (None if existed else dialect.name),
              options=opts or None,
              filters=list(filters) if filters else None, lenient=lenient)
    counts = {"applied": 0, "skipped": 0, "failed": 0, "known": 0, "versions": 0, "ignored": 0, "source": 0}

    def tally(ev) -> None:
        if not ev.recorded:
            counts["known"] += 1
            return
        counts[ev.status] += 1
        if ev.status == "failed":
            e = ev.error or {}
            err.print(f"[yellow]failed[/] {ev.position}: {e.get('reason')} "
                      f"(line {e.get('line')}, column {e.get('column')})", highlight=False)

    n = 0
    path: Path | None = None
    try:
        with h:
            try:
                for path, kind, text in inputs:
                    if kind != "sql":
                        for event in read_change_log(path):
                            if event.get("op") not in ("ddl", "source"):
                                counts["ignored"] += 1
                                continue
                            tally(h.record(event))
                        continue
                    for stmt in h.parser.split(text):
                        n += 1
                        first_db = database if n == 1 else None
                        tally(h.record({"seq": n, "position": f"{path}:{n}", "database": first_db,
                                        "ddl": stmt.text}, statement=stmt))
            except DdlParseError as exc:
                raise click.ClickException(f"{parse_error_line(path, exc)} (nothing recorded for this statement; "
                                           f"{_summary(counts)})") from None
            except (HistoryError, StoreConflict) as exc:
                raise click.ClickException(f"{path}: {one_line(str(exc))}") from None
            last = h.last_seq
    except BaseException:
        if not existed and not any(counts[k] for k in ("applied", "skipped", "failed", "source")):
            _remove_store(store)
        raise
    err.print(f"{_summary(counts)}; last seq {last}; store {store}", highlight=False)


def _read_inputs(files: tuple[Path, ...], encoding: str) -> list[tuple[Path, str, str]]:
    """``(path, kind, text)`` for every input of ``history record``: kind ``"sql"`` (``text``
    read with ``ddlcore.inputs.read_ddl_text``) or the change-log kind of each change-log file
    (``check_change_log_file``; a directory gives its change-log files).  Raises
    ``InputError`` for the first file that is not what its name says."""
    from ..changelog import changelog_files
    from ..inputs import check_change_log_file, read_ddl_text

    out: list[tuple[Path, str, str]] = []
    for path in files:
        if not is_change_log(path):
            out.append((path, "sql", read_ddl_text(path, encoding)))
            continue
        for f in changelog_files(path):
            out.append((f, check_change_log_file(f, allow_array=True), ""))
    return out


def _source_dialect(inputs: list[tuple[Path, str, str]]) -> str | None:
    """The dialect the first change log among ``inputs`` names in its first event, when that is
    a ``source`` event (docs/changelog.md "The source event")."""
    for path, kind, _ in inputs:
        if kind == "sql":
            return None
        for event in read_change_log(path):
            source = event.get("source") if event.get("op") == "source" else None
            if isinstance(source, str):
                source = json.loads(source)
            return source.get("dialect") if isinstance(source, dict) else None
    return None


def _stored_dialect(store: Path) -> str | None:
    """The dialect an existing store records (``None`` for a new one)."""
    if not store.exists():
        return None
    with _open(store) as h:
        return h.dialect_name


def _remove_store(store: Path) -> None:
    """Remove a store this command created (with SQLite's ``-wal`` / ``-shm`` side files)."""
    for p in (store, Path(f"{store}-wal"), Path(f"{store}-shm"), Path(f"{store}-journal")):
        p.unlink(missing_ok=True)


def _summary(c: dict[str, int]) -> str:
    s = f"recorded {c['applied'] + c['skipped'] + c['failed']} event(s): {c['applied']} applied, " \
        f"{c['skipped']} skipped, {c['failed']} failed; {c['known']} already recorded"
    if c["source"]:
        s += f"; {c['source']} source event(s)"
    if c["ignored"]:
        s += f"; {c['ignored']} row event(s) ignored"
    return s


# -------------------------------------------------------------------------------------- show


@history.command("show")
@click.option("--store", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--at", "at", type=int, default=None, help="the model just after event SEQ (default: the last)")
@click.option("--format", "fmt", type=click.Choice(["json", "table"]), default="json", show_default=True)
@click.option("--failed", is_flag=True, help="list the events recorded as failed (--lenient) instead")
@click.argument("table", required=False)
def show_cmd(store: Path, at: int | None, fmt: str, failed: bool, table: str | None) -> None:
    """Print the model in force just after event --at (every database; the `ddlcore parse`
    JSON shape), or one TABLE (db.table), or the failed events."""
    h = _open(store)
    with h:
        if failed:
            events = h.failed()
            if fmt == "json":
                click.echo(json.dumps([{"seq": e.seq, "position": e.position, "database": e.database,
                                        "ddl": e.ddl, "error": e.error} for e in events],
                                      indent=2, ensure_ascii=False))
                return
            rt = RichTable(title=f"failed events ({len(events)})", title_justify="left")
            for head in ("seq", "position", "error", "statement"):
                rt.add_column(head)
            for e in events:
                err = e.error or {}
                where = f"line {err.get('line')}, col {err.get('column')}: " if err.get("line") else ""
                rt.add_row(str(e.seq), e.position or "", where + str(err.get("reason", "")), _clip(e.ddl, 70))
            Console().print(rt)
            return
        last = h.last_seq
        if at is not None and last is not None and at > last:
            Console(stderr=True).print(f"note: seq {at} is after the last recorded seq {last}", highlight=False)
        tables = h.tables_at(at)
        if table is not None:
            where = f"after seq {at}" if at is not None else "at the end of the history"
            try:
                chosen: Any = [tables.get(_table_id(h, table, [t.id for t in tables]))]
            except click.ClickException as exc:
                raise click.ClickException(f"{exc.message} {where}") from None
        else:
            chosen = tables
        if fmt == "json":
            click.echo(json.dumps(model_json(chosen), indent=2, ensure_ascii=False))
        else:
            render_tables(Console(), chosen)


def _clip(text: str, n: int) -> str:
    t = " ".join(text.split())
    return t if len(t) <= n else t[: n - 1] + "…"


# ---------------------------------------------------------------------------------- versions


@history.command("versions")
@click.option("--store", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--format", "fmt", type=click.Choice(["json", "table"]), default="table", show_default=True)
@click.argument("table")
def versions_cmd(store: Path, fmt: str, table: str) -> None:
    """The timeline of TABLE: one row per version.  TABLE is the id's last parts (items,
    public.items, shop.public.items), resolved as the dialect resolves names."""
    with _open(store) as h:
        tid = _table_id(h, table)
        versions = h.versions(tid)
    table = str(tid)
    if fmt == "json":
        click.echo(json.dumps({"table_id": tid.to_json(), "versions": [v.to_json() for v in versions]},
                              indent=2, ensure_ascii=False))
        return
    rt = RichTable(title=f"{table}: {len(versions)} version(s)", title_justify="left")
    for head in ("v", "seq", "position", "change", "columns", "fingerprint", "ddl"):
        rt.add_column(head, overflow="fold")
    for v in versions:
        seqs = f"{v.valid_from_seq}–{v.valid_to_seq - 1}" if v.valid_to_seq is not None else f"{v.valid_from_seq}–"
        change = v.kind
        if v.previous_id is not None:
            change += f" from {v.previous_id}"
        if v.renamed_to is not None:
            change += f" to {v.renamed_to}"
        cols = "—" if v.table is None else str(len(v.table.columns))
        rt.add_row(str(v.version), seqs, v.position or "", change, cols,
                   (v.fingerprint or "")[:12], _clip(v.ddl, 60))
    Console().print(rt)


# -------------------------------------------------------------------------------------- diff


@history.command("diff")
@click.option("--store", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.argument("table")
@click.argument("v1", type=int)
@click.argument("v2", type=int)
def diff_cmd(store: Path, fmt: str, table: str, v1: int, v2: int) -> None:
    """What changed in TABLE from version V1 to version V2."""
    from ..history import HistoryError

    with _open(store) as h:
        try:
            d = h.diff(_table_id(h, table), v1, v2)
        except HistoryError as exc:
            raise click.ClickException(str(exc)) from None
    if fmt == "json":
        click.echo(json.dumps(d.to_json(), indent=2, ensure_ascii=False))
        return
    render_diff(Console(), table, d)


def render_diff(console: Console, table: str, d: Any) -> None:
    """A terminal rendering of a ``TableDiff``: one line per change, + added, - dropped,
    ~ changed."""
    console.print(Text(f"{table}: version {d.from_version} → {d.to_version}", style="bold"))
    lines: list[Text] = []

    def line(mark: str, style: str, text: str) -> None:
        lines.append(Text(f"  {mark} ", style=style) + Text(text))

    if d.before is None and d.after is not None:
        line("+", "green", "table exists (was absent)")
    if d.before is not None and d.after is None:
        line("-", "red", "table absent (dropped or renamed away)")
    for k, (a, b) in d.table.items():
        line("~", "yellow", f"table {k}: {a} → {b}")
    for c in d.added:
        line("+", "green", f"column {c.name} {c.column_type}" + ("" if c.nullable else " NOT NULL"))
    for c in d.dropped:
        line("-", "red", f"column {c.name} {c.column_type}")
    for old, new in d.renamed:
        line("~", "yellow", f"column {old} renamed to {new}")
    for c in d.retyped:
        parts = ", ".join(f"{k} {a!r} → {b!r}" for k, (a, b) in c.fields.items())
        line("~", "yellow", f"column {c.name} retyped: {parts}")
    for c in d.altered:
        parts = ", ".join(f"{k} {a!r} → {b!r}" for k, (a, b) in c.fields.items())
        line("~", "yellow", f"column {c.name}: {parts}")
    if d.moved:
        line("~", "yellow", f"moved: {', '.join(d.moved)}")
    if d.primary_key is not None:
        a, b = d.primary_key
        line("~", "yellow", f"primary key ({', '.join(a)}) → ({', '.join(b)})")
    for name in d.indexes_dropped:
        line("-", "red", f"index {name}")
    for name in d.indexes_added:
        line("+", "green", f"index {name}")
    for name in d.foreign_keys_dropped:
        line("-", "red", f"foreign key {name}")
    for name in d.foreign_keys_added:
        line("+", "green", f"foreign key {name}")
    if not lines:
        console.print("  no differences", style="dim")
    for t in lines:
        console.print(t)


# ----------------------------------------------------------------------------------- changes


@history.command("changes")
@click.option("--store", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--from", "start", type=int, default=None, help="first seq (inclusive)")
@click.option("--to", "stop", type=int, default=None, help="last seq (inclusive)")
@click.option("--all", "include_skipped", is_flag=True, help="include skipped (non-DDL) events")
def changes_cmd(store: Path, start: int | None, stop: int | None, include_skipped: bool) -> None:
    """The schema change events as JSON Lines: per DDL event its seq, position, ts, database,
    ddl, status and table changes (kind, table id, previous id, version, before, after)."""
    with _open(store) as h:
        for ev in h.schema_changes(start, stop, include_skipped=include_skipped):
            click.echo(json.dumps(ev.to_json(), ensure_ascii=False, separators=(",", ":")))


@history.command("prune")
@click.option("--store", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--before", type=int, required=True, help="forget what only seqs below SEQ need")
@click.option("--vacuum", is_flag=True, help="then give the freed space back (SQLite VACUUM)")
def prune_cmd(store: Path, before: int, vacuum: bool) -> None:
    """Forget the history before seq --before (retention): the model at every later seq is
    kept, earlier seqs can no longer be queried."""
    from ..history import HistoryError

    with _open(store) as h:
        try:
            deleted = h.prune(before)
        except HistoryError as exc:
            raise click.ClickException(str(exc)) from None
        if vacuum:
            h.store.vacuum()  # type: ignore[attr-defined]
    Console(stderr=True, soft_wrap=True).print(
        "deleted " + ", ".join(f"{n} {k}" for k, n in deleted.items()), highlight=False)


@history.command("info")
@click.option("--store", type=click.Path(dir_okay=False, path_type=Path), required=True)
def info_cmd(store: Path) -> None:
    """The history's dialect, options, filters, event count, last seq and table count (JSON)."""
    with _open(store) as h:
        info = h.info()
        info["pruned_before"] = h.pruned_before
    info["store_bytes"] = sum(p.stat().st_size for p in (store, Path(f"{store}-wal")) if p.exists())
    click.echo(json.dumps(info, indent=2, ensure_ascii=False))
