"""Decoding the messages of PostgreSQL's built-in ``pgoutput`` logical decoding plugin.

Owns: turning one ``pgoutput`` message (the payload of an XLogData message of the streaming
replication protocol) into a small frozen dataclass, and LSN text.  Must not know: the change
log, the table model, the replication connection.

The format is the PostgreSQL 15 manual's section 55.9 "Logical Replication Message Formats",
protocol version 1 (``proto_version '1'``; no streamed transactions, no two-phase, no binary
values) plus the ``messages`` option (Message, ``M``).  No Python library for it is well kept
(``pypgoutput``, the one on PyPI built for psycopg2, had its last release in 2022 and reads no
``M`` messages), so the few message shapes are decoded here with ``struct``; each class names
the manual's message and its fields.

Numbers are big-endian (network order) as the manual says: ``Int8``/``Int16``/``Int32``/
``Int64``; ``String`` is NUL-terminated; LSNs are ``Int64`` (``XLogRecPtr``); timestamps are
``Int64`` microseconds since 2000-01-01 00:00 UTC (``TimestampTz``).

Tuple data (manual, "TupleData"): per column one of ``n`` (NULL), ``u`` (an unchanged TOASTed
value: the server did not send it), ``t`` (text in the output function's format, in the
connection's ``client_encoding``), ``b`` (binary; only with the ``binary`` option, which the
capture does not use).  ``decode_tuple`` returns ``None`` for ``n``, ``UNCHANGED`` for ``u``,
``str`` for ``t`` and ``bytes`` for ``b``.

Errors: ``PgOutputError`` (a ``ValueError``) names the message type, the byte offset and what
was expected; nothing is skipped silently.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Union

__all__ = ["PgOutputError", "UNCHANGED", "Begin", "Commit", "Origin", "Relation", "RelationColumn",
           "Type", "Insert", "Update", "Delete", "Truncate", "Message", "decode", "format_lsn",
           "parse_lsn", "pg_time_to_unix_ms", "PG_EPOCH_OFFSET_US"]

#: microseconds from 1970-01-01 to 2000-01-01 (PostgreSQL's epoch)
PG_EPOCH_OFFSET_US = 946_684_800 * 1_000_000


class PgOutputError(ValueError):
    """A pgoutput message that cannot be decoded: ``kind`` (the message type byte as text),
    ``offset`` (byte offset in the payload) and what was wrong."""

    def __init__(self, reason: str, *, kind: str | None = None, offset: int | None = None):
        self.kind, self.offset, self.reason = kind, offset, reason
        where = "" if kind is None else f"pgoutput {kind!r} message"
        if offset is not None:
            where += f" at byte {offset}"
        super().__init__(f"{where}: {reason}" if where else reason)


class _Unchanged:
    """An unchanged TOASTed value (``u``): the server did not send it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNCHANGED"

    def __reduce__(self) -> str:
        return "UNCHANGED"


#: the marker ``decode_tuple`` returns for ``u``
UNCHANGED = _Unchanged()

TupleValue = Union[None, str, bytes, _Unchanged]


def format_lsn(lsn: int) -> str:
    """``0x16B3748`` → ``"0/16B3748"`` (PostgreSQL's ``pg_lsn`` text: two hex halves)."""
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


def parse_lsn(text: str) -> int:
    """``"0/16B3748"`` → its integer; raises ``ValueError`` for anything else."""
    hi, sep, lo = text.strip().partition("/")
    try:
        if not sep or not hi or not lo:
            raise ValueError
        value = (int(hi, 16) << 32) | int(lo, 16)
        if int(lo, 16) > 0xFFFFFFFF or value >= 1 << 64:
            raise ValueError
        return value
    except ValueError:
        raise ValueError(f"not an LSN {text!r} (expected X/Y in hexadecimal, e.g. 0/16B3748)") from None


def pg_time_to_unix_ms(us: int) -> int:
    """A ``TimestampTz`` (µs since 2000-01-01 UTC) → milliseconds since 1970-01-01 UTC."""
    return (us + PG_EPOCH_OFFSET_US) // 1000


# ---------------------------------------------------------------------------------- messages


@dataclass(frozen=True)
class Begin:
    """``B``: a transaction starts.  ``final_lsn`` (its commit record's LSN), ``commit_time``
    (µs since 2000-01-01), ``xid``."""

    final_lsn: int
    commit_time: int
    xid: int


@dataclass(frozen=True)
class Commit:
    """``C``: the transaction ends.  ``commit_lsn`` (the commit record), ``end_lsn`` (the end
    of the transaction: where decoding resumes after it), ``commit_time``."""

    flags: int
    commit_lsn: int
    end_lsn: int
    commit_time: int


