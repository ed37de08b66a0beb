"""The change log: the contract between a capture and the pipeline.

Owns: the event shape, the tagged encoding of raw values that JSON cannot carry, reading and
writing JSON Lines (optionally gzip) and Parquet, and validating every event.  Must not know:
any dialect, Spark.

Event (one JSON object per line; docs/architecture.md "The change log"; docs/changelog.md is the full
specification)::

    {"seq": 17, "position": "mariadb-bin.000003:1234", "ts": 1732280000000, "op": "u",
     "database": "shop", "table": "orders", "ddl": null,
     "before": [1, "ab", {"$bytes": "AAE="}], "after": [1, "ac", {"$bytes": "AAE="}]}

* ``seq``: int64, strictly increasing over the log (the order); ``position``: the source's
  native position text (binlog ``file:offset``, a GTID, an LSN, a TiDB commit_ts), kept for
  checkpoints; ``ts``: commit time in milliseconds since the epoch (UTC).
* ``op``: ``"ddl"`` (``ddl`` holds the statement, ``database`` the session's current
  database, ``table`` null), ``"c"`` create/insert (``after``), ``"u"`` update (``before``
  and ``after``), ``"d"`` delete (``before``), ``"r"`` snapshot read (``after``), ``"t"``
  truncate (``table``, no images), ``"source"`` (``source``: who wrote the log and how its DDL
  is to be read; the first event of every log), ``"stmt"`` (``ddl`` holds a statement whose
  rows the log does not carry, e.g. statement-format DML: the pipeline quarantines it).
* ``before`` / ``after``: the raw values of one row in ordinal order, exactly as the source
  gave them: an UNSIGNED column may hold a negative number, an ENUM its 1-based index, a SET
  its bitmask, a string column bytes in the column's charset; ``{"$absent": true}`` for a
  column the source left out of the image (never the same as null).

Optional fields, written only when set (a MySQL log of the first version has none of them):
``schema`` (PostgreSQL schema of ``table``), ``tx`` (the transaction: GTID, binlog position of
its ``BEGIN``, PostgreSQL xid, TiDB commit_ts), ``row`` (0-based index of the row within the
source's row event), ``catalog`` (on a ``ddl`` event: the tables it changed as the source's
catalog describes them after it, ``{"tables": [Table JSON], "dropped": [TableId JSON],
"renamed": [{"from": TableId JSON, "to": TableId JSON}]}``),
``snapshot`` (on a ``ddl`` event: ``true`` when the statement describes a table as it is
*now* — a snapshot or a resync — so that it replaces whatever the history knew), ``source``
(on a ``source`` event, see ``SourceInfo``), ``search_path`` (on a PostgreSQL ``ddl`` event:
the session's effective search path, schema names in order), ``quarantine`` (on any event:
the capture knows it cannot be interpreted — e.g. a row whose binlog metadata contradicts the
schema history — and says why; the pipeline quarantines it with that reason).

Raw values are written with the tagged encoding of ``ddlcore.raw`` (its module docstring is
the specification: ``{"$b64": ...}`` bytes, ``{"$dec": ...}`` decimals, ``{"$date": ...}``,
``{"$datetime": ...}``, ``{"$time": ...}`` temporal text including MySQL's zero dates, ``{"$s": ...}``
for a string that would otherwise read as a number); the same encoding feeds
``ddlcore.spark.RowConverter.columns`` when Spark reads the arrays as ``array<string>``.
"""

from __future__ import annotations

import gzip
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

import msgspec

from . import jsontext, raw
from .errors import DdlCoreError

__all__ = ["ChangeEvent", "BadEvent", "ChangeLogError", "OPS", "ROW_OPS", "IMAGE_OPS", "AFTER_OPS", "BEFORE_OPS",
           "HISTORY_OPS", "encode_value",
           "decode_value", "encode_row", "decode_row", "read_changelog", "iter_changelog",
           "ChangeLogWriter", "write_parquet", "EVENT_FIELDS", "BASE_FIELDS", "OPTIONAL_FIELDS",
           "SourceInfo", "PARQUET_SCHEMA_FIELDS", "is_changelog_file", "changelog_files",
           "CHANGELOG_SUFFIXES", "NAMED_CHANGELOG_SUFFIXES", "event_line"]

