"""End to end against a real MariaDB 10.11, with ``binlog_row_metadata`` FULL and MINIMAL:

    workload setup → capture (snapshot initial, until the end) → workload run (recording what
    the server returns) → capture again (resumes) → ``run_pipeline`` → Parquet

and every row of the Parquet output must equal the row the server returned to ``SELECT *``
right after the change, typed as the schema of that moment says.  Per table name, in seq
order, op by op; the snapshot rows (op ``r``) equal the rows ``setup`` left.

The oracle is the server, not ddlcore: the expected Spark type of each column comes from
``information_schema.COLUMNS`` at the moment of the change (``EXPECTED_TYPE``), and the values
from ``SELECT``, normalised only where the documented mapping (``ddlcore.spark.mapping``)
changes the value's representation (``NORMALISE``).
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

import pytest

from .conftest import load_workload, start_server

pytestmark = pytest.mark.mariadb

pytest.importorskip("pymysqlreplication")
from pyspark.sql import types as T  # noqa: E402

from ddlcore.spark.pipeline import run_pipeline  # noqa: E402
from ddlcore_mysql.capture import CaptureOptions, ConnectionSettings, MySqlCapture  # noqa: E402

W = load_workload()
#: the workload's tables and those of ``extras``: primary-key column, table renames (old, new)
PRIMARY_KEYS = {**W.PRIMARY_KEYS, "gone": "id", "fresh": "id"}
RENAMES = [*W.RENAMES, ("fresh", "gone")]
#: keys of the rows of the dropped ``gone`` (its rows are in its moved-aside Iceberg tables)
DROPPED_GONE_KEYS = {1}


def extras(conn, record) -> None:
    """After the shop workload: a column renamed onto a dropped column's name, and a table
    renamed onto a dropped table's name (``gone``)."""
    def change(table: str, op: str, pk: Any, sql: str) -> None:
        with conn.cursor() as cur:
            cur.execute(sql)
        record(table, op, pk, _select_row(conn, table, pk))

    def ddl(sql: str) -> None:
        with conn.cursor() as cur:
            cur.execute(sql)

    ddl("CREATE TABLE gone (id INT PRIMARY KEY, a INT)")
    change("gone", "c", 1, "INSERT INTO gone VALUES (1, 11)")
    ddl("DROP TABLE gone")
    ddl("CREATE TABLE fresh (id INT PRIMARY KEY, x VARCHAR(5), a INT)")
    change("fresh", "c", 10, "INSERT INTO fresh VALUES (10, 'x10', 100)")
    ddl("ALTER TABLE fresh DROP COLUMN a")
    ddl("ALTER TABLE fresh RENAME COLUMN x TO a")  # onto the dropped column's name
    change("fresh", "c", 11, "INSERT INTO fresh VALUES (11, 'x11')")
    ddl("RENAME TABLE fresh TO gone")  # onto the dropped table's name
    change("gone", "u", 10, "UPDATE gone SET a = 'u10' WHERE id = 10")
    change("gone", "c", 12, "INSERT INTO gone VALUES (12, 'x12')")


def _select_row(conn, table: str, pk: Any) -> dict | None:
    rows = [r for r in _select_all(conn, table) if r[PRIMARY_KEYS[table]] == pk]
    return rows[0] if rows else None


def _select_all(conn, table: str) -> list[dict]:
    with conn.cursor() as cur:
        cur.execute(f"SELECT * FROM `{W.DATABASE}`.`{table}` ORDER BY `{PRIMARY_KEYS[table]}`")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]


# --------------------------------------------------------------------------------------------
# the oracle: server type → Spark type, server value → Spark value
# --------------------------------------------------------------------------------------------


def _decimal_type(column_type: str) -> T.DataType:
    p, s = map(int, re.match(r"decimal\((\d+),(\d+)\)", column_type).groups())
    return T.DecimalType(p, s)


