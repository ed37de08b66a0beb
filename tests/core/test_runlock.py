"""``ddlcore.runlock``: the output lock's probe that ``ddlcore status`` and ``ddlcore.spark.outlock``
share, and ``ddlcore status`` loading no pyspark."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys

from ddlcore.runlock import LOCK_PATH, probe


def test_the_probe_sees_an_exclusive_flock_and_the_holder_record(tmp_path):
    assert probe(tmp_path).held is False and probe(tmp_path).record == {}  # no file: not created
    assert not (tmp_path / LOCK_PATH).exists()
    (tmp_path / "_state").mkdir()
    fd = os.open(tmp_path / LOCK_PATH, os.O_RDWR | os.O_CREAT)
    try:
        os.write(fd, json.dumps({"pid": 4242, "command": "ddlcore run --follow"}).encode())
        seen = probe(tmp_path)
        assert seen.held is False and seen.pid == 4242  # the record stays; its lock went
        fcntl.flock(fd, fcntl.LOCK_EX)
        seen = probe(tmp_path)
        assert seen.held is True and seen.record["command"] == "ddlcore run --follow" and seen.pid == 4242
    finally:
        os.close(fd)
    assert probe(tmp_path).held is False


def test_status_loads_no_pyspark(tmp_path):
    """``import ddlcore.status`` and a status of an output read nothing of Spark."""
    out = tmp_path / "out"
    (out / "_state").mkdir(parents=True)
    (out / "_state" / "checkpoint.json").write_text(json.dumps({"last_seq": 3, "run": "r"}))
    (out / "_quarantine").mkdir()
    (out / "_quarantine" / "q.json").write_text(json.dumps({"reason": "cannot convert: x"}) + "\n")
    code = ("import sys, ddlcore.status as s; st = s.output_status(sys.argv[1]); "
            "assert st.quarantine['reasons'] == {'cannot convert': 1}, st.quarantine; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')))")
    proc = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
