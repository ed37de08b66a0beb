"""Property (issue 31, "How it is verified"): random MySQL DDL and row events, written by
``ddlcore run --format iceberg`` over several runs; the current-state Iceberg table equals a
simple reference fold of the same events in Python, and no changes-table value shows under a
column it did not belong to.

The generator draws ALTER clauses the MySQL grammar reads (``ADD COLUMN ... [DEFAULT k]
[FIRST | AFTER x]``, ``DROP COLUMN``, ``RENAME COLUMN``, ``CHANGE a b VARCHAR(20)`` — an incompatible
retype whose values MySQL converts exactly —, ``MODIFY x BIGINT`` — a widening —, and
``TRUNCATE``) interleaved with inserts, updates and deletes, each row image in the column
order of its moment.  The fold (``Fold``) applies them the way the server does: an added
column's default on every existing row, a retyped integer as its text.  Every value is unique
to its event and column identity (``seq * 100 + id``), so a value under a wrong column cannot
pass unnoticed.

Economy: one Spark session (the suite's), the pipeline's driver path (a few rows per run),
several runs per example, few examples in the CI profile (``HYPOTHESIS_PROFILE=dev``: more).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from ddlcore.raw import encode_row
from ddlcore.runconfig import Tuning
from ddlcore.spark import pipeline as pl

from .support import event

pytest.importorskip("pyiceberg")

NAMES = ["a", "b", "c", "d"]
EXAMPLES = 40 if os.environ.get("HYPOTHESIS_PROFILE") == "dev" else 4


@dataclass
class Column:
    name: str
    ident: int
    text: bool = False


@dataclass
class Fold:
    """The reference: the table's columns (in order) and rows by key, as the server has them."""

    columns: list[Column] = field(default_factory=lambda: [Column("id", 1), Column("a", 2)])
    rows: dict[int, dict[int, Any]] = field(default_factory=dict)  # id → column ident → value
    next_ident: int = 3

    def index(self, name: str) -> int:
        return next(i for i, c in enumerate(self.columns) if c.name == name)

    def add(self, name: str, default: int | None, where: str | None) -> None:
        col = Column(name, self.next_ident)
        self.next_ident += 1
        at = len(self.columns) if where is None else 0 if where == "FIRST" else self.index(where) + 1
        self.columns.insert(at, col)
        for row in self.rows.values():
            row[col.ident] = default

    def drop(self, name: str) -> None:
        col = self.columns.pop(self.index(name))
        for row in self.rows.values():
            row.pop(col.ident, None)

    def rename(self, old: str, new: str, text: bool | None = None) -> None:
        col = self.columns[self.index(old)]
        col.name = new
        if text and not col.text:  # MySQL converts every integer to its text
            col.text = True
            for row in self.rows.values():
                row[col.ident] = None if row[col.ident] is None else str(row[col.ident])

    def image(self, key: int, seq: int) -> list[Any]:
        """A new row image: every value unique to (seq, column)."""
        values = [key if c.ident == 1 else seq * 100 + c.ident for c in self.columns]
        return [str(v) if c.text and c.ident != 1 else v for v, c in zip(values, self.columns)]

    def put(self, image: list[Any]) -> None:
        self.rows[image[self.index("id")]] = {c.ident: v for c, v in zip(self.columns, image)}

    def current(self) -> list[tuple]:
        return sorted((tuple(row[c.ident] for c in self.columns) for row in self.rows.values()), key=repr)


@st.composite
def workloads(draw) -> tuple[list[list[str]], Fold, dict[int, dict[int, Any]], dict[str, int]]:
    """``(runs, fold, values, idents)``: the events of each run, the folded state, each row
    event's values by column identity (by seq) and each final column's identity."""
    fold = Fold()
    seq = 1
    runs: list[list[str]] = [[event(seq, op="ddl", database="d", ddl="CREATE TABLE t (id INT PRIMARY KEY, a INT)")]]
    values: dict[int, dict[int, Any]] = {}
    for _ in range(draw(st.integers(2, 3))):
        for _ in range(draw(st.integers(3, 7))):
            seq += 1
            runs[-1].append(_step(draw, fold, seq, values))
        runs.append([])
    runs.pop()
    return runs, fold, values, {c.name: c.ident for c in fold.columns}


