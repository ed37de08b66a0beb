"""Capture a PostgreSQL database into a ddlcore change log: logical decoding with DDL in order.

Owns: the capture loop — a logical replication slot with the built-in ``pgoutput`` plugin
(``proto_version '1'``, ``publication_names``, ``messages 'true'``) read over the streaming
replication protocol with psycopg2's ``LogicalReplicationConnection``; the optional snapshot
exported by the slot (schema as ``snapshot`` DDL events holding the catalog description, every
row as ``op: "r"``); turning pgoutput messages (``pgoutput``) into change-log events; the DDL
messages of the event trigger (``event_trigger``) into ``ddl`` events with their ``catalog``;
the Relation-message drift checks against the capture's schema history (``relations``); the
checkpoint's LSN, confirmed to the slot only once the change log it covers is on disk and the
checkpoint saved (``ChangeLogOutput``'s ``on_checkpoint``).  The output directory, change-log
writer, counts, checkpoint protocol, history, filters, lock, warnings and progress are core's
(``ddlcore.capture``), shared with the MySQL and TiDB captures.
Must not know: the converter, Spark, the grammar.

Why psycopg2: psycopg 3 has no replication protocol (no ``START_REPLICATION`` / CopyBoth
streaming, no standby status updates); psycopg2's ``LogicalReplicationConnection`` has them.
The ``pg_logical_slot_*_binary_changes`` functions would do without it but confirm what they
return at once, before the change log is durable.

Output directory ``DIR``::

    changelog.jsonl     the change log (``ddlcore.changelog``), seq 1, 2, 3, ... without gaps
    checkpoint.json     last committed seq, the LSN to resume from (the end of the last
                        complete transaction), the byte length of changelog.jsonl it covers
    history.sqlite      the schema history of the DDL events written (``ddlcore.history``)
    capture.log         warnings, appended
    capture.lock        held while a capture runs

Values are pgoutput's text (the type's output function) exactly as sent; the session settings
that shape that text are fixed on every connection (``SESSION_SETTINGS``) and recorded in the
``source`` event.  See docs/capture.md, "PostgreSQL".

Python API::

    from ddlcore_postgres.capture import CaptureOptions, ConnectionSettings, PostgresCapture
    opts = CaptureOptions(ConnectionSettings(dsn="host=/run/postgresql dbname=shop user=cdc"),
                          slot="ddlcore", publication="ddlcore", out="cdc-out", until_end=True)
    stats = PostgresCapture(opts).run()
"""

from __future__ import annotations

import json
import re
import select
import time
import uuid
from contextlib import closing
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, ClassVar

from ddlcore import capture as _core
from ddlcore.capture import (HISTORY_NAME, CaptureFilter, CaptureHistory, CheckpointFile, Progress as _Progress,
                             distribution_version, remove_history as _remove_history,
                             shorten)
from ddlcore.changelog import SourceInfo
from ddlcore.model import TableId

from . import pgoutput as po, publication as pubdef
from .catalog import MessageError, parse_ddl_message, quote_ident, render_statements, table_json_from_description
from .event_trigger import MESSAGE_PREFIX, status as trigger_status
from .relations import Layout, build_layout
from .slots import SlotClaims

__all__ = ["ConnectionSettings", "CaptureOptions", "CaptureStats", "Checkpoint", "CaptureError",
           "PostgresCapture", "ServerInfo", "capture", "SNAPSHOT_MODES", "SESSION_SETTINGS",
           "SYSTEM_SCHEMAS"]

SNAPSHOT_MODES = ("initial", "schema_only", "never")
CHECKPOINT_FORMAT = 1
CAPTURE_TOOL = "ddlcore capture postgres"
#: schemas whose tables are never captured (without --include): the system's and ddlcore's own
SYSTEM_SCHEMAS = frozenset({"pg_catalog", "information_schema", "pg_toast", "ddlcore"})
#: the session settings every capture connection runs with: they decide the text of values
#: (PostgreSQL 15 manual 20.11.2 "Locale and Formatting", 8.5.2, 8.4): ISO dates, the
#: ``postgres`` interval style, timestamptz in UTC, shortest exact floats, hex bytea, UTF-8
SESSION_SETTINGS = {"DateStyle": "ISO", "IntervalStyle": "postgres", "TimeZone": "UTC",
                    "extra_float_digits": "3", "bytea_output": "hex", "client_encoding": "UTF8"}
#: settings recorded in the source event (the converters read values with them)
RECORDED_SETTINGS = ("DateStyle", "IntervalStyle", "TimeZone", "extra_float_digits", "bytea_output",
                     "lc_monetary", "lc_numeric", "server_encoding", "client_encoding",
                     "standard_conforming_strings", "integer_datetimes", "wal_level")
#: the prefix of the non-transactional message that marks "the end" for --until-end
END_MARKER_PREFIX = "ddlcore-end"
_ABSENT = {"$absent": True}
#: seconds a run waits for its slot to be released by a walsender going away (``_start_replication``)
SLOT_BUSY_WAIT = 15.0
#: seconds between the checks, while the stream is idle, that the publication still streams
#: what it did when the output began (``publication.changes``)
PUBLICATION_CHECK_INTERVAL = 5.0


class CaptureError(_core.CaptureError):
    """The capture cannot start or go on: a server not set up for logical decoding, missing
    event triggers or publication, a lost slot, an output directory that is not a capture's."""


# ============================================================================ settings


