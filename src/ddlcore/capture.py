"""What every capture needs, written once: the output directory's lock, its change log with
byte-exact checkpoints, the capture's own schema history, table filters, progress on the
terminal, and signal handling.

Owns: the files of a capture's output directory ``DIR`` and how they stay consistent::

    changelog.jsonl     the change log (``ddlcore.changelog``), seq 1, 2, 3, ... without gaps
    checkpoint.json     the capture's checkpoint (its fields are the capture's own; written
                        atomically by ``write_json_atomic`` after the change log is flushed)
    history.sqlite      the schema history of the DDL events written (``CaptureHistory``)
    capture.log         warnings, one per line with a UTC time (``WarningLog``)
    capture.lock        held (``flock``) while a capture runs (``DirectoryLock``)

Must not know: any source (binlog, WAL, Kafka), any dialect by name (the dialect is a
parameter), Spark.  Used by the TiDB capture (``ddlcore_mysql.tidb_capture``) and, for the
lock, filters, history and progress, by the MySQL capture (``ddlcore_mysql.capture``).

The contract a capture keeps with ``ChangeLogOutput``: call ``emit`` for every event, call
``commit(position_state)`` at every source transaction boundary, and ``checkpoint`` (or let
``commit`` do it every ``interval`` seconds) — a checkpoint covers exactly the events up to the
last ``commit``, and the file is flushed and fsync'ed before the checkpoint names its length.
``open`` on a restart truncates the change log to the checkpointed length, so the events after
the checkpoint are produced again, with the same seq.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from .changelog import ChangeEvent, ChangeLogWriter
from .errors import DdlCoreError
from .model import Table, TableId

__all__ = ["CaptureError", "CaptureStats", "DirectoryLock", "ChangeLogOutput", "CaptureHistory", "CaptureFilter",
           "Progress", "WarningLog", "write_json_atomic", "remove_history", "install_signal_handlers",
           "CHANGELOG_NAME", "CHECKPOINT_NAME", "HISTORY_NAME", "LOG_NAME", "LOCK_NAME"]

CHANGELOG_NAME = "changelog.jsonl"
CHECKPOINT_NAME = "checkpoint.json"
HISTORY_NAME = "history.sqlite"
LOG_NAME = "capture.log"
LOCK_NAME = "capture.lock"


class CaptureError(DdlCoreError):
    """A capture cannot start or go on: a source not set up for it, an output directory that
    is not a capture's, a checkpoint that does not match the files, a message it cannot read."""


@dataclass
class CaptureStats:
    """What one capture run did, the part every capture has: ``ops`` events written by op,
    ``transactions`` source transactions completed, ``ddl_failed`` DDL events the history
    could not parse (written all the same), ``checkpoints`` written, ``first_seq`` /
    ``last_seq`` written, ``position`` of the last event, ``resumed_from`` the checkpoint's
    position, ``lag_seconds`` now minus the last event's commit time, ``seconds`` the run's
    length, ``warnings`` every warning as text.  A capture subclasses it with its own counts
    and extends ``to_json``."""

    ops: Counter = field(default_factory=Counter)
    transactions: int = 0
    ddl_failed: int = 0
    checkpoints: int = 0
    first_seq: int | None = None
    last_seq: int = 0
    position: str | None = None
    resumed_from: str | None = None
    lag_seconds: float | None = None
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    @property
    def events(self) -> int:
        return sum(self.ops.values())

    def to_json(self) -> dict[str, Any]:
        return {"events": self.events, "ops": dict(self.ops), "transactions": self.transactions,
                "ddl_failed": self.ddl_failed, "checkpoints": self.checkpoints, "first_seq": self.first_seq,
                "last_seq": self.last_seq, "position": self.position, "resumed_from": self.resumed_from,
                "lag_seconds": self.lag_seconds, "seconds": round(self.seconds, 3),
                "warnings": list(self.warnings)}


