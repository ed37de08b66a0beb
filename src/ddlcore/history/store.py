"""History stores: where a ``SchemaHistory`` keeps its events, versions and table bodies.

Owns: the storage interface (``HistoryStore``), the row shapes it stores, and the in-memory
backend (``MemoryStore``, for tests).  The SQLite backend is ``ddlcore.history.sqlite``.
Must not know: DDL, parsers, the table model (bodies are opaque JSON text here).

The interface is deliberately small so that another backend (PostgreSQL, a compacted Kafka
topic) can be added as a plugin: one atomic ``write`` per recorded event, and a handful of
indexed reads.  What a backend must guarantee:

* ``write(batch)`` is atomic: after a crash the store holds either the whole batch or none of
  it, and the recorded events form a prefix of what was written;
* ``heads(seq)`` returns the latest version of every key alive at ``seq`` at a cost that
  grows with the number of keys (tables, views, databases), not with the number of events —
  this is what makes recovery independent of the history's length.

Rows hold JSON *text* for ids (``'["shop",null,"orders"]'``) and bodies, so every backend
stores the same bytes.
"""

from __future__ import annotations

import bisect
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Mapping

__all__ = ["EventRow", "VersionRow", "ChangeRow", "ShadowRow", "WriteBatch", "HistoryStore",
           "MemoryStore", "StoreConflict", "ENTITY_KINDS"]

#: what a version row can describe
ENTITY_KINDS = ("table", "view", "database")


class StoreConflict(RuntimeError):
    """``write`` found a last recorded seq other than the one the writer expected: another
    process wrote to the store.  Reopen the history and retry."""


@dataclass(frozen=True)
class EventRow:
    """One recorded DDL event.

    ``status``: ``"applied"``, ``"skipped"`` (not DDL of interest; ``reason`` says why) or
    ``"failed"`` (lenient mode; ``error`` is the ``DdlParseError`` as JSON text).  ``database``:
    the current database the statement ran in.  ``warnings``: JSON list text or ``None``.
    ``state``: JSON text of the session state after the event (``current_database``,
    ``search_path``, ``session``), present only when it differs from the previous event's."""

    seq: int
    position: str | None
    ts: int | None
    database: str | None
    ddl: str
    status: str
    reason: str | None = None
    error: str | None = None
    warnings: str | None = None
    state: str | None = None


@dataclass(frozen=True)
class VersionRow:
    """One version of one entity (``kind`` in ``ENTITY_KINDS``; ``key`` its lookup key as
    JSON text), valid from event ``seq`` until the key's next version.

    ``version`` counts from 1 per key.  ``change``: ``create``, ``alter``, ``rename`` or
    ``drop``.  ``name``: the id as written (JSON text).  ``body``: hash of the entity's body
    (``None``: nothing exists under this key from ``seq`` on).  ``fingerprint``: the table's
    structural fingerprint.  ``other``: for a rename, the id it came from (when ``body`` is
    set) or went to (when ``body`` is ``None``), as JSON text."""

    kind: str
    key: str
    version: int
    seq: int
    change: str
    name: str
    body: str | None
    fingerprint: str | None = None
    other: str | None = None


@dataclass(frozen=True)
class ChangeRow:
    """One table change of one event, as the parser reported it (the schema change event):
    ``change_no`` orders the changes of an event; ``table_id`` / ``previous_id`` are JSON text;
    ``before`` / ``after`` body hashes; ``version`` the version of ``table_id`` in force after
    the event (``None`` when the table is outside the history's filter)."""

    seq: int
    change_no: int
    kind: str
    table_id: str
    previous_id: str | None
    before: str | None
    after: str | None
    version: int | None


@dataclass(frozen=True)
class ShadowRow:
    """The current body of an entity *outside* the filter: not versioned, kept only so that
    a later RENAME into the filter (or recording after a restart) knows its definition."""

    kind: str
    key: str
    name: str
    body: str


@dataclass
class WriteBatch:
    """Everything one recorded event writes (``HistoryStore.write`` applies it atomically).

    ``expect_last_seq``: the last seq the writer believes is recorded (``None``: none)."""

    event: EventRow
    expect_last_seq: int | None
    bodies: dict[str, str] = field(default_factory=dict)
    versions: list[VersionRow] = field(default_factory=list)
    changes: list[ChangeRow] = field(default_factory=list)
    shadow_put: list[ShadowRow] = field(default_factory=list)
    shadow_delete: list[tuple[str, str]] = field(default_factory=list)


