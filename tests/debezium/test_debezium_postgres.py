"""Debezium's PostgreSQL connector: its documented update (key-only before image) and message
events, and end to end with a real PostgreSQL 15 with ddlcore's event trigger: the WAL of a
workload (pgoutput with messages, read from a slot) turned into Debezium messages — rows by a
test-only encoder from Debezium's documented encodings, the trigger's DDL messages as
``op: "m"`` events — gives the change log ``ddlcore capture postgres`` writes for the same
workload: the same DDL (text, search path, catalog) at the same LSNs, the same row images."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import re

from ddlcore.debezium_capture import DebeziumCapture, DebeziumCaptureOptions
from ddlcore_postgres import pgoutput as po

from tests.pg_capture.conftest import capdb  # noqa: F401
from tests.pg_capture.support import events, run_capture
from tests.servers.fixtures import postgres  # noqa: F401
from .encoder import EXACT

WORKLOAD = [
    "CREATE TABLE items (id int PRIMARY KEY, name text, price numeric(10,2), tags text[], at timestamptz, "
    "ok boolean, amount numeric, day date, raw bytea, tm time(3), ts timestamp, iv interval, tz timetz)",
    "INSERT INTO items VALUES (1, 'a \"q\"', 12.50, '{x,\"y z\",NULL}', '2024-06-01 10:00:00.5+00', true, 1.2345, "
    "'2024-02-29', '\\x00ff', '10:20:30.5', '2024-06-01 10:00:00.25', '1 year 2 mons 3 days 04:05:06.78', "
    "'10:00:00.5+00')",
    "UPDATE items SET name = 'b' WHERE id = 1",
    "ALTER TABLE items ADD COLUMN qty int",
    "INSERT INTO items VALUES (2, NULL, 0.01, '{}', '1999-12-31 23:59:59+00', false, -7, '1970-01-01', '\\x', "
    "'00:00:00', '1999-12-31 23:59:59', '-5 days', '23:59:59+00', 3)",
    "DELETE FROM items WHERE id = 1",
]


# ---------------------------------------------------------------- a test-only Debezium encoder


def _unscaled(n: int) -> str:
    return base64.b64encode(n.to_bytes(max(1, (n.bit_length() + 8) // 8), "big", signed=True)).decode()


def _array(text: str) -> list:
    """A one-dimensional PostgreSQL array's text → its elements (quoted elements unescaped)."""
    inner = text[1:-1]
    out = []
    for m in re.finditer(r'"((?:[^"\\]|\\.)*)"|([^,]+)', inner):
        out.append(re.sub(r"\\(.)", r"\1", m[1]) if m[1] is not None else (None if m[2] == "NULL" else m[2]))
    return out


def encode(text: str | None, type_oid: int, typmod: int):
    """pgoutput's text of a value → Debezium's PostgreSQL connector value (default settings,
    Debezium documentation "PostgreSQL connector" → "Data type mappings")."""
    if text is None:
        return None
    if type_oid in (20, 21, 23):
        return int(text)
    if type_oid == 16:
        return text == "t"
    if type_oid == 1700:
        d = decimal.Decimal(text)
        scale = -d.as_tuple().exponent
        if typmod >= 0:  # numeric(p,s): org.apache.kafka.connect.data.Decimal
            return _unscaled(int(d.scaleb(scale, EXACT)))
        return {"scale": scale, "value": _unscaled(int(d.scaleb(scale, EXACT)))}  # VariableScaleDecimal
    if type_oid == 1184:  # io.debezium.time.ZonedTimestamp
        t = dt.datetime.fromisoformat(text).astimezone(dt.timezone.utc)
        return f"{t.year:04d}-{t:%m-%dT%H:%M:%S.%f}Z"
    if type_oid == 1082:  # io.debezium.time.Date
        return (dt.date.fromisoformat(text) - dt.date(1970, 1, 1)).days
    if type_oid == 17:
        return base64.b64encode(bytes.fromhex(text[2:])).decode()
    if type_oid == 1009:
        return _array(text)
    per = 1000 if 0 <= typmod <= 3 else 1  # time.precision.mode=adaptive: precision 0-3 in ms, else µs
    if type_oid == 1083:  # io.debezium.time.Time / MicroTime
        h, m, sec = text.split(":")
        return round(((int(h) * 60 + int(m)) * 60 + decimal.Decimal(sec)) * 1_000_000) // per
    if type_oid == 1114:  # io.debezium.time.Timestamp / MicroTimestamp
        return (dt.datetime.fromisoformat(text) - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=per)
    if type_oid == 1266:  # io.debezium.time.ZonedTime, in UTC
        return text.replace("+00", "Z")
    if type_oid == 1186:  # interval.handling.mode=string: ISO 8601
        return _iso_interval(text)
    return text


