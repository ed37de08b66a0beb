"""Drift: the binlog's TABLE_MAP metadata against the capture's schema history."""

from __future__ import annotations

import pytest

from ddlcore.model import Column, Table, TableId
from ddlcore_mysql import binlog_values as bt
from ddlcore_mysql.capture import _ddl_between, _master_position
from ddlcore_mysql.drift import BinlogColumn, compare_table

from .support import events, master_position, run_capture


def _hidden_alter(server, db: str, sql: str) -> None:
    """Run DDL that the binlog does not see (``sql_log_bin = 0``): afterwards the history
    built from the binlog's DDL describes the table wrongly."""
    with server.connect(db) as conn, conn.cursor() as cur:
        cur.execute("SET SESSION sql_log_bin = 0")
        cur.execute(sql)


@pytest.mark.mariadb
def test_wrong_history_gives_drift_warnings_naming_the_columns(capture_server, capture_db, tmp_path):
    server, db = capture_server, capture_db
    start = master_position(server)
    with server.connect(db) as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE dr (id int PRIMARY KEY, a int unsigned, e enum('x','y'), "
                    "s varchar(10) CHARACTER SET latin1, ok int)")
    _hidden_alter(server, db, "ALTER TABLE dr MODIFY a bigint, MODIFY e enum('x','y','z'), "
                              "MODIFY s varchar(10) CHARACTER SET utf8mb4")
    with server.connect(db) as conn, conn.cursor() as cur:
        cur.execute("INSERT INTO dr VALUES (1, -5, 'z', 'é', 0)")
        cur.execute("INSERT INTO dr VALUES (2, 5, 'x', 'a', 1)")
    out = tmp_path / "out"
    stats = run_capture(server, out, snapshot="never", start=start, include=(f"{db}.*",))
    # the rows are captured as the binlog has them, whatever the history says
    assert [e.after for e in events(out) if e.op == "c"] == [
        [1, -5, 3, {"$b64": "w6k="}, 0], [2, 5, 1, {"$b64": "YQ=="}, 1]]
    found = {(d.table, d.column, d.what) for d in stats.drift}
    expected = {(f"{db}.dr", "a", "type"), (f"{db}.dr", "s", "charset"), (f"{db}.dr", "s", "length")}
    if server.binlog_row_metadata == "FULL":
        expected.add((f"{db}.dr", "e", "enum_values"))  # labels travel with FULL metadata only
    assert found == expected, [d.message for d in stats.drift]
    msg = next(d.message for d in stats.drift if d.column == "a")
    assert "LONGLONG" in msg and "a int(10) unsigned" in msg and f"{db}.dr" in msg
    log = (out / "capture.log").read_text()
    assert "schema drift" in log and "column a" in log
    # warned once, not for every row event
    assert len(stats.drift) == len(found)


@pytest.mark.mariadb
def test_no_history_table_is_drift(mariadb, mariadb_db, tmp_path):
    conn = mariadb_db.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE early (id int PRIMARY KEY)")
    start = master_position(mariadb)
    with conn.cursor() as cur:
        cur.execute("INSERT INTO early VALUES (1)")
    stats = run_capture(mariadb, tmp_path / "out", snapshot="never", start=start)
    assert [(d.table, d.what) for d in stats.drift] == [(f"{mariadb_db.name}.early", "table")]


def test_compare_table_reports_column_count_and_names():
    table = Table(TableId("d", None, "t"), (
        Column("id", 1, "int", "int(11)"),
        Column("e", 2, "enum", "enum('a','b')", enum_values=("a", "b"), character_set_name="utf8mb4"),
    ))
    same = [BinlogColumn(1, bt.LONG, "id", False), BinlogColumn(2, bt.ENUM, "e", None, "utf8mb4", ("a", "b"), size=1)]
    assert compare_table(same, table, table_name="d.t", seq=3, position="f:1") == []
    renamed = [same[0], BinlogColumn(2, bt.ENUM, "kind", None, "utf8mb4", ("a", "b"), size=1)]
    [w] = compare_table(renamed, table, table_name="d.t", seq=3, position="f:1")
    assert (w.column, w.what) == ("e", "name") and "kind ENUM" in w.binlog and "e enum('a','b')" in w.history
    [w] = compare_table(same[:1], table, table_name="d.t", seq=3, position="f:1")
    assert w.what == "columns" and w.column is None


@pytest.mark.mariadb
def test_ddl_between_positions_is_found_in_the_binlog(mariadb, mariadb_db):
    """The snapshot's check for DDL that slipped in between its position and its locks."""
    conn = mariadb_db.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE x (id int)")
        p0 = _master_position(cur)
        cur.execute("INSERT INTO x VALUES (1)")
        p1 = _master_position(cur)
        assert _ddl_between(cur, p0, p1) is None
        cur.execute("ALTER TABLE x ADD COLUMN y int")
        p2 = _master_position(cur)
        assert _ddl_between(cur, p0, p2) == "ALTER TABLE x ADD COLUMN y int"
        assert _ddl_between(cur, p2, p2) is None