@dataclass(frozen=True)
class ConnectionSettings:
    """How to reach the database: a libpq ``dsn`` (``"host=... dbname=... user=..."`` or a
    ``postgresql://`` URI), and/or ``host``/``port``/``user``/``password``/``dbname`` (which
    override the DSN's).  The role needs the ``REPLICATION`` attribute (or a superuser),
    ``SELECT`` on the captured tables, and ``CONNECT`` on the database."""

    dsn: str | None = None
    host: str | None = None
    port: int | None = None
    user: str | None = None
    password: str | None = None
    dbname: str | None = None

    def params(self) -> dict[str, str]:
        """The libpq keywords (``psycopg2.extensions.parse_dsn``)."""
        from psycopg2.extensions import parse_dsn

        params = dict(parse_dsn(self.dsn)) if self.dsn else {}
        for key in ("host", "port", "user", "password", "dbname"):
            value = getattr(self, key)
            if value is not None:
                params[key] = str(value)
        return params

    def connect(self, *, replication: bool = False, **kw: Any) -> Any:
        """A psycopg2 connection with ``SESSION_SETTINGS`` (added to the DSN's ``options``);
        ``replication``: a ``LogicalReplicationConnection``."""
        import psycopg2
        import psycopg2.extras

        params = self.params()
        fixed = " ".join(f"-c {k}={v}" for k, v in SESSION_SETTINGS.items())
        params["options"] = (params.get("options", "") + " " + fixed).strip()
        params.setdefault("connect_timeout", "10")
        params.setdefault("application_name", "ddlcore capture")
        if replication:
            kw["connection_factory"] = psycopg2.extras.LogicalReplicationConnection
        return psycopg2.connect(**params, **kw)

    def __repr__(self) -> str:  # never show the password
        p = {k: v for k, v in self.params().items() if k in ("host", "port", "user", "dbname")}
        return f"ConnectionSettings({p})"


@dataclass(frozen=True)
class CaptureOptions:
    """What to capture and how.

    * ``slot``: the logical replication slot (created by the first run with ``pgoutput``);
      ``publication``: the publication naming the tables whose rows are streamed (it must
      exist: ``CREATE PUBLICATION name FOR ALL TABLES``).
    * ``snapshot``: ``initial`` (the slot's exported snapshot: schema and every row, then
      stream), ``schema_only`` (schema, then stream), ``never`` (stream only).  First run only.
    * ``until_end``: stop once every transaction committed before the run started is written.
    * ``include`` / ``exclude``: table patterns (``schema.table``, ``schema.*``,
      ``schema.prefix%``, ``db.schema.table``; ``ddlcore.history.filters``) selecting the
      tables whose rows are written; without ``include``: every table outside
      ``SYSTEM_SCHEMAS``.  DDL events are always all written.
    * ``checkpoint_interval``: seconds between checkpoints (0: every transaction).
    * ``retry_for``: seconds to keep reconnecting (exponential backoff) when the connection
      drops while streaming (0: fail at once).
    * ``stop_after_events``: end (cleanly, at the next transaction end) after writing this
      many events in this run (tests)."""

    connection: ConnectionSettings
    slot: str
    publication: str
    out: Path | str
    snapshot: str = "initial"
    until_end: bool = False
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    checkpoint_interval: float = 0.5
    progress: bool = True
    stop_after_events: int | None = None
    retry_for: float = 300.0
    retry_wait_max: float = 10.0
    status_interval: float = 1.0

    def __post_init__(self) -> None:
        if self.snapshot not in SNAPSHOT_MODES:
            raise ValueError(f"snapshot must be one of {', '.join(SNAPSHOT_MODES)}, not {self.snapshot!r}")
        for what in ("slot", "publication"):
            value = getattr(self, what)
            if not value:
                raise ValueError(f"--{what} is required")
        if not re.fullmatch(r"[a-z0-9_]{1,63}", self.slot):
            raise ValueError(f"slot name {self.slot!r}: lower-case letters, digits and _ only (at most 63)")
        object.__setattr__(self, "out", Path(self.out))
        object.__setattr__(self, "include", tuple(self.include))
        object.__setattr__(self, "exclude", tuple(self.exclude))


# ============================================================================ state


@dataclass(frozen=True)
class Checkpoint(CheckpointFile):
    """What a restart needs: ``seq`` (last committed seq), ``lsn`` (``X/Y``: the end of the
    last complete transaction written — streaming resumes after it), ``changelog_bytes``,
    ``phase`` (``snapshot`` while the first run's snapshot runs — a restart then starts over —
    or ``streaming``), the slot (named only once it exists: ``slots``) and publication, the
    filters, the epoch (the identity the slot's claim carries), the source event in force, and
    ``publication_def``: the publication's definition when the output began
    (``publication.Publication``; ``None`` in a checkpoint written before it was kept).
    ``load`` / ``save``: ``ddlcore.capture.CheckpointFile``."""

    error: ClassVar[type[Exception]] = CaptureError

    seq: int
    lsn: str
    changelog_bytes: int
    phase: str = "streaming"
    slot: str | None = None
    publication: str | None = None
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    epoch: str | None = None
    source: dict[str, Any] | None = None
    updated: str | None = None
    publication_def: dict[str, Any] | None = None

    @property
    def position(self) -> str:
        return self.lsn

    def to_json(self) -> dict[str, Any]:
        return {"format": CHECKPOINT_FORMAT, "seq": self.seq, "lsn": self.lsn,
                "changelog_bytes": self.changelog_bytes, "phase": self.phase, "slot": self.slot,
                "publication": self.publication, "include": list(self.include),
                "exclude": list(self.exclude), "epoch": self.epoch, "source": self.source,
                "updated": self.updated, "publication_def": self.publication_def}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Checkpoint":
        if d.get("format") != CHECKPOINT_FORMAT or "lsn" not in d:
            raise CaptureError(f"not a PostgreSQL capture checkpoint (format {d.get('format')!r})")
        return cls(int(d["seq"]), str(d["lsn"]), int(d["changelog_bytes"]), d.get("phase", "streaming"),
                   d.get("slot"), d.get("publication"), tuple(d.get("include") or ()),
                   tuple(d.get("exclude") or ()), d.get("epoch"), d.get("source"), d.get("updated"),
                   d.get("publication_def"))


