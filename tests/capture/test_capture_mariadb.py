"""End to end against a real MariaDB (FULL and MINIMAL ``binlog_row_metadata``): a snapshot,
then a resumed stream of row changes and DDL; every event and every raw value is checked."""

from __future__ import annotations

import re
import struct

import pytest

from ddlcore.history import SchemaHistory
from ddlcore.model import TableId

from .support import (BIG, DATE, DEC, DT, TIME, B, checkpoint, events, master_position, run_capture,
                      run_cli)

pytestmark = pytest.mark.mariadb


def f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


TYPES_DDL = """CREATE TABLE t_types (
  id int NOT NULL PRIMARY KEY,
  e enum('red','green','blue'), s set('a','b','c','d'),
  ti tinyint unsigned, si smallint unsigned, mi mediumint unsigned, i int unsigned,
  bi bigint unsigned, sbi bigint,
  lat varchar(20) CHARACTER SET latin1, txt text CHARACTER SET latin1,
  u8 varchar(20) CHARACTER SET utf8mb4, c char(5), bin binary(4), vb varbinary(8), bl blob,
  b1 bit(1), b10 bit(10),
  d date, dt datetime, dt3 datetime(3), ts timestamp(6) NULL DEFAULT NULL,
  tm time, tm2 time(2), y year,
  dc decimal(12,4), j json, f float, db double
)"""

ROW1_SQL = ("(%s, 'blue', 'a,d', 255, 65535, 16777215, 4294967295, 18446744073709551615, "
            "-9223372036854775808, 'café ñ', 'Grüße', '日本', 'ab', 'ab', X'00ff', X'deadbeef', "
            "b'1', b'1000000001', '0000-00-00', '0000-00-00 00:00:00', '2024-01-02 03:04:05.12', "
            "'2024-06-01 12:00:00.5', '-838:59:59', '838:59:59.99', 2155, -12345678.1234, "
            "'{\"k\": [1, \"x\"]}', 1.1, -2.25)")
ROW2_SQL = ("(2, 'red', '', 0, 0, 0, 0, 0, 9223372036854775807, '', '', '', '', '', '', '', "
            "b'0', b'0', '2024-02-30', '2024-00-00 10:11:12', '1000-01-01 00:00:00.001', "
            "'1970-01-01 00:00:01', '00:00:00', '-00:00:01.5', 0, 0, '[]', 0, 0)")


def row1(id_: int, *, snapshot: bool) -> list:
    return [id_, 3, 0b1001, 255, 65535, 16777215, 4294967295, BIG(2 ** 64 - 1), -(2 ** 63),
            B("café ñ".encode("cp1252")), B("Grüße".encode("cp1252")), B("日本".encode()), B(b"ab"),
            # BINARY(n): SELECT gives the 0x00 padding, the binlog strips it (Field_string::pack)
            B(b"ab\x00\x00" if snapshot else b"ab"), B(b"\x00\xff"), B(b"\xde\xad\xbe\xef"),
            B(b"\x01"), B(b"\x02\x01"),
            DATE("0000-00-00"), DT("0000-00-00 00:00:00"), DT("2024-01-02 03:04:05.120000"),
            DT("2024-06-01 12:00:00.500000"), TIME("-838:59:59"), TIME("838:59:59.990000"), 2155,
            DEC("-12345678.1234"), B(b'{"k": [1, "x"]}'), f32(1.1), -2.25]


def row2(*, snapshot: bool, **changes) -> list:
    row = [2, 1, 0, 0, 0, 0, 0, 0, 2 ** 63 - 1, B(b""), B(b""), B(b""), B(b""),
           B(b"\x00" * 4 if snapshot else b""), B(b""), B(b""), B(b"\x00"), B(b"\x00\x00"),
           DATE("2024-02-30"), DT("2024-00-00 10:11:12"), DT("1000-01-01 00:00:00.001000"),
           DT("1970-01-01 00:00:01"), TIME("00:00:00"), TIME("-00:00:01.500000"), 0,
           DEC("0.0000"), B(b"[]"), 0.0, 0.0]
    names = ["id", "e", "s", "ti", "si", "mi", "i", "bi", "sbi", "lat"]
    for k, v in changes.items():
        row[names.index(k)] = v
    return row


ROW3 = [3] + [None] * 28


def _session(server, db):
    conn = server.connect(db)
    with conn.cursor() as cur:
        cur.execute("SET SESSION sql_mode = 'ALLOW_INVALID_DATES'")
        cur.execute("SET SESSION time_zone = '+00:00'")
    return conn


