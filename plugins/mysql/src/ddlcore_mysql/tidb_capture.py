"""Capture TiDB's secondary binlog — the ``Binlog`` protobuf messages TiDB Binlog's Drainer
writes to Kafka (``db-type = "kafka"``) — into a ddlcore change log.

Owns: reading ``Binlog`` messages (from a Kafka topic with ``confluent-kafka``, or from a file
in protobuf's delimited framing); turning a DDL message into a ``ddl`` event and each row
mutation of a DML message into a ``c``/``u``/``d`` event with raw values taken from the typed
``Column`` fields; recognising Drainer's redeliveries; checking each message's ``ColumnInfo``
against the capture's schema history (drift); the checkpoint.
Must not know: the converter, Spark, the grammar (DDL text goes to the history as is).
The output directory, change-log writer, checkpoint file, lock, history, filters and progress
are core's (``ddlcore.capture``).

The message (``proto/tidb_binlog.proto``, compiled at build time into
``ddlcore_mysql._proto.tidb_binlog_pb2``): one ``Binlog`` per transaction, ``commit_ts`` its
TSO, either ``ddl_data`` (one statement) or ``dml_data`` (tables, each with ``column_info`` and
``mutations``).  A TSO is ``physical_ms << 18 | logical``.

Events (docs/capture.md, "TiDB"):

* ``position`` = ``tx`` = the message's ``commit_ts`` as decimal text; ``ts`` = its physical
  part ``commit_ts >> 18`` (ms since 1970-01-01 UTC).
* DDL: ``database`` = ``ddl_data.schema_name`` (the session's database), ``ddl`` = the query.
* DML: ``database``/``table`` from the table message; ``row`` = the mutation's index in the
  message; Insert → ``c`` (``after``), Update → ``u`` (``before`` = ``change_row``, ``after`` =
  ``row``), Delete → ``d`` (``before``).

**Duplicates.** Drainer delivers at least once: after a restart it sends again what followed
its own last checkpoint, and it sends transactions in ``commit_ts`` order (its merger sorts
the pumps' binlogs by commit_ts).  Commit TSOs are unique per transaction.  The rule: **a
message whose ``commit_ts`` is not greater than the highest ``commit_ts`` already written is a
redelivery and is dropped** (counted in ``CaptureStats.duplicates``) — unless it was never
written: the capture remembers the commit_ts it wrote last (``recent_commits.RecentCommits``:
the last 100,000 in a run, the last 1,024 in the checkpoint, so the rule holds across capture
restarts), and a message at or below the high-water mark above what it remembers that it does
not remember is ``out of order``: its rows are written with a ``quarantine`` reason (kept,
never converted out of commit order: the pipeline quarantines them) and a DDL out of order
stops the capture.  A message older than what is remembered counts as a redelivery.
"""

from __future__ import annotations

import datetime as _dt
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator

from ddlcore import raw
from ddlcore.capture import (HISTORY_NAME, Capture, CaptureError, CaptureFilter, CaptureHistory,
                             CaptureStats, CheckpointFile, Progress, distribution_version,
                             remove_history)
from ddlcore.changelog import SourceInfo
from ddlcore.model import Table, TableId, casefold_key

from .binlog_values import Tagged, canonical_fraction
from .recent_commits import RecentCommits

__all__ = ["TidbCaptureOptions", "TidbCapture", "TidbCheckpoint", "TidbCaptureStats", "binlog_pb2",
           "read_delimited", "write_delimited", "tso_physical_ms", "column_value", "compare_column_info",
           "TIDB_PARSER_OPTIONS", "SYSTEM_DATABASES"]

