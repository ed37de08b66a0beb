"""Issue 11, the pipeline's side: no row lost or silently wrong.  Each test is a path that lost
or corrupted rows before (the source event's settings ignored, a re-snapshot skipped, a failed
DDL letting rows convert with the old schema, absent values written as NULL, ...)."""

from __future__ import annotations

import decimal
import gzip
import json
import subprocess
import sys

import pytest

from ddlcore.raw import encode_json as e

pyspark = pytest.importorskip("pyspark")

from ddlcore.spark import pipeline as pl  # noqa: E402

from .support import SOURCE, Log, base, parquet_rows, source  # noqa: E402
from .support import quarantine_by_seq as quarantine  # noqa: E402



# ---------------------------------------------------------------------------- source settings


def test_the_source_events_settings_read_the_ddl_as_the_server_did(spark, tmp_path):
    log = base(tmp_path, parser_options={**SOURCE["parser_options"], "lower_case_table_names": 1})
    log.ddl("CREATE TABLE Orders (id int, note varchar(5))")
    # lower_case_table_names=1: the binlog names the table as stored, in lower case
    log.row("c", "orders", after=[1, b"caf\xe9"])
    log.row("c", "ORDERS", after=[2, b"x"])
    out = tmp_path / "out"
    res = pl.run_pipeline(log.write(), out, spark=spark)
    assert res.quarantined == 0 and res.dialect == "mysql", quarantine(out)
    df = spark.read.parquet(str(out / "shop" / "Orders" / "schema_version=1"))
    rows = sorted(df.collect(), key=lambda r: r["_seq"])
    assert [r["note"] for r in rows] == ["café", "x"]   # latin1: the server's default charset
    model = json.loads((out / "_schemas" / "shop.Orders.v1.json").read_text())["model"]
    assert model["columns"][1]["character_set_name"] == "latin1"


def test_a_dialect_that_contradicts_the_log_and_an_unknown_dialect_are_refused(spark, tmp_path):
    log = base(tmp_path)
    with pytest.raises(pl.PipelineError, match="unknown|no dialect"):
        pl.run_pipeline(log.write(), tmp_path / "o1", spark=spark, dialect="nosuch")
    assert not (tmp_path / "o1").exists()
    (tmp_path / "b").mkdir()
    log2 = base(tmp_path / "b", dialect="postgres")
    with pytest.raises(pl.PipelineError, match="postgres"):
        pl.run_pipeline(log2.write(), tmp_path / "o2", spark=spark, dialect="mysql")


# ---------------------------------------------------------------------------- identity, options


def test_an_output_refuses_another_log_or_epoch(spark, tmp_path):
    log = base(tmp_path)
    log.row("c", "t", after=[1, "a", 1])
    out = tmp_path / "out"
    pl.run_pipeline(log.write(), out, spark=spark)
    resnap = Log(tmp_path / "resnap.jsonl")       # a re-snapshot into the same directory
    source(resnap, epoch="epoch-2")
    resnap.ddl("CREATE DATABASE shop")
    resnap.ddl("CREATE TABLE t (id int NOT NULL PRIMARY KEY, name varchar(10), qty int)")
    for i in range(5):
        resnap.row("r", "t", after=[i, "b", i])
    with pytest.raises(pl.PipelineError, match="epoch-2.*different log"):
        pl.run_pipeline(resnap.write(), out, spark=spark)
    # the first contract, without a source event: a log that restarts seq is refused too
    old = Log(tmp_path / "old.jsonl")
    old.ddl("CREATE DATABASE shop")
    old.row("c", "t", after=[1, "a", 1])
    o2 = tmp_path / "o2"
    grown = Log(tmp_path / "grown.jsonl")
    for _ in range(3):
        grown.ddl("CREATE DATABASE IF NOT EXISTS x")
    pl.run_pipeline(grown.write(), o2, spark=spark, dialect="mysql")
    with pytest.raises(pl.PipelineError, match="before this output's checkpoint"):
        pl.run_pipeline(old.write(), o2, spark=spark)


def test_run_options_are_recorded_and_different_ones_refused_before_spark(spark, tmp_path):
    log = base(tmp_path)
    log.row("c", "t", after=[1, "a", 1])
    out = tmp_path / "out"
    pl.run_pipeline(log.write(), out, spark=spark, spark_options={"decimal_handling": "string"})
    with pytest.raises(pl.PipelineError, match="decimal_handling=string .this run: precise."):
        pl.check_run_options(out, None, {})
    with pytest.raises(pl.PipelineError, match="-s: unknown Spark option"):
        pl.check_run_options(tmp_path / "new", None, {"nope": 1})
    with pytest.raises(pl.PipelineError, match="decimal_handling=.fast.: expected one of"):
        pl.check_run_options(tmp_path / "new", None, {"decimal_handling": "fast"})
    # the CLI says it in one line, exit status 2, before Spark starts, and writes nothing
    r = subprocess.run([sys.executable, "-m", "ddlcore.cli", "run", "--changelog", str(log.path), "--out",
                        str(tmp_path / "new"), "-s", "nope=1"], capture_output=True, text=True)
    assert r.returncode == 2 and "unknown Spark option" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "new").exists()