def _setup_before_capture(server, db):
    conn = _session(server, db)
    with conn, conn.cursor() as cur:
        cur.execute(TYPES_DDL)
        cur.execute("INSERT INTO t_types VALUES " + ROW1_SQL % 1)
        cur.execute("INSERT INTO t_types VALUES " + ROW2_SQL)
        cur.execute("INSERT INTO t_types (id) VALUES (3)")
        cur.execute("CREATE TABLE t_alter (id int PRIMARY KEY, a int unsigned, e enum('x','y'), "
                    "name varchar(10) CHARACTER SET latin1)")
        cur.execute("INSERT INTO t_alter VALUES (1, 4294967295, 'y', 'né')")
        cur.execute("CREATE TABLE t_skip (id int PRIMARY KEY)")
        cur.execute("INSERT INTO t_skip VALUES (1)")


#: (statement, table the INSERT after it goes to, INSERT values, expected raw row)
ALTERS = [
    ("ALTER TABLE t_alter ADD COLUMN extra smallint unsigned DEFAULT 7 AFTER id",
     "t_alter", "(id, a, e, name) VALUES (2, 1, 'x', 'a')", [2, 7, 1, 1, B(b"a")]),
    ("ALTER TABLE t_alter DROP COLUMN a", "t_alter", "VALUES (3, 65535, 'y', 'b')", [3, 65535, 2, B(b"b")]),
    ("ALTER TABLE t_alter MODIFY extra bigint", "t_alter", "VALUES (4, -1, 'x', 'c')", [4, -1, 1, B(b"c")]),
    ("ALTER TABLE t_alter CHANGE COLUMN name label varchar(20) CHARACTER SET latin1", "t_alter",
     "VALUES (5, 0, 'y', 'é')", [5, 0, 2, B(b"\xe9")]),
    ("ALTER TABLE t_alter RENAME COLUMN label TO title", "t_alter", "VALUES (6, 1, 'x', 'z')", [6, 1, 1, B(b"z")]),
    ("ALTER TABLE t_alter MODIFY e enum('w','x','y','z')", "t_alter", "VALUES (7, 1, 'z', 'q')", [7, 1, 4, B(b"q")]),
    ("ALTER TABLE t_alter CONVERT TO CHARACTER SET utf8mb4", "t_alter", "VALUES (8, 1, 'w', 'é')",
     [8, 1, 1, B("é".encode())]),
    ("RENAME TABLE t_alter TO t_renamed", "t_renamed", "VALUES (9, 2, 'y', 'r')", [9, 2, 3, B(b"r")]),
    ("CREATE TABLE t_new (id int PRIMARY KEY, v varchar(5))", "t_new", "VALUES (1, 'v')", [1, B(b"v")]),
    ("ALTER TABLE t_skip ADD COLUMN note varchar(5)", "t_skip", "VALUES (2, 'n')", None),
]


def _workload(server, db):
    conn = _session(server, db)
    with conn, conn.cursor() as cur:
        cur.execute("INSERT INTO t_types VALUES " + ROW1_SQL % 4)
        cur.execute("UPDATE t_types SET e = 'green', s = '', lat = 'x' WHERE id = 2")
        cur.execute("DELETE FROM t_types WHERE id = 3")
        # one transaction of several statements: one XID, events in statement order
        cur.execute("BEGIN")
        cur.execute("INSERT INTO t_skip VALUES (5)")  # excluded: not captured
        cur.execute("UPDATE t_types SET ti = 1 WHERE id = 4")
        cur.execute("COMMIT")
        for ddl, table, values, _ in ALTERS:
            cur.execute(ddl)
            cur.execute(f"INSERT INTO {table} {values}")
        cur.execute("UPDATE t_renamed SET title = 'u' WHERE id = 9")


def _ddl_of(evs, db):
    return [e.ddl for e in evs if e.op == "ddl" and (e.database == db or f"`{db}`" in e.ddl)]


