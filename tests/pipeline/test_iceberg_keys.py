"""The current state of updates that change a row's identity: an UPDATE of a primary-key column
(the old key's row is gone) and updates and deletes in a table without a primary key (each row
image counts: identical rows are as many rows as the server holds).  The first run's rebuild
by the driver's Arrow face, the Spark merge of the second run into the table, and
``read_table(current=True)`` after each (the Spark face of a rebuild, ``read.current_frame``):
every one equals the server's rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddlcore.runconfig import Tuning
from ddlcore.spark import pipeline as pl

from .support import event

pytest.importorskip("pyiceberg")


def _ev(seq: int, op: str, **k) -> str:
    return event(seq, op=op, database="s", **k)


#: (the runs' events, the server's rows after each run) per table
PK = ([[_ev(1, "ddl", ddl="CREATE TABLE k (id INT PRIMARY KEY, v VARCHAR(5))"),
        _ev(2, "c", table="k", after=[1, "a"]), _ev(3, "c", table="k", after=[2, "b"]),
        _ev(4, "u", table="k", before=[1, "a"], after=[3, "a"])],          # the key 1 becomes 3
       [_ev(205, "u", table="k", before=[2, "b"], after=[4, "b2"]),          # merged: 2 becomes 4
        _ev(206, "u", table="k", before=[3, "a"], after=[3, "a2"])]],
      [[(2, "b"), (3, "a")], [(3, "a2"), (4, "b2")]])
NO_PK = ([[_ev(101, "ddl", ddl="CREATE TABLE n (a INT, v VARCHAR(5))"),
           _ev(102, "c", table="n", after=[1, "x"]), _ev(103, "c", table="n", after=[1, "x"]),
           _ev(104, "c", table="n", after=[2, "y"]),
           _ev(105, "u", table="n", before=[2, "y"], after=[2, "z"]),        # (2, y) is gone
           _ev(106, "d", table="n", before=[1, "x"])],                       # one of the two (1, x)
          [_ev(307, "c", table="n", after=[2, "z"]),
           _ev(308, "u", table="n", before=[2, "z"], after=[5, "q"]),        # one of the two (2, z)
           _ev(309, "d", table="n", before=[1, "x"])]],
         [[(1, "x"), (2, "z")], [(2, "z"), (5, "q")]])


def _current(out: Path, name: str) -> list[tuple]:
    from ddlcore.sinks.iceberg import open_catalog

    cat = open_catalog({"name": "ddlcore", "uri": f"sqlite:///{out}/_catalog.sqlite",
                        "warehouse": f"file://{out}/_iceberg"})
    arrow = cat.load_table(("s", name)).scan().to_arrow()
    return sorted((r[arrow.column_names[0]], r["v"]) for r in arrow.to_pylist())


def test_key_changing_updates_and_tables_without_a_key_equal_the_server(spark, tmp_path):
    import ddlcore

    log, out = tmp_path / "log.jsonl", tmp_path / "out"
    done: list[str] = []
    for n in range(2):
        done += PK[0][n] + NO_PK[0][n]
        log.write_text("\n".join(done) + "\n")
        pl.run_pipeline(log, out, spark=spark, output_format="iceberg", dialect="mysql",
                        tuning=Tuning(current_on_driver=True))
        for name, (_, server) in (("k", PK), ("n", NO_PK)):
            assert _current(out, name) == server[n], (name, n)
            spark_rows = ddlcore.read_table(spark, out, f"s.{name}", current=True).collect()
            assert sorted((r[0], r["v"]) for r in spark_rows) == server[n], (name, n)
