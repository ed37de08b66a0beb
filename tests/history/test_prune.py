"""Retention: pruning the history before a seq keeps every later answer and frees space."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ddlcore.cli import main
from ddlcore.history import HistoryError, MemoryStore, SchemaHistory, SQLiteStore

from .minisql import MiniParser
from .synthetic import synthetic_history


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_prune_keeps_later_answers(tmp_path, backend):
    stmts = synthetic_history(800, 30, seed=9)
    store = MemoryStore() if backend == "memory" else SQLiteStore(tmp_path / "h.db")
    h = SchemaHistory(store, parser=MiniParser())
    for i, st in enumerate(stmts, 1):
        h.record({"seq": i, "position": f"p{i}", "ddl": st})
    checks = (400, 401, 555, 800)
    before = {k: h.tables_at(k).to_json() for k in checks}
    ids = h.table_ids()
    versions_before = {t: [v.version for v in h.versions(t)] for t in ids}
    deleted = h.prune(400)
    assert deleted["versions"] > 0 and deleted["events"] > 0 and deleted["bodies"] > 0
    for k in checks:
        assert h.tables_at(k).to_json() == before[k], f"seq {k} changed by pruning"
    for t in ids:
        kept = [v.version for v in h.versions(t)]
        assert kept == versions_before[t][-len(kept):]  # a suffix; numbers unchanged
        assert h.versions(t)[0].position is not None     # its event is kept
    with pytest.raises(HistoryError, match="pruned"):
        h.tables_at(399)
    ev = h.record({"seq": 5, "ddl": stmts[4]})
    assert ev.status == "pruned" and not ev.recorded
    h.record({"seq": 801, "ddl": f"ALTER TABLE {ids[0]} COMMENT = 'after prune'"})
    assert h.table_at(ids[0]).comment == "after prune"
    with pytest.raises(HistoryError):
        h.prune(10_000)
    h.close()


def test_prune_from_the_command_line(tmp_path):
    path = tmp_path / "h.db"
    with SchemaHistory(path, parser=MiniParser()) as h:
        for i, st in enumerate(synthetic_history(600, 20, seed=2), 1):
            h.record({"seq": i, "ddl": st})
        end = h.tables_at(600).to_json()
    size = path.stat().st_size
    r = CliRunner().invoke(main, ["history", "prune", "--store", str(path), "--before", "590", "--vacuum"])
    assert r.exit_code == 0, r.output
    assert "deleted" in r.stderr
    assert path.stat().st_size < size
    with SchemaHistory(path) as h:
        assert h.tables_at(600).to_json() == end
    info = json.loads(CliRunner().invoke(main, ["history", "info", "--store", str(path)]).output)
    assert info["pruned_before"] == 590
