"""Resume: a capture killed with SIGKILL at random moments and restarted writes exactly the
change log an uninterrupted capture writes — no event lost, none repeated."""

from __future__ import annotations

import random
import subprocess
import time

import pytest

from ddlcore.history import SchemaHistory

from .support import REPO, checkpoint, cli_args, cli_env, events, log_bytes, master_position, run_cli

pytestmark = pytest.mark.mariadb

KILLS = 5


def _workload(conn, rng: random.Random, transactions: int) -> None:
    """Mixed transactions: multi-row inserts, updates, deletes, a few DDL."""
    next_id = 1
    live: list[int] = []
    with conn.cursor() as cur:
        for i in range(transactions):
            if i and i % 60 == 0:
                cur.execute(f"ALTER TABLE k ADD COLUMN c{i} int unsigned DEFAULT {i}")
                continue
            cur.execute("BEGIN")
            for _ in range(rng.randint(1, 4)):
                what = rng.random()
                if what < 0.6 or not live:
                    n = rng.randint(1, 5)
                    values = ", ".join(
                        f"({next_id + j}, 'v{next_id + j}é', {rng.choice([0, 1, 2 ** 64 - 1])}, "
                        f"'{rng.choice('abc')}')" for j in range(n))
                    cur.execute(f"INSERT INTO k (id, v, n, e) VALUES {values}")
                    live.extend(range(next_id, next_id + n))
                    next_id += n
                elif what < 0.85:
                    cur.execute("UPDATE k SET v = CONCAT(v, 'x'), e = 'c' WHERE id = %s", (rng.choice(live),))
                else:
                    victim = live.pop(rng.randrange(len(live)))
                    cur.execute("DELETE FROM k WHERE id = %s", (victim,))
            cur.execute("COMMIT")


def _kill_and_resume(server, out, args: list[str], rng: random.Random, span: float) -> list[float]:
    """Start the capture ``KILLS`` times, SIGKILL each at a random moment within ``span``
    seconds (the first at a quarter of it, so that a machine less loaded than during the
    reference run still sees at least one run killed mid-stream), then run it to the end.
    Returns the kill times."""
    kills = []
    for attempt in range(KILLS):
        proc = subprocess.Popen(cli_args(server, out, *args), env=cli_env(server), cwd=REPO,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        delay = span / 4 if attempt == 0 else rng.uniform(0.05, span)
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            proc.kill()  # SIGKILL, this process's own child
            kills.append(delay)
        proc.wait()
        assert proc.returncode in (0, -9), proc.stderr.read().decode()
        proc.stderr.close()
    final = run_cli(server, out, *args)
    assert final.returncode == 0, final.stderr
    return kills


def test_sigkilled_stream_capture_resumes_to_the_same_change_log(mariadb, mariadb_db, tmp_path):
    db = mariadb_db.name
    start = master_position(mariadb)
    conn = mariadb_db.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE k (id int PRIMARY KEY, v varchar(200) CHARACTER SET latin1, "
                    "n bigint unsigned, e enum('a','b','c'))")
    rng = random.Random(20240611)
    _workload(conn, rng, 300)
    args = ["--snapshot", "never", "--start", start, "--until-end", "--include", f"{db}.*",
            "--checkpoint-interval", "0.02"]

    ref = tmp_path / "ref"
    t0 = time.monotonic()
    proc = run_cli(mariadb, ref, *args)
    span = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr
    ref_events = events(ref)
    assert [e.seq for e in ref_events] == list(range(1, len(ref_events) + 1))
    assert len(ref_events) > 500

    out = tmp_path / "killed"
    kills = _kill_and_resume(mariadb, out, args, rng, span)
    assert kills, "no run was killed: the capture finished too fast for this test"
    assert log_bytes(out) == log_bytes(ref)
    assert checkpoint(out)["seq"] == checkpoint(ref)["seq"] == ref_events[-1].seq
    assert checkpoint(out)["binlog_position"] == checkpoint(ref)["binlog_position"]
    with SchemaHistory.open(out / "history.sqlite") as h1, SchemaHistory.open(ref / "history.sqlite") as h2:
        def recorded(h):  # a source event's text holds its capture's epoch: compare its seq
            return [(e.seq, e.status, None if e.status == "source" else e.ddl) for e in h.store.events()]
        assert recorded(h1) == recorded(h2)


def test_sigkilled_snapshot_starts_over_and_gives_the_same_change_log(mariadb, mariadb_db, tmp_path):
    db = mariadb_db.name
    conn = mariadb_db.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE big (id int PRIMARY KEY, v varchar(30), e enum('p','q'))")
        for base in range(0, 3000, 500):
            cur.execute("INSERT INTO big VALUES " + ", ".join(
                f"({i}, 'row {i}', '{'pq'[i % 2]}')" for i in range(base, base + 500)))
    args = ["--snapshot", "initial", "--until-end", "--include", f"{db}.*", "--checkpoint-interval", "0.02"]

    def comparable(evs):  # a snapshot's ts is the time it was taken: compare the rest
        return [(e.seq, e.position, e.op, e.database, e.table, e.ddl, e.before, e.after) for e in evs]

    ref = tmp_path / "ref"
    t0 = time.monotonic()
    proc = run_cli(mariadb, ref, *args)
    span = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "killed"
    _kill_and_resume(mariadb, out, args, random.Random(7), span)
    assert comparable(events(out)) == comparable(events(ref))
    assert sum(e.op == "r" for e in events(out)) == 3000
