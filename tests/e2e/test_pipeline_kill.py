"""Crash safety of the pipeline: ``ddlcore run`` on the shop change log, killed with SIGKILL at
a few moments and restarted, ends with exactly the output of an uninterrupted run — every row
once, none lost, none doubled.

Each kill ends the whole run at once, Python driver and Spark JVM together (the run is started
in its own process group and the group is killed, as when a machine or container dies).  The
moments come from a seeded RNG but are anchored on what the run is doing, so that they land
in different phases whatever the machine's speed:

* ``early``: a random time after the start (Spark starting, the log being read, the history
  being recorded);
* ``writing``: a random time after the first table version starts being written into the run's
  staging directory (mid-conversion: staged files exist, nothing is committed);
* ``commit``: as soon as the run's ``pending.json`` exists (the commit point: the next run must
  roll the commit forward, not redo it and not lose it).

A run that ends before its kill moment is simply a complete run.  Every wait is bounded.
The uninterrupted reference run happens in this process (the shared Spark session) while the
killed runs go on, to keep the test short.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from .conftest import REPO, SHOP
from .support import RUN_TIMEOUT, kill_group, run_until

pytest.importorskip("pyspark")

from ddlcore.spark.pipeline import run_pipeline  # noqa: E402

CHANGELOG = SHOP / "changelog.jsonl"
SEED = 20241122


def _start(out: Path, *extra: str) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "ddlcore.cli", "run", "--changelog", str(CHANGELOG), "--out", str(out),
           "--master", "local[1]", *extra]
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def read_rows(spark, out: Path) -> list[tuple]:
    """Every output row as ``(table, schema_version, _seq, row dict)``, sorted."""
    rows = []
    for vdir in sorted(out.glob("*/*/schema_version=*")):
        table = f"{vdir.parent.parent.name}.{vdir.parent.name}"
        version = int(vdir.name.split("=")[1])
        for r in spark.read.parquet(str(vdir)).collect():
            rows.append((table, version, r["_seq"], r.asDict(recursive=True)))
    rows.sort(key=lambda x: (x[2], x[0], x[1]))
    return rows


def test_sigkilled_pipeline_runs_end_with_the_uninterrupted_output(spark, tmp_path):
    reference_out, crashed_out = tmp_path / "reference", tmp_path / "crashed"

    # the uninterrupted run, in this process, while the killed runs go on
    reference: dict = {}

    def uninterrupted():
        try:
            reference["result"] = run_pipeline(CHANGELOG, reference_out, spark=spark)
        except BaseException as exc:  # re-raised below, in the test's thread
            reference["error"] = exc

    thread = threading.Thread(target=uninterrupted, name="reference run")
    thread.start()

    rng = random.Random(SEED)
    triggers = ["early", "writing"]
    rng.shuffle(triggers)      # in a random order; then the commit point, last
    triggers.append("commit")
    log = [run_until(crashed_out, trigger, rng, _start) for trigger in triggers]
    final = _start(crashed_out)
    try:
        out_text, err_text = final.communicate(timeout=RUN_TIMEOUT)
    finally:
        if final.poll() is None:
            kill_group(final)
            final.wait(30)
    assert final.returncode == 0, err_text[-3000:]
    log.append("final run finished")

    thread.join(RUN_TIMEOUT)
    assert not thread.is_alive(), "the reference run did not end"
    if "error" in reference:
        raise reference["error"]
    print("\n".join(log))
    assert any(entry.startswith("killed") for entry in log), log

    # the same rows, each once
    expected, got = read_rows(spark, reference_out), read_rows(spark, crashed_out)
    assert reference["result"].quarantined == 0 and len(expected) == reference["result"].rows
    seqs = [(table, seq) for table, _v, seq, _r in got]
    assert len(seqs) == len(set(seqs)), "a row was written twice"
    assert [x[:3] for x in got] == [x[:3] for x in expected]
    assert got == expected

    # the same committed state: checkpoint, totals, schemas; nothing half-done left behind
    state = crashed_out / "_state"
    assert json.loads((state / "checkpoint.json").read_text())["last_seq"] == \
        json.loads((reference_out / "_state" / "checkpoint.json").read_text())["last_seq"]
    assert json.loads((crashed_out / "_run.json").read_text())["total"] == \
        json.loads((reference_out / "_run.json").read_text())["total"]
    assert sorted(p.name for p in (crashed_out / "_schemas").iterdir()) == \
        sorted(p.name for p in (reference_out / "_schemas").iterdir())
    assert not (state / "pending.json").exists() and not (state / "staging").exists()
    assert not (crashed_out / "_quarantine").exists()


def _iceberg_rows(out: Path) -> dict[str, list[tuple]]:
    """Every Iceberg changes table's rows as sorted ``(_seq, _row, _op)``, and every
    current-state table's rows (as JSON text, sorted), by table name."""
    from ddlcore.sinks.iceberg import CATALOG_FILE, WAREHOUSE_DIR, open_catalog

    cat = open_catalog({"name": "ddlcore", "uri": f"sqlite:///{out / CATALOG_FILE}",
                        "warehouse": f"file://{out / WAREHOUSE_DIR}"})
    found = {}
    for ns in cat.list_namespaces():
        for ident in cat.list_tables(ns):
            table = cat.load_table(ident)
            if not ident[-1].endswith("__changes"):
                found[".".join(ident)] = sorted(json.dumps(r, default=str, sort_keys=True)
                                                for r in table.scan().to_arrow().to_pylist())
                continue
            rows = table.scan(selected_fields=("_seq", "_row", "_op")).to_arrow().to_pylist()
            found[".".join(ident)] = sorted((r["_seq"], r["_row"], r["_op"]) for r in rows)
    return found


def test_sigkilled_iceberg_runs_end_with_the_uninterrupted_tables(spark, tmp_path):
    """``--format iceberg``: killed during the Iceberg commit (a moment after the commit point;
    or, if the run is faster, after its checkpoint), the restarted run's Iceberg tables hold
    every row event exactly once.  (Kills before the commit point leave only staging files:
    ``test_sigkilled_pipeline_runs_end_with_the_uninterrupted_output``.)"""
    reference_out, crashed_out = tmp_path / "reference", tmp_path / "crashed"
    reference = run_pipeline(CHANGELOG, reference_out, spark=spark, output_format="iceberg")
    rng = random.Random(SEED + 31)
    log = [run_until(crashed_out, trigger, rng, start=lambda out: _start(out, "--format", "iceberg"))
           for trigger in ("iceberg",)]
    final = _start(crashed_out, "--format", "iceberg")
    try:
        _out, err_text = final.communicate(timeout=RUN_TIMEOUT)
    finally:
        if final.poll() is None:
            kill_group(final)
            final.wait(30)
    assert final.returncode == 0, err_text[-3000:]
    print("\n".join(log))
    assert log[0].startswith("killed"), log
    expected, got = _iceberg_rows(reference_out), _iceberg_rows(crashed_out)
    assert sum(len(v) for k, v in expected.items() if k.endswith("__changes")) == reference.rows
    assert any(not k.endswith("__changes") and v for k, v in expected.items())  # current states too
    assert got == expected
    for rows in got.values():
        assert len(rows) == len(set(rows)), "a row event was committed twice"