@dataclass(frozen=True)
class Origin:
    """``O``: the transaction was replicated from ``name`` (replication origin) at ``lsn``."""

    lsn: int
    name: str


@dataclass(frozen=True)
class RelationColumn:
    """One column of a Relation message: ``key`` (part of the replica identity), ``name``,
    ``type_oid``, ``typmod`` (``atttypmod``; -1 for none)."""

    key: bool
    name: str
    type_oid: int
    typmod: int


@dataclass(frozen=True)
class Relation:
    """``R``: the columns of relation ``relid`` as the following changes carry them.
    ``namespace`` (``""`` for pg_catalog in the wire format; given here as sent),
    ``name``, ``replica_identity`` (``relreplident``: ``d``, ``n``, ``f``, ``i``),
    ``columns``.  pgoutput leaves out dropped and generated columns (and, with a publication
    column list, the columns outside it)."""

    relid: int
    namespace: str
    name: str
    replica_identity: str
    columns: tuple[RelationColumn, ...]


@dataclass(frozen=True)
class Type:
    """``Y``: a non-built-in type used by a relation: ``oid`` (the column's type), and the
    ``namespace`` / ``name`` of its base type (a domain's base)."""

    oid: int
    namespace: str
    name: str


@dataclass(frozen=True)
class Insert:
    """``I``: a row ``new`` inserted into ``relid``."""

    relid: int
    new: tuple[TupleValue, ...]


@dataclass(frozen=True)
class Update:
    """``U``: a row of ``relid`` updated to ``new``.  ``old_kind``: ``"K"`` (``old`` holds the
    old replica identity key; other columns are ``n``), ``"O"`` (``old`` is the whole old row:
    ``REPLICA IDENTITY FULL``), or ``None`` (no old tuple: the key did not change)."""

    relid: int
    old_kind: str | None
    old: tuple[TupleValue, ...] | None
    new: tuple[TupleValue, ...]


@dataclass(frozen=True)
class Delete:
    """``D``: a row of ``relid`` deleted; ``old_kind`` ``"K"`` or ``"O"`` as for ``Update``."""

    relid: int
    old_kind: str
    old: tuple[TupleValue, ...]


@dataclass(frozen=True)
class Truncate:
    """``T``: ``relids`` truncated (``TRUNCATE ... CASCADE`` / ``RESTART IDENTITY`` flags)."""

    relids: tuple[int, ...]
    cascade: bool
    restart_identity: bool


@dataclass(frozen=True)
class Message:
    """``M``: a logical decoding message (``pg_logical_emit_message``): ``transactional``,
    ``lsn``, ``prefix``, ``content`` (bytes)."""

    transactional: bool
    lsn: int
    prefix: str
    content: bytes


PgOutputMessage = Union[Begin, Commit, Origin, Relation, Type, Insert, Update, Delete, Truncate, Message]


# ---------------------------------------------------------------------------------- reader


class _Reader:
    """A cursor over one payload."""

    __slots__ = ("data", "pos", "kind", "encoding")

    def __init__(self, data: bytes, kind: str, encoding: str):
        self.data, self.pos, self.kind, self.encoding = data, 1, kind, encoding

    def fail(self, reason: str) -> PgOutputError:
        return PgOutputError(reason, kind=self.kind, offset=self.pos)

    def unpack(self, fmt: struct.Struct) -> tuple:
        end = self.pos + fmt.size
        if end > len(self.data):
            raise self.fail(f"truncated: {fmt.size} bytes expected, {len(self.data) - self.pos} left")
        out = fmt.unpack_from(self.data, self.pos)
        self.pos = end
        return out

    def byte(self) -> str:
        if self.pos >= len(self.data):
            raise self.fail("truncated: 1 byte expected")
        b = self.data[self.pos]
        self.pos += 1
        return chr(b)

    def string(self) -> str:
        end = self.data.find(b"\0", self.pos)
        if end < 0:
            raise self.fail("unterminated String")
        raw = self.data[self.pos:end]
        self.pos = end + 1
        try:
            return raw.decode(self.encoding)
        except UnicodeDecodeError as exc:
            raise self.fail(f"String not in {self.encoding}: {exc}") from None

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise self.fail(f"truncated: {n} bytes expected, {len(self.data) - self.pos} left")
        raw = self.data[self.pos:self.pos + n]
        self.pos += n
        return raw

    def done(self) -> None:
        if self.pos != len(self.data):
            raise self.fail(f"{len(self.data) - self.pos} unexpected trailing bytes")


_I8 = struct.Struct("!b")
_I16 = struct.Struct("!h")
_I32 = struct.Struct("!i")
_U32 = struct.Struct("!I")
_I64 = struct.Struct("!q")
_U64 = struct.Struct("!Q")
_BEGIN = struct.Struct("!QqI")
_COMMIT = struct.Struct("!bQQq")
_COLUMN_TYPE = struct.Struct("!Ii")


