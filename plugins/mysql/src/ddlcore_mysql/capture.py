"""Capture a MySQL / MariaDB binlog into a ddlcore change log, as a replica.

Owns: the capture loop — an optional consistent snapshot (schema and rows), then the binlog
stream over the replication protocol (``pymysqlreplication``); turning query events into
``ddl`` events and row events into ``c``/``u``/``d`` events with raw values
(``binlog_values``); the capture's own schema history and drift checks (``drift``); the
binlog position of the checkpoint that makes a capture resumable without losing or repeating
an event.  The output directory, change-log writer, counts, checkpoint protocol, history,
filters, lock, warnings and progress are core's (``ddlcore.capture``).
Must not know: the converter, Spark, the grammar (DDL text goes to the history as is).

Output directory ``DIR``::

    changelog.jsonl     the change log (``ddlcore.changelog``), seq 1, 2, 3, ... without gaps
    checkpoint.json     last committed seq, binlog file and position of the next event to read,
                        byte length of changelog.jsonl that the checkpoint covers
    history.sqlite      the schema history of the DDL events written (``ddlcore.history``)
    capture.log         warnings (schema drift, DDL the history could not parse), appended
    xa-prepared/        events of XA transactions prepared, not yet committed (``ddlcore_mysql.xa``)

Checkpoints are written at transaction boundaries (XID event, ``COMMIT`` query, ``XA_prepare``
event, ``XA COMMIT`` / ``XA ROLLBACK`` query, a DDL or any statement outside a transaction),
after ``changelog.jsonl`` has been flushed and fsync'ed, by writing ``checkpoint.json.tmp``,
fsync, and renaming it over ``checkpoint.json``.  A restart
truncates ``changelog.jsonl`` to the checkpointed length and streams from the checkpointed
position: the events after the checkpoint are produced again, identically (seq included).
See docs/capture.md.

Python API::

    from ddlcore_mysql.capture import CaptureOptions, ConnectionSettings, MySqlCapture
    opts = CaptureOptions(ConnectionSettings(socket="/run/mysqld/mysqld.sock", user="cdc"),
                          server_id=4242, out="cdc-out", until_end=True)
    stats = MySqlCapture(opts).run()
"""

from __future__ import annotations

import logging
import re
import time
import uuid
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterable

from ddlcore import capture as _core
from ddlcore.capture import (HISTORY_NAME, CaptureHistory, CheckpointFile, Progress as _Progress,
                             distribution_version, remove_history as _remove_history,
                             shorten)
from ddlcore.changelog import SourceInfo, encode_value
from ddlcore.model import TableId

from .binlog_values import Tagged, canonical_fraction, raw_row_decoding
from .charsets import python_codec
from .dialect import STATEMENT_FILTER, strip_set_statement
from .drift import DriftWarning, binlog_columns, compare_table
from .replica_identity import is_same_server_id, same_server_id_message
from .xa import PreparedTransactions, XaStatement, parse_xa_statement, xid_text

__all__ = ["ConnectionSettings", "CaptureOptions", "CaptureStats", "Checkpoint", "CaptureError",
           "CaptureFilter", "CaptureHistory", "ServerInfo", "MySqlCapture", "capture",
           "parse_position", "SYSTEM_DATABASES", "SNAPSHOT_MODES"]

SYSTEM_DATABASES = frozenset({"mysql", "information_schema", "performance_schema", "sys"})
SNAPSHOT_MODES = ("initial", "schema_only", "never")
#: what statement-format DML on a captured table does: stop the capture (default), or write a
#: ``stmt`` event that the pipeline quarantines
STATEMENT_DML_MODES = ("stop", "quarantine")
CHECKPOINT_FORMAT = 1
#: ``sql_mode`` bits (MySQL ``system_variables.h`` / MariaDB ``sql_class.h``): a query event's
#: ``Q_SQL_MODE_CODE`` status variable holds the session's mode as these flags
SQL_MODE_ANSI_QUOTES = 1 << 2
SQL_MODE_NO_BACKSLASH_ESCAPES = 1 << 20
CAPTURE_TOOL = "ddlcore capture mysql"


class CaptureError(_core.CaptureError):
    """The capture cannot start or go on: a server not set up for row-based replication, an
    output directory that is not a capture's, a checkpoint that does not match the files."""


def parse_position(text: str) -> tuple[str, int]:
    """``"mariadb-bin.000003:1234"`` → ``("mariadb-bin.000003", 1234)``; raises ``ValueError``."""
    file, sep, pos = text.rpartition(":")
    if not sep or not file or not pos.isdigit():
        raise ValueError(f"not a binlog position {text!r} (expected FILE:POS, e.g. mariadb-bin.000003:1234)")
    return file, int(pos)


# ============================================================================ settings


@dataclass(frozen=True)
class ConnectionSettings:
    """How to reach the source server: ``socket`` (a Unix socket; then host/port are unused)
    or ``host``/``port``; ``user``/``password``.  The account needs ``REPLICATION SLAVE``,
    ``REPLICATION CLIENT`` / ``BINLOG MONITOR``, ``SELECT`` (and ``RELOAD`` on MySQL for the
    snapshot's brief ``FLUSH TABLES WITH READ LOCK``)."""

    host: str = "127.0.0.1"
    port: int = 3306
    user: str = "root"
    password: str = ""
    socket: str | None = None

    def pymysql_kwargs(self, **extra: Any) -> dict[str, Any]:
        kw: dict[str, Any] = dict(user=self.user, password=self.password, charset="utf8mb4",
                                  connect_timeout=10)
        if self.socket:
            kw["unix_socket"] = self.socket
        else:
            kw.update(host=self.host, port=self.port)
        kw.update(extra)
        return kw

    def connect(self, **extra: Any) -> Any:
        import pymysql

        return pymysql.connect(**self.pymysql_kwargs(**extra))

    def __repr__(self) -> str:  # never show the password
        where = self.socket or f"{self.host}:{self.port}"
        return f"ConnectionSettings({self.user}@{where})"


