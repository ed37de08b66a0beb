"""Time travel: the model the history restores at every seq equals the model obtained by
parsing just the prefix of the history up to that seq."""

from __future__ import annotations

import pytest

from ddlcore import TableId
from ddlcore.history import SchemaHistory

from .synthetic import SCRIPTED_HISTORY, synthetic_history


def _record(h: SchemaHistory, statements, start: int = 1) -> None:
    for i, st in enumerate(statements, start):
        h.record({"seq": i, "position": f"script:{i}", "ddl": st})


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_tables_at_every_seq_equals_parsing_the_prefix(parser_factory, tmp_path, store):
    parser = parser_factory()
    stmts = [s.text for s in parser.split(SCRIPTED_HISTORY)]
    h = SchemaHistory(None if store == "memory" else tmp_path / "h.db", parser=parser)
    _record(h, stmts)
    seen: set[TableId] = set()
    for k in range(0, len(stmts) + 1):
        fresh = parser_factory()
        expected = fresh.parse(";\n".join(stmts[:k])).tables if k else fresh.new_tables()
        actual = h.tables_at(k)
        assert actual.to_json() == expected.to_json(), f"model differs after seq {k}: {stmts[k - 1] if k else ''}"
        seen |= {t.id for t in expected}
        for tid in seen:
            assert h.table_at(tid, k) == expected.get(tid), f"{tid} after seq {k}"
    assert len(seen) >= 8
    h.close()


def test_table_versions_cover_the_timeline_without_gaps(mini):
    stmts = synthetic_history(600, 40, seed=3)
    h = SchemaHistory(parser=mini)
    _record(h, stmts)
    for tid in {TableId.parse(f"db0.t{i}") for i in range(40)}:
        vs = h.versions(tid)
        assert [v.version for v in vs] == list(range(1, len(vs) + 1))
        for a, b in zip(vs, vs[1:]):
            assert a.valid_to_seq == b.valid_from_seq
            assert h.table_at(tid, b.valid_from_seq - 1) == a.table
            assert h.version_at(tid, b.valid_from_seq - 1).version == a.version
        assert vs[-1].valid_to_seq is None
    # spot-check the whole model against a prefix parse at a few seqs
    for k in (1, 57, 300, 599, 600):
        expected = type(mini)().parse(";\n".join(stmts[:k])).tables
        assert h.tables_at(k).to_json() == expected.to_json()


def test_all_versions_lists_every_table_ever(mini):
    h = SchemaHistory(parser=mini)
    _record(h, [s.text for s in mini.split(SCRIPTED_HISTORY)])
    ids = h.all_table_ids()
    assert TableId("shop", None, "orders_old") in ids and TableId("crm", None, "notes") in ids
    allv = list(h.all_versions())
    assert sum(len(h.versions(t)) for t in ids) == len(allv)
    assert {v.table_id for v in allv} == set(ids)
