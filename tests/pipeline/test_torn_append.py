"""A plain change-log file (no capture's ``checkpoint.json`` beside it) read while a writer
appends to it: its last line, torn mid-write (no end of line yet), is neither quarantined as
malformed nor lost — it is left unread (``RunResult.held`` names it), and the run after the
writer finished the line reads it whole (issue 30, "also to try").  The first run reads the
file whole with Spark; the next ones read its tail on the driver (``ddlcore.spark.driver``)."""

from __future__ import annotations

import json

import pytest

pyspark = pytest.importorskip("pyspark")

from ddlcore.spark import pipeline as pl  # noqa: E402

from .test_pipeline_no_loss import base, quarantine  # noqa: E402


def test_a_torn_last_line_is_left_for_the_next_run(spark, tmp_path, monkeypatch):
    from ddlcore.spark.driver import DriverIncrement

    on_driver: list[bool] = []
    real = DriverIncrement.read

    def spy(*a, **k):
        found = real(*a, **k)
        on_driver.append(found is not None)
        return found

    monkeypatch.setattr(DriverIncrement, "read", spy)
    log = base(tmp_path)
    log.row("c", "t", after=[1, "a", 1])
    log.row("c", "t", after=[2, "b", 2])
    path = log.write()
    text = path.read_text()

    def torn_at_the_end() -> str:  # the file as the writer leaves it mid-way through its last line
        whole = json.dumps(log.events[-1]) + "\n"
        return text[:-len(whole)] + whole[:len(whole) // 2]

    path.write_text(torn_at_the_end())
    out = tmp_path / "out"
    first = pl.run_pipeline(path, out, spark=spark, dialect="mysql")
    assert first.rows == 1 and first.quarantined == 0 and quarantine(out) == []
    assert len(first.held) == 1 and first.held[0].startswith(f"{path}:5: the last line has no end of line")

    log.row("c", "t", after=[3, "c", 3])  # the writer finished line 5 and is half-way through line 6
    text = log.write().read_text()
    path.write_text(torn_at_the_end())
    second = pl.run_pipeline(path, out, spark=spark, dialect="mysql")
    assert second.rows == 1 and second.quarantined == 0 and quarantine(out) == []
    assert len(second.held) == 1 and second.held[0].startswith(f"{path}:6: ")

    path.write_text(text)  # and finished
    third = pl.run_pipeline(path, out, spark=spark, dialect="mysql")
    assert third.rows == 1 and third.quarantined == 0 and quarantine(out) == [] and third.held == []
    assert third.last_seq == log.events[-1]["seq"]
    assert on_driver[-2:] == [True, True]  # the tails were read on the driver