#: information_schema ``(DATA_TYPE, COLUMN_TYPE)`` → the Spark type of the documented mapping
#: (docs/spark.md, ``ddlcore.spark.mapping("mysql")``) under the default options
EXPECTED_TYPE: list[tuple[Callable[[str, str], bool], Callable[[str], T.DataType]]] = [
    (lambda d, c: d == "tinyint", lambda c: T.ShortType() if "unsigned" in c else T.ByteType()),   # TINYINT(1) too
    (lambda d, c: d == "smallint", lambda c: T.IntegerType() if "unsigned" in c else T.ShortType()),
    (lambda d, c: d == "int", lambda c: T.LongType() if "unsigned" in c else T.IntegerType()),
    (lambda d, c: d == "bigint", lambda c: T.DecimalType(20, 0) if "unsigned" in c else T.LongType()),
    (lambda d, c: d == "decimal", _decimal_type),
    (lambda d, c: d in ("char", "varchar", "tinytext", "text", "mediumtext", "longtext"),  # MariaDB JSON is longtext
     lambda c: T.StringType()),
    (lambda d, c: d == "enum", lambda c: T.StringType()),
    (lambda d, c: d == "set", lambda c: T.ArrayType(T.StringType())),
    (lambda d, c: d == "bit", lambda c: T.BooleanType() if c == "bit(1)" else T.BinaryType()),
    (lambda d, c: d == "date", lambda c: T.DateType()),
    (lambda d, c: d == "datetime", lambda c: T.TimestampNTZType()),
    (lambda d, c: d == "timestamp", lambda c: T.TimestampType()),
    (lambda d, c: d == "time", lambda c: T.DayTimeIntervalType(T.DayTimeIntervalType.DAY,
                                                              T.DayTimeIntervalType.SECOND)),
]


def _session_zone() -> dt.timezone:
    sign, hh, mm = re.match(r"([+-])(\d\d):(\d\d)", W.TIME_ZONE).groups()
    delta = dt.timedelta(hours=int(hh), minutes=int(mm))
    return dt.timezone(-delta if sign == "-" else delta)


#: where the value ``SELECT`` gives (pymysql) and the Spark value differ by the mapping's
#: definition; every other type compares as is (int, Decimal, str, date, naive datetime,
#: timedelta)
NORMALISE: list[tuple[Callable[[str, str], bool], Callable[[Any], Any]]] = [
    # SET → array<string>: the labels in definition order (SELECT gives them so, joined by ",")
    (lambda d, c: d == "set", lambda v: [] if v == "" else v.split(",")),
    # BIT(1) → boolean (SELECT gives one byte)
    (lambda d, c: c == "bit(1)", lambda v: int.from_bytes(v, "big") != 0),
    # TIMESTAMP → the instant: SELECT shows wall time in the session zone, Spark holds UTC
    (lambda d, c: d == "timestamp", lambda v: v.replace(tzinfo=_session_zone()).astimezone(dt.timezone.utc)),
    # BIGINT UNSIGNED → decimal(20,0)
    (lambda d, c: d == "bigint" and "unsigned" in c, lambda v: decimal.Decimal(v)),
]


def _first(table, data_type: str, column_type: str):
    for test, fn in table:
        if test(data_type, column_type):
            return fn
    return None


def expected_type(data_type: str, column_type: str) -> T.DataType:
    fn = _first(EXPECTED_TYPE, data_type, column_type)
    assert fn is not None, f"the test has no expected Spark type for {column_type}"
    return fn(column_type)


def normalise(value: Any, data_type: str, column_type: str) -> Any:
    if value is None:
        return None
    fn = _first(NORMALISE, data_type, column_type)
    return value if fn is None else fn(value)


def spark_value(value: Any, spark_type: T.DataType) -> Any:
    """A value collected from Spark, as the instant it holds where PySpark shows local time
    (``TimestampType`` collects as a naive datetime in the process's local zone)."""
    if value is not None and isinstance(spark_type, T.TimestampType):
        return value.astimezone(dt.timezone.utc)
    return value


