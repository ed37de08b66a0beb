"""Issue 11, the capture's side, against a real MariaDB 10.11: every path that lost or
corrupted rows without a word — per-session binlog settings, DDL the capture could not see,
settings the change log did not carry, TRUNCATE, a restarting server — now gives correct events
or a loud, precise stop."""

from __future__ import annotations

import threading
import time

import pytest

from ddlcore.history import SchemaHistory
from ddlcore_mysql.capture import CaptureError, CaptureOptions, MySqlCapture

from tests.servers.fixtures import started_server

from .support import B, checkpoint, connection, events, run_capture

ABSENT = {"$absent": True}


def _start(cur, db):
    cur.execute(f"CREATE TABLE `{db}`.t (id int PRIMARY KEY, a varchar(10), n int)")


def test_statement_format_dml_stops_the_capture_before_it(capture_server, capture_db, tmp_path):
    db = capture_db
    out = tmp_path / "out"
    with capture_server.connect(db) as conn, conn.cursor() as cur:
        _start(cur, db)
        run_capture(capture_server, out, snapshot="schema_only", include=(f"{db}.*",))
        cur.execute("INSERT INTO t VALUES (1, 'row', 1)")
        conn.commit()
        cur.execute("SET SESSION binlog_format = 'STATEMENT'")
        cur.execute("UPDATE t SET n = n + 1 WHERE id = 1")
        conn.commit()
    with pytest.raises(CaptureError, match=rf"statement-format DML on captured table {db}\.t .*UPDATE t SET n"):
        run_capture(capture_server, out)
    evs = events(out)
    assert [e.op for e in evs if e.table == "t"] == ["c"]            # the row before it, nothing after
    assert checkpoint(out)["seq"] == evs[-1].seq
    # with --on-statement-dml quarantine: recorded as a stmt event, the capture goes on
    stats = run_capture(capture_server, out, on_statement_dml="quarantine")
    assert stats.statement_dml == 1
    stmt = [e for e in events(out) if e.op == "stmt"]
    assert len(stmt) == 1 and stmt[0].table == "t" and stmt[0].ddl.startswith("UPDATE t SET n")


def test_statement_dml_on_a_temporary_table_is_skipped_with_a_warning(mariadb, mariadb_db, tmp_path):
    db = mariadb_db.name
    out = tmp_path / "out"
    with mariadb.connect(db) as conn, conn.cursor() as cur:
        _start(cur, db)
        run_capture(mariadb, out, snapshot="schema_only", include=(f"{db}.*",))
        cur.execute("SET SESSION binlog_format = 'STATEMENT'")
        cur.execute("CREATE TEMPORARY TABLE tmp (id int)")
        cur.execute("INSERT INTO tmp VALUES (1)")
        conn.commit()
    warnings = []
    cap = MySqlCapture(CaptureOptions(connection(mariadb), server_id=4242, out=out, until_end=True, progress=False),
                       on_warning=warnings.append)
    stats = cap.run()
    assert stats.statement_dml == 0
    assert any("a temporary table?" in w and "tmp" in w for w in warnings)


def test_a_partial_row_image_is_written_absent_never_null(capture_server, capture_db, tmp_path):
    db = capture_db
    out = tmp_path / "out"
    with capture_server.connect(db) as conn, conn.cursor() as cur:
        _start(cur, db)
        cur.execute("INSERT INTO t VALUES (1, 'full', 1)")
        conn.commit()
        run_capture(capture_server, out, snapshot="initial", include=(f"{db}.*",))
        cur.execute("SET SESSION binlog_row_image = 'MINIMAL'")
        cur.execute("UPDATE t SET n = 2 WHERE id = 1")
        cur.execute("DELETE FROM t WHERE id = 1")
        conn.commit()
    run_capture(capture_server, out)
    u, d = [e for e in events(out) if e.op in ("u", "d")]
    assert u.before == [1, ABSENT, ABSENT] and u.after == [ABSENT, ABSENT, 2]
    assert d.before == [1, ABSENT, ABSENT]


def test_truncate_is_an_event_and_rows_carry_their_transaction(mariadb, mariadb_db, tmp_path):
    db = mariadb_db.name
    out = tmp_path / "out"
    with mariadb.connect(db) as conn, conn.cursor() as cur:
        _start(cur, db)
        run_capture(mariadb, out, snapshot="schema_only", include=(f"{db}.*",))
        cur.execute("INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', 3)")
        conn.commit()
        cur.execute("INSERT INTO t VALUES (4, 'd', 4)")
        conn.commit()
        cur.execute("TRUNCATE TABLE t")
        cur.execute("SELECT @@gtid_binlog_pos")
        gtid_end = cur.fetchone()[0]
    run_capture(mariadb, out)
    evs = [e for e in events(out) if e.table == "t" or (e.op == "ddl" and "TRUNCATE" in e.ddl)]
    rows = [e for e in evs if e.op == "c"]
    assert [(e.row, e.after[0]) for e in rows] == [(0, 1), (1, 2), (2, 3), (0, 4)]
    assert rows[0].tx == rows[2].tx != rows[3].tx and rows[0].tx.count("-") == 2   # MariaDB GTIDs
    truncate = evs[-1]
    assert truncate.op == "t" and truncate.table == "t" and truncate.database == db
    assert evs[-2].op == "ddl" and truncate.tx == evs[-2].tx == gtid_end.split(",")[0]


