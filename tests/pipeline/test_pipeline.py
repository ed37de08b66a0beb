"""The pipeline (`ddlcore run`) on small change logs written by the tests: typed output per
table version, quarantine with reasons, incremental runs by checkpoint, strict mode, and the
commit protocol's recovery."""

from __future__ import annotations

import datetime as dt
import decimal
import json

import pytest

from ddlcore.raw import encode_json as e

pyspark = pytest.importorskip("pyspark")

from ddlcore.spark import commit  # noqa: E402
from ddlcore.spark import pipeline as pl  # noqa: E402
from ddlcore.spark import sessionconf  # noqa: E402

from .support import Log, parquet_rows, shop_log  # noqa: E402




def test_rows_are_typed_with_the_version_in_force(spark, tmp_path):
    log = shop_log(tmp_path)
    out = tmp_path / "out"
    res = pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    assert res.quarantined == 0 and res.rows == 4 and res.ddl == 3
    df1, rows1 = parquet_rows(spark, out, "orders", 1)
    assert [f.name for f in df1.schema.fields][:5] == ["id", "status", "note", "total", "placed"]
    assert df1.schema["id"].dataType.typeName() == "long"          # INT UNSIGNED → long
    assert df1.schema["total"].dataType.simpleString() == "decimal(8,2)"
    assert rows1[0]["id"] == 2 ** 32 - 1                             # unsigned wrap-around fixed
    assert rows1[0]["status"] == "new" and rows1[1]["status"] == "paid"
    assert rows1[0]["note"] == "café"                                # latin1 bytes decoded
    assert rows1[0]["placed"] == dt.datetime(2024, 2, 29, 13, 14, 15, 250000)
    assert rows1[1]["_op"] == "u" and rows1[1]["_before"]["status"] == "new"
    assert rows1[0]["_before"] is None and rows1[0]["_position"] == "mariadb-bin.000001:300"
    df2, rows2 = parquet_rows(spark, out, "orders", 2)
    assert [f.name for f in df2.schema.fields][:5] == ["id", "qty", "status", "note", "total"]
    assert rows2[0]["qty"] == 3
    assert rows2[1]["_op"] == "d" and rows2[1]["id"] == 7            # a delete carries its key
    schema = json.loads((out / "_schemas" / "shop.orders.v2.json").read_text())
    assert schema["valid_from_seq"] == 5 and schema["model"]["columns"][1]["name"] == "qty"
    run = json.loads((out / "_run.json").read_text())
    assert run["last_run"]["last_seq"] == 7


def test_bad_events_are_quarantined_with_reasons_never_dropped(spark, tmp_path):
    log = shop_log(tmp_path)
    log.row("c", "ghost", after=[1])                                   # unknown table
    log.row("c", "orders", after=[1, 2])                               # wrong arity
    log.row("c", "orders", after=[8, 1, 9, b"x", decimal.Decimal("1")])  # enum index out of range
    log.ddl("CREATE TABLE broken (")                                   # unparsable DDL
    out = tmp_path / "out"
    res = pl.run_pipeline(log.write(["{not json", '{"seq": 99, "op": "c"}']), out, spark=spark, dialect="mysql")
    assert res.rows == 4
    assert res.quarantined == 6
    q = [json.loads(line) for f in (out / "_quarantine").glob("*.json") for line in f.read_text().splitlines()]
    reasons = " | ".join(sorted(r["reason"] for r in q))
    assert "unknown table" in reasons and "expected 5 raw values" in reasons
    assert "enum" in reasons and "DDL could not be parsed" in reasons and "malformed event" in reasons
    assert all(r["event"] or r["reason"].startswith("DDL") for r in q)   # the raw event is kept


def test_strict_mode_stops_naming_the_first_bad_event_and_commits_nothing(spark, tmp_path):
    log = shop_log(tmp_path)
    bad = log.row("c", "ghost", after=[1])
    out = tmp_path / "out"
    with pytest.raises(pl.PipelineError) as info:
        pl.run_pipeline(log.write(), out, spark=spark, strict=True, dialect="mysql")
    assert info.value.seq == bad and "unknown table" in info.value.reason
    assert not (out / "shop").exists() and not (out / "_state" / "checkpoint.json").exists()