# --------------------------------------------------------------------------------------------
# running the workload and recording what the server says
# --------------------------------------------------------------------------------------------


class Expected:
    """What the workload recorded: per table name, ``(op, pk, row, columns)`` in order, where
    ``columns`` is ``[(name, DATA_TYPE, COLUMN_TYPE)]`` from information_schema at that moment."""

    def __init__(self, info_conn):
        self.info = info_conn
        self.snapshot: dict[str, dict[Any, tuple]] = defaultdict(dict)
        self.changes: dict[str, list[tuple]] = defaultdict(list)
        self.final: dict[str, tuple[list[dict], list[tuple[str, str, str]]]] = {}

    def columns(self, table: str) -> list[tuple[str, str, str]]:
        with self.info.cursor() as cur:
            cur.execute("SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE FROM information_schema.COLUMNS "
                        "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION",
                        (W.DATABASE, table))
            return [tuple(r) for r in cur.fetchall()]

    def record(self, table: str, op: str, pk: Any, row: dict | None) -> None:
        entry = (op, pk, row, self.columns(table))
        if op == "r":
            self.snapshot[table][pk] = entry
        else:
            self.changes[table].append(entry)


def _capture(server, out: Path) -> list[str]:
    warnings: list[str] = []
    options = CaptureOptions(ConnectionSettings(socket=server.socket, user=server.user, password=server.password),
                             server_id=4242, out=out, snapshot="initial", until_end=True, progress=False,
                             include=(f"{W.DATABASE}.*",))
    MySqlCapture(options, on_warning=warnings.append).run()
    return warnings


def final_state(conn, expected: Expected) -> dict[str, tuple[list[dict], list[tuple[str, str, str]]]]:
    """``SELECT *`` of every table at the end of the workload (in its session), with its columns."""
    with conn.cursor() as cur:
        cur.execute(f"SHOW TABLES FROM `{W.DATABASE}`")
        tables = [r[0] for r in cur.fetchall()]
    return {t: (_select_all(conn, t), expected.columns(t)) for t in tables}


def record_shop(metadata: str, out: Path) -> Expected:
    """Start a server, run the workload between captures into ``out``; the expectations."""
    server = start_server(metadata)
    try:
        conn, info = server.connect(), server.connect()
        expected = Expected(info)
        W.setup(conn, expected.record)
        warnings = _capture(server, out)
        W.run(conn, expected.record)
        extras(conn, expected.record)
        expected.final = final_state(conn, expected)  # the workload's session: its time zone
        warnings += _capture(server, out)
        conn.close()
        info.close()
    finally:
        server.stop()
    assert warnings == [], warnings
    return expected


# --------------------------------------------------------------------------------------------
# reading the output back
# --------------------------------------------------------------------------------------------


def read_output(spark, out: Path) -> dict[str, list[tuple[int, T.StructType, Any]]]:
    """Every output row: per table name, ``(schema_version, data schema, Row)`` sorted by seq.
    Checks that each version's files have the version's ``struct_type`` (``_schemas/``):
    names, types and field metadata."""
    rows: dict[str, list] = defaultdict(list)
    for vdir in sorted((out / W.DATABASE).glob("*/schema_version=*")):
        table, version = vdir.parent.name, int(vdir.name.split("=")[1])
        df = spark.read.parquet(str(vdir))
        data = T.StructType([f for f in df.schema.fields if not f.name.startswith("_")])
        schema_file = out / "_schemas" / f"{W.DATABASE}.{table}.v{version}.json"
        declared = T.StructType.fromJson(json.loads(schema_file.read_text())["struct_type"])
        assert [(f.name, f.dataType, f.metadata) for f in data] == \
               [(f.name, f.dataType, f.metadata) for f in declared.fields], f"{table} v{version}"
        rows[table] += [(version, data, r) for r in df.collect()]
    for table in rows:
        rows[table].sort(key=lambda x: x[2]["_seq"])
    return rows


