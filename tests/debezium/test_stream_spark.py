"""Spark end to end on the streams of other CDC tools (issue 28, "How it is verified").

* canal-json: a real MariaDB 10.11 workload (an ``ALTER`` between rows, a ``TIMESTAMP`` in a
  session zone that is not UTC) recording ``SELECT *`` and ``information_schema`` after every
  statement; ``ddlcore capture mysql`` of it re-encoded as Canal flat messages
  (canal_encoder.py); ``ddlcore capture canal`` then ``run_pipeline``: every output row equals
  what ``SELECT`` returned at that moment with that moment's Spark types (the oracle of
  tests/e2e/test_shop_end_to_end.py), and ``run_pipeline`` on the own capture gives the same
  tables.
* Debezium PostgreSQL messages with the event trigger's DDL messages: a real PostgreSQL 15
  workload recording the server's text after every statement; its WAL as Debezium messages
  (test_debezium_postgres.py's encoder); ``ddlcore capture debezium`` then ``run_pipeline``: every
  row equals the server's text of that moment, typed by that moment's schema (the oracle of
  tests/pg_capture/test_end_to_end.py), and ``ddlcore capture postgres`` of the same workload
  gives the same tables.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ddlcore.debezium_capture import DebeziumCapture, DebeziumCaptureOptions

from tests.pg_capture.conftest import capdb  # noqa: F401
from tests.servers.fixtures import mariadb, postgres  # noqa: F401

from .canal_encoder import canal_messages
from .workload import capture_workload

pytest.importorskip("pymysqlreplication")
from tests.e2e.test_shop_end_to_end import W, check_common, check_row  # noqa: E402

TABLE = ("CREATE TABLE m (id int PRIMARY KEY, ub bigint unsigned, d decimal(20,4), vc varchar(20), "
         "e enum('a','b','c'), s set('x','y','z'), b1 bit(1), dt date, dtm datetime(6), "
         "ts timestamp(6) NULL DEFAULT NULL, tm time(3))")
#: ``(statement, op, keys)``; the session's zone is the shop workload's (not UTC)
STATEMENTS: list[tuple[str, str | None, tuple]] = [
    (f"SET time_zone = '{W.TIME_ZONE}'", None, ()),
    ("INSERT INTO m VALUES (1, 18446744073709551615, -1234567890123456.7891, 'ünï', 'b', 'x,z', b'1', '1000-01-01', "
     "'9999-12-31 23:59:59.999999', '2038-01-19 03:14:07.123456', '-838:59:59.000'), "
     "(2, 0, 0.0001, '', 'a', '', b'0', '2024-02-29', '1970-01-01 00:00:00.000001', NULL, '00:00:00')", "c", (1, 2)),
    ("UPDATE m SET vc = 'changed', e = 'c', s = 'y', ts = '1999-12-31 23:59:59' WHERE id = 1", "u", (1,)),
    ("ALTER TABLE m ADD COLUMN extra int AFTER vc", None, ()),
    ("INSERT INTO m (id, extra, dtm) VALUES (3, 7, '2000-01-01 00:00:01')", "c", (3,)),
    ("UPDATE m SET extra = 8, d = 1.5 WHERE id = 2", "u", (2,)),
    ("DELETE FROM m WHERE id = 1", "d", (1,)),
]


class Moments:
    """What the server said after each statement: ``[(op, key, row dict or None, columns)]``
    in order, ``columns`` ``[(name, DATA_TYPE, COLUMN_TYPE)]`` of that moment."""

    def __init__(self) -> None:
        self.changes: list[tuple] = []
        self.ops = {sql: (op, keys) for sql, op, keys in STATEMENTS}

    def after(self, cur: Any, sql: str) -> None:
        op, keys = self.ops[sql]
        if op is None:
            return
        cur.execute("SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE FROM information_schema.COLUMNS "
                    "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'm' ORDER BY ORDINAL_POSITION")
        columns = [tuple(r) for r in cur.fetchall()]
        cur.execute("SELECT * FROM m")
        names = [d[0] for d in cur.description]
        rows = {r[0]: dict(zip(names, r)) for r in cur.fetchall()}
        self.changes += [(op, k, rows.get(k) if op != "d" else None, columns) for k in keys]


def read_rows(spark, out: Path, database: str) -> list[tuple]:
    """``(table, version, data StructType, Row)`` of every output row, by ``_seq``."""
    from pyspark.sql import types as T

    rows = []
    for vdir in sorted((out / database).glob("*/schema_version=*")):
        df = spark.read.parquet(str(vdir))
        data = T.StructType([f for f in df.schema.fields if not f.name.startswith("_")])
        rows += [(vdir.parent.name, int(vdir.name.split("=")[1]), data, r) for r in df.collect()]
    return sorted(rows, key=lambda x: x[3]["_seq"])


def check_moments(rows: list[tuple], moments: Moments) -> None:
    """Each output row against the server's row of that moment (op by op, in order)."""
    assert [(r["_op"], r["id"]) for *_, r in rows] == [(op, k) for op, k, *_ in moments.changes]
    last: dict[int, tuple] = {}
    for (table, version, data, r), (op, key, row, columns) in zip(rows, moments.changes):
        where = f"{table} v{version} seq {r['_seq']} {op} id={key}"
        if op == "d":
            check_common(where, r.asDict(), data, last.pop(key))
            continue
        check_row(where, r.asDict(), data, row, columns)
        if op == "u":
            check_common(where + " _before", r["_before"].asDict(), data, last[key])
        last[key] = (row, columns)


