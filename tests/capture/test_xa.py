"""XA transactions in a MariaDB binlog: rows reach the change log only when ``XA COMMIT`` is
read; a transaction rolled back after ``XA PREPARE`` leaves nothing; a prepared transaction
survives a capture restart between its PREPARE and its COMMIT (written exactly once)."""

from __future__ import annotations

import pytest

from ddlcore_mysql.capture import CaptureError

from .support import B, checkpoint, end_xa, events, master_position, run_capture

pytestmark = pytest.mark.mariadb


def _rows(out) -> list[tuple[str, list]]:
    return [(e.op, e.after) for e in events(out) if e.op in ("c", "u", "d")]


def _xa(cur, xid: str, *statements: str, end: str = "PREPARE") -> None:
    cur.execute(f"XA START '{xid}'")
    for s in statements:
        cur.execute(s)
    cur.execute(f"XA END '{xid}'")
    cur.execute(f"XA COMMIT '{xid}' ONE PHASE" if end == "ONE PHASE" else f"XA {end} '{xid}'")


@pytest.fixture
def xa_cleanup(mariadb, mariadb_db):
    """Connections the test opens (``open(db)``), closed afterwards, and every XA transaction
    a failing test left prepared rolled back — before the database is dropped (a prepared
    transaction's locks would hold the drop forever)."""
    opened = []

    def open_(db):
        opened.append(mariadb.connect(db))
        return opened[-1]

    yield open_
    for conn in opened:
        if conn.open:
            conn.close()
    with mariadb.connect() as conn, conn.cursor() as cur:
        cur.execute("XA RECOVER")
        for fmt, glen, blen, data in cur.fetchall():
            data = data if isinstance(data, bytes) else data.encode()
            end_xa(cur, f"XA ROLLBACK X'{data[:glen].hex()}',X'{data[glen:glen + blen].hex()}',{fmt}")


def _setup(mariadb, mariadb_db) -> tuple[str, str]:
    start = master_position(mariadb)
    with mariadb_db.connect().cursor() as cur:
        cur.execute("CREATE TABLE t (id int PRIMARY KEY, v varchar(40))")
    return mariadb_db.name, start


def test_an_xa_transaction_rolled_back_after_prepare_leaves_nothing(mariadb, mariadb_db, xa_cleanup, tmp_path):
    db, start = _setup(mariadb, mariadb_db)
    with xa_cleanup(db) as conn, conn.cursor() as cur:
        _xa(cur, "x1", "INSERT INTO t VALUES (100, 'xa-rolled-back')")
        cur.execute("XA ROLLBACK 'x1'")
        cur.execute("INSERT INTO t VALUES (1, 'plain')")
    out = tmp_path / "cap"
    stats = run_capture(mariadb, out, snapshot="never", start=start)
    assert _rows(out) == [("c", [1, B(b"plain")])]
    assert stats.ops["c"] == 1
    assert checkpoint(out)["xa_prepared"] == {}


def test_a_prepared_transaction_committed_after_a_capture_restart_is_written_once(mariadb, mariadb_db, xa_cleanup,
                                                                                   tmp_path):
    db, start = _setup(mariadb, mariadb_db)
    out = tmp_path / "cap"
    prep = xa_cleanup(db)
    with prep.cursor() as cur:
        _xa(cur, "x2", "INSERT INTO t VALUES (200, 'xa-a'), (201, 'xa-b')", "UPDATE t SET v = 'xa-c' WHERE id = 201")
    with xa_cleanup(db) as conn, conn.cursor() as cur:
        cur.execute("INSERT INTO t VALUES (2, 'between')")  # a normal transaction after the PREPARE
    run_capture(mariadb, out, snapshot="never", start=start)
    assert _rows(out) == [("c", [2, B(b"between")])]  # prepared, not committed: not in the log yet
    held = checkpoint(out)["xa_prepared"]
    assert list(held) == ["X'7832',X'',1"]
    assert (out / "xa-prepared" / held["X'7832',X'',1"]).exists()
    prep.close()  # the prepared transaction outlives its session; another one commits it
    with xa_cleanup(db) as conn, conn.cursor() as cur:
        end_xa(cur, "XA COMMIT 'x2'")
        cur.execute("INSERT INTO t VALUES (3, 'after')")
    run_capture(mariadb, out, snapshot="never", start=start)
    run_capture(mariadb, out, snapshot="never", start=start)  # nothing new: nothing repeated
    assert _rows(out) == [("c", [2, B(b"between")]), ("c", [200, B(b"xa-a")]), ("c", [201, B(b"xa-b")]),
                          ("u", [201, B(b"xa-c")]), ("c", [3, B(b"after")])]
    assert checkpoint(out)["xa_prepared"] == {}
    assert list((out / "xa-prepared").iterdir()) == []
    seqs = [e.seq for e in events(out)]
    assert seqs == list(range(1, len(seqs) + 1))


