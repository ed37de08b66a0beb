"""``SQLiteStore``: the default history store, one SQLite file (standard library ``sqlite3``).

Owns: the on-disk layout of a schema history and its transactions.  Must not know: DDL,
parsers, the table model.

Durability: the database runs in WAL mode; each recorded event is one ``BEGIN IMMEDIATE`` …
``COMMIT`` transaction, so a process killed at any instant leaves the file holding a prefix of
the history (SQLite's atomic commit).  ``synchronous=NORMAL`` (the default here) survives any
process crash; use ``synchronous="FULL"`` to also survive power loss of the last commits.

Layout (format 1)::

    meta(key, value)                         settings: dialect, options, filters, format
    events(seq PK, position, ts, database, ddl, status, reason, error, warnings, state)
    bodies(hash UNIQUE, body)                content-addressed JSON bodies (SHA-256 of the text;
                                             zlib-compressed BLOB when longer than 256 chars)
    entities(kind, key, first_seq, end_seq)  one row per key ever versioned; end_seq: the seq of
                                             its last version when that is a tombstone
    versions(kind, key, version, seq, change, name, body, fingerprint, other)
        PK (kind, key, version); UNIQUE (kind, key, seq)
    changes(seq, change_no, kind, table_id, previous_id, before, after, version)
    shadow(kind, key, name, body)            latest bodies of entities outside the filter

``heads(seq)`` walks ``entities`` (skipping keys dead since before ``seq``) and does one index
seek on ``versions(kind, key, seq)`` per key: its cost is O(keys · log versions), independent
of the number of events.
"""

from __future__ import annotations

import os
import sqlite3
import zlib
from pathlib import Path
from typing import Iterable, Iterator, Mapping

from .store import (ChangeRow, EventRow, HistoryStore, ShadowRow, StoreConflict, VersionRow,
                    WriteBatch)

__all__ = ["SQLiteStore"]

