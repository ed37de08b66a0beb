"""The current-state table's merge by position deletes (docs/tables.md, "The current-state
table"): runs of updates and deletes spread over the keys, with absent columns and several
events per key, equal a plain fold of the events after every run through every reader
(pyiceberg Arrow and pandas, Polars' native reader and its pyiceberg one, DuckDB over Arrow,
``read_table(current=True)``, time travel to every earlier run), with delete files in play and
after a compaction; and a table without a primary key (every column the key, nulls equal).
Every current state here is computed by Spark jobs (``Tuning.current_on_driver`` off: the
Spark face of the first run's rebuild; the Arrow face: ``test_iceberg_arrowcurrent.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddlcore.runconfig import Tuning
from ddlcore.spark import pipeline as pl

from .support import event

pytest.importorskip("pyiceberg")

ABSENT = {"$absent": True}
KEYS = 80
#: a name whose escaped form has "%" (``ddlcore.sinks.naming``): Spark names the table's files
#: URL-encoded (``_metadata.file_path``), the manifests do not
NAME = "w__x"
IDENT = ("shop", "w_%5Fx")
DDL = f"CREATE TABLE {NAME} (id INT PRIMARY KEY, v INT, w VARCHAR(8))"


def _ev(seq: int, op: str, before: list | None = None, after: list | None = None) -> str:
    return event(seq, op=op, database="shop", table=NAME, **({"before": before} if before else {}),
                 **({"after": after} if after else {}))


def _runs() -> list[list[tuple]]:
    """The runs as (seq, op, id, v, w) events (``w`` ``ABSENT``: left out of the image).
    Run 2 replaces 14 of the first file's 80 rows (deletes), run 3 13 more (over the 0.3
    compaction fraction: the first file is rewritten) and two of run 2's rows."""
    runs: list[list[tuple]] = [[(2 + i, "c", i, i, f"w{i}") for i in range(KEYS)]]
    seq = 1000
    alive = set(range(KEYS))
    for n, (keys, tag) in enumerate([(range(0, KEYS, 6), "a"), (list(range(3, KEYS, 6)) + [0, 12], "b"),
                                     (range(1, KEYS, 5), "c")]):
        run = []
        for k in keys:
            kind = k % 4
            seq += 10
            if k not in alive:  # deleted by an earlier run: inserted again
                run += [(seq, "c", k, k, f"{tag}{k}")]
                alive.add(k)
            elif kind == 0:  # updated twice, the second image without w
                run += [(seq, "u", k, k + 100, f"{tag}{k}"), (seq + 1, "u", k, k + 200, ABSENT)]
            elif kind == 1:  # updated without w only: w keeps the stored value
                run += [(seq, "u", k, k + 300, ABSENT)]
            elif kind == 2:  # deleted, then inserted again
                run += [(seq, "d", k, None, None), (seq + 1, "c", k, -k, f"{tag}{k}")]
            else:  # deleted
                run += [(seq, "d", k, None, None)]
                alive.discard(k)
        run.append((seq + 5, "c", 1000 + n, n, f"new{n}"))
        runs.append(run)
    return runs


def _fold(runs: list[list[tuple]]) -> list[tuple]:
    """The current state of the events, in Python: (id, v, w, _seq, _unknown)."""
    state: dict[int, tuple] = {}
    for run in runs:
        for seq, op, k, v, w in run:
            if op == "d":
                state.pop(k, None)
            else:
                state[k] = (k, v, state[k][2] if w is ABSENT else w, seq, [])
    return sorted(state.values())


#: a table without a primary key (the rows the server holds: identical rows count, a delete
#: removes one of them; nulls equal): per run, (op, a, b) events after the run's events of the
#: other table; (a, b) after each run
NOPK = [[("c", 1, "x"), ("c", 2, "y"), ("c", 2, "y"), ("c", 3, None)], [("d", 2, "y"), ("c", 4, "z"), ("d", 3, None)],
        [("c", 3, None), ("c", 5, None)], [("d", 5, None)]]
NOPK_STATE = [[(1, "x"), (2, "y"), (2, "y"), (3, None)], [(1, "x"), (2, "y"), (4, "z")],
              [(1, "x"), (2, "y"), (3, None), (4, "z"), (5, None)], [(1, "x"), (2, "y"), (3, None), (4, "z")]]


def _nopk_log(n: int, run: list[tuple]) -> list[str]:
    """The events of the table without a primary key in run ``n`` (after ``run``'s events;
    its ``CREATE TABLE`` in the first run)."""
    seq = max(e[0] for e in run)
    out = [event(seq + 1, op="ddl", database="shop", ddl="CREATE TABLE np (a INT, b VARCHAR(5))")] if n == 0 else []
    return out + [event(seq + 2 + i, op=op, database="shop", table="np", **{"before" if op == "d" else "after": [a, b]})
                  for i, (op, a, b) in enumerate(NOPK[n])]