CAPTURE_TOOL = "ddlcore capture tidb"
CHECKPOINT_FORMAT = 1
#: TiDB's system schemas (TiDB manual "System Tables"): rows there are not captured by default
SYSTEM_DATABASES = frozenset({"mysql", "information_schema", "performance_schema", "sys", "metrics_schema"})
#: how the history reads TiDB's DDL: the TiDB flavor, TiDB's defaults (utf8mb4 / utf8mb4_bin,
#: ``lower_case_table_names`` 2 — the only value TiDB supports, TiDB manual "System Variables"),
#: TiDB's reported MySQL version 8.0.11
TIDB_PARSER_OPTIONS: dict[str, Any] = {
    "flavor": "tidb", "character_set_server": "utf8mb4", "collation_server": "utf8mb4_bin",
    "lower_case_table_names": 2, "ansi_quotes": False, "no_backslash_escapes": False,
    "server_version": 80011}


def binlog_pb2() -> Any:
    """The module compiled from ``proto/tidb_binlog.proto`` at build time.  Raises
    ``CaptureError`` saying how to get it when the build did not produce it or protobuf is
    missing."""
    try:
        from ._proto import tidb_binlog_pb2
    except ImportError as exc:
        raise CaptureError(
            f"the TiDB binlog message module is not available ({exc}): install the plugin with its "
            f"extra, pip install 'ddlcore-mysql[tidb]' (the build compiles proto/tidb_binlog.proto)") from None
    return tidb_binlog_pb2


def tso_physical_ms(tso: int) -> int:
    """The physical part of a TiDB TSO: milliseconds since 1970-01-01 UTC (``tso >> 18``; the
    low 18 bits are a logical counter; TiDB manual "TimeStamp Oracle (TSO) in TiDB")."""
    return tso >> 18


# ============================================================================ framing


def read_delimited(fh: BinaryIO) -> Iterator[bytes]:
    """The messages of a file in protobuf's delimited framing: each message preceded by its
    length as a base-128 varint (what Java's ``writeDelimitedTo`` / ``parseDelimitedFrom``
    and Go's ``protodelim`` write).  Python's protobuf has no public API for the framing, so
    the varint prefix is read here; the messages themselves are parsed by protobuf.  Raises
    ``CaptureError`` at a truncated length or message, naming the byte offset."""
    offset = 0
    while True:
        length = shift = 0
        start = offset
        while True:
            b = fh.read(1)
            if not b:
                if shift == 0:
                    return
                raise CaptureError(f"truncated length prefix at byte {start}")
            offset += 1
            length |= (b[0] & 0x7F) << shift
            if not b[0] & 0x80:
                break
            shift += 7
            if shift > 63:
                raise CaptureError(f"length prefix at byte {start} is longer than 10 bytes")
        data = fh.read(length)
        if len(data) != length:
            raise CaptureError(f"message at byte {start} announces {length} bytes, the file holds {len(data)}")
        offset += length
        yield data


def write_delimited(fh: BinaryIO, message: Any) -> None:
    """Write one message with its varint length prefix (the framing ``read_delimited`` reads)."""
    data = message.SerializeToString()
    n = len(data)
    prefix = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            prefix.append(byte | 0x80)
        else:
            prefix.append(byte)
            break
    fh.write(bytes(prefix) + data)


# ============================================================================ values

#: Drainer's ``types.TypeToStr`` names that differ from the model's ``data_type``
_TYPE_ALIASES = {"var_string": "varchar", "bool": "tinyint", "boolean": "tinyint", "integer": "int",
                 "numeric": "decimal", "real": "double"}


