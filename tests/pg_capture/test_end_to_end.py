"""PostgreSQL end to end against a real PostgreSQL 15 (issue 13, "How it is verified"):

    pg_shop setup (tables exist before the capture) → ``ddlcore capture postgres --snapshot
    initial`` → the pg_shop workload + this module's extras, recording what the server returned
    to ``SELECT`` right after every change → the capture again (resumes) → ``ddlcore run``

and every row of the Parquet output equals the row the server returned at that moment, typed as
the Spark mapping of *that moment's* schema says.  The oracle is the server: the expected Spark
type comes from ``information_schema.columns`` / ``format_type`` at the moment of the change
(``expected_type``), the expected value from the server's text (``expected_value``), both
written here from docs/postgres.md's mapping, not from ddlcore's rules.

The pg_shop workload (examples/pg_shop/workload.py) adds, drops, renames and retypes columns
(``ALTER COLUMN TYPE ... USING`` with a row after it in the same transaction), adds an enum
label, changes a domain, renames a table and moves it to another schema, runs several DDL
statements in one query string, updates rows whose TOASTed value it leaves unchanged, ends
with an ``ADD COLUMN`` no row follows.  The extras (``extras``): a table whose quoted column
names differ only in case, and a ``REPLICA IDENTITY FULL`` table with a TOASTed value (the old
row carries it: the capture writes it into the new image too).

One pipeline run with ``numeric_unconstrained=string`` (so the unconstrained ``numeric``
values ``NaN`` and ``1e-20`` compare exactly); the one row Spark cannot hold — a 2-D value in
an ``int[]`` column — must be in the quarantine with its column and reason.
"""

from __future__ import annotations

import datetime as dt
import json
import struct
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg
import pytest

from .support import create_capture_db, drop_capture_db, events, pg_shop_workload, run_capture

W = pg_shop_workload()

pytest.importorskip("pyspark")
from pyspark.sql import types as T  # noqa: E402

#: the workload table names whose rows are one lineage (the table renamed, then moved)
LINEAGE = {("public", "orders"): "orders", ("public", "purchases"): "orders", ("archive", "purchases"): "orders"}
#: primary keys of the extras' tables
EXTRA_KEYS = {"people": "id", "notes": "id"}
BIG = "(SELECT string_agg(md5(i::text), '') FROM generate_series(1, 200) i)"  # 6400 bytes, incompressible


# --------------------------------------------------------------------------------------------
# the oracle: the server's type → Spark type, the server's text → the Spark value
# --------------------------------------------------------------------------------------------

_SCALAR = {"int2": T.ShortType(), "int4": T.IntegerType(), "int8": T.LongType(), "float4": T.FloatType(),
           "float8": T.DoubleType(), "bool": T.BooleanType(), "date": T.DateType(),
           "timestamp": T.TimestampNTZType(), "timestamptz": T.TimestampType(), "bytea": T.BinaryType(),
           "money": T.DecimalType(19, 2)}


def expected_type(data_type: str, udt: str, fmt: str) -> T.DataType:
    """docs/postgres.md "Spark type mapping", with ``numeric_unconstrained=string``."""
    if data_type == "ARRAY":
        return T.ArrayType(expected_type("", udt[1:], fmt.removesuffix("[]")), True)
    if udt == "numeric":
        if fmt.startswith("numeric("):
            p, s = fmt[len("numeric("):-1].split(",")
            return T.DecimalType(int(p), int(s))
        return T.StringType()
    return _SCALAR.get(udt, T.StringType())  # text, varchar, enums, uuid, jsonb, interval, ...


def _array_items(text: str) -> list[str | None] | None:
    """A one-dimensional array's elements as the server prints them (no quoted elements in
    this workload); ``None`` for a multi-dimensional value."""
    assert text.startswith("{") and text.endswith("}"), text
    if text.startswith("{{"):
        return None
    body = text[1:-1]
    assert '"' not in body, text
    return [None if x == "NULL" else x for x in body.split(",")] if body else []


