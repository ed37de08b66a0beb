"""Property: random ALTER sequences (add, drop, rename, widen; names reused) with rows in every
version, committed into Iceberg by the sink (``prepare`` → files with the physical names →
``plan`` → ``commit``), read back by ``pyiceberg``: under each column of the final table every
row shows exactly the value its event had for that column's identity (``Column.column_id``),
or null where the column did not exist — never a value of another column (issue 31).

The files are written by pyarrow under the physical names the sink gives (what Spark writes);
no Spark session, so hypothesis can try many sequences."""

from __future__ import annotations

import random

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from ddlcore.history import SchemaHistory
from ddlcore.model import TableId
from ddlcore.spark.layout import version_dir

pytest.importorskip("pyiceberg")

from ddlcore.sinks.iceberg import IcebergSink, open_catalog  # noqa: E402
from ddlcore.sinks.icecommit import commit  # noqa: E402

from .support import LocalFS, write_row  # noqa: E402

NAMES = ["a", "b", "c"]


@st.composite
def histories(draw):
    """ALTER statements over ``t (id INT PRIMARY KEY, a INT)``: each ADD, DROP, RENAME, a
    widening ``MODIFY ... BIGINT`` or an incompatible ``MODIFY ... VARCHAR(9)`` / back to
    ``INT`` of one column."""
    cols = {"a": "INT"}
    stmts = []
    for _ in range(draw(st.integers(1, 5))):
        free = [n for n in NAMES if n not in cols]
        ops = (["add"] if free else []) + (["drop", "widen", "retype"] if cols else []) + \
            (["rename"] if cols and free else [])
        op = draw(st.sampled_from(ops))
        if op == "add":
            n = draw(st.sampled_from(free))
            where = draw(st.sampled_from(["", " FIRST"] + [f" AFTER {c}" for c in ["id", *sorted(cols)]]))
            stmts.append(f"ALTER TABLE t ADD COLUMN {n} INT{where}")
            cols[n] = "INT"
        elif op == "drop":
            n = draw(st.sampled_from(sorted(cols)))
            stmts.append(f"ALTER TABLE t DROP COLUMN {n}")
            del cols[n]
        elif op == "widen":
            n = draw(st.sampled_from(sorted(cols)))
            stmts.append(f"ALTER TABLE t MODIFY {n} BIGINT")
            cols[n] = "BIGINT"
        elif op == "retype":
            n = draw(st.sampled_from(sorted(cols)))
            cols[n] = "INT" if cols[n] == "VARCHAR(9)" else "VARCHAR(9)"
            stmts.append(f"ALTER TABLE t MODIFY {n} {cols[n]}")
        else:
            n, m = draw(st.sampled_from(sorted(cols))), draw(st.sampled_from(free))
            stmts.append(f"ALTER TABLE t RENAME COLUMN {n} TO {m}")
            cols[m] = cols.pop(n)
    return stmts


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stmts=histories(), split=st.integers(0, 5))
def test_every_reader_value_belongs_to_its_column(tmp_path_factory, stmts, split):
    out = tmp_path_factory.mktemp("prop")
    fs = LocalFS(out)
    hist = SchemaHistory(dialect="mysql")
    events = ["CREATE TABLE t (id INT PRIMARY KEY, a INT)"] + stmts
    rows: list[tuple[int, dict[int, int]]] = []
    version_of: dict[int, int] = {}
    previous = None
    cut = min(split, len(events) - 1)  # the events of two runs: [0, cut] and (cut, end]
    for part in ((0, cut + 1), (cut + 1, len(events))):
        if part[0] >= part[1]:
            continue
        run = f"run{part[0]}"
        for seq in range(part[0] + 1, part[1] + 1):
            hist.record({"seq": seq, "ddl": events[seq - 1], "database": "d"})
        sink = IcebergSink(str(out), dialect="mysql")
        written = {v.version: v.table for v in sink.prepare(hist, list(hist.all_versions()), dialect="mysql")}
        for seq in range(part[0] + 1, part[1] + 1):  # one row after each DDL, in the version it made
            v = next(x for x in hist.versions("d.t") if x.valid_from_seq <= seq
                     and (x.valid_to_seq is None or x.valid_to_seq > seq))
            rows.append((1000 + seq, write_row(out, written[v.version], v.version, 1000 + seq, run)))
            version_of[1000 + seq] = v.version
        plan = sink.plan(fs, "", run, part[1], previous)
        plan["tables"][0]["dirs"] = sorted({str(p.parent.relative_to(out)) for p in out.rglob(f"{run}-*.parquet")})
        commit(plan, fs)
        previous = part[1]
    final = hist.table_at("d.t")
    epochs = _epochs(hist)
    cat = open_catalog(plan["catalog"])
    got = cat.load_table(("d", "t__changes")).scan().to_arrow().to_pylist()
    assert sorted(r["_seq"] for r in got) == [s for s, _ in rows]
    by_seq = dict(rows)
    last = epochs[hist.versions("d.t")[-1].version]
    # the source's column order (ADD ... FIRST / AFTER x at its place); retired fields between
    schema = cat.load_table(("d", "t__changes")).schema()
    shown = [f.name for f in schema.fields if f.name in {c.name for c in final.columns}]
    assert shown == [c.name for c in final.columns], (events, [f.name for f in schema.fields])
    for r in got:
        at = epochs[version_of[r["_seq"]]]
        for c in final.columns:
            # the event's value of this identity, if its column had the same type family since
            want = by_seq[r["_seq"]].get(c.column_id) if at.get(c.column_id) == last[c.column_id] else None
            assert r[c.name] == want, (events, c.name, r)