def column_value(col: Any, mysql_type: str, time_zone: _dt.tzinfo | None = None) -> Any:
    """The raw value of one ``Column`` (``ddlcore.raw`` kinds) given its ``ColumnInfo.mysql_type``,
    as Drainer's translator fills it (TiDB Binlog ``DatumToColumn``):

    * ``is_null`` → ``None``; ``int64_value`` / ``uint64_value`` → the integer (unsigned types,
      ENUM index, SET bitmask); ``double_value`` → the float;
    * ``bytes_value`` → ``bytes`` (binary types, BIT's ⌈M/8⌉ big-endian bytes), JSON → its text
      (kind json);
    * ``string_value``: DECIMAL → kind decimal (the text as given), DATE / DATETIME / TIME →
      temporal text (fraction as ``ddlcore.raw``: six digits or none), TIMESTAMP → the same
      converted to UTC from ``time_zone`` (``Binlog.time_zone``; ``None``: already UTC), YEAR
      and MEDIUMINT (which Drainer sends as text) → the integer, character types → ``str``.

    Raises ``CaptureError`` for a value that does not fit its type (the message is corrupt or
    the type list is wrong)."""
    t = mysql_type.lower()
    if col.is_null:
        return None
    if col.HasField("int64_value"):
        return col.int64_value
    if col.HasField("uint64_value"):
        return col.uint64_value
    if col.HasField("double_value"):
        return col.double_value
    if col.HasField("bytes_value"):
        if t == "json":
            return raw.RawJson(col.bytes_value.decode("utf-8"))
        return bytes(col.bytes_value)
    if not col.HasField("string_value"):
        return None  # Drainer writes no field for an "unspecified" type
    s = col.string_value
    try:
        if t == "decimal":
            return Tagged("$dec", s)
        if t == "date":
            return Tagged("$date", s)
        if t == "datetime":
            return Tagged("$datetime", canonical_fraction(s))
        if t == "timestamp":
            return Tagged("$datetime", canonical_fraction(_to_utc(s, time_zone)))
        if t == "time":
            return Tagged("$time", canonical_fraction(s))
        if t in ("year", "mediumint", "int", "bigint", "smallint", "tinyint"):
            return int(s)
    except ValueError as exc:
        raise CaptureError(f"{t} value {s!r}: {exc}") from None
    return s