def test_an_option_declared_after_an_output_was_written_counts_as_its_default():
    """An output recorded before ``temporal_infinity`` existed was written with its default
    (quarantine, the behaviour from before): the same run goes on, another value is refused."""
    before = {"spark_options": {"decimal_handling": "precise", "binary_handling": "bytes",
                                "numeric_unconstrained": "decimal"}}
    assert pl.check_run_options("out", "postgres", {}, log_info=before)["temporal_infinity"] == "quarantine"
    with pytest.raises(pl.PipelineError, match=r"-s temporal_infinity=quarantine \(this run: clamp\)"):
        pl.check_run_options("out", "postgres", {"temporal_infinity": "clamp"}, log_info=before)


# ---------------------------------------------------------------------------- blocked tables


def test_rows_after_a_failed_ddl_are_quarantined_until_a_resync_and_then_replayed(spark, tmp_path):
    log = base(tmp_path)
    log.row("c", "t", after=[1, "a", 1])
    bad = log.ddl("ALTER TABLE t ADD COLUMN ((( garbage")        # the model cannot follow it
    r1 = log.row("c", "t", after=[2, "b", 2, "extra"])           # written with the unknown schema
    out = tmp_path / "out"
    res = pl.run_pipeline(log.write(), out, spark=spark)
    q = quarantine(out)
    blocked = [r for r in q if r["seq"] == r1]
    assert blocked and blocked[0]["reason"].startswith(f"schema unknown since seq {bad}: ")
    assert res.rows == 1                                           # nothing converted with the old schema
    # the resync: SHOW CREATE TABLE at the current position, as a snapshot event
    log.add(op="ddl", database="shop", snapshot=True,
            ddl="CREATE TABLE `t` (`id` int(11) NOT NULL, `name` varchar(10), `qty` int(11), "
                "`extra` varchar(10), PRIMARY KEY (`id`))")
    r2 = log.row("c", "t", after=[3, "c", 3, "more"])
    res2 = pl.run_pipeline(log.write(), out, spark=spark)
    assert res2.quarantined == 0 and res2.rows == 1
    _, v3 = parquet_rows(spark, out, "t", 3)
    assert [r["_seq"] for r in v3] == [r2]
    # replay: the blocked row is read with the resync's schema (the next thing that happened to t)
    res3 = pl.run_pipeline(log.write(), out, spark=spark, replay_quarantine=True)
    assert res3.replayed == 1 and res3.rows == 1
    _, v3 = parquet_rows(spark, out, "t", 3)
    assert [(r["_seq"], r["extra"]) for r in v3] == [(r1, "extra"), (r2, "more")]
    assert not [r for r in quarantine(out) if r["seq"] == r1]
    # nothing converted twice
    res4 = pl.run_pipeline(log.write(), out, spark=spark, replay_quarantine=True)
    assert res4.replayed == 0 and res4.rows == 0
    _, v3 = parquet_rows(spark, out, "t", 3)
    assert len(v3) == 2


def test_capture_quarantine_reasons_and_statement_dml_are_quarantined(spark, tmp_path):
    log = base(tmp_path)
    q1 = log.add(op="c", database="shop", table="t", after=[e(1), e("a"), e(1)],
                 quarantine="table map: column 2 is varchar(20), the history says varchar(10)")
    q2 = log.add(op="stmt", database="shop", table="t", ddl="UPDATE t SET qty = qty + 1")
    out = tmp_path / "out"
    res = pl.run_pipeline(log.write(), out, spark=spark)
    assert res.rows == 0 and res.quarantined == 2
    by_seq = {r["seq"]: r["reason"] for r in quarantine(out)}
    assert by_seq[q1] == "capture: table map: column 2 is varchar(20), the history says varchar(10)"
    assert by_seq[q2].startswith("statement-format DML: the change log does not carry its rows: UPDATE t")


# ---------------------------------------------------------------------------- inputs


def test_a_capture_directory_reads_only_change_log_files(spark, tmp_path):
    cap = tmp_path / "cap"
    cap.mkdir()
    log = base(cap)
    log.row("c", "t", after=[1, "a", 1])
    log.write()
    (cap / "checkpoint.json").write_text('{"seq": 5}')
    (cap / "capture.log").write_text("2024-01-01 warning: something\n")
    (cap / "history.sqlite").write_bytes(b"SQLite format 3\x00" + bytes(100))
    out = tmp_path / "out"
    res = pl.run_pipeline(cap, out, spark=spark)
    assert res.quarantined == 0 and res.rows == 1