def _tuple(r: _Reader) -> tuple[TupleValue, ...]:
    """TupleData: Int16 column count, then per column a kind byte and its value."""
    (n,) = r.unpack(_I16)
    if n < 0:
        raise r.fail(f"negative column count {n}")
    values: list[TupleValue] = []
    for i in range(n):
        kind = r.byte()
        if kind == "n":
            values.append(None)
        elif kind == "u":
            values.append(UNCHANGED)
        elif kind in ("t", "b"):
            (length,) = r.unpack(_I32)
            raw = r.take(length)
            if kind == "b":
                values.append(raw)
            else:
                try:
                    values.append(raw.decode(r.encoding))
                except UnicodeDecodeError as exc:
                    raise r.fail(f"column {i + 1}: text value not in {r.encoding}: {exc}") from None
        else:
            raise r.fail(f"column {i + 1}: unknown TupleData kind {kind!r} (expected n, u, t or b)")
    return tuple(values)


def _begin(r: _Reader) -> Begin:
    final_lsn, ts, xid = r.unpack(_BEGIN)
    return Begin(final_lsn, ts, xid)


def _commit(r: _Reader) -> Commit:
    flags, commit_lsn, end_lsn, ts = r.unpack(_COMMIT)
    return Commit(flags, commit_lsn, end_lsn, ts)


def _origin(r: _Reader) -> Origin:
    (lsn,) = r.unpack(_U64)
    return Origin(lsn, r.string())


def _relation(r: _Reader) -> Relation:
    (relid,) = r.unpack(_U32)
    namespace, name = r.string(), r.string()
    ident = r.byte()
    (n,) = r.unpack(_I16)
    columns = []
    for _ in range(n):
        (flags,) = r.unpack(_I8)
        col = r.string()
        type_oid, typmod = r.unpack(_COLUMN_TYPE)
        columns.append(RelationColumn(bool(flags & 1), col, type_oid, typmod))
    return Relation(relid, namespace, name, ident, tuple(columns))


def _type(r: _Reader) -> Type:
    (oid,) = r.unpack(_U32)
    return Type(oid, r.string(), r.string())


def _insert(r: _Reader) -> Insert:
    (relid,) = r.unpack(_U32)
    if r.byte() != "N":
        raise r.fail("expected 'N' before the new tuple")
    return Insert(relid, _tuple(r))


def _update(r: _Reader) -> Update:
    (relid,) = r.unpack(_U32)
    kind = r.byte()
    old_kind, old = None, None
    if kind in ("K", "O"):
        old_kind, old = kind, _tuple(r)
        kind = r.byte()
    if kind != "N":
        raise r.fail(f"expected 'K', 'O' or 'N', got {kind!r}")
    return Update(relid, old_kind, old, _tuple(r))


def _delete(r: _Reader) -> Delete:
    (relid,) = r.unpack(_U32)
    kind = r.byte()
    if kind not in ("K", "O"):
        raise r.fail(f"expected 'K' or 'O', got {kind!r}")
    return Delete(relid, kind, _tuple(r))


def _truncate(r: _Reader) -> Truncate:
    (n,) = r.unpack(_I32)
    (options,) = r.unpack(_I8)
    relids = tuple(r.unpack(_U32)[0] for _ in range(max(n, 0)))
    return Truncate(relids, bool(options & 1), bool(options & 2))


def _message(r: _Reader) -> Message:
    (flags,) = r.unpack(_I8)
    (lsn,) = r.unpack(_U64)
    prefix = r.string()
    (length,) = r.unpack(_I32)
    return Message(bool(flags & 1), lsn, prefix, r.take(length))


#: message type byte → decoder (manual 55.9, protocol version 1)
DECODERS = {"B": _begin, "C": _commit, "O": _origin, "R": _relation, "Y": _type, "I": _insert,
            "U": _update, "D": _delete, "T": _truncate, "M": _message}


def decode(payload: bytes | bytearray | memoryview, *, encoding: str = "utf-8") -> PgOutputMessage:
    """One pgoutput message → its dataclass.  ``encoding``: the replication connection's
    ``client_encoding`` (Python codec name) for names and text values.  Raises
    ``PgOutputError`` for an empty, unknown, truncated or overlong message."""
    data = bytes(payload)
    if not data:
        raise PgOutputError("empty message")
    kind = chr(data[0])
    decoder = DECODERS.get(kind)
    if decoder is None:
        raise PgOutputError(f"unknown message type {kind!r} (protocol version 1 has "
                            f"{', '.join(sorted(DECODERS))})", kind=kind, offset=0)
    r = _Reader(data, kind, encoding)
    msg = decoder(r)
    r.done()
    return msg