def check_row(where: str, got: dict, schema: T.StructType, expected_row: dict,
              columns: list[tuple[str, str, str]]) -> None:
    """``got`` (a Spark row as a dict) equals the server's ``expected_row`` under the
    schema of that moment (``columns``), with the expected Spark types."""
    assert [c[0] for c in columns] == schema.names, f"{where}: columns differ from the server's"
    assert list(expected_row) == schema.names
    for (name, data_type, column_type), field in zip(columns, schema.fields):
        assert field.dataType == expected_type(data_type, column_type), \
            f"{where}: {name} {column_type} is {field.dataType.simpleString()}"
        assert field.metadata.get("column_type") == column_type, \
            f"{where}: {name}: the model says {field.metadata.get('column_type')}, the server {column_type}"
        want = normalise(expected_row[name], data_type, column_type)
        have = spark_value(got[name], field.dataType)
        assert have == want, f"{where}: {name} {column_type}: got {have!r}, server said {want!r}"
        if want is not None:
            assert type(have) is type(want), f"{where}: {name}: {type(have)} vs {type(want)}"


def check_common(where: str, got: dict | None, schema: T.StructType, previous: tuple | None) -> None:
    """A before image (``_before`` of an update, the row of a delete) equals the last state
    the server showed for that key, on the columns both have with the same name."""
    assert got is not None, f"{where}: no before image"
    if previous is None:
        return
    row, columns = previous
    for name, data_type, column_type in columns:
        if name in schema.names:
            field = schema[name]
            assert spark_value(got[name], field.dataType) == normalise(row[name], data_type, column_type), \
                f"{where}: before image of {name}"


# --------------------------------------------------------------------------------------------
# the test
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("metadata", ["FULL", "MINIMAL"])
def test_shop_rows_in_parquet_equal_what_the_server_returned(metadata, spark, tmp_path):
    capture_out = tmp_path / "capture"
    expected = record_shop(metadata, capture_out)

    out = tmp_path / "out"
    result = run_pipeline(capture_out / "changelog.jsonl", out, spark=spark)
    n_changes = sum(len(v) for v in expected.changes.values())
    n_snapshot = sum(len(v) for v in expected.snapshot.values())
    assert result.quarantined == 0, result.quarantine_reasons
    assert result.rows == n_snapshot + n_changes
    assert not (out / "_quarantine").exists()

    output = read_output(spark, out)
    assert set(output) == set(expected.changes) | set(expected.snapshot)
    pk_of = PRIMARY_KEYS

    # -- the snapshot: one "r" row per row setup left, equal to it --------------------------------
    for table, want in expected.snapshot.items():
        got = {r["_seq"]: (s, r) for (_v, s, r) in output[table] if r["_op"] == "r"}
        by_pk = {}
        for schema, r in got.values():
            key = r[pk_of[table]]
            by_pk[as_key(key)] = (schema, r)
        assert sorted(map(str, by_pk)) == sorted(map(str, want)), f"snapshot of {table}"
        for pk, (_op, _key, row, columns) in want.items():
            schema, r = by_pk[pk]
            check_row(f"{metadata} {table} r pk={pk}", r.asDict(), schema, row, columns)
            assert r["_before"] is None

    # -- the stream: op by op, in seq order, per table name ---------------------------------------
    last: dict[tuple[str, Any], tuple] = {}          # (lineage, pk) → (row, columns) last seen
    lineage = {new: old for old, new in RENAMES}
    for table, want in expected.snapshot.items():
        for pk, (_op, _key, row, columns) in want.items():
            last[(table, pk)] = (row, columns)
    seqs = []
    for table, want in expected.changes.items():
        got = [(v, s, r) for (v, s, r) in output[table] if r["_op"] != "r"]
        assert [(r["_op"], as_key(r[pk_of[table]])) for (_v, _s, r) in got] == \
               [(op, pk) for (op, pk, _row, _c) in want], f"ops of {table}"
        versions = [v for (v, _s, _r) in got]
        assert versions == sorted(versions), f"{table}: versions go back in time"
        for (version, schema, r), (op, pk, row, columns) in zip(got, want):
            where = f"{metadata} {table} v{version} seq {r['_seq']} {op} pk={pk}"
            seqs.append(r["_seq"])
            key = (lineage.get(table, table), pk)
            assert r["_position"] and r["_ts"] is not None
            if op == "d":
                assert row is None
                check_common(where, r.asDict(), schema, last.pop(key, None))
                assert as_key(r[pk_of[table]]) == pk
            else:
                check_row(where, r.asDict(), schema, row, columns)
                if op == "u":
                    check_common(where + " _before", r["_before"].asDict(), schema, last.get(key))
                else:
                    assert r["_before"] is None
                last[key] = (row, columns)
    assert len(seqs) == len(set(seqs)) == n_changes
    if metadata == "FULL":  # the Iceberg output of the same log (docs/tables.md), once
        check_iceberg(spark, capture_out / "changelog.jsonl", tmp_path / "iceberg", expected, output)


