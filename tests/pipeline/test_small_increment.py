"""The driver-side path of a small incremental run (``ddlcore.spark.small``) against the Spark
path: the same increment, appended to the same committed output, processed by each (forced with
``small.MAX_BYTES``), gives the same output — rows and Parquet schemas (physical, Spark's
footer metadata, as pyarrow and Spark read them), ``_run.json`` counts, quarantine records,
``malformed.json`` — on logs that exercise inserts, updates, deletes, absent values, DDL in the
increment, an unknown table, statement-format DML, a capture quarantine, malformed lines, a
value that cannot be converted, a row of the wrong arity, a blocked table, a version whose
columns collide with the pipeline's, rows before the checkpoint, MySQL and PostgreSQL types."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")
import pyarrow.parquet as pq  # noqa: E402

from ddlcore.spark import pipeline as pl  # noqa: E402
from ddlcore.spark import small  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _lines(path: Path) -> list[str]:
    return [ln for ln in path.read_text().splitlines() if ln.strip()]


def _event(seq: int, **k) -> str:
    k = {"seq": seq, "position": f"p:{seq}", "ts": 1_718_002_000_000 + seq, **k}
    return json.dumps(k)


def _row_files(out: Path) -> dict[str, list[Path]]:
    found: dict[str, list[Path]] = {}
    for f in sorted(out.rglob("*.parquet")):
        rel = f.relative_to(out)
        if rel.parts[0].startswith("_"):
            continue
        found.setdefault(str(rel.parent), []).append(f)
    return found


def _quarantine(out: Path) -> list[dict]:
    return sorted((json.loads(ln) for f in (out / "_quarantine").glob("*.json") for ln in _lines(f)),
                  key=lambda r: json.dumps(r, sort_keys=True))


def _state(out: Path, name: str):
    path = out / "_state" / name
    return json.loads(path.read_text()) if path.exists() else None


def _columns(f: Path) -> list[tuple]:
    schema = pq.ParquetFile(f).schema
    return [(c.path, c.physical_type, str(c.logical_type), c.converted_type, c.max_definition_level,
             c.max_repetition_level, c.precision, c.scale, c.length) for c in (schema.column(i) for i in range(len(schema)))]


def _canonical_rows(table: pa.Table) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=repr) for r in table.to_pylist())


def assert_same_output(spark, a: Path, b: Path, run_id_a: str, run_id_b: str) -> None:
    """``a`` and ``b`` hold the same output: rows of every version directory (pyarrow and
    Spark), each file's Parquet schema and Spark footer, ``_run.json`` (last run and totals,
    but its seconds), quarantine records, ``malformed.json``, checkpoint ``last_seq``, schema
    files."""
    fa, fb = _row_files(a), _row_files(b)
    assert sorted(fa) == sorted(fb)
    for d in fa:
        ta = pa.concat_tables([pq.read_table(f) for f in fa[d]])
        tb = pa.concat_tables([pq.read_table(f) for f in fb[d]])
        assert _canonical_rows(ta) == _canonical_rows(tb), d
        for f in fa[d] + fb[d]:  # every file: the same physical schema and Spark footer as the first
            ref = (fa[d] + fb[d])[0]
            # every column: the same path, physical and logical type, repetition (the root's
            # name is the writer's: "spark_schema" or pyarrow's "schema")
            assert _columns(f) == _columns(ref), (d, f.name)
            meta, ref_meta = pq.read_schema(f).metadata, pq.read_schema(ref).metadata
            assert json.loads(meta[small.ROW_METADATA_KEY.encode()]) == json.loads(
                ref_meta[small.ROW_METADATA_KEY.encode()]), (d, f.name)
            assert meta[small.SPARK_VERSION_KEY.encode()] == ref_meta[small.SPARK_VERSION_KEY.encode()]
            assert pq.ParquetFile(f).schema_arrow.remove_metadata() == pq.ParquetFile(ref).schema_arrow.remove_metadata()
        sa, sb = spark.read.parquet(str(a / d)), spark.read.parquet(str(b / d))
        assert sa.schema.jsonValue() == sb.schema.jsonValue(), d
        assert sorted(map(repr, sa.collect())) == sorted(map(repr, sb.collect())), d
    ra, rb = json.loads((a / "_run.json").read_text()), json.loads((b / "_run.json").read_text())
    for r in (ra, rb):
        r["last_run"].pop("seconds")
    assert ra == rb
    assert _quarantine(a) == _quarantine(b)
    assert _state(a, "malformed.json") == _state(b, "malformed.json")
    assert _state(a, "checkpoint.json")["last_seq"] == _state(b, "checkpoint.json")["last_seq"]
    sch_a = {f.name: json.loads(f.read_text()) for f in (a / "_schemas").glob("*.json")}
    sch_b = {f.name: json.loads(f.read_text()) for f in (b / "_schemas").glob("*.json")}
    assert sch_a == sch_b


def _both_ways(spark, tmp_path: Path, monkeypatch, first: list[str], increment: list[str], **kw):
    """``first`` committed by a (Spark) run; then ``increment`` appended and processed by the
    driver-side path into the output and by the Spark path into a copy of it.  Returns the
    two outputs and the two results."""
    log = tmp_path / "changelog.jsonl"
    log.write_text("".join(ln + "\n" for ln in first))
    out_small, out_spark = tmp_path / "small", tmp_path / "spark"
    pl.run_pipeline(log, out_small, spark=spark, **kw)
    shutil.copytree(out_small, out_spark)
    with open(log, "a") as fh:
        fh.write("".join(ln + "\n" for ln in increment))
    said: list[str] = []
    monkeypatch.setattr(small, "MAX_BYTES", -1)
    res_spark = pl.run_pipeline(log, out_spark, spark=spark, progress=said.append, **kw)
    assert not any("on the driver" in m for m in said)
    said.clear()
    monkeypatch.setattr(small, "MAX_BYTES", 4 << 20)
    jobs_before = spark.sparkContext.statusTracker().getJobIdsForGroup(None)
    res_small = pl.run_pipeline(log, out_small, spark=spark, progress=said.append, **kw)
    assert any("on the driver" in m for m in said), said
    assert spark.sparkContext.statusTracker().getJobIdsForGroup(None) == jobs_before  # no Spark job
    assert_same_output(spark, out_small, out_spark, "", "")
    # every data and quarantine file is named after the run that wrote it (the commit's rule)
    named = [f.name for files in _row_files(out_small).values() for f in files]
    named += [f.name for f in (out_small / "_quarantine").glob("*.json")]
    assert named and all(re.match(r"\d{8}T\d{6}-[0-9a-f]{8}-", n) for n in named), named
    for field in ("events", "rows", "quarantined", "ddl", "counts", "quarantine_reasons", "last_seq",
                  "previous_seq", "versions_written", "dialect"):
        assert getattr(res_small, field) == getattr(res_spark, field), field
    return out_small, out_spark, res_small, res_spark


def test_mysql_increment_driver_path_equals_spark_path(spark, tmp_path, monkeypatch):
    lines = _lines(EXAMPLES / "shop" / "changelog.jsonl")  # recorded from MariaDB: 49 events
    first, rest = lines[:29], lines[29:]
    n = len(lines)
    absent = {"$absent": True}
    extra = [
        _event(n + 1, op="ddl", database="shop",
               ddl="CREATE TABLE extra (id int unsigned NOT NULL PRIMARY KEY, status enum('a','b'), "
                   "note varchar(10) CHARACTER SET latin1, amount decimal(30,2), small decimal(5,2), "
                   "big decimal(15,3), at datetime(6), ts timestamp(3), d date, t time, flags set('x','y'), "
                   "b bit(1), f float, dbl double, bin varbinary(4), j json, tiny tinyint, y year)"),
        _event(n + 2, op="c", database="shop", table="extra", tx="0-1-77", row=0,
               after=[-1, 2, {"$b64": "Y2Fm6Q=="}, {"$dec": "123456789012345678901234.50"}, {"$dec": "-1.50"},
                      {"$dec": "1234.567"}, {"$datetime": "2024-02-29 13:14:15.123456"},
                      {"$datetime": "2024-03-01 00:00:00.250"}, {"$date": "1500-01-01"},
                      {"$time": "-838:59:59.000000"}, 3, 1, 1.5, 2.25, {"$b64": "AAE="}, {"$json": "{\"k\": [1]}"},
                      -5, 2024]),
        _event(n + 3, op="c", database="shop", table="extra",  # zero date, nulls, absent values
               after=[2, None, absent, None, None, None, {"$datetime": "0000-00-00 00:00:00"}, None,
                      {"$date": "0000-00-00"}, None, 0, 0, None, None, None, None, None, None]),
        _event(n + 4, op="u", database="shop", table="extra",
               before=[2, None, absent, None, None, None, None, None, None, None, 0, 0, None, None, None, None,
                       None, None],
               after=[2, 1, {"$b64": "eA=="}, absent, None, None, None, None, None, None, 1, 0, None, None, None,
                      None, None, None]),
        _event(n + 5, op="c", database="shop", table="extra",  # enum index out of range: quarantined
               after=[3, 9, None, None, None, None, None, None, None, None, 0, 0, None, None, None, None, None,
                      None]),
        _event(n + 6, op="c", database="shop", table="extra", after=[4, 1]),  # wrong arity
        _event(n + 7, op="d", database="shop", table="extra",
               before=[-1, 2, None, None, None, None, None, None, None, None, 0, 0, None, None, None, None, None,
                       None]),
        _event(n + 8, op="c", database="shop", table="nowhere", after=[1]),  # unknown table
        _event(n + 9, op="stmt", database="shop", ddl="UPDATE extra SET status = 1 WHERE id > " + "9" * 400),
        _event(n + 10, op="c", database="shop", table="extra", quarantine="drift: 3 columns in the binlog, 18 known",
               after=[5, 1, None]),
        "this line is not JSON",
        json.dumps({"position": "p:x", "op": "c", "database": "shop", "table": "extra", "after": [6]}),  # no seq
        _event(n + 11, op="c", database="shop", table="extra"),  # no after image
        _event(3, op="c", database="shop", table="extra", after=[7]),  # before the checkpoint: left out unparsed
        # before the checkpoint, but parsed (an escaped letter of "seq" in a value)
        _event(4, op="c", database="shop", table="extra", after=[8], tx="SEQ").replace("SEQ", "\\u0073eq"),
        _event(n + 12, op="ddl", database="shop", ddl="CREATE TABLE coll (id int, _op int)"),
        _event(n + 13, op="c", database="shop", table="coll", after=[1, 2]),  # its columns collide
        _event(n + 14, op="ddl", database="shop", ddl="ALTER TABLE extra ADD COLUMN ((( garbage"),
        _event(n + 15, op="c", database="shop", table="extra", after=[9]),  # blocked
        _event(n + 16, op="t", database="shop", table="purchases"),
    ]
    out_small, _, res, _ = _both_ways(spark, tmp_path, monkeypatch, first, rest + extra)
    assert res.rows > 0 and res.quarantined >= 9, res.quarantine_reasons
    reasons = {r["reason"] for r in _quarantine(out_small)}
    assert any(r.startswith("cannot convert: status (9)") for r in reasons), reasons
    assert any(r.startswith("cannot convert: row (2): expected 18 raw values, got 2") for r in reasons), reasons
    assert any(r.startswith("statement-format DML") and len(r) < 400 for r in reasons), reasons
    assert "unknown table: no schema of shop.nowhere in force at this seq" in reasons
    assert any("collide with the pipeline's own columns" in r for r in reasons)
    assert _state(out_small, "malformed.json")  # the line without seq, remembered once
    v1 = pq.read_table(next((out_small / "shop" / "extra" / "schema_version=1").glob("*.parquet")))
    by_seq = {r["_seq"]: r for r in v1.to_pylist()}
    assert by_seq[n + 3]["_absent"] == ["note"] and by_seq[n + 4]["_before_absent"] == ["note"]
    assert by_seq[n + 4]["_absent"] == ["amount"]


def test_postgres_increment_driver_path_equals_spark_path(spark, tmp_path, monkeypatch):
    pytest.importorskip("ddlcore_postgres")
    lines = _lines(EXAMPLES / "pg_shop" / "changelog.jsonl")  # recorded from PostgreSQL 15: 47 events
    first, rest = lines[:30], lines[30:]
    n = max(json.loads(ln)["seq"] for ln in lines)
    extra = [
        _event(n + 1, op="c", database="shop", schema="public", table="nowhere", after=[1]),
        lines[0],  # the log's source event again (before the checkpoint: the DDL pass still reads it)
        "{\"seq\": 999999, \"position\": \"p\", \"op\": \"c\"",  # torn last line
    ]
    _both_ways(spark, tmp_path, monkeypatch, first, rest + extra)


def test_nothing_new_runs_no_spark_job(spark, tmp_path):
    lines = _lines(EXAMPLES / "shop" / "changelog.jsonl")
    log = tmp_path / "changelog.jsonl"
    log.write_text("".join(ln + "\n" for ln in lines))
    out = tmp_path / "out"
    pl.run_pipeline(log, out, spark=spark)
    jobs = spark.sparkContext.statusTracker().getJobIdsForGroup(None)
    res = pl.run_pipeline(log, out, spark=spark)
    assert res.events == 0 and res.rows == 0
    assert spark.sparkContext.statusTracker().getJobIdsForGroup(None) == jobs


def test_lines_spark_reads_otherwise_leave_the_run_to_spark():
    f = "file:/log.jsonl"
    sure = ['{"seq": 1, "position": "p", "op": "c", "table": "t", "after": [1, "a", {"$b64": "AAE="}, null, 1.5]}',
            "not json", '{"seq": 1, "op": "c"', '{"position": "p", "op": "c", "table": "t", "after": [1]}']
    for line in sure:
        small._spark_event(line, f)
    unsure = ['{"seq": "5", "op": "c"}', '{"seq": 1, "seq": 2}', '{"SEQ": 1}', '{"seq": 1} xyz',
              '{"seq": 1, "after": [1e300]}', '{"seq": 1, "after": ["1.50"]}', '{"seq": 1, "after": "x"}',
              '{"seq": 1, "database": 5}', "[1]", '{"seq": 1.0}', '{"seq": 99999999999999999999}',
              '{"seq": 1, "tx": "\\ud800"}']
    for line in unsure:
        with pytest.raises(small._Unsure):
            small._spark_event(line, f)
    ev = small._spark_event(sure[0], f)
    assert ev.valid and ev.fields["after"] == ["1", "a", '{"$b64":"AAE="}', None, "1.5"]
    assert not small._spark_event(sure[3], f).valid


def _strict_errors(spark, log: Path, out: Path, monkeypatch) -> list[tuple]:
    """``(seq, reason)`` of the error a ``--strict`` run stops with, by the Spark path, then by
    the driver's."""
    errors = []
    for limit in (-1, 4 << 20):
        monkeypatch.setattr(small, "MAX_BYTES", limit)
        said: list[str] = []
        with pytest.raises(pl.PipelineError) as exc:
            pl.run_pipeline(log, out, spark=spark, strict=True, progress=said.append)
        assert any("on the driver" in m for m in said) == (limit > 0)
        errors.append((exc.value.seq, exc.value.reason))
    return errors


