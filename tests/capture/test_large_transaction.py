"""A transaction larger than the memory limits on its way (MariaDB 10.11): the server's
``binlog_cache_size`` (it goes to a temporary file, ``Binlog_cache_disk_use``), and a stop
asked in its middle.  The capture holds no transaction in memory — rows are written as they
are read, the checkpoint moves at the transaction's end — so every row is written once."""

from __future__ import annotations

from .support import checkpoint, events, run_capture

ROWS = 5000


def _disk_use(cur) -> int:
    cur.execute("SHOW GLOBAL STATUS LIKE 'Binlog_cache_disk_use'")
    return int(cur.fetchone()[1])


def test_a_transaction_larger_than_the_binlog_cache_is_written_whole_once(mariadb, mariadb_db, tmp_path):
    db, out = mariadb_db.name, tmp_path / "out"
    with mariadb.connect(db) as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE big (id int PRIMARY KEY, v varchar(100))")
        conn.commit()
        run_capture(mariadb, out, snapshot="schema_only", include=(f"{db}.*",))
        cur.execute("SELECT @@binlog_cache_size")
        assert cur.fetchone()[0] < ROWS * 60
        spilled = _disk_use(cur)
        cur.execute("BEGIN")
        for start in range(1, ROWS + 1, 500):
            rows = ", ".join(f"({i}, REPEAT('v', 60))" for i in range(start, start + 500))
            cur.execute(f"INSERT INTO big VALUES {rows}")
        cur.execute("COMMIT")
        assert _disk_use(cur) > spilled  # the transaction did not fit the binlog cache
        stats = run_capture(mariadb, out, stop_after_events=10)  # asked to stop 10 rows in: ends at its end
        assert stats.ops["c"] == ROWS
        cur.execute(f"INSERT INTO big VALUES ({ROWS + 1}, 'after')")
        conn.commit()
    run_capture(mariadb, out)
    ids = [e.after[0] for e in events(out) if e.table == "big" and e.op == "c"]
    assert ids == list(range(1, ROWS + 2))
    assert checkpoint(out)["seq"] == events(out)[-1].seq
