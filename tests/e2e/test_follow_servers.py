"""``ddlcore run --follow`` beside a live capture of a real server (issue 29, "How it is verified";
docs/operations.md): ``ddlcore capture mysql`` on MariaDB 10.11 and ``ddlcore capture postgres``
on PostgreSQL 15 run as processes while a workload inserts, updates, deletes and alters two
tables; ``ddlcore run --follow`` follows the capture's directory, is SIGKILLed and SIGTERMed at
seeded random moments and started again (``follow_harness``).  When the workload stops, the
follower commits the capture's last checkpointed event within a bounded time, and its output
equals one uninterrupted batch ``ddlcore run`` over the same change log: every row of every
table version, the schema files, the quarantine and the row counts.  Each workload puts rows
into the quarantine too (a zero date with ``invalid_date_handling=error``; a numeric beyond
``DecimalType(38,18)``), so the quarantine is compared with something in it."""

from __future__ import annotations

import re
import subprocess
import sys
import threading

import pytest

from tests.e2e.follow_harness import REPO, follow_under_interruptions

pytest.importorskip("pyspark")


def test_follow_a_live_mariadb_capture_through_kills_equals_a_batch_run(spark, mariadb_db, tmp_path):
    server = mariadb_db.server
    conn = mariadb_db.connect(autocommit=True)
    with conn.cursor() as cur:
        cur.execute("SET SESSION sql_mode = ''")  # zero dates accepted: quarantined by the run
        cur.execute("CREATE TABLE items (id int PRIMARY KEY AUTO_INCREMENT, name varchar(40), qty int, d date)")
        cur.execute("CREATE TABLE moves (id int PRIMARY KEY AUTO_INCREMENT, item int, amount decimal(10,2))")
        cur.execute("INSERT INTO items (name, qty, d) VALUES ('before', 1, '2026-01-01')")

    def start_capture(cap):
        return subprocess.Popen(
            [sys.executable, "-m", "ddlcore.cli", "capture", "mysql", "--socket", server.socket, "--user",
             server.user, "--password-env", "DDLCORE_TEST_PW", "--server-id", "4260", "--out", str(cap),
             "--include", f"{mariadb_db.name}.*", "--checkpoint-interval", "0.2", "--no-progress"],
            cwd=REPO, env={**_env(), "DDLCORE_TEST_PW": server.password}, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)

    def workload(done: threading.Event) -> None:
        rnd = 0
        with conn.cursor() as cur:
            while not done.is_set() or rnd < 8:
                cur.execute("BEGIN")
                for i in range(2):
                    day = "0000-00-00" if (rnd, i) == (3, 1) else f"2026-02-{1 + i:02d}"
                    cur.execute("INSERT INTO items (name, qty, d) VALUES (%s, %s, %s)", (f"r{rnd}-{i}", i, day))
                cur.execute("INSERT INTO moves (item, amount) VALUES (%s, %s)", (rnd + 1, rnd * 1.25))
                cur.execute("UPDATE items SET qty = qty + 10 WHERE id BETWEEN %s AND %s", (rnd, rnd + 1))
                cur.execute("DELETE FROM items WHERE id = %s", (rnd * 3 + 2,))
                cur.execute("COMMIT")
                if rnd in (4, 12):
                    cur.execute(f"ALTER TABLE items ADD COLUMN note{rnd} varchar(10) DEFAULT 'n'")
                rnd += 1
                done.wait(1.0)

    def finish() -> None:
        with conn.cursor() as cur:
            cur.execute("INSERT INTO items (name, qty) VALUES ('last', 0)")

    got = follow_under_interruptions(spark=spark, tmp=tmp_path, start_capture=start_capture, workload=workload,
                                     finish=finish, spark_options={"invalid_date_handling": "error"})
    assert got["view"]["quarantine"] and got["reference"].rows > 30, got["reference"]
    # piped: one plain line per batch, no terminal control codes
    assert re.search(r"^batch \d+: seq \d+ → \d+, \d+ events, .* events/s; lag \d+ events", got["log"], re.M)
    assert "\x1b" not in got["log"]


def test_follow_a_live_postgres_capture_through_kills_equals_a_batch_run(spark, postgres, tmp_path):
    pytest.importorskip("psycopg2", reason="the capture extra (psycopg2) is not installed")
    from tests.pg_capture.support import cli_args, create_capture_db, drop_capture_db

    db = create_capture_db(postgres)
    try:
        db.execute("CREATE TABLE items (id int PRIMARY KEY, name text, qty int, price numeric)",
                   "CREATE TABLE moves (id serial PRIMARY KEY, item int, amount numeric(10,2))",
                   "INSERT INTO items VALUES (0, 'before', 1, 1.5)")

        def start_capture(cap):
            return subprocess.Popen(cli_args(db, cap, "--checkpoint-interval", "0.2"), cwd=REPO, env=_env(),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def workload(done: threading.Event) -> None:
            rnd = 0
            with db.connect() as c:
                while not done.is_set() or rnd < 8:
                    big = "123456789012345678901234567" if rnd == 3 else f"{rnd}.25"  # > 20 integer digits
                    base = 1 + rnd * 2
                    c.execute("BEGIN")
                    c.execute(f"INSERT INTO items SELECT g, 'r' || g, g % 5, {big} "
                              f"FROM generate_series({base}, {base + 1}) g")
                    c.execute("INSERT INTO moves (item, amount) VALUES (%s, %s)", (base, rnd * 1.25))
                    c.execute("UPDATE items SET qty = qty + 10 WHERE id BETWEEN %s AND %s", (rnd, rnd + 1))
                    c.execute("DELETE FROM items WHERE id = %s", (base - 2,))
                    c.execute("COMMIT")
                    if rnd in (4, 12):
                        c.execute(f"ALTER TABLE items ADD COLUMN note{rnd} text DEFAULT 'n'")
                    rnd += 1
                    done.wait(1.0)

        got = follow_under_interruptions(spark=spark, tmp=tmp_path, start_capture=start_capture, workload=workload,
                                         finish=lambda: db.execute("INSERT INTO items VALUES (-1, 'last', 0, 0)"),
                                         spark_options={})
        assert got["view"]["quarantine"] and got["reference"].rows > 30, got["reference"]
    finally:
        drop_capture_db(db)


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "PYSPARK_PYTHON": sys.executable}