def _iso_interval(text: str) -> str:
    units = {"year": "Y", "years": "Y", "mon": "M", "mons": "M", "day": "D", "days": "D"}
    date = "".join(f"{n}{units[u]}" for n, u in re.findall(r"(-?\d+) (years?|mons?|days?)", text))
    clock = re.search(r"(-)?(\d+):(\d+):(\d+(?:\.\d+)?)", text)
    time = ""
    if clock:
        sign = clock[1] or ""
        time = f"T{sign}{int(clock[2])}H{sign}{int(clock[3])}M{sign}{clock[4]}S"
    return "P" + date + time


def _slot(db, name: str) -> None:
    with db.connect() as conn:
        conn.execute("SELECT pg_create_logical_replication_slot(%s, 'pgoutput')", (name,))


#: type oid → (Connect type, logical name, source type name) (Debezium PostgreSQL connector, "Data type
#: mappings", default settings with interval.handling.mode=string)
_FIELDS = {20: ("int64", None, "INT8"), 21: ("int16", None, "INT2"), 23: ("int32", None, "INT4"),
           16: ("boolean", None, "BOOL"), 25: ("string", None, "TEXT"), 1043: ("string", None, "VARCHAR"),
           1184: ("string", "io.debezium.time.ZonedTimestamp", "TIMESTAMPTZ"),
           1082: ("int32", "io.debezium.time.Date", "DATE"), 17: ("bytes", None, "BYTEA"),
           1009: ("array", None, "_TEXT"), 1266: ("string", "io.debezium.time.ZonedTime", "TIMETZ"),
           1186: ("string", "io.debezium.time.Interval", "INTERVAL")}


def connect_field(name: str, type_oid: int, typmod: int, propagate: bool) -> dict:
    """The Connect field schema Debezium writes for a column (with ``column.propagate.source.type``:
    the ``__debezium.source.column.*`` parameters)."""
    params: dict = {}
    if type_oid == 1700:
        if typmod >= 0:
            p, sc = (typmod - 4) >> 16, (typmod - 4) & 0xFFFF
            kind, logical, source = "bytes", "org.apache.kafka.connect.data.Decimal", "NUMERIC"
            params = {"scale": str(sc), "connect.decimal.precision": str(p)}
            extra = {"length": str(p), "scale": str(sc)}
        else:
            kind, logical, source = "struct", "io.debezium.data.VariableScaleDecimal", "NUMERIC"
            extra = {"length": "131089", "scale": "0"}
    elif type_oid in (1083, 1114):
        micro = not 0 <= typmod <= 3
        kind = "int64" if micro or type_oid == 1114 else "int32"
        unit = {1083: ("Time", "MicroTime"), 1114: ("Timestamp", "MicroTimestamp")}[type_oid][micro]
        logical, source = f"io.debezium.time.{unit}", {1083: "TIME", 1114: "TIMESTAMP"}[type_oid]
        extra = {"length": str(typmod if typmod >= 0 else 6)}
    else:
        kind, logical, source = _FIELDS[type_oid]
        extra = {"length": str(typmod - 4)} if type_oid == 1043 and typmod >= 0 else {}
    if propagate:
        params.update({"__debezium.source.column.type": source,
                       **{f"__debezium.source.column.{k}": v for k, v in extra.items()}})
    out = {"type": kind, "optional": True, "field": name}
    if logical:
        out["name"] = logical
    if params:
        out["parameters"] = params
    if kind == "array":
        out["items"] = {"type": "string", "optional": True}
    return out