@dataclass(frozen=True)
class CaptureOptions:
    """What to capture and how.

    * ``snapshot``: ``initial`` (schema and rows in a consistent snapshot, then stream),
      ``schema_only`` (schema only, then stream), ``never`` (stream only, from ``start`` or
      the server's current position).  Only the first run of an output directory snapshots;
      a restart resumes from the checkpoint whatever these say.
    * ``start``: ``"FILE:POS"`` to stream from (``never`` only).
    * ``until_end``: stop when the stream reaches the current end of the binlog.
    * ``include`` / ``exclude``: table patterns (``db.table``, ``db.*``, ``db.prefix%``,
      ``%.table``) selecting the tables whose rows are captured; without ``include`` every
      table outside the system databases.  DDL events are always all written (the history
      and the pipeline need every rename and every database default).
    * ``checkpoint_interval``: seconds between checkpoints (one is always written at the end).
    * ``heartbeat``: seconds between server heartbeats while waiting (blocking mode).
    * ``progress``: show events/s and lag on stderr (rich), when it is a terminal.
    * ``stop_after_events``: stop (cleanly, at the next transaction boundary) after writing
      this many events in this run (tests).
    * ``on_statement_dml``: statement-format DML on a captured table (a session with
      ``binlog_format=STATEMENT``, or ``MIXED`` logging a statement) — its rows are not in the
      binlog: ``stop`` (default) ends the capture before it with ``CaptureError``;
      ``quarantine`` writes it as a ``stmt`` event (the pipeline quarantines it) and goes on.
    * ``resync``: table patterns whose definition is read again from the server
      (``SHOW CREATE TABLE`` inside a consistent snapshot at position P) and written as
      ``ddl`` events with ``snapshot: true`` once the stream reaches P — the way back for a
      table whose schema the history lost (a DDL it could not parse, DDL run with
      ``sql_log_bin=0``).
    * ``retry_for``: seconds to keep reconnecting (exponential backoff) when the connection
      drops or the server restarts while streaming; then the capture fails.  ``0``: no retry.
    """

    connection: ConnectionSettings
    server_id: int
    out: Path | str
    snapshot: str = "initial"
    start: str | None = None
    until_end: bool = False
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    checkpoint_interval: float = 0.5
    heartbeat: float = 1.0
    progress: bool = True
    snapshot_retries: int = 5
    stop_after_events: int | None = None
    on_statement_dml: str = "stop"
    resync: tuple[str, ...] = ()
    retry_for: float = 300.0
    retry_wait_max: float = 10.0

    def __post_init__(self) -> None:
        if self.on_statement_dml not in STATEMENT_DML_MODES:
            raise ValueError(f"on_statement_dml must be one of {', '.join(STATEMENT_DML_MODES)}, "
                             f"not {self.on_statement_dml!r}")
        object.__setattr__(self, "resync", tuple(self.resync))
        if self.snapshot not in SNAPSHOT_MODES:
            raise ValueError(f"snapshot must be one of {', '.join(SNAPSHOT_MODES)}, not {self.snapshot!r}")
        if self.start is not None:
            parse_position(self.start)
            if self.snapshot != "never":
                raise ValueError("--start needs --snapshot never (a snapshot takes its own position)")
        if not 1 <= int(self.server_id) <= 2 ** 32 - 1:
            raise ValueError("server_id must be between 1 and 4294967295")
        object.__setattr__(self, "out", Path(self.out))
        object.__setattr__(self, "include", tuple(self.include))
        object.__setattr__(self, "exclude", tuple(self.exclude))


# ============================================================================ state


@dataclass(frozen=True)
class Checkpoint(CheckpointFile):
    """What a restart needs: ``seq`` (last committed seq, 0 before any), ``binlog_file`` /
    ``binlog_position`` (the next event to read), ``changelog_bytes`` (the length of
    changelog.jsonl holding exactly the events up to ``seq``), ``phase`` (``snapshot`` while
    the initial snapshot runs — a restart then starts over — or ``streaming``), and the
    settings the output was made with (``parser_options`` of the history, filters).
    ``load`` / ``save``: ``ddlcore.capture.CheckpointFile``."""

    error: ClassVar[type[Exception]] = CaptureError

    seq: int
    binlog_file: str
    binlog_position: int
    changelog_bytes: int
    phase: str = "streaming"
    parser_options: dict[str, Any] = field(default_factory=dict)
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    server_id: int | None = None
    updated: str | None = None
    epoch: str | None = None
    source: dict[str, Any] | None = None
    xa_prepared: dict[str, str] = field(default_factory=dict)

    @property
    def position(self) -> str:
        return f"{self.binlog_file}:{self.binlog_position}"

    def to_json(self) -> dict[str, Any]:
        return {"format": CHECKPOINT_FORMAT, "seq": self.seq, "binlog_file": self.binlog_file,
                "binlog_position": self.binlog_position, "changelog_bytes": self.changelog_bytes,
                "phase": self.phase, "parser_options": self.parser_options,
                "include": list(self.include), "exclude": list(self.exclude),
                "server_id": self.server_id, "updated": self.updated, "epoch": self.epoch,
                "source": self.source, "xa_prepared": dict(self.xa_prepared)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Checkpoint":
        if d.get("format") != CHECKPOINT_FORMAT:
            raise CaptureError(f"unknown checkpoint format {d.get('format')!r}")
        return cls(int(d["seq"]), str(d["binlog_file"]), int(d["binlog_position"]),
                   int(d["changelog_bytes"]), d.get("phase", "streaming"),
                   dict(d.get("parser_options") or {}), tuple(d.get("include") or ()),
                   tuple(d.get("exclude") or ()), d.get("server_id"), d.get("updated"),
                   d.get("epoch"), d.get("source"), dict(d.get("xa_prepared") or {}))


@dataclass
class CaptureStats(_core.CaptureStats):
    """``ddlcore.capture.CaptureStats`` plus: ``skipped_statements``: query events that are
    not DDL of interest (``BEGIN``, statement-format DML, ``GRANT``, ...); snapshot counts;
    ``statement_dml``, ``resynced``, ``reconnects``; ``drift``: schema drift warnings."""

    skipped_statements: int = 0
    snapshot_tables: int = 0
    snapshot_rows: int = 0
    statement_dml: int = 0
    resynced: int = 0
    reconnects: int = 0
    drift: list[DriftWarning] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "skipped_statements": self.skipped_statements,
                "snapshot_tables": self.snapshot_tables, "snapshot_rows": self.snapshot_rows,
                "statement_dml": self.statement_dml, "resynced": self.resynced,
                "reconnects": self.reconnects, "drift": [d.to_json() for d in self.drift]}


@dataclass(frozen=True)
class ServerInfo:
    """The facts about the source the capture depends on."""

    version: str
    flavor: str  # "mariadb" | "mysql"
    binlog_format: str
    binlog_row_image: str
    binlog_row_metadata: str | None
    character_set_server: str
    collation_server: str
    lower_case_table_names: int
    log_bin: bool
    sql_mode: str = ""
    server_id: int | None = None
    server_uuid: str | None = None
    time_zone: str | None = None

    @property
    def version_number(self) -> int:
        m = re.match(r"(\d+)\.(\d+)\.(\d+)", self.version)
        return int(m.group(1)) * 10000 + int(m.group(2)) * 100 + int(m.group(3)) if m else 0

    def parser_options(self) -> dict[str, Any]:
        """The MySQL parser options that make the history read DDL as this server does (the
        global ``sql_mode``; a statement's own session mode is in its query event)."""
        modes = {m.strip().upper() for m in self.sql_mode.split(",")}
        return {"flavor": self.flavor, "character_set_server": self.character_set_server,
                "collation_server": self.collation_server,
                "lower_case_table_names": self.lower_case_table_names,
                "ansi_quotes": "ANSI_QUOTES" in modes or "ANSI" in modes,
                "no_backslash_escapes": "NO_BACKSLASH_ESCAPES" in modes,
                "server_version": self.version_number or None}

    def identity(self) -> dict[str, Any]:
        """What names the server a binlog position belongs to: ``server_id``, ``server_uuid``
        (MySQL), ``version``."""
        return {"server_id": self.server_id, "server_uuid": self.server_uuid, "version": self.version}

    def source(self, epoch: str, parser_options: dict[str, Any] | None = None) -> SourceInfo:
        """The change log's ``source`` event for this server (docs/changelog.md)."""
        return SourceInfo(dialect="mysql", epoch=epoch, flavor=self.flavor, server=self.identity(),
                          parser_options=dict(parser_options or self.parser_options()),
                          settings={"sql_mode": self.sql_mode, "time_zone": self.time_zone,
                                    "binlog_format": self.binlog_format,
                                    "binlog_row_image": self.binlog_row_image,
                                    "binlog_row_metadata": self.binlog_row_metadata},
                          capture={"tool": CAPTURE_TOOL, "version": distribution_version("ddlcore-mysql")})

    @classmethod
    def read(cls, cur: Any) -> "ServerInfo":
        def var(name: str) -> str | None:
            cur.execute("SHOW GLOBAL VARIABLES LIKE %s", (name,))
            row = cur.fetchone()
            return None if row is None else str(row[1])

        version = var("version") or ""
        return cls(version=version, flavor="mariadb" if "mariadb" in version.lower() else "mysql",
                   binlog_format=(var("binlog_format") or "").upper(),
                   binlog_row_image=(var("binlog_row_image") or "FULL").upper(),
                   binlog_row_metadata=(var("binlog_row_metadata") or None),
                   character_set_server=var("character_set_server") or "utf8mb4",
                   collation_server=var("collation_server") or "utf8mb4_general_ci",
                   lower_case_table_names=int(var("lower_case_table_names") or 0),
                   log_bin=(var("log_bin") or "OFF").upper() in ("ON", "1"),
                   sql_mode=var("sql_mode") or "", server_id=int(var("server_id") or 0) or None,
                   server_uuid=var("server_uuid"), time_zone=var("time_zone"))