@dataclass
class CaptureStats(_core.CaptureStats):
    """``ddlcore.capture.CaptureStats`` plus: ``snapshot_tables`` and ``snapshot_rows`` the
    first run's snapshot wrote, ``reconnects`` after a lost connection, ``drift``: the
    Relation messages that disagreed with the history (``relations``), as text."""

    snapshot_tables: int = 0
    snapshot_rows: int = 0
    reconnects: int = 0
    drift: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "snapshot_tables": self.snapshot_tables,
                "snapshot_rows": self.snapshot_rows, "reconnects": self.reconnects, "drift": list(self.drift)}


@dataclass(frozen=True)
class ServerInfo:
    """The facts about the source the capture depends on: ``system_identifier`` and
    ``timeline`` (``IDENTIFY_SYSTEM``), ``version``, ``database``, the session ``settings``
    of a capture connection (``RECORDED_SETTINGS``), the default ``search_path`` (as
    ``current_schemas(false)`` resolves it for the capture's role)."""

    system_identifier: str
    timeline: int
    version: str
    version_num: int
    database: str
    settings: dict[str, str]
    search_path: tuple[str, ...]
    wal_position: str = "0/0"

    def source(self, epoch: str) -> SourceInfo:
        """The change log's ``source`` event (docs/changelog.md)."""
        return SourceInfo(dialect="postgres", epoch=epoch, flavor=None,
                          server={"system_identifier": self.system_identifier, "version": self.version},
                          parser_options={"search_path": list(self.search_path)},
                          settings=dict(self.settings),
                          capture={"tool": CAPTURE_TOOL, "version": distribution_version("ddlcore-postgres")})

    @classmethod
    def read(cls, conn: Any) -> "ServerInfo":
        """From a replication connection (``IDENTIFY_SYSTEM`` and ``SHOW``: the settings a
        walsender of this role has, which shape pgoutput's text)."""
        cur = conn.cursor()
        cur.execute("IDENTIFY_SYSTEM")
        sysid, timeline, xlogpos, dbname = cur.fetchone()
        settings = {}
        for name in RECORDED_SETTINGS + ("server_version", "server_version_num"):
            cur.execute(f"SHOW {name}")
            settings[name] = str(cur.fetchone()[0])
        cur.execute("SELECT current_schemas(false)")
        path = cur.fetchone()[0]
        if isinstance(path, str):  # a replication connection returns arrays as text
            path = [p.strip().strip('"') for p in path.strip("{}").split(",") if p.strip()]
        version = settings.pop("server_version")
        num = int(settings.pop("server_version_num"))
        return cls(str(sysid), int(timeline), version, num, str(dbname or ""), settings, tuple(path), str(xlogpos))


class _Stop(Exception):
    """Internal: leave the stream loop."""


# ============================================================================ the capture