def test_malformed_lines_are_quarantined_once_naming_file_and_line(spark, tmp_path):
    log = base(tmp_path)
    log.row("c", "t", after=[1, "a", 1])
    out = tmp_path / "out"
    path = log.write(["{not json", '{"op": "c", "table": "t"}'])
    res = pl.run_pipeline(path, out, spark=spark)
    assert res.quarantined == 2
    reasons = sorted(r["reason"] for r in quarantine(out))
    assert reasons[0].startswith(f"{path}:5: malformed event") and reasons[1].startswith(f"{path}:6: malformed event")
    assert "seq must be an int64" in reasons[1]
    log.row("c", "t", after=[2, "b", 2])
    log.write(["{not json", '{"op": "c", "table": "t"}'])
    res2 = pl.run_pipeline(path, out, spark=spark)
    assert res2.quarantined == 0 and res2.rows == 1           # not quarantined again
    assert len(quarantine(out)) == 2


def test_a_truncated_gzip_log_is_one_clear_error_and_leaves_nothing(spark, tmp_path):
    log = base(tmp_path)
    for i in range(3000):
        log.row("c", "t", after=[i, "abcdefghij", i])
    plain = log.write()
    gz = tmp_path / "log.jsonl.gz"
    with gzip.open(gz, "wb") as fh:
        fh.write(plain.read_bytes())
    gz.write_bytes(gz.read_bytes()[:-200])
    out = tmp_path / "out"
    with pytest.raises(pl.PipelineError, match=r"log.jsonl.gz: truncated gzip file"):
        pl.run_pipeline(gz, out, spark=spark)
    assert not out.exists()


# ---------------------------------------------------------------------------- rows


def test_truncate_tx_row_and_absent_values(spark, tmp_path):
    log = base(tmp_path)
    log.add(op="c", database="shop", table="t", after=[e(1), e("a"), e(5)], tx="0-1-7", row=0)
    log.add(op="c", database="shop", table="t", after=[e(2), e("b"), e(6)], tx="0-1-7", row=1)
    # binlog_row_image=MINIMAL: the update's before image has the key only, the after image
    # only the changed column
    absent = {"$absent": True}
    upd = log.add(op="u", database="shop", table="t", before=[e(1), absent, absent],
                  after=[absent, absent, e(9)], tx="0-1-8", row=0)
    trunc = log.add(op="t", database="shop", table="t", tx="0-1-9")
    out = tmp_path / "out"
    res = pl.run_pipeline(log.write(), out, spark=spark)
    assert res.quarantined == 0, quarantine(out)
    _, rows = parquet_rows(spark, out, "t", 1)
    assert [(r["_tx"], r["_row"]) for r in rows[:3]] == [("0-1-7", 0), ("0-1-7", 1), ("0-1-8", 0)]
    u = next(r for r in rows if r["_seq"] == upd)
    assert u["qty"] == 9 and u["id"] is None and u["_absent"] == ["id", "name"]
    assert u["_before"]["id"] == 1 and u["_before_absent"] == ["name", "qty"]
    assert rows[0]["_absent"] is None and rows[0]["_before_absent"] is None
    t = next(r for r in rows if r["_seq"] == trunc)
    assert t["_op"] == "t" and t["id"] is None and t["_before"] is None
    assert res.counts[("shop", "t", 1, "t")] == 1


def test_names_that_are_not_safe_paths_are_escaped_uniquely(spark, tmp_path):
    log = Log(tmp_path / "changelog.jsonl")
    source(log)
    names = ["a/b", "..", "_hidden", "x.y", "x", "x=1"]
    log.ddl("CREATE DATABASE `d.x`")
    log.ddl("CREATE DATABASE `d`")
    for n in names:
        log.ddl(f"CREATE TABLE `d.x`.`{n}` (id int)")
    log.ddl("CREATE TABLE `d`.`x.y` (id int)")
    for i, n in enumerate(names):
        log.row("c", n, after=[i], db="d.x")
    log.row("c", "x.y", after=[99], db="d")
    out = tmp_path / "out"
    res = pl.run_pipeline(log.write(), out, spark=spark)
    assert res.quarantined == 0 and res.rows == len(names) + 1
    from ddlcore.spark.layout import escape_name, unescape_name

    for i, n in enumerate(names):
        d = out / escape_name("d.x") / escape_name(n) / "schema_version=1"
        assert d.is_dir() and d.resolve().is_relative_to(out.resolve())
        assert unescape_name(d.parent.name) == n
        assert [r["id"] for r in spark.read.parquet(str(d)).collect()] == [i]
    schemas = sorted(p.name for p in (out / "_schemas").iterdir())
    assert len(schemas) == len(set(schemas)) == len(names) + 1      # no two tables share a file
    assert "d.x%2Ey.v1.json" in schemas and "d%2Ex.x.v1.json" in schemas