def _step(draw, fold: Fold, seq: int, values: dict[int, dict[int, Any]]) -> str:
    """One event: a row change (mostly) or a DDL, applied to ``fold``."""
    names = [c.name for c in fold.columns if c.name != "id"]
    free = [n for n in NAMES if n not in names]
    kind = draw(st.sampled_from(["c", "c", "u", "d", "ddl", "ddl"]))
    keys = sorted(fold.rows)
    if kind in ("u", "d") and keys:
        key = draw(st.sampled_from(keys))
        before = [fold.rows[key][c.ident] for c in fold.columns]
        if kind == "d":
            del fold.rows[key]
            return event(seq, op="d", database="d", table="t", before=encode_row(before))
        after = fold.image(key, seq)
        fold.put(after)
        values[seq] = dict(fold.rows[key])
        return event(seq, op="u", database="d", table="t", before=encode_row(before), after=encode_row(after))
    if kind != "ddl":
        key = max(keys, default=0) + 1
        after = fold.image(key, seq)
        fold.put(after)
        values[seq] = dict(fold.rows[key])
        return event(seq, op="c", database="d", table="t", after=encode_row(after))
    ops = (["add"] if free else []) + (["drop", "widen"] if names else []) + \
        (["rename", "retype"] if names and free else []) + ["truncate"]
    op = draw(st.sampled_from(ops))
    if op == "truncate":
        fold.rows.clear()
        return event(seq, op="t", database="d", table="t")
    if op == "add":
        n = draw(st.sampled_from(free))
        default = draw(st.sampled_from([None, 5]))
        where = draw(st.sampled_from([None, "FIRST", *["id", *names]]))
        fold.add(n, default, where)
        ddl = f"ALTER TABLE t ADD COLUMN {n} INT" + (f" DEFAULT {default}" if default is not None else "") + \
            ("" if where is None else " FIRST" if where == "FIRST" else f" AFTER {where}")
    elif op == "drop":
        n = draw(st.sampled_from(names))
        fold.drop(n)
        ddl = f"ALTER TABLE t DROP COLUMN {n}"
    elif op == "widen":
        n = draw(st.sampled_from(names))
        if fold.columns[fold.index(n)].text:
            return event(seq, op="ddl", database="d", ddl=f"ALTER TABLE t MODIFY {n} VARCHAR(20)")
        ddl = f"ALTER TABLE t MODIFY {n} BIGINT"
    else:
        n, m = draw(st.sampled_from(names)), draw(st.sampled_from(free))
        fold.rename(n, m, text=op == "retype")
        ddl = (f"ALTER TABLE t RENAME COLUMN {n} TO {m}" if op == "rename"
               else f"ALTER TABLE t CHANGE {n} {m} VARCHAR(20)")
    return event(seq, op="ddl", database="d", ddl=ddl)


def _catalog(out: Path):
    from ddlcore.sinks.iceberg import open_catalog
    return open_catalog({"name": "ddlcore", "uri": f"sqlite:///{out}/_catalog.sqlite",
                         "warehouse": f"file://{out}/_iceberg"})


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=workloads(), on_driver=st.booleans())
def test_current_state_table_equals_the_reference_fold(spark, tmp_path_factory, case, on_driver):
    """``on_driver``: the current state's rebuilds and merges (a run without DDL) by the Arrow
    faces, or by Spark jobs (``Tuning.current_on_driver``)."""
    runs, fold, values, idents = case
    tmp = tmp_path_factory.mktemp("fold")
    log, out = tmp / "log.jsonl", tmp / "out"
    written: list[str] = []
    for run in runs:
        written += run
        log.write_text("\n".join(written) + "\n")
        res = pl.run_pipeline(log, out, spark=spark, output_format="iceberg", dialect="mysql",
                              tuning=Tuning(current_on_driver=on_driver))
        assert res.quarantined == 0, res.quarantine_reasons
    cat = _catalog(out)
    script = "\n".join(e for e in written if '"ddl"' in e)
    current = cat.load_table(("d", "t"))
    assert [f.name for f in current.schema().fields] == [c.name for c in fold.columns] + ["_seq", "_unknown"], script
    import polars

    for reader, rows in (("pyiceberg", current.scan().to_arrow().to_pylist()),
                         ("polars", polars.scan_iceberg(current).collect().to_dicts())):
        got = sorted((tuple(r[c.name] for c in fold.columns) for r in rows), key=repr)
        assert got == fold.current(), (reader, script)
        assert all(r["_unknown"] == [] for r in rows), (reader, script)
    # the changes table: under each current column, an event's own value for that column or null
    changes = cat.load_table(("d", "t__changes")).scan().to_arrow().to_pylist()
    assert sorted(r["_seq"] for r in changes if r["_op"] in ("c", "u")) == sorted(values), script
    for r in changes:
        if r["_op"] not in ("c", "u"):
            continue
        for name, ident in idents.items():
            if r[name] is not None:
                assert r[name] == values[r["_seq"]].get(ident), (script, r["_seq"], name, r[name])