def expected_value(text: str | None, data_type: str, udt: str, fmt: str) -> Any:
    if text is None:
        return None
    if data_type == "ARRAY":
        items = _array_items(text)
        return None if items is None else [expected_value(x, "", udt[1:], fmt) for x in items]
    if udt in ("int2", "int4", "int8"):
        return int(text)
    if udt == "float8":
        return float(text)
    if udt == "float4":  # Spark's FloatType collects the float32 value as a Python float
        return struct.unpack("f", struct.pack("f", float(text)))[0]
    if udt == "numeric":
        return Decimal(text) if fmt.startswith("numeric(") else text
    if udt == "bool":
        return {"t": True, "f": False}[text]
    if udt == "date":
        return dt.date.fromisoformat(text)
    if udt == "timestamp":
        return dt.datetime.fromisoformat(text)
    if udt == "timestamptz":
        return dt.datetime.fromisoformat(text).astimezone(dt.timezone.utc)
    if udt == "bytea":
        assert text.startswith("\\x")
        return bytes.fromhex(text[2:])
    if udt == "money":  # lc_monetary C: $1,234.56 / -$0.99
        return Decimal(text.replace("$", "").replace(",", ""))
    return text


def spark_value(value: Any) -> Any:
    """A collected value as comparable: binary as bytes, arrays item by item."""
    if isinstance(value, bytearray):
        return bytes(value)
    if isinstance(value, list):
        return [spark_value(v) for v in value]
    return value


def field_value(value: Any, field: T.StructField) -> Any:
    """A collected value of ``field``; a TimestampType value (PySpark gives a naive datetime in
    the process's local zone) as the UTC instant."""
    if value is not None and isinstance(field.dataType, T.TimestampType):
        return value.astimezone(dt.timezone.utc)
    return spark_value(value)


# --------------------------------------------------------------------------------------------
# the run
# --------------------------------------------------------------------------------------------


def extras(conn: Any, record: Any) -> None:
    """After the pg_shop workload: case-colliding quoted column names; a REPLICA IDENTITY FULL
    table whose update leaves a TOASTed value unchanged; a retype whose row follows in the
    same transaction, then a DDL no row follows."""

    def change(table: str, op: str, pk: Any, sql: str) -> None:
        assert conn.execute(sql).rowcount == 1, sql
        rows = W._text_rows(conn, f'SELECT * FROM public."{table}" WHERE "{EXTRA_KEYS[table]}" = %s', (pk,))
        record("public", table, op, str(pk), rows[0] if rows else None, W.columns(conn, "public", table))

    conn.execute('CREATE TABLE people (id integer PRIMARY KEY, "Name" text, name varchar(10), "NAME" integer)')
    change("people", "c", 1, """INSERT INTO people VALUES (1, 'Upper', 'lower', 3)""")
    change("people", "u", 1, """UPDATE people SET name = 'low2', "NAME" = 4 WHERE id = 1""")
    conn.execute("CREATE TABLE notes (id integer PRIMARY KEY, body text, n integer)")
    conn.execute("ALTER TABLE notes REPLICA IDENTITY FULL")
    change("notes", "c", 1, f"INSERT INTO notes VALUES (1, 'toast ' || {BIG}, 1)")
    change("notes", "u", 1, "UPDATE notes SET n = 2 WHERE id = 1")  # body: unchanged, TOASTed
    conn.execute("BEGIN")
    conn.execute("ALTER TABLE notes ALTER COLUMN n TYPE numeric(6,1) USING n * 1.5")
    change("notes", "u", 1, "UPDATE notes SET n = n + 0.1 WHERE id = 1")
    conn.execute("COMMIT")
    conn.execute("ALTER TABLE notes ADD COLUMN tag text")  # no row after it