def debezium_messages(db, slot: str, *, schemas: bool = False, propagate: bool = False,
                      texts: list | None = None) -> list[dict]:
    """The slot's changes as Debezium's PostgreSQL connector messages (``schemas``: with their
    Connect schema, ``{"schema", "payload"}``); ``texts`` gets ``(op, before, after)`` of each
    row as pgoutput's text."""
    with db.connect() as conn:
        rows = conn.execute("SELECT lsn::text, data FROM pg_logical_slot_peek_binary_changes(%s, NULL, NULL, "
                            "'proto_version', '1', 'publication_names', 'pub', 'messages', 'true')",
                            (slot,)).fetchall()
    relations: dict[int, po.Relation] = {}
    out, xid, last_commit = [], None, 0
    for lsn_text, data in rows:
        m, lsn = po.decode(bytes(data)), po.parse_lsn(lsn_text)
        src = {"connector": "postgresql", "name": "pg", "db": db.name, "snapshot": "false", "lsn": lsn,
               "txId": xid, "sequence": json.dumps([str(last_commit), str(lsn)])}
        if isinstance(m, po.Begin):
            xid = m.xid
        elif isinstance(m, po.Commit):
            last_commit = m.commit_lsn
        elif isinstance(m, po.Relation):
            relations[m.relid] = m
        elif isinstance(m, po.Message):
            out.append({"op": "m", "source": {**src, "schema": "", "table": ""},
                        "message": {"prefix": m.prefix, "content": base64.b64encode(m.content).decode()}})
        elif isinstance(m, (po.Insert, po.Update, po.Delete)):
            rel = relations[m.relid]

            def image(tup):
                if tup is None:
                    return None
                return {c.name: encode(v if not isinstance(v, bytes) else v.decode(), c.type_oid, c.typmod)
                        for c, v in zip(rel.columns, tup)}

            before = image(getattr(m, "old", None))
            if isinstance(m, po.Delete) and m.old_kind == "K":  # the key only: Debezium leaves the rest out
                before = {c.name: before[c.name] for c in rel.columns if c.key}
            op = {po.Insert: "c", po.Update: "u", po.Delete: "d"}[type(m)]
            msg = {"op": op, "before": before, "after": image(getattr(m, "new", None)),
                   "source": {**src, "schema": rel.namespace, "table": rel.name}}
            if texts is not None:
                texts.append((op, *(None if t is None else [v.decode() if isinstance(v, bytes) else v for v in t]
                                    for t in (getattr(m, "old", None), getattr(m, "new", None)))))
            if schemas:
                row = {"type": "struct", "optional": True,
                       "fields": [connect_field(c.name, c.type_oid, c.typmod, propagate) for c in rel.columns]}
                msg = {"schema": {"type": "struct", "fields": [{**row, "field": "before"}, {**row, "field": "after"},
                                                               {"type": "struct", "field": "source"}]},
                       "payload": msg}
            out.append(msg)
    return out


def test_documented_update_with_key_only_before_and_a_foreign_message(tmp_path):
    hist = {"op": "m", "source": {"connector": "postgresql", "db": "postgres", "lsn": 1000, "txId": 1},
            "message": {"prefix": "ddlcore", "content": base64.b64encode(json.dumps({
                "format": 1, "query": "CREATE TABLE customers (id int PRIMARY KEY, first_name text, last_name text, "
                                      "email text)", "tag": "CREATE TABLE", "search_path": ["public"],
                "tables": [], "dropped": []}).encode()).decode()}}
    update = {  # Debezium's PostgreSQL documentation, "update events" (documentation/.../connectors/postgresql.adoc)
        "before": {"id": 1}, "after": {"id": 1, "first_name": "Anne Marie", "last_name": "Kretchmar",
                                       "email": "annek@noanswer.org"},
        "source": {"version": "3.0.0.Final", "connector": "postgresql", "name": "PostgreSQL_server",
                   "ts_ms": 1559033904863, "snapshot": False, "db": "postgres", "schema": "public",
                   "table": "customers", "txId": 556, "lsn": 24023128, "xmin": None}, "op": "u", "ts_ms": 1465584025523}
    foreign = {"source": {"connector": "postgresql", "db": "postgres", "schema": "", "table": "", "txId": 556,
                          "lsn": 46523128}, "op": "m", "message": {"prefix": "foo", "content": "Ymfy"}}  # same doc
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(v) + "\n" for v in (hist, update, foreign)))
    warnings: list[str] = []
    DebeziumCapture(DebeziumCaptureOptions(out=tmp_path / "o", from_files=(src,), progress=False),
                    on_warning=warnings.append).run()
    evs = events(tmp_path / "o")
    assert [e["op"] for e in evs] == ["source", "ddl", "u"]
    assert evs[0]["source"]["dialect"] == "postgres"
    u = evs[2]
    assert (u["schema"], u["position"], u["tx"]) == ("public", "0/16E9058", "556")
    assert u["before"] == [{"$s": "1"}] + [{"$absent": True}] * 3
    assert u["after"] == [{"$s": "1"}, "Anne Marie", "Kretchmar", "annek@noanswer.org"]
    assert any("prefix 'foo'" in w for w in warnings)