def test_interleaved_xa_and_one_phase_transactions(mariadb, mariadb_db, xa_cleanup, tmp_path):
    """Two prepared transactions committed in the other order, one rolled back, one committed
    in ONE PHASE, plain transactions between them: the log holds the committed rows in commit
    order."""
    db, start = _setup(mariadb, mariadb_db)
    a, b, c, d = (xa_cleanup(db) for _ in range(4))
    with a.cursor() as ca, b.cursor() as cb, c.cursor() as cc, d.cursor() as cd:
        _xa(ca, "xa", "INSERT INTO t VALUES (10, 'a')")
        _xa(cb, "xb", "INSERT INTO t VALUES (20, 'b')")
        cc.execute("INSERT INTO t VALUES (30, 'plain')")
        _xa(cd, "xc", "INSERT INTO t VALUES (40, 'rolled back')")
        _xa(cc, "x", "INSERT INTO t VALUES (50, 'one phase')", end="ONE PHASE")
    for conn in (a, b, d):
        conn.close()
    with c.cursor() as cc:
        end_xa(cc, "XA ROLLBACK 'xc'")
        end_xa(cc, "XA COMMIT 'xb'")
        cc.execute("INSERT INTO t VALUES (60, 'plain')")
        end_xa(cc, "XA COMMIT 'xa'")
    c.close()
    out = tmp_path / "cap"
    run_capture(mariadb, out, snapshot="never", start=start)
    assert _rows(out) == [("c", [30, B(b"plain")]), ("c", [50, B(b"one phase")]), ("c", [20, B(b"b")]),
                          ("c", [60, B(b"plain")]), ("c", [10, B(b"a")])]
    assert checkpoint(out)["xa_prepared"] == {}


def test_a_commit_whose_prepare_the_capture_did_not_read_stops_it(mariadb, mariadb_db, xa_cleanup, tmp_path):
    db, _ = _setup(mariadb, mariadb_db)
    with xa_cleanup(db) as conn, conn.cursor() as cur:
        _xa(cur, "xlost", "INSERT INTO t VALUES (7, 'lost')")
    start = master_position(mariadb)  # after the PREPARE: its rows are before the start
    with xa_cleanup(db) as conn, conn.cursor() as cur:
        cur.execute("XA COMMIT 'xlost'")
    with pytest.raises(CaptureError, match=r"XA COMMIT X'786c6f7374',X'',1 at .*XA PREPARE was not read"):
        run_capture(mariadb, tmp_path / "cap", snapshot="never", start=start)


@pytest.mark.parametrize("text, verb, xid, one_phase", [
    ("XA COMMIT X'7831',X'',1", "COMMIT", "X'7831',X'',1", False),
    ("xa rollback X'6162',X'63',7", "ROLLBACK", "X'6162',X'63',7", False),
    ("XA COMMIT 'ab' ONE PHASE", "COMMIT", "X'6162',X'',1", True),
    ("XA BEGIN 'a', 'b'", "START", "X'61',X'62',1", False),
])
def test_xa_statements_are_read_with_the_xid_the_server_logs(text, verb, xid, one_phase):
    from ddlcore_mysql.xa import XaStatement, parse_xa_statement

    assert parse_xa_statement(text) == XaStatement(verb, xid, one_phase)
    assert parse_xa_statement("XA RECOVER") is None


def test_mysql8_xa_event_sequences_without_a_server(tmp_path):
    """MySQL 8 logs ``XA START`` as a query event and ``XA COMMIT … ONE PHASE`` as an
    ``XA_prepare`` event with ``one_phase`` set (MySQL 8.0 manual 13.3.8; no MySQL 8 server
    here): the capture's handlers fed those sequences, built by hand, write a two-phase
    transaction at its XA COMMIT, a one-phase one at once, a rolled-back one never."""
    from types import SimpleNamespace as NS

    from ddlcore_mysql.capture import (CaptureFilter, CaptureOptions, Checkpoint, ConnectionSettings,
                                       MySqlCapture)

    out = tmp_path / "o"
    out.mkdir()
    cap = MySqlCapture(CaptureOptions(ConnectionSettings(), server_id=1, out=out, progress=False))
    cap.filter = CaptureFilter()
    cap._log.start(Checkpoint(0, "binlog.000001", 4, 0))
    pos = iter(range(100, 10_000, 100))

    def query(text):
        return cap._on_query(NS(query=text), "binlog.000001", next(pos), True)

    def transaction(xid, row, one_phase=False):
        cap._tx = f"3e11fa47-71ca-11e1-9e33-c80aa9429562:{row}"  # the GTID event
        assert query(f"XA START X'{xid.encode().hex()}',X'',1")
        cap._on_rows(NS(schema="s", table="t", table_id=70, timestamp=1, rows=[{"values": {"id": row}}]), "c",
                     f"binlog.000001:{next(pos)}")
        query(f"XA END X'{xid.encode().hex()}',X'',1")
        cap._on_xa_prepare(NS(one_phase=one_phase, xid_format_id=1, xid_gtrid=xid.encode(), xid_bqual=b""),
                           "binlog.000001", next(pos))

    def written():
        cap._log.sync()
        return [e.after[0] for e in events(out) if e.op == "c"]

    transaction("m1", 1)
    transaction("m2", 2, one_phase=True)
    transaction("m3", 3)
    assert written() == [2]
    assert not query("XA ROLLBACK X'6d33',X'',1") and not query("XA COMMIT X'6d31',X'',1")
    assert written() == [2, 1]
    assert [e.tx for e in events(out)] == ["3e11fa47-71ca-11e1-9e33-c80aa9429562:2",
                                           "3e11fa47-71ca-11e1-9e33-c80aa9429562:1"]
    cap._log.finish()
    assert checkpoint(out)["xa_prepared"] == {}


def test_a_first_run_refuses_while_xa_transactions_are_prepared(mariadb, mariadb_db, xa_cleanup, tmp_path):
    """Prepared now, its rows are before the snapshot's position and invisible to it: a later
    XA COMMIT could not be captured, so the first run stops before writing anything."""
    db, _ = _setup(mariadb, mariadb_db)
    with xa_cleanup(db).cursor() as cur:
        _xa(cur, "xsnap", "INSERT INTO t VALUES (9, 'prepared')")
    out = tmp_path / "cap"
    with pytest.raises(CaptureError, match=r"XA transactions are prepared on the server \(.*X'78736e6170',X'',1"):
        run_capture(mariadb, out, snapshot="initial", include=(f"{db}.*",))
    assert not (out / "checkpoint.json").exists()