@pytest.fixture(scope="module")
def e2e(postgres, spark, tmp_path_factory):
    pytest.importorskip("psycopg2", reason="the capture extra (psycopg2) is not installed")
    from ddlcore.spark.pipeline import run_pipeline

    tmp = tmp_path_factory.mktemp("pg_e2e")
    db = create_capture_db(postgres)
    expected: list[tuple] = []
    try:
        conn = psycopg.connect(db.dsn, autocommit=True, options=W.connect_options())
        try:
            W.setup(conn, lambda *change: expected.append(change))
            capture = tmp / "capture"
            run_capture(db, capture, snapshot="initial")
            W.run(conn, lambda *change: expected.append(change))
            extras(conn, lambda *change: expected.append(change))
            run_capture(db, capture)
        finally:
            conn.close()
        # what the server said, kept next to the output for a look after a failure
        (tmp / "expected.json").write_text(json.dumps(expected, ensure_ascii=False))
        out = tmp / "out"
        result = run_pipeline(capture / "changelog.jsonl", out, spark=spark,
                              spark_options={"numeric_unconstrained": "string"})
        yield {"db": db.name, "expected": expected, "capture": capture, "out": out, "result": result}
    finally:
        drop_capture_db(db)


def read_output(spark, out: Path, database: str) -> list[tuple]:
    """Every output row as ``(schema, table, version, data StructType, Row)``, by ``_seq``;
    checks each version's files against its ``_schemas`` struct_type."""
    rows = []
    # a table whose column names differ only in case is readable only case-sensitively
    spark.conf.set("spark.sql.caseSensitive", "true")
    for vdir in sorted((out / database).glob("*/*/schema_version=*")):
        schema, table, version = vdir.parent.parent.name, vdir.parent.name, int(vdir.name.split("=")[1])
        df = spark.read.parquet(str(vdir))
        data = T.StructType([f for f in df.schema.fields if not f.name.startswith("_")])
        declared = T.StructType.fromJson(json.loads(
            (out / "_schemas" / f"{database}.{schema}.{table}.v{version}.json").read_text())["struct_type"])
        assert [(f.name, f.dataType, f.metadata) for f in data] == \
               [(f.name, f.dataType, f.metadata) for f in declared.fields], f"{schema}.{table} v{version}"
        rows += [(schema, table, version, data, r) for r in df.collect()]
    spark.conf.set("spark.sql.caseSensitive", "false")
    rows.sort(key=lambda x: x[4]["_seq"])
    return rows


def quarantine(out: Path) -> list[dict]:
    return [json.loads(line) for f in sorted((out / "_quarantine").glob("*.json"))
            for line in f.read_text().splitlines() if line.strip()]


def _is_2d(row, columns) -> bool:
    return any(c[1] == "ARRAY" and v is not None and v.startswith("{{") for v, c in zip(row or (), columns))


# --------------------------------------------------------------------------------------------
# the tests
# --------------------------------------------------------------------------------------------


