"""The quick guard, in the ordinary suite, of what ``test_cluster.py`` proves on a cluster: a
run hands Spark no Python-backed data or function — no ``parallelize`` (which
``createDataFrame`` on a list uses: Python workers unpickle the rows), no Python UDF, no
``mapInPandas``/``mapInArrow``, no ``DataFrame.rdd``/``foreach`` — on every path a run can
take: DDL that cannot be parsed (quarantine records built on the driver), a value that cannot
be converted, a malformed line, an unknown table, and ``--replay-quarantine`` (replayed
lines)."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

from pyspark import SparkContext  # noqa: E402
from pyspark.sql import DataFrame  # noqa: E402
from pyspark.sql.udf import UserDefinedFunction  # noqa: E402

from ddlcore.spark import pipeline as pl  # noqa: E402

from .support import Log, parquet_rows  # noqa: E402


@pytest.fixture
def no_python_on_executors(monkeypatch):
    used: list[str] = []

    def refuse(name):
        def call(*a, **k):
            used.append(name)
            raise AssertionError(f"the pipeline used {name}: executors would need Python")
        return call

    monkeypatch.setattr(SparkContext, "parallelize", refuse("SparkContext.parallelize"))
    monkeypatch.setattr(UserDefinedFunction, "__call__", refuse("a Python UDF"))
    for name in ("mapInPandas", "mapInArrow", "foreach", "foreachPartition"):
        monkeypatch.setattr(DataFrame, name, refuse(f"DataFrame.{name}"))
    monkeypatch.setattr(DataFrame, "rdd", property(refuse("DataFrame.rdd")))
    yield used
    assert used == []


def test_no_run_path_hands_spark_python(spark, tmp_path, no_python_on_executors):
    log = Log(tmp_path / "log.jsonl")
    log.ddl("CREATE DATABASE shop")
    log.ddl("CREATE TABLE t (id int NOT NULL PRIMARY KEY, status enum('a','b'), qty int)")
    log.row("c", "t", after=[1, 1, 1])
    log.row("c", "t", after=[2, 9, 2])                       # enum index out of range
    bad = log.ddl("ALTER TABLE t ADD COLUMN ((( garbage")    # blocks t
    blocked = log.row("c", "t", after=[3, 2, 3, "x"])
    log.row("c", "nowhere", after=[1])                        # unknown table
    out = tmp_path / "out"
    res = pl.run_pipeline(log.write(['{"seq": 100, "op": "c"']), out, spark=spark, dialect="mysql")
    assert res.rows == 1 and res.quarantined == 5, res.quarantine_reasons
    assert any(r.startswith(f"schema unknown since seq {bad}") for r in res.quarantine_reasons)
    log.add(op="ddl", database="shop", snapshot=True,
            ddl="CREATE TABLE `t` (`id` int(11) NOT NULL, `status` enum('a','b'), `qty` int(11), "
                "`extra` varchar(10), PRIMARY KEY (`id`))")
    res2 = pl.run_pipeline(log.write(), out, spark=spark, replay_quarantine=True, dialect="mysql")
    assert res2.replayed == 1
    _, rows = parquet_rows(spark, out, "t", 3)
    assert [(r["_seq"], r["extra"]) for r in rows] == [(blocked, "x")]
