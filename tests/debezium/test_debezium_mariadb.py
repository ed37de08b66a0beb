"""End to end with the real MariaDB 10.11 of the oracle tests: a workload of every common MySQL
type (and an ALTER between rows) captured by ddlcore's own binlog capture; its binlog turned into
Debezium MariaDB-connector messages and a ``FileSchemaHistory`` by the test-only encoder
(tests/debezium/encoder.py, from Debezium's documented encodings) under each value setting;
``ddlcore capture debezium`` of those: every row converts to what the own capture's row converts
to (and to what ``SELECT`` returns at the end), lossy settings mark exactly the rows they lose,
and ``ddlcore run`` gives the same tables from both logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ddlcore import raw
from ddlcore.changelog import read_changelog
from ddlcore.debezium import DebeziumSettings
from ddlcore.debezium_capture import DebeziumCapture, DebeziumCaptureOptions
from ddlcore.history import SchemaHistory
from ddlcore.model import TableId

from tests.servers.fixtures import mariadb  # noqa: F401

from .encoder import encode
from .workload import capture_workload

TABLE = """CREATE TABLE t (id int PRIMARY KEY, ti tinyint, ub bigint unsigned, d decimal(20,4), sd decimal(7,2),
  f float, dbl double, vc varchar(20), bin varbinary(8), e enum('a','b','c'), s set('x','y','z'), b1 bit(1),
  b9 bit(9), y year, dt date, dtm datetime(6), dtm0 datetime, tm time(3), ts timestamp(6) NULL DEFAULT NULL,
  j json, g geometry)"""
ROWS = [
    "INSERT INTO t VALUES (1, -128, 18446744073709551615, 1234567890123456.7891, -12345.67, 1.5, 2.25e300, 'ünï',"
    " x'00ff10', 'b', 'x,z', b'1', b'100000011', 2155, '1000-01-01', '9999-12-31 23:59:59.999999',"
    " '2024-02-29 12:00:00', '-838:59:59.000', '2038-01-19 03:14:07.123456', '{\"k\": [1, 2]}',"
    " ST_GeomFromText('POINT(1 2)', 4326))",
    "INSERT INTO t (id, d, dtm, vc) VALUES (2, 0.0001, '1970-01-01 00:00:00.000001', '42')",
    "UPDATE t SET vc = 'changed', e = 'c', tm = '12:34:56.789', ts = '1999-12-31 23:59:59' WHERE id = 1",
    "ALTER TABLE t ADD COLUMN extra int AFTER vc",
    "INSERT INTO t (id, extra, s, b1, dtm0) VALUES (3, 7, '', b'0', '2000-01-01 00:00:01')",
    "DELETE FROM t WHERE id = 2",
]
SETTINGS = [
    {},  # Debezium's defaults: precise, long, adaptive_time_microseconds, bytes
    {"decimal.handling.mode": "string", "bigint.unsigned.handling.mode": "precise", "time.precision.mode": "adaptive",
     "binary.handling.mode": "base64"},
    {"decimal.handling.mode": "double", "time.precision.mode": "connect", "binary.handling.mode": "hex"},
    {"time.precision.mode": "isostring", "binary.handling.mode": "base64-url-safe"},
    {"time.precision.mode": "microseconds"},
    {"time.precision.mode": "nanoseconds"},
]


@pytest.fixture(scope="module")
def own(mariadb, tmp_path_factory):  # noqa: F811
    """The workload and ddlcore's own capture of it."""
    out = tmp_path_factory.mktemp("own") / "out"

    def select(cur):
        cur.execute("SELECT id, ub, d, sd, vc, extra, e, dt, dtm, dtm0, tm FROM t ORDER BY id")
        return cur.fetchall()

    db, events, selected = capture_workload(mariadb, out, [TABLE], ROWS, finish=select)
    return db, out, events, selected


