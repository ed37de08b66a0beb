"""The change log: the contract between a capture and the pipeline.

Owns: the event shape, the tagged encoding of raw values that JSON cannot carry, reading and
writing JSON Lines (optionally gzip) and Parquet, and validating every event.  Must not know:
any dialect, Spark.

Event (one JSON object per line; DESIGN.md "Change log")::

    {"seq": 17, "position": "mariadb-bin.000003:1234", "ts": 1732280000000, "op": "u",
     "database": "shop", "table": "orders", "ddl": null,
     "before": [1, "ab", {"$bytes": "AAE="}], "after": [1, "ac", {"$bytes": "AAE="}]}

* ``seq``: int64, strictly increasing over the log (the order); ``position``: the source's
  native position text (binlog ``file:offset``, a GTID, an LSN, a TiDB commit_ts), kept for
  checkpoints; ``ts``: commit time in milliseconds since the epoch (UTC).
* ``op``: ``"ddl"`` (``ddl`` holds the statement, ``database`` the session's current
  database, ``table`` null), ``"c"`` create/insert (``after``), ``"u"`` update (``before``
  and ``after``), ``"d"`` delete (``before``), ``"r"`` snapshot read (``after``).
* ``before`` / ``after``: the raw values of one row in ordinal order, exactly as the source
  gave them: an UNSIGNED column may hold a negative number, an ENUM its 1-based index, a SET
  its bitmask, a string column bytes in the column's charset.

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from . import raw
from .errors import DdlCoreError

__all__ = ["ChangeEvent", "BadEvent", "ChangeLogError", "OPS", "encode_value", "decode_value",
           "encode_row", "decode_row", "read_changelog", "iter_changelog", "ChangeLogWriter",
           "write_parquet", "EVENT_FIELDS"]

OPS = frozenset({"ddl", "c", "u", "d", "r"})
EVENT_FIELDS = ("seq", "position", "ts", "op", "database", "table", "ddl", "before", "after")
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1


class ChangeLogError(DdlCoreError):
    """A malformed change-log event: ``source`` (file), ``line`` (1-based; row number for
    Parquet), ``reason``."""

    def __init__(self, reason: str, *, source: str | None = None, line: int | None = None):
        self.reason = reason
        self.source = source
        self.line = line
        where = f"{source}:{line}: " if source is not None else (f"line {line}: " if line is not None else "")
        super().__init__(f"{where}{reason}")


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

    def to_json(self) -> dict[str, Any]:
        # a plain dict, not dataclasses.asdict: that deep-copies every row image (capture's hot path)
        return {"seq": self.seq, "position": self.position, "ts": self.ts, "op": self.op,
                "database": self.database, "table": self.table, "ddl": self.ddl,
                "before": self.before, "after": self.after}

    def to_line(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


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
    for name, v in (("database", database), ("table", table), ("ddl", ddl)):
        if v is not None and not isinstance(v, str):
            raise ValueError(f"{name} must be text or null, got {type(v).__name__}")
    if op == "ddl":
        if not ddl:
            raise ValueError("a ddl event needs the ddl text")
        if before is not None or after is not None:
            raise ValueError("a ddl event carries no row images")
    else:
        if not table:
            raise ValueError(f"a row event (op={op}) needs its table")
        need = {"c": ("after",), "r": ("after",), "u": ("before", "after"), "d": ("before",)}[op]
        for name in need:
            if not isinstance(obj.get(name), list):
                raise ValueError(f"op={op} needs {name} as an array of raw values")
        for name in ("before", "after"):
            row = obj.get(name)
            if row is not None:
                if not isinstance(row, list):
                    raise ValueError(f"{name} must be an array")
                for i, v in enumerate(row):
                    try:
                        decode_value(v)
                    except ValueError as exc:
                        raise ValueError(f"{name}[{i}]: {exc}") from None
    return ChangeEvent(seq, position, ts, op, database, table, ddl, before, after)


# ---------------------------------------------------------------------------- reading


def _open_text(path: Path) -> io.TextIOBase:
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="strict")
    return open(path, encoding="utf-8", errors="strict")


def iter_changelog(path: str | os.PathLike) -> Iterator[ChangeEvent | BadEvent]:
    """Every event of a change log, in file order: ``ChangeEvent`` for a valid one,
    ``BadEvent`` (line, reason, text) for a malformed one.  JSON Lines (``.jsonl``, ``.json``,
    ``.gz``) or Parquet (``.parquet``, or a directory of them).  Blank lines are ignored.
    A torn last line (a writer killed mid-line) is a ``BadEvent`` too."""
    p = Path(path)
    if p.is_dir() or p.suffix == ".parquet":
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


class ChangeLogWriter:
    """Appends events to a JSON Lines file (gzip when the name ends in ``.gz``).

    ``flush()`` makes what was written durable (``fsync``) — call it before recording a
    checkpoint that covers those events.  Seq must increase strictly; a smaller or equal seq
    raises ``ValueError``."""

    def __init__(self, path: str | os.PathLike, *, last_seq: int | None = None):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        raw = open(self.path, "ab")
        self._raw = raw
        self._fh = gzip.GzipFile(fileobj=raw, mode="ab") if self.path.suffix == ".gz" else raw
        self.last_seq = last_seq

    def write(self, event: ChangeEvent) -> None:
        if self.last_seq is not None and event.seq <= self.last_seq:
            raise ValueError(f"seq must increase: {event.seq} after {self.last_seq}")
        self._fh.write(event.to_line().encode("utf-8") + b"\n")
        self.last_seq = event.seq

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


def write_parquet(events: Iterable[ChangeEvent], path: str | os.PathLike) -> None:
    """Write events as one Parquet file: the event fields as columns, ``before``/``after`` as
    the JSON text of their encoded arrays (needs pyarrow)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [e.to_json() for e in events]
    for r in rows:
        for k in ("before", "after"):
            r[k] = None if r[k] is None else json.dumps(r[k], ensure_ascii=False, separators=(",", ":"))
    schema = pa.schema([("seq", pa.int64()), ("position", pa.string()), ("ts", pa.int64()),
                        ("op", pa.string()), ("database", pa.string()), ("table", pa.string()),
                        ("ddl", pa.string()), ("before", pa.string()), ("after", pa.string())])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), str(path))


def _iter_parquet(path: Path) -> Iterator[ChangeEvent | BadEvent]:
    import pyarrow.parquet as pq

    files = sorted(path.glob("*.parquet")) if path.is_dir() else [path]
    for f in files:
        for i, row in enumerate(pq.read_table(str(f)).to_pylist(), start=1):
            text = json.dumps(row, ensure_ascii=False, default=str)
            try:
                for k in ("before", "after"):
                    if isinstance(row.get(k), str):
                        row[k] = json.loads(row[k])
                yield validate(row)
            except (ValueError, json.JSONDecodeError) as exc:
                yield BadEvent(str(f), i, str(exc), text, row.get("seq"))
