"""Crash and resume: ``ddlcore capture postgres`` SIGKILLed at random moments (during the
snapshot and while streaming) and restarted writes exactly the change log of an uninterrupted
capture (seq, positions, values), and the slot is never confirmed past what the durable change
log holds: every transaction that committed at or before the slot's ``confirmed_flush_lsn`` is
in the part of the change log the checkpoint covers."""

from __future__ import annotations

import os
import random
import subprocess
import time

from ddlcore_postgres import pgoutput as po

from .support import (REPO, capture_phase, cli_args, commit_ends, create_capture_db, drop_capture_db,
                      durable_transactions, env, events, kill_once, run_capture)

KILLS = 6


def test_sigkill_at_random_moments_then_resume_equals_uninterrupted(postgres, tmp_path):
    rng = random.Random(int(os.environ.get("DDLCORE_KILL_SEED", "20261125")))
    db = create_capture_db(postgres)
    try:
        db.execute("CREATE TYPE state AS ENUM ('new', 'paid')",
                   "CREATE TABLE w (id int PRIMARY KEY, v text, s state DEFAULT 'new', amount numeric(10,2))",
                   "INSERT INTO w (id, v, amount) SELECT g, 'v' || g, g / 7.0 FROM generate_series(1, 3000) g")
        full, parts = tmp_path / "full", tmp_path / "parts"
        run_capture(db, full, slot="full")
        # the first run (snapshot), killed until it completes: the slot is re-created each time
        while capture_phase(parts) != "streaming":
            kill_once(db, parts, rng, 1.5)
        with db.connect() as conn:
            conn.execute("SELECT pg_create_logical_replication_slot('commit_lsns', 'pgoutput')")
        for i in range(120):
            db.execute("BEGIN; " + "; ".join(
                [f"INSERT INTO w (id, v, amount) SELECT g, md5(g::text), g FROM generate_series({4000 + i * 50}, "
                 f"{4000 + i * 50 + 49}) g",
                 f"UPDATE w SET v = v || '+', s = 'paid' WHERE id % 40 = {i}",
                 f"DELETE FROM w WHERE id % 97 = {i}"]) + "; COMMIT")
            if i % 30 == 5:
                db.execute(f"ALTER TABLE w ADD COLUMN extra{i} int DEFAULT {i}; INSERT INTO w (id) VALUES ({90000 + i})")
            if i == 62:
                db.execute("ALTER TABLE w ALTER COLUMN amount TYPE text USING amount::text || ' EUR'")
        t0 = time.monotonic()
        run_capture(db, full, slot="full")
        span = max(0.4, 1.3 * (time.monotonic() - t0))  # kills fall inside a run's length
        ends = commit_ends(db, "commit_lsns")
        ref = events(full)
        ref_tx = {ev.get("tx") for ev in ref if ev.get("tx")}
        kills = 0
        for _ in range(KILLS):
            kills += kill_once(db, parts, rng, span)
            confirmed = db.slot_lsn("ddlcore_test")
            durable = durable_transactions(parts)
            if confirmed is not None:
                c = po.parse_lsn(confirmed)
                missing = [x for x, end in ends.items() if end <= c and x in ref_tx and x not in durable]
                assert not missing, f"slot confirmed at {confirmed} but transactions {missing} are not durable"
        assert kills >= 2
        done = subprocess.run(cli_args(db, parts, "--until-end"), env=env(), cwd=REPO, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr

        def comparable(evs):
            return [{k: v for k, v in ev.items()
                     if k not in ("source", "ts", "position") or not (ev["op"] in ("source", "r") or ev.get("snapshot"))}
                    for ev in evs]

        got = events(parts)
        assert len(got) == len(ref) > 5000
        assert comparable(got) == comparable(ref)
    finally:
        drop_capture_db(db)