# ============================================================================ filter & history


class CaptureFilter(_core.CaptureFilter):
    """``ddlcore.capture.CaptureFilter`` whose default leaves out MySQL's system databases
    (``SYSTEM_DATABASES``)."""

    def __init__(self, include: Iterable[str] = (), exclude: Iterable[str] = (), *,
                 case_sensitive: bool = True):
        super().__init__(include, exclude, case_sensitive=case_sensitive, system_databases=SYSTEM_DATABASES)



# ============================================================================ progress


# ============================================================================ the capture


#: binlog events that carry rows or statements the replication library cannot decode
#: (MySQL ``binary_log::Log_event_type``, MariaDB ``Log_event_type``): stop rather than drop
UNREADABLE_EVENTS = {
    0x14: "PRE_GA_WRITE_ROWS", 0x15: "PRE_GA_UPDATE_ROWS", 0x16: "PRE_GA_DELETE_ROWS",
    0x28: "TRANSACTION_PAYLOAD (MySQL binlog_transaction_compression=ON)",
    0xA5: "QUERY_COMPRESSED (MariaDB log_bin_compress=ON)",
    **{t: "a compressed ROWS event (MariaDB log_bin_compress=ON)" for t in range(0xA6, 0xAC)},
}

_TX_BEGIN = re.compile(r"\s*(?:BEGIN|START\s+TRANSACTION|XA\s+START|XA\s+BEGIN)\b", re.I)
_TX_END = re.compile(r"\s*(?:COMMIT|ROLLBACK|XA\s+COMMIT|XA\s+ROLLBACK)\b", re.I)
#: MariaDB's GTID event flag ``FL_PREPARED_XA`` (``log_event.h``): the group is an XA transaction
#: ending in ``XA_prepare``
FL_PREPARED_XA = 0x40
#: the positional parameters of ``ChangeLogOutput.emit``, naming a held event's fields
_EMIT_ARGS = ("op", "position", "ts", "database", "table", "ddl", "before", "after")
_USE_PREFIX = re.compile(r"\s*use\s+`(?:[^`]|``)*`\s*;\s*", re.I)


class _Stop(Exception):
    """Internal: leave the stream loop (stop requested)."""