def _log(runs: list[list[tuple]]) -> list[str]:
    """The change log of the runs: the ``CREATE TABLE`` at seq 1, then their events (before
    images from the fold), each run's followed by the table without a primary key's."""
    state: dict[int, list] = {}
    out = [event(1, op="ddl", database="shop", ddl=DDL)]
    for n, run in enumerate(runs):
        for seq, op, k, v, w in run:
            before = state.get(k)
            out.append(_ev(seq, op, before, None if op == "d" else [k, v, w]))
            if op == "d":
                del state[k]
            else:
                state[k] = [k, v, before[2] if w is ABSENT else w]
        out += _nopk_log(n, run)
    return out


def _catalog(out: Path):
    from ddlcore.sinks.iceberg import open_catalog
    return open_catalog({"name": "ddlcore", "uri": f"sqlite:///{out}/_catalog.sqlite",
                         "warehouse": f"file://{out}/_iceberg"})


def _readers(spark, out: Path, table, spark_too: bool) -> dict[str, list[tuple]]:
    """The current-state table's rows through every reader: (id, v, w, _seq, _unknown);
    ``spark_too``: and ``read_table(current=True)`` (which computes them from the changes)."""
    import duckdb
    import polars

    import ddlcore

    def rows(records) -> list[tuple]:
        return sorted((r["id"], r["v"], r["w"], r["_seq"], list(r["_unknown"])) for r in records)

    arrow = table.scan().to_arrow()
    got = {"arrow": rows(arrow.to_pylist()), "pandas": rows(table.scan().to_pandas().to_dict("records"))}
    for reader in ("native", "pyiceberg"):
        got[f"polars {reader}"] = rows(polars.scan_iceberg(table, reader_override=reader).collect().to_dicts())
    got["duckdb"] = rows(duckdb.sql("SELECT * FROM arrow").arrow().read_all().to_pylist())
    if spark_too:
        frame = ddlcore.read_table(spark, out, f"shop.{NAME}", current=True)
        got["read_table"] = rows(r.asDict() for r in frame.collect())
    return got


def test_spread_updates_and_deletes_equal_a_fold_through_every_reader_with_deletes_and_compaction(spark, tmp_path):
    log, out = tmp_path / "log.jsonl", tmp_path / "out"
    runs = _runs()
    snapshots, folds, data_files = [], [], []
    for n in range(len(runs)):
        log.write_text("\n".join(_log(runs[:n + 1])) + "\n")
        # (the first run's rebuild by Spark jobs too: this test holds the Spark face of a rebuild)
        pl.run_pipeline(log, out, spark=spark, output_format="iceberg", dialect="mysql",
                        tuning=Tuning(current_on_driver=False))
        table = _catalog(out).load_table(IDENT)
        if n == 0:  # the compaction rule, as a user sets it (docs/tables.md)
            with table.transaction() as tx:
                tx.set_properties({"ddlcore.compact-deleted-fraction": "0.3"})
            table = table.refresh()
        want = _fold(runs[:n + 1])
        for reader, rows in _readers(spark, out, table, n == len(runs) - 1).items():
            assert rows == want, (n, reader)
        snap = table.current_snapshot()
        snapshots.append(snap.snapshot_id)
        folds.append(want)
        data_files.append({t.file.file_path: len(t.delete_files) for t in table.scan().plan_files()})
        assert int(snap.summary["total-records"]) - int(snap.summary.get("total-position-deletes", 0)) == len(want)
        nopk = _catalog(out).load_table(("shop", "np")).scan().to_arrow()
        assert sorted((r["a"], r["b"]) for r in nopk.to_pylist()) == NOPK_STATE[n], n
    import ddlcore
    nopk = _catalog(out).load_table(("shop", "np")).scan().to_arrow().to_pylist()
    assert sorted(tuple(r.values()) for r in nopk) == \
        sorted(tuple(r) for r in ddlcore.read_table(spark, out, "shop.np", current=True).collect())
    first = set(data_files[0])
    assert all(first <= set(d) for d in data_files[:2]) and sum(data_files[1].values()) >= 1  # deletes in play
    assert not first & set(data_files[2])  # run 3 compacted the first run's file(s) ...
    assert sum(data_files[2].values()) >= 1 and sum(data_files[3].values()) >= 1  # ... and deleted by position
    table = _catalog(out).load_table(IDENT)
    for snapshot_id, want in zip(snapshots, folds):  # time travel
        got = sorted((r["id"], r["v"], r["w"], r["_seq"], r["_unknown"])
                     for r in table.scan(snapshot_id=snapshot_id).to_arrow().to_pylist())
        assert got == want
