"""Restart: recording half, closing, reopening and recording the rest (with overlap) gives the
same store, byte for byte, as recording everything at once — and recovery parses nothing."""

from __future__ import annotations

import pytest

from ddlcore.history import SchemaHistory, SQLiteStore

from .minisql import MiniParser
from .synthetic import SCRIPTED_HISTORY, synthetic_history

_TABLES = ("events", "bodies", "entities", "versions", "changes", "shadow", "meta")


def _record(path, parser, stmts, seqs, filters=None):
    with SchemaHistory(path, parser=parser, filters=filters) as h:
        for i in seqs:
            h.record({"seq": i, "position": f"bin:{i}", "ddl": stmts[i - 1], "ts": i * 1000})


def _dump(path):
    s = SQLiteStore(path)
    try:
        return {t: s.dump(t) for t in _TABLES}
    finally:
        s.close()


@pytest.mark.parametrize("filters", [None, ["shop.c%", "crm.*"]], ids=["all", "filtered"])
def test_restart_with_overlap_gives_the_same_store(parser_factory, tmp_path, filters):
    parser = parser_factory()
    stmts = [s.text for s in parser.split(SCRIPTED_HISTORY)]
    n = len(stmts)
    once, twice = tmp_path / "once.db", tmp_path / "twice.db"
    _record(once, parser_factory(), stmts, range(1, n + 1), filters)
    for cut in (n // 3, n // 2, n - 2):
        if twice.exists():
            for p in tmp_path.glob("twice.db*"):
                p.unlink()
        _record(twice, parser_factory(), stmts, range(1, cut + 1), filters)
        _record(twice, parser_factory(), stmts, range(max(1, cut - 4), n + 1), filters)  # overlap
        a, b = _dump(once), _dump(twice)
        for t in _TABLES:
            assert a[t] == b[t], f"table {t} differs after a restart at seq {cut}"


def test_restart_after_every_event_gives_the_same_store(tmp_path):
    stmts = synthetic_history(150, 15, seed=11)
    once, many = tmp_path / "once.db", tmp_path / "many.db"
    _record(once, MiniParser(), stmts, range(1, len(stmts) + 1), ["db0.t1%", "db0.x%"])
    for i in range(1, len(stmts) + 1):
        _record(many, MiniParser(), stmts, [i], ["db0.t1%", "db0.x%"])
    assert _dump(once) == _dump(many)


class _CountingParser(MiniParser):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.applied = 0

    def apply(self, stmt, tables, *, lenient=None):
        self.applied += 1
        return super().apply(stmt, tables, lenient=lenient)


def test_recovery_parses_no_ddl(tmp_path):
    stmts = synthetic_history(500, 30, seed=5)
    path = tmp_path / "h.db"
    _record(path, MiniParser(), stmts, range(1, 500))
    counting = _CountingParser()
    with SchemaHistory(path, parser=counting) as h:
        h.tables_at(250)
        h.record({"seq": 500, "ddl": stmts[499]})
        assert counting.applied == 1  # only the new event; the 499 before it are read, not parsed
        expected = MiniParser().parse(";\n".join(stmts)).tables
        assert h.current_tables().to_json() == expected.to_json()


def test_heads_query_seeks_an_index(tmp_path):
    s = SQLiteStore(tmp_path / "h.db")
    plan = " ".join(str(r) for r in s._db.execute(
        "EXPLAIN QUERY PLAN SELECT w.seq FROM versions w WHERE w.kind = ? AND w.key = ? AND w.seq <= ? "
        "ORDER BY w.seq DESC LIMIT 1", ("table", "k", 5)))
    assert "versions_at" in plan and "SCAN" not in plan.replace("SCAN w USING COVERING INDEX", "")
    s.close()
