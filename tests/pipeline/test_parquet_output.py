"""What other engines see in ``ddlcore run``'s Parquet files, read with pyarrow (no Spark):
timestamps as INT64 ``TIMESTAMP(MICROS)`` (never INT96), ``_ts`` an int64 of milliseconds, and
each column's source facts (native ``column_type``, enum/set labels, charset) in the footer's
key-value metadata under the documented key, turned into Arrow field metadata as
docs/pipeline.md shows."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from ddlcore.raw import encode_json as e

pytest.importorskip("pyspark")
pq = pytest.importorskip("pyarrow.parquet")
pa = pytest.importorskip("pyarrow")

from ddlcore.spark import pipeline as pl  # noqa: E402

#: the footer key that holds Spark's StructType JSON, field metadata included (docs/pipeline.md)
SPARK_SCHEMA_KEY = b"org.apache.spark.sql.parquet.row.metadata"


def write_log(path: Path) -> Path:
    events = [
        {"op": "ddl", "database": "shop", "ddl": "CREATE DATABASE shop"},
        {"op": "ddl", "database": "shop", "ddl":
            "CREATE TABLE t (id int unsigned NOT NULL PRIMARY KEY, status enum('new','paid'), "
            "tags set('a','b','c'), note varchar(20) CHARACTER SET latin1, placed datetime(6), "
            "changed timestamp(3))"},
        {"op": "c", "database": "shop", "table": "t",
         "after": [e(-1), e(2), e(5), e(b"caf\xe9"), e("2024-02-29 13:14:15.123456"), e("2024-03-01 00:00:01.250")]},
        {"op": "u", "database": "shop", "table": "t",
         "before": [e(-1), e(2), e(5), e(b"caf\xe9"), e("2024-02-29 13:14:15.123456"), e("2024-03-01 00:00:01.250")],
         "after": [e(-1), e(1), e(0), e(None), e(None), e("2024-03-01 00:00:02.500")]},
    ]
    with open(path, "w") as fh:
        for i, ev in enumerate(events, start=1):
            ev.update(seq=i, position=f"bin.000001:{100 * i}", ts=1_700_000_000_000 + i)
            fh.write(json.dumps(ev) + "\n")
    return path


def arrow_schema_with_field_metadata(path: Path) -> "pa.Schema":
    """The recipe of docs/pipeline.md ("Reading the output without Spark"), verbatim."""
    import json

    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    spark = json.loads(schema.metadata[b"org.apache.spark.sql.parquet.row.metadata"])
    facts = {f["name"]: f["metadata"] for f in spark["fields"]}
    return pa.schema([f.with_metadata({k: json.dumps(v) for k, v in facts.get(f.name, {}).items()})
                      for f in schema])


@pytest.fixture(scope="module")
def output(spark, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("parquet-output")
    # a session of the caller's, with Spark's default (INT96): the run writes micros anyway and
    # leaves the session's setting as it was
    before = spark.conf.get("spark.sql.parquet.outputTimestampType")
    spark.conf.set("spark.sql.parquet.outputTimestampType", "INT96")
    try:
        res = pl.run_pipeline(write_log(tmp / "log.jsonl"), tmp / "out", spark=spark, dialect="mysql")
        assert spark.conf.get("spark.sql.parquet.outputTimestampType") == "INT96"
    finally:
        spark.conf.set("spark.sql.parquet.outputTimestampType", before)
    assert res.rows == 2 and res.quarantined == 0
    files = sorted((tmp / "out" / "shop" / "t" / "schema_version=1").glob("*.parquet"))
    assert files
    return tmp / "out", files


def test_timestamps_are_int64_micros_never_int96(output):
    out, files = output
    every = sorted(out.rglob("*.parquet"))
    for f in every:  # no INT96 anywhere in the output
        schema = pq.ParquetFile(f).schema
        assert all(schema.column(i).physical_type != "INT96" for i in range(len(schema))), f
    schema = pq.ParquetFile(files[0]).schema
    cols = {schema.column(i).path: schema.column(i) for i in range(len(schema))}
    for name, utc in (("placed", False), ("changed", True), ("_before.placed", False), ("_before.changed", True)):
        c = cols[name]
        assert c.physical_type == "INT64", name
        lt = c.logical_type
        assert lt.type == "TIMESTAMP", name
        assert json.loads(lt.to_json()) == {"Type": "Timestamp", "isAdjustedToUTC": utc, "timeUnit": "microseconds",
                                            "is_from_converted_type": False, "force_set_converted_type": False}
    arrow = pq.read_schema(files[0])
    assert arrow.field("placed").type == pa.timestamp("us")
    assert arrow.field("changed").type == pa.timestamp("us", tz="UTC")
    assert arrow.field("_ts").type == pa.int64() and cols["_ts"].logical_type.type == "NONE"
    rows = sorted(pq.read_table(files).to_pylist(), key=lambda r: r["_seq"])
    assert rows[0]["placed"] == dt.datetime(2024, 2, 29, 13, 14, 15, 123456)
    assert rows[0]["changed"] == dt.datetime(2024, 3, 1, 0, 0, 1, 250000, tzinfo=dt.timezone.utc)
    assert rows[1]["_before"]["placed"] == dt.datetime(2024, 2, 29, 13, 14, 15, 123456)
    assert [r["_ts"] for r in rows] == [1_700_000_000_003, 1_700_000_000_004]  # ms since the epoch


def test_column_facts_are_in_the_footer_and_become_arrow_field_metadata(output):
    _, files = output
    raw = pq.read_schema(files[0])
    # Spark's field metadata is not Arrow field metadata by itself: it is the footer's key
    assert raw.field("status").metadata is None
    assert SPARK_SCHEMA_KEY in raw.metadata
    schema = arrow_schema_with_field_metadata(files[0])
    md = {f.name: {k.decode(): json.loads(v) for k, v in (f.metadata or {}).items()} for f in schema}
    assert md["id"]["column_type"] == "int(10) unsigned" and md["id"]["unsigned"] is True
    assert md["status"]["column_type"] == "enum('new','paid')" and md["status"]["enum_values"] == ["new", "paid"]
    assert md["tags"]["column_type"] == "set('a','b','c')" and md["tags"]["set_values"] == ["a", "b", "c"]
    assert md["note"]["character_set_name"] == "latin1" and md["note"]["column_type"] == "varchar(20)"
    assert md["placed"]["column_type"] == "datetime(6)" and md["changed"]["column_type"] == "timestamp(3)"
    assert all(m["dialect"] == "mysql" for n, m in md.items() if not n.startswith("_"))
    assert md["_ts"] == {"comment": "commit time of the change: milliseconds since the Unix epoch (UTC)", "unit": "ms"}
    assert set(md) == {"id", "status", "tags", "note", "placed", "changed", *pl.META_COLUMNS}
    # the before image's fields carry the same facts
    spark_json = json.loads(raw.metadata[SPARK_SCHEMA_KEY])
    before = next(f for f in spark_json["fields"] if f["name"] == "_before")["type"]["fields"]
    assert {f["name"]: f["metadata"]["column_type"] for f in before}["status"] == "enum('new','paid')"
    # the values read back with those facts
    rows = sorted(pq.read_table(files).to_pylist(), key=lambda r: r["_seq"])
    assert (rows[0]["id"], rows[0]["status"], rows[0]["tags"], rows[0]["note"]) == (4294967295, "paid", ["a", "c"], "café")