def _to_utc(text: str, tz: _dt.tzinfo | None) -> str:
    if tz is None or tz is _dt.timezone.utc or text.startswith("0000-00-00"):
        return text
    head, dot, frac = text.partition(".")
    local = _dt.datetime.strptime(head, "%Y-%m-%d %H:%M:%S").replace(tzinfo=tz)
    utc = local.astimezone(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    return utc + (dot + frac if dot else "")


def _zone(name: str | None) -> _dt.tzinfo | None:
    if not name or name.upper() in ("UTC", "+00:00", "Z", "SYSTEM_UTC"):
        return None
    if name[0] in "+-" and ":" in name:
        sign = -1 if name[0] == "-" else 1
        h, m = name[1:].split(":")
        return _dt.timezone(sign * _dt.timedelta(hours=int(h), minutes=int(m)))
    from zoneinfo import ZoneInfo

    try:
        return ZoneInfo(name)
    except Exception as exc:
        raise CaptureError(f"unknown time zone {name!r} for TIMESTAMP values: {exc}") from None


def compare_column_info(table_id: TableId, infos: list[tuple[str, str, bool]], model: Table | None) -> list[str]:
    """Differences between a message's ``ColumnInfo`` list (``(name, mysql_type,
    is_primary_key)`` per column, in row order) and the history's table at that seq:
    column count, names (case-insensitive, MySQL rules), types (``data_type`` against
    ``mysql_type``), primary-key membership.  ``[]`` when they agree; ``model`` ``None``: the
    history does not know the table."""
    if model is None:
        return [f"{table_id} is not in the schema history"]
    out = []
    cols = model.columns
    if len(cols) != len(infos):
        out.append(f"{len(infos)} columns [{', '.join(n for n, _, _ in infos)}] in the binlog, "
                   f"{len(cols)} [{', '.join(c.name for c in cols)}] in the history")
        return out
    pk = {casefold_key(c) for c in model.primary_key}
    for col, (name, mysql_type, is_pk) in zip(cols, infos):
        if casefold_key(col.name) != casefold_key(name):
            out.append(f"column {col.ordinal_position}: binlog has {name!r}, history has {col.name!r}")
            continue
        t = _TYPE_ALIASES.get(mysql_type.lower(), mysql_type.lower())
        if t != col.data_type.lower():
            out.append(f"column {name} (type): binlog has {mysql_type}, history has {col.column_type}")
        if bool(is_pk) != (casefold_key(col.name) in pk):
            out.append(f"column {name} (primary key): binlog says {'' if is_pk else 'not '}in the primary key, "
                       f"history says {'' if casefold_key(col.name) in pk else 'not '}")
    return out


# ============================================================================ settings & state


@dataclass(frozen=True)
class TidbCaptureOptions:
    """What to capture and how.

    * ``out``: the output directory (``ddlcore.capture``).
    * ``from_file``: read ``Binlog`` messages from this file (delimited framing) instead of
      Kafka.  Its messages are read from the start on every run; what the change log already
      holds is dropped by the duplicate rule.
    * ``brokers`` / ``topic`` / ``partition``: the Kafka source (``host:port,...``;
      Drainer's topic ``<cluster_id>_obinlog``; Drainer writes partition 0).
    * ``commit_ts``: first run only: capture the transactions committed after this TSO (the
      consumer starts at the offset of that time, ``offsets_for_times``).  ``offset``: first
      run only: start at this offset.  Neither: the earliest offset.  A restart resumes from
      the checkpoint's offset whatever these say.
    * ``until_end``: stop at the end of the file, or when the consumer reaches the partition's
      end (librdkafka's partition-EOF event at the high watermark); otherwise run until
      ``stop()`` / SIGINT / SIGTERM.
    * ``include`` / ``exclude``: table patterns (``ddlcore.history.filters``) selecting the
      tables whose rows are captured; DDL is always written.
    * ``time_zone``: the zone TIMESTAMP values are in when a message has no ``time_zone``
      (Drainer decodes rows in its host's local zone; default ``UTC``).
    * ``checkpoint_interval``: seconds between checkpoints (one is always written at the end).
    * ``stop_after_messages``: stop after this many messages read in this run (tests).
    * ``kafka_config``: extra librdkafka settings for the consumer (``security.protocol``, ...).
    """

    out: Path | str
    from_file: Path | str | None = None
    brokers: str | None = None
    topic: str | None = None
    partition: int = 0
    commit_ts: int | None = None
    offset: int | None = None
    until_end: bool = False
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    time_zone: str = "UTC"
    checkpoint_interval: float = 0.5
    progress: bool = True
    stop_after_messages: int | None = None
    poll_timeout: float = 1.0
    kafka_config: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "out", Path(self.out))
        object.__setattr__(self, "include", tuple(self.include))
        object.__setattr__(self, "exclude", tuple(self.exclude))
        if self.from_file is not None:
            object.__setattr__(self, "from_file", Path(self.from_file))
            if self.brokers or self.topic:
                raise ValueError("give either --from-file or --brokers/--topic, not both")
        elif not (self.brokers and self.topic):
            raise ValueError("give --from-file PATH, or --brokers HOST:PORT and --topic <cluster_id>_obinlog")
        if self.commit_ts is not None and self.offset is not None:
            raise ValueError("give --commit-ts or --offset, not both")
        if self.from_file is not None and self.offset is not None:
            raise ValueError("--offset applies to Kafka; with --from-file use --commit-ts")
        _zone(self.time_zone)


