"""``ddlcore capture debezium``: Debezium change events (Kafka topics, or JSON Lines files of
message values) and its schema history into a ddlcore change log.

Owns: reading the messages (files with ``--from-file``; Kafka with ``confluent-kafka`` in a
consumer group, offsets committed only after the change log and its checkpoint are on
disk), merging rows and DDL of every topic and the history into one order (the connector's
``order_key``), typing each row by the table the history holds at its seq (the connector's
``decode_row``), reporting and marking the producer's losses, the checkpoint.
Must not know: any connector's encodings or positions (``ddlcore.debezium.DebeziumConnector``
from the plugins, which may also bring their own message format: ``ddlcore capture canal``
passes its reader as ``connector_impl``, whose ``parse`` turns a message into records); Spark.  Output directory, change log, lock, history, filters and progress
are ``ddlcore.capture``'s.

**Order and duplicates.** Every record gets the connector's order key; a batch (all the files;
or what Kafka holds up to the end of every assigned partition) is sorted by it and written
in that order, DDL of the history file up to the batch's last key with it.  The checkpoint
keeps the last key written: a record at or below it is a redelivery (or a file read again)
and is dropped (``duplicates``), so a resumed capture writes no event twice.  A row that
arrives below the last key but was not written (Kafka delivered it late, after a later batch)
is written with a ``quarantine`` reason ("out of order"), never dropped.

**Losses.** A value the producer already made inexact (``decode_row``'s losses: double
decimals, ``connect`` time precision, zero dates, failed conversions) puts a ``quarantine``
reason on its row event — the pipeline keeps the row in its quarantine with that reason,
never as if exact — and is reported once per column and kind: a warning naming the Debezium
setting that avoids it, and the source event's ``settings.losses`` (a new ``source`` event is
written when the list grows).
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field, replace
from operator import attrgetter
from pathlib import Path
from typing import Any, Callable, Iterator

from . import raw
from .capture import (HISTORY_NAME, Capture, CaptureFilter, CaptureHistory, CaptureStats, CheckpointFile,
                      Progress, distribution_version, gc_paused, remove_history)
from .changelog import SourceInfo
from .jsontext import loads, loads_lines
from .debezium import DebeziumConnector, DebeziumError, DebeziumSettings, Record, connector_for, parse_record
from .model import TableId

__all__ = ["DebeziumCaptureOptions", "DebeziumCapture", "DebeziumCheckpoint", "DebeziumCaptureStats",
           "read_json_lines", "read_json_blocks"]

CAPTURE_TOOL = "ddlcore capture debezium"
CHECKPOINT_FORMAT = 1
#: records between commits (a checkpoint is written at most every ``checkpoint_interval`` anyway)
COMMIT_EVERY = 256
_ROW_OPS = {"c": "c", "u": "u", "d": "d", "r": "r", "t": "t"}


@dataclass(frozen=True)
class DebeziumCaptureOptions:
    """What to capture and how.

    * ``out``: the output directory; ``from_files``: JSON Lines files of message values (one
      value per line; an empty line or ``null`` is a tombstone), read whole on every run;
      ``history``: a ``FileSchemaHistory`` file (JSON Lines of history records).
    * ``brokers``, ``topics`` or ``topic_pattern`` (a regular expression), ``group``: the Kafka
      source (a consumer group; offsets committed after the change log is durable).
    * ``connector``: ``mysql``, ... (default: from the messages' ``source.connector``);
      ``connector_impl``: a connector object to use instead (``ddlcore capture canal``'s reader);
      ``flavor``: the parser flavor (default: the connector's for ``source.connector``).
    * ``settings``: the connector's value settings (``DebeziumSettings``) for messages without
      schemas.  ``include`` / ``exclude``: table patterns for the rows captured.
    * ``until_end``: Kafka: stop when every assigned partition is read to its end.
    """

    out: Path | str
    from_files: tuple[Path, ...] = ()
    history: Path | str | None = None
    brokers: str | None = None
    topics: tuple[str, ...] = ()
    topic_pattern: str | None = None
    group: str | None = None
    connector: str | None = None
    connector_impl: Any = None
    flavor: str | None = None
    settings: DebeziumSettings = field(default_factory=DebeziumSettings)
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    until_end: bool = False
    checkpoint_interval: float = 0.5
    progress: bool = True
    poll_timeout: float = 1.0
    kafka_config: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "out", Path(self.out))
        object.__setattr__(self, "from_files", tuple(Path(p) for p in self.from_files))
        object.__setattr__(self, "topics", tuple(self.topics))
        if self.history is not None:
            object.__setattr__(self, "history", Path(self.history))
        kafka = bool(self.brokers or self.topics or self.topic_pattern)
        if self.from_files and kafka:
            raise ValueError("give either --from-file or --brokers with --topics/--topic-pattern, not both")
        if not self.from_files and not (self.brokers and (self.topics or self.topic_pattern)):
            raise ValueError("give --from-file PATH..., or --brokers HOST:PORT with --topics or --topic-pattern")
        if self.topics and self.topic_pattern:
            raise ValueError("give --topics or --topic-pattern, not both")


@dataclass(frozen=True)
class DebeziumCheckpoint(CheckpointFile):
    """``seq``, ``changelog_bytes`` (``ddlcore.capture.ChangeLogOutput``); ``key``: the order key
    of the last record written (the duplicate rule); ``position`` text of it; ``epoch``,
    ``source`` (the source event in force), the filters, ``reading``, ``losses`` reported."""

    seq: int
    changelog_bytes: int
    key: tuple = ()
    last_position: str = ""
    epoch: str = ""
    source: dict[str, Any] | None = None
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    reading: str = ""
    losses: tuple[str, ...] = ()
    updated: str | None = None

    @property
    def position(self) -> str:
        return self.last_position

    def to_json(self) -> dict[str, Any]:
        return {"format": CHECKPOINT_FORMAT, "kind": "debezium", "seq": self.seq,
                "changelog_bytes": self.changelog_bytes, "key": list(self.key), "position": self.last_position,
                "epoch": self.epoch, "source": self.source, "include": list(self.include),
                "exclude": list(self.exclude), "reading": self.reading, "losses": list(self.losses),
                "updated": self.updated}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "DebeziumCheckpoint":
        if d.get("format") != CHECKPOINT_FORMAT or d.get("kind") != "debezium":
            raise DebeziumError(f"not a Debezium capture's checkpoint (kind {d.get('kind')!r})")
        return cls(int(d["seq"]), int(d["changelog_bytes"]), tuple(d.get("key") or ()), d.get("position") or "",
                   str(d["epoch"]), d.get("source"), tuple(d.get("include") or ()), tuple(d.get("exclude") or ()),
                   d.get("reading") or "", tuple(d.get("losses") or ()), d.get("updated"))


@dataclass
class DebeziumCaptureStats(CaptureStats):
    """``CaptureStats`` plus ``messages`` read, ``skipped`` (tombstones, transaction metadata),
    ``duplicates`` dropped, ``out_of_order`` rows kept with a quarantine, ``lossy`` rows marked,
    ``quarantined`` rows written with any quarantine reason, ``filtered_rows``, ``drift``: schema
    changes whose ``tableChanges`` differ from the parsed DDL."""

    messages: int = 0
    skipped: int = 0
    duplicates: int = 0
    out_of_order: int = 0
    lossy: int = 0
    quarantined: int = 0
    filtered_rows: int = 0
    drift: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "messages": self.messages, "skipped": self.skipped,
                "duplicates": self.duplicates, "out_of_order": self.out_of_order, "lossy": self.lossy,
                "quarantined": self.quarantined, "filtered_rows": self.filtered_rows,
                "drift": list(self.drift)}


# ============================================================================ reading


#: bytes of lines read and decoded at a time (``read_json_blocks``)
_BLOCK = 1 << 20


def read_json_blocks(path: Path) -> Iterator[tuple[str, int, list[Any]]]:
    """``(file name, number of the first line, values)`` of consecutive lines of a JSON Lines
    file, about a megabyte at a time (an empty line is ``None``, a tombstone).  Raises
    ``DebeziumError`` naming the line for text that is not JSON (a truncated last line
    included)."""
    name = str(path)
    first = 1
    with open(path, "rb") as fh:
        while lines := fh.readlines(_BLOCK):
            values = loads_lines(lines)
            if values is not None:
                yield name, first, values
            else:  # line by line: the lines before a bad one come first, as they would one at a time
                for no, line in enumerate(lines, start=first):
                    yield name, no, [_line_value(line, f"{name}:{no}")]
            first += len(lines)


def _line_value(line: bytes, where: str) -> Any:
    if not line or line.isspace():
        return None
    try:
        return loads(line)
    except ValueError as exc:
        cut = "" if line.endswith(b"\n") else " (the file ends inside it: truncated?)"
        raise DebeziumError(f"{where}: not JSON{cut}: {exc}") from None


def read_json_lines(path: Path) -> Iterator[tuple[str, Any]]:
    """``(where, value)`` of each line of a JSON Lines file (``where`` = ``path:line``;
    ``read_json_blocks``)."""
    for name, first, values in read_json_blocks(path):
        for no, value in enumerate(values, start=first):
            yield f"{name}:{no}", value


@dataclass(slots=True)
class _Item:
    """A record with its order key and where it came from: ``src`` (a file name, or a Kafka
    message's ``topic[partition]@offset``) and ``no`` (the file's line; 0 for Kafka)."""

    key: tuple | None
    src: str
    no: int
    record: Record

    @property
    def where(self) -> str:
        return _where(self.src, self.no)


def _where(src: str, no: int) -> str:
    """``file:line``, or the Kafka message's ``src`` (``no`` 0)."""
    return f"{src}:{no}" if no else src


_KEY = attrgetter("key")


class _KafkaSource:
    """Batches ``[(where, value, (topic, partition, offset))]`` of a consumer group's topics, each batch ending
    when every assigned partition reached its end; ``commit()`` commits the offsets of what was
    handed out (call it only once all of that is in the change log and its checkpoint)."""

    def __init__(self, o: DebeziumCaptureOptions):
        try:
            from confluent_kafka import Consumer
        except ImportError:
            raise DebeziumError("--brokers needs confluent-kafka: pip install confluent-kafka") from None
        self.o = o
        conf = {"bootstrap.servers": o.brokers, "group.id": o.group or "ddlcore-capture-debezium",
                "enable.auto.commit": False, "auto.offset.reset": "earliest", "enable.partition.eof": True,
                **o.kafka_config}
        self.consumer = Consumer(conf)
        self.consumer.subscribe([f"^{o.topic_pattern}"] if o.topic_pattern else list(o.topics))
        self.pending: dict[tuple[str, int], int] = {}

    def batches(self, stop: Callable[[], bool]) -> Iterator[list[tuple[str, Any, tuple[str, int, int]]]]:
        from confluent_kafka import KafkaError

        batch: list[tuple[str, Any, tuple[str, int, int]]] = []
        eof: set[tuple[str, int]] = set()
        while not stop():
            msg = self.consumer.poll(self.o.poll_timeout)
            assigned = {(tp.topic, tp.partition) for tp in self.consumer.assignment()}
            if msg is not None and msg.error() is not None:
                if msg.error().code() != KafkaError._PARTITION_EOF:
                    raise DebeziumError(f"kafka error: {msg.error()}")
                eof.add((msg.topic(), msg.partition()))
            elif msg is not None:
                eof.discard((msg.topic(), msg.partition()))
                where = f"{msg.topic()}[{msg.partition()}]@{msg.offset()}"
                self.pending[(msg.topic(), msg.partition())] = msg.offset() + 1
                data = msg.value()
                try:
                    batch.append((where, loads(data) if data else None,
                                  (msg.topic(), msg.partition(), msg.offset())))
                except ValueError as exc:
                    raise DebeziumError(f"{where}: not JSON: {exc}") from None
            if assigned and assigned <= eof:
                yield batch
                batch = []
                if self.o.until_end:
                    return

    def commit(self, held: dict[tuple[str, int], int] | None = None) -> None:
        """Commit the offsets handed out, but not past ``held`` (``(topic, partition)`` → the
        offset of the first message not written yet)."""
        from confluent_kafka import TopicPartition

        if self.pending:
            offsets = {k: min(o, (held or {}).get(k, o)) for k, o in self.pending.items()}
            self.consumer.commit(offsets=[TopicPartition(t, p, o) for (t, p), o in offsets.items()],
                                 asynchronous=False)
            self.pending = {}

    def close(self) -> None:
        self.consumer.close()


# ============================================================================ the capture


class DebeziumCapture(Capture):
    """One capture of a Debezium stream into one output directory; ``run()`` returns
    ``DebeziumCaptureStats`` (``ddlcore.capture.Capture``)."""

    stats: DebeziumCaptureStats

    def __init__(self, options: DebeziumCaptureOptions, *, on_warning: Callable[[str], None] | None = None):
        super().__init__(options.out, DebeziumCaptureStats(), on_warning=on_warning,
                         checkpoint_interval=options.checkpoint_interval)
        self.options = options
        self.connector: DebeziumConnector | None = None
        self._arrival = 0
        self._history_items: list[_Item] = []
        self._history_pending: list[_Item] | None = None
        self._first_ddl_key: tuple | None = None
        self._tables: dict[tuple, Any] = {}
        self._losses: set[str] = set()
        self._flavor: str | None = None
        self._resume_key: tuple = ()
        self._uncommitted: tuple | None = None
        self._unknown_rows = 0
        self._last: tuple | None = None  # (key, position) of the last record written
        self._losses_changed = False
        self._unordered_partitions: set[tuple[str, int]] = set()
        #: the keys written this run, for Kafka (``_was_written``)
        self._written: set[tuple] | None = None if options.from_files else set()
        #: a source event is in force (``_sync_source`` has nothing to do until losses grow)
        self._source_ready = False
        self._last_ts: int | None = None
        #: ``(id(TableId), schema_seq)`` → ``(TableId, captured, table or None)``
        self._routes: dict[tuple[int, int], tuple] = {}
        self._parse_fn: tuple | None = None  # (connector, its parse or None)
        self._derive_fn: tuple | None = None  # (connector, its schema_ddl or None)

    # -- setup --------------------------------------------------------------------------------

    def _reading(self) -> str:
        o = self.options
        if o.from_files:
            return "files:" + ",".join(str(p) for p in o.from_files)
        return f"kafka:{o.group or 'ddlcore-capture-debezium'}:{o.topic_pattern or ','.join(o.topics)}"

    def _prepare(self) -> DebeziumCheckpoint:
        o = self.options
        cp = DebeziumCheckpoint.load(self.checkpoint_path)
        if cp is not None:
            self._log.resume(cp, o.include, o.exclude)
            self._losses = set(cp.losses)
            self._resume_key = tuple(cp.key)
            self._last = (self._resume_key, cp.last_position) if cp.key else None
            return cp
        self._log.check_new()
        remove_history(self.out / HISTORY_NAME)
        cp = DebeziumCheckpoint(0, 0, (), "", str(uuid.uuid4()), None, o.include, o.exclude, self._reading())
        self._log.start(cp)
        return cp

    def _parse(self, value: Any, src: str, no: int = 0) -> list[Record]:
        """The records of one message value (from ``_where(src, no)``): the connector's own
        ``parse`` when it has one (a Canal message holds several rows), else the Debezium
        envelope (``parse_record``)."""
        self.stats.messages += 1
        parse = self._parse_fn
        if parse is None or parse[0] is not self.connector:
            parse = self._parse_fn = (self.connector, getattr(self.connector, "parse", None))
        try:
            records = parse[1](value) if parse[1] is not None else (parse_record(value),)
        except (DebeziumError, ValueError) as exc:
            raise DebeziumError(f"{_where(src, no)}: {exc}") from None
        if len(records) == 1 and records[0].kind == "row" and self.connector is not None:
            return records  # the common case: one row, nothing to accept
        out = []
        for rec in records:
            if rec.kind == "row" and self.connector is not None:
                out.append(rec)  # the common case: nothing to accept
            elif (rec := self._accept(rec, _where(src, no))) is not None:
                out.append(rec)
        return out

    def _accept(self, rec: Record, where: str) -> Record | None:
        if rec.kind == "skip":
            self.stats.skipped += 1
            return None
        if self.connector is None and rec.source.get("connector"):
            self._choose(rec, where)
        if rec.kind == "message":
            try:
                ddl = self.connector.message_ddl(rec) if self.connector is not None else None
            except ValueError as exc:
                raise DebeziumError(f"{where}: {exc}") from None
            if ddl == {}:  # a message the connector knows carries nothing (the trigger's padding)
                self.stats.skipped += 1
                return None
            if ddl is None:
                self._warn(f"{where}: a logical decoding message (prefix {rec.prefix!r}) is not a DDL message "
                           f"of ddlcore's event trigger; skipped")
                self.stats.skipped += 1
                return None
            rec.kind, rec.ddl, rec.database = "ddl", ddl.pop("ddl"), ddl.pop("database", rec.source.get("db"))
            rec.ddl_extra = ddl
        return rec

    def _choose(self, rec: Record, where: str) -> None:
        o = self.options
        self.connector = connector_for(o.connector, rec.source.get("connector"))
        self._flavor = o.flavor or self.connector.flavor(rec.source)
        self._set_filter()

    def _set_filter(self) -> None:
        """Rows of the connector's system databases / schemas are not captured unless included."""
        cp = self._state()
        self.filter = CaptureFilter(cp.include, cp.exclude, case_sensitive=False,
                                    system_databases=getattr(self.connector, "system_databases", ()),
                                    system_schemas=getattr(self.connector, "system_schemas", ()))

    def _check_partitions(self, where: str, part: tuple[str, int], records: list[Record]) -> None:
        """Refuse records whose order is only their arrival (the connector's ``total_order``
        says no: Canal flat messages, TiCDC's without ``_tidb.commitTs``) from a second Kafka
        partition: messages of two partitions have no order between them."""
        total = getattr(self.connector, "total_order", None)
        if total is None or all(total(r) for r in records if r.kind in ("row", "ddl")):
            return
        self._unordered_partitions.add(part)
        if len(self._unordered_partitions) > 1:
            parts = ", ".join(f"{t}[{p}]" for t, p in sorted(self._unordered_partitions))
            raise DebeziumError(f"{where}: messages without a total order from two or more partitions ({parts}): "
                                f"their order across partitions is unknown; "
                                + getattr(self.connector, "partition_hint", "read one partition"))

    def _read_files(self) -> list[_Item]:
        """The records of every ``--from-file`` file, in arrival order; keyed as they are read
        (while they are in the processor's cache) once the connector is known."""
        items: list[_Item] = []
        parse, arrival, unkeyed = self._parse, self._arrival, False
        for path in self.options.from_files:
            for name, first, values in read_json_blocks(path):
                for no, value in enumerate(values, start=first):
                    for rec in parse(value, name, no):
                        if unkeyed or self.connector is None:
                            unkeyed = True  # these and all later ones: keyed by _keyed, in order
                            items.append(_Item(None, name, no, rec))
                        else:
                            arrival += 1
                            items.append(_Item(self.connector.order_key(rec, arrival), name, no, rec))
        self._arrival = arrival
        return items

    def _keyed(self, items: list[_Item]) -> list[_Item]:
        """``items`` with their order keys (the connector's ``order_key``, arrival counted) for
        those that have none yet."""
        if self.connector is None and items:
            raise DebeziumError(f"{items[0].where}: no message so far names its source.connector: give --connector")
        key, arrival = self.connector.order_key if items else None, self._arrival
        for item in items:
            if item.key is None:
                arrival += 1
                item.key = key(item.record, arrival)
        self._arrival = arrival
        return items

    def _load_history(self) -> list[_Item]:
        """The history file's records, not keyed yet (``_history_items`` once the connector is
        known)."""
        path = self.options.history
        out = []
        for name, first, values in read_json_blocks(path) if path is not None else ():
            for no, value in enumerate(values, start=first):
                for rec in self._parse(value, name, no):
                    if rec.kind != "ddl":
                        raise DebeziumError(f"{name}:{no}: not a schema history record (op {rec.op!r})")
                    out.append(_Item(None, name, no, rec))
        return out

    def _items(self, items: list[_Item]) -> list[_Item]:
        """Order keys for ``items``; the first call also keys the history's records."""
        items = self._keyed(items)
        if self._history_pending is not None:
            self._history_items = sorted(self._keyed(self._history_pending), key=_KEY)
            self._history_pending = None
            if self._history_items:
                self._first_ddl_key = self._history_items[0].key
        return items

    def _source_info(self, cp: DebeziumCheckpoint, server: dict[str, Any]) -> dict[str, Any]:
        assert self.connector is not None
        settings = {**self.options.settings.to_json(), "losses": sorted(self._losses)}
        return SourceInfo(dialect=self.connector.dialect, epoch=cp.epoch, flavor=self._flavor, server=server,
                          parser_options=self.connector.parser_options(self._flavor), settings=settings,
                          capture={"tool": getattr(self.connector, "tool", CAPTURE_TOOL),
                                   "version": distribution_version("ddlcore")}).to_json()

    def _run(self) -> DebeziumCaptureStats:
        o = self.options
        cp = self._prepare()
        progress = self._warn.progress = Progress(o.progress)
        progress.start()
        source: Any = None
        try:
            if o.connector_impl is not None or o.connector is not None:
                self.connector = o.connector_impl or connector_for(o.connector)
                self._flavor = o.flavor or getattr(self.connector, "default_flavor", None)
                self._set_filter()
            self._history_pending = self._load_history()
            if o.from_files:
                with gc_paused():  # the whole stream is held and sorted (capture.gc_paused)
                    items = self._read_files()
                    self._write(self._items(items), final=True, progress=progress)
                    del items  # freed while collection is off: none of it is left for the next one to walk
            else:
                source = _KafkaSource(o)
                for batch in source.batches(self._stop.is_set):
                    with gc_paused():
                        items = []
                        for w, v, (topic, partition, offset) in batch:
                            at = getattr(self.connector, "kafka_message", None)  # Canal: the offset is the position
                            if at is not None:
                                at(topic, partition, offset)
                            parsed = self._parse(v, w)
                            self._check_partitions(w, (topic, partition), parsed)
                            items += [_Item(None, w, 0, r) for r in parsed]
                        held: dict = {}
                        release = getattr(self.connector, "release", None)  # TiCDC: up to the watermarks
                        if release is not None:
                            ready, held = release([(i.src, i.record) for i in items])
                            items = [_Item(None, w, 0, r) for w, r in ready]
                        self._write(self._items(items), final=o.until_end, progress=progress)
                        del items, batch
                    self._log.checkpoint()
                    if not self._stop.is_set():  # the batch is in the change log and its checkpoint
                        source.commit(held)
            if self._unknown_rows and not self.stats.ops.get("ddl") and self.connector is not None:
                self._warn(f"{self._unknown_rows} row(s) of tables the schema history never described were "
                           f"quarantined and this run read no DDL: "
                           + getattr(self.connector, "no_ddl_hint", "give the connector's schema history"))
        finally:
            progress.update(self.stats, "done", force=True)
            progress.stop()
            self._log.finish()
            if source is not None:
                source.close()
        return self.stats

    # -- writing ------------------------------------------------------------------------------

    def _write(self, items: list[_Item], *, final: bool, progress: Progress) -> None:
        """Write ``items`` and the history's DDL up to their last key (all of it when
        ``final``), in key order; the entries of ``items`` are released as they are written."""
        items.sort(key=_KEY)
        bound = items[-1].key if items else None
        ddl = [i for i in self._history_items if final or (bound is not None and i.key <= bound)]
        self._history_items = self._history_items[len(ddl):]
        merged = items
        if ddl:
            merged = sorted(ddl + items, key=_KEY)
            items.clear()
        stopped, one = self._stop.is_set, self._one
        for n in range(len(merged)):
            if stopped():
                break
            item, merged[n] = merged[n], None  # freed once written, while its memory is still in the cache
            one(item)
            if not n & 255:
                progress.update(self.stats, "reading")
        self._commit()

    def _state(self) -> DebeziumCheckpoint:
        cp = self._log.pending or self._log.checkpointed
        assert cp is not None
        return cp

    def _one(self, item: _Item) -> None:
        rec, key = item.record, item.key
        last = self._last
        if last is not None and key <= last[0]:
            last_position = last[1]
            if key > self._resume_key and not self._was_written(key) and rec.kind == "row":
                self.stats.out_of_order += 1
                self._sync_source(rec)
                self._emit_row(item, f"out of order: arrived after {last_position} was written; kept, "
                                     f"not applied out of order")
                self._uncommitted = self._last  # committed with the last key: a re-read drops it
            elif key > self._resume_key and not self._was_written(key):
                raise DebeziumError(f"{item.where}: DDL at {self.connector.position(rec)} arrived after "
                                    f"{last_position} was written: it cannot be placed in the schema history")
            else:
                self.stats.duplicates += 1
            return
        if not self._source_ready or self._losses_changed:
            self._sync_source(rec)
        position = self.connector.position(rec)
        if rec.kind == "ddl":
            extra = dict(rec.ddl_extra or {})
            if rec.tx:
                extra["tx"] = rec.tx
            self._log.emit("ddl", position, rec.ts_ms, database=rec.database, ddl=rec.ddl, **extra)
            self._check_table_changes(rec, position)
        else:
            self._emit_row(item, None, position)
        if self._written is not None:
            self._written.add(key)
        self._uncommitted = self._last = (key, position)
        if self._losses_changed or self._log.written % COMMIT_EVERY == 0:
            self._commit()
            self._sync_source(rec)
        if rec.ts_ms:
            self._last_ts = rec.ts_ms

    def _was_written(self, key: tuple) -> bool:
        """This run wrote the record ``key`` (at or below the last key written).  From files
        there is one batch, sorted: only the last key itself can come again (``_written`` is
        kept for Kafka's batches only)."""
        if self._written is None:
            return self._last is not None and key == self._last[0]
        return key in self._written

    def _check_table_changes(self, rec: Record, position: str) -> None:
        """A schema change's ``tableChanges`` against the tables the history parsed from its DDL
        (the connector's ``table_changes_drift``): each difference is a warning and counted."""
        check = getattr(self.connector, "table_changes_drift", None)
        h = self._log.history
        if not rec.table_changes or check is None or h is None:
            return
        for problem in check(rec, lambda tid: h.table_at(tid, self._log.seq)):
            text = f"drift at {position}: {problem}"
            self.stats.drift.append(text)
            self._warn(text)

    def _commit(self) -> None:
        """Commit the records written so far (the checkpoint names the last one's key)."""
        if self._last_ts:
            self.stats.lag_seconds = max(0.0, time.time() - self._last_ts / 1000.0)
        if self._uncommitted is not None:
            key, position = self._uncommitted
            self._uncommitted = None
            self._log.commit(replace(self._state(), key=key, last_position=position))

    def _sync_source(self, rec: Record) -> None:
        """Write a ``source`` event when none is in force yet or the losses reported grew."""
        if self._log.history is None:
            self._open_history()
        cp = self._state()
        if cp.source is not None and not self._losses_changed:
            self._source_ready = True
            return
        self._losses_changed = False
        self._commit()  # the events so far are covered by their own key, not by the source event's commit
        cp = self._state()
        server = (cp.source or {}).get("server") or {
            "name": rec.source.get("name") or rec.source.get("server"), "server_id": rec.source.get("server_id")}
        src = self._source_info(cp, server)
        if cp.source != src:
            self._log.emit("source", self.connector.position(rec), rec.ts_ms, source=src)
        self._log.commit(replace(self._state(), source=src, losses=tuple(sorted(self._losses))), transaction=False)
        self._source_ready = True

    def _open_history(self) -> None:
        h = self._log.history = CaptureHistory(self.out / HISTORY_NAME, self.connector.parser_options(self._flavor),
                                               self.connector.dialect)
        if h.unavailable:
            raise DebeziumError(f"the schema history cannot be opened, rows cannot be typed: {h.unavailable}")

    def _route(self, tid: TableId) -> tuple[TableId, bool, Any, Callable | None]:
        """``(tid, captured, table, encode)`` of a row's table: the filter's answer, the history's
        table at the current seq (``None``: not in the history) and its row encoder
        (``_row_encoder``), kept until the next DDL or source event; keyed by the connector's
        ``TableId`` object (held, so its id stays its own)."""
        captured = self.filter.captures(tid.database, tid.name, tid.schema)
        h = self._log.history
        table = h.table_at(tid, self._log.seq) if captured and h is not None else None
        encode = _row_encoder(self.connector, table, self.options.settings) if table is not None else None
        if len(self._routes) > 10_000:
            self._routes.clear()
        route = self._routes[(id(tid), self._log.schema_seq)] = (tid, captured, table, encode)
        return route

    def _emit_row(self, item: _Item, quarantine: str | None = None, position: str | None = None) -> None:
        rec, connector = item.record, self.connector
        tid = connector.table_id(rec)
        db, name = tid.database, tid.name
        if not name:
            raise DebeziumError(f"{item.where}: a row event without source.table")
        hit = self._routes.get((id(tid), self._log.schema_seq))
        if hit is None or hit[0] is not tid:
            hit = self._route(tid)
        captured, table, encode = hit[1], hit[2], hit[3]
        if not captured:
            self.stats.filtered_rows += 1
            return
        if position is None:
            position = connector.position(rec)
        op = _ROW_OPS[rec.op or ""]
        extra: dict[str, Any] = {"schema": tid.schema} if tid.schema is not None else {}
        if rec.tx:
            extra["tx"] = rec.tx
        if op == "t":
            self._log.emit("t", position, rec.ts_ms, database=db, table=name, **extra)
            return
        reasons = [quarantine] if quarantine else []
        derive = self._derive_fn
        if derive is None or derive[0] is not connector:  # looked up once per connector, not per row
            derive = self._derive_fn = (connector, getattr(connector, "schema_ddl", None))
        # PostgreSQL without DDL: the message's schema
        described = derive[1](rec, table) if derive[1] is not None else None
        if described is not None and described.statements:
            for text in described.statements:
                self._log.emit("ddl", position, rec.ts_ms, database=db, ddl=text)
            if described.warning:
                self._warn(described.warning)
            captured, table, encode = self._route(tid)[1:]
        if table is None:
            label = ".".join(x for x in (db, tid.schema, name) if x)
            if self._first_ddl_key is not None and tuple(item.key) < tuple(self._first_ddl_key):
                raise DebeziumError(f"{item.where}: a row of {label} at {position} precedes the schema history, "
                                    f"which starts at {self._history_first()}: the history does not cover it")
            reasons.append(f"table {label} is not in the schema history at {position}"
                           + (f": {described.reason}" if described is not None and described.reason else ""))
            self._unknown_rows += 1
            before, after = _plain(rec.before), _plain(rec.after)
        else:
            before = None if rec.before is None else self._image(rec, table, encode, rec.before, "before", reasons)
            after = None if rec.after is None else self._image(rec, table, encode, rec.after, "after", reasons)
        if op == "u" and before is None:  # unwrapped, or no old image (PostgreSQL REPLICA IDENTITY DEFAULT)
            before = _key_image(table, after)
        if reasons:
            extra["quarantine"] = "; ".join(reasons)
            self.stats.quarantined += 1
        if op != "r":
            row = rec.source.get("row")
            if row is not None:
                extra["row"] = row if type(row) is int else int(row)
        self._log.emit(op, position, rec.ts_ms, db, name, None, before, after, **extra)

    def _image(self, rec: Record, table: Any, encode: Callable, values: dict[str, Any], image: str,
               reasons: list[str]) -> list:
        """One image encoded by the table's row encoder (``_row_encoder``): a failure to decode is
        a quarantine reason (the image then holds the message's values), a loss one too,
        reported once per column and kind."""
        try:
            row, losses = encode(values, rec.fields, image)
        except ValueError as exc:
            reasons.append(f"cannot decode: {exc}")
            return _plain(values)
        if losses:
            if not any(r.startswith("lossy: ") for r in reasons):
                self.stats.lossy += 1  # once per row
            for col, loss in losses:
                reasons.append(f"lossy: {col}: {loss.reason}")
                self._report(".".join(x for x in (table.id.database, table.id.schema, table.id.name, col) if x), loss)
        return row

    def _report(self, column: str, loss: Any) -> None:
        key = f"{column}: {loss.kind}"
        if key in self._losses:
            return
        self._losses.add(key)
        self._losses_changed = True
        self._warn(f"{column}: {loss.reason}; rows with such values are quarantined (avoid it with {loss.avoid})")

    def _history_first(self) -> str:
        return ".".join(str(x) for x in (self._first_ddl_key or ())[:2])


_NUMBER_START = frozenset("-0123456789{")


def _row_encoder(connector: Any, table: Any, settings: DebeziumSettings) -> Callable:
    """``encode(values, fields, image) -> (encoded values, losses)`` for rows of ``table``: the
    connector's ``row_encoder(table, settings)`` when it has one (a plan chosen once per table
    version), else its ``decode_row`` with ``_encode``."""
    make = getattr(connector, "row_encoder", None)
    if make is not None:
        return make(table, settings)
    decode = connector.decode_row

    def encode(values: dict[str, Any], fields: Any, image: str) -> tuple[list, list]:
        row, losses = decode(table, values, fields, settings, image)
        return _encode(row), losses
    return encode


def _encode(values: list[Any]) -> list[Any]:
    """``ddlcore.raw.encode_row`` with fast paths for the values decoders give most: numbers,
    plain text, and tagged text (``tag`` / ``text`` attributes, already in ``ddlcore.raw``'s
    notation); everything else through ``raw.encode_json``."""
    out = []
    for v in values:
        t = type(v)
        if v is None or t is int or t is float:
            out.append(v)
        elif t is str:
            out.append(raw.encode_json(v) if v[:1] in _NUMBER_START else v)
        else:
            tag = getattr(v, "tag", None)
            out.append({tag: v.text} if tag is not None and tag != "$s" else raw.encode_json(v))
    return out


#: the encoded absent marker (``{"$absent": true}``)
_ABSENT = raw.encode_json(raw.ABSENT)


def _key_image(table: Any, after: list | None) -> list | None:
    """The before image of an update that came without one (``after`` encoded): the primary
    key's values (an update keeps its key: Debezium writes a key change as a delete and a
    create), every other column absent (never null)."""
    if after is None:
        return None
    key = {c.lower() for c in table.primary_key} if table is not None else set()
    cols = table.columns if table is not None else ()
    return [v if i < len(cols) and cols[i].name.lower() in key else _ABSENT for i, v in enumerate(after)]


def _plain(values: dict[str, Any] | None) -> list | None:
    """A row whose values cannot be typed, as encoded raw values anyway (structures as JSON text)."""
    if values is None:
        return None
    return _encode([json.dumps(v) if isinstance(v, (dict, list)) else v for v in values.values()])
