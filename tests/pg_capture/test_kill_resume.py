"""Crash and resume: ``ddlcore capture postgres`` SIGKILLed at random moments (during the
snapshot and while streaming) and restarted writes exactly the change log of an uninterrupted
capture (seq, positions, values), and the slot is never confirmed past what the durable change
log holds: every transaction that committed at or before the slot's ``confirmed_flush_lsn`` is
in the part of the change log the checkpoint covers."""

from __future__ import annotations

import json
import os
import random
import subprocess
import time

from ddlcore_postgres import pgoutput as po

from .support import REPO, cli_args, create_capture_db, drop_capture_db, env, events, run_capture

KILLS = 6


def _kill_once(db, out, rng, span):
    proc = subprocess.Popen(cli_args(db, out, "--until-end", "--checkpoint-interval", "0.05",
                                     "--retry-for", "0"), env=env(), cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        proc.wait(timeout=rng.uniform(0.1, span))
        killed = False
    except subprocess.TimeoutExpired:
        proc.kill()  # SIGKILL of our own child
        proc.wait(timeout=30)
        killed = True
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.stderr.close()
    assert killed or proc.returncode == 0, err
    return killed


def _commit_ends(db, slot):
    """xid → the end LSN of its commit, for every transaction the slot has (consumed)."""
    with db.connect() as conn:
        rows = conn.execute("SELECT data FROM pg_logical_slot_get_binary_changes(%s, NULL, NULL, 'proto_version', "
                            "'1', 'publication_names', 'pub', 'messages', 'true')", (slot,)).fetchall()
    ends, xid = {}, None
    for (data,) in rows:
        m = po.decode(data)
        if isinstance(m, po.Begin):
            xid = m.xid
        elif isinstance(m, po.Commit):
            ends[str(xid)] = m.end_lsn
    return ends


def _phase(out):
    path = out / "checkpoint.json"
    return json.loads(path.read_text())["phase"] if path.exists() else None


def _durable_transactions(out):
    cp = json.loads((out / "checkpoint.json").read_text())
    data = (out / "changelog.jsonl").read_bytes()[:cp["changelog_bytes"]]
    return {json.loads(line).get("tx") for line in data.decode().splitlines() if line.strip()}


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
        while _phase(parts) != "streaming":
            _kill_once(db, parts, rng, 1.5)
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
        ends = _commit_ends(db, "commit_lsns")
        ref = events(full)
        ref_tx = {ev.get("tx") for ev in ref if ev.get("tx")}
        kills = 0
        for _ in range(KILLS):
            kills += _kill_once(db, parts, rng, span)
            confirmed = db.slot_lsn("ddlcore_test")
            durable = _durable_transactions(parts)
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