@dataclass(frozen=True)
class TidbCheckpoint(CheckpointFile):
    """``seq`` and ``changelog_bytes`` (``ddlcore.capture.ChangeLogOutput``), ``commit_ts``:
    the highest commit TSO written (the duplicate rule's high-water mark; ``start_ts`` below it
    before any), ``offset``: the next Kafka offset (or message index in a file) to read,
    ``source``: the source event in force, ``epoch``, the filters and where it reads from.
    ``load`` / ``save``: ``ddlcore.capture.CheckpointFile``."""

    seq: int
    changelog_bytes: int
    commit_ts: int
    offset: int
    epoch: str
    source: dict[str, Any] | None = None
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    reading: str = ""
    updated: str | None = None
    recent: tuple[int, ...] = ()
    recent_floor: int | None = None

    @property
    def position(self) -> str:
        return str(self.commit_ts)

    def to_json(self) -> dict[str, Any]:
        return {"format": CHECKPOINT_FORMAT, "kind": "tidb", "seq": self.seq,
                "changelog_bytes": self.changelog_bytes, "commit_ts": self.commit_ts,
                "offset": self.offset, "epoch": self.epoch, "source": self.source,
                "include": list(self.include), "exclude": list(self.exclude), "reading": self.reading,
                "updated": self.updated, "recent": list(self.recent), "recent_floor": self.recent_floor}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "TidbCheckpoint":
        if d.get("format") != CHECKPOINT_FORMAT or d.get("kind") != "tidb":
            raise CaptureError(f"not a TiDB capture's checkpoint (format {d.get('format')!r}, kind {d.get('kind')!r})")
        return cls(int(d["seq"]), int(d["changelog_bytes"]), int(d["commit_ts"]), int(d["offset"]),
                   str(d["epoch"]), d.get("source"), tuple(d.get("include") or ()),
                   tuple(d.get("exclude") or ()), d.get("reading") or "", d.get("updated"),
                   tuple(int(t) for t in d.get("recent") or ()),
                   None if d.get("recent_floor") is None else int(d["recent_floor"]))


@dataclass
class TidbCaptureStats(CaptureStats):
    """``ddlcore.capture.CaptureStats`` plus: ``messages`` read; ``duplicates`` dropped by the
    duplicate rule; ``out_of_order`` messages below the high-water mark that this run had not
    written; ``filtered_rows`` rows of tables the filters leave out; ``drift`` warnings."""

    messages: int = 0
    duplicates: int = 0
    out_of_order: int = 0
    filtered_rows: int = 0
    drift: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "messages": self.messages, "duplicates": self.duplicates,
                "out_of_order": self.out_of_order, "filtered_rows": self.filtered_rows,
                "drift": list(self.drift)}


# ============================================================================ sources


class _FileSource:
    """``(index, payload)`` of every message of a delimited file (every run reads the whole
    file: the duplicate rule drops what the change log already holds)."""

    def __init__(self, path: Path):
        self.path = path

    def messages(self, stop: Callable[[], bool]) -> Iterator[tuple[int, bytes]]:
        with open(self.path, "rb") as fh:
            for i, data in enumerate(read_delimited(fh)):
                if stop():
                    return
                yield i, data

    def close(self) -> None:
        pass


class _KafkaSource:
    """``(offset, payload)`` of each message of one partition, with ``confluent-kafka``'s
    ``Consumer`` assigned to the partition (no consumer-group offsets: the checkpoint is the
    capture's).  Two captures of one topic never share a position: each reads from its own
    checkpoint's offset (``assign``, not ``subscribe``: the group's committed offsets are never
    read, and none are committed), and its ``group.id`` is ``ddlcore-capture-<epoch>`` (the
    capture directory's epoch, so the broker's group listings name the capture) unless
    ``kafka_config`` gives one (e.g. a group prefix that ACLs require)."""

    def __init__(self, opts: TidbCaptureOptions, start_offset: int | None, start_ts: int | None,
                 epoch: str | None = None):
        try:
            from confluent_kafka import Consumer, TopicPartition
        except ImportError:
            raise CaptureError("--brokers needs confluent-kafka: pip install 'ddlcore-mysql[tidb]'") from None
        self._tp_cls = TopicPartition
        self.opts = opts
        conf = {"bootstrap.servers": opts.brokers, "group.id": f"ddlcore-capture-{epoch or uuid.uuid4()}",
                "auto.offset.reset": "earliest", "enable.partition.eof": True, **opts.kafka_config,
                "enable.auto.commit": False, "enable.auto.offset.store": False}
        self.consumer = Consumer(conf)
        tp = TopicPartition(opts.topic, opts.partition)
        try:
            low, high = self.consumer.get_watermark_offsets(tp, timeout=10)
        except Exception as exc:
            self.consumer.close()
            raise CaptureError(f"cannot read topic {opts.topic} partition {opts.partition} at {opts.brokers}: {exc}") from None
        if start_offset is None and start_ts is not None:
            found = self.consumer.offsets_for_times([TopicPartition(opts.topic, opts.partition, tso_physical_ms(start_ts))],
                                                    timeout=10)[0]
            start_offset = found.offset if found.offset >= 0 else high
        if start_offset is None:
            start_offset = low
        self.start = max(start_offset, low)
        if start_offset < low:
            self.lost = (start_offset, low)
        else:
            self.lost = None
        self.consumer.assign([TopicPartition(opts.topic, opts.partition, self.start)])

    def describe(self) -> str:
        return f"kafka {self.opts.brokers} topic {self.opts.topic} partition {self.opts.partition}"

    def messages(self, stop: Callable[[], bool]) -> Iterator[tuple[int, bytes]]:
        from confluent_kafka import KafkaError

        position = self.start
        while not stop():
            msg = self.consumer.poll(self.opts.poll_timeout)
            if msg is None:
                continue
            err = msg.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF:
                    # the fetch reached the partition's high watermark: the end, with --until-end
                    if self.opts.until_end:
                        return
                    continue
                raise CaptureError(f"kafka error at {self.describe()} offset {position}: {err}")
            position = msg.offset() + 1
            yield msg.offset(), msg.value() or b""

    def close(self) -> None:
        self.consumer.close()