class PostgresCapture(_core.Capture):
    """One capture of one database into one output directory (module docstring).

    ``run()`` snapshots (first run only), streams, and returns ``CaptureStats``; ``stop()``
    (another thread, a signal handler) ends the run at the next message, keeping the last
    complete transaction's checkpoint (``ddlcore.capture.Capture``)."""

    error = CaptureError
    stats: CaptureStats

    def __init__(self, options: CaptureOptions, *, on_warning: Callable[[str], None] | None = None):
        # a checkpoint written confirms its LSN to the slot (``_confirm``)
        super().__init__(options.out, CaptureStats(), on_warning=on_warning,
                         checkpoint_interval=options.checkpoint_interval, on_checkpoint=self._confirm,
                         stop_after_events=options.stop_after_events)
        self.options = options
        self.server: ServerInfo | None = None
        self.filter: CaptureFilter | None = None
        self._progress: _Progress | None = None
        self._source: dict[str, Any] | None = None
        # stream state
        self._cursor: Any = None
        self._tx: str | None = None
        self._ts: int | None = None
        self._in_tx = False
        self._relations: dict[int, po.Relation] = {}
        self._types: dict[int, tuple[str, str]] = {}
        self._layouts: dict[int, tuple[int, Layout]] = {}  # relid: (the history's schema_seq, layout)
        self._type_names: dict[tuple[int, int], str | None] = {}
        self._column_lists: dict[tuple[str, str], frozenset[str] | None] = {}
        self._column_lists_seq = 0  # the schema_seq they were read at (a DDL may change them)
        self._catalog_conn: Any = None
        self._end_token: str | None = None
        self._confirmed: str | None = None
        self._drift_reported: set[tuple] = set()
        self._publication_checked = 0.0  # time.monotonic() of the last _check_publication

    def _run(self) -> CaptureStats:
        self.server = self._read_server()
        cp = self._prepare_output()
        self.filter = CaptureFilter(cp.include, cp.exclude, system_schemas=SYSTEM_SCHEMAS)
        history = self._log.history = CaptureHistory(self.out / HISTORY_NAME, dialect="postgres")
        if history.unavailable:
            self._warn(f"schema history unavailable, drift checks are off: {history.unavailable}")
        self._progress = self._warn.progress = _Progress(self.options.progress)
        self._progress.start()
        try:
            self._check_publication()
            cp = self._write_source(cp)
            if cp.phase == "snapshot":
                cp = self._snapshot(cp)
            self._stream_with_retry(cp)
            self._check_publication()  # until_end: an ALTER PUBLICATION during the run
        except _Stop:
            pass
        finally:
            self._progress.update(self.stats, "done", force=True)
            self._progress.stop()
            self._finish()
        return self.stats

    # -- setup --------------------------------------------------------------------------------

    def _read_server(self) -> ServerInfo:
        """Server facts and the checks that must pass before anything is written: logical
        decoding on, the event triggers installed, the publication there, the session
        settings taken."""
        opts = self.options
        conn = opts.connection.connect(replication=True)
        try:
            info = ServerInfo.read(conn)
        finally:
            conn.close()
        if info.version_num < 150000:
            self._warn(f"PostgreSQL {info.version}: ddlcore's capture is written to and tested on PostgreSQL 15")
        if info.settings.get("wal_level") != "logical":
            raise CaptureError(f"wal_level is {info.settings.get('wal_level')}, not logical: logical decoding needs "
                               f"wal_level = logical in postgresql.conf (and a restart)")
        wanted = {"bytea_output": "hex", "IntervalStyle": "postgres", "client_encoding": "UTF8"}
        for name, value in wanted.items():
            if info.settings.get(name) != value:
                raise CaptureError(f"the capture's session runs with {name} = {info.settings.get(name)}, not "
                                   f"{value}: values would not read as the converters expect")
        if not info.settings.get("DateStyle", "").startswith("ISO"):
            raise CaptureError(f"the capture's session runs with DateStyle = {info.settings.get('DateStyle')}, "
                               f"not ISO")
        with closing(opts.connection.connect()) as conn:
            st = trigger_status(conn)
            problem = st.problem()
            if problem:
                raise CaptureError(f"{problem}: DDL would not reach the change log. Run `ddlcore capture postgres "
                                   f"--install` (as a superuser) on database {info.database} first")
            with conn.cursor() as cur:
                cur.execute("SELECT pubname FROM pg_catalog.pg_publication WHERE pubname = %s",
                            (opts.publication,))
                if cur.fetchone() is None:
                    raise CaptureError(f"publication {opts.publication} does not exist in database {info.database}: "
                                       f"create it, e.g. CREATE PUBLICATION {quote_ident(opts.publication)} "
                                       f"FOR ALL TABLES")
            conn.rollback()
        return info

    def _prepare_output(self) -> Checkpoint:
        """Resume from the checkpoint (the change log opened and cut to it), or start afresh
        (the change log opened empty)."""
        opts = self.options
        cp = Checkpoint.load(self.checkpoint_path)
        if cp is not None and cp.phase == "streaming":
            if cp.slot != opts.slot or cp.publication != opts.publication:
                raise CaptureError(f"{self.out} was captured from slot {cp.slot} / publication {cp.publication}, "
                                   f"not {opts.slot} / {opts.publication}")
            self._claims(cp.epoch).check_owned(opts.slot)  # never advance another capture's slot
            self._log.resume(cp, opts.include, opts.exclude)  # cut to it (CaptureError when shorter)
            return cp
        self._log.check_new()
        _remove_history(self.out / HISTORY_NAME)
        # an interrupted first run starts over with its epoch (its claims stay its own) and
        # names its slot (``slot``) only once the slot exists (``_snapshot``)
        epoch = cp.epoch if cp is not None and cp.epoch else str(uuid.uuid4())
        base = Checkpoint(0, "0/0", 0, "snapshot", cp.slot if cp is not None else None, opts.publication,
                          opts.include, opts.exclude, epoch=epoch,
                          publication_def=self._publication_def())
        self._log.start(base)  # an empty change log; base saved
        return base

    def _claims(self, epoch: str | None) -> SlotClaims:
        """The slot claims of this directory (``slots``: one slot, one capture)."""
        if not epoch:
            raise CaptureError(f"{self.checkpoint_path} names no epoch: not a capture directory this version can "
                               f"prove its slot's ownership for; capture into a new directory")
        return SlotClaims(self.options.connection, epoch, self.out, CaptureError)

    def _publication_def(self) -> dict[str, Any] | None:
        with closing(self.options.connection.connect()) as conn:
            found = pubdef.read(conn, self.options.publication)
            conn.rollback()
        return None if found is None else found.to_json()

    def _check_publication(self) -> None:
        """Stop (``CaptureError``) when the publication no longer streams what it did when this
        output began (``publication.changes``); a checkpoint without the definition (written
        before it was kept) takes today's."""
        cp, name = self._log.checkpointed, self.options.publication
        self._publication_checked = time.monotonic()
        conn = self._catalog()
        current = pubdef.read(conn, name)
        if current is None:
            raise CaptureError(f"publication {name} was dropped while capturing: nothing of its tables streams")
        if cp is None or cp.publication_def is None:
            if cp is not None:
                self._log.checkpointed = replace(cp, publication_def=current.to_json())
            return
        recorded = pubdef.Publication.from_json(cp.publication_def)
        diff = pubdef.changes(recorded, current, pubdef.existing_oids(conn, [t[0] for t in recorded.tables]))
        if diff:
            raise CaptureError(f"publication {name} changed since this output began ({'; '.join(diff)}): the "
                               f"change log lacks the rows it did not stream then, so the output would differ "
                               f"from the server; capture into a new output directory with a new slot")

    # -- events -------------------------------------------------------------------------------

    def _boundary(self, lsn: str) -> None:
        """A transaction ended at ``lsn`` (its end): everything written is committed, and a
        restart resumes streaming after ``lsn``."""
        self._tx, self._ts, self._in_tx = None, None, False
        if self._log.commit(replace(self._log.checkpointed, lsn=lsn, phase="streaming")):
            raise _Stop()  # stop_after_events: the checkpoint is written

    def _confirm(self, cp: Checkpoint) -> None:
        """``ChangeLogOutput.on_checkpoint``: the change log up to ``cp`` is on disk and the
        checkpoint saved — only now confirm its LSN to the slot (``flush_lsn``)."""
        cur, lsn = self._cursor, cp.lsn
        if cur is None or lsn == self._confirmed:
            return
        try:
            cur.send_feedback(write_lsn=po.parse_lsn(lsn), flush_lsn=po.parse_lsn(lsn), force=True)
            self._confirmed = lsn
        except Exception as exc:  # noqa: BLE001 - the next run confirms it; nothing is lost
            self._warn(f"could not confirm {lsn} to slot {self.options.slot}: {exc}")

    def _finish(self) -> None:
        """Checkpoint the last complete transaction, cut what follows it, close everything."""
        try:
            self._log.finish()
        finally:
            self._close_stream()
            if self._catalog_conn is not None:
                try:
                    self._catalog_conn.close()
                except Exception:  # noqa: BLE001
                    pass
                self._catalog_conn = None

    # -- the source event ---------------------------------------------------------------------

    def _write_source(self, cp: Checkpoint) -> Checkpoint:
        """The ``source`` event first in a new log, and again when a restart finds the
        server's settings changed; another ``system_identifier`` (another cluster: its LSNs
        mean something else) stops the capture."""
        s = self.server
        assert s is not None
        epoch = cp.epoch or str(uuid.uuid4())
        src = s.source(epoch).to_json()
        last = cp.source
        if last is not None and last.get("server", {}).get("system_identifier") != s.system_identifier:
            raise CaptureError(f"the server is not the one this capture read: system_identifier "
                               f"{s.system_identifier}, the change log's source says "
                               f"{last.get('server', {}).get('system_identifier')} (capture it into a new directory)")
        same = last is not None and {k: v for k, v in last.items() if k != "capture"} == \
            {k: v for k, v in src.items() if k != "capture"}
        self._source = last if same else src
        self._log.checkpointed = cp = replace(cp, epoch=epoch, source=self._source)
        if same:
            return cp
        self._log.emit("source", cp.lsn if cp.phase == "streaming" else s.wal_position, int(time.time() * 1000),
                   source=src)
        if cp.phase == "streaming":  # durable now: the next run must not write it again
            self._log.checkpoint(cp)
            return self._log.checkpointed
        return cp

    # -- snapshot -----------------------------------------------------------------------------

    def _snapshot(self, cp: Checkpoint) -> Checkpoint:
        """Create the slot (exporting its snapshot for ``initial`` / ``schema_only``) and, in
        that snapshot, write the schema and (``initial``) every row; the checkpoint then
        points at the slot's consistent point, where streaming starts."""
        opts = self.options
        claims = self._claims(cp.epoch)
        claim = claims.claim(opts.slot)  # before the slot exists; another capture's slot: CaptureError
        if cp.slot and cp.slot != opts.slot:
            claims.drop_own(cp.slot)  # an interrupted first run's slot under another name: its own only
        if claim.status == "own":
            claims.drop_own(opts.slot, release=False)  # this directory's interrupted run created it
        rconn = opts.connection.connect(replication=True)
        try:
            rcur = rconn.cursor()
            export = opts.snapshot != "never"
            try:
                rcur.execute(f"CREATE_REPLICATION_SLOT {opts.slot} LOGICAL pgoutput "
                             f"{'EXPORT_SNAPSHOT' if export else 'NOEXPORT_SNAPSHOT'}")
            except Exception as exc:
                if "already exists" in str(exc):  # created by hand since the claim
                    raise CaptureError(f"replication slot {opts.slot} already exists: a first run creates its own "
                                       f"slot (choose another --slot)") from None
                raise
            _name, consistent_point, snapshot_name, _plugin = rcur.fetchone()
            # the slot exists from here on (claimed by this epoch): a run killed now starts
            # over and drops it first; saved through core's checkpoint protocol like every other
            self._log.checkpoint(replace(cp, slot=opts.slot))
            cp = self._log.checkpointed
            ts = int(time.time() * 1000)
            if export:
                self._snapshot_read(snapshot_name, consistent_point, ts)
        finally:
            rconn.close()
        self._log.checkpoint(replace(cp, lsn=consistent_point, phase="streaming"))
        return self._log.checkpointed

    def _snapshot_read(self, snapshot_name: str, lsn: str, ts: int) -> None:
        """Inside the exported snapshot: schemas, enum types, domains, the captured tables'
        descriptions (``ddl`` events, ``snapshot: true``, with the ``catalog``), then their
        rows (``op: "r"``), values as the type output functions print them."""
        import psycopg2.extensions

        opts, s = self.options, self.server
        assert s is not None and self.filter is not None
        conn = opts.connection.connect()
        try:
            conn.set_session(isolation_level="REPEATABLE READ", readonly=True)
            cur = conn.cursor()
            cur.execute("SET TRANSACTION SNAPSHOT %s", (snapshot_name,))
            # every value as the server's text, exactly (no Python conversion)
            cur.execute("SELECT oid FROM pg_catalog.pg_type")
            oids = tuple(r[0] for r in cur.fetchall())
            psycopg2.extensions.register_type(
                psycopg2.extensions.new_type(oids, "DDLCORE_RAW_TEXT", lambda value, _cur: value), conn)
            cur.execute("SELECT pg_catalog.to_json(current_schemas(false))::text")
            path = json.loads(cur.fetchone()[0])
            db = s.database
            for text in _schema_statements(cur):
                self._log.emit("ddl", lsn, ts, db, None, text, snapshot=True, search_path=path)
            cur.execute("SELECT c.oid, n.nspname, c.relname, c.relkind FROM pg_catalog.pg_class c "
                        "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
                        "WHERE ddlcore.is_described(c.oid) ORDER BY c.oid")
            # every table's definition (the history needs them all: DDL of every table is
            # written); rows of the captured ones only
            tables = cur.fetchall()
            # what the publication publishes: its tables, their columns (a column list leaves
            # some out) and row filters (PostgreSQL 15 pg_publication_tables); the snapshot
            # reads the same, so that it holds nothing the stream would not
            cur.execute("SELECT schemaname, tablename, pg_catalog.to_json(attnames)::text, rowfilter "
                        "FROM pg_catalog.pg_publication_tables WHERE pubname = %s", (opts.publication,))
            published = {(r[0], r[1]): (frozenset(json.loads(r[2] or "[]")), r[3]) for r in cur.fetchall()}
            described = []
            for oid, ns, name, kind in tables:
                cur.execute("SELECT ddlcore.describe_table(%s)::text", (oid,))
                doc = json.loads(cur.fetchone()[0])
                text = ";\n".join(render_statements(doc))
                self._log.emit("ddl", lsn, ts, db, None, text, snapshot=True, search_path=path,
                           catalog={"tables": [table_json_from_description(doc, db)], "dropped": []})
                described.append((doc, kind))
            self.stats.snapshot_tables = len(described)
            if opts.snapshot == "initial":
                for doc, kind in described:
                    what = published.get((doc["schema"], doc["name"]))
                    if what is not None and self.filter.captures(db, doc["name"], schema=doc["schema"]):
                        self._snapshot_rows(conn, doc, kind, lsn, ts, columns=what[0], row_filter=what[1])
            conn.rollback()
        finally:
            conn.close()

    def _snapshot_rows(self, conn: Any, doc: dict, kind: str, lsn: str, ts: int, *,
                       columns: frozenset[str] | None = None, row_filter: str | None = None) -> None:
        """Every row of one table (``FROM ONLY``; a partitioned table published through its
        root: its partitions' rows) as ``op: "r"`` events in the table's column order.  Only
        what the publication publishes: rows that pass its ``row_filter``; a column outside
        its column list (``columns``) is absent, as in the stream."""
        from ddlcore import raw

        s = self.server
        assert s is not None
        cols = [c["name"] for c in doc["columns"]]
        hidden = [bool(columns) and c["name"] not in columns and not c.get("generated") for c in doc["columns"]]
        target = f"{quote_ident(doc['schema'])}.{quote_ident(doc['name'])}"
        select = [("NULL" if h else quote_ident(c)) for c, h in zip(cols, hidden)]
        sql = (f"SELECT {', '.join(select) or 'NULL'} FROM {'' if kind == 'p' else 'ONLY '}{target}"
               + (f" WHERE {row_filter}" if row_filter else ""))
        cur = conn.cursor(name=f"ddlcore_snapshot_{doc['oid']}")
        cur.itersize = 2000
        try:
            cur.execute(sql)
            while True:
                rows = cur.fetchmany(2000)
                if not rows:
                    break
                for row in rows:
                    after = [_ABSENT if h else None if v is None else raw.encode_json(v)
                             for v, h in zip(row, hidden)] if cols else []
                    self._log.emit("r", lsn, ts, s.database, doc["name"], None, None, after, schema=doc["schema"])
                self.stats.snapshot_rows += len(rows)
                if self._progress is not None:
                    self._progress.update(self.stats, f"snapshot {doc['schema']}.{doc['name']}")
                if self._stop.is_set():
                    raise _Stop()
        finally:
            cur.close()

    # -- streaming ----------------------------------------------------------------------------

    def _stream_with_retry(self, cp: Checkpoint) -> None:
        """Stream; when the connection drops, reconnect with exponential backoff for up to
        ``retry_for`` seconds, each time from the last checkpoint (the change log is cut back
        to it first: ``ChangeLogOutput.read_with_retry``)."""
        opts = self.options
        self._log.read_with_retry(self._stream, cp, lost=_is_connection_lost, retry_for=opts.retry_for,
                                  wait_max=opts.retry_wait_max, on_rewind=self._rewound)

    def _rewound(self) -> None:
        """The change log is back at the last checkpoint (made durable and confirmed first):
        forget the connection and the transaction that was being read."""
        self.stats.reconnects += 1
        self._close_stream()
        self._tx, self._in_tx = None, False

    def _close_stream(self) -> None:
        cur, self._cursor = self._cursor, None
        if cur is not None:
            try:
                cur.connection.close()
            except Exception:  # noqa: BLE001
                pass

    def _stream(self, cp: Checkpoint) -> None:
        """``START_REPLICATION`` at the checkpoint's LSN and handle every message until the
        end (``until_end``), a stop, or an error."""
        opts = self.options
        self._relations.clear()
        self._layouts.clear()
        self._confirmed = None
        if opts.until_end:
            self._end_token = self._emit_end_marker()
        cur = self._start_replication(cp)
        progress = self._progress
        while True:
            if self._stop.is_set():
                raise _Stop()
            msg = cur.read_message()
            if msg is None:
                if self._log.pending is not None and not self._in_tx:
                    self._log.checkpoint()  # idle: make the last transaction durable now
                if time.monotonic() >= self._publication_checked + PUBLICATION_CHECK_INTERVAL:
                    self._check_publication()
                try:
                    select.select([cur], [], [], 0.5)
                except InterruptedError:
                    pass
                continue
            try:
                decoded = po.decode(msg.payload)
            except po.PgOutputError as exc:
                raise CaptureError(f"at {po.format_lsn(msg.data_start)}: {exc}; the capture stopped at the last "
                                   f"complete transaction before it") from None
            if self._handle(decoded, msg.data_start):
                return
            if progress is not None:
                progress.update(self.stats, "streaming")

    def _start_replication(self, cp: Checkpoint) -> Any:
        """A replication connection streaming from the slot at ``cp.lsn``.  A slot still held
        by a walsender that is going away — the previous run's, just closed or killed; the
        server notices a closed connection a moment later — is waited for, up to
        ``SLOT_BUSY_WAIT`` seconds; a slot held longer is another reader's: ``CaptureError``
        naming its PID."""
        import psycopg2

        opts = self.options
        deadline = time.monotonic() + SLOT_BUSY_WAIT
        while True:
            cur = opts.connection.connect(replication=True).cursor()
            self._cursor = cur
            try:
                cur.start_replication(slot_name=opts.slot, decode=False, start_lsn=cp.lsn,
                                      status_interval=max(1, int(opts.status_interval)),
                                      options={"proto_version": "1", "publication_names": opts.publication,
                                               "messages": "true"})
                return cur
            except psycopg2.errors.ObjectInUse as exc:
                self._close_stream()
                if time.monotonic() >= deadline:
                    raise CaptureError(f"slot {opts.slot}: {str(exc).strip()} for more than {SLOT_BUSY_WAIT:g} s: "
                                       f"another capture is reading it (one reader per slot)") from None
                time.sleep(0.2)

    def _emit_end_marker(self) -> str:
        """For ``until_end``: a non-transactional message written now; once the stream
        delivers it, every transaction that committed before it has been delivered."""
        token = uuid.uuid4().hex
        with closing(self.options.connection.connect()) as conn, conn.cursor() as cur:
            cur.execute("SELECT pg_logical_emit_message(false, %s, %s)", (END_MARKER_PREFIX, token))
            conn.commit()
        return token

    # -- messages -----------------------------------------------------------------------------

    def _handle(self, m: Any, data_start: int) -> bool:
        """One decoded message; returns ``True`` when the run is over (the end marker)."""
        kind = type(m)
        if kind is po.Begin:
            self._in_tx = True
            self._tx = str(m.xid)
            self._ts = po.pg_time_to_unix_ms(m.commit_time)
            self.stats.lag_seconds = max(0.0, time.time() - self._ts / 1000)
        elif kind is po.Commit:
            self._boundary(po.format_lsn(m.end_lsn))
        elif kind is po.Relation:
            self._relations[m.relid] = m
            self._layouts.pop(m.relid, None)
        elif kind is po.Type:
            self._types[m.oid] = (m.namespace, m.name)
            self._layouts.clear()
        elif kind is po.Insert:
            self._on_row("c", m.relid, data_start, None, m.new, None)
        elif kind is po.Update:
            self._on_row("u", m.relid, data_start, m.old_kind, m.new, m.old)
        elif kind is po.Delete:
            self._on_row("d", m.relid, data_start, m.old_kind, None, m.old)
        elif kind is po.Truncate:
            self._on_truncate(m, data_start)
        elif kind is po.Message:
            return self._on_message(m)
        return False

    def _relation(self, relid: int) -> po.Relation:
        rel = self._relations.get(relid)
        if rel is None:
            raise CaptureError(f"a change of relation {relid} arrived before its Relation message (protocol error)")
        return rel

    def _layout(self, rel: po.Relation, where: str) -> Layout:
        cached = self._layouts.get(rel.relid)
        if cached is not None and cached[0] == self._log.schema_seq:
            return cached[1]
        s = self.server
        assert s is not None
        table = None
        history = self._log.history
        if history is not None and history.available:
            table = history.table_at(TableId(s.database, rel.namespace, rel.name), self._log.seq)
        layout = build_layout(rel, table, type_name=self._type_name, user_types=self._types, where=where,
                              column_list=self._column_list(rel.namespace, rel.name))
        self._layouts[rel.relid] = (self._log.schema_seq, layout)
        sig = (rel.namespace, rel.name, layout.drift)
        if layout.drift and sig not in self._drift_reported:
            self._drift_reported.add(sig)
            for text in layout.drift:
                self.stats.drift.append(text)
                self._warn(text)
        return layout

    def _on_row(self, op: str, relid: int, data_start: int, old_kind: str | None,
                new: tuple | None, old: tuple | None) -> None:
        rel = self._relation(relid)
        s, f = self.server, self.filter
        assert s is not None and f is not None
        if not f.captures(s.database, rel.name, schema=rel.namespace):
            return
        position = po.format_lsn(data_start)
        layout = self._layout(rel, position)
        after = None if new is None else layout.image(new)
        before = None
        if op in ("u", "d"):
            if old_kind == "O" and old is not None:
                before = layout.image(old)
                if after is not None:
                    # REPLICA IDENTITY FULL: the server wrote the whole old row, TOASTed values
                    # inlined (heapam's ExtractReplicaIdentity flattens them), while the new
                    # row marks an unchanged TOASTed value 'u'. Unchanged means equal to the
                    # old value: write it, instead of absent, where the old row holds it.
                    after = [b if a == _ABSENT and b != _ABSENT else a for a, b in zip(after, before)]
            elif old is not None:
                before = layout.key_image(old)
            else:  # an Update that kept its key: the key is the new row's
                before = layout.key_image(new or ())
        extra: dict[str, Any] = {"schema": rel.namespace, "tx": self._tx}
        reason = layout.quarantine
        if reason:
            extra["quarantine"] = reason
        self._log.emit(op, position, self._ts, s.database, rel.name, None, before, after, **extra)

    def _on_truncate(self, m: po.Truncate, data_start: int) -> None:
        s, f = self.server, self.filter
        assert s is not None and f is not None
        for relid in m.relids:
            rel = self._relation(relid)
            if f.captures(s.database, rel.name, schema=rel.namespace):
                self._log.emit("t", po.format_lsn(data_start), self._ts, s.database, rel.name,
                           schema=rel.namespace, tx=self._tx)

    def _on_message(self, m: po.Message) -> bool:
        if not m.transactional:
            if m.prefix == END_MARKER_PREFIX and m.content.decode("utf-8", "replace") == self._end_token:
                self._log.checkpoint()
                return True
            if m.prefix == MESSAGE_PREFIX:
                self._warn(f"a non-transactional {MESSAGE_PREFIX!r} message at {po.format_lsn(m.lsn)} was ignored "
                           f"(the event trigger emits transactional ones only)")
            return False
        if m.prefix != MESSAGE_PREFIX:
            return False
        s = self.server
        assert s is not None
        position = po.format_lsn(m.lsn)
        try:
            doc = parse_ddl_message(m.content, database=s.database)
        except MessageError as exc:
            raise CaptureError(f"the DDL message at {position} cannot be read: {exc}; the capture stopped at "
                               f"the last complete transaction before it") from None
        if doc.error:
            self._warn(f"the event trigger could not describe the tables of {doc.tag} at {position} "
                       f"({doc.error}); the DDL text alone is recorded: {shorten(doc.query)}")
        extra: dict[str, Any] = {"tx": self._tx, "search_path": list(doc.search_path)}
        if doc.catalog is not None:
            extra["catalog"] = doc.catalog
        self._log.emit("ddl", position, self._ts, s.database, None, doc.query, **extra)
        return False

    # -- catalog lookups ----------------------------------------------------------------------

    def _catalog(self) -> Any:
        """The capture's SQL connection for catalog look-ups while streaming (autocommit)."""
        if self._catalog_conn is None or self._catalog_conn.closed:
            self._catalog_conn = self.options.connection.connect()
            self._catalog_conn.autocommit = True
        return self._catalog_conn

    def _column_list(self, schema: str, table: str) -> frozenset[str] | None:
        """The publication's explicit column list for a table (``pg_publication_rel.prattrs``,
        PostgreSQL 15), as column names today; ``None`` when it publishes every column."""
        key = (schema, table)
        if self._column_lists_seq != self._log.schema_seq:  # DDL since they were read
            self._column_lists.clear()
            self._column_lists_seq = self._log.schema_seq
        if key not in self._column_lists:
            names = None
            try:
                with self._catalog().cursor() as cur:
                    cur.execute(_COLUMN_LIST_SQL, (self.options.publication, schema, table))
                    row = cur.fetchone()
                    names = None if row is None or row[0] is None else frozenset(row[0])
            except Exception as exc:  # noqa: BLE001 - then every column counts as published
                self._warn(f"could not read the column list of {schema}.{table} in publication "
                           f"{self.options.publication} ({exc})")
            self._column_lists[key] = names
        return self._column_lists[key]

    def _type_name(self, oid: int, typmod: int) -> str | None:
        """``format_type(oid, typmod)`` of a built-in type (cached: built-in types never
        change); ``None`` when it cannot be looked up."""
        key = (oid, typmod)
        if key in self._type_names:
            return self._type_names[key]
        name = None
        try:
            with self._catalog().cursor() as cur:
                cur.execute("SELECT pg_catalog.format_type(%s, %s)", (oid, None if typmod == -1 else typmod))
                name = cur.fetchone()[0]
        except Exception as exc:  # noqa: BLE001 - the check is skipped, not the rows
            self._warn(f"could not look up type {oid} ({exc}); its columns' types are not checked")
        self._type_names[key] = name
        return name


