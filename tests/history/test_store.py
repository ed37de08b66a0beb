"""The store interface: both backends behave alike; writes are atomic."""

from __future__ import annotations

import sqlite3

import pytest

from ddlcore.history import (ChangeRow, EventRow, MemoryStore, ShadowRow, SQLiteStore,
                             StoreConflict, VersionRow, WriteBatch)


@pytest.fixture(params=["memory", "sqlite"])
def store(request, tmp_path):
    s = MemoryStore() if request.param == "memory" else SQLiteStore(tmp_path / "s.db")
    yield s
    s.close()


def _batch(seq, last, versions=(), state=None, **kw):
    return WriteBatch(EventRow(seq, f"p{seq}", None, "d", f"ddl {seq}", "applied", state=state), last,
                      versions=list(versions), **kw)


def _v(key, version, seq, body):
    return VersionRow("table", key, version, seq, "alter" if version > 1 else "create",
                      f'["d",null,"{key}"]', body, None if body is None else "fp")


def test_heads_and_history_queries(store):
    store.write(_batch(1, None, [_v("a", 1, 1, "h1")], state='{"x":1}', bodies={"h1": "{}"}))
    store.write(_batch(2, 1, [_v("b", 1, 2, "h2")], bodies={"h2": "{\"c\":1}"}))
    store.write(_batch(5, 2, [_v("a", 2, 5, None)], state='{"x":2}',
                       changes=[ChangeRow(5, 0, "drop", '["d",null,"a"]', None, "h1", None, 2)]))
    assert store.last_seq() == 5 and store.event_count() == 3
    assert [(h.key, h.version) for h in store.heads(1)] == [("a", 1)]
    assert [(h.key, h.version, h.body) for h in store.heads(4)] == [("a", 1, "h1"), ("b", 1, "h2")]
    assert [(h.key, h.version, h.body) for h in store.heads()] == [("b", 1, "h2")]  # tombstones left out
    assert store.head("table", "a", 3).version == 1 and store.head("table", "a", 0) is None
    assert [v.version for v in store.versions("table", "a")] == [1, 2]
    assert store.state_at(1) == '{"x":1}' and store.state_at(4) == '{"x":1}' and store.state_at(5) == '{"x":2}'
    assert store.state_at(0) is None
    assert [e.seq for e in store.events(2, 5)] == [2, 5]
    assert [e.seq for e in store.events(seqs=[5, 1, 7])] == [1, 5]
    assert [c.kind for c in store.changes(5, 5)] == ["drop"]
    assert store.bodies(["h1", "nope"]) == {"h1": "{}"}


def test_conflicting_writer_writes_nothing(store):
    store.write(_batch(1, None))
    with pytest.raises(StoreConflict):
        store.write(_batch(2, None))
    assert store.last_seq() == 1 and store.event(2) is None


def test_shadow_put_and_delete(store):
    store.write(_batch(1, None, shadow_put=[ShadowRow("table", "x", '["d",null,"x"]', "h")], bodies={"h": "{}"}))
    assert [s.key for s in store.shadow()] == ["x"]
    store.write(_batch(2, 1, shadow_delete=[("table", "x")]))
    assert store.shadow() == []


def test_sqlite_write_is_atomic(tmp_path):
    s = SQLiteStore(tmp_path / "s.db")
    s.write(_batch(1, None, [_v("a", 1, 1, "h1")], bodies={"h1": "{}"}))
    bad = _batch(2, 1, [_v("b", 1, 2, "h2"), _v("a", 1, 2, "h3")], bodies={"h2": "{}", "h3": "{}"})
    with pytest.raises(sqlite3.IntegrityError):  # version 1 of "a" exists: the whole batch fails
        s.write(bad)
    assert s.last_seq() == 1 and s.versions("table", "b") == [] and s.bodies(["h2", "h3"]) == {}
    assert s.integrity_check() == "ok"
    s.close()


def test_sqlite_refuses_a_foreign_database(tmp_path):
    path = tmp_path / "other.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE users (id int)")
    con.commit()
    con.close()
    with pytest.raises(sqlite3.DatabaseError, match="not a ddlcore schema history"):
        SQLiteStore(path)


def test_sqlite_uses_wal(tmp_path):
    s = SQLiteStore(tmp_path / "s.db")
    assert s._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    s.close()
    with pytest.raises(FileNotFoundError):
        SQLiteStore(tmp_path / "missing.db", readonly=True)
    r = SQLiteStore(tmp_path / "s.db", readonly=True)
    assert r.last_seq() is None
    r.close()