def test_every_output_row_equals_what_select_returned_with_that_moments_types(e2e, spark):
    out, expected = e2e["out"], e2e["expected"]
    got = read_output(spark, out, e2e["db"])
    bad = quarantine(out)
    # the one value Spark cannot hold: a 2-D value written into an int[] column
    want_bad = [(s, t, op, pk) for s, t, op, pk, row, cols in expected if _is_2d(row, cols)]
    assert want_bad == [("public", "products", "u", "mug")]
    assert [(q["schema"], q["table"], q["op"]) for q in bad] == [("public", "products", "u")], bad
    assert bad[0]["reason"].startswith("cannot convert: sizes ({{1,2},{3,NULL}})") or \
        bad[0]["reason"].startswith("cannot convert: sizes"), bad[0]["reason"]
    assert e2e["result"].quarantined == 1 and e2e["result"].drift == []

    written = [e for e in expected if not _is_2d(e[4], e[5])]
    assert [(s, t, r["_op"]) for s, t, _v, _d, r in got] == [(s, t, op) for s, t, op, *_ in written]
    assert e2e["result"].rows == len(written)

    state: dict[tuple, dict[str, Any]] = {}  # (lineage, pk) → column → the merged Spark value
    versions: dict[tuple, int] = {}
    absent_seen = 0
    for (schema, table, version, data, r), (_s, _t, op, pk, row, columns) in zip(got, written):
        where = f"seq {r['_seq']} {op} {schema}.{table} v{version} pk={pk}"
        assert r["_position"] and r["_ts"] and (op == "r" or r["_tx"]), where
        assert versions.get((schema, table), 0) <= version, f"{where}: versions go back in time"
        versions[(schema, table)] = version
        # the schema of that moment: names, Spark types, the native type in the metadata
        assert data.names == [c[0] for c in columns], f"{where}: columns differ from the server's"
        for field, (name, data_type, udt, fmt) in zip(data.fields, columns):
            assert field.dataType == expected_type(data_type, udt, fmt), \
                f"{where}: {name} {fmt} is {field.dataType.simpleString()}"
            assert field.metadata.get("column_type") == fmt, f"{where}: {name}: {field.metadata.get('column_type')}"
        key = (LINEAGE.get((schema, table), table), pk)
        if op == "t":
            assert all(r[f.name] is None for f in data.fields), where
            state = {k: v for k, v in state.items() if k[0] != key[0]}
            continue
        key_name = EXTRA_KEYS.get(table) or W.PRIMARY_KEYS[table]
        if op == "d":
            assert str(r[key_name]) == pk, where
            assert set(r["_absent"] or ()) == set(data.names) - {key_name}, where  # replica identity DEFAULT
            state.pop(key, None)
            continue
        absent = set(r["_absent"] or ())
        merged = dict(state.get(key, {})) if op == "u" else {}
        for field, (name, data_type, udt, fmt), text in zip(data.fields, columns, row):
            have = field_value(r[field.name], field)
            if name in absent:
                # an unchanged TOASTed value: null *and* named in _absent, never passed off as
                # NULL; a reader keeps the previous value, which must be what SELECT returned
                assert op == "u" and have is None and len(text) > 2000, f"{where}: {name} absent"
                absent_seen += 1
                have = merged.get(name)
            want = expected_value(text, data_type, udt, fmt)
            assert have == want, f"{where}: {name} {fmt}: got {have!r}, the server said {want!r}"
            if want is not None:
                assert type(have) is type(want), f"{where}: {name}: {type(have)} vs {type(want)}"
            merged[name] = have
        state[key] = merged
        if op == "u":
            before = r["_before"]
            assert before is not None and str(before[key_name]) == pk, where
        else:
            assert r["_before"] is None, where
    # the pg_shop updates of customer 1 leave its bio unchanged (replica identity DEFAULT);
    # the REPLICA IDENTITY FULL table's update gives the old row, so nothing is absent there
    assert absent_seen == 2


def test_toasted_value_under_replica_identity_full_is_written_not_absent(e2e):
    evs = [e for e in events(e2e["capture"]) if e.get("table") == "notes" and e["op"] == "u"]
    assert len(evs) == 2
    for ev in evs:
        assert {"$absent": True} not in ev["after"], ev["seq"]
        assert ev["after"][1] == ev["before"][1] and len(ev["after"][1]) > 2000