# ============================================================================ the capture


class TidbCapture(Capture):
    """One capture of a TiDB Binlog stream into one output directory.  ``run()`` returns
    ``TidbCaptureStats``; ``stop()`` (another thread, a signal handler) ends the run at the next
    message, keeping the last complete message's checkpoint (``ddlcore.capture.Capture``)."""

    stats: TidbCaptureStats

    def __init__(self, options: TidbCaptureOptions, *, on_warning: Callable[[str], None] | None = None):
        super().__init__(options.out, TidbCaptureStats(), on_warning=on_warning,
                         checkpoint_interval=options.checkpoint_interval)
        self.options = options
        self._drift_cache: dict[tuple, str | None] = {}
        # the commit_ts written last (this run's and the checkpoint's): redelivery or late message
        self._recent = RecentCommits(0)
        self.pb = binlog_pb2()

    # -- setup --------------------------------------------------------------------------------

    def _reading(self) -> str:
        o = self.options
        return f"file:{o.from_file}" if o.from_file is not None else f"kafka:{o.topic}/{o.partition}"

    def _prepare(self) -> TidbCheckpoint:
        o = self.options
        cp = TidbCheckpoint.load(self.checkpoint_path)
        if cp is not None:
            if cp.reading and cp.reading != self._reading() and o.from_file is None:
                raise CaptureError(f"{self.out} was captured from {cp.reading}, not {self._reading()}: "
                                   f"use a new output directory")
            self._log.resume(cp, o.include, o.exclude)  # cut to it (CaptureError when shorter)
            return cp
        self._log.check_new()
        remove_history(self.out / HISTORY_NAME)
        epoch = str(uuid.uuid4())
        start_ts = o.commit_ts or 0
        offset = o.offset if o.offset is not None else -1  # -1: decided by the source
        cp = TidbCheckpoint(0, 0, start_ts, offset, epoch, None, o.include, o.exclude, self._reading())
        self._log.start(cp)  # an empty change log; cp saved
        return cp

    def _source_info(self, epoch: str) -> SourceInfo:
        o = self.options
        cluster = o.topic[: -len("_obinlog")] if o.topic and o.topic.endswith("_obinlog") else None
        server = ({"cluster_id": cluster, "topic": o.topic, "partition": o.partition} if o.topic
                  else {"cluster_id": None, "file": str(o.from_file)})

        return SourceInfo(dialect="mysql", epoch=epoch, flavor="tidb", server=server,
                          parser_options=dict(TIDB_PARSER_OPTIONS),
                          settings={"time_zone": o.time_zone, "format": "TiDB Binlog slave.binlog (Drainer kafka)"},
                          capture={"tool": CAPTURE_TOOL, "version": distribution_version("ddlcore-mysql")})

    def _run(self) -> TidbCaptureStats:
        o = self.options
        cp = self._prepare()
        # a checkpoint without the memory of recent commits: nothing below its mark is known
        self._recent = RecentCommits(cp.commit_ts if cp.recent_floor is None else cp.recent_floor, cp.recent)
        self.filter = CaptureFilter(cp.include, cp.exclude, case_sensitive=False, system_databases=SYSTEM_DATABASES)
        history = self._log.history = CaptureHistory(self.out / HISTORY_NAME, TIDB_PARSER_OPTIONS, "mysql")
        if history.unavailable:
            self._warn(f"schema history unavailable, drift checks are off: {history.unavailable}")
        tz = _zone(o.time_zone)
        progress = self._warn.progress = Progress(o.progress)
        progress.start()
        source: Any = None
        try:
            src = self._source_info(cp.epoch).to_json()
            if cp.source != src:
                self._log.emit("source", str(cp.commit_ts), None, source=src)
                cp = replace(cp, source=src)
                self._log.checkpoint(cp)
            start = cp.offset if cp.offset >= 0 else None
            if o.from_file is not None:
                source = _FileSource(o.from_file)
            else:
                source = _KafkaSource(o, start, cp.commit_ts or None if start is None else None, cp.epoch)
                if source.lost is not None:
                    self._warn(f"offsets {source.lost[0]}..{source.lost[1] - 1} of {o.topic} are no longer in "
                               f"Kafka (retention): messages in them were never captured")
            read = 0
            for offset, data in source.messages(self._stop.is_set):
                self._message(offset, data, tz)
                read += 1
                progress.update(self.stats, "streaming")
                if o.stop_after_messages is not None and read >= o.stop_after_messages:
                    break
        finally:
            if source is not None:
                source.close()
            progress.update(self.stats, "done", force=True)
            progress.stop()
            self._log.finish()  # checkpoint, cut an unfinished message's events, close the history
        return self.stats

    # -- messages -----------------------------------------------------------------------------

    def _message(self, offset: int, data: bytes, tz: Any) -> None:
        from google.protobuf.message import DecodeError

        st = self.stats
        st.messages += 1
        binlog = self.pb.Binlog()
        try:
            binlog.ParseFromString(data)
        except DecodeError as exc:
            raise CaptureError(f"message at {'index' if self.options.from_file else 'offset'} {offset} "
                               f"is not a TiDB Binlog message: {exc}") from None
        cp = self._log.pending or self._log.checkpointed  # where the messages read so far end
        assert cp is not None
        ts = binlog.commit_ts
        if ts <= cp.commit_ts:
            if self._recent.is_late(ts):
                self._out_of_order(binlog, ts, cp.commit_ts, offset, tz)
                self._recent.written(ts)
            else:
                st.duplicates += 1
            self._log.commit(self._recent_state(cp, offset=offset + 1), transaction=False)
            return
        position = str(ts)
        ms = tso_physical_ms(ts)
        st.lag_seconds = max(0.0, time.time() - ms / 1000.0)
        if binlog.HasField("time_zone") and binlog.time_zone:
            tz = _zone(binlog.time_zone)
        if binlog.type == self.pb.DDL:
            d = binlog.ddl_data
            try:
                query = d.ddl_query.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise CaptureError(f"DDL at commit_ts {ts} is not UTF-8: {exc}") from None
            self._log.emit("ddl", position, ms, database=d.schema_name or None, ddl=query, tx=position)
        else:
            self._dml(binlog, position, ms, tz)
        self._recent.written(ts)
        self._log.commit(self._recent_state(cp, commit_ts=ts, offset=offset + 1))

    def _recent_state(self, cp: TidbCheckpoint, **changes: Any) -> TidbCheckpoint:
        """``cp`` with ``changes`` and the commit_ts written last (``RecentCommits.persisted``)."""
        floor, recent = self._recent.persisted()
        return replace(cp, recent_floor=floor, recent=recent, **changes)

    def _out_of_order(self, binlog: Any, ts: int, high: int, offset: int, tz: Any) -> None:
        """A message below the high-water mark that this run did not write: not a redelivery, so
        its rows are kept — written with a ``quarantine`` reason (the pipeline quarantines them,
        never converts them out of commit order).  A DDL out of order cannot be placed in the
        schema history: the capture stops (CaptureError) rather than guess; restart it with
        ``--commit-ts`` after the message to go on without it."""
        self.stats.out_of_order += 1
        reason = (f"out of commit order: commit_ts {ts} arrived at offset {offset} after commit_ts {high} "
                  f"was written; kept, not applied out of order")
        self._warn(f"message at offset {offset}: {reason}")
        if binlog.type == self.pb.DDL:
            raise CaptureError(f"DDL at commit_ts {ts} (offset {offset}) arrived after commit_ts {high} was "
                               "written: it cannot be placed in the schema history; stopping (restart with "
                               "--commit-ts after it to go on without it)")
        if binlog.HasField("time_zone") and binlog.time_zone:
            tz = _zone(binlog.time_zone)
        self._dml(binlog, str(ts), tso_physical_ms(ts), tz, quarantine=reason)

    def _dml(self, binlog: Any, position: str, ms: int, tz: Any, quarantine: str | None = None) -> None:
        """The rows of a DML message as ``c``/``u``/``d`` events; ``quarantine``: a reason that
        every row carries (out of commit order), else the drift reason of its table, if any."""
        pb = self.pb
        row_index = 0
        for table in binlog.dml_data.tables:
            schema, name = table.schema_name, table.table_name
            if not self.filter.captures(schema, name):
                self.stats.filtered_rows += len(table.mutations)
                row_index += len(table.mutations)
                continue
            infos = [(c.name, c.mysql_type, c.is_primary_key) for c in table.column_info]
            types = [t for _, t, _ in infos]
            reason = quarantine or self._drift(TableId(schema, None, name), infos, position)
            for mut in table.mutations:
                after = before = None
                if mut.type == pb.Insert:
                    op, after = "c", self._row(mut.row, types, tz, position)
                elif mut.type == pb.Update:
                    op = "u"
                    after = self._row(mut.row, types, tz, position)
                    before = self._row(mut.change_row, types, tz, position)
                elif mut.type == pb.Delete:
                    op, before = "d", self._row(mut.row, types, tz, position)
                else:
                    raise CaptureError(f"unknown mutation type {mut.type} at commit_ts {position}")
                extra = {"quarantine": reason} if reason else {}
                self._log.emit(op, position, ms, database=schema, table=name, before=before, after=after,
                           tx=position, row=row_index, **extra)
                row_index += 1

    def _row(self, row: Any, types: list[str], tz: Any, position: str) -> list:
        if len(row.columns) != len(types):
            raise CaptureError(f"a row at commit_ts {position} has {len(row.columns)} values for "
                               f"{len(types)} columns in its column_info")
        return raw.encode_row([column_value(c, t, tz) for c, t in zip(row.columns, types)])

    def _drift(self, tid: TableId, infos: list, position: str) -> str | None:
        """The drift reason for rows of ``tid`` with these ``ColumnInfo`` (``None``: none), checked
        once per table, column list and history seq; a warning the first time."""
        h = self._log.history
        if h is None or not h.available:
            return None
        key = ((tid.database or "").lower(), tid.name.lower(), tuple(infos), self._log.schema_seq)
        if key in self._drift_cache:
            return self._drift_cache[key]
        model = h.table_at(tid, self._log.seq)
        problems = compare_column_info(tid, infos, model)
        reason = None
        if problems:
            text = f"schema drift in {tid} at commit_ts {position}: " + "; ".join(problems)
            self.stats.drift.append(text)
            self._warn(text)
            if model is not None:  # an unknown table is the pipeline's own quarantine
                reason = "drift: " + "; ".join(problems)
        self._drift_cache[key] = reason
        return reason