def test_rerun_on_a_grown_log_processes_only_new_events(spark, tmp_path):
    log = shop_log(tmp_path)
    out = tmp_path / "out"
    pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    again = pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    assert again.events == 0 and again.rows == 0
    log.row("c", "orders", after=[9, 1, 1, b"z", decimal.Decimal("2.00")])
    third = pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    assert third.events == 1 and third.rows == 1
    df, rows = parquet_rows(spark, out, "orders", 2)
    assert [r["_seq"] for r in rows] == [6, 7, 8]                     # nothing duplicated
    assert json.loads((out / "_run.json").read_text())["runs"] == 3


def test_a_run_killed_after_its_commit_point_is_rolled_forward(spark, tmp_path, monkeypatch):
    log = shop_log(tmp_path)
    out = tmp_path / "out"
    real = commit.apply_moves
    calls = {"n": 0}

    def dying(moves, fs):
        calls["n"] += 1
        real(moves[:1], fs)
        raise KeyboardInterrupt("killed while moving files")

    monkeypatch.setattr(commit, "apply_moves", dying)
    with pytest.raises(KeyboardInterrupt):
        pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    assert (out / "_state" / "pending.json").exists()
    monkeypatch.setattr(commit, "apply_moves", real)
    res = pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")              # rolls forward, then nothing new
    assert res.events == 0
    _, rows1 = parquet_rows(spark, out, "orders", 1)
    _, rows2 = parquet_rows(spark, out, "orders", 2)
    assert [r["_seq"] for r in rows1 + rows2] == [3, 4, 6, 7]


def test_a_run_killed_before_its_commit_point_leaves_nothing_visible(spark, tmp_path, monkeypatch):
    log = shop_log(tmp_path)
    out = tmp_path / "out"

    def dying(*a, **k):
        raise KeyboardInterrupt("killed before the commit point")

    monkeypatch.setattr(commit, "merge_run_json", dying)
    with pytest.raises(KeyboardInterrupt):
        pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    assert not (out / "shop").exists()
    monkeypatch.undo()
    res = pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    assert res.rows == 4


def test_cli_exit_status_and_summary(spark, tmp_path):
    """In-process (click's runner) so the module's Spark session is reused."""
    from click.testing import CliRunner

    from ddlcore.cli import main

    log = shop_log(tmp_path)
    log.row("c", "ghost", after=[1])
    path = log.write()
    # a log without a source event names no dialect: ddlcore run asks for --dialect (no guess)
    unnamed = CliRunner().invoke(main, ["run", "--changelog", str(path), "--out", str(tmp_path / "o0")])
    assert unnamed.exit_code == 1 and len(unnamed.output.strip().splitlines()) == 1, unnamed.output
    assert "--dialect: the change log has no source event naming its dialect" in unnamed.output
    # the library call says the same, with nothing written: no guessed dialect
    unnamed_lib = r"^--dialect: the change log has no source event .*\(dialect='mysql' in run_pipeline\)"
    with pytest.raises(pl.PipelineError, match=unnamed_lib):
        pl.run_pipeline(path, tmp_path / "o3", spark=spark)
    assert not (tmp_path / "o3" / "_state" / "checkpoint.json").exists() and not (tmp_path / "o3" / "shop").exists()
    ok = CliRunner().invoke(main, ["run", "--changelog", str(path), "--out", str(tmp_path / "o1"),
                                   "--dialect", "mysql"])
    assert ok.exit_code == 0, ok.output
    assert "quarantined: 1" in ok.output and "orders" in ok.output
    # the output records the dialect: a later run of it needs no --dialect
    again = CliRunner().invoke(main, ["run", "--changelog", str(path), "--out", str(tmp_path / "o1")])
    assert again.exit_code == 0, again.output
    strict = CliRunner().invoke(main, ["run", "--changelog", str(path), "--out", str(tmp_path / "o2"), "--strict",
                                       "--dialect", "mysql"])
    assert strict.exit_code == 1 and "event seq 8" in strict.output


