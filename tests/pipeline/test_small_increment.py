"""The driver-side path of a small incremental run (``ddlcore.spark.driver``) against the Spark
path: the same increment, appended to the same committed output, processed by each (forced with
``Tuning.driver_increment_max_bytes``), gives the same output — rows and Parquet schemas (physical, Spark's
footer metadata, as pyarrow and Spark read them), ``_run.json`` counts, quarantine records,
``malformed.json`` — on logs that exercise inserts, updates, deletes, absent values, DDL in the
increment, an unknown table, statement-format DML, a capture quarantine, malformed lines, a
value that cannot be converted, a row of the wrong arity, a blocked table, a version whose
columns collide with the pipeline's, rows before the checkpoint, MySQL and PostgreSQL types."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")
import pyarrow.parquet as pq  # noqa: E402

from ddlcore.runconfig import Tuning  # noqa: E402
from ddlcore.spark import pipeline as pl  # noqa: E402
from ddlcore.spark import driver  # noqa: E402

from .support import EXAMPLES, assert_same_output, mysql_extra_events  # noqa: E402
from .support import event as _event  # noqa: E402
from .support import lines_of as _lines  # noqa: E402
from .support import quarantine as _quarantine  # noqa: E402
from .support import row_files as _row_files  # noqa: E402
from .support import state as _state  # noqa: E402


#: the reference: no small increment on the driver, a Spark job per conversion group
SPARK_PATH = Tuning(driver_increment_max_bytes=-1, driver_max_rows=-1)
#: the driver-side path (increments of up to 4 MB: every one here)
DRIVER_PATH = Tuning(driver_increment_max_bytes=4 << 20, driver_max_rows=4 << 20)


def _both_ways(spark, tmp_path: Path, monkeypatch, first: list[str], increment: list[str], **kw):
    """``first`` committed by a (Spark) run; then ``increment`` appended and processed by the
    driver-side path into the output and by the Spark path into a copy of it.  Returns the
    two outputs and the two results."""
    log = tmp_path / "changelog.jsonl"
    log.write_text("".join(ln + "\n" for ln in first))
    out_small, out_spark = tmp_path / "small", tmp_path / "spark"
    pl.run_pipeline(log, out_small, spark=spark, **kw)
    shutil.copytree(out_small, out_spark)
    with open(log, "a") as fh:
        fh.write("".join(ln + "\n" for ln in increment))
    said: list[str] = []
    res_spark = pl.run_pipeline(log, out_spark, spark=spark, progress=said.append, tuning=SPARK_PATH, **kw)
    assert not any("on the driver" in m for m in said)
    said.clear()
    jobs_before = spark.sparkContext.statusTracker().getJobIdsForGroup(None)
    res_small = pl.run_pipeline(log, out_small, spark=spark, progress=said.append, **kw)
    assert any("on the driver" in m for m in said), said
    assert spark.sparkContext.statusTracker().getJobIdsForGroup(None) == jobs_before  # no Spark job
    assert_same_output(spark, out_small, out_spark, "", "")
    # every data and quarantine file is named after the run that wrote it (the commit's rule)
    named = [f.name for files in _row_files(out_small).values() for f in files]
    named += [f.name for f in (out_small / "_quarantine").glob("*.json")]
    assert named and all(re.match(r"\d{8}T\d{6}-[0-9a-f]{8}-", n) for n in named), named
    for field in ("events", "rows", "quarantined", "ddl", "counts", "quarantine_reasons", "last_seq",
                  "previous_seq", "versions_written", "dialect"):
        assert getattr(res_small, field) == getattr(res_spark, field), field
    return out_small, out_spark, res_small, res_spark


def test_mysql_increment_driver_path_equals_spark_path(spark, tmp_path, monkeypatch):
    lines = _lines(EXAMPLES / "shop" / "changelog.jsonl")  # recorded from MariaDB: 50 events
    first, rest = lines[:29], lines[29:]
    n = len(lines)
    extra = mysql_extra_events(n)
    out_small, _, res, _ = _both_ways(spark, tmp_path, monkeypatch, first, rest + extra)
    assert res.rows > 0 and res.quarantined >= 9, res.quarantine_reasons
    reasons = {r["reason"] for r in _quarantine(out_small)}
    assert any(r.startswith("cannot convert: status (9)") for r in reasons), reasons
    assert any(r.startswith("cannot convert: row (2): expected 18 raw values, got 2") for r in reasons), reasons
    assert any(r.startswith("statement-format DML") and len(r) < 400 for r in reasons), reasons
    assert "unknown table: no schema of shop.nowhere in force at this seq" in reasons
    assert any("collide with the pipeline's own columns" in r for r in reasons)
    assert _state(out_small, "malformed.json")  # the line without seq, remembered once
    v1 = pq.read_table(next((out_small / "shop" / "extra" / "schema_version=1").glob("*.parquet")))
    by_seq = {r["_seq"]: r for r in v1.to_pylist()}
    assert by_seq[n + 3]["_absent"] == ["note"] and by_seq[n + 4]["_before_absent"] == ["note"]
    assert by_seq[n + 4]["_absent"] == ["amount"]


def test_postgres_increment_driver_path_equals_spark_path(spark, tmp_path, monkeypatch):
    pytest.importorskip("ddlcore_postgres")
    lines = _lines(EXAMPLES / "pg_shop" / "changelog.jsonl")  # recorded from PostgreSQL 15: 47 events
    first, rest = lines[:30], lines[30:]
    n = max(json.loads(ln)["seq"] for ln in lines)
    extra = [
        _event(n + 1, op="c", database="shop", schema="public", table="nowhere", after=[1]),
        lines[0],  # the log's source event again (before the checkpoint: the DDL pass still reads it)
        "{\"seq\": 999999, \"position\": \"p\", \"op\": \"c\"",  # torn last line
    ]
    _both_ways(spark, tmp_path, monkeypatch, first, rest + extra)


def test_nothing_new_runs_no_spark_job(spark, tmp_path):
    lines = _lines(EXAMPLES / "shop" / "changelog.jsonl")
    log = tmp_path / "changelog.jsonl"
    log.write_text("".join(ln + "\n" for ln in lines))
    out = tmp_path / "out"
    pl.run_pipeline(log, out, spark=spark)
    jobs = spark.sparkContext.statusTracker().getJobIdsForGroup(None)
    res = pl.run_pipeline(log, out, spark=spark)
    assert res.events == 0 and res.rows == 0
    assert spark.sparkContext.statusTracker().getJobIdsForGroup(None) == jobs


def test_lines_spark_reads_otherwise_leave_the_run_to_spark():
    f = "file:/log.jsonl"
    sure = ['{"seq": 1, "position": "p", "op": "c", "table": "t", "after": [1, "a", {"$b64": "AAE="}, null, 1.5]}',
            "not json", '{"seq": 1, "op": "c"', '{"position": "p", "op": "c", "table": "t", "after": [1]}']
    for line in sure:
        driver.spark_event(line, f)
    unsure = ['{"seq": "5", "op": "c"}', '{"seq": 1, "seq": 2}', '{"SEQ": 1}', '{"seq": 1} xyz',
              '{"seq": 1, "after": [1e300]}', '{"seq": 1, "after": ["1.50"]}', '{"seq": 1, "after": "x"}',
              '{"seq": 1, "database": 5}', "[1]", '{"seq": 1.0}', '{"seq": 99999999999999999999}',
              '{"seq": 1, "tx": "\\ud800"}']
    for line in unsure:
        with pytest.raises(driver.Unsure):
            driver.spark_event(line, f)
    ev = driver.spark_event(sure[0], f)
    assert ev.valid and ev.fields["after"] == ["1", "a", '{"$b64":"AAE="}', None, "1.5"]
    assert not driver.spark_event(sure[3], f).valid


def _strict_errors(spark, log: Path, out: Path, monkeypatch) -> list[tuple]:
    """``(seq, reason)`` of the error a ``--strict`` run stops with, by the Spark path, then by
    the driver's."""
    errors = []
    for tuning in (SPARK_PATH, DRIVER_PATH):
        said: list[str] = []
        with pytest.raises(pl.PipelineError) as exc:
            pl.run_pipeline(log, out, spark=spark, strict=True, progress=said.append, tuning=tuning)
        assert any("on the driver" in m for m in said) == (tuning is DRIVER_PATH)
        errors.append((exc.value.seq, exc.value.reason))
    return errors