#: every op; ``ROW_OPS``: the row events (each becomes an output row: ``t``, a truncate, a row
#: without images); ``IMAGE_OPS``: the row events that carry row images (``before`` / ``after``);
#: ``HISTORY_OPS``: the events recorded in the schema history (``stmt``, statement-format DML,
#: is neither: its rows are not in the log)
OPS = frozenset({"ddl", "c", "u", "d", "r", "t", "source", "stmt"})
ROW_OPS = ("c", "u", "d", "r", "t")
IMAGE_OPS = ("c", "u", "d", "r")
#: the row events whose ``after`` / ``before`` image is read (an image an event of another op
#: carries, such as an insert's ``before``, is ignored: neither converted nor an error)
AFTER_OPS, BEFORE_OPS = ("c", "r", "u"), ("u", "d")
HISTORY_OPS = ("ddl", "source")
#: the fields of the first contract (always written)
BASE_FIELDS = ("seq", "position", "ts", "op", "database", "table", "ddl", "before", "after")
#: fields written only when set
OPTIONAL_FIELDS = ("schema", "tx", "row", "catalog", "snapshot", "source", "search_path", "quarantine")
EVENT_FIELDS = BASE_FIELDS + OPTIONAL_FIELDS
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1


class ChangeLogError(DdlCoreError):
    """A malformed change-log event: ``source`` (file), ``line`` (1-based; row number for
    Parquet), ``reason``."""

    def __init__(self, reason: str, *, source: str | None = None, line: int | None = None):
        self.reason = reason
        self.source = source
        self.line = line
        where = "".join((f"{source}:" if source is not None else "",
                         f"{line}:" if source is not None and line is not None else
                         f"line {line}:" if line is not None else ""))
        where = f"{where} " if where else ""
        super().__init__(f"{where}{reason}")


#: ``json.dumps(..., ensure_ascii=False, separators=(",", ":"), allow_nan=False)`` built once (an event
#: line is encoded per event: ``json.dumps`` with arguments builds a new encoder each call)
_LINE_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


@dataclass(frozen=True)
class ChangeEvent:
    """One validated event (see the module docstring).  ``before``/``after`` hold raw values
    *encoded* (JSON-ready); ``decode_row`` gives Python values."""

    seq: int
    position: str
    ts: int | None
    op: str
    database: str | None = None
    table: str | None = None
    ddl: str | None = None
    before: list | None = None
    after: list | None = None
    schema: str | None = None
    tx: str | None = None
    row: int | None = None
    catalog: dict | None = None
    snapshot: bool | None = None
    source: dict | None = None
    search_path: list | None = None
    quarantine: str | None = None

    def to_json(self) -> dict[str, Any]:
        # a plain dict, not dataclasses.asdict: that deep-copies every row image (capture's hot path)
        d = {"seq": self.seq, "position": self.position, "ts": self.ts, "op": self.op,
             "database": self.database, "table": self.table, "ddl": self.ddl,
             "before": self.before, "after": self.after}
        if self.schema is not None:
            d["schema"] = self.schema
        if self.tx is not None:
            d["tx"] = self.tx
        if self.row is not None:
            d["row"] = self.row
        if self.catalog is not None:
            d["catalog"] = self.catalog
        if self.snapshot is not None:
            d["snapshot"] = self.snapshot
        if self.source is not None:
            d["source"] = self.source
        if self.search_path is not None:
            d["search_path"] = self.search_path
        if self.quarantine is not None:
            d["quarantine"] = self.quarantine
        return d

    def to_line(self) -> str:
        return _LINE_ENCODER(self.to_json())