class MySqlCapture(_core.Capture):
    """One capture of one source into one output directory (see the module docstring).

    ``run()`` snapshots (first run only), streams, and returns ``CaptureStats``; ``stop()``
    (from another thread or a signal handler) ends the run at the next event, keeping the last
    committed transaction's checkpoint (``ddlcore.capture.Capture``)."""

    error = CaptureError
    stats: CaptureStats

    def __init__(self, options: CaptureOptions, *, on_warning: Callable[[str], None] | None = None):
        super().__init__(options.out, CaptureStats(), on_warning=on_warning,
                         checkpoint_interval=options.checkpoint_interval,
                         stop_after_events=options.stop_after_events)
        self.options = options
        self._progress: _Progress | None = None
        self._drift_seen: set[tuple] = set()
        self.server: ServerInfo | None = None
        self.filter: CaptureFilter | None = None
        self._tx: str | None = None  # the transaction being read: GTID or BEGIN's position
        self._source: dict[str, Any] | None = None  # the source event in force
        self._drift_reason: dict[tuple, str | None] = {}
        self._resync_at: tuple[str, int] | None = None
        self._resync_ddl: list[tuple[str, str]] = []
        self._xa = PreparedTransactions(self.out)  # XA transactions held until XA COMMIT

    # -- public -------------------------------------------------------------------------------

    @property
    def _seq(self) -> int:
        """The last seq written to the change log."""
        return self._log.seq

    def _run(self) -> CaptureStats:
        opts = self.options
        with opts.connection.connect(autocommit=True) as conn, conn.cursor() as cur:
            self.server = ServerInfo.read(cur)
            self._check_server(self.server)
        if not opts.start and self._first_run():
            self._refuse_prepared_xa()
        cp = self._prepare_output()
        self._xa_load(cp, collect=True)
        self.filter = CaptureFilter(cp.include, cp.exclude,
                                    case_sensitive=self.server.lower_case_table_names == 0)
        history = self._log.history = CaptureHistory(self.out / HISTORY_NAME, cp.parser_options)
        if history.unavailable:
            self._warn(f"schema history unavailable, drift checks are off: {history.unavailable}")
        self._progress = self._warn.progress = _Progress(opts.progress)
        self._progress.start()
        try:
            cp = self._write_source(cp)
            if cp.phase == "snapshot":
                cp = self._snapshot(cp)
            if opts.resync:
                self._plan_resync()
            self._stream_with_retry(cp)
        except _Stop:
            pass
        finally:
            self._progress.update(self.stats, "done", force=True)
            self._progress.stop()
            self._log.finish()  # checkpoint, cut an unfinished transaction, close the history
            self._xa_collect()
        return self.stats

    # -- setup --------------------------------------------------------------------------------

    def _check_server(self, s: ServerInfo) -> None:
        if not s.log_bin:
            raise CaptureError("the server's binary log is off (log_bin); capture needs log_bin=ON")
        if s.binlog_format != "ROW":
            self._warn(f"binlog_format is {s.binlog_format}, not ROW: statement-format DML on a captured "
                       f"table will {'stop the capture' if self.options.on_statement_dml == 'stop' else 'be quarantined'}")
        if s.binlog_row_image != "FULL":
            self._warn(f"binlog_row_image is {s.binlog_row_image}, not FULL: columns missing from a "
                       f"row image are written as absent ({{\"$absent\": true}}), not as null")

    def _prepare_output(self) -> Checkpoint:
        """Resume from the checkpoint (the change log opened and cut to it), or start afresh
        (the change log opened empty)."""
        opts, s = self.options, self.server
        assert s is not None
        cp = Checkpoint.load(self.checkpoint_path)
        if cp is not None and cp.phase == "streaming":
            self._log.resume(cp, opts.include, opts.exclude)  # cut to it (CaptureError when shorter)
            if opts.start:
                self._warn(f"--start {opts.start} ignored: resuming from the checkpoint at {cp.position}")
            return cp
        self._log.check_new()
        # a fresh start (or a snapshot interrupted before it completed: start over)
        _remove_history(self.out / HISTORY_NAME)
        base = Checkpoint(0, "", 0, 0, "snapshot", s.parser_options(), tuple(opts.include),
                          tuple(opts.exclude), opts.server_id, epoch=str(uuid.uuid4()))
        if opts.snapshot == "never":
            if opts.start:
                file, pos = parse_position(opts.start)
            else:
                with opts.connection.connect(autocommit=True) as conn, conn.cursor() as cur:
                    file, pos = _master_position(cur)
            base = replace(base, binlog_file=file, binlog_position=pos, phase="streaming")
        self._log.start(base)  # an empty change log; base saved
        return base

    # -- events -------------------------------------------------------------------------------

    def _boundary(self, file: str, pos: int) -> None:
        """A transaction ended: everything written so far is committed; the next event to
        read is ``file:pos``, under the source event in force."""
        self._tx = None
        if self._resync_at is not None and (file, pos) >= self._resync_at:
            self._emit_resync()
        if self._log.commit(replace(self._log.checkpointed, binlog_file=file, binlog_position=pos,
                                    phase="streaming", source=self._source, xa_prepared=self._xa.files())):
            raise _Stop()  # stop_after_events: the checkpoint is written

    # -- the source event ---------------------------------------------------------------------

    def _write_source(self, cp: Checkpoint) -> Checkpoint:
        """Write the ``source`` event (docs/changelog.md) first in a new log, and again when a
        restart finds the server's settings changed.  A server whose identity changed (another
        ``server_id`` / ``server_uuid``: positions in its binlog mean something else) stops the
        capture."""
        s = self.server
        assert s is not None
        epoch = cp.epoch or str(uuid.uuid4())  # a log written before source events: given one now
        src = s.source(epoch).to_json()
        last = cp.source
        if last is not None and last.get("server") and (
                (last["server"].get("server_id"), last["server"].get("server_uuid"))
                != (src["server"].get("server_id"), src["server"].get("server_uuid"))):
            raise CaptureError(
                f"the server is not the one this capture read: server_id {src['server'].get('server_id')}"
                f" / server_uuid {src['server'].get('server_uuid')}, the change log's source says "
                f"{last['server'].get('server_id')} / {last['server'].get('server_uuid')}; its binlog "
                f"positions are not this server's (capture it into a new directory)")
        same = last is not None and {k: v for k, v in last.items() if k != "capture"} == \
            {k: v for k, v in src.items() if k != "capture"}
        self._source = last if same else src
        self._log.checkpointed = cp = replace(cp, epoch=epoch, source=self._source)
        if same:
            return cp
        position = cp.position if cp.binlog_file else self._current_position()
        self._log.emit("source", position, int(time.time() * 1000), source=src)
        if cp.phase == "streaming":  # durable now: the next run must not write it again
            self._log.checkpoint(cp)
            return self._log.checkpointed
        return cp

    def _current_position(self) -> str:
        with self.options.connection.connect(autocommit=True) as conn, conn.cursor() as cur:
            file, pos = _master_position(cur)
        return f"{file}:{pos}"

    def _session_options(self, ev: Any, position: str, ts: int) -> None:
        """A statement's session ``sql_mode`` (its query event's ``Q_SQL_MODE_CODE``) decides
        how its DDL reads (``ANSI_QUOTES``, ``NO_BACKSLASH_ESCAPES``): when it differs from the
        source event in force, a new source event (same epoch) says so from this seq on."""
        mode = getattr(ev, "sql_mode", None)
        if mode is None or self._source is None:
            return
        opts = dict(self._source.get("parser_options") or {})
        want = {"ansi_quotes": bool(mode & SQL_MODE_ANSI_QUOTES),
                "no_backslash_escapes": bool(mode & SQL_MODE_NO_BACKSLASH_ESCAPES)}
        if all(opts.get(k) == v for k, v in want.items()):
            return
        src = {**self._source, "parser_options": {**opts, **want}}
        self._source = src  # in the checkpoints from the transaction's end on (_boundary)
        self._log.emit("source", position, ts, source=src)

    # -- resync -------------------------------------------------------------------------------

    def _plan_resync(self) -> None:
        """Read the definitions of the ``resync`` tables inside a consistent snapshot at the
        binlog position P; they are written (``snapshot: true``) when the stream reaches P."""
        from ddlcore.history.filters import TableFilter

        assert self.server is not None
        only = TableFilter(list(self.options.resync), case_sensitive=self.server.lower_case_table_names == 0)
        conn = self.options.connection.connect(autocommit=False)
        try:
            with conn.cursor() as cur:
                cur.execute("SET SESSION sql_mode = ''")
                cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            file, pos, _dbs, tables = self._snapshot_schema(conn, self.server, only)
            conn.commit()
        finally:
            conn.close()
        if not tables:
            raise CaptureError(f"--resync {' '.join(self.options.resync)}: no captured table matches")
        self._resync_at = (file, pos)
        self._resync_ddl = [(db, ddl) for (db, _name), ddl in tables]
        cp = self._log.checkpointed
        if cp is not None and (cp.binlog_file, cp.binlog_position) >= self._resync_at:
            self._emit_resync()
            self._log.checkpoint(cp)

    def _emit_resync(self) -> None:
        assert self._resync_at is not None
        file, pos = self._resync_at
        ts = int(time.time() * 1000)
        for db, ddl in self._resync_ddl:
            self._log.emit("ddl", f"{file}:{pos}", ts, db, None, ddl, snapshot=True)
        self.stats.resynced += len(self._resync_ddl)
        self._resync_at, self._resync_ddl = None, []

    # -- reconnecting -------------------------------------------------------------------------

    def _stream_with_retry(self, cp: Checkpoint) -> None:
        """Stream; when the connection drops or the server restarts, reconnect with
        exponential backoff for up to ``retry_for`` seconds, each time from the last committed
        transaction (the change log is cut back to it first: ``ChangeLogOutput.read_with_retry``)."""
        opts = self.options
        self._log.read_with_retry(self._stream, cp, lost=_is_connection_error, retry_for=opts.retry_for,
                                  wait_max=opts.retry_wait_max, on_rewind=self._rewound)

    def _rewound(self) -> None:
        """The change log is back at the last checkpoint: forget the transaction being read."""
        self.stats.reconnects += 1
        self._tx = None
        self._xa_load(self._log.checkpointed)

    # -- snapshot -----------------------------------------------------------------------------

    def _snapshot(self, cp: Checkpoint) -> Checkpoint:
        """Consistent snapshot: the binlog position, the schema (``SHOW CREATE DATABASE`` /
        ``SHOW CREATE TABLE``) and, for ``initial``, every row of every captured table."""
        opts, server = self.options, self.server
        assert server is not None and self.filter is not None
        conn = opts.connection.connect(autocommit=False)
        try:
            with conn.cursor() as cur:
                # SHOW CREATE renders as the session's sql_mode says: render plain MySQL;
                # TIMESTAMP text in UTC (the binlog's TIMESTAMP values are UTC too)
                cur.execute("SET SESSION sql_mode = ''")
                cur.execute("SET SESSION time_zone = '+00:00'")
                cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            plan = self._snapshot_schema(conn, server)
            file, pos, databases, tables = plan
            ts = int(time.time() * 1000)
            position = f"{file}:{pos}"
            for db, ddl in databases:
                self._log.emit("ddl", position, ts, None, None, ddl, snapshot=True)
            for (db, name), ddl in tables:
                self._log.emit("ddl", position, ts, db, None, ddl, snapshot=True)
            self.stats.snapshot_tables = len(tables)
            if opts.snapshot == "initial":
                for (db, name), _ in tables:
                    self._snapshot_rows(conn, db, name, position, ts, server)
            conn.commit()
        finally:
            conn.close()
        self._log.checkpoint(replace(self._log.checkpointed, binlog_file=file, binlog_position=pos,
                                     phase="streaming"))
        return self._log.checkpointed

    def _snapshot_schema(self, conn: Any, server: ServerInfo, only: Any = None):
        """Open the consistent snapshot and read the schema under it; returns ``(file, pos,
        [(db, CREATE DATABASE)], [((db, table), CREATE TABLE)])``.

        MariaDB: ``START TRANSACTION WITH CONSISTENT SNAPSHOT`` and the ``binlog_snapshot_file``
        / ``binlog_snapshot_position`` status give the position without a global lock
        (MariaDB KB "Enhancements for START TRANSACTION WITH CONSISTENT SNAPSHOT").  DDL is not
        transactional, so each captured table is opened inside the transaction first (its
        metadata lock then holds off DDL until the snapshot ends); a DDL that committed between
        the snapshot and those locks shows in the binlog between the snapshot position and the
        current one — then the snapshot is retried.  MySQL: ``FLUSH TABLES WITH READ LOCK``
        while the snapshot starts and the schema is read, released before the rows are read."""
        import pymysql

        assert self.filter is not None
        mariadb = server.flavor == "mariadb"
        last_error: Exception | None = None
        for attempt in range(max(1, self.options.snapshot_retries)):
            with conn.cursor() as cur:
                try:
                    if not mariadb:
                        cur.execute("FLUSH TABLES WITH READ LOCK")
                    cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
                    if mariadb:
                        cur.execute("SHOW STATUS LIKE 'binlog_snapshot_%'")
                        status = {k.lower(): v for k, v in cur.fetchall()}
                        file, pos = status["binlog_snapshot_file"], int(status["binlog_snapshot_position"])
                    else:
                        file, pos = _master_position(cur)
                    databases, tables = self._list_tables(cur, only)
                    for db, name in tables:  # metadata locks until the snapshot ends
                        cur.execute(f"SELECT 1 FROM {_qi(db)}.{_qi(name)} LIMIT 0")
                    db_ddl = []
                    for db in databases:
                        cur.execute(f"SHOW CREATE DATABASE {_qi(db)}")
                        db_ddl.append((db, cur.fetchone()[1]))
                    table_ddl = []
                    for db, name in tables:
                        cur.execute(f"SHOW CREATE TABLE {_qi(db)}.{_qi(name)}")
                        table_ddl.append(((db, name), cur.fetchone()[1]))
                    if mariadb:
                        now = _master_position(cur)
                        changed = _ddl_between(cur, (file, pos), now)
                        if changed:
                            conn.rollback()
                            last_error = CaptureError(f"DDL during the snapshot: {changed[:200]}")
                            time.sleep(0.05 * (attempt + 1))
                            continue
                    else:
                        cur.execute("UNLOCK TABLES")
                    return file, pos, db_ddl, table_ddl
                except pymysql.err.MySQLError as exc:
                    conn.rollback()
                    if not mariadb:
                        cur.execute("UNLOCK TABLES")
                    # 1412: table definition changed after the snapshot began; 1146: dropped
                    if exc.args and exc.args[0] in (1412, 1146):
                        last_error = exc
                        continue
                    raise
        raise CaptureError(f"could not take a consistent snapshot in {self.options.snapshot_retries} "
                           f"attempts: {last_error}")

    def _list_tables(self, cur: Any, only: Any = None) -> tuple[list[str], list[tuple[str, str]]]:
        """Databases and captured base tables (``only``: a ``TableFilter``: just the tables it
        matches, and no databases — a resync)."""
        assert self.filter is not None
        cur.execute("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY SCHEMA_NAME")
        all_dbs = [r[0] for r in cur.fetchall()]
        cur.execute("SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "
                    "WHERE TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED') "
                    "ORDER BY TABLE_SCHEMA, TABLE_NAME")
        tables = [(db, t) for db, t in cur.fetchall() if self.filter.captures(db, t)]
        if only is not None:
            return [], [(db, t) for db, t in tables if only.matches(TableId(db, None, t))]
        with_tables = {db for db, _ in tables}
        databases = [db for db in all_dbs if db.lower() not in SYSTEM_DATABASES or db in with_tables]
        return databases, tables

    def _snapshot_rows(self, conn: Any, db: str, name: str, position: str, ts: int,
                       server: ServerInfo) -> None:
        """Every row of one table as ``op="r"`` events, with the same raw values a binlog row
        event gives (ENUM/SET numbers, string bytes, temporal text, ...)."""
        import pymysql.cursors

        with conn.cursor() as cur:
            cur.execute("SELECT COLUMN_NAME, DATA_TYPE, EXTRA FROM information_schema.COLUMNS "
                        "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION", (db, name))
            cols = cur.fetchall()
            cur.execute("SELECT TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s "
                        "AND TABLE_NAME = %s", (db, name))
            versioned = (cur.fetchone() or ("",))[0] == "SYSTEM VERSIONED"
        pairs = [_snapshot_expr(c, dt.lower(), server) for c, dt, _ in cols]
        if versioned and not any("ROW START" in (extra or "").upper() for _, _, extra in cols):
            # MariaDB's implicit row_start / row_end: not in information_schema.COLUMNS, but
            # logged after the table's columns in every row image
            pairs += [("CAST(ROW_START AS CHAR)", "$datetime"), ("CAST(ROW_END AS CHAR)", "$datetime")]
        exprs, tags = zip(*pairs) if pairs else ((), ())
        sql = f"SELECT {', '.join(exprs)} FROM {_qi(db)}.{_qi(name)}"
        progress = self._progress
        cur = conn.cursor(pymysql.cursors.SSCursor)
        try:
            cur.execute(sql)
            while True:
                rows = cur.fetchmany(1000)
                if not rows:
                    break
                for row in rows:
                    after = [encode_value(v if tag is None or v is None else Tagged(tag, _tag_text(tag, v)))
                             for v, tag in zip(row, tags)]
                    self._log.emit("r", position, ts, db, name, None, None, after)
                self.stats.snapshot_rows += len(rows)
                if progress is not None:
                    progress.update(self.stats, f"snapshot {db}.{name}")
                if self._stop.is_set():
                    raise _Stop()
        finally:
            cur.close()

    # -- streaming ----------------------------------------------------------------------------

    def _stream(self, cp: Checkpoint) -> None:
        from pymysqlreplication import BinLogStreamReader
        from pymysqlreplication.event import (GtidEvent, HeartbeatLogEvent, MariadbGtidEvent,
                                              NotImplementedEvent, QueryEvent, RotateEvent, XAPrepareEvent,
                                              XidEvent)
        from pymysqlreplication.row_event import (DeleteRowsEvent, PartialUpdateRowsEvent, TableMapEvent,
                                                  UpdateRowsEvent, WriteRowsEvent)

        opts = self.options
        stream = BinLogStreamReader(
            connection_settings=opts.connection.pymysql_kwargs(),
            server_id=int(opts.server_id),
            resume_stream=True, log_file=cp.binlog_file, log_pos=cp.binlog_position,
            blocking=not opts.until_end,
            only_events=[QueryEvent, XidEvent, RotateEvent, TableMapEvent, WriteRowsEvent,
                         UpdateRowsEvent, PartialUpdateRowsEvent, DeleteRowsEvent, MariadbGtidEvent,
                         GtidEvent, HeartbeatLogEvent, NotImplementedEvent, XAPrepareEvent],
            # events the library cannot read are passed on, so that one holding rows stops the
            # capture instead of being dropped
            filter_non_implemented_events=False,
            slave_heartbeat=None if opts.until_end else opts.heartbeat,
            # binlog coordinates, not GTIDs: the library's MariaDB dump ignores file:pos
            is_mariadb=False, enable_logging=False, freeze_schema=False)
        progress = self._progress
        in_trx = False
        kinds = {WriteRowsEvent: "c", UpdateRowsEvent: "u", PartialUpdateRowsEvent: "u", DeleteRowsEvent: "d"}
        # the library logs a warning asking for binlog_row_metadata=FULL: the capture does not need it
        lib_log = logging.getLogger("pymysqlreplication")
        saved_level = lib_log.level
        lib_log.setLevel(max(saved_level, logging.ERROR))
        try:
            with raw_row_decoding(), warnings.catch_warnings():
                # the library opens its control connection with pymysql's deprecated ``db=``
                warnings.filterwarnings("ignore", message="'db' is deprecated", category=DeprecationWarning)
                for ev in stream:
                    if self._stop.is_set():
                        raise _Stop()
                    cls = type(ev)
                    file = stream.log_file
                    end = ev.packet.log_pos
                    if ev.timestamp:
                        self.stats.lag_seconds = max(0.0, time.time() - ev.timestamp)
                    op = kinds.get(cls)
                    if op is not None:
                        in_trx = True
                        self._on_rows(ev, op, f"{file}:{end}")
                    elif cls is TableMapEvent:
                        in_trx = True
                        self._on_table_map(ev, f"{file}:{end}")
                    elif cls is XidEvent:
                        in_trx = False
                        self._boundary(file, end)
                    elif cls is QueryEvent:
                        in_trx = self._on_query(ev, file, end, in_trx)
                    elif cls is MariadbGtidEvent:
                        in_trx = not (ev.flags & 1)  # FL_STANDALONE: a DDL or other lone statement
                        self._tx = ev.gtid
                        if ev.flags & FL_PREPARED_XA:
                            self._xa.open()
                    elif cls is XAPrepareEvent:
                        in_trx = False
                        self._on_xa_prepare(ev, file, end)
                    elif cls is GtidEvent:
                        gtid = getattr(ev, "gtid", None)
                        self._tx = None if not gtid or "ANONYMOUS" in str(gtid).upper() else str(gtid)
                    elif cls is HeartbeatLogEvent and self._log.pending is not None:
                        self._log.checkpoint()  # idle: make the last transaction durable now
                    elif cls is NotImplementedEvent and ev.event_type in UNREADABLE_EVENTS:
                        raise CaptureError(f"binlog event {UNREADABLE_EVENTS[ev.event_type]} at {file}:{end} "
                                           f"cannot be read; the capture stopped at the last transaction "
                                           f"before it")
                    if progress is not None:
                        progress.update(self.stats, "streaming")
        except Exception as exc:
            if is_same_server_id(exc):  # another replica took the server_id: never fight back
                cp_now = self._log.checkpointed
                raise CaptureError(same_server_id_message(int(opts.server_id), str(self.out.resolve()),
                                                          cp_now.position if cp_now is not None else "-")) from None
            raise
        finally:
            stream.close()
            lib_log.setLevel(saved_level)

    def _on_query(self, ev: Any, file: str, end: int, in_trx: bool) -> bool:
        """A query event: ``BEGIN`` opens a transaction; ``COMMIT``/``ROLLBACK`` end one;
        statements the dialect's filter sends to the parser become ``ddl`` events (a
        ``TRUNCATE`` also a ``t`` event for its table); statement-format DML on a captured
        table stops the capture or becomes a ``stmt`` event (``on_statement_dml``); everything
        else is skipped.  A statement outside a transaction is a transaction of its own.
        Returns whether a transaction is open after it."""
        q = ev.query
        xa = parse_xa_statement(q)
        if xa is not None:
            return self._on_xa_statement(xa, file, end, in_trx)
        if q == "BEGIN" or _TX_BEGIN.match(q):
            if self._tx is None:  # no GTID: the transaction is named by where its BEGIN starts
                self._tx = f"{file}:{end - ev.event_size}"
            return True
        if q == "COMMIT" or _TX_END.match(q):
            self._boundary(file, end)
            return False
        text = _query_text(ev)
        parse, _reason = STATEMENT_FILTER.classify(text)
        schema = ev.schema.decode("utf-8", "surrogateescape") if isinstance(ev.schema, bytes) else ev.schema
        position, ts = f"{file}:{end}", ev.timestamp * 1000
        if parse:
            self._session_options(ev, position, ts)
            self._log.emit("ddl", position, ts, schema or None, None, text, tx=self._tx)
            m = _TRUNCATE.match(strip_set_statement(text))
            if m is not None:
                db, table = _table_ref(m.group(1), schema)
                if db is not None and self.filter is not None and self.filter.captures(db, table):
                    self._log.emit("t", position, ts, db, table, tx=self._tx)
        elif _DML.match(strip_set_statement(text)):
            self._on_statement_dml(text, schema or None, position, ts)
        else:
            self.stats.skipped_statements += 1
        if not in_trx:
            self._boundary(file, end)
        return in_trx

    def _on_statement_dml(self, text: str, schema: str | None, position: str, ts: int) -> None:
        """Statement-format DML: its rows are not in the binlog.  On a captured table it stops
        the capture (``CaptureError``) or is written as a ``stmt`` event; on a table the
        history does not know (a temporary table) it is skipped with a warning."""
        assert self.filter is not None
        targets = _dml_targets(strip_set_statement(text), schema)
        captured = []
        for db, table in targets or [(schema, None)]:
            if db is None or (table is not None and not self.filter.captures(db, table)):
                continue
            history = self._log.history
            if table is not None and history is not None and history.available \
                    and history.table_at(TableId(db, None, table), self._seq) is None:
                self._warn(f"statement-format DML at {position} on {db}.{table}, a table the schema history "
                           f"does not know (a temporary table?), skipped: {shorten(text)}")
                continue
            captured.append(f"{db}.{table}" if table else f"{db}.?")
        if not captured:
            self.stats.skipped_statements += 1
            return
        self.stats.statement_dml += 1
        what = ", ".join(captured)
        if self.options.on_statement_dml == "stop":
            raise CaptureError(
                f"statement-format DML on captured table {what} at {position} (a session with "
                f"binlog_format=STATEMENT, or MIXED logging a statement): the rows it changed are not in the "
                f"binlog; the capture stopped before it, at the last complete transaction. Statement: "
                f"{shorten(text)} — run with --on-statement-dml quarantine to record it as a quarantined "
                f"event and go on, or resnapshot the table")
        table = targets[0][1] if targets and len(targets) == 1 else None
        self._emit("stmt", position, ts, targets[0][0] if targets else schema, table, text, tx=self._tx)
        self._warn(f"statement-format DML on {what} at {position} written as a quarantined stmt event: {shorten(text)}")

    def _on_rows(self, ev: Any, op: str, position: str) -> None:
        assert self.filter is not None
        if not self.filter.captures(ev.schema, ev.table):
            return
        ts = ev.timestamp * 1000
        db, table, tx = ev.schema, ev.table, self._tx
        extra: dict[str, Any] = {} if tx is None else {"tx": tx}
        drift = self._drift_reason.get((ev.table_id, self.stats.ops["ddl"] + self.stats.ops["source"]))
        if drift:
            extra["quarantine"] = drift
        if op == "u":
            for i, row in enumerate(ev.rows):
                self._emit("u", position, ts, db, table, None,
                           [encode_value(v) for v in row["before_values"].values()],
                           [encode_value(v) for v in row["after_values"].values()], row=i, **extra)
        elif op == "c":
            for i, row in enumerate(ev.rows):
                self._emit("c", position, ts, db, table, None, None,
                           [encode_value(v) for v in row["values"].values()], row=i, **extra)
        else:
            for i, row in enumerate(ev.rows):
                self._emit("d", position, ts, db, table, None,
                           [encode_value(v) for v in row["values"].values()], None, row=i, **extra)

    # -- XA transactions (``ddlcore_mysql.xa``) ----------------------------------------------

    def _emit(self, *args: Any, **kw: Any) -> None:
        """``ChangeLogOutput.emit`` — or, inside an XA transaction, hold the event until its
        ``XA COMMIT``."""
        if self._xa.active:
            self._xa.hold({**dict(zip(_EMIT_ARGS, args)), **kw})
        else:
            self._log.emit(*args, **kw)

    def _xa_load(self, cp: Checkpoint, collect: bool = False) -> None:
        """Hold the prepared XA transactions ``cp`` records (a run's start, a rewind);
        ``collect``: remove the files of those it does not record."""
        try:
            self._xa.load(cp.xa_prepared)
        except OSError as exc:
            raise CaptureError(f"cannot read the prepared XA transactions the checkpoint records: {exc}") from exc
        if collect:
            self._xa.collect(cp.xa_prepared.values())

    def _first_run(self) -> bool:
        """No checkpoint to resume from: this run snapshots or starts at the current position."""
        cp = Checkpoint.load(self.checkpoint_path)
        return cp is None or cp.phase != "streaming"

    def _refuse_prepared_xa(self) -> None:
        """A first run (snapshot, or the current position): an XA transaction prepared now has
        its rows before the start and not in a snapshot, so its later ``XA COMMIT`` could not
        be written — stop now, naming it (``XA RECOVER``).  An account that may not run
        ``XA RECOVER`` gets a warning (the stream still stops at such a commit)."""
        import pymysql

        with self.options.connection.connect(autocommit=True) as conn, conn.cursor() as cur:
            try:
                cur.execute("XA RECOVER")
            except pymysql.err.MySQLError as exc:
                self._warn(f"cannot list prepared XA transactions (XA RECOVER: {exc.args[-1]}): one prepared "
                           f"before the start stops the capture at its XA COMMIT")
                return
            rows = cur.fetchall()
        if rows:
            xids = ", ".join(xid_text(int(f), bytes(d[:g]), bytes(d[g:g + b])) for f, g, b, d in
                             ((r[0], int(r[1]), int(r[2]), r[3] if isinstance(r[3], bytes) else r[3].encode())
                              for r in rows))
            raise CaptureError(f"XA transactions are prepared on the server ({xids}): their rows are neither in a "
                               f"snapshot nor after the start position, so their XA COMMIT could not be captured; "
                               f"commit or roll them back (XA COMMIT / XA ROLLBACK), then start the capture")

    def _xa_collect(self) -> None:
        cp = self._log.checkpointed
        if cp is not None and not self._log.opened:
            self._xa.collect(cp.xa_prepared.values())

    def _on_xa_prepare(self, ev: Any, file: str, end: int) -> None:
        """An ``XA_prepare`` event ends the XA transaction's event group: prepared (its events
        held under its XID, durably, until ``XA COMMIT``) or, with ``one_phase`` (MySQL's
        ``XA COMMIT … ONE PHASE``), committed — its events written now."""
        xid = xid_text(ev.xid_format_id, ev.xid_gtrid, ev.xid_bqual)
        if ev.one_phase:
            self._write_held(self._xa.take_open())
        else:
            self._xa.prepare(xid, f"{file}:{end}")
        self._boundary(file, end)

    def _on_xa_statement(self, xa: XaStatement, file: str, end: int, in_trx: bool) -> bool:
        """An XA statement's query event: ``XA START`` (MySQL) opens an XA transaction whose
        events are held; ``XA COMMIT`` writes the held events of a prepared one; ``XA ROLLBACK``
        forgets them.  Returns whether a transaction is open after it.  Raises
        ``CaptureError`` for an ``XA COMMIT`` whose ``XA PREPARE`` the capture did not read
        (before its start position): its rows cannot be written."""
        if xa.verb == "START":
            if not self._xa.active:
                self._xa.open()
            if self._tx is None:
                self._tx = f"{file}:{end}"
            return True
        if xa.verb in ("END", "PREPARE"):
            return in_trx
        if xa.verb == "ROLLBACK":
            self._xa.discard()
            self._xa.rollback(xa.xid)
        elif xa.one_phase or self._xa.active:
            self._write_held(self._xa.take_open())
        elif self._xa.held(xa.xid):
            self._write_held(self._xa.commit(xa.xid))
        else:
            raise CaptureError(
                f"XA COMMIT {xa.xid} at {file}:{end}: its XA PREPARE was not read by this capture (it is "
                f"before the capture's start position or snapshot), so its rows are not known; the "
                f"capture stopped before it. Capture into a new directory (its snapshot holds the rows)")
        self._boundary(file, end)
        return False

    def _write_held(self, held: Iterable[dict[str, Any]]) -> None:
        for ev in held:
            self._log.emit(**ev)

    def _on_table_map(self, ev: Any, position: str) -> None:
        """Take the binlog's own signedness (MINIMAL metadata carries it too), and compare the
        table map with the history's table (drift)."""
        om = ev.optional_metadata
        unsigned = getattr(om, "unsigned_column_list", None)
        if unsigned:
            for col, flag in zip(ev.columns, unsigned):
                col.unsigned = bool(flag)
        assert self.filter is not None
        history = self._log.history
        if history is None or not history.available or not self.filter.captures(ev.schema, ev.table):
            return
        # a table's map repeats in every transaction; compare once per table id (a new
        # definition gets a new id) and per DDL epoch (the history changes only at DDL events)
        epoch = self._log.schema_seq
        seen = (ev.schema, ev.table, ev.table_id, epoch)
        if seen in self._drift_seen:
            return
        if len(self._drift_seen) > 100_000:
            self._drift_seen.clear()
        self._drift_seen.add(seen)
        tid = TableId(ev.schema, None, ev.table)
        table = history.table_at(tid, self._seq)
        columns = binlog_columns(ev)
        found = compare_table(columns, table, table_name=f"{ev.schema}.{ev.table}", seq=self._seq,
                              position=position)
        # rows of a table whose binlog metadata contradicts the history are quarantined with
        # the reason (a table the history does not know is the pipeline's "unknown table")
        reasons = [w.message for w in found if table is not None]
        if len(self._drift_reason) > 100_000:
            self._drift_reason.clear()
        self._drift_reason[(ev.table_id, epoch)] = ("drift: " + "; ".join(reasons)) if reasons else None
        sig = (ev.schema, ev.table, None if table is None else table.to_json_text(), tuple(columns))
        if sig in self._drift_seen:
            return  # the same disagreement (or agreement) as before: report it once
        self._drift_seen.add(sig)
        for w in found:
            self.stats.drift.append(w)
            self._warn(w.message)