def test_the_source_event_carries_the_servers_settings(tmp_path):
    server = started_server("MariaDB with lower_case_table_names=1", character_set_server="latin1",
                            collation_server="latin1_swedish_ci", options={"lower_case_table_names": 1})
    try:
        out = tmp_path / "out"
        with server.connect() as conn, conn.cursor() as cur:
            cur.execute("CREATE DATABASE Shop")
            run_capture(server, out, snapshot="schema_only", include=("shop.*",))
            cur.execute("SET SESSION sql_mode = 'ANSI_QUOTES'")
            cur.execute('CREATE TABLE shop."Orders" ("Id" int PRIMARY KEY, "note" varchar(5))')
            cur.execute("SET SESSION sql_mode = ''")
            cur.execute("INSERT INTO SHOP.ORDERS VALUES (1, 'x')")
            conn.commit()
            cur.execute("ALTER TABLE shop.orders ADD COLUMN `c` int")  # read without ANSI_QUOTES again
        stats = run_capture(server, out)
        assert stats.ddl_failed == 0
        evs = events(out)
        sources = [e for e in evs if e.op == "source"]
        first = sources[0].source
        assert first["parser_options"]["lower_case_table_names"] == 1
        assert first["parser_options"]["character_set_server"] == "latin1"
        assert first["parser_options"]["ansi_quotes"] is False and first["flavor"] == "mariadb"
        assert first["server"]["server_id"] == 1 and first["epoch"]
        # the ANSI_QUOTES session: a source event with ansi_quotes from the DDL's seq on
        create = next(e for e in evs if e.op == "ddl" and '"Orders"' in e.ddl)
        switch = [e for e in sources if e.seq < create.seq][-1]
        assert switch.source["parser_options"]["ansi_quotes"] is True
        assert switch.source["epoch"] == first["epoch"]
        back = [e for e in sources if e.seq > create.seq]
        assert back and back[0].source["parser_options"]["ansi_quotes"] is False
        row = next(e for e in evs if e.op == "c")
        assert (row.database, row.table) == ("shop", "orders")       # as the server stores it
        with SchemaHistory.open(out / "history.sqlite") as h:
            t = h.table_at("shop.orders")
            assert [c.name for c in t.columns] == ["Id", "note", "c"] and t.columns[1].character_set_name == "latin1"
    finally:
        server.stop()


def test_ddl_the_capture_did_not_see_quarantines_rows_until_a_resync(mariadb, mariadb_db, tmp_path):
    db = mariadb_db.name
    out = tmp_path / "out"
    with mariadb.connect(db) as conn, conn.cursor() as cur:
        _start(cur, db)
        run_capture(mariadb, out, snapshot="schema_only", include=(f"{db}.*",))
        cur.execute("SET SESSION sql_log_bin = 0")
        cur.execute("ALTER TABLE t ADD COLUMN extra varchar(5)")
        cur.execute("SET SESSION sql_log_bin = 1")
        cur.execute("INSERT INTO t VALUES (1, 'a', 1, 'e')")
        conn.commit()
    run_capture(mariadb, out)
    row = next(e for e in events(out) if e.op == "c")
    assert row.quarantine.startswith("drift: ") and "extra" in row.quarantine
    with mariadb.connect(db) as conn, conn.cursor() as cur:
        cur.execute("INSERT INTO t VALUES (2, 'b', 2, 'f')")
        conn.commit()
    stats = run_capture(mariadb, out, resync=(f"{db}.t",))
    assert stats.resynced == 1
    evs = events(out)
    resync = next(e for e in evs if e.op == "ddl" and e.snapshot and e.seq > row.seq)
    assert "`extra` varchar(5)" in resync.ddl
    second = next(e for e in evs if e.op == "c" and e.after[0] == 2)
    assert second.seq < resync.seq and second.quarantine   # read before the resync's position
    with mariadb.connect(db) as conn, conn.cursor() as cur:
        cur.execute("INSERT INTO t VALUES (3, 'c', 3, 'g')")
        conn.commit()
    run_capture(mariadb, out)
    third = next(e for e in events(out) if e.op == "c" and e.after[0] == 3)
    assert third.quarantine is None                        # the history agrees again