FORMAT = "1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
    position TEXT,
    ts INTEGER,
    database TEXT,
    ddl TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT,
    error TEXT,
    warnings TEXT,
    state TEXT
);
CREATE INDEX IF NOT EXISTS events_state ON events(seq) WHERE state IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_failed ON events(seq) WHERE status = 'failed';
CREATE TABLE IF NOT EXISTS bodies (hash TEXT NOT NULL UNIQUE, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entities (
    kind TEXT NOT NULL, key TEXT NOT NULL, first_seq INTEGER NOT NULL, end_seq INTEGER,
    PRIMARY KEY (kind, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS versions (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    version INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    change TEXT NOT NULL,
    name TEXT NOT NULL,
    body TEXT,
    fingerprint TEXT,
    other TEXT,
    PRIMARY KEY (kind, key, version)
) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS versions_at ON versions(kind, key, seq);
CREATE TABLE IF NOT EXISTS changes (
    seq INTEGER NOT NULL,
    change_no INTEGER NOT NULL,
    kind TEXT NOT NULL,
    table_id TEXT NOT NULL,
    previous_id TEXT,
    before TEXT,
    after TEXT,
    version INTEGER,
    PRIMARY KEY (seq, change_no)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS shadow (
    kind TEXT NOT NULL, key TEXT NOT NULL, name TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (kind, key)
) WITHOUT ROWID;
"""

_VCOLS = "kind, key, version, seq, change, name, body, fingerprint, other"
_ECOLS = "seq, position, ts, database, ddl, status, reason, error, warnings, state"
_CHUNK = 500  # host parameters per IN (...) list


#: bodies longer than this are stored zlib-compressed (as a BLOB); shorter ones as TEXT
COMPRESS_OVER = 256


def _pack(text: str) -> str | bytes:
    return zlib.compress(text.encode("utf-8"), 1) if len(text) > COMPRESS_OVER else text


def _unpack(value: str | bytes) -> str:
    return zlib.decompress(value).decode("utf-8") if isinstance(value, bytes) else value


class SQLiteStore(HistoryStore):
    """A history in the SQLite file ``path`` (created if missing; ``":memory:"`` for a
    private in-memory database).

    ``synchronous``: SQLite's ``PRAGMA synchronous`` (``"NORMAL"`` or ``"FULL"``).
    ``readonly``: open an existing file without writing (raises ``FileNotFoundError`` if it
    does not exist).  Raises ``sqlite3.DatabaseError`` for a file that is not a history."""

    def __init__(self, path: str | os.PathLike[str] = ":memory:", *, synchronous: str = "NORMAL",
                 readonly: bool = False, timeout: float = 30.0):
        self.path = str(path)
        if readonly:
            if not Path(self.path).exists():
                raise FileNotFoundError(f"no schema history at {self.path}")
            uri = Path(self.path).resolve().as_uri() + "?mode=ro"
            self._db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=timeout)
        else:
            self._db = sqlite3.connect(self.path, isolation_level=None, timeout=timeout)
        self.readonly = readonly
        db = self._db
        if not readonly:
            if self.path != ":memory:":
                mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
                if mode.lower() != "wal":  # pragma: no cover - e.g. a network file system
                    raise sqlite3.OperationalError(f"cannot use WAL mode on {self.path} (got {mode})")
            if synchronous.upper() not in ("NORMAL", "FULL", "EXTRA"):
                raise ValueError(f"synchronous must be NORMAL, FULL or EXTRA, not {synchronous!r}")
            db.execute(f"PRAGMA synchronous={synchronous.upper()}")
            db.execute("BEGIN IMMEDIATE")
            try:
                names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                if names and "meta" not in names:
                    raise sqlite3.DatabaseError(f"{self.path} is an SQLite database but not a ddlcore "
                                                f"schema history (tables: {', '.join(sorted(names)[:5])})")
                for stmt in _SCHEMA.split(";"):
                    if stmt.strip():
                        db.execute(stmt)
                db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('format', ?)", (FORMAT,))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        fmt = self.meta().get("format")
        if fmt != FORMAT:
            raise sqlite3.DatabaseError(f"{self.path}: unsupported history format {fmt!r} (expected {FORMAT})")
        db.execute("PRAGMA cache_size=-32768")  # 32 MiB page cache

    # -- metadata -------------------------------------------------------------------------

    def meta(self) -> dict[str, str]:
        try:
            return dict(self._db.execute("SELECT key, value FROM meta"))
        except sqlite3.OperationalError as exc:
            raise sqlite3.DatabaseError(f"{self.path} is not a ddlcore schema history ({exc})") from None

    def set_meta(self, values: Mapping[str, str]) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", list(values.items()))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    # -- writing ----------------------------------------------------------------------------

    def write(self, batch: WriteBatch) -> None:
        db = self._db
        ev = batch.event
        db.execute("BEGIN IMMEDIATE")
        try:
            last = db.execute("SELECT max(seq) FROM events").fetchone()[0]
            if last != batch.expect_last_seq:
                raise StoreConflict(f"{self.path}: last recorded seq is {last}, this writer expected "
                                    f"{batch.expect_last_seq} (another process is recording?)")
            db.execute(f"INSERT INTO events({_ECOLS}) VALUES (?,?,?,?,?,?,?,?,?,?)",
                       (ev.seq, ev.position, ev.ts, ev.database, ev.ddl, ev.status, ev.reason,
                        ev.error, ev.warnings, ev.state))
            if batch.bodies:
                db.executemany("INSERT OR IGNORE INTO bodies(hash, body) VALUES (?, ?)",
                               [(h, _pack(t)) for h, t in sorted(batch.bodies.items())])
            if batch.versions:
                db.executemany("INSERT OR IGNORE INTO entities(kind, key, first_seq) VALUES (?, ?, ?)",
                               [(v.kind, v.key, v.seq) for v in batch.versions])
                db.executemany("UPDATE entities SET end_seq = ? WHERE kind = ? AND key = ?",
                               [(v.seq if v.body is None else None, v.kind, v.key) for v in batch.versions])
                db.executemany(f"INSERT INTO versions({_VCOLS}) VALUES (?,?,?,?,?,?,?,?,?)",
                               [(v.kind, v.key, v.version, v.seq, v.change, v.name, v.body,
                                 v.fingerprint, v.other) for v in batch.versions])
            if batch.changes:
                db.executemany("INSERT INTO changes(seq, change_no, kind, table_id, previous_id, "
                               "before, after, version) VALUES (?,?,?,?,?,?,?,?)",
                               [(c.seq, c.change_no, c.kind, c.table_id, c.previous_id, c.before,
                                 c.after, c.version) for c in batch.changes])
            if batch.shadow_delete:
                db.executemany("DELETE FROM shadow WHERE kind = ? AND key = ?", batch.shadow_delete)
            if batch.shadow_put:
                db.executemany("INSERT OR REPLACE INTO shadow(kind, key, name, body) VALUES (?,?,?,?)",
                               [(s.kind, s.key, s.name, s.body) for s in batch.shadow_put])
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    # -- reading ----------------------------------------------------------------------------

    def last_seq(self) -> int | None:
        return self._db.execute("SELECT max(seq) FROM events").fetchone()[0]

    def event(self, seq: int) -> EventRow | None:
        row = self._db.execute(f"SELECT {_ECOLS} FROM events WHERE seq = ?", (seq,)).fetchone()
        return None if row is None else EventRow(*row)

    def events(self, start: int | None = None, stop: int | None = None, *,
               status: str | None = None, seqs: Iterable[int] | None = None) -> Iterator[EventRow]:
        if seqs is not None:
            wanted = sorted(set(seqs))
            for i in range(0, len(wanted), _CHUNK):
                part = wanted[i:i + _CHUNK]
                sql = f"SELECT {_ECOLS} FROM events WHERE seq IN ({','.join('?' * len(part))})"
                args: list = list(part)
                if status is not None:
                    sql += " AND status = ?"
                    args.append(status)
                for row in self._db.execute(sql + " ORDER BY seq", args).fetchall():
                    yield EventRow(*row)
            return
        sql = f"SELECT {_ECOLS} FROM events WHERE seq BETWEEN ? AND ?"
        args = [-(2 ** 63) if start is None else start, 2 ** 63 - 1 if stop is None else stop]
        if status is not None:
            sql += " AND status = ?"
            args.append(status)
        cur = self._db.execute(sql + " ORDER BY seq", args)
        while True:
            rows = cur.fetchmany(1000)
            if not rows:
                return
            for row in rows:
                yield EventRow(*row)

    def event_count(self) -> int:
        return self._db.execute("SELECT count(*) FROM events").fetchone()[0]

    def bodies(self, hashes: Iterable[str]) -> dict[str, str]:
        wanted = sorted(set(hashes))
        out: dict[str, str] = {}
        for i in range(0, len(wanted), _CHUNK):
            part = wanted[i:i + _CHUNK]
            for h, b in self._db.execute(
                    f"SELECT hash, body FROM bodies WHERE hash IN ({','.join('?' * len(part))})", part):
                out[h] = _unpack(b)
        return out

    def state_at(self, seq: int) -> str | None:
        row = self._db.execute("SELECT state FROM events WHERE seq <= ? AND state IS NOT NULL "
                               "ORDER BY seq DESC LIMIT 1", (seq,)).fetchone()
        return None if row is None else row[0]

    def heads(self, seq: int | None = None, kind: str | None = None) -> list[VersionRow]:
        s = 2 ** 63 - 1 if seq is None else seq
        sql = (f"SELECT {', '.join('v.' + c.strip() for c in _VCOLS.split(','))} "
               "FROM entities e JOIN versions v ON v.kind = e.kind AND v.key = e.key AND v.seq = "
               "(SELECT w.seq FROM versions w WHERE w.kind = e.kind AND w.key = e.key AND w.seq <= ? "
               " ORDER BY w.seq DESC LIMIT 1) "
               "WHERE e.first_seq <= ? AND (e.end_seq IS NULL OR e.end_seq > ?) AND v.body IS NOT NULL")
        args: list = [s, s, s]
        if kind is not None:
            sql += " AND e.kind = ?"
            args.append(kind)
        return [VersionRow(*r) for r in self._db.execute(sql + " ORDER BY e.kind, e.key", args)]

    def head(self, kind: str, key: str, seq: int | None = None) -> VersionRow | None:
        s = 2 ** 63 - 1 if seq is None else seq
        row = self._db.execute(f"SELECT {_VCOLS} FROM versions WHERE kind = ? AND key = ? AND seq <= ? "
                               "ORDER BY seq DESC LIMIT 1", (kind, key, s)).fetchone()
        return None if row is None else VersionRow(*row)

    def versions(self, kind: str, key: str) -> list[VersionRow]:
        return [VersionRow(*r) for r in self._db.execute(
            f"SELECT {_VCOLS} FROM versions WHERE kind = ? AND key = ? ORDER BY version", (kind, key))]

    def keys(self, kind: str) -> list[tuple[str, str]]:
        return list(self._db.execute(
            "SELECT e.key, (SELECT v.name FROM versions v WHERE v.kind = e.kind AND v.key = e.key "
            "ORDER BY v.version DESC LIMIT 1) FROM entities e WHERE e.kind = ? ORDER BY e.key", (kind,)))

    def changes(self, start: int | None = None, stop: int | None = None) -> Iterator[ChangeRow]:
        cur = self._db.execute(
            "SELECT seq, change_no, kind, table_id, previous_id, before, after, version FROM changes "
            "WHERE seq BETWEEN ? AND ? ORDER BY seq, change_no",
            (-(2 ** 63) if start is None else start, 2 ** 63 - 1 if stop is None else stop))
        while True:
            rows = cur.fetchmany(1000)
            if not rows:
                return
            for r in rows:
                yield ChangeRow(*r)

    def shadow(self) -> list[ShadowRow]:
        return [ShadowRow(*r) for r in self._db.execute(
            "SELECT kind, key, name, body FROM shadow ORDER BY kind, key")]

    # -- maintenance -----------------------------------------------------------------------

    def prune(self, before: int) -> dict[str, int]:
        db = self._db
        deleted: dict[str, int] = {}
        db.execute("BEGIN IMMEDIATE")
        try:
            deleted["versions"] = db.execute(
                "DELETE FROM versions WHERE seq < :b AND seq < (SELECT max(w.seq) FROM versions w "
                "WHERE w.kind = versions.kind AND w.key = versions.key AND w.seq <= :b)",
                {"b": before}).rowcount
            deleted["events"] = db.execute(
                "DELETE FROM events WHERE seq < :b "
                "AND seq NOT IN (SELECT seq FROM versions WHERE seq < :b) "
                "AND seq IS NOT (SELECT max(seq) FROM events WHERE seq <= :b AND state IS NOT NULL) "
                "AND seq IS NOT (SELECT max(seq) FROM events)",
                {"b": before}).rowcount
            deleted["changes"] = db.execute("DELETE FROM changes WHERE seq < ?", (before,)).rowcount
            deleted["bodies"] = db.execute(
                "DELETE FROM bodies WHERE hash NOT IN (SELECT body FROM versions WHERE body IS NOT NULL "
                "UNION SELECT before FROM changes WHERE before IS NOT NULL "
                "UNION SELECT after FROM changes WHERE after IS NOT NULL "
                "UNION SELECT body FROM shadow)").rowcount
            old = db.execute("SELECT value FROM meta WHERE key = 'pruned_before'").fetchone()
            if old is None or int(old[0]) < before:
                db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('pruned_before', ?)", (str(before),))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return deleted

    def vacuum(self) -> None:
        """Give the space freed by ``prune`` back to the file system (``VACUUM``)."""
        self.checkpoint()
        self._db.execute("VACUUM")

    def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check``: ``"ok"`` for a sound file."""
        return "\n".join(r[0] for r in self._db.execute("PRAGMA integrity_check"))

    def checkpoint(self) -> None:
        """Fold the WAL into the main file (``PRAGMA wal_checkpoint(TRUNCATE)``)."""
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def dump(self, table: str) -> list[tuple]:
        """Every row of one of the store's tables in primary-key order (tests, debugging)."""
        order = {"meta": "key", "events": "seq", "bodies": "hash", "entities": "kind, key",
                 "versions": "kind, key, version", "changes": "seq, change_no",
                 "shadow": "kind, key"}[table]
        return self._db.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall()

    def close(self) -> None:
        db = getattr(self, "_db", None)
        if db is not None:
            db.close()
            self._db = None  # type: ignore[assignment]