class _RowLine(msgspec.Struct, omit_defaults=True, gc=False):
    """A row or truncate event as ``event_line`` hands it to msgspec: the fields in the order
    ``ChangeEvent.to_json`` writes them, the optional ones left out when null (``omit_defaults``)."""

    seq: int
    position: str
    ts: Any
    op: str
    database: Any
    table: Any
    ddl: Any
    before: Any
    after: Any
    schema: Any = None
    tx: Any = None
    row: Any = None
    quarantine: Any = None


_LINE_OPS = frozenset({"c", "u", "d", "r", "t"})
_SCALARS = frozenset({type(None), str, int})
#: the types of an encoded row value (``ddlcore.raw.encode_json``: a tag is a one-key dict of text)
_IMAGE_VALUES = frozenset({type(None), str, int, bool, dict})


def event_line(seq: int, position: str, ts: int | None, op: str, database: str | None = None,
               table: str | None = None, ddl: str | None = None, before: list | None = None,
               after: list | None = None, extra: dict[str, Any] | None = None) -> bytes:
    """``ChangeEvent(seq, ..., **extra).to_line()`` as UTF-8 bytes (no newline), byte for byte,
    without building the ``ChangeEvent`` for a row or truncate event (op ``c`` ``u`` ``d`` ``r``
    ``t`` with the optional fields ``schema``, ``tx``, ``row``, ``quarantine``) holding only
    text, integers, booleans, nulls and tags (``{tag: text}``: the images are encoded raw
    values): ``ddlcore.jsontext``'s fast path writes those.  Every other event (a float in an
    image, another op or field) is built as a ``ChangeEvent`` and written by ``json``.  Raises
    ``TypeError`` for an unknown field, what ``json`` raises for a value it cannot write."""
    if (op in _LINE_OPS and type(seq) is int and type(position) is str and (ts is None or type(ts) is int)
            and (database is None or type(database) is str) and (table is None or type(table) is str)
            and ddl is None and (not extra or _SCALARS.issuperset(map(type, extra.values())))
            and (before is None or (type(before) is list and _IMAGE_VALUES.issuperset(map(type, before))))
            and (after is None or (type(after) is list and _IMAGE_VALUES.issuperset(map(type, after))))):
        try:
            line = jsontext.dumps_plain(_RowLine(seq, position, ts, op, database, table, ddl, before, after,
                                                 **(extra or {})))
        except TypeError:  # an unknown field: ChangeEvent says which
            line = None
        if line is not None:
            return line
    return ChangeEvent(seq, position, ts, op, database, table, ddl, before, after,
                       **(extra or {})).to_line().encode("utf-8")


@dataclass(frozen=True)
class BadEvent:
    """An event the reader could not accept: where (``source``, ``line``), why (``reason``) and
    the raw text (``text``), so it can be quarantined, never dropped."""

    source: str
    line: int
    reason: str
    text: str
    seq: int | None = None


# ---------------------------------------------------------------------------- values


def encode_value(value: Any) -> Any:
    """A Python raw value → its JSON-ready tagged encoding (``ddlcore.raw.encode_json``).
    Raises ``TypeError`` / ``ValueError`` for a value no raw kind holds."""
    return raw.encode_json(value)


def decode_value(value: Any) -> Any:
    """Inverse of ``encode_value`` (``ddlcore.raw.decode_json``); raises ``ValueError`` for an
    unknown tag or a malformed tagged value."""
    try:
        return raw.decode_json(value)
    except (TypeError, KeyError) as exc:
        raise ValueError(str(exc)) from None


def encode_row(values: Iterable[Any] | None) -> list | None:
    return raw.encode_row(values)


def decode_row(values: list | None) -> list | None:
    return None if values is None else [decode_value(v) for v in values]


# ---------------------------------------------------------------------------- validation


def _check_text(name: str, v: Any) -> None:
    if v is not None and not isinstance(v, str):
        raise ValueError(f"{name} must be text or null, got {type(v).__name__}")