def test_strict_stops_at_the_same_event_both_ways(spark, tmp_path, monkeypatch):
    lines = _lines(EXAMPLES / "shop" / "changelog.jsonl")
    n = len(lines)
    log = tmp_path / "changelog.jsonl"
    log.write_text("".join(ln + "\n" for ln in lines[:29]))
    out = tmp_path / "out"
    pl.run_pipeline(log, out, spark=spark)
    with open(log, "a") as fh:
        fh.write("".join(ln + "\n" for ln in lines[29:] + [
            _event(n + 1, op="c", database="shop", table="purchases", after=[1]),   # wrong arity
            _event(n + 2, op="c", database="shop", table="nowhere", after=[1]),     # unknown table
        ]))
    errors = _strict_errors(spark, log, out, monkeypatch)
    # the tagging's quarantine is checked before any conversion, as in the Spark path
    assert errors[0] == errors[1] == (n + 2, "unknown table: no schema of shop.nowhere in force at this seq")
    with open(log, "a") as fh:
        fh.write(_event(n + 3, op="ddl", database="shop", ddl="CREATE TABLE nowhere (id int)") + "\n")
    lines_now = log.read_text().splitlines()
    log.write_text("".join(ln + "\n" for ln in lines_now if '"nowhere", "after"' not in ln))
    errors = _strict_errors(spark, log, out, monkeypatch)
    assert errors[0] == errors[1] and errors[0][0] == n + 1 and errors[0][1].startswith("cannot convert: row (1)")
    assert json.loads((out / "_state" / "checkpoint.json").read_text())["last_seq"] == 29  # nothing committed