def _epochs(hist) -> dict[int, dict[int, int]]:
    """Per version of ``d.t``, each column id's epoch: it changes where the column's type
    changes between an integer and text (a retype Iceberg cannot widen)."""
    out, epoch, family = {}, {}, {}
    for v in hist.versions("d.t"):
        for c in v.table.columns:
            fam = c.data_type == "varchar"
            if family.get(c.column_id) != fam:
                epoch[c.column_id] = epoch.get(c.column_id, -1) + 1
                family[c.column_id] = fam
        out[v.version] = {c.column_id: epoch[c.column_id] for c in v.table.columns}
    return out


def test_a_catalog_configured_the_pyiceberg_way_is_used_by_name(tmp_path, monkeypatch):
    """``--catalog NAME``: a catalog from ``PYICEBERG_CATALOG__NAME__*``; tables under OUT/_iceberg."""
    from pyiceberg.catalog import load_catalog

    monkeypatch.setenv("PYICEBERG_CATALOG__MINE__TYPE", "sql")
    monkeypatch.setenv("PYICEBERG_CATALOG__MINE__URI", f"sqlite:///{tmp_path / 'mine.db'}")
    monkeypatch.setenv("PYICEBERG_CATALOG__MINE__WAREHOUSE", f"file://{tmp_path / 'wh'}")
    import pyiceberg.catalog
    from pyiceberg.utils.config import Config

    # pyiceberg reads its configuration once, when imported: read it again with these variables
    monkeypatch.setattr(pyiceberg.catalog, "_ENV_CONFIG", Config())
    out = tmp_path / "out"
    hist = SchemaHistory(dialect="mysql")
    hist.record({"seq": 1, "ddl": "CREATE TABLE t (id INT PRIMARY KEY, a INT)", "database": "d"})
    sink = IcebergSink(str(out), catalog="mine", dialect="mysql")
    (v,) = hist.all_versions()
    assert sink.prepare(hist, [v], dialect="mysql") == [v]  # no name to change: the version as it is
    write_row(out, v.table, 1, 1001, "r1")
    plan = sink.plan(LocalFS(out), "", "r1", 1001, None)
    assert plan["catalog"] == {"name": "mine"}
    plan["tables"][0]["dirs"] = [version_dir("d", None, "t", 1)]
    commit(plan, LocalFS(out))
    table = load_catalog("mine").load_table(("d", "t__changes"))
    assert table.location().endswith("/out/_iceberg/d/t__changes")
    assert [r["a"] for r in table.scan().to_arrow().to_pylist()] == [1001 * 100 + 2]
