"""The bundled TiDB sample (``examples/tidb/sample.py``) through the real ``ddlcore capture
tidb --from-file``, as docs/capture.md shows it: the change log holds the sample's transactions,
and every row image has as many values as its table has columns at that point of the log."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import ddlcore

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "examples" / "tidb" / "sample.py"


def test_sample_captures_into_a_consistent_change_log(tmp_path):
    binlog = tmp_path / "tidb-sample.binlog"
    made = subprocess.run([sys.executable, str(SAMPLE), str(binlog)], capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    assert made.stdout.startswith(f"wrote {binlog}: 7 Binlog messages")
    out = tmp_path / "tidb-capture"
    proc = subprocess.run([sys.executable, "-m", "ddlcore.cli", "capture", "tidb", "--from-file", str(binlog),
                           "--out", str(out), "--no-progress", "--json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["duplicates"] == 0
    events = [json.loads(line) for line in (out / "changelog.jsonl").read_text().splitlines()]
    assert [e["op"] for e in events] == ["source", "ddl", "ddl", "c", "c", "c", "u", "ddl", "c", "d"]
    assert events[0]["source"]["flavor"] == "tidb"
    assert [e["ts"] for e in events[1:]] == sorted(e["ts"] for e in events[1:])
    # the three inserts are one transaction: one tx, rows 0..2
    assert {e["tx"] for e in events[3:6]} == {events[3]["position"]} and [e["row"] for e in events[3:6]] == [0, 1, 2]
    assert events[6]["before"][1] == 1 and events[6]["after"][1] == 2  # status 'new' -> 'paid' (ENUM index)
    assert events[8]["after"][-1] == "gift wrap"

    parser = ddlcore.get_dialect("mysql").parser(flavor="tidb")
    tables = parser.new_tables()
    for e in events:
        if e["op"] == "ddl":
            parser.parse(e["ddl"], tables, database=e["database"])
        elif e["op"] in ("c", "u", "d"):
            width = len(tables.get(f"{e['database']}.{e['table']}").columns)
            for image in (e["before"], e["after"]):
                assert image is None or len(image) == width, (e["seq"], image, width)