def _check_catalog(catalog: Any) -> None:
    from .model import Table, TableId

    if not isinstance(catalog, dict):
        raise ValueError("catalog must be an object {\"tables\": [...], \"dropped\": [...]}")
    unknown = set(catalog) - {"tables", "dropped", "renamed"}
    if unknown:
        raise ValueError(f"catalog: unknown field(s) {sorted(unknown)}")
    for key, cls in (("tables", Table), ("dropped", TableId)):
        items = catalog.get(key, [])
        if not isinstance(items, list):
            raise ValueError(f"catalog.{key} must be an array")
        for i, item in enumerate(items):
            try:
                cls.from_json(item)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise ValueError(f"catalog.{key}[{i}]: not a {cls.__name__} ({exc})") from None
    renamed = catalog.get("renamed", [])
    if not isinstance(renamed, list):
        raise ValueError("catalog.renamed must be an array")
    for i, item in enumerate(renamed):
        try:
            TableId.from_json(item["from"])
            TableId.from_json(item["to"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"catalog.renamed[{i}]: not {{\"from\": TableId, \"to\": TableId}} ({exc})") from None


def validate(obj: Any) -> ChangeEvent:
    """A decoded JSON object → ``ChangeEvent``; raises ``ValueError`` naming the problem."""
    if not isinstance(obj, dict):
        raise ValueError(f"an event is a JSON object, got {type(obj).__name__}")
    unknown = set(obj) - set(EVENT_FIELDS)
    if unknown:
        raise ValueError(f"unknown field(s) {sorted(unknown)}")
    seq = obj.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool) or not INT64_MIN <= seq <= INT64_MAX:
        raise ValueError(f"seq must be an int64, got {seq!r}")
    position = obj.get("position")
    if not isinstance(position, str) or not position:
        raise ValueError(f"position must be non-empty text, got {position!r}")
    ts = obj.get("ts")
    if ts is not None and (not isinstance(ts, int) or isinstance(ts, bool)):
        raise ValueError(f"ts must be milliseconds (int) or null, got {ts!r}")
    op = obj.get("op")
    if op not in OPS:
        raise ValueError(f"op must be one of {sorted(OPS)}, got {op!r}")
    database, table, ddl = obj.get("database"), obj.get("table"), obj.get("ddl")
    before, after = obj.get("before"), obj.get("after")
    schema, tx, row = obj.get("schema"), obj.get("tx"), obj.get("row")
    catalog, snapshot, source = obj.get("catalog"), obj.get("snapshot"), obj.get("source")
    search_path, quarantine = obj.get("search_path"), obj.get("quarantine")
    for name, v in (("database", database), ("table", table), ("ddl", ddl), ("schema", schema),
                    ("tx", tx), ("quarantine", quarantine)):
        _check_text(name, v)
    if search_path is not None:
        if op != "ddl":
            raise ValueError("only a ddl event carries a search_path")
        if not isinstance(search_path, list) or not all(isinstance(x, str) and x for x in search_path):
            raise ValueError(f"search_path must be an array of schema names, got {search_path!r}")
    if row is not None and (not isinstance(row, int) or isinstance(row, bool) or row < 0):
        raise ValueError(f"row must be a non-negative int or null, got {row!r}")
    if snapshot is not None and not isinstance(snapshot, bool):
        raise ValueError(f"snapshot must be true, false or null, got {snapshot!r}")
    if op not in IMAGE_OPS and (before is not None or after is not None):
        raise ValueError(f"a {op} event carries no row images")
    if catalog is not None:
        if op != "ddl":
            raise ValueError("only a ddl event carries a catalog description")
        _check_catalog(catalog)
    if source is not None and op != "source":
        raise ValueError("only a source event carries source")
    if op == "ddl":
        if not ddl:
            raise ValueError("a ddl event needs the ddl text")
    elif op == "stmt":
        if not ddl:
            raise ValueError("a stmt event needs the statement text (in ddl)")
    elif op == "source":
        SourceInfo.from_json(source)
    elif op == "t":
        if not table:
            raise ValueError("a truncate event (op=t) needs its table")
    else:
        if not table:
            raise ValueError(f"a row event (op={op}) needs its table")
        need = {"c": ("after",), "r": ("after",), "u": ("before", "after"), "d": ("before",)}[op]
        for name in need:
            if not isinstance(obj.get(name), list):
                raise ValueError(f"op={op} needs {name} as an array of raw values")
        for name in ("before", "after"):
            image = obj.get(name)
            if image is not None:
                if not isinstance(image, list):
                    raise ValueError(f"{name} must be an array")
                for i, v in enumerate(image):
                    try:
                        decode_value(v)
                    except ValueError as exc:
                        raise ValueError(f"{name}[{i}]: {exc}") from None
    return ChangeEvent(seq, position, ts, op, database, table, ddl, before, after,
                       schema, tx, row, catalog, snapshot, source, search_path, quarantine)