def _text(value, col):
    if isinstance(value, bytes) and col.data_type in ("varchar", "char", "longtext", "text"):
        return value.decode("utf-8")  # utf8mb4 columns: Debezium sends the decoded text
    return value


def debezium_stream(events, tmp: Path, settings: dict) -> tuple[Path, Path]:
    """The own capture's events as the MariaDB connector would have written them."""
    hist = SchemaHistory.open(":memory:", dialect="mysql")
    history, messages = [], []
    for ev in events:
        file, _, pos = (ev.position or ":0").partition(":")
        pos = int(pos.split("#")[0] or 0)
        if ev.op in ("source", "ddl"):
            hist.record(ev.to_json())
            if ev.op == "ddl":
                history.append({"source": {"server": "e2e"}, "position": {"file": file, "pos": pos, "ts_sec": 1},
                                "databaseName": ev.database or "", "ddl": ev.ddl, "tableChanges": []})
            continue
        table = hist.table_at(TableId(ev.database, None, ev.table), ev.seq)

        def image(values):
            if values is None:
                return None
            return {c.name: encode(_text(raw.decode_json(v), c), c, settings) for c, v in zip(table.columns, values)}

        messages.append({"op": ev.op, "ts_ms": ev.ts, "before": image(ev.before), "after": image(ev.after),
                         "source": {"connector": "mariadb", "name": "e2e", "ts_ms": ev.ts, "snapshot": "false",
                                    "db": ev.database, "table": ev.table, "file": file, "pos": pos,
                                    "row": ev.row or 0}})
    hist.close()
    hpath, mpath = tmp / "history.jsonl", tmp / "messages.jsonl"
    hpath.write_text("".join(json.dumps(r) + "\n" for r in history))
    mpath.write_text("".join(json.dumps(m) + "\n" for m in messages))
    return hpath, mpath


def converted_rows(events):
    """``[(op, position without #row, typed before, typed after, quarantine)]`` of the row events
    (each converted by ``RowConverter`` for the table version in force)."""
    from ddlcore.spark.convert import RowConverter

    hist = SchemaHistory.open(":memory:", dialect="mysql")
    out = []
    converters: dict[tuple, RowConverter] = {}  # per table and DDL seen
    ddl = 0
    for ev in events:
        if ev.op in ("source", "ddl"):
            hist.record(ev.to_json())
            ddl += 1
            continue
        key = (ev.database, ev.table, ddl)
        if key not in converters:
            converters[key] = RowConverter(hist.table_at(TableId(ev.database, None, ev.table), ev.seq),
                                           dialect="mysql")
        conv = converters[key]
        out.append((ev.op, ev.position.split("#")[0], conv.convert(raw.decode_row(ev.before)),
                    conv.convert(raw.decode_row(ev.after)), ev.quarantine))
    hist.close()
    return out


LOSSY = {"decimal.handling.mode": ("double", {"d"}), "time.precision.mode": ("connect", {"dtm"})}


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: ",".join(s.values()) or "defaults")
def test_debezium_rows_equal_the_own_capture_rows(own, tmp_path, settings):
    db, out, events, _ = own
    hpath, mpath = debezium_stream(events, tmp_path, settings)
    cap = DebeziumCapture(DebeziumCaptureOptions(out=tmp_path / "dbz", from_files=(mpath,), history=hpath,
                                                 settings=DebeziumSettings.of(settings.items()), progress=False))
    cap.run()
    got = converted_rows(list(read_changelog(tmp_path / "dbz" / "changelog.jsonl")))
    want = converted_rows(events)
    assert [(op, pos) for op, pos, *_ in got] == [(op, pos) for op, pos, *_ in want]
    lossy_cols = set().union(*(cols for name, (mode, cols) in LOSSY.items() if settings.get(name) == mode))
    for (op, pos, gb, ga, gq), (_, _, wb, wa, _) in zip(got, want):
        images = [x for x in (wb, wa) if x is not None]
        names = [f for f in cap_columns(events, pos)]
        loses = any(row[names.index(c)] is not None for row in images for c in lossy_cols if c in names)
        if loses:
            assert gq and gq.startswith("lossy: "), (op, pos, gq)
            keep = [i for i, n in enumerate(names) if n not in lossy_cols]
            assert [[r[i] for i in keep] for r in (gb, ga) if r] == [[r[i] for i in keep] for r in images]
        else:
            assert gq is None, (op, pos, gq)
            assert (gb, ga) == (wb, wa), (op, pos)