def test_ddl_events_spelt_with_json_whitespace_or_escapes_are_recorded(spark, tmp_path):
    """The DDL pass reads only lines that may hold a DDL event; JSON may space or escape the
    op (``"op" : "ddl"``, ``"op":"\\u0064dl"``) and those events must still count."""
    log = Log(tmp_path / "changelog.jsonl")
    log.ddl("CREATE DATABASE shop")
    log.row("c", "t", after=[1])
    path = tmp_path / "changelog.jsonl"
    lines = [json.dumps(ev) for ev in log.events]
    lines.insert(1, '{"seq": 2, "position": "p:2", "ts": 2, "op" :\t"ddl", "database": "shop", '
                    '"ddl": "CREATE TABLE t (id int)"}')
    lines[2] = lines[2].replace('"seq": 2', '"seq": 3')
    lines.append('{"seq": 4, "position": "p:4", "ts": 4, "\\u006fp": "\\u0064dl", "database": "shop", '
                 '"ddl": "ALTER TABLE t ADD COLUMN b int"}')
    lines.append(json.dumps({"seq": 5, "position": "p:5", "ts": 5, "op": "c", "database": "shop",
                             "table": "t", "after": [e(2), e(3)]}))
    path.write_text("\n".join(lines) + "\n")
    res = pl.run_pipeline(path, tmp_path / "out", spark=spark, dialect="mysql")
    assert res.ddl == 3 and res.quarantined == 0 and res.events == 5
    assert sorted(res.counts) == [("shop", "t", 1, "c"), ("shop", "t", 2, "c")]
    _, rows2 = parquet_rows(spark, tmp_path / "out", "t", 2)
    assert [(r["id"], r["b"]) for r in rows2] == [(2, 3)]


def test_concurrent_and_sequential_runs_write_the_same_rows(spark, tmp_path):
    log = shop_log(tmp_path)
    log.row("c", "orders", after=[8, 1, 9, b"x", decimal.Decimal("1")])  # a row that cannot convert
    path = log.write()
    one = pl.run_pipeline(path, tmp_path / "one", spark=spark, concurrent_jobs=1, dialect="mysql")
    four = pl.run_pipeline(path, tmp_path / "four", spark=spark, concurrent_jobs=4, dialect="mysql")
    assert one.counts == four.counts and one.quarantine_reasons == four.quarantine_reasons
    assert one.quarantined == four.quarantined == 1
    for version in (1, 2):
        assert parquet_rows(spark, tmp_path / "one", "orders", version)[1] == \
            parquet_rows(spark, tmp_path / "four", "orders", version)[1]
    q = [json.loads(line) for f in (tmp_path / "four" / "_quarantine").glob("*.json")
         for line in f.read_text().splitlines()]
    assert len(q) == 1 and json.loads(q[0]["event"])["seq"] == 8    # the raw line, read back


def test_gzip_and_parquet_change_logs_give_the_same_output(spark, tmp_path):
    """The three change-log formats (JSON Lines, gzip'd JSON Lines, Parquet written by
    ``ddlcore.changelog.write_parquet``) go through the same passes to the same rows."""
    import gzip

    from ddlcore.changelog import read_changelog, write_parquet

    log = shop_log(tmp_path)
    log.row("c", "orders", after=[8, 1, 9, b"x", decimal.Decimal("1")])  # a row that cannot convert
    log.row("c", "ghost", after=[1])                                     # unknown table
    plain = log.write()
    gz = tmp_path / "changelog.jsonl.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    pq = tmp_path / "changelog.parquet"
    write_parquet(read_changelog(plain), pq)
    results = {}
    for name, path in (("jsonl", plain), ("gz", gz), ("parquet", pq)):
        res = pl.run_pipeline(path, tmp_path / name, spark=spark, dialect="mysql")
        rows = [parquet_rows(spark, tmp_path / name, "orders", v)[1] for v in (1, 2)]
        results[name] = (res.counts, res.quarantine_reasons, res.ddl, res.last_seq, rows)
    assert results["jsonl"][1] == {"unknown table: no schema of shop.ghost in force at this seq": 1,
                                   "cannot convert": 1}
    assert results["gz"] == results["jsonl"] and results["parquet"] == results["jsonl"]