def test_a_retype_then_a_row_in_the_same_transaction_reads_the_row_with_the_new_type(e2e, spark):
    out, db = e2e["out"], e2e["db"]
    # orders.total numeric(10,2) → text USING ...: order 13, inserted right after it
    rows = {}
    for vdir in (out / db / "public" / "orders").glob("schema_version=*"):
        schema = json.loads((out / "_schemas" / f"{db}.public.orders.{vdir.name.replace('schema_version=', 'v')}.json")
                            .read_text())
        total = next(c for c in schema["model"]["columns"] if c["name"] == "total")
        for r in spark.read.parquet(str(vdir)).where("id = 13").collect():
            rows[r["_seq"]] = (total["column_type"], r["total"])
    assert list(rows.values()) == [("text", "7.125 EUR")]
    # notes.n integer → numeric(6,1): the update right after it
    vdirs = sorted((out / db / "public" / "notes").glob("schema_version=*"))
    last = spark.read.parquet(str(vdirs[-1])).collect()
    assert [(r["_op"], r["n"], r["_before"]["n"]) for r in last] == [("u", Decimal("3.1"), Decimal("3.0"))]


def test_ddl_with_no_row_after_it_still_makes_a_version_at_its_lsn(e2e):
    """The last events of the log are DDL no row follows (``ADD COLUMN loyalty`` of the
    workload, ``ADD COLUMN tag`` of the extras): each is a version of the history, valid from
    that DDL event's seq, which holds the new column — not waiting for a row to reveal it."""
    evs = events(e2e["capture"])
    for table, column, text in (("customers", "loyalty", "ADD COLUMN loyalty"), ("notes", "tag", "ADD COLUMN tag")):
        ddl = [e for e in evs if e["op"] == "ddl" and text in e["ddl"]]
        assert len(ddl) == 1, text
        seq, lsn = ddl[0]["seq"], ddl[0]["position"]
        assert not [e for e in evs if e["seq"] > seq and e.get("table") == table], f"a row of {table} follows"
        schemas = [json.loads(p.read_text()) for p in (e2e["out"] / "_schemas").glob(f"{e2e['db']}.public.{table}.v*.json")]
        last = max(schemas, key=lambda s: s["valid_from_seq"])
        assert last["valid_from_seq"] == seq, (table, lsn)
        assert [c["name"] for c in last["model"]["columns"]][-1] == column


def test_case_colliding_column_names_are_all_written(e2e, spark):
    out, db = e2e["out"], e2e["db"]
    vdirs = sorted((out / db / "public" / "people").glob("schema_version=*"))
    assert len(vdirs) == 1
    try:
        spark.conf.set("spark.sql.caseSensitive", "true")  # as docs/pipeline.md tells readers
        df = spark.read.parquet(str(vdirs[0]))
        assert [f.name for f in df.schema.fields if not f.name.startswith("_")] == ["id", "Name", "name", "NAME"]
        rows = [(r["_op"], r["id"], r["Name"], r["name"], r["NAME"], r["_before"] and r["_before"]["id"])
                for r in df.orderBy("_seq").collect()]
    finally:
        spark.conf.set("spark.sql.caseSensitive", "false")
    assert rows == [("c", 1, "Upper", "lower", 3, None), ("u", 1, "Upper", "low2", 4, 1)]


def test_current_state_keeps_unchanged_toasted_values(e2e, spark):
    """An update that leaves a TOASTed value out (``_absent``, replica identity DEFAULT) keeps
    the value the row had in the current state (``ddlcore.read_table(current=True)``,
    docs/tables.md), where the changes themselves hold null for it."""
    import ddlcore

    out, db = e2e["out"], e2e["db"]
    absent = [(table, r["_seq"], set(r["_absent"])) for _s, table, _v, _d, r in read_output(spark, out, db)
              if r["_absent"] and r["_op"] == "u"]
    assert len(absent) == 2
    checked = 0
    for table, seq, names in absent:
        current = {r["_seq"]: r.asDict() for r in
                   ddlcore.read_table(spark, out, f"{db}.public.{table}", current=True).collect()}
        row = current.get(seq)
        if row is None:
            continue  # the row changed again later (or was deleted)
        for name in names:
            assert row[name] is not None and len(row[name]) > 2000, (table, seq, name)
            assert name not in row["_unknown"]
        checked += 1
    assert checked >= 1