def cap_columns(events, position):
    """Column names of the table version in force at the row at ``position``."""
    hist = SchemaHistory.open(":memory:", dialect="mysql")
    try:
        for ev in events:
            if ev.op in ("source", "ddl"):
                hist.record(ev.to_json())
            elif ev.position.split("#")[0] == position:
                return [c.name for c in hist.table_at(TableId(ev.database, None, ev.table), ev.seq).columns]
    finally:
        hist.close()
    raise AssertionError(position)


def _capture_defaults(own, tmp_path: Path) -> Path:
    hpath, mpath = debezium_stream(own[2], tmp_path, {})
    DebeziumCapture(DebeziumCaptureOptions(out=tmp_path / "dbz", from_files=(mpath,), history=hpath,
                                           progress=False)).run()
    return tmp_path / "dbz"


def _norm(v):
    import decimal

    if isinstance(v, (int, decimal.Decimal)) and not isinstance(v, bool):
        return decimal.Decimal(v)
    return v


def test_final_rows_equal_select(own, tmp_path):
    """The rows the Debezium log leaves (c/u/d applied by key), converted, equal ``SELECT``."""
    from ddlcore.spark.convert import RowConverter

    *_, selected = own
    evs = list(read_changelog(_capture_defaults(own, tmp_path) / "changelog.jsonl"))
    hist = SchemaHistory.open(":memory:", dialect="mysql")
    state: dict[int, dict] = {}
    for ev in evs:
        if ev.op in ("source", "ddl"):
            hist.record(ev.to_json())
            continue
        table = hist.table_at(TableId(ev.database, None, ev.table), ev.seq)
        row = RowConverter(table, dialect="mysql").convert(raw.decode_row(ev.after or ev.before))
        named = dict(zip([c.name for c in table.columns], row))
        if ev.op == "d":
            state.pop(named["id"])
        else:
            state[named["id"]] = named
    hist.close()
    cols = ["id", "ub", "d", "sd", "vc", "extra", "e", "dt", "dtm", "dtm0", "tm"]
    got = [tuple(_norm(state[k].get(c)) for c in cols) for k in sorted(state)]  # extra: NULL before the ALTER
    assert got == [tuple(_norm(v) for v in r) for r in selected]


def test_pipeline_tables_from_debezium_equal_those_from_the_own_capture(own, tmp_path, spark):
    from ddlcore.spark.pipeline import run_pipeline

    db, out, *_ = own
    tables = {}
    for name, log in (("own", out), ("debezium", _capture_defaults(own, tmp_path))):
        lake = tmp_path / f"lake-{name}"
        run_pipeline(log, lake, spark=spark)
        assert not list(lake.glob("_quarantine/**/*.parquet")), name
        rows = []
        for vdir in sorted((lake / db).glob("*/schema_version=*")):
            df = spark.read.parquet(str(vdir))
            fields = [(f.name, f.dataType) for f in df.schema.fields if not f.name.startswith("_") or f.name == "_op"]
            for r in df.collect():
                d = r.asDict(recursive=True)
                rows.append((vdir.name, fields, d["_seq"], {k: d[k] for k, _ in fields}, d.get("_before")))
        rows.sort(key=lambda r: r[2])
        tables[name] = [(v, f, data, before) for v, f, _, data, before in rows]
    assert len(tables["own"]) == 5 and tables["debezium"] == tables["own"]
