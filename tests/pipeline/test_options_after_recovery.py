"""Run options and the log's identity are checked against what the output was written with
*after* the previous run's commit is rolled forward (docs/pipeline.md, "Guarantees"): a first
run killed right after writing ``pending.json`` has no ``log.json`` yet, and a second run with
other ``-s`` options must not mix two types in one ``schema_version`` directory."""

from __future__ import annotations

import json

import pytest

from tests.pipeline.growing import rows_by_version
from tests.pipeline.test_commit import recording, sharded_log

pyspark = pytest.importorskip("pyspark")

from ddlcore.spark import pipeline as pl  # noqa: E402


def test_other_options_are_refused_after_the_killed_commit_is_rolled_forward(spark, tmp_path, monkeypatch):
    log = sharded_log(tmp_path)
    out = tmp_path / "out"
    plans: list = []
    recording(monkeypatch, plans, (0,))  # killed at the commit point: pending.json written, nothing moved
    with pytest.raises(KeyboardInterrupt):
        pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    state = out / "_state"
    assert (state / "pending.json").exists() and not (state / "log.json").exists()
    other = {"tinyint1_as_boolean": "true"}
    # ddlcore run's check before Spark starts reads the options the pending commit records
    with pytest.raises(pl.PipelineError, match=r"written with -s tinyint1_as_boolean=False \(this run: True\)"):
        pl.check_run_options(out, None, other)
    with pytest.raises(pl.PipelineError, match=r"written with -s tinyint1_as_boolean=False \(this run: True\)"):
        pl.run_pipeline(log.write(), out, spark=spark, spark_options=other, dialect="mysql")
    assert not (state / "pending.json").exists()  # rolled forward first
    assert json.loads((state / "log.json").read_text())["spark_options"]["tinyint1_as_boolean"] is False
    ref = tmp_path / "ref"
    pl.run_pipeline(log.write(), ref, spark=spark, dialect="mysql")
    assert rows_by_version(out) == rows_by_version(ref)
    # the original options still work
    assert pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql").events == 0
    assert rows_by_version(out) == rows_by_version(ref)
