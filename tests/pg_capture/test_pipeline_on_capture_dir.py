"""``ddlcore run`` on a capture's directory that the capture is still writing (or was killed
while writing): only what the capture's ``checkpoint.json`` covers is read (docs/pipeline.md,
"Reading a capture's directory").  Deterministic companion of test_crash_resume_e2e.py, on the
recorded pg_shop change log: a directory whose checkpoint covers the first events, followed by
events past it and a torn last line; then the same directory completed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .support import REPO

pytest.importorskip("pyspark")
pytest.importorskip("ddlcore_postgres")

LOG = REPO / "examples" / "pg_shop" / "changelog.jsonl"


def _capture_dir(path: Path, lines: list[bytes], durable: int, tail: bytes = b"", phase: str = "streaming") -> Path:
    """A capture's --out: ``lines`` written, the first ``durable`` of them checkpointed."""
    path.mkdir(exist_ok=True)
    (path / "changelog.jsonl").write_bytes(b"".join(lines) + tail)
    seq = json.loads(lines[durable - 1])["seq"] if durable else 0
    (path / "checkpoint.json").write_text(json.dumps({
        "format": 1, "seq": seq, "lsn": "0/0", "phase": phase,
        "changelog_bytes": sum(len(x) for x in lines[:durable])}))
    return path


def test_a_run_reads_up_to_the_capture_checkpoint_and_never_quarantines_a_torn_line(tmp_path):
    from ddlcore.spark.pipeline import run_pipeline, spark_session

    spark = spark_session("local[2]")
    lines = LOG.read_bytes().splitlines(keepends=True)
    cut = 30
    out = tmp_path / "out"
    cap = tmp_path / "cap"
    # a first run still in its snapshot: nothing is final, nothing is read or committed
    _capture_dir(cap, lines[:10], 10, phase="snapshot")
    res = run_pipeline(cap, out, spark=spark)
    assert (res.events, res.last_seq) == (0, None) and not (out / "_state" / "log.json").exists()
    # streaming: checkpoint at line `cut`, more lines written, the last one torn by a kill
    _capture_dir(cap, lines[:cut + 5], cut, tail=lines[cut + 5][:40])
    res = run_pipeline(cap / "changelog.jsonl", out, spark=spark, spark_options={"numeric_unconstrained": "string"})
    assert res.last_seq == json.loads(lines[cut - 1])["seq"], res
    assert res.quarantined == 0 and not (out / "_quarantine").exists()
    # the capture restarted: truncated to its checkpoint, wrote the rest, checkpointed it all
    _capture_dir(cap, lines, len(lines))
    res = run_pipeline(cap, out, spark=spark, spark_options={"numeric_unconstrained": "string"})
    assert res.last_seq == json.loads(lines[-1])["seq"]
    # the same output as one run over the whole log
    whole = run_pipeline(LOG, tmp_path / "whole", spark=spark, spark_options={"numeric_unconstrained": "string"})
    total = json.loads((out / "_run.json").read_text())["total"]
    assert total == json.loads((tmp_path / "whole" / "_run.json").read_text())["total"]
    assert whole.quarantined == 1  # the 2-D value in sizes int[], in both
    quarantined = [line for f in (out / "_quarantine").glob("*.json") for line in f.read_text().splitlines() if line]
    assert len(quarantined) == 1 and "sizes" in json.loads(quarantined[0])["reason"]
