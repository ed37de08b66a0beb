"""Crash and resume of the whole chain, PostgreSQL 15 → ``ddlcore capture postgres`` →
``ddlcore run``: both SIGKILLed at seeded random moments while a workload changes rows and
schema, the pipeline reading the capture's directory as the capture left it (a torn last line,
events past the capture's checkpoint that its restart truncates and writes again, a snapshot in
progress that a restart starts over).  The final output equals the output of an uninterrupted
capture + run, row for row; and after every capture kill the slot's ``confirmed_flush_lsn``
(pg_replication_slots) is never past a transaction the durable (checkpointed) change log does
not hold.

Seed: ``DDLCORE_KILL_SEED`` (default below); the kill moments are printed.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ddlcore_postgres import pgoutput as po

from .support import (REPO, capture_phase, cli_args, commit_ends, create_capture_db, drop_capture_db,
                      durable_transactions, env, events, kill_once, run_capture)

pytest.importorskip("pyspark")
from tests.e2e.support import run_until  # noqa: E402

SEED = int(os.environ.get("DDLCORE_KILL_SEED", "20261126"))


def _start_run(changelog: Path):
    def start(out: Path) -> subprocess.Popen:
        cmd = [sys.executable, "-m", "ddlcore.cli", "run", "--changelog", str(changelog), "--out", str(out),
               "--master", "local[1]"]
        return subprocess.Popen(cmd, cwd=REPO, env={**env(), "PYSPARK_PYTHON": sys.executable},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    return start


def _workload(db, chunk: int) -> None:
    """One chunk: transactions of inserts, updates (the TOASTed ``big`` left unchanged) and
    deletes, and a schema change in the middle of it."""
    base = 10_000 + chunk * 1000
    for i in range(6):
        lo = base + i * 20
        db.execute("BEGIN; " + "; ".join([
            f"INSERT INTO w (id, v, amount) SELECT g, md5(g::text), g / 4.0 FROM generate_series({lo}, {lo + 19}) g",
            f"UPDATE w SET v = v || '+', s = 'paid' WHERE id % 17 = {i + chunk}",
            f"DELETE FROM w WHERE id % 53 = {i + chunk * 6}"]) + "; COMMIT")
        if i == 2:
            db.execute([f"ALTER TABLE w ADD COLUMN extra{chunk} int DEFAULT {chunk}",
                        "ALTER TABLE w ALTER COLUMN amount TYPE numeric(12,3)",
                        "ALTER TYPE state ADD VALUE IF NOT EXISTS 'gone'",
                        ][chunk % 3])


def read_rows(spark, out: Path) -> list[tuple]:
    """Every output row as ``(schema.table, schema_version, _seq, row dict)``, sorted; the
    position and time of snapshot rows left out (a snapshot restarted on a new slot reads at
    another consistent point: same rows, other LSN)."""
    rows = []
    for vdir in sorted(out.glob("*/*/*/schema_version=*")):
        table = f"{vdir.parent.parent.name}.{vdir.parent.name}"
        version = int(vdir.name.split("=")[1])
        for r in spark.read.parquet(str(vdir)).collect():
            d = r.asDict(recursive=True)
            if d["_op"] == "r":
                d.pop("_position"), d.pop("_ts")
            rows.append((table, version, d["_seq"], d))
    rows.sort(key=lambda x: (x[2], x[0], x[1]))
    return rows


def test_capture_and_pipeline_killed_at_random_moments_end_with_the_uninterrupted_output(postgres, spark, tmp_path):
    from ddlcore.spark.pipeline import run_pipeline

    rng = random.Random(SEED)
    db = create_capture_db(postgres)
    log: list[str] = []
    try:
        db.execute("CREATE TYPE state AS ENUM ('new', 'paid')",
                   "CREATE TABLE w (id int PRIMARY KEY, v text, s state DEFAULT 'new', amount numeric(10,2), big text)",
                   "INSERT INTO w (id, v, amount, big) SELECT g, 'v' || g, g / 7.0, CASE WHEN g % 50 = 0 THEN "
                   "(SELECT string_agg(md5((g * i)::text), '') FROM generate_series(1, 100) i) END "
                   "FROM generate_series(1, 1500) g")
        full, parts, crashed, reference = (tmp_path / n for n in ("full", "parts", "crashed", "reference"))
        run_capture(db, full, slot="full")
        # the first capture run (the snapshot), killed until it completes; a pipeline run on
        # the half-written snapshot reads nothing of it (a restart starts the snapshot over)
        ran_in_snapshot = False
        span = 1.5
        while capture_phase(parts) != "streaming":
            t0 = time.monotonic()
            killed = kill_once(db, parts, rng, span)
            log.append(f"capture (snapshot): {'killed' if killed else 'finished'}")
            # kills fall inside a whole run's length, whatever this machine's speed; the span
            # grows with each kill, so that the snapshot completes
            span = span * 1.2 if killed else max(span, 1.3 * (time.monotonic() - t0))
            if capture_phase(parts) == "snapshot" and not ran_in_snapshot:
                ran_in_snapshot = True
                log.append(f"run during the snapshot: {run_pipeline(parts, crashed, spark=spark).events} events")
        with db.connect() as conn:
            conn.execute("SELECT pg_create_logical_replication_slot('commit_lsns', 'pgoutput')")
        confirmations: list[tuple[str, set]] = []
        # the runs between captures: one to its end (in this process: no JVM start), then two
        # SIGKILLed (driver and JVM) at two of the three moments
        runs = [None, *rng.sample(["early", "writing", "commit"], 2)]
        for chunk, trigger in enumerate(runs):
            _workload(db, chunk)
            t0 = time.monotonic()
            killed = kill_once(db, parts, rng, span)
            if not killed:
                span = max(span, 1.3 * (time.monotonic() - t0))
            cp = json.loads((parts / "checkpoint.json").read_text())
            tail = (parts / "changelog.jsonl").stat().st_size - cp["changelog_bytes"]
            log.append(f"capture chunk {chunk}: {'killed' if killed else 'finished'}, {tail} bytes past its checkpoint")
            confirmed = db.slot_lsn("ddlcore_test")
            if confirmed is not None:
                confirmations.append((confirmed, durable_transactions(parts)))
            if trigger is None:
                res = run_pipeline(parts, crashed, spark=spark)
                log.append(f"run chunk {chunk}: finished, {res.events} events up to seq {res.last_seq} "
                           f"(capture checkpoint: seq {cp['seq']})")
                assert res.last_seq is not None and res.last_seq <= cp["seq"] and res.quarantined == 0
            else:
                log.append(f"run chunk {chunk}: " + run_until(crashed, trigger, rng, _start_run(parts)))
        done = subprocess.run(cli_args(db, parts, "--until-end"), env=env(), cwd=REPO, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        run_pipeline(parts, crashed, spark=spark)
        print("\n".join(log))
        assert any("killed" in entry for entry in log), log

        # the slot never confirmed past durable change-log data
        run_capture(db, full, slot="full")
        ends = commit_ends(db, "commit_lsns")
        ref_tx = {ev.get("tx") for ev in events(full) if ev.get("tx")}
        for confirmed, durable in confirmations:
            c = po.parse_lsn(confirmed)
            missing = [x for x, end in ends.items() if end <= c and x in ref_tx and x not in durable]
            assert not missing, f"slot confirmed at {confirmed} but transactions {missing} are not durable"

        # the uninterrupted chain: the same rows, each once
        ref = run_pipeline(full / "changelog.jsonl", reference, spark=spark)
        assert ref.quarantined == 0, ref.quarantine_reasons
        expected, got = read_rows(spark, reference), read_rows(spark, crashed)
        assert len(expected) == ref.rows > 2000
        seqs = [(table, seq) for table, _v, seq, _r in got]
        assert len(seqs) == len(set(seqs)), "a row was written twice"
        assert [x[:3] for x in got] == [x[:3] for x in expected]
        assert got == expected
        assert not (crashed / "_quarantine").exists()
        assert sorted(p.name for p in (crashed / "_schemas").iterdir()) == \
            sorted(p.name for p in (reference / "_schemas").iterdir())
        assert json.loads((crashed / "_run.json").read_text())["total"] == \
            json.loads((reference / "_run.json").read_text())["total"]
    finally:
        drop_capture_db(db)