def test_a_failing_version_job_cancels_the_others_and_is_raised():
    """``_map_concurrently``: the first error cancels what has not started, calls the abort
    hook (``ddlcore run`` cancels its Spark jobs there) and is raised; nothing is left running."""
    import threading

    started, aborted = [], threading.Event()

    def fn(i, item):
        started.append(item)
        if item == 1:
            raise RuntimeError("version 1 failed")
        aborted.wait(5)          # a long job, ended by the abort hook
        return item

    with pytest.raises(RuntimeError, match="version 1 failed"):
        list(sessionconf.map_concurrently(fn, list(range(20)), 2, aborted.set))
    assert aborted.is_set() and len(started) < 20
    assert sorted(sessionconf.map_concurrently(lambda i, item: item * 2, [1, 2, 3], 2)) == [2, 4, 6]


def test_versions_with_one_image_only(spark, tmp_path):
    """An insert-only version is planned with the after image only, a delete-only version with
    the before image only; the rows, the before images and the bad rows are the same as ever."""
    log = Log(tmp_path / "changelog.jsonl")
    log.ddl("CREATE DATABASE shop")
    log.ddl("CREATE TABLE t (id int unsigned NOT NULL, s set('a','b'))")
    log.row("c", "t", after=[-1, 3])
    log.row("c", "t", after=[2, 9])                                   # set bitmask out of range
    log.ddl("ALTER TABLE t ADD COLUMN n varchar(5)")
    log.row("d", "t", before=[-1, 3, "x"])
    log.row("d", "t", before=[7, 1, None])
    out = tmp_path / "out"
    res = pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    assert res.counts == {("shop", "t", 1, "c"): 1, ("shop", "t", 2, "d"): 2}
    assert res.quarantine_reasons == {"cannot convert": 1}
    _, rows1 = parquet_rows(spark, out, "t", 1)
    assert [(r["id"], r["s"], r["_op"], r["_before"]) for r in rows1] == [(2 ** 32 - 1, ["a", "b"], "c", None)]
    _, rows2 = parquet_rows(spark, out, "t", 2)
    assert [(r["id"], r["s"], r["n"], r["_op"]) for r in rows2] == [(2 ** 32 - 1, ["a", "b"], "x", "d"), (7, ["a"], None, "d")]
    assert rows2[0]["_before"].asDict() == {"id": 2 ** 32 - 1, "s": ["a", "b"], "n": "x"}
    staged_images = sorted(p.name for p in (out / "_state").rglob("_img=*"))
    assert staged_images == []                                        # staging is gone after the commit


def test_a_directory_is_read_as_the_same_change_log_files_by_run_and_history_record(spark, tmp_path):
    """A directory's change-log files are ``ddlcore.changelog.changelog_files`` for every
    reader: ``ddlcore run`` reads the ``.ndjson`` file beside a Parquet one, as ``history
    record`` does (it used to read only the Parquet files of a directory without ``*.jsonl*``)."""
    from click.testing import CliRunner

    from ddlcore.changelog import changelog_files, read_changelog, write_parquet
    from ddlcore.cli import main

    log = shop_log(tmp_path)
    plain = log.write()
    events = list(read_changelog(plain))
    logs = tmp_path / "logs"
    logs.mkdir()
    cut = 3  # the first events (the database and the table) as JSON Lines, the rows after as Parquet
    (logs / "a.ndjson").write_text("".join(line + "\n" for line in plain.read_text().splitlines()[:cut]))
    write_parquet(events[cut:], logs / "b.parquet")
    assert [f.name for f in changelog_files(logs)] == ["a.ndjson", "b.parquet"]
    res = pl.run_pipeline(logs, tmp_path / "out", spark=spark, dialect="mysql")
    whole = pl.run_pipeline(plain, tmp_path / "whole", spark=spark, dialect="mysql")
    assert (res.ddl, res.counts, res.last_seq) == (whole.ddl, whole.counts, whole.last_seq) and res.ddl == 3
    recorded = CliRunner().invoke(main, ["history", "record", "--dialect", "mysql", str(logs),
                                         "--store", str(tmp_path / "h.sqlite")])
    assert recorded.exit_code == 0, recorded.output
