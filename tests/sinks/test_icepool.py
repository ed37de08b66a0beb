"""The tables of a commit plan committed by several processes forked from the driver into one
embedded SQLite catalog (``ddlcore.sinks.icepool``): every table committed once with its rows,
by more than one process, none failing with "database is locked" (the catalog's busy timeout
and WAL mode); a failing table's error names it; a roll-forward of the same plan changes
nothing."""

from __future__ import annotations

import os

import pytest

from ddlcore.history import SchemaHistory
from ddlcore.runconfig import Tuning

pytest.importorskip("pyiceberg")

from ddlcore.sinks import icecommit, icepool  # noqa: E402
from ddlcore.sinks.iceberg import SQLITE_BUSY_SECONDS, IcebergSink, open_catalog  # noqa: E402
from ddlcore.sinks.iceschema import CHANGES, new_schema  # noqa: E402

from .support import LocalFS, write_row  # noqa: E402

TABLES = 2 * icepool.TABLES_PER_PROCESS
_ORIGINAL = icecommit.commit_source_table


def recording(catalog, run, entry, files, *rest):
    """``commit_source_table`` that also leaves the id of the process it ran in (a file in
    ``$PIDS_DIR``)."""
    with open(os.path.join(os.environ["PIDS_DIR"], f"{os.getpid()}-{entry['lineage']}"), "w"):
        pass
    return _ORIGINAL(catalog, run, entry, files, *rest)


def _plan(out, run_id="r1"):
    hist = SchemaHistory(dialect="mysql")
    for i in range(TABLES):
        hist.record({"seq": i + 1, "ddl": f"CREATE TABLE t{i} (id INT PRIMARY KEY, a INT, b VARCHAR(9))",
                     "database": "d"})
    sink = IcebergSink(str(out), dialect="mysql", tuning=Tuning(driver_workers=2))
    for v in sink.prepare(hist, hist.all_versions(), dialect="mysql"):
        name = v.table_id.name
        write_row(out, v.table, v.version, 1000 + int(name[1:]), run_id, table=name)
    return sink.plan(LocalFS(out), "", run_id, 1000 + TABLES, None)


@pytest.mark.skipif(not icepool.processes(TABLES, 2), reason="worker processes fork on Linux only")
def test_processes_commit_the_tables_into_one_embedded_catalog(tmp_path, monkeypatch):
    out = tmp_path / "out"
    plan = _plan(out)
    pids = tmp_path / "pids"
    pids.mkdir()
    monkeypatch.setattr(icecommit, "commit_source_table", recording)
    monkeypatch.setenv("PIDS_DIR", str(pids))
    icecommit.commit(plan, LocalFS(out))
    cat = open_catalog(plan["catalog"])
    assert str(cat.engine.url.query.get("timeout")) == str(SQLITE_BUSY_SECONDS)
    with cat.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    for i in range(TABLES):
        table = cat.load_table(("d", f"t{i}__changes"))
        assert [r["a"] for r in table.scan().to_arrow().to_pylist()] == [(1000 + i) * 100 + 2]
        assert table.properties[icecommit.PROPERTY_RUN] == plan["run"]
    seen = [name.split("-", 1)[0] for name in os.listdir(pids)]
    assert len(seen) == TABLES and len(set(seen)) > 1 and str(os.getpid()) not in seen
    snapshots = {i: cat.load_table(("d", f"t{i}__changes")).current_snapshot().snapshot_id for i in range(TABLES)}
    icecommit.commit(plan, LocalFS(out))  # a roll-forward: every table has this run already
    assert {i: cat.load_table(("d", f"t{i}__changes")).current_snapshot().snapshot_id
            for i in range(TABLES)} == snapshots


def test_the_first_failing_table_is_named(tmp_path):
    out = tmp_path / "out"
    plan = _plan(out)
    cat = open_catalog(plan["catalog"])
    cat.create_namespace("d")
    cat.create_table(("d", "t7__changes"), new_schema([], None, CHANGES).schema,
                     properties={"ddlcore.lineage": "another"})
    with pytest.raises(icecommit.IcebergCommitError, match=r"Iceberg commit of table d\.t7__changes "
                       r"\(source table d\.t7\): ValueError: .*belongs to another source table"):
        icecommit.commit(plan, LocalFS(out))