def check_iceberg(spark, log: Path, out: Path, expected: Expected, output: dict) -> None:
    """``--format iceberg``: each changes table holds its lineage's row events once, and the
    current state (``read_table(current=True)``) equals ``SELECT *`` on the server at the end,
    value for value with the Spark types of the final schema."""
    import ddlcore
    from ddlcore.sinks.iceberg import CATALOG_FILE, WAREHOUSE_DIR, open_catalog
    from ddlcore.sinks.icetypes import type_spec

    run_pipeline(log, out, spark=spark, output_format="iceberg")
    cat = open_catalog({"name": "ddlcore", "uri": f"sqlite:///{out / CATALOG_FILE}",
                        "warehouse": f"file://{out / WAREHOUSE_DIR}"})
    lineage = {old: new for old, new in RENAMES}
    for table, (rows, columns) in expected.final.items():
        seqs = sorted(r["_seq"] for name in output if lineage.get(name, name) == table for _v, _s, r in output[name]
                      if not (table == "gone" and as_key(r["id"]) in DROPPED_GONE_KEYS))
        ice = cat.load_table((W.DATABASE, f"{table}__changes")).scan(selected_fields=("_seq",)).to_arrow()
        assert sorted(ice["_seq"].to_pylist()) == seqs, f"{table}: the changes table's row events"
        cur = ddlcore.read_table(spark, out, f"{W.DATABASE}.{table}", current=True)
        assert cur.columns == [c[0] for c in columns] + ["_seq", "_unknown"], table
        types = {f.name: f.dataType for f in cur.schema.fields}
        got = {as_key(r[PRIMARY_KEYS[table]]): r.asDict() for r in cur.collect()}
        # the current-state Iceberg table: the same columns, keys and last events
        stored = cat.load_table((W.DATABASE, table)).scan().to_arrow()
        assert stored.column_names == cur.columns, table
        assert sorted((str(as_key(r[PRIMARY_KEYS[table]])), r["_seq"]) for r in stored.to_pylist()) == \
            sorted((str(k), v["_seq"]) for k, v in got.items()), table
        assert sorted(map(str, got)) == sorted(str(as_key(r[PRIMARY_KEYS[table]])) for r in rows), table
        for row in rows:
            have = got[as_key(row[PRIMARY_KEYS[table]])]
            assert have["_unknown"] == [], (table, have)
            for name, data_type, column_type in columns:
                # the Iceberg type of the server type's Spark type (tinyint → int: Iceberg has no narrower)
                assert type_spec(types[name]) == type_spec(expected_type(data_type, column_type)), (table, name)
                assert spark_value(have[name], types[name]) == normalise(row[name], data_type, column_type), \
                    f"{table} {name} {column_type}: current state {have[name]!r}, server {row[name]!r}"


def as_key(value: Any) -> Any:
    return int(value) if isinstance(value, decimal.Decimal) else value