#: a table's explicit column list in a publication (PostgreSQL 15: ``prattrs``; NULL without one)
_COLUMN_LIST_SQL = (
    "SELECT (SELECT pg_catalog.array_agg(a.attname::text) FROM pg_catalog.pg_attribute a "
    "        WHERE a.attrelid = pr.prrelid AND a.attnum = ANY (pr.prattrs)) "
    "FROM pg_catalog.pg_publication_rel pr JOIN pg_catalog.pg_publication p ON p.oid = pr.prpubid "
    "JOIN pg_catalog.pg_class c ON c.oid = pr.prrelid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
    "WHERE p.pubname = %s AND n.nspname = %s AND c.relname = %s AND pr.prattrs IS NOT NULL")

#: SQLSTATE classes and codes of a lost connection or a server going away or starting up
#: (PostgreSQL 15 manual, appendix A), or a slot still held by the walsender of a lost
#: connection (55006 object_in_use, until wal_sender_timeout ends it): worth reconnecting for
_RECONNECT_SQLSTATES = ("08", "57P01", "57P02", "57P03", "55006")


def _is_connection_lost(exc: BaseException) -> bool:
    """A lost connection, a server shutting down or starting up, or a replication stream that
    ended under the client (psycopg2 raises ``DatabaseError("no COPY in progress")`` without
    a SQLSTATE then) — not a refusal by the server (an error with another SQLSTATE)."""
    import psycopg2

    if isinstance(exc, (psycopg2.OperationalError, psycopg2.InterfaceError)):
        code = getattr(exc, "pgcode", None)
        return code is None or code.startswith(_RECONNECT_SQLSTATES)
    if isinstance(exc, psycopg2.DatabaseError):
        code = getattr(exc, "pgcode", None)
        return code is None or code.startswith(_RECONNECT_SQLSTATES)
    return isinstance(exc, (ConnectionError, EOFError))