def test_snapshot_then_resumed_stream_gives_every_event_with_raw_values(capture_server, capture_db, tmp_path):
    server, db = capture_server, capture_db
    out = tmp_path / "out"
    _setup_before_capture(server, db)

    # -- run 1: the snapshot -----------------------------------------------------------------
    stats1 = run_capture(server, out, snapshot="initial", include=(f"{db}.*",), exclude=(f"{db}.t_skip",))
    evs = events(out)
    assert [e.seq for e in evs] == list(range(1, len(evs) + 1))
    cp = checkpoint(out)
    assert cp["seq"] == evs[-1].seq and cp["phase"] == "streaming"
    assert cp["changelog_bytes"] == (out / "changelog.jsonl").stat().st_size
    assert all(e.position == f"{cp['binlog_file']}:{cp['binlog_position']}" for e in evs)
    ddl = _ddl_of(evs, db)
    assert ddl[0].startswith(f"CREATE DATABASE `{db}`")
    assert [d.split("(")[0].strip() for d in ddl[1:]] == ["CREATE TABLE `t_alter`", "CREATE TABLE `t_types`"]
    rows = [(e.table, e.after) for e in evs if e.op == "r"]
    assert rows == [("t_alter", [1, 4294967295, 2, B("né".encode("cp1252"))]),
                    ("t_types", row1(1, snapshot=True)), ("t_types", row2(snapshot=True)),
                    ("t_types", ROW3)]
    assert stats1.snapshot_tables == 2 and stats1.snapshot_rows == 4
    assert stats1.drift == [], [d.message for d in stats1.drift]

    # -- run 2: changes after the snapshot, resumed from the checkpoint -------------------------
    _workload(server, db)
    stats2 = run_capture(server, out, snapshot="initial", include=(f"{db}.*",), exclude=(f"{db}.t_skip",))
    assert stats2.resumed_from == f"{cp['binlog_file']}:{cp['binlog_position']}"
    all_evs = events(out)
    assert all_evs[:len(evs)] == evs  # the first run's events are untouched
    assert [e.seq for e in all_evs] == list(range(1, len(all_evs) + 1))
    new = all_evs[len(evs):]
    got = [(e.op, e.table, e.ddl, e.before, e.after) for e in new]
    want = [
        ("c", "t_types", None, None, row1(4, snapshot=False)),
        ("u", "t_types", None, row2(snapshot=False), row2(snapshot=False, e=2, s=0, lat=B(b"x"))),
        ("d", "t_types", None, ROW3, None),
        ("u", "t_types", None, row1(4, snapshot=False), [4, 3, 9, 1] + row1(4, snapshot=False)[4:]),
    ]
    for stmt, table, _, raw in ALTERS:
        want.append(("ddl", None, stmt, None, None))
        if raw is not None:
            want.append(("c", table, None, None, raw))
    want.append(("u", "t_renamed", None, [9, 2, 3, B(b"r")], [9, 2, 3, B(b"u")]))
    assert got == want
    for e in new:
        assert re.fullmatch(r"mariadb-bin\.\d{6}:\d+", e.position)
        assert e.ts and e.ts % 1000 == 0
        assert e.database == db
    positions = [int(e.position.split(":")[1]) for e in new]
    assert positions == sorted(positions)
    cp2 = checkpoint(out)
    assert cp2["seq"] == all_evs[-1].seq
    assert cp2["changelog_bytes"] == (out / "changelog.jsonl").stat().st_size
    assert stats2.drift == [], [d.message for d in stats2.drift]
    assert stats2.ddl_failed == 0, stats2.warnings

    # -- the capture's own history followed every DDL -------------------------------------------
    with SchemaHistory.open(out / "history.sqlite") as h:
        t = h.table_at(TableId(db, None, "t_renamed"))
        assert [c.name for c in t.columns] == ["id", "extra", "e", "title"]
        assert t.column("e").enum_values == ("w", "x", "y", "z")
        assert t.column("title").character_set_name == "utf8mb4"
        assert h.table_at(TableId(db, None, "t_alter")) is None
        assert h.last_seq == all_evs[-1].seq - 1  # the last event is a row event

    # -- run 3: nothing new: nothing written, same checkpoint -------------------------------------
    stats3 = run_capture(server, out)
    assert stats3.events == 0  # nothing new: not even a source event (the server is unchanged)
    assert events(out) == all_evs


def test_cli_schema_only_then_stream(mariadb, mariadb_db, tmp_path):
    """``--snapshot schema_only`` writes DDL and no rows; the CLI reports JSON stats."""
    db = mariadb_db.name
    conn = mariadb_db.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE a (id int PRIMARY KEY, s set('p','q'))")
        cur.execute("INSERT INTO a VALUES (1, 'p,q')")
    out = tmp_path / "out"
    proc = run_cli(mariadb, out, "--snapshot", "schema_only", "--until-end", "--include", f"{db}.a", "--json")
    assert proc.returncode == 0, proc.stderr
    evs = events(out)
    assert {e.op for e in evs} == {"source", "ddl"} and evs[0].op == "source"
    assert any(e.op == "ddl" and e.ddl.startswith("CREATE TABLE `a`") and e.snapshot for e in evs)
    with conn.cursor() as cur:
        cur.execute("INSERT INTO a VALUES (2, '')")
    proc = run_cli(mariadb, out, "--until-end", "--json")
    assert proc.returncode == 0, proc.stderr
    assert '"c": 1' in proc.stdout
    last = events(out)[-1]
    assert (last.op, last.table, last.after) == ("c", "a", [2, 0])