def capture(options: CaptureOptions, **kw: Any) -> CaptureStats:
    """Run one capture (``MySqlCapture(options, **kw).run()``)."""
    return MySqlCapture(options, **kw).run()


# ============================================================================ helpers


def _qi(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


_NAME = r"(?:`(?:[^`]|``)*`|[\w$]+)"
_QNAME = rf"({_NAME}(?:\s*\.\s*{_NAME})?)"
_TRUNCATE = re.compile(rf"\s*TRUNCATE\s+(?:TABLE\s+)?{_QNAME}\s*;?\s*$", re.I)
#: statement-format DML (MySQL manual 15.2): the statements whose rows a row-based binlog
#: would carry as row events
_DML = re.compile(r"\s*(?:INSERT|REPLACE|UPDATE|DELETE|LOAD\s+(?:DATA|XML))\b", re.I)
_DML_TARGET = (
    re.compile(rf"\s*(?:INSERT|REPLACE)\s+(?:(?:LOW_PRIORITY|DELAYED|HIGH_PRIORITY|IGNORE)\s+)*(?:INTO\s+)?{_QNAME}", re.I),
    re.compile(rf"\s*UPDATE\s+(?:(?:LOW_PRIORITY|IGNORE)\s+)*{_QNAME}\s+(?:AS\s+\w+\s+|\w+\s+)?SET\b", re.I),
    re.compile(rf"\s*DELETE\s+(?:(?:LOW_PRIORITY|QUICK|IGNORE)\s+)*FROM\s+{_QNAME}\s*(?:$|;|WHERE\b|ORDER\b|LIMIT\b|PARTITION\b|RETURNING\b)", re.I),
    re.compile(rf"\s*LOAD\s+(?:DATA|XML)\b.*?\bINTO\s+TABLE\s+{_QNAME}", re.I | re.S),
)


def _unquote(part: str) -> str:
    part = part.strip()
    return part[1:-1].replace("``", "`") if part.startswith("`") else part


def _table_ref(text: str, schema: str | None) -> tuple[str | None, str]:
    """``db.t`` / ``t`` (backquotes allowed) → ``(database, table)``; the session's schema
    when unqualified."""
    parts = [_unquote(p) for p in re.findall(_NAME, text)]
    return (parts[0], parts[1]) if len(parts) == 2 else (schema, parts[0])


def _dml_targets(text: str, schema: str | None) -> list[tuple[str | None, str]] | None:
    """The table a single-table DML statement changes, or ``None`` when it cannot be read
    (multi-table forms): then every table of the session's database counts as touched."""
    for rx in _DML_TARGET:
        m = rx.match(text)
        if m is not None:
            return [_table_ref(m.group(1), schema)]
    return None


def _is_connection_error(exc: BaseException) -> bool:
    """A lost connection or a restarting server (worth reconnecting for), not a refusal."""
    import pymysql

    if isinstance(exc, (ConnectionError, EOFError, pymysql.err.InterfaceError)):
        return True
    if isinstance(exc, pymysql.err.OperationalError):
        code = exc.args[0] if exc.args else None
        # 2003 can't connect, 2006 gone away, 2013 lost during query, 2055 lost connection,
        # 1053 server shutdown, 1927 connection killed (MariaDB), 4031 disconnected (MySQL)
        return code in (2003, 2006, 2013, 2055, 1053, 1927, 4031)
    return isinstance(exc, OSError) and not isinstance(exc, PermissionError)


def _tag_text(tag: str, v: Any) -> str:
    text = v.decode("utf-8", "surrogateescape") if isinstance(v, (bytes, bytearray)) else str(v)
    return text if tag == "$json" else canonical_fraction(text)


_CHAR_TYPES = frozenset({"char", "varchar", "tinytext", "text", "mediumtext", "longtext"})


def _snapshot_expr(name: str, data_type: str, server: ServerInfo) -> tuple[str, str | None]:
    """The SELECT expression for one column and the tag its text gets, so that a snapshot row
    carries the raw values a binlog row event would: ENUM/SET/YEAR as numbers (``+0``),
    character strings as their bytes (``CAST … AS BINARY``: no charset conversion), temporal
    values as the server's text (zero dates included), FLOAT as its exact double value."""
    q = _qi(name)
    if data_type in ("enum", "set", "year"):
        return f"{q}+0", None
    if data_type == "date":
        return f"CAST({q} AS CHAR)", "$date"
    if data_type in ("datetime", "timestamp"):
        return f"CAST({q} AS CHAR)", "$datetime"
    if data_type == "time":
        return f"CAST({q} AS CHAR)", "$time"
    if data_type == "float":
        return f"CAST({q} AS DOUBLE)", None
    if data_type == "json":  # MySQL's JSON type (MariaDB reports JSON columns as longtext)
        return f"CAST({q} AS CHAR)", "$json"
    if data_type in _CHAR_TYPES or data_type in ("inet4", "inet6", "uuid"):
        # MariaDB's INET4/INET6/UUID: their storage bytes, as the binlog has them
        return f"CAST({q} AS BINARY)", None
    return q, None


def _master_position(cur: Any) -> tuple[str, int]:
    import pymysql

    try:
        cur.execute("SHOW MASTER STATUS")  # MariaDB, MySQL before 8.4
    except pymysql.err.MySQLError:
        cur.execute("SHOW BINARY LOG STATUS")  # MySQL 8.2+
    row = cur.fetchone()
    if row is None:
        raise CaptureError("SHOW MASTER STATUS returned nothing: the binary log is off")
    return str(row[0]), int(row[1])


def _ddl_between(cur: Any, start: tuple[str, int], end: tuple[str, int]) -> str | None:
    """The first DDL statement (as the dialect's filter sees it) in the binlog between
    ``start`` (inclusive) and ``end`` (exclusive), read with ``SHOW BINLOG EVENTS``."""
    cur.execute("SHOW BINARY LOGS")
    files = [r[0] for r in cur.fetchall()]
    if start[0] in files:
        files = files[files.index(start[0]):]
    for f in files:
        pos = start[1] if f == start[0] else 4
        while True:
            if f == end[0] and pos >= end[1]:
                return None
            cur.execute(f"SHOW BINLOG EVENTS IN %s FROM {int(pos)} LIMIT 500", (f,))
            rows = cur.fetchall()
            if not rows:
                break
            for r in rows:
                ev_pos, ev_type, end_pos, info = int(r[1]), r[2], int(r[4]), r[5]
                if f == end[0] and ev_pos >= end[1]:
                    return None
                if ev_type == "Query" and info:
                    text = _USE_PREFIX.sub("", info, count=1)
                    if STATEMENT_FILTER.classify(text)[0]:
                        return text
                pos = end_pos
        if f == end[0]:
            return None
    return None


def _query_text(ev: Any) -> str:
    """The statement of a query event as text.  The binlog holds it in the session's
    ``character_set_client``; the library decodes it as UTF-8, which is right unless that
    charset is another one and the text is not ASCII — then the raw bytes are decoded with the
    client charset's codec."""
    q = ev.query
    cs = getattr(ev, "character_set_client", None)
    if cs is None:
        return q
    from pymysqlreplication.constants import CHARSET

    info = CHARSET.charset_by_id(cs, "mariadb") or CHARSET.charset_by_id(cs, "mysql")
    codec = python_codec(info.name if info else None)
    if codec == "utf_8":
        return q
    try:
        data = ev.packet.packet.get_all_data()
        end = 20 + ev.event_size
        qlen = ev.event_size - 13 - ev.status_vars_length - ev.schema_length - 1
        raw = data[end - qlen:end]
        if qlen <= 0 or data[end - qlen - 1] != 0:
            return q
        return raw.decode(codec)
    except (AttributeError, UnicodeDecodeError, IndexError, LookupError):
        return q

