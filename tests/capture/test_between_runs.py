"""What happens to the binlog between and around capture runs (issue 30, "Also to try"): a
binlog rotation (``FLUSH LOGS``) while a transaction — and an XA transaction — is open, and a
table created, filled and dropped while no capture runs.  The change log holds exactly what
the server committed, in commit order, or the capture stops with a reason."""

from __future__ import annotations

import pytest

from ddlcore.history import SchemaHistory
from ddlcore.model import TableId

from .support import B, checkpoint, end_xa, events, master_position, run_capture

pytestmark = pytest.mark.mariadb


def _rows(out) -> list[tuple[str, str, list]]:
    return [(e.op, e.table, e.after or e.before) for e in events(out) if e.op in ("c", "u", "d")]


def test_flush_logs_while_transactions_are_open(mariadb, mariadb_db, tmp_path):
    """A transaction open across ``FLUSH LOGS`` (run by another session: in the session itself
    it would commit first) is logged whole in the new file at its commit; an XA transaction
    prepared in one file and committed in the next is written once, at its commit."""
    db = mariadb_db.name
    start = master_position(mariadb)
    with mariadb.connect(db) as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE t (id int PRIMARY KEY, v varchar(20))")
    out = tmp_path / "cap"
    a, b, admin = mariadb.connect(db), mariadb.connect(db), mariadb.connect()
    try:
        with a.cursor() as ca, b.cursor() as cb, admin.cursor() as cadm:
            ca.execute("BEGIN")
            ca.execute("INSERT INTO t VALUES (1, 'before flush')")
            for sql in ("XA START 'xf'", "INSERT INTO t VALUES (2, 'xa')", "XA END 'xf'", "XA PREPARE 'xf'"):
                cb.execute(sql)
            run_capture(mariadb, out, snapshot="never", start=start)
            first_file = checkpoint(out)["binlog_file"]
            cadm.execute("FLUSH LOGS")
            ca.execute("INSERT INTO t VALUES (3, 'after flush')")
            ca.execute("COMMIT")
        b.close()
        with admin.cursor() as cadm:
            end_xa(cadm, "XA COMMIT 'xf'")
            cadm.execute(f"INSERT INTO `{db}`.t VALUES (4, 'last')")
    finally:
        for conn in (a, b, admin):
            if conn.open:
                conn.close()
    run_capture(mariadb, out, snapshot="never", start=start)
    assert _rows(out) == [("c", "t", [1, B(b"before flush")]), ("c", "t", [3, B(b"after flush")]),
                          ("c", "t", [2, B(b"xa")]), ("c", "t", [4, B(b"last")])]
    assert checkpoint(out)["binlog_file"] != first_file and checkpoint(out)["xa_prepared"] == {}
    seqs = [e.seq for e in events(out)]
    assert seqs == list(range(1, len(seqs) + 1))


def test_a_table_created_and_dropped_between_two_runs(mariadb, mariadb_db, tmp_path):
    """The second run reads the CREATE, the rows and the DROP from the binlog: the rows are
    written (no drift: the history has the table at their seq), the history ends without it."""
    db = mariadb_db.name
    out = tmp_path / "cap"
    with mariadb.connect(db) as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE keep (id int PRIMARY KEY)")
    run_capture(mariadb, out, snapshot="schema_only", include=(f"{db}.*",))
    with mariadb.connect(db) as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE brief (id int PRIMARY KEY, v varchar(10))")
        cur.execute("INSERT INTO brief VALUES (1, 'a'), (2, 'b')")
        cur.execute("UPDATE brief SET v = 'c' WHERE id = 2")
        cur.execute("DROP TABLE brief")
        cur.execute("INSERT INTO keep VALUES (7)")
    stats = run_capture(mariadb, out, snapshot="schema_only", include=(f"{db}.*",))
    assert not stats.drift and stats.ddl_failed == 0, stats.to_json()
    evs = events(out)
    assert _rows(out) == [("c", "brief", [1, B(b"a")]), ("c", "brief", [2, B(b"b")]),
                          ("u", "brief", [2, B(b"c")]), ("c", "keep", [7])]
    assert not [e for e in evs if e.quarantine]
    ddl = [e for e in evs if e.op == "ddl" and "brief" in (e.ddl or "")]
    assert [e.ddl.split()[0].upper() for e in ddl] == ["CREATE", "DROP"]
    rows = [e for e in evs if e.table == "brief"]
    assert ddl[0].seq < min(e.seq for e in rows) and max(e.seq for e in rows) < ddl[1].seq
    with SchemaHistory.open(out / "history.sqlite") as history:
        tid = TableId(db, None, "brief")
        assert history.table_at(tid, rows[0].seq) is not None
        assert history.table_at(tid, ddl[1].seq) is None
