"""Issue 11 end to end against a real MariaDB 10.11 with ``lower_case_table_names=1``: per-session
``binlog_row_image=MINIMAL`` updates, a DDL run with ``sql_log_bin=0`` and then a resync, a
system-versioned table.  Capture (snapshot, stream, resync) → ``ddlcore run`` → Parquet, and
every row of the output equals what the server returned to ``SELECT`` right after the change —
on every column the row image carries; the columns it does not carry are listed in ``_absent``,
never passed off as NULL — and nothing is quarantined that could be interpreted (the rows read
while the schema was unknown are quarantined, then converted by ``--replay-quarantine``)."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import pytest

pytestmark = pytest.mark.mariadb

pytest.importorskip("pymysqlreplication")

from ddlcore.spark.pipeline import run_pipeline  # noqa: E402
from ddlcore_mysql.capture import CaptureOptions, ConnectionSettings, MySqlCapture  # noqa: E402

from tests.servers.fixtures import started_server  # noqa: E402

UTC = dt.timezone.utc


def capture(server, out: Path, **kw) -> None:
    warnings: list[str] = []
    MySqlCapture(CaptureOptions(ConnectionSettings(socket=server.socket, user=server.user, password=server.password),
                                server_id=4242, out=out, until_end=True, progress=False,
                                include=("shop.*",), **kw), on_warning=warnings.append).run()
    return warnings


def select(cur, sql: str) -> dict:
    cur.execute(sql)
    names = [d[0].lower() for d in cur.description]
    row = cur.fetchone()
    return None if row is None else dict(zip(names, row))


def test_session_settings_lost_ddl_and_versioned_tables_end_to_end(spark, tmp_path):
    server = started_server("MariaDB with lower_case_table_names=1", options={"lower_case_table_names": 1})
    cap = tmp_path / "capture"
    expected: list[tuple[str, str, int, dict | None, set[str]]] = []   # (table, op, id, row, absent)
    try:
        conn = server.connect()
        cur = conn.cursor()
        cur.execute("SET SESSION time_zone = '+00:00'")
        cur.execute("CREATE DATABASE Shop")
        cur.execute("CREATE TABLE Shop.Items (id int PRIMARY KEY, name varchar(20), qty int NOT NULL, note text)")
        cur.execute("CREATE TABLE Shop.Prices (id int PRIMARY KEY, amount decimal(8,2)) WITH SYSTEM VERSIONING")
        cur.execute("INSERT INTO Shop.Items VALUES (1, 'apple', 5, 'red'), (2, 'pear', 3, NULL)")
        cur.execute("INSERT INTO Shop.Prices VALUES (1, 1.50)")
        conn.commit()
        capture(server, cap, snapshot="initial")

        def items(i):
            return select(cur, f"SELECT * FROM shop.items WHERE id = {i}")

        def prices(i):
            return select(cur, f"SELECT id, amount, ROW_START AS row_start, ROW_END AS row_end "
                               f"FROM shop.prices WHERE id = {i}")

        cur.execute("INSERT INTO SHOP.ITEMS VALUES (3, 'plum', 7, 'blue')")   # the server's case rules
        conn.commit()
        expected.append(("items", "c", 3, items(3), set()))
        # a session writing minimal row images: the before image holds the key only, the
        # after image the changed column only
        cur.execute("SET SESSION binlog_row_image = 'MINIMAL'")
        cur.execute("UPDATE shop.items SET qty = qty + 10 WHERE id = 1")
        conn.commit()
        expected.append(("items", "u", 1, items(1), {"id", "name", "note"}))
        cur.execute("DELETE FROM shop.items WHERE id = 2")
        conn.commit()
        expected.append(("items", "d", 2, None, {"name", "qty", "note"}))
        cur.execute("SET SESSION binlog_row_image = 'FULL'")
        cur.execute("UPDATE shop.prices SET amount = 1.75 WHERE id = 1")
        conn.commit()
        expected.append(("prices", "u", 1, prices(1), set()))
        # DDL the binlog never sees, then rows written with it
        cur.execute("SET SESSION sql_log_bin = 0")
        cur.execute("ALTER TABLE shop.items ADD COLUMN color varchar(10)")
        cur.execute("SET SESSION sql_log_bin = 1")
        cur.execute("INSERT INTO shop.items VALUES (4, 'kiwi', 1, NULL, 'green')")
        conn.commit()
        expected.append(("items", "c", 4, items(4), set()))
        warnings = capture(server, cap)
        assert any("drift" in w for w in warnings), warnings
        # the way back: resync the table, then go on
        capture(server, cap, resync=("shop.items",))
        cur.execute("UPDATE shop.items SET color = 'gold' WHERE id = 3")
        conn.commit()
        expected.append(("items", "u", 3, items(3), set()))
        capture(server, cap)
        conn.close()
    finally:
        server.stop()

    out = tmp_path / "out"
    first = run_pipeline(cap, out, spark=spark)
    # the row read while the history did not know `color` is quarantined, with the reason
    assert set(first.quarantine_reasons) == {"capture"}, first.quarantine_reasons
    assert first.quarantined == 1
    second = run_pipeline(cap, out, spark=spark, replay_quarantine=True)
    assert second.replayed == 1 and second.quarantined == 0
    records = [line for f in (out / "_quarantine").glob("*.json") for line in f.read_text().splitlines() if line.strip()]
    assert records == []

    rows = {}
    for table in ("items", "prices"):
        for vdir in sorted((out / "shop").glob(f"{table}/schema_version=*")) or sorted(
                (out / "Shop").glob(f"*/schema_version=*")):
            for r in spark.read.parquet(str(vdir)).collect():
                rows.setdefault(table, []).append(r.asDict(recursive=True))
    assert set(rows) == {"items", "prices"}, sorted(p.as_posix() for p in out.rglob("schema_version=*"))
    for table, op, key, row, absent in expected:
        got = [r for r in rows[table] if r["_op"] == op and (r["id"] == key or (op == "u" and r["_before"]["id"] == key))]
        assert len(got) == 1, (table, op, key, got)
        r = got[0]
        assert set(r["_absent"] or ()) == absent, (table, op, key, r["_absent"])
        if op == "d":
            assert r["id"] == key and all(r[c] is None for c in absent)
            continue
        for name, want in row.items():
            if name in absent:
                assert r[name] is None, f"{table} {op} {key}: absent {name} is not null"
                continue
            have = r[name]
            if isinstance(have, dt.datetime) and isinstance(want, dt.datetime):
                have, want = have.astimezone(UTC), want.replace(tzinfo=UTC)
            if isinstance(want, decimal.Decimal):
                want = decimal.Decimal(want)
            assert have == want, f"{table} {op} id={key} {name}: got {have!r}, the server said {want!r}"
    # the minimal update's before image: the key, and the rest absent
    upd = next(r for r in rows["items"] if r["_op"] == "u" and r["_before"]["id"] == 1)
    assert set(upd["_before_absent"]) == {"name", "qty", "note"}
    # the snapshot rows of the versioned table carry row_start / row_end too
    snap = next(r for r in rows["prices"] if r["_op"] == "r")
    assert snap["amount"] == decimal.Decimal("1.50") and snap["row_end"] is not None