def same_tables(rows: list[tuple]) -> list[tuple]:
    """The rows without what names the source's position (``_position``, ``_ts``, ``_tx``)."""
    return [(t, v, data, {k: x for k, x in r.asDict(recursive=True).items() if k not in ("_position", "_ts", "_tx")})
            for t, v, data, r in rows]


def test_canal_json_then_run_equals_select_and_the_own_capture(mariadb, spark, tmp_path):  # noqa: F811
    from ddlcore.spark.pipeline import run_pipeline
    from ddlcore_mysql.canal import CanalReader

    moments = Moments()
    db, events, _ = capture_workload(mariadb, tmp_path / "own", [TABLE], [s for s, *_ in STATEMENTS],
                                     after=moments.after)
    src = tmp_path / "canal.jsonl"
    src.write_text("".join(json.dumps(m) + "\n" for m in canal_messages(events)))
    stats = DebeziumCapture(DebeziumCaptureOptions(out=tmp_path / "canal", from_files=(src,),
                                                   connector_impl=CanalReader("canal"), flavor="mariadb",
                                                   progress=False)).run()
    assert stats.quarantined == 0
    outputs = {}
    for name in ("canal", "own"):
        result = run_pipeline(tmp_path / name / "changelog.jsonl", tmp_path / f"lake-{name}", spark=spark)
        assert result.quarantined == 0, result.quarantine_reasons
        outputs[name] = read_rows(spark, tmp_path / f"lake-{name}", db)
    check_moments(outputs["canal"], moments)
    assert [v for _, v, _, _ in outputs["canal"]] == [1, 1, 1, 2, 2, 2]  # the ALTER: a new version
    assert same_tables(outputs["canal"]) == same_tables(outputs["own"])


# ---------------------------------------------------------------- Debezium PostgreSQL

PG_STATEMENTS: list[tuple[str, str | None, tuple]] = [
    ("CREATE TABLE items (id int PRIMARY KEY, name text, price numeric(10,2), tags text[], at timestamptz, "
     "ok boolean, amount numeric, day date, raw bytea, tm time(3), ts timestamp, iv interval, tz timetz)", None, ()),
    ("INSERT INTO items VALUES (1, 'a \"q\"', 12.50, '{x,y,NULL}', '2024-06-01 10:00:00.5+02', true, 1.2345, "
     "'2024-02-29', '\\x00ff', '10:20:30.5', '2024-06-01 10:00:00.25', '1 year 2 mons 3 days 04:05:06.78', "
     "'10:00:00.5+00'), (2, NULL, 0.01, '{}', '1999-12-31 23:59:59+00', false, -7, '1970-01-01', '\\x', "
     "'00:00:00', '1999-12-31 23:59:59', '-5 days', '23:59:59+00')", "c", (1, 2)),
    ("UPDATE items SET name = 'b', amount = 1e-20 WHERE id = 1", "u", (1,)),
    ("ALTER TABLE items ADD COLUMN qty int, ALTER COLUMN price TYPE numeric(12,3)", None, ()),
    ("INSERT INTO items (id, qty, price) VALUES (3, 3, 1.5)", "c", (3,)),
    ("DELETE FROM items WHERE id = 2", "d", (2,)),
]
PG_COLUMNS = ("SELECT a.attname, c.data_type, c.udt_name, format_type(a.atttypid, a.atttypmod) "
              "FROM pg_attribute a JOIN information_schema.columns c ON c.table_schema = 'public' "
              "AND c.table_name = 'items' AND c.column_name = a.attname "
              "WHERE a.attrelid = 'public.items'::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum")