# ============================================================================ files


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    """Replace ``path`` with ``data`` as indented JSON, atomically: write ``path.tmp``, fsync
    it, rename it over ``path``, fsync the directory.  A crash leaves the old or the new file,
    never a mix."""
    payload = json.dumps(data, indent=2, ensure_ascii=False).encode("utf-8") + b"\n"
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, payload)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    dfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def remove_history(path: Path) -> None:
    """Remove a SQLite history file and its ``-wal`` / ``-shm`` / ``-journal`` companions."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(str(path) + suffix)
        except FileNotFoundError:
            pass


class DirectoryLock:
    """An exclusive ``flock`` on ``DIR/capture.lock`` for the length of a run: two captures
    writing one change log would corrupt it.  The kernel drops the lock when the process
    dies, however it dies.  ``error``: the exception class raised when the lock is held
    (``CaptureError`` or a subclass)."""

    def __init__(self, path: Path, error: type[Exception] = CaptureError):
        self.path = path
        self.error = error
        self._fd: int | None = None

    def __enter__(self) -> "DirectoryLock":
        import fcntl

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise self.error(f"another capture is running on {self.path.parent} ({self.path} is locked)") from None
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing releases the lock
            self._fd = None


class WarningLog:
    """Appends warnings to ``DIR/capture.log`` (one line each, UTC time first), keeps them in
    ``warnings`` and passes each to ``on_warning``."""

    def __init__(self, path: Path, on_warning: Callable[[str], None] | None = None):
        self.path = path
        self.on_warning = on_warning
        self.warnings: list[str] = []

    def __call__(self, text: str) -> None:
        self.warnings.append(text)
        try:
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(time.strftime("%Y-%m-%dT%H:%M:%SZ ", time.gmtime()) + text + "\n")
        except OSError:
            pass
        if self.on_warning is not None:
            self.on_warning(text)


class ChangeLogOutput:
    """``DIR/changelog.jsonl`` as a capture writes it: seq numbering without gaps, the byte
    length that a checkpoint names, truncation back to a checkpoint.

    * ``open(seq, nbytes)``: continue after a checkpoint (``seq`` last committed seq, ``nbytes``
      the change log's length then; anything after it is cut), or ``open(0, 0)`` to start an
      empty log.  Raises ``CaptureError`` when the file is shorter than the checkpoint says.
    * ``emit(op, position, ts, ...)``: write one event with the next seq; returns it.
    * ``mark()``: ``(seq, nbytes)`` of everything written so far (call at a transaction
      boundary; the pair goes into the checkpoint).
    * ``sync()``: flush and fsync, so that a checkpoint written next covers bytes on disk.
    * ``close(seq, nbytes)``: close and cut the file back to the last checkpoint (events of a
      transaction whose end was not read)."""

    def __init__(self, path: Path):
        self.path = path
        self.seq = 0
        self._bytes = 0
        self._writer: ChangeLogWriter | None = None
        self._file: Any = None

    def open(self, seq: int, nbytes: int) -> None:
        path = self.path
        size = path.stat().st_size if path.exists() else 0
        if size < nbytes:
            raise CaptureError(f"{path} holds {size} bytes but the checkpoint covers {nbytes}: "
                               f"the change log was truncated or replaced")
        if size > nbytes or not path.exists():
            with open(path, "ab") as fh:
                fh.truncate(nbytes)
        self.seq, self._bytes = seq, nbytes
        self._writer = ChangeLogWriter(path, last_seq=seq or None)
        # an uncompressed log: its length is the buffered file's position (appending), so an
        # event is serialised once; a gzip log counts the bytes of each line instead
        fh = getattr(self._writer, "_fh", None)
        self._file = fh if fh is not None and fh is getattr(self._writer, "_raw", None) else None

    def emit(self, op: str, position: str, ts: int | None, database: str | None = None,
             table: str | None = None, ddl: str | None = None, before: list | None = None,
             after: list | None = None, **extra: Any) -> ChangeEvent:
        """Write one event (``before`` / ``after`` already encoded, ``ddlcore.raw.encode_row``;
        ``extra``: the contract's optional fields ``tx``, ``row``, ``quarantine``, ``source``,
        ...)."""
        assert self._writer is not None, "ChangeLogOutput.open() first"
        ev = ChangeEvent(self.seq + 1, position, ts, op, database, table, ddl, before, after, **extra)
        self._writer.write(ev)
        self.seq = ev.seq
        if self._file is None:
            self._bytes += len(ev.to_line().encode("utf-8")) + 1
        return ev

    @property
    def opened(self) -> bool:
        """``open`` was called and ``close`` not yet."""
        return self._writer is not None

    def mark(self) -> tuple[int, int]:
        if self._file is not None:
            self._bytes = self._file.tell()
        return self.seq, self._bytes

    def sync(self) -> None:
        """Flush and fsync (``ChangeLogWriter.flush``)."""
        if self._writer is not None:
            self._writer.flush()

    def close(self, seq: int | None = None, nbytes: int | None = None) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if nbytes is not None and self.path.exists() and self.path.stat().st_size > nbytes:
            os.truncate(self.path, nbytes)
            self.seq, self._bytes = int(seq or 0), nbytes


# ============================================================================ history, filters


class CaptureHistory:
    """The capture's schema history (``ddlcore.history.SchemaHistory`` in ``history.sqlite``)
    for ``dialect`` with ``parser_options``: ``record`` every DDL / source event written,
    ``table_at`` for drift checks.  Lenient: DDL it cannot parse is recorded as failed and
    reported, never stops the capture.

    When the history (or the dialect's parser) cannot be loaded, it degrades to recording
    nothing; ``unavailable`` says why and drift checks are off."""

    def __init__(self, path: Path, parser_options: dict[str, Any] | None = None, dialect: str = "mysql"):
        self.unavailable: str | None = None
        self._h: Any = None
        try:
            from .history import SchemaHistory

            self._h = SchemaHistory.open(path, dialect=dialect, options=parser_options, lenient=True)
        except Exception as exc:  # history module or parser not installed: capture still works
            self.unavailable = f"{type(exc).__name__}: {exc}"

    @property
    def available(self) -> bool:
        return self._h is not None

    def record(self, event: ChangeEvent) -> list[str]:
        """Record one ``ddl`` or ``source`` event; returns the history's problems with it as
        text (empty: none): a DDL it could not parse ("history could not parse ..."), drift
        between a DDL's text and the catalog description it carries ("... drift: ..."), or an
        error of the history itself (the event stays in the change log either way)."""
        if self._h is None:
            return []
        try:
            result = self._h.record(event.to_json())
        except Exception as exc:  # noqa: BLE001 - a history problem must not lose the event
            return [f"schema history could not record seq {event.seq} ({event.position}): "
                    f"{type(exc).__name__}: {exc}"]
        out = []
        if result.status == "failed":
            err = result.error or {}
            out.append(f"history could not parse DDL at seq {event.seq} ({event.position}): "
                       f"{err.get('message') if isinstance(err, dict) else err}")
        out += [f"seq {event.seq} ({event.position}): {w}" for w in getattr(result, "warnings", ())
                if str(w).startswith("drift: ")]
        return out

    def table_at(self, table_id: TableId, seq: int) -> Table | None:
        return None if self._h is None else self._h.table_at(table_id, seq)

    def close(self) -> None:
        if self._h is not None:
            self._h.close()
            self._h = None


class CaptureFilter:
    """Which tables' rows are captured: ``include`` patterns (none: every table outside
    ``system_databases`` / ``system_schemas``) minus ``exclude`` patterns.  Patterns as
    ``ddlcore.history.filters`` (``db.table``, ``db.*``, ``db.prefix%``, ``%.table``; with a
    schema, ``schema.table``), whose ``TableFilter`` this reuses.  ``system_databases`` are
    compared case-insensitively (MySQL database names), ``system_schemas`` exactly
    (PostgreSQL schema names)."""

    def __init__(self, include: Iterable[str] = (), exclude: Iterable[str] = (), *,
                 case_sensitive: bool = True, system_databases: Iterable[str] = (),
                 system_schemas: Iterable[str] = ()):
        from .history.filters import TableFilter

        self.include = TableFilter(list(include), case_sensitive=case_sensitive)
        self.exclude = TableFilter(list(exclude), case_sensitive=case_sensitive)
        self.system_databases = frozenset(d.lower() for d in system_databases)
        self.system_schemas = frozenset(system_schemas)
        self._cache: dict[tuple[str | None, str | None, str], bool] = {}

    def captures(self, database: str | None, table: str, schema: str | None = None) -> bool:
        """Whether rows of ``database``[.``schema``].``table`` are captured (cached)."""
        key = (database, schema, table)
        hit = self._cache.get(key)
        if hit is None:
            tid = TableId(database, schema, table)
            if self.include:
                hit = self.include.matches(tid)
            elif schema is not None:
                hit = schema not in self.system_schemas
            else:
                hit = (database or "").lower() not in self.system_databases
            if hit and self.exclude and self.exclude.matches(tid):
                hit = False
            if len(self._cache) > 100_000:
                self._cache.clear()
            self._cache[key] = hit
        return hit


# ============================================================================ progress, signals


class Progress:
    """Events/s and lag on stderr (rich ``Live``) when stderr is a terminal.  ``update`` reads
    ``stats.events``, ``stats.lag_seconds`` (or ``None``), ``stats.last_seq`` and
    ``stats.position``."""

    def __init__(self, enabled: bool):
        from rich.console import Console

        self.console = Console(stderr=True)
        self.enabled = enabled and self.console.is_terminal
        self._live: Any = None
        self._last = time.monotonic()
        self._last_events = 0
        self.rate = 0.0

    def start(self) -> None:
        if self.enabled:
            from rich.live import Live

            self._live = Live("", console=self.console, refresh_per_second=4, transient=True)
            self._live.start()

    def update(self, stats: Any, phase: str, force: bool = False) -> None:
        now = time.monotonic()
        dt = now - self._last
        if dt < 0.25 and not force:
            return
        events = stats.events
        if dt > 0:
            self.rate = (events - self._last_events) / dt
        self._last, self._last_events = now, events
        if self._live is not None:
            from rich.text import Text

            lag = "-" if stats.lag_seconds is None else f"{stats.lag_seconds:,.1f} s"
            self._live.update(Text.assemble(
                (f"{phase} ", "bold cyan"), f"{events:,} events  ", (f"{self.rate:,.0f} ev/s", "green"),
                f"  lag {lag}  seq {stats.last_seq}  at {stats.position or '-'}"))

    def print(self, *args: Any, **kw: Any) -> None:
        self.console.print(*args, **kw)

    def stop(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None


def install_signal_handlers(stop: Callable[[], None], stopping: Callable[[], bool]) -> Callable[[], None]:
    """SIGTERM / SIGINT → ``stop()`` (a capture then ends at its next event with a checkpoint
    of the last committed transaction); a second signal while ``stopping()`` raises
    ``KeyboardInterrupt``.  Returns a function restoring the previous handlers."""
    previous = {}

    def handler(signum: int, frame: Any) -> None:
        if stopping():
            raise KeyboardInterrupt
        stop()

    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            previous[sig] = signal.signal(sig, handler)
        except ValueError:  # not the main thread
            pass

    def restore() -> None:
        for sig, h in previous.items():
            signal.signal(sig, h)

    return restore
