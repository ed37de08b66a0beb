"""Spark end to end on the streams of other CDC tools (issue 28, "How it is verified").

* canal-json: a real MariaDB 10.11 workload (an ``ALTER`` between rows, a ``TIMESTAMP`` in a
  session zone that is not UTC) recording ``SELECT *`` and ``information_schema`` after every
  statement; ``ddlcore capture mysql`` of it re-encoded as Canal flat messages
  (canal_encoder.py); ``ddlcore capture canal`` then ``run_pipeline``: every output row equals
  what ``SELECT`` returned at that moment with that moment's Spark types (the oracle of
  tests/e2e/test_shop_end_to_end.py), and ``run_pipeline`` on the own capture gives the same
  tables.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ddlcore.debezium_capture import DebeziumCapture, DebeziumCaptureOptions

from tests.servers.fixtures import mariadb  # noqa: F401

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