def test_real_postgres_wal_as_debezium_equals_the_own_capture(capdb, tmp_path):  # noqa: F811
    own = tmp_path / "own"
    run_capture(capdb, own)  # its slot and an empty first run, before the workload
    _slot(capdb, "dbz")
    capdb.execute(*WORKLOAD)
    run_capture(capdb, own)
    msgs = debezium_messages(capdb, "dbz")
    src = tmp_path / "dbz.jsonl"
    src.write_text("".join(json.dumps(m) + "\n" for m in msgs))
    stats = DebeziumCapture(DebeziumCaptureOptions(out=tmp_path / "dbz", from_files=(src,), progress=False)).run()
    assert stats.quarantined == 0, [e.get("quarantine") for e in events(tmp_path / "dbz")]

    def body(evs):
        return [(e["op"], e["position"], e.get("schema"), e.get("table"), e.get("ddl"), e.get("search_path"),
                 e.get("catalog"), e.get("before"), e.get("after"), e.get("tx")) for e in evs
                if e["op"] not in ("source",)]

    got, want = body(events(tmp_path / "dbz")), body(events(own))
    assert [g[0] for g in got] == ["ddl", "c", "u", "ddl", "c", "d"]
    assert got == want


# ---------------------------------------------------------------- without the trigger

#: the WORKLOAD's table as its field schemas describe it: without / with column.propagate.source.type
DERIVED = {
    False: ('CREATE TABLE "public"."items" ("id" integer, "name" text, "price" numeric(10,2), "tags" text[], '
            '"at" timestamptz, "ok" boolean, "amount" numeric, "day" date, "raw" bytea, "tm" time(3), '
            '"ts" timestamp, "iv" interval, "tz" timetz)'),
    True: ('CREATE TABLE "public"."items" ("id" int4, "name" text, "price" numeric(10,2), "tags" text[], '
           '"at" timestamptz, "ok" bool, "amount" numeric, "day" date, "raw" bytea, "tm" time, "ts" timestamp, '
           '"iv" interval, "tz" timetz)'),
}