@dataclass(frozen=True)
class SourceInfo:
    """What a ``source`` event says (docs/changelog.md, "The source event"): who wrote the log
    and how its DDL is to be read.

    * ``dialect``: the ddlcore dialect of the DDL events (``"mysql"``, ``"postgres"``).
    * ``flavor``: the server family within the dialect (``"mariadb"``, ``"mysql"``,
      ``"tidb"``; ``None`` for PostgreSQL).
    * ``epoch``: text that names this log: made new when a capture starts a log (first run,
      re-snapshot); every later ``source`` event of the same log repeats it.  A pipeline output
      continues one log only (``ddlcore run`` refuses another epoch).
    * ``server``: the source's identity (``{"server_id": 1, "server_uuid": "...", "version":
      "10.11.6-MariaDB", "system_identifier": "..."}``; keys as the source names them).
    * ``parser_options``: options for the dialect's parser, exactly as ``Dialect.parser(**)``
      takes them (MySQL: ``flavor``, ``character_set_server``, ``collation_server``,
      ``lower_case_table_names``, ``ansi_quotes``, ``no_backslash_escapes``,
      ``server_version``; PostgreSQL: ``search_path``).
    * ``settings``: the server settings those options were derived from, as the server
      printed them (``sql_mode``, ``time_zone``, ``lc_monetary``...), for the record.
    * ``capture``: what wrote the log (``{"tool": "ddlcore capture mysql", "version": "0.2.0"}``).

    ``from_json`` raises ``ValueError`` naming a missing or mistyped field."""

    dialect: str
    epoch: str
    flavor: str | None = None
    server: dict = field(default_factory=dict)
    parser_options: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    capture: dict = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"dialect": self.dialect, "flavor": self.flavor, "epoch": self.epoch,
                "server": dict(self.server), "parser_options": dict(self.parser_options),
                "settings": dict(self.settings), "capture": dict(self.capture)}

    @classmethod
    def from_json(cls, data: Any) -> "SourceInfo":
        if not isinstance(data, dict):
            raise ValueError("a source event needs source as an object")
        unknown = set(data) - {"dialect", "flavor", "epoch", "server", "parser_options", "settings", "capture"}
        if unknown:
            raise ValueError(f"source: unknown field(s) {sorted(unknown)}")
        for key in ("dialect", "epoch"):
            if not isinstance(data.get(key), str) or not data.get(key):
                raise ValueError(f"source.{key} must be non-empty text, got {data.get(key)!r}")
        _check_text("source.flavor", data.get("flavor"))
        for key in ("server", "parser_options", "settings", "capture"):
            if not isinstance(data.get(key, {}), dict):
                raise ValueError(f"source.{key} must be an object")
        return cls(data["dialect"], data["epoch"], data.get("flavor"), dict(data.get("server", {})),
                   dict(data.get("parser_options", {})), dict(data.get("settings", {})),
                   dict(data.get("capture", {})))

    def identity(self) -> dict[str, Any]:
        """What makes two logs the same log: dialect, flavor, the server's identity (``server``
        without its ``version``: an upgraded server is the same server) and the epoch."""
        return {"dialect": self.dialect, "flavor": self.flavor,
                "server": {k: v for k, v in self.server.items() if k != "version"}, "epoch": self.epoch}


# ---------------------------------------------------------------------------- reading


def _open_text(path: Path) -> io.TextIOBase:
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="strict")
    return open(path, encoding="utf-8", errors="strict")


