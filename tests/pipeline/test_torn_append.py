"""A plain change-log file (no capture's ``checkpoint.json`` beside it) read while a writer
appends to it: its last line, torn mid-write (no end of line yet), is neither quarantined as
malformed nor lost — it is left unread, and the run after the writer finished reads it whole
(issue 30, "also to try")."""

from __future__ import annotations

import json

import pytest

pyspark = pytest.importorskip("pyspark")

from ddlcore.spark import pipeline as pl  # noqa: E402

from .test_pipeline_no_loss import base, quarantine  # noqa: E402


@pytest.mark.parametrize("path_taken", ["driver", "spark"])
def test_a_torn_last_line_is_left_for_the_next_run(spark, tmp_path, monkeypatch, path_taken):
    from ddlcore.spark import small

    if path_taken == "spark":
        monkeypatch.setattr(small, "MAX_BYTES", -1)
    log = base(tmp_path)
    log.row("c", "t", after=[1, "a", 1])
    log.row("c", "t", after=[2, "b", 2])
    path = log.write()
    whole = json.dumps(log.events[-1]) + "\n"
    text = path.read_text()
    path.write_text(text[:-len(whole)] + whole[:len(whole) // 2])  # the writer is mid-line
    out = tmp_path / "out"
    first = pl.run_pipeline(path, out, spark=spark)
    assert first.rows == 1 and first.quarantined == 0 and quarantine(out) == []
    assert len(first.held) == 1 and first.held[0].startswith(f"{path}:5: the last line has no end of line")
    path.write_text(text)  # the writer finished the line
    second = pl.run_pipeline(path, out, spark=spark)
    assert second.rows == 1 and second.quarantined == 0 and quarantine(out) == [] and second.held == []
    assert second.last_seq == log.events[-1]["seq"]