class HistoryStore(ABC):
    """The storage interface of ``SchemaHistory``.  Seqs are ints; ranges are inclusive."""

    # -- metadata -------------------------------------------------------------------------

    @abstractmethod
    def meta(self) -> dict[str, str]:
        """The store's settings (dialect, options, filters, format), possibly empty."""

    @abstractmethod
    def set_meta(self, values: Mapping[str, str]) -> None:
        """Store ``values`` (atomically, merged with what is there)."""

    # -- writing ----------------------------------------------------------------------------

    @abstractmethod
    def write(self, batch: WriteBatch) -> None:
        """Apply ``batch`` atomically.  Raises ``StoreConflict`` if the last recorded seq is
        not ``batch.expect_last_seq``; then nothing is written."""

    # -- reading ----------------------------------------------------------------------------

    @abstractmethod
    def last_seq(self) -> int | None:
        """The highest recorded seq, or ``None`` for an empty history."""

    @abstractmethod
    def event(self, seq: int) -> EventRow | None:
        ...

    @abstractmethod
    def events(self, start: int | None = None, stop: int | None = None, *,
               status: str | None = None, seqs: Iterable[int] | None = None) -> Iterator[EventRow]:
        """Events with ``start <= seq <= stop`` (or exactly ``seqs``), optionally only those with
        ``status``, in seq order."""

    @abstractmethod
    def event_count(self) -> int:
        ...

    @abstractmethod
    def bodies(self, hashes: Iterable[str]) -> dict[str, str]:
        """Body text by hash for the given hashes (unknown hashes are left out)."""

    @abstractmethod
    def state_at(self, seq: int) -> str | None:
        """The latest non-null ``EventRow.state`` at or before ``seq``."""

    @abstractmethod
    def heads(self, seq: int | None = None, kind: str | None = None) -> list[VersionRow]:
        """For every key (of ``kind``, or all kinds) that exists at ``seq`` (default: the end),
        its latest version at or before ``seq``: tombstones are left out, so the result is the
        model in force.  Ordered by (kind, key)."""

    @abstractmethod
    def head(self, kind: str, key: str, seq: int | None = None) -> VersionRow | None:
        """The latest version of one key at or before ``seq``."""

    @abstractmethod
    def versions(self, kind: str, key: str) -> list[VersionRow]:
        """Every version of one key, in version order."""

    @abstractmethod
    def keys(self, kind: str) -> list[tuple[str, str]]:
        """``(key, name)`` of every key of ``kind`` ever versioned (``name``: the id as last
        written), sorted by key."""

    @abstractmethod
    def changes(self, start: int | None = None, stop: int | None = None) -> Iterator[ChangeRow]:
        """Change rows with ``start <= seq <= stop`` ordered by (seq, change_no)."""

    @abstractmethod
    def shadow(self) -> list[ShadowRow]:
        ...

    def prune(self, before: int) -> dict[str, int]:
        """Forget what only seqs before ``before`` need: for every key, versions older than its
        version in force at ``before``; events and change rows before ``before`` (except the
        events those kept versions and the session state at ``before`` refer to); bodies no
        longer referenced — and set ``meta()["pruned_before"]``, all atomically.  Queries at
        seqs >= ``before`` are unchanged; the last event is always kept.  Returns how many rows
        of each kind were deleted.  Backends may leave it unimplemented."""
        raise NotImplementedError(f"{type(self).__name__} cannot prune")

    def close(self) -> None:
        """Release the backend (idempotent)."""

    def __enter__(self) -> "HistoryStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class MemoryStore(HistoryStore):
    """A store in process memory (tests, notebooks).  Same semantics as the SQLite store;
    ``write`` is atomic because it validates before it mutates."""

    def __init__(self) -> None:
        self._meta: dict[str, str] = {}
        self._events: dict[int, EventRow] = {}
        self._seqs: list[int] = []
        self._state_seqs: list[int] = []
        self._bodies: dict[str, str] = {}
        self._versions: dict[tuple[str, str], list[VersionRow]] = {}
        self._changes: dict[int, list[ChangeRow]] = {}
        self._shadow: dict[tuple[str, str], ShadowRow] = {}

    def meta(self) -> dict[str, str]:
        return dict(self._meta)

    def set_meta(self, values: Mapping[str, str]) -> None:
        self._meta.update(values)

    def write(self, batch: WriteBatch) -> None:
        if self.last_seq() != batch.expect_last_seq:
            raise StoreConflict(f"store's last seq is {self.last_seq()}, writer expected {batch.expect_last_seq}")
        ev = batch.event
        if self._seqs and ev.seq <= self._seqs[-1]:
            raise StoreConflict(f"seq {ev.seq} is not after {self._seqs[-1]}")
        for v in batch.versions:
            chain = self._versions.get((v.kind, v.key), [])
            expected = chain[-1].version + 1 if chain else 1
            if v.version != expected:
                raise StoreConflict(f"version {v.version} of {v.kind} {v.key}: expected {expected}")
        self._events[ev.seq] = ev
        self._seqs.append(ev.seq)
        if ev.state is not None:
            self._state_seqs.append(ev.seq)
        for h, text in batch.bodies.items():
            self._bodies.setdefault(h, text)
        for v in batch.versions:
            self._versions.setdefault((v.kind, v.key), []).append(v)
        if batch.changes:
            self._changes[ev.seq] = list(batch.changes)
        for kind, key in batch.shadow_delete:
            self._shadow.pop((kind, key), None)
        for s in batch.shadow_put:
            self._shadow[(s.kind, s.key)] = s

    def last_seq(self) -> int | None:
        return self._seqs[-1] if self._seqs else None

    def event(self, seq: int) -> EventRow | None:
        return self._events.get(seq)

    def events(self, start: int | None = None, stop: int | None = None, *,
               status: str | None = None, seqs: Iterable[int] | None = None) -> Iterator[EventRow]:
        if seqs is not None:
            chosen = sorted(s for s in set(seqs) if s in self._events)
        else:
            lo = 0 if start is None else bisect.bisect_left(self._seqs, start)
            hi = len(self._seqs) if stop is None else bisect.bisect_right(self._seqs, stop)
            chosen = self._seqs[lo:hi]
        for s in chosen:
            ev = self._events[s]
            if status is None or ev.status == status:
                yield ev

    def event_count(self) -> int:
        return len(self._seqs)

    def bodies(self, hashes: Iterable[str]) -> dict[str, str]:
        return {h: self._bodies[h] for h in hashes if h in self._bodies}

    def state_at(self, seq: int) -> str | None:
        i = bisect.bisect_right(self._state_seqs, seq)
        return self._events[self._state_seqs[i - 1]].state if i else None

    @staticmethod
    def _at(chain: list[VersionRow], seq: int | None) -> VersionRow | None:
        if seq is None:
            return chain[-1]
        i = bisect.bisect_right([v.seq for v in chain], seq) if len(chain) > 8 else \
            sum(1 for v in chain if v.seq <= seq)
        return chain[i - 1] if i else None

    def heads(self, seq: int | None = None, kind: str | None = None) -> list[VersionRow]:
        out = []
        for (k, _), chain in sorted(self._versions.items()):
            if kind is not None and k != kind:
                continue
            v = self._at(chain, seq)
            if v is not None and v.body is not None:
                out.append(v)
        return out

    def head(self, kind: str, key: str, seq: int | None = None) -> VersionRow | None:
        chain = self._versions.get((kind, key))
        return self._at(chain, seq) if chain else None

    def versions(self, kind: str, key: str) -> list[VersionRow]:
        return list(self._versions.get((kind, key), ()))

    def keys(self, kind: str) -> list[tuple[str, str]]:
        return [(k, chain[-1].name) for (kd, k), chain in sorted(self._versions.items()) if kd == kind and chain]

    def changes(self, start: int | None = None, stop: int | None = None) -> Iterator[ChangeRow]:
        for seq in sorted(self._changes):
            if (start is None or seq >= start) and (stop is None or seq <= stop):
                yield from self._changes[seq]

    def shadow(self) -> list[ShadowRow]:
        return [self._shadow[k] for k in sorted(self._shadow)]

    def prune(self, before: int) -> dict[str, int]:
        deleted = {"versions": 0, "events": 0, "changes": 0, "bodies": 0}
        keep_seqs: set[int] = set()
        for k, chain in self._versions.items():
            head = self._at(chain, before)
            kept = [v for v in chain if head is None or v.version >= head.version]
            deleted["versions"] += len(chain) - len(kept)
            self._versions[k] = kept
            keep_seqs.update(v.seq for v in kept if v.seq < before)
        i = bisect.bisect_right(self._state_seqs, before)
        if i:
            keep_seqs.add(self._state_seqs[i - 1])
        if self._seqs:
            keep_seqs.add(self._seqs[-1])
        for seq in [s for s in self._seqs if s < before and s not in keep_seqs]:
            del self._events[seq]
            deleted["events"] += 1
        self._seqs = sorted(self._events)
        self._state_seqs = [s for s in self._state_seqs if s in self._events]
        for seq in [s for s in self._changes if s < before]:
            deleted["changes"] += len(self._changes.pop(seq))
        used = {v.body for chain in self._versions.values() for v in chain}
        used |= {h for rows in self._changes.values() for c in rows for h in (c.before, c.after)}
        used |= {s.body for s in self._shadow.values()}
        for h in [h for h in self._bodies if h not in used]:
            del self._bodies[h]
            deleted["bodies"] += 1
        if int(self._meta.get("pruned_before", "0")) < before:
            self._meta["pruned_before"] = str(before)
        return deleted