def test_snapshot_never_without_start_begins_at_the_current_end(mariadb, mariadb_db, tmp_path):
    conn = mariadb_db.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE n (id int PRIMARY KEY)")
        cur.execute("INSERT INTO n VALUES (1)")
    out = tmp_path / "out"
    assert run_capture(mariadb, out, snapshot="never", include=(f"{mariadb_db.name}.*",)).ops == {"source": 1}
    with conn.cursor() as cur:
        cur.execute("INSERT INTO n VALUES (2)")
    stats = run_capture(mariadb, out)
    assert [(e.op, e.after) for e in events(out)] == [("source", None), ("c", [2])]
    # the history never saw CREATE TABLE n: a drift warning says so (FULL server)
    assert [d.what for d in stats.drift] == ["table"]


def test_refuses_a_directory_that_is_not_a_capture(mariadb, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "changelog.jsonl").write_text('{"seq": 1}\n')
    proc = run_cli(mariadb, out, "--until-end")
    assert proc.returncode == 1
    assert "refusing to overwrite" in proc.stderr


def test_a_second_capture_on_the_same_directory_is_refused(mariadb, tmp_path):
    from ddlcore.capture import DirectoryLock
    from ddlcore_mysql.capture import CaptureError

    out = tmp_path / "out"
    out.mkdir()
    with DirectoryLock(out / "capture.lock"):
        with pytest.raises(CaptureError, match="another capture is running"):
            run_capture(mariadb, out, snapshot="never")
    assert run_capture(mariadb, out, snapshot="never").ops == {"source": 1}


def test_compressed_row_events_stop_the_capture_instead_of_being_dropped(mariadb_minimal, tmp_path):
    """MariaDB ``log_bin_compress``: the replication library cannot read compressed events;
    the capture must fail at them, keeping the checkpoint before them, not skip them."""
    server = mariadb_minimal
    with server.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS zc")
        cur.execute("CREATE TABLE IF NOT EXISTS zc.t (id int PRIMARY KEY, v text)")
        out = tmp_path / "out"
        assert run_capture(server, out, snapshot="never", include=("zc.*",)).ops == {"source": 1}
        cur.execute("INSERT INTO zc.t VALUES (1, 'plain')")
        before = master_position(server)
        try:
            cur.execute("SET GLOBAL log_bin_compress = ON")
            with server.connect() as c2, c2.cursor() as cur2:  # a new session sees the setting
                cur2.execute("INSERT INTO zc.t VALUES (2, %s)", ("x" * 2000,))
        finally:
            cur.execute("SET GLOBAL log_bin_compress = OFF")
            cur.execute("DROP DATABASE zc")
    proc = run_cli(server, out, "--until-end")
    assert proc.returncode == 1
    assert "log_bin_compress" in proc.stderr
    assert [(e.op, e.after) for e in events(out) if e.op != "source"] == [("c", [1, {"$b64": "cGxhaW4="}])]
    file, pos = before.split(":")
    cp = checkpoint(out)
    assert (cp["binlog_file"], cp["binlog_position"]) <= (file, int(pos))


def test_generated_invisible_and_versioning_columns_match_the_binlog_image(mariadb, mariadb_db, tmp_path):
    """A snapshot row has the columns a binlog row image has: VIRTUAL and PERSISTENT generated
    columns, INVISIBLE columns, and MariaDB's implicit ROW_START / ROW_END."""
    conn = mariadb_db.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE g (id int PRIMARY KEY, a int, v int AS (a * 2) VIRTUAL, "
                    "p int AS (a * 3) PERSISTENT, h int INVISIBLE DEFAULT 5)")
        cur.execute("INSERT INTO g (id, a) VALUES (1, 10)")
        cur.execute("CREATE TABLE sv (id int PRIMARY KEY, a int) WITH SYSTEM VERSIONING")
        cur.execute("INSERT INTO sv VALUES (1, 1)")
    out = tmp_path / "out"
    run_capture(mariadb, out, include=(f"{mariadb_db.name}.*",))
    with conn.cursor() as cur:
        cur.execute("INSERT INTO g (id, a) VALUES (2, 20)")
        cur.execute("DELETE FROM sv")
    run_capture(mariadb, out)
    rows = {(e.op, e.table): (e.before or e.after) for e in events(out) if e.op != "ddl"}
    assert rows[("r", "g")] == [1, 10, 20, 30, 5] and rows[("c", "g")] == [2, 20, 40, 60, 5]
    assert len(rows[("r", "sv")]) == len(rows[("u", "sv")]) == 4  # DELETE of a versioned row is an UPDATE of row_end
    assert rows[("r", "sv")][:3] == rows[("u", "sv")][:3]