def test_strict_stops_at_the_same_event_both_ways(spark, tmp_path, monkeypatch):
    lines = _lines(EXAMPLES / "shop" / "changelog.jsonl")
    n = len(lines)
    log = tmp_path / "changelog.jsonl"
    log.write_text("".join(ln + "\n" for ln in lines[:29]))
    out = tmp_path / "out"
    pl.run_pipeline(log, out, spark=spark)
    with open(log, "a") as fh:
        fh.write("".join(ln + "\n" for ln in lines[29:] + [
            _event(n + 1, op="c", database="shop", table="purchases", after=[1]),   # wrong arity
            _event(n + 2, op="c", database="shop", table="nowhere", after=[1]),     # unknown table
        ]))
    errors = _strict_errors(spark, log, out, monkeypatch)
    # the tagging's quarantine is checked before any conversion, as in the Spark path
    assert errors[0] == errors[1] == (n + 2, "unknown table: no schema of shop.nowhere in force at this seq")
    with open(log, "a") as fh:
        fh.write(_event(n + 3, op="ddl", database="shop", ddl="CREATE TABLE nowhere (id int)") + "\n")
    lines_now = log.read_text().splitlines()
    log.write_text("".join(ln + "\n" for ln in lines_now if '"nowhere", "after"' not in ln))
    errors = _strict_errors(spark, log, out, monkeypatch)
    assert errors[0] == errors[1] and errors[0][0] == n + 1 and errors[0][1].startswith("cannot convert: row (1)")
    assert json.loads((out / "_state" / "checkpoint.json").read_text())["last_seq"] == 29  # nothing committed