#: the names of change-log files in a directory (a capture's ``--out``): other files there
#: (``checkpoint.json``, ``history.sqlite``, ``capture.log``) are not read
#: The one rule for which files are a change log, shared by ``ddlcore run`` and ``ddlcore history
#: record`` (docs/changelog.md "Files"): in a directory, the files named ``*.jsonl``, ``*.ndjson``
#: (JSON Lines, each optionally ``.gz``) or ``*.parquet``, not hidden; a file named on the command
#: line may also be ``*.json`` / ``*.json.gz`` (JSON Lines; ``history record`` also takes one JSON
#: array).  ``*.json`` is not listed from a directory: a capture's directory holds
#: ``checkpoint.json``.
CHANGELOG_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz", ".parquet")
#: what a change-log file named on its own may end in (``CHANGELOG_SUFFIXES`` and ``.json[.gz]``)
NAMED_CHANGELOG_SUFFIXES = CHANGELOG_SUFFIXES + (".json", ".json.gz")


def is_changelog_file(path: str | os.PathLike, *, named: bool = False) -> bool:
    """``path`` is named as a change-log file (``CHANGELOG_SUFFIXES``, case-insensitive; with
    ``named``, a file given on its own, ``NAMED_CHANGELOG_SUFFIXES``) and is not hidden
    (``.``/``_`` prefix, as Spark and Hadoop skip them in a directory)."""
    name = Path(path).name
    suffixes = NAMED_CHANGELOG_SUFFIXES if named else CHANGELOG_SUFFIXES
    return (named or not name.startswith((".", "_"))) and name.lower().endswith(suffixes)


def changelog_files(path: str | os.PathLike) -> list[Path]:
    """The change-log files ``path`` names: itself if it is a file, else the change-log files
    directly inside the directory, sorted by name (a capture names its files so that name
    order is seq order).  Raises ``ChangeLogError`` for a directory that holds none."""
    p = Path(path)
    if not p.is_dir():
        return [p]
    files = sorted(f for f in p.iterdir() if f.is_file() and is_changelog_file(f))
    if not files:
        raise ChangeLogError(f"no change-log files (*{', *'.join(CHANGELOG_SUFFIXES)}) in this directory",
                             source=str(p))
    return files


def iter_changelog(path: str | os.PathLike) -> Iterator[ChangeEvent | BadEvent]:
    """Every event of a change log, in file order: ``ChangeEvent`` for a valid one,
    ``BadEvent`` (line, reason, text) for a malformed one.  JSON Lines (``.jsonl``, ``.json``,
    ``.gz``) or Parquet (``.parquet``), or a directory of them (``changelog_files``).  Blank
    lines are ignored.  A torn last line (a writer killed mid-line) is a ``BadEvent`` too."""
    p = Path(path)
    if p.is_dir():
        for f in changelog_files(p):
            yield from iter_changelog(f)
        return
    if p.suffix == ".parquet":
        yield from _iter_parquet(p)
        return
    src = str(p)
    with _open_text(p) as fh:
        line_no = 0
        while True:
            try:
                line = fh.readline()
            except (UnicodeDecodeError, EOFError, OSError) as exc:  # corrupt or truncated gzip
                yield BadEvent(src, line_no + 1, f"unreadable: {exc}", "")
                return
            if not line:
                return
            line_no += 1
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                yield BadEvent(src, line_no, f"not JSON: {exc.msg} at column {exc.colno}", line.rstrip("\n"))
                continue
            try:
                yield validate(obj)
            except ValueError as exc:
                seq = obj.get("seq") if isinstance(obj, dict) and isinstance(obj.get("seq"), int) else None
                yield BadEvent(src, line_no, str(exc), line.rstrip("\n"), seq)


def read_changelog(path: str | os.PathLike) -> Iterator[ChangeEvent]:
    """Strict reading: every event, or ``ChangeLogError`` (source, line, reason) at the first
    malformed one."""
    for ev in iter_changelog(path):
        if isinstance(ev, BadEvent):
            raise ChangeLogError(ev.reason, source=ev.source, line=ev.line)
        yield ev