def _schema_statements(cur: Any) -> list[str]:
    """The snapshot's schema statements before the tables: ``CREATE SCHEMA`` of every user
    schema, ``CREATE TYPE ... AS ENUM`` and ``CREATE DOMAIN`` of every user enum and domain
    (in OID order: a domain over an enum comes after it)."""
    out = []
    cur.execute("SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname NOT IN "
                "('pg_catalog', 'information_schema', 'pg_toast', 'ddlcore', 'public') AND nspname NOT LIKE 'pg\\_%%' "
                "ORDER BY oid")
    out += [f"CREATE SCHEMA {quote_ident(r[0])}" for r in cur.fetchall()]
    cur.execute("SELECT t.oid, n.nspname, t.typname, t.typtype, "
                "(SELECT pg_catalog.json_agg(e.enumlabel ORDER BY e.enumsortorder)::text FROM pg_catalog.pg_enum e "
                " WHERE e.enumtypid = t.oid), pg_catalog.format_type(t.typbasetype, t.typtypmod), t.typnotnull, "
                "t.typdefault, (SELECT pg_catalog.string_agg(pg_catalog.pg_get_constraintdef(c.oid), ' ' ORDER BY c.oid) "
                " FROM pg_catalog.pg_constraint c WHERE c.contypid = t.oid) "
                "FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace "
                "WHERE t.typtype IN ('e', 'd') AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
                "ORDER BY t.oid")
    for _oid, ns, name, typtype, labels, base, notnull, default, checks in cur.fetchall():
        qname = f"{quote_ident(ns)}.{quote_ident(name)}"
        if typtype == "e":
            items = ", ".join("'" + label.replace("'", "''") + "'" for label in json.loads(labels or "[]"))
            out.append(f"CREATE TYPE {qname} AS ENUM ({items})")
        else:
            text = f"CREATE DOMAIN {qname} AS {base}"
            if default is not None:
                text += f" DEFAULT {default}"
            if notnull in (True, "t", "true"):
                text += " NOT NULL"
            if checks:
                text += f" {checks}"
            out.append(text)
    return out


def capture(options: CaptureOptions, **kw: Any) -> CaptureStats:
    """Run one capture (``PostgresCapture(options, **kw).run()``)."""
    return PostgresCapture(options, **kw).run()

