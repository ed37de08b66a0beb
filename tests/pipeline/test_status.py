"""``ddlcore status OUT`` on real ``ddlcore run`` outputs of a capture directory (the recorded
pg_shop change log): the committed seq beside the capture's checkpoint, the lag in events and
source seconds, tables, quarantine by reason and the run lock (``ddlcore.status``)."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ddlcore.spark import outlock
from ddlcore.status import OUTPUT_LOCK_NAME, StatusError, output_lag, output_status

REPO = Path(__file__).resolve().parents[2]
LOG = REPO / "examples" / "pg_shop" / "changelog.jsonl"
pytest.importorskip("ddlcore_postgres")


def _checkpoint(cap: Path, lines: list[bytes], durable: int) -> None:
    """The capture's checkpoint covering the first ``durable`` lines (all of them written)."""
    (cap / "checkpoint.json").write_text(json.dumps({
        "format": 1, "seq": json.loads(lines[durable - 1])["seq"], "lsn": "0/0", "phase": "streaming",
        "changelog_bytes": sum(len(x) for x in lines[:durable]), "updated": "2026-01-01T00:00:00Z"}))


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ddlcore.cli", "status", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=120)


def test_status_reports_the_commit_the_capture_the_lag_tables_quarantine_and_lock(spark, tmp_path):
    from ddlcore.spark.pipeline import run_pipeline

    lines = LOG.read_bytes().splitlines(keepends=True)
    events = [json.loads(x) for x in lines]
    cap, out = tmp_path / "cap", tmp_path / "out"
    cap.mkdir()
    (cap / "changelog.jsonl").write_bytes(b"".join(lines))
    _checkpoint(cap, lines, 30)
    opts = {"numeric_unconstrained": "string"}
    run_pipeline(cap, out, spark=spark, spark_options=opts)
    _checkpoint(cap, lines, len(lines))  # the capture went on; the output did not run again

    st = json.loads(_cli(str(out), "--format", "json").stdout)
    assert st["committed"]["seq"] == 30 and st["committed"]["position"] == events[29]["position"]
    assert st["committed"]["ts"] == events[29]["ts"] and not st["committed"]["pending"]
    assert st["capture"]["directory"] == str(cap) and st["capture"]["seq"] == 47
    assert st["capture"]["position"] == events[46]["position"]
    assert st["lag"] == {"events": 17, "seconds": round((events[46]["ts"] - events[29]["ts"]) / 1000, 3)}
    assert output_lag(out) == {"committed_seq": 30, "capture_seq": 47, **st["lag"]}  # a follower's live line
    assert st["quarantine"] == {"total": 0, "reasons": {}} and st["lock"]["held"] is False

    run_pipeline(cap, out, spark=spark, spark_options=opts)
    st = output_status(out)
    assert st.committed["seq"] == 47 and st.lag == {"events": 0, "seconds": 0.0}
    assert st.quarantine["total"] == 1 and list(st.quarantine["reasons"]) == ["cannot convert"]
    total = json.loads((out / "_run.json").read_text())["total"]["counts"]
    tables = {(t.schema, t.table): t for t in st.tables}
    for (schema, table), t in tables.items():
        assert t.rows == sum(r["rows"] for r in total if r["table"] == f"{schema}.{table}") > 0
        versions = sorted(int(p.name.rsplit(".v", 1)[1][:-5]) for p in (out / "_schemas").glob(f"*.{table}.v*"))
        assert t.version in versions
    in_log = sum(e.get("schema") == "public" and e["table"] == "customers" for e in events)
    assert tables["public", "customers"].rows == in_log and tables["public", "customers"].valid_to_seq is None
    doc = st.to_json()["tables"]  # the --format json document: each table's fields
    assert [sorted(t) for t in doc] == [sorted(("database", "schema", "table", "version", "valid_from_seq",
                                                "valid_to_seq", "rows"))] * len(st.tables)
    assert [(t["schema"], t["table"], t["rows"]) for t in doc] == [(t.schema, t.table, t.rows) for t in st.tables]
    shown = _cli(str(out)).stdout  # the text form: a line per table, its name, version, rows
    c = tables["public", "customers"]
    cells = [line.replace("│", " ").split() for line in shown.splitlines()]
    assert [c.name, str(c.version), "-", f"{c.rows:,}"] in cells

    lock = out / OUTPUT_LOCK_NAME
    assert OUTPUT_LOCK_NAME == outlock.LOCK_PATH  # the lock ddlcore run takes
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    try:
        os.ftruncate(fd, 0)  # the runs above left their own record (the file stays; its lock goes)
        os.write(fd, json.dumps({"pid": os.getpid(), "command": "ddlcore run"}).encode())
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert output_status(out).lock == {"path": str(lock), "held": True, "pid": os.getpid()}
        text = _cli(str(out))
        assert text.returncode == 0 and f"held by pid {os.getpid()}" in text.stdout
        assert "lag        0 events" in text.stdout and "1 record(s)" in text.stdout
    finally:
        os.close(fd)
    assert output_status(out).lock["held"] is False


def test_status_of_something_that_is_not_an_output_is_one_line(tmp_path):
    for target, why in ((tmp_path, "not a ddlcore run output"), ("s3a://bucket/out", "reads a local output")):
        proc = _cli(str(target))
        assert proc.returncode == 1 and why in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
        with pytest.raises(StatusError, match=why):
            output_status(target)
