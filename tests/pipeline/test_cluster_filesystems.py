"""The driver touches the output only through Hadoop's FileSystem API (``ddlcore.spark.fs``):
an output that only Hadoop can reach — a ``viewfs://`` mount, which no Python ``os`` call can
open — gets exactly what a local path gets, over a first run, an incremental run, a run with
nothing new and a roll-forward of a commit killed after its commit point; the schema history
of such an output travels with the commit (a local copy is recorded, then uploaded); a
``file://`` URI works too.  Nothing is created in the working directory (a Python ``os`` call
given a URI would make a directory named ``viewfs:`` or ``file:`` there)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.pipeline.support import parquet_rows, shop_log

pyspark = pytest.importorskip("pyspark")

from ddlcore.spark import commit  # noqa: E402
from ddlcore.spark import pipeline as pl  # noqa: E402


def rows_of(spark, root: Path, table: str, version: int) -> list:
    _, rows = parquet_rows(spark, root, table, version)
    return [r.asDict(recursive=True) for r in rows]


def state_of(root: Path) -> dict:
    run = json.loads((root / "_run.json").read_text())
    run["last_run"].pop("seconds")
    return {"checkpoint": json.loads((root / "_state" / "checkpoint.json").read_text())["last_seq"],
            "log": json.loads((root / "_state" / "log.json").read_text()), "run": run,
            "schemas": _names(root / "_schemas"),
            "left": _names(root / "_state")}


def _names(directory: Path) -> list[str]:
    """The entries of ``directory`` but hidden ones (a local filesystem's ``.crc`` files)."""
    return sorted(p.name for p in directory.iterdir() if not p.name.startswith("."))




def test_an_output_only_hadoop_reaches_gets_what_a_local_path_gets(spark, tmp_path, mounted, monkeypatch):
    uri, target, _ = mounted
    log = shop_log(tmp_path)
    events = list(log.events)
    local = tmp_path / "local"
    for out in (f"{uri}/run", local):  # a first run sees a prefix of the log, then all of it, then again
        log.events = events[:4]
        res1 = pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
        log.events = events
        res2 = pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
        res3 = pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
        assert (res1.events, res2.events, res3.events) == (4, 3, 0)
    remote = target / "run"
    assert state_of(remote) == state_of(local)
    for table, version in (("orders", 1), ("orders", 2)):
        assert rows_of(spark, remote, table, version) == rows_of(spark, local, table, version)
    for name in state_of(local)["schemas"]:
        assert (remote / "_schemas" / name).read_text() == (local / "_schemas" / name).read_text()
    # the history was recorded in a local copy and committed with the run
    with sqlite3.connect(remote / "_history.sqlite") as db, sqlite3.connect(local / "_history.sqlite") as ref:
        q = "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name"
        tables = [r[0] for r in db.execute(q)]
        assert tables == [r[0] for r in ref.execute(q)]
        for t in tables:
            assert db.execute(f"SELECT count(*) FROM {t}").fetchone() == ref.execute(f"SELECT count(*) FROM {t}").fetchone()


def test_a_commit_killed_after_its_commit_point_is_rolled_forward_through_hadoop(spark, tmp_path, mounted,
                                                                                  monkeypatch):
    uri, target, _ = mounted
    log = shop_log(tmp_path)
    real = commit.apply_moves

    def dying(moves, fs):
        real(moves[:1], fs)
        raise KeyboardInterrupt("killed while moving files")

    monkeypatch.setattr(commit, "apply_moves", dying)
    with pytest.raises(KeyboardInterrupt):
        pl.run_pipeline(log.write(), f"{uri}/k", spark=spark, dialect="mysql")
    assert (target / "k" / "_state" / "pending.json").exists()
    monkeypatch.setattr(commit, "apply_moves", real)
    assert pl.run_pipeline(log.write(), f"{uri}/k", spark=spark, dialect="mysql").events == 0  # rolled forward
    assert [r["_seq"] for r in rows_of(spark, target / "k", "orders", 1) + rows_of(spark, target / "k", "orders", 2)] \
        == [3, 4, 6, 7]
    assert (target / "k" / "_history.sqlite").exists()
    assert _names(target / "k" / "_state") == ["checkpoint.json", "inputs.json", "log.json"]


def test_a_file_uri_is_the_local_directory(spark, tmp_path, monkeypatch):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    log = shop_log(tmp_path)
    res = pl.run_pipeline(log.write(), (tmp_path / "out").as_uri(), spark=spark, dialect="mysql")
    assert res.rows == 4
    assert [r["_seq"] for r in rows_of(spark, tmp_path / "out", "orders", 1)] == [3, 4]
    assert (tmp_path / "out" / "_history.sqlite").exists()  # SQLite in place on a local output
    assert list(cwd.iterdir()) == []


def test_a_change_log_only_hadoop_reaches_is_read_as_a_local_one(spark, tmp_path, mounted):
    """``--changelog`` as a URI (here a ``viewfs://`` directory): listed through Hadoop, read
    by Spark; the output equals that of the same log read from a local path (a malformed
    line's reason names its file; its line number only for a local file)."""
    uri, target, _ = mounted
    log = shop_log(target / "log")
    (target / "log").mkdir()
    log.write(['{"seq": 99, "op": "c"'])
    (target / "log" / "_ignored.jsonl").write_text("not a change-log file: hidden by its name\n")
    remote = pl.run_pipeline(f"{uri}/log", tmp_path / "a", spark=spark, dialect="mysql")
    local = pl.run_pipeline(target / "log", tmp_path / "b", spark=spark, dialect="mysql")
    assert (remote.rows, remote.quarantined, remote.last_seq) == (local.rows, local.quarantined, local.last_seq) == (4, 1, 7)
    for table, version in (("orders", 1), ("orders", 2)):
        assert rows_of(spark, tmp_path / "a", table, version) == rows_of(spark, tmp_path / "b", table, version)
    [q] = [json.loads(line) for f in (tmp_path / "a" / "_quarantine").glob("*.json")
           for line in f.read_text().splitlines() if line.strip()]
    assert q["reason"].startswith(f"{uri}/log/changelog.jsonl: malformed event") and q["event"] == '{"seq": 99, "op": "c"'
    with pytest.raises(FileNotFoundError, match="change log not found"):
        pl.run_pipeline(f"{uri}/nothing", tmp_path / "c", spark=spark, dialect="mysql")
    assert not (tmp_path / "c").exists()


def test_a_commit_plan_of_the_earlier_version_with_absolute_paths_is_rolled_forward(spark, tmp_path, monkeypatch):
    """``pending.json`` written before the driver went through Hadoop held absolute local
    paths, and a move per file (no directory moves): a run after an upgrade still rolls it
    forward."""
    log = shop_log(tmp_path)
    out = tmp_path / "out"
    real = commit.apply_moves

    def dying(moves, fs):
        raise KeyboardInterrupt("killed at the commit point")

    monkeypatch.setattr(commit, "apply_moves", dying)
    with pytest.raises(KeyboardInterrupt):
        pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    monkeypatch.setattr(commit, "apply_moves", real)
    pending = out / "_state" / "pending.json"
    plan = json.loads(pending.read_text())
    assert plan["moves"] and all(not p.startswith("/") for m in plan["moves"] for p in m)
    staged = out / "_state" / "staging" / plan["run"]
    plan["moves"] = [[str(f), str(out / f.relative_to(staged))]  # as the earlier version wrote it
                     for f in sorted(staged.rglob("*")) if f.is_file() and not f.name.startswith(".")]
    plan["run_json_path"] = str(out / "_run.json")
    pending.write_text(json.dumps(plan))
    assert pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql").events == 0
    assert [r["_seq"] for r in rows_of(spark, out, "orders", 1) + rows_of(spark, out, "orders", 2)] == [3, 4, 6, 7]
    assert json.loads((out / "_run.json").read_text())["total"]["counts"]


def test_a_filesystem_hadoop_does_not_have_is_one_clear_error(spark, tmp_path):
    log = shop_log(tmp_path)
    with pytest.raises(pl.PipelineError, match=r'output nosuch://x/out: .*No FileSystem for scheme "nosuch"'):
        pl.run_pipeline(log.write(), "nosuch://x/out", spark=spark, dialect="mysql")
    with pytest.raises(pl.PipelineError, match=r'change log nosuch://x/log: .*No FileSystem for scheme "nosuch"'):
        pl.run_pipeline("nosuch://x/log", tmp_path / "out", spark=spark, dialect="mysql")
    assert not (tmp_path / "out").exists()


def test_cli_conf_needs_key_equals_value_before_spark_starts(tmp_path):
    from click.testing import CliRunner

    from ddlcore.cli import main

    log = shop_log(tmp_path).write()
    res = CliRunner().invoke(main, ["run", "--changelog", str(log), "--out", str(tmp_path / "out"),
                                    "--conf", "spark.executor.memory"])
    assert res.exit_code == 2 and "--conf 'spark.executor.memory': expected KEY=VALUE" in res.output
    assert not (tmp_path / "out").exists()
