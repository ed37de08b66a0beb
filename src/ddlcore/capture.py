"""What every capture needs, written once: the capture object's face (``Capture``), the output
directory's lock, its change log with byte-exact checkpoints and the run's counts, the
capture's own schema history, table filters, reconnecting with backoff, warnings, progress on
the terminal, signal handling and the end of a capture command.

Owns: the files of a capture's output directory ``DIR`` and how they stay consistent::

    changelog.jsonl     the change log (``ddlcore.changelog``), seq 1, 2, 3, ... without gaps
    checkpoint.json     the capture's checkpoint (its fields are the capture's own; written
                        atomically by ``write_json_atomic`` after the change log is flushed)
    history.sqlite      the schema history of the DDL events written (``CaptureHistory``)
    capture.log         warnings, one per line with a UTC time (``WarningLog``)
    capture.lock        held (``flock``) while a capture runs (``DirectoryLock``)

Must not know: any source (binlog, WAL, Kafka), any dialect by name (the dialect is a
parameter), Spark.  Used by all three captures: MySQL (``ddlcore_mysql.capture``), TiDB
(``ddlcore_mysql.tidb_capture``) and PostgreSQL (``ddlcore_postgres.capture``); what stays in
a capture is reading its source and its checkpoint's position fields.

The contract a capture keeps with ``ChangeLogOutput``: ``resume(checkpoint)`` or
``start(checkpoint)``, then ``emit`` every event, ``commit(checkpoint at the position after
it)`` at every source transaction boundary, ``checkpoint()`` when the source is idle (or let
``commit`` do it every ``interval`` seconds), ``rewind()`` after a lost connection, ``finish()``
at the end — a checkpoint covers exactly the events up to its ``commit``, the file is flushed
and fsync'ed before the checkpoint names its length, and the source hears of a checkpoint
(``on_checkpoint``) only after it is saved.  A restart cuts the change log to the checkpointed
length, so the events after the checkpoint are produced again, with the same seq.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterable, Protocol

from .changelog import ChangeEvent, ChangeLogWriter, event_line
from .errors import CaptureError, DdlCoreError, one_line
from .gcpause import gc_paused
from .model import Table, TableId

__all__ = ["Capture", "CaptureError", "CaptureStats", "DirectoryLock", "ChangeLogOutput", "CaptureHistory", "CaptureFilter",
           "CheckpointFile", "CheckpointState", "Progress", "WarningLog", "write_json_atomic", "remove_history",
           "install_signal_handlers", "run_capture_command", "shorten", "distribution_version",
           "warning_printer", "gc_paused", "CHANGELOG_NAME", "CHECKPOINT_NAME", "HISTORY_NAME", "LOG_NAME",
           "LOCK_NAME", "CheckpointBound", "read_checkpoint_bound"]

CHANGELOG_NAME = "changelog.jsonl"
CHECKPOINT_NAME = "checkpoint.json"
HISTORY_NAME = "history.sqlite"
LOG_NAME = "capture.log"
LOCK_NAME = "capture.lock"


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

    def summary(self) -> str:
        """``captured N events (op n, ...) in S s (R/s); seq Q`` — the line every capture
        command prints at the end, before its own position."""
        ops = ", ".join(f"{k} {v:,}" for k, v in sorted(self.ops.items())) or "none"
        rate = self.events / self.seconds if self.seconds > 0 else 0.0
        return f"captured {self.events:,} events ({ops}) in {self.seconds:.1f} s ({rate:,.0f}/s); seq {self.last_seq}"

    def to_json(self) -> dict[str, Any]:
        return {"events": self.events, "ops": dict(self.ops), "transactions": self.transactions,
                "ddl_failed": self.ddl_failed, "checkpoints": self.checkpoints, "first_seq": self.first_seq,
                "last_seq": self.last_seq, "position": self.position, "resumed_from": self.resumed_from,
                "lag_seconds": self.lag_seconds, "seconds": round(self.seconds, 3),
                "warnings": list(self.warnings)}


# ============================================================================ files


def shorten(text: str, n: int = 200) -> str:
    """``text`` with its white space runs made single spaces, cut to at most ``n`` characters
    (ending in ``...`` when cut): a statement quoted in a warning."""
    t = " ".join(text.split())
    return t if len(t) <= n else t[:n - 3] + "..."


def distribution_version(name: str) -> str | None:
    """The installed version of the distribution ``name`` (e.g. ``"ddlcore-mysql"``: the
    capture's version in its source events), ``None`` in a source tree that is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:  # pragma: no cover - a source tree without install
        return None


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
    dies, however it dies; a run that ends removes the file (while still holding the lock),
    so that a finished or failed run leaves none behind.  ``error``: the exception class
    raised when the lock is held (``CaptureError`` or a subclass).

    Removing a lock file is safe only if a locker checks that the file it locked is still the
    one at ``path`` (another run may have opened it just before it was removed): ``__enter__``
    compares the locked descriptor's inode with the path's and tries again when they differ."""

    def __init__(self, path: Path, error: type[Exception] = CaptureError):
        self.path = path
        self.error = error
        self._fd: int | None = None

    def __enter__(self) -> "DirectoryLock":
        import fcntl

        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise self.error(f"another capture is running on {self.path.parent} ({self.path} is locked)") from None
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                self._fd = fd
                return self
            os.close(fd)  # removed by the run that held it: lock the new file

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            try:
                os.unlink(self.path)  # still locked: nobody can have taken it in between
            except FileNotFoundError:
                pass
            os.close(self._fd)  # closing releases the lock
            self._fd = None


class WarningLog:
    """Appends warnings to ``DIR/capture.log`` (one line each, UTC time first), keeps them in
    ``warnings`` (the list given, e.g. ``CaptureStats.warnings``, or a new one) and passes
    each to ``on_warning`` — or, without one, prints it on ``progress``'s console once a run
    sets ``progress`` (``Progress``)."""

    def __init__(self, path: Path, on_warning: Callable[[str], None] | None = None, *,
                 warnings: list[str] | None = None):
        self.path = path
        self.on_warning = on_warning
        self.warnings: list[str] = [] if warnings is None else warnings
        self.progress: Progress | None = None

    def __call__(self, text: str) -> None:
        self.warnings.append(text)
        try:
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(time.strftime("%Y-%m-%dT%H:%M:%SZ ", time.gmtime()) + text + "\n")
        except OSError:
            pass
        if self.on_warning is not None:
            self.on_warning(text)
        elif self.progress is not None:
            from rich.markup import escape

            self.progress.print(f"[yellow]warning[/] {escape(text)}", highlight=False)


@dataclass(frozen=True)
class CheckpointBound:
    """What a reader of a capture's output directory takes from its ``CHECKPOINT_NAME`` file
    (the fields every capture's checkpoint has: ``CheckpointState``): ``seq``, the last
    checkpointed seq; ``changelog_bytes``, the length of ``changelog`` (``CHANGELOG_NAME``)
    that the checkpoint covers; ``phase`` (``streaming``, or ``snapshot`` while the first run's
    snapshot is in progress: a restart starts it over, so nothing of the log is final)."""

    seq: int
    changelog_bytes: int
    phase: str
    changelog: Path


def read_checkpoint_bound(directory: Path) -> CheckpointBound | None:
    """The ``CheckpointBound`` of the capture whose output is ``directory`` (its
    ``CHANGELOG_NAME`` and ``CHECKPOINT_NAME`` files both present), or ``None`` when it is not a
    capture's output (no such files, or a checkpoint without these fields)."""
    path, changelog = directory / CHECKPOINT_NAME, directory / CHANGELOG_NAME
    if not path.is_file() or not changelog.is_file():
        return None
    try:
        cp = json.loads(path.read_text(encoding="utf-8"))
        return CheckpointBound(int(cp["seq"]), int(cp["changelog_bytes"]), str(cp.get("phase", "streaming")),
                               changelog)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # not a capture's checkpoint


class CheckpointFile:
    """A capture's checkpoint as a file (a base of the capture's frozen checkpoint dataclass,
    which defines ``to_json`` / ``from_json``): ``save(path)`` replaces ``path`` atomically
    (``write_json_atomic``) with ``to_json()`` and the time as ``updated``; ``load(path)``
    reads it back (``None`` when there is no file; ``error`` — the capture's ``CaptureError``
    — naming the file when it cannot be read)."""

    error: ClassVar[type[Exception]] = CaptureError

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Any:
        raise NotImplementedError

    @classmethod
    def load(cls, path: Path) -> Any:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            return cls.from_json(json.loads(text))
        except (ValueError, KeyError, TypeError) as exc:
            raise cls.error(f"{path}: unreadable checkpoint ({exc})") from None
        except CaptureError as exc:  # from_json's own checks: another capture's, another format
            raise cls.error(f"{path}: {exc}") from None

    def save(self, path: Path) -> None:
        write_json_atomic(path, {**self.to_json(), "updated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})


class CheckpointState(Protocol):
    """What ``ChangeLogOutput`` needs of a capture's checkpoint value (a frozen dataclass;
    every other field — the source position: a binlog file and offset, an LSN, a commit_ts;
    the filters, the epoch — is the capture's own): ``seq`` (the last committed seq),
    ``changelog_bytes`` (the change log's length then), ``include`` / ``exclude`` (the
    filters it was made with), ``position`` (the source position as
    text, for reports), ``save(path)`` (atomically: ``CheckpointFile``).  An optional
    ``phase``: a checkpoint whose ``phase`` is not ``"streaming"`` (a first run's snapshot,
    which a restart starts over) is never cut back to by ``finish``."""

    seq: int
    changelog_bytes: int
    include: tuple[str, ...]
    exclude: tuple[str, ...]

    @property
    def position(self) -> str: ...

    def save(self, path: Path) -> None: ...


class ChangeLogOutput:
    """``DIR/changelog.jsonl`` as a capture writes it: seq numbering without gaps, the byte
    length that a checkpoint names, truncation back to a checkpoint, the run's counts
    (``CaptureStats``), the schema history of the DDL it writes, and checkpoints written only
    after the bytes they cover are on disk.

    The low-level calls:

    * ``open(seq, nbytes)``: continue after a checkpoint (``seq`` last committed seq, ``nbytes``
      the change log's length then; anything after it is cut), or ``open(0, 0)`` to start an
      empty log.  Raises ``error`` (``CaptureError``) when the file is shorter than the
      checkpoint says.
    * ``emit(op, position, ts, ...)``: write one event with the next seq; returns the seq.  Counts it
      in ``stats`` (``ops``, ``first_seq``, ``last_seq``, ``position``) and in ``written``;
      a ``ddl`` / ``source`` event is recorded in ``history`` (when set), its problems go to
      ``warn`` (a DDL the history could not parse also counts in ``stats.ddl_failed``), and
      ``schema_seq`` becomes its seq (a key for caches of what the history says).
    * ``mark()``: ``(seq, nbytes)`` of everything written so far.
    * ``sync()``: flush and fsync, so that a checkpoint written next covers bytes on disk.
    * ``close(seq, nbytes)``: close and cut the file back to ``nbytes`` (events of a
      transaction whose end was not read).

    The checkpoint protocol on top (``state``: the capture's ``CheckpointState`` naming the
    source position to resume from; ``seq`` and ``changelog_bytes`` are filled in here):

    * ``resume(state)``: go on after a loaded checkpoint (``open`` at it; ``stats.last_seq``
      and ``stats.resumed_from`` from it; its filters stay); ``check_new()`` then
      ``start(state)``: a first run — an empty change log (unless it holds data no checkpoint
      covers: ``error``), ``state`` (seq 0, 0 bytes) saved as the checkpoint.
    * ``commit(state)`` at every source transaction boundary: everything emitted so far is
      committed and ``state`` is pending; a checkpoint is written at a run's first commit and
      then when ``interval`` seconds passed since the last one.  Counts ``stats.transactions`` (``transaction=False``: a
      boundary that is not one, e.g. a redelivered message skipped).  Returns ``True`` when
      ``stop_after_events`` events were written this run (the checkpoint is written then).
    * ``checkpoint(state=None)``: (commit ``state`` and) write the pending checkpoint now:
      ``sync()``, then ``state.save(checkpoint_path)``, then ``on_checkpoint(state)`` — so a
      source told in ``on_checkpoint`` that the capture holds its data (a replication slot's
      confirmed position) is never told before that data is durable.
    * ``rewind()``: after a lost connection, checkpoint what is pending and cut the file back
      to the last checkpoint; writing goes on from there.  Returns that checkpoint.
      ``read_with_retry`` runs a capture's stream with it: reconnecting with backoff.
    * ``finish()``: at the end of a run, checkpoint what is pending, close, cut the file back
      to the last checkpoint (unless it is a snapshot's) and close ``history``.

    ``checkpointed``: the last checkpoint written (by ``resume`` / ``start`` at first; a capture
    may replace it with fields of its own changed — a new epoch or source event — before the
    next ``commit``, which builds on it); ``pending``: the checkpoint ``commit`` made, not
    written yet."""

    def __init__(self, path: Path, *, stats: CaptureStats | None = None,
                 warn: Callable[[str], None] | None = None, checkpoint_path: Path | None = None,
                 interval: float = 0.0, on_checkpoint: Callable[[Any], None] | None = None,
                 stop_after_events: int | None = None, error: type[Exception] = CaptureError):
        self.path = path
        self.stats = stats
        self.warn = warn
        self.checkpoint_path = checkpoint_path or path.with_name(CHECKPOINT_NAME)
        self.interval = interval
        self.on_checkpoint = on_checkpoint
        self.stop_after_events = stop_after_events
        self.error = error
        self.history: CaptureHistory | None = None
        self.checkpointed: Any = None
        self.pending: Any = None
        self.written = 0
        self.schema_seq = 0
        self.seq = 0
        self._bytes = 0
        #: ``time.monotonic()`` of the last checkpoint ``commit`` could count from; ``None``
        #: before the first (monotonic time starts at an arbitrary point — boot on Linux — so
        #: it is never compared with a constant)
        self._last_checkpoint: float | None = None
        self._writer: ChangeLogWriter | None = None
        self._file: Any = None

    def open(self, seq: int, nbytes: int) -> None:
        path = self.path
        size = path.stat().st_size if path.exists() else 0
        if size < nbytes:
            raise self.error(f"{path} holds {size} bytes but the checkpoint covers {nbytes}: "
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
             after: list | None = None, **extra: Any) -> int:
        """Write one event (``before`` / ``after`` already encoded, ``ddlcore.raw.encode_row``;
        ``extra``: the contract's optional fields ``schema``, ``tx``, ``row``, ``quarantine``,
        ``source``, ``catalog``, ...), count it (class docstring) and return its seq.  Row
        events are encoded without a ``ChangeEvent`` (``ddlcore.changelog.event_line``: the
        same bytes); a ``ddl`` / ``source`` event is one, for the history."""
        writer = self._writer
        assert writer is not None, "ChangeLogOutput.open() first"
        seq = self.seq + 1
        ev = None
        if op == "ddl" or op == "source":
            ev = ChangeEvent(seq, position, ts, op, database, table, ddl, before, after, **extra)
            line = ev.to_line().encode("utf-8")
        else:
            line = event_line(seq, position, ts, op, database, table, ddl, before, after, extra)
        writer.write_line(seq, line)
        self.seq = seq
        if self._file is None:
            self._bytes += len(line) + 1
        self.written += 1
        st = self.stats
        if st is not None:
            st.ops[op] += 1
            if st.first_seq is None:
                st.first_seq = seq
            st.last_seq, st.position = seq, position
        if ev is not None:
            self.schema_seq = seq
            if self.history is not None:
                for problem in self.history.record(ev):
                    if st is not None and problem.startswith(CaptureHistory.PARSE_FAILED):
                        st.ddl_failed += 1
                    if self.warn is not None:
                        self.warn(problem)
        return seq

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

    # -- checkpoints --------------------------------------------------------------------------

    def resume(self, state: Any, include: Iterable[str] = (), exclude: Iterable[str] = ()) -> None:
        """Continue after the checkpoint ``state`` (loaded from ``checkpoint_path``): the change
        log opened and cut back to it (``open``: ``error`` when it is shorter).  ``include`` /
        ``exclude``: the filters this run was given; the checkpoint's (``state.include`` /
        ``state.exclude``) stay in force, with a warning when they differ."""
        self.open(state.seq, state.changelog_bytes)
        self.checkpointed = state
        if self.stats is not None:
            self.stats.last_seq = state.seq
            self.stats.resumed_from = state.position
        include, exclude = tuple(include), tuple(exclude)
        if (include or exclude) and (include, exclude) != (tuple(state.include), tuple(state.exclude)) \
                and self.warn is not None:
            self.warn(f"resuming with the checkpoint's filters include={list(state.include)} "
                      f"exclude={list(state.exclude)} (the options given differ)")

    def check_new(self) -> None:
        """Before a first run writes anything (or removes a history): a change log with data
        but no checkpoint file is not a capture's output (or its checkpoint was removed) —
        ``error``, rather than overwrite it."""
        log = self.path
        if not self.checkpoint_path.exists() and log.exists() and log.stat().st_size > 0:
            raise self.error(f"{log} exists but {self.checkpoint_path} does not: not a capture's output "
                             f"directory (or its checkpoint was removed); refusing to overwrite")

    def start(self, state: Any) -> None:
        """A first run (or one starting over): an empty change log, and ``state`` — seq 0, 0
        bytes — saved as the checkpoint."""
        self.open(0, 0)
        state.save(self.checkpoint_path)
        self.checkpointed = state

    def _pend(self, state: Any) -> None:
        seq, nbytes = self.mark()
        self.pending = replace(state, seq=seq, changelog_bytes=nbytes)

    def commit(self, state: Any, *, transaction: bool = True) -> bool:
        """A source transaction ended; ``state`` says where the source goes on after it (class
        docstring).  Returns ``True`` when the run's ``stop_after_events`` is reached."""
        self._pend(state)
        if transaction and self.stats is not None:
            self.stats.transactions += 1
        last = self._last_checkpoint
        if last is None or time.monotonic() - last >= self.interval:
            self.checkpoint()
        if self.stop_after_events is not None and self.written >= self.stop_after_events:
            self.checkpoint()
            return True
        return False

    def checkpoint(self, state: Any = None) -> None:
        """Write the pending checkpoint (after committing ``state``, when given): the change
        log fsync'ed first, the checkpoint file next, ``on_checkpoint`` last."""
        if state is not None:
            self._pend(state)
        cp = self.pending
        if cp is None:
            return
        assert self.opened, "ChangeLogOutput.open() first"
        self.sync()
        cp.save(self.checkpoint_path)
        self.checkpointed, self.pending = cp, None
        self._last_checkpoint = time.monotonic()
        if self.stats is not None:
            self.stats.checkpoints += 1
        if self.on_checkpoint is not None:
            self.on_checkpoint(cp)

    def rewind(self) -> Any:
        """Checkpoint what is pending, cut the file back to the last checkpoint, and reopen it
        there (after a lost connection, before reading again from the checkpoint)."""
        self.checkpoint()
        cp = self.checkpointed
        assert cp is not None and self.opened
        self.close(cp.seq, cp.changelog_bytes)
        self.open(cp.seq, cp.changelog_bytes)
        if self.stats is not None:
            self.stats.last_seq = cp.seq
        return cp

    def read_with_retry(self, read: Callable[[Any], None], state: Any, *, lost: Callable[[BaseException], bool],
                        retry_for: float, wait_max: float, on_rewind: Callable[[], None] | None = None) -> None:
        """Run ``read(state)`` — a capture's stream from the checkpoint ``state`` — and when it
        raises what ``lost`` calls a lost connection or a restarting server (not a refusal):
        warn, wait (exponential backoff, tenacity: 0.2 s doubling up to ``wait_max`` seconds),
        ``rewind()`` to the last checkpoint, call ``on_rewind()`` (the capture forgets the
        transaction it was in and its connection, counts the reconnect) and ``read`` again from
        there; for up to ``retry_for`` seconds in all (0: no retry), then the exception is
        raised."""
        if retry_for <= 0:
            read(state)
            return
        from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_exponential

        def note(attempt: Any) -> None:
            exc = attempt.outcome.exception()
            cp = self.checkpointed
            if self.warn is not None:
                self.warn(f"connection to the source lost ({type(exc).__name__}: {str(exc).strip()}); reconnecting "
                          f"(attempt {attempt.attempt_number}, from {cp.position if cp is not None else '?'})")

        first = True
        for attempt in Retrying(stop=stop_after_delay(retry_for), wait=wait_exponential(multiplier=0.2, max=wait_max),
                                retry=retry_if_exception(lost), before_sleep=note, reraise=True):
            with attempt:
                if not first:
                    state = self.rewind()
                    if on_rewind is not None:
                        on_rewind()
                first = False
                read(state)

    def finish(self) -> None:
        """End of a run: checkpoint what is pending, close the file and cut it back to the last
        checkpoint (a transaction whose end was not read) unless that is a snapshot's; close
        ``history``."""
        try:
            if self.opened:
                self.checkpoint()
                cp = self.checkpointed
                if cp is not None and getattr(cp, "phase", "streaming") == "streaming":
                    self.close(cp.seq, cp.changelog_bytes)
                    if self.stats is not None:
                        self.stats.last_seq = self.seq
                else:
                    self.close()
        finally:
            if self.history is not None:
                self.history.close()
                self.history = None


# ============================================================================ the capture object


class Capture:
    """What every capture object is, apart from reading its source (``run_capture_command``
    drives it): a subclass passes its output directory, its ``CaptureStats`` and the
    ``ChangeLogOutput`` settings to ``__init__`` and implements ``_run()`` (returns the stats).

    * ``run()``: ``DIR`` made and locked (``DirectoryLock``) for the length of ``_run()``;
      ``stats.seconds`` timed.
    * ``stop()`` (another thread, a signal handler) / ``stopping``: ask the run to end at the
      next event, keeping the last checkpoint.
    * ``checkpoint``: the last checkpoint written (or loaded); ``changelog_path``,
      ``checkpoint_path``.
    * For the subclass: ``_log`` (``ChangeLogOutput``: the change log, counts, history,
      checkpoints), ``_warn`` (``WarningLog`` into ``stats.warnings``, ``on_warning``), ``_stop``
      (a ``threading.Event``).  ``error``: the capture's exception class (``CaptureError`` or a
      subclass), raised by the lock and the change log too."""

    error: ClassVar[type[Exception]] = CaptureError

    def __init__(self, out: Path | str, stats: CaptureStats, *, on_warning: Callable[[str], None] | None = None,
                 checkpoint_interval: float = 0.0, on_checkpoint: Callable[[Any], None] | None = None,
                 stop_after_events: int | None = None):
        import threading

        self.out = Path(out)
        self.stats = stats
        self._stop = threading.Event()
        #: warnings: capture.log, stats.warnings, on_warning (else the progress console)
        self._warn = WarningLog(self.out / LOG_NAME, on_warning, warnings=stats.warnings)
        #: the change log, its counts, the history and the checkpoints
        self._log = ChangeLogOutput(self.out / CHANGELOG_NAME, stats=stats, warn=self._warn,
                                    interval=checkpoint_interval, on_checkpoint=on_checkpoint,
                                    stop_after_events=stop_after_events, error=self.error)

    def stop(self) -> None:
        """Ask the run to end (thread- and signal-safe)."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        """``stop()`` was called."""
        return self._stop.is_set()

    @property
    def checkpoint(self) -> Any:
        """The last checkpoint written (or loaded)."""
        return self._log.checkpointed

    @property
    def changelog_path(self) -> Path:
        return self.out / CHANGELOG_NAME

    @property
    def checkpoint_path(self) -> Path:
        return self.out / CHECKPOINT_NAME

    def run(self) -> Any:
        t0 = time.monotonic()
        made = not self.out.exists()
        self.out.mkdir(parents=True, exist_ok=True)
        try:
            with DirectoryLock(self.out / LOCK_NAME, self.error):
                try:
                    return self._run()
                finally:
                    self.stats.seconds = time.monotonic() - t0
        finally:
            if made and not any(self.out.iterdir()):
                self.out.rmdir()  # a start that failed before writing anything leaves nothing

    def _run(self) -> Any:
        raise NotImplementedError


# ============================================================================ history, filters


class CaptureHistory:
    """The capture's schema history (``ddlcore.history.SchemaHistory`` in ``history.sqlite``)
    for ``dialect`` with ``parser_options``: ``record`` every DDL / source event written,
    ``table_at`` for drift checks.  Lenient: DDL it cannot parse is recorded as failed and
    reported, never stops the capture.

    When the history (or the dialect's parser) cannot be loaded, it degrades to recording
    nothing; ``unavailable`` says why and drift checks are off."""

    #: how ``record``'s text for a DDL the history could not parse begins
    PARSE_FAILED = "history could not parse"

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
            out.append(f"{self.PARSE_FAILED} DDL at seq {event.seq} ({event.position}): "
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


def warning_printer(console: Any) -> Callable[[str], None]:
    """The ``on_warning`` of a ``ddlcore capture ...`` command: each warning as one line
    ``warning <text>`` on ``console`` (rich, stderr), the text printed as it is (no markup)."""
    from rich.markup import escape

    return lambda text: console.print(f"[yellow]warning[/] {escape(text)}", highlight=False)


def run_capture_command(cap: Any, console: Any, *, as_json: bool, summary: Callable[[Any], str]) -> None:
    """The end of every ``ddlcore capture ...`` command: ``cap.run()`` with SIGINT / SIGTERM
    calling ``cap.stop()`` (``install_signal_handlers``; ``cap.stopping`` says a stop was
    asked); an error — ``CaptureError`` as its message, any other (a connection lost after the
    retries, a server error: the checkpoint is safe) with its type — raised as one line
    (``click.ClickException``: exit status 1); else ``summary(stats)`` on ``console`` and, ``as_json``,
    ``stats.to_json()`` on stdout."""
    import click

    restore = install_signal_handlers(cap.stop, lambda: cap.stopping)
    try:
        stats = cap.run()
    except CaptureError as exc:  # one line (errors.one_line): the root command prints it, exit status 1
        raise click.ClickException(one_line(str(exc))) from exc
    except Exception as exc:  # noqa: BLE001 - connection lost, server error: the checkpoint is safe
        raise click.ClickException(f"{type(exc).__name__}: {one_line(str(exc))}") from exc
    finally:
        restore()
    console.print(summary(stats), highlight=False)
    if as_json:
        click.echo(json.dumps(stats.to_json(), indent=2, ensure_ascii=False))
