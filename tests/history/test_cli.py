"""``ddlcore history`` commands: record (SQL files and change logs), show, versions, diff,
changes, info."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ddlcore.cli import main

from .conftest import mysql_available

REPO = Path(__file__).resolve().parents[2]

SQL1 = """CREATE DATABASE shop DEFAULT CHARACTER SET latin1;
USE shop;
CREATE TABLE orders (id int NOT NULL, note varchar(20), PRIMARY KEY (id));
INSERT INTO orders VALUES (1, 'x');
"""
SQL2 = """ALTER TABLE orders ADD COLUMN total decimal(10,2);
ALTER TABLE orders RENAME COLUMN note TO remark;
CREATE TABLE items (id int);
"""


@pytest.fixture(params=["minisql", "mysql"])
def dialect(request, minisql_plugin):
    if request.param == "mysql" and mysql_available():
        pytest.skip(mysql_available())
    return request.param


def run(*args, ok=True):
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output + (result.stderr if result.stderr_bytes else "")
    return result


@pytest.fixture
def files(tmp_path):
    a, b = tmp_path / "a.sql", tmp_path / "b.sql"
    a.write_text(SQL1)
    b.write_text(SQL2)
    return a, b


def test_record_numbers_every_statement_and_show_prints_the_parse_shape(tmp_path, files, dialect):
    store = tmp_path / "h.db"
    a, b = files
    r = run("history", "record", "--dialect", dialect, "--store", store, a, b)
    assert "7 applied" not in r.stderr and "6 applied, 1 skipped" in r.stderr
    from ddlcore.history import SchemaHistory
    with SchemaHistory(store) as h:
        events = list(h.schema_changes(include_skipped=True))
        assert [e.seq for e in events] == list(range(1, 8))
        assert events[3].status == "skipped" and events[3].position == f"{a}:4"
        assert events[6].position == f"{b}:7"
    shown = json.loads(run("history", "show", "--store", store).output)
    parsed = json.loads(run("parse", "--dialect", dialect, a, b).output)
    assert shown == parsed
    at3 = json.loads(run("history", "show", "--store", store, "--at", 3).output)
    assert [t["name"] for t in at3["tables"]] == ["orders"]
    assert [c["name"] for c in at3["tables"][0]["columns"]] == ["id", "note"]
    assert at3["databases"][0]["name"] == "shop"
    one = json.loads(run("history", "show", "--store", store, "shop.items").output)
    assert list(one) == ["tables"] and one["tables"][0]["name"] == "items"
    assert "shop.orders" in run("history", "show", "--store", store, "--format", "table").output
    # again, with overlap: nothing new
    r = run("history", "record", "--dialect", dialect, "--store", store, a, b)
    assert "recorded 0 event(s)" in r.stderr and "7 already recorded" in r.stderr


def test_versions_and_diff(tmp_path, files, dialect):
    store = tmp_path / "h.db"
    run("history", "record", "--dialect", dialect, "--store", store, *files)
    data = json.loads(run("history", "versions", "--store", store, "shop.orders", "--format", "json").output)
    assert [(v["version"], v["kind"], v["valid_from_seq"]) for v in data["versions"]] == [
        (1, "create", 3), (2, "alter", 5), (3, "alter", 6)]
    out = run("history", "versions", "--store", store, "shop.orders").output
    assert "create" in out and "alter" in out
    text = run("history", "diff", "--store", store, "shop.orders", 1, 3).output
    assert "column total decimal(10,2)" in text and "note renamed to remark" in text
    d = json.loads(run("history", "diff", "--store", store, "shop.orders", 1, 3, "--format", "json").output)
    assert d["renamed"] == [["note", "remark"]]
    r = run("history", "diff", "--store", store, "shop.orders", 1, 9, ok=False)
    assert r.exit_code == 1 and "no version 9" in r.output
    r = run("history", "versions", "--store", store, "shop.nope", ok=False)
    assert r.exit_code == 1


def test_strict_failure_stops_and_lenient_records_it(tmp_path, dialect):
    bad = tmp_path / "bad.sql"
    bad.write_text("CREATE TABLE t (id int);\nALTER TABLE t ADD COLUMN (((;\nCREATE TABLE u (id int);\n")
    store = tmp_path / "h.db"
    r = run("history", "record", "--dialect", dialect, "--store", store, "--database", "d", bad, ok=False)
    assert r.exit_code == 1 and "error" in r.stderr and f"{bad}:" in r.stderr
    info = json.loads(run("history", "info", "--store", store).output)
    assert info["last_seq"] == 1
    r = run("history", "record", "--dialect", dialect, "--store", store, "--lenient", bad)
    assert "1 failed" in r.stderr
    failed = json.loads(run("history", "show", "--store", store, "--failed", "--format", "json").output)
    assert [(f["seq"], f["position"]) for f in failed] == [(2, f"{bad}:2")]
    assert "failed events (1)" in run("history", "show", "--store", store, "--failed", "--format", "table").output
    shown = json.loads(run("history", "show", "--store", store).output)
    if dialect == "mysql":  # the failed ALTER blocks t: its schema is unknown from seq 2 on
        assert [t["name"] for t in shown["tables"]] == ["u"]
        versions = json.loads(run("history", "versions", "--store", store, "d.t", "--format", "json").output)
        assert [(v["kind"], v["valid_from_seq"]) for v in versions["versions"]] == [("create", 1), ("blocked", 2)]
        assert versions["versions"][1]["reason"].startswith("schema unknown since seq 2: ")
    else:  # a dialect that cannot name a statement's tables blocks nothing
        assert [t["name"] for t in shown["tables"]] == ["t", "u"]


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", ".json"])
def test_record_a_change_log(tmp_path, dialect, suffix):
    events = [
        {"seq": 10, "position": "bin.1:4", "ts": 1000, "op": "ddl", "database": "shop", "table": None,
         "ddl": "CREATE TABLE t (id int NOT NULL, PRIMARY KEY (id))", "before": None, "after": None},
        {"seq": 11, "position": "bin.1:90", "ts": 1001, "op": "c", "database": "shop", "table": "t",
         "ddl": None, "before": None, "after": [1]},
        {"seq": 12, "position": "bin.1:150", "ts": 1002, "op": "ddl", "database": "shop", "table": None,
         "ddl": "ALTER TABLE t ADD COLUMN v varchar(10)", "before": None, "after": None},
    ]
    path = tmp_path / f"log{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(events))
    else:
        text = "".join(json.dumps(e) + "\n" for e in events)
        path.write_bytes(gzip.compress(text.encode()) if suffix.endswith(".gz") else text.encode())
    store = tmp_path / "h.db"
    r = run("history", "record", "--dialect", dialect, "--store", store, path)
    assert "2 applied" in r.stderr and "1 row event(s) ignored" in r.stderr
    lines = [json.loads(x) for x in run("history", "changes", "--store", store).output.splitlines()]
    assert [(e["seq"], e["position"], e["ts"]) for e in lines] == [(10, "bin.1:4", 1000), (12, "bin.1:150", 1002)]
    assert lines[1]["changes"][0]["kind"] == "alter"
    assert [c["name"] for c in lines[1]["changes"][0]["after"]["columns"]] == ["id", "v"]
    at10 = json.loads(run("history", "show", "--store", store, "--at", 11, "shop.t").output)
    assert [c["name"] for c in at10["tables"][0]["columns"]] == ["id"]


def test_usage_errors(tmp_path, files, minisql_plugin):
    store = tmp_path / "h.db"
    r = run("history", "show", "--store", store, ok=False)
    assert r.exit_code == 1 and "no schema history" in r.output
    r = run("history", "record", "--store", store, files[0], ok=False)
    assert r.exit_code == 2 and "--dialect is required" in r.output
    r = run("history", "record", "--dialect", "nosuch", "--store", store, files[0], ok=False)
    assert r.exit_code == 2 and "nosuch" in r.output
    run("history", "record", "--dialect", "minisql", "--store", store, "--filter", "shop.*", files[0])
    r = run("history", "record", "--store", store, "--filter", "x.*", files[0], ok=False)
    assert r.exit_code == 2 and "filters" in r.output
    r = run("history", "show", "--store", store, "shop.nope", ok=False)
    assert r.exit_code == 1 and "no table shop.nope" in r.output
    info = json.loads(run("history", "info", "--store", store).output)
    assert info["dialect"] == "minisql" and info["filters"] == ["shop.*"] and info["tables"] == 1


def test_cli_with_an_installed_plugin(tmp_path):
    """The toy dialect installed as a real plugin (entry point), recorded in a subprocess."""
    target = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps",
                        "--target", str(target), str(REPO / "tests/fixtures/ddlcore-toy")],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot install the toy plugin: {r.stderr[-300:]}")
    sql = tmp_path / "t.sql"
    sql.write_text("CREATE TABLE a (id int);\nCREATE TABLE b (x varchar(3));\nCREATE TABLE a (id bigint);\n")
    env = dict(os.environ, PYTHONPATH=str(target))
    store = tmp_path / "toy.db"
    cmd = [sys.executable, "-m", "ddlcore.cli", "history"]
    r = subprocess.run(cmd + ["record", "--dialect", "toy", "--store", str(store), str(sql)],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(cmd + ["versions", "--store", str(store), "a", "--format", "json"],
                       capture_output=True, text=True, env=env)
    assert [v["table"]["columns"][0]["column_type"] for v in json.loads(r.stdout)["versions"]] == ["int", "bigint"]


def test_change_log_with_a_bad_row_event_and_a_bad_ddl_event(tmp_path, minisql_plugin):
    good = {"seq": 1, "position": "p1", "ts": 1, "op": "ddl", "database": "d", "table": None,
            "ddl": "CREATE TABLE t (id int)", "before": None, "after": None}
    bad_row = {"seq": 2, "position": "p2", "ts": 2, "op": "c", "database": "d", "table": "t",
               "ddl": None, "before": None, "after": [{"$nope": 1}]}
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad_row) + "\n")
    store = tmp_path / "h.db"
    r = run("history", "record", "--dialect", "minisql", "--store", store, path)
    assert "1 applied" in r.stderr and "1 row event(s) ignored" in r.stderr
    bad_ddl = {**good, "seq": 3, "position": "", "ddl": "CREATE TABLE u (id int)"}
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad_ddl) + "\n")
    r = run("history", "record", "--store", store, path, ok=False)
    assert r.exit_code == 1 and f"{path}:2" in r.output and "position" in r.output