def test_a_restarting_server_is_reconnected_from_the_checkpoint(tmp_path):
    server = started_server("MariaDB for the reconnect test")
    try:
        out = tmp_path / "out"
        with server.connect() as conn, conn.cursor() as cur:
            cur.execute("CREATE DATABASE r")
            cur.execute("CREATE TABLE r.t (id int PRIMARY KEY)")
        cap = MySqlCapture(CaptureOptions(connection(server), server_id=4242, out=out, snapshot="schema_only",
                                          include=("r.*",), progress=False, retry_for=60, retry_wait_max=1,
                                          heartbeat=0.5), on_warning=lambda w: None)
        thread = threading.Thread(target=cap.run)
        thread.start()
        try:
            def insert(ids):
                with server.connect() as conn, conn.cursor() as cur:
                    for i in ids:
                        cur.execute("INSERT INTO r.t VALUES (%s)", (i,))
                        conn.commit()

            def captured():
                return [e.after[0] for e in events(out) if e.op == "c"] if (out / "checkpoint.json").exists() else []

            deadline = time.monotonic() + 60  # the schema snapshot first: rows from then on are streamed
            while time.monotonic() < deadline and not (
                    (out / "checkpoint.json").exists() and checkpoint(out)["phase"] == "streaming"):
                time.sleep(0.1)
            insert(range(1, 51))
            deadline = time.monotonic() + 60
            while len(captured()) < 50 and time.monotonic() < deadline:
                time.sleep(0.2)
            with server.connect() as conn, conn.cursor() as cur:  # prepared across the restart
                for sql in ("XA START 'xr'", "INSERT INTO r.t VALUES (1000)", "XA END 'xr'", "XA PREPARE 'xr'"):
                    cur.execute(sql)
            insert(range(51, 61))
            server.restart(down_seconds=1.0)
            with server.connect() as conn, conn.cursor() as cur:
                cur.execute("XA COMMIT 'xr'")  # its row comes in commit order: after 60
            insert(range(61, 101))
            want = [*range(1, 61), 1000, *range(61, 101)]
            deadline = time.monotonic() + 90
            while captured() != want and time.monotonic() < deadline:
                time.sleep(0.3)
        finally:
            cap.stop()
            thread.join(60)
        assert not thread.is_alive()
        assert captured() == want                                   # nothing lost, nothing twice
        assert cap.stats.reconnects >= 1
        seqs = [e.seq for e in events(out)]
        assert seqs == list(range(1, len(seqs) + 1))
    finally:
        server.stop()


def test_reconnecting_gives_up_after_retry_for(tmp_path):
    server = started_server("MariaDB for the give-up test")
    out = tmp_path / "out"
    try:
        with server.connect() as conn, conn.cursor() as cur:
            cur.execute("CREATE DATABASE g")
        run_capture(server, out, snapshot="schema_only", include=("g.*",))
    finally:
        server.stop()
    t0 = time.monotonic()
    with pytest.raises(Exception) as info:
        run_capture(server, out, retry_for=3, retry_wait_max=0.5)
    assert time.monotonic() - t0 < 60
    assert "Can't connect" in str(info.value) or "connect" in str(info.value).lower()


def test_system_versioned_rows_carry_the_hidden_period_columns(mariadb, mariadb_db, tmp_path):
    db = mariadb_db.name
    out = tmp_path / "out"
    with mariadb.connect(db) as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE v (id int PRIMARY KEY, a varchar(5)) WITH SYSTEM VERSIONING")
        cur.execute("INSERT INTO v VALUES (1, 'x')")
        conn.commit()
        stats = run_capture(mariadb, out, snapshot="initial", include=(f"{db}.*",))
        cur.execute("SET SESSION system_versioning_alter_history = KEEP")
        cur.execute("ALTER TABLE v ADD COLUMN b int")
        cur.execute("UPDATE v SET a = 'y', b = 7 WHERE id = 1")
        conn.commit()
    stats2 = run_capture(mariadb, out)
    assert not stats.drift and not stats2.drift, [d.message for d in stats.drift + stats2.drift]
    with SchemaHistory.open(out / "history.sqlite") as h:
        t = h.table_at(f"{db}.v")
        assert [(c.name, c.invisible) for c in t.columns] == [
            ("id", False), ("a", False), ("b", False), ("row_start", True), ("row_end", True)]
    u = next(e for e in events(out) if e.op == "u" and e.table == "v")
    assert len(u.after) == 5 and u.after[:3] == [1, B(b"y"), 7]
    assert u.after[4] == {"$datetime": "2038-01-19 03:14:07.999999"}