# ---------------------------------------------------------------------------- writing


#: bytes buffered before a write to the file (``flush`` writes the rest): fewer system calls
_BUFFER = 1 << 18


class ChangeLogWriter:
    """Appends events to a JSON Lines file (gzip when the name ends in ``.gz``).

    ``flush()`` makes what was written durable (``fsync``) — call it before recording a
    checkpoint that covers those events.  Seq must increase strictly; a smaller or equal seq
    raises ``ValueError``."""

    def __init__(self, path: str | os.PathLike, *, last_seq: int | None = None):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        raw = open(self.path, "ab", buffering=_BUFFER)
        self._raw = raw
        self._fh = gzip.GzipFile(fileobj=raw, mode="ab") if self.path.suffix == ".gz" else raw
        self.last_seq = last_seq

    def write(self, event: ChangeEvent) -> None:
        self.write_line(event.seq, event.to_line().encode("utf-8"))

    def write_line(self, seq: int, line: bytes) -> None:
        """Append the event ``seq`` already encoded (one line of UTF-8 JSON, without its
        newline: ``event_line``)."""
        if self.last_seq is not None and seq <= self.last_seq:
            raise ValueError(f"seq must increase: {seq} after {self.last_seq}")
        self._fh.write(line + b"\n")
        self.last_seq = seq

    def flush(self) -> None:
        self._fh.flush()
        if self._fh is not self._raw:
            self._raw.flush()
        os.fsync(self._raw.fileno())

    def close(self) -> None:
        self.flush()
        if self._fh is not self._raw:
            self._fh.close()
        self._raw.close()

    def __enter__(self) -> "ChangeLogWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: Parquet columns of a change log: (name, Arrow type name); JSON-valued fields (``before``,
#: ``after``, ``catalog``, ``source``) are their compact JSON text
PARQUET_SCHEMA_FIELDS = (("seq", "int64"), ("position", "string"), ("ts", "int64"), ("op", "string"),
                         ("database", "string"), ("table", "string"), ("ddl", "string"),
                         ("before", "string"), ("after", "string"), ("schema", "string"),
                         ("tx", "string"), ("row", "int64"), ("catalog", "string"),
                         ("snapshot", "bool"), ("source", "string"), ("search_path", "string"),
                         ("quarantine", "string"))
_JSON_TEXT_FIELDS = ("before", "after", "catalog", "source", "search_path")


def write_parquet(events: Iterable[ChangeEvent], path: str | os.PathLike) -> None:
    """Write events as one Parquet file with the columns ``PARQUET_SCHEMA_FIELDS`` (needs
    pyarrow).  ``before``/``after``/``catalog``/``source`` are the JSON text of their values."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = []
    for e in events:
        r = {k: None for k, _ in PARQUET_SCHEMA_FIELDS}
        r.update(e.to_json())
        for k in _JSON_TEXT_FIELDS:
            r[k] = None if r[k] is None else json.dumps(r[k], ensure_ascii=False, separators=(",", ":"))
        rows.append(r)
    schema = pa.schema([(k, getattr(pa, "bool_" if t == "bool" else t)()) for k, t in PARQUET_SCHEMA_FIELDS])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), str(path))


def _iter_parquet(path: Path) -> Iterator[ChangeEvent | BadEvent]:
    import pyarrow.parquet as pq

    files = sorted(path.glob("*.parquet")) if path.is_dir() else [path]
    for f in files:
        for i, row in enumerate(pq.read_table(str(f)).to_pylist(), start=1):
            text = json.dumps(row, ensure_ascii=False, default=str)
            try:
                for k in OPTIONAL_FIELDS:  # an absent optional field is a null column
                    if k in row and row[k] is None:
                        del row[k]
                for k in _JSON_TEXT_FIELDS:
                    if isinstance(row.get(k), str):
                        row[k] = json.loads(row[k])
                yield validate(row)
            except (ValueError, json.JSONDecodeError) as exc:
                yield BadEvent(str(f), i, str(exc), text, row.get("seq"))