def pg_moments(db) -> list[tuple]:
    """Run ``PG_STATEMENTS``; ``[(op, id, the server's text of the row or None, columns)]``."""
    changes = []
    for sql, op, keys in PG_STATEMENTS:
        db.execute(sql)
        if op is None:
            continue
        columns = [tuple(c) for c in db.select_text(PG_COLUMNS)]
        rows = {int(r[0]): r for r in db.select_text("SELECT * FROM items")}
        changes += [(op, k, rows.get(k) if op != "d" else None, columns) for k in keys]
    return changes


def check_pg_moments(rows: list[tuple], changes: list[tuple]) -> None:
    from tests.pg_capture.test_end_to_end import expected_type, expected_value, field_value

    assert [(r["_op"], r["id"]) for *_, r in rows] == [(op, k) for op, k, *_ in changes]
    for (_schema, table, version, data, r), (op, key, row, columns) in zip(rows, changes):
        where = f"{table} v{version} seq {r['_seq']} {op} id={key}"
        assert data.names == [c[0] for c in columns], where
        for field, (name, data_type, udt, fmt) in zip(data.fields, columns):
            assert field.dataType == expected_type(data_type, udt, fmt), f"{where}: {name} {fmt}"
        if op == "d":
            continue
        for field, (name, data_type, udt, fmt), text in zip(data.fields, columns, row):
            have, want = field_value(r[field.name], field), expected_value(text, data_type, udt, fmt)
            assert have == want, f"{where}: {name} {fmt}: got {have!r}, the server said {want!r}"
            if want is not None:
                assert type(have) is type(want), f"{where}: {name}: {type(have)} vs {type(want)}"


def test_debezium_postgres_then_run_equals_select_and_the_own_capture(capdb, spark, tmp_path):  # noqa: F811
    from ddlcore.spark.pipeline import run_pipeline

    from tests.pg_capture.support import run_capture
    from tests.pg_capture.test_end_to_end import read_output

    from .test_debezium_postgres import debezium_messages

    run_capture(capdb, tmp_path / "own")  # its slot, before the workload
    with capdb.connect() as conn:
        conn.execute("SELECT pg_create_logical_replication_slot('dbz', 'pgoutput')")
    changes = pg_moments(capdb)
    run_capture(capdb, tmp_path / "own")
    src = tmp_path / "dbz.jsonl"
    src.write_text("".join(json.dumps(m) + "\n" for m in debezium_messages(capdb, "dbz")))
    stats = DebeziumCapture(DebeziumCaptureOptions(out=tmp_path / "dbz", from_files=(src,), progress=False)).run()
    assert stats.quarantined == 0
    outputs = {}
    for name in ("dbz", "own"):
        result = run_pipeline(tmp_path / name / "changelog.jsonl", tmp_path / f"lake-{name}", spark=spark,
                              spark_options={"numeric_unconstrained": "string"})
        assert result.quarantined == 0 and result.drift == [], (result.quarantine_reasons, result.drift)
        outputs[name] = read_output(spark, tmp_path / f"lake-{name}", capdb.name)
    check_pg_moments(outputs["dbz"], changes)
    assert [v for *_, v, _, _ in outputs["dbz"]] == [1, 1, 1, 2, 2]  # the ALTER: a new version
    strip = lambda rows: same_tables([(t, v, d, r) for _s, t, v, d, r in rows])  # noqa: E731
    assert strip(outputs["dbz"]) == strip(outputs["own"])