def test_without_the_trigger_rows_are_typed_by_debeziums_schema(postgres, spark, tmp_path):  # noqa: F811
    """No event trigger, so no DDL: messages with schemas describe the table (CREATE TABLE, the
    marker comment, ALTER TABLE at the first row with the new column), every row typed by it
    and equal to pgoutput's text; a warning once; ``run_pipeline`` types them so (the marker in
    each version's ``_schemas`` model); messages without schemas: quarantined."""
    from ddlcore.history import SchemaHistory
    from ddlcore.model import TableId
    from ddlcore_postgres.debezium_schema import MARKER

    from tests.pg_capture.support import create_capture_db, drop_capture_db, row_text

    db = create_capture_db(postgres, install=False)
    try:
        _slot(db, "dbz")
        db.execute(*WORKLOAD)
        texts: list = []
        plain = debezium_messages(db, "dbz", texts=texts)
        for propagate in (False, True):
            src = tmp_path / f"s{propagate}.jsonl"
            msgs = debezium_messages(db, "dbz", schemas=True, propagate=propagate)
            src.write_text("".join(json.dumps(m) + "\n" for m in msgs))
            warnings: list[str] = []
            out = tmp_path / f"o{propagate}"
            DebeziumCapture(DebeziumCaptureOptions(out=out, from_files=(src,), progress=False),
                            on_warning=warnings.append).run()
            evs = events(out)
            assert [e["op"] for e in evs] == ["source", "ddl", "ddl", "c", "u", "ddl", "c", "d"]
            assert evs[1]["ddl"] == DERIVED[propagate]
            assert evs[2]["ddl"] == "COMMENT ON TABLE \"public\".\"items\" IS '" + MARKER.replace("'", "''") + "'"
            qty = "int4" if propagate else "integer"
            assert evs[5]["ddl"] == f'ALTER TABLE "public"."items" ADD COLUMN "qty" {qty}'
            assert evs[1]["position"] == evs[3]["position"] and evs[5]["position"] == evs[6]["position"]
            rows = [e for e in evs if e["op"] in ("c", "u", "d")]
            assert not any(e.get("quarantine") for e in rows), [e.get("quarantine") for e in rows]
            for e, (op, _before, after) in zip(rows, texts):
                if op == "d":
                    assert row_text(e["before"][0]) == "1" and e["before"][1] == {"$absent": True}
                else:
                    assert [row_text(v) for v in e["after"]] == after, op
            assert [w for w in warnings if "typed by Debezium's field schemas alone" in w] == warnings
            assert len(warnings) == 1 and warnings[0].startswith("public.items: no DDL describes it")
            hist = SchemaHistory.open(out / "history.sqlite")
            try:
                table = hist.table_at(TableId(db.name, "public", "items"), evs[-1]["seq"])
                assert table.comment == MARKER and table.columns[-1].name == "qty"
            finally:
                hist.close()
        _pipeline_of_described(spark, tmp_path / "oTrue", tmp_path / "lake", db.name)
        src = tmp_path / "plain.jsonl"
        src.write_text("".join(json.dumps(m) + "\n" for m in plain))
        stats = DebeziumCapture(DebeziumCaptureOptions(out=tmp_path / "plain", from_files=(src,),
                                                       progress=False)).run()
        reasons = [e.get("quarantine") for e in events(tmp_path / "plain") if e["op"] in ("c", "u", "d")]
        assert stats.quarantined == len(reasons) == 4
        assert all("the message has no schema to type it by" in r for r in reasons), reasons
    finally:
        drop_capture_db(db)


def _pipeline_of_described(spark, log, lake, database: str) -> None:
    """``run_pipeline`` of a log whose table is described by Debezium's schema: no quarantine,
    the Spark types of the derived columns, the marker in both versions' models."""
    from pyspark.sql import types as T

    from ddlcore.spark.pipeline import run_pipeline
    from ddlcore_postgres.debezium_schema import MARKER

    result = run_pipeline(log / "changelog.jsonl", lake, spark=spark, spark_options={"numeric_unconstrained": "string"})
    assert result.quarantined == 0, result.quarantine_reasons
    # v1 the CREATE TABLE, v2 its COMMENT at the same position (before any row), v3 the ALTER
    models = [json.loads(p.read_text())["model"] for p in sorted((lake / "_schemas").glob(f"{database}.public.*"))]
    assert [m.get("comment") for m in models] == [None, MARKER, MARKER]
    table_dir = lake / database / "public" / "items"
    assert sorted(p.name for p in table_dir.glob("schema_version=*")) == ["schema_version=2", "schema_version=3"]
    df = spark.read.parquet(str(table_dir / "schema_version=3"))
    types = {f.name: f.dataType for f in df.schema.fields}
    assert (types["price"], types["at"], types["tags"], types["qty"], types["amount"]) == (
        T.DecimalType(10, 2), T.TimestampType(), T.ArrayType(T.StringType(), True), T.IntegerType(), T.StringType())
    assert [(r["_op"], r["id"], r["qty"]) for r in df.orderBy("_seq").collect()] == [("c", 2, 3), ("d", 1, None)]


# ---------------------------------------------------------------- hypothesis: every type, both ways

from hypothesis import given, settings as hsettings, strategies as st  # noqa: E402

from ddlcore.debezium import DebeziumSettings  # noqa: E402
from ddlcore.model import Column  # noqa: E402
from ddlcore_postgres.debezium_postgres import PostgresConnector  # noqa: E402


def _pg_frac(us: int) -> str:
    return ("." + f"{us:06d}".rstrip("0")) if us else ""


@st.composite
def pg_values(draw):
    """``(column, type oid, typmod, text)``: a value as pgoutput sends it (PostgreSQL's output
    functions with ddlcore's session settings)."""
    kind = draw(st.sampled_from(["int4", "int8", "numeric_ps", "numeric", "text", "bool", "date", "timestamp",
                                 "timestamptz", "time", "bytea", "text[]"]))
    if kind == "int4":
        return Column("c", 1, "integer", "integer", udt_name="int4"), 23, -1, str(draw(st.integers(-2**31, 2**31 - 1)))
    if kind == "int8":
        return Column("c", 1, "bigint", "bigint", udt_name="int8"), 20, -1, str(draw(st.integers(-2**63, 2**63 - 1)))
    if kind in ("numeric_ps", "numeric"):
        s = draw(st.integers(0, 10))
        n = draw(st.integers(-(10**40), 10**40))  # beyond the 28 digits of decimal's default context
        text = format(decimal.Decimal(f"{n}E-{s}"), "f")
        if kind == "numeric":
            return Column("c", 1, "numeric", "numeric", udt_name="numeric"), 1700, -1, text
        col = Column("c", 1, "numeric", f"numeric(38,{s})", numeric_precision=38, numeric_scale=s, udt_name="numeric")
        return col, 1700, ((38 << 16) | s) + 4, text
    if kind == "text":
        return Column("c", 1, "text", "text", udt_name="text"), 25, -1, draw(st.text(max_size=20))
    if kind == "bool":
        return Column("c", 1, "boolean", "boolean", udt_name="bool"), 16, -1, draw(st.sampled_from(["t", "f"]))
    if kind == "date":
        d = draw(st.dates(min_value=dt.date(1, 1, 1), max_value=dt.date(9999, 12, 31)))
        return Column("c", 1, "date", "date", udt_name="date"), 1082, -1, d.isoformat()
    if kind in ("timestamp", "timestamptz"):
        p = draw(st.integers(0, 6))
        d = draw(st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31)))
        d = d.replace(microsecond=d.microsecond - d.microsecond % 10 ** (6 - p))
        text = f"{d.year:04d}-{d:%m-%d %H:%M:%S}" + _pg_frac(d.microsecond)
        if kind == "timestamptz":
            return (Column("c", 1, "timestamp with time zone", f"timestamp({p}) with time zone", datetime_precision=p,
                           udt_name="timestamptz"), 1184, p, text + "+00")
        return (Column("c", 1, "timestamp without time zone", f"timestamp({p}) without time zone",
                       datetime_precision=p, udt_name="timestamp"), 1114, p, text)
    if kind == "time":
        p = draw(st.integers(0, 6))
        us = draw(st.integers(0, 86_400_000_000 - 1))
        us -= us % 10 ** (6 - p)
        secs, frac = divmod(us, 1_000_000)
        text = f"{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}{_pg_frac(frac)}"
        return (Column("c", 1, "time without time zone", f"time({p}) without time zone", datetime_precision=p,
                       udt_name="time"), 1083, p, text)
    if kind == "bytea":
        return Column("c", 1, "bytea", "bytea", udt_name="bytea"), 17, -1, "\\x" + draw(st.binary(max_size=10)).hex()
    items = draw(st.lists(st.none() | st.text(alphabet="ab ,{}\"\\xN", max_size=4), max_size=4))
    col = Column("c", 1, "ARRAY", "text[]", array_dimensions=1, udt_name="_text")
    return col, 1009, -1, PostgresConnector().value_text(items, col, None, DebeziumSettings())


@hsettings(max_examples=400, deadline=None)
@given(pg_values())
def test_every_postgres_type_decodes_back_to_pgoutput_text(case):
    col, oid, typmod, text = case
    encoded = encode(text, oid, typmod)
    got = PostgresConnector().value_text(encoded, col, None, DebeziumSettings())
    assert got == text, (col.column_type, text, encoded, got)
