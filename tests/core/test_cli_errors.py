"""Bad input on the command line, through the real ``ddlcore`` entry point in a subprocess: one
line on stderr naming the option, file or position and the reason, no traceback, exit status 1
(2 for usage errors) — issue 32 items 5-9 and issue 29 item 5.  No test here starts Spark
(``tests/pipeline/test_cli_spark_log.py`` does)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

DDLCORE = str(Path(sys.executable).with_name("ddlcore"))
DDL = "CREATE TABLE d.t (id int, j json);\n"  # MySQL refuses an unqualified name with no database


def ddlcore(*args, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([DDLCORE, *map(str, args)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


def one_error_line(r: subprocess.CompletedProcess, status: int, *needles: str) -> str:
    """The single stderr line of a failed command, checked."""
    lines = r.stderr.splitlines()
    assert r.returncode == status, (r.returncode, r.stderr)
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.stderr and "\tat " not in r.stderr
    assert lines[0].startswith("error: ")
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def ddl(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("cli") / "t.sql"
    p.write_text(DDL)
    return p


@pytest.mark.parametrize("option, accepts", [
    ("server_version=abc", "MMmmpp"),
    ("character_set_server=klingon", "a character set"),
    ("flavor=sqlite", "one of mariadb, mysql, tidb"),
    ("lower_case_table_names=7", "one of 0, 1, 2"),
    ("ansi_quotes=maybe", "true or false"),
    ("collation_server=latin1_swedish_ci", "a collation of character_set_server utf8mb4"),
    ("nosuch=1", "unknown mysql parser option 'nosuch'"),
])
def test_a_bad_dialect_option_is_one_line_naming_it_and_what_it_accepts(ddl, option, accepts):
    r = ddlcore("parse", "--dialect", "mysql", "-o", option, ddl)
    one_error_line(r, 2, option.split("=")[0], accepts)
    assert r.stdout == ""


def test_dialect_options_are_normalised_once(ddl):
    r = ddlcore("parse", "--dialect", "mysql", "-o", "flavor=MySQL", "-o", "server_version=8.0.36",
                "-o", "ansi_quotes=ON", ddl)
    assert r.returncode == 0, r.stderr
    cols = json.loads(r.stdout)["tables"][0]["columns"]
    assert cols[1]["column_type"] == "json"  # MySQL's rendering, not MariaDB's longtext


def test_a_bad_postgres_option_and_a_bad_history_option(ddl, tmp_path):
    one_error_line(ddlcore("parse", "--dialect", "postgres", "-o", "search_path=,", ddl), 2, "search_path")
    store = tmp_path / "h.sqlite"
    one_error_line(ddlcore("history", "record", "--dialect", "mysql", "--store", store, "-o", "flavor=x", ddl), 2,
                   "flavor='x'")
    assert not store.exists()


def test_a_bad_spark_option_and_a_bad_capture_flag(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text("")
    one_error_line(ddlcore("run", "--changelog", log, "--out", tmp_path / "o", "-s", "decimal_handling=fast"), 2,
                   "decimal_handling='fast'", "one of precise, double, string")
    one_error_line(ddlcore("run", "--changelog", log, "--out", tmp_path / "o", "--conf", "novalue"), 2, "--conf")
    one_error_line(ddlcore("capture", "mysql", "--server-id", "0", "--out", tmp_path / "c"), 2, "--server-id")
    one_error_line(ddlcore("capture", "postgres", "--out", tmp_path / "c"), 2, "--dsn")
    one_error_line(ddlcore("capture", "tidb", "--out", tmp_path / "c"), 2)
    assert not (tmp_path / "o").exists()


WARNED = ("CREATE TABLE t (a int);\n"
          "ALTER TABLE nosuch ADD COLUMN x int;\n"
          "CREATE INDEX i ON nosuch (x);\n"
          "ALTER TABLE t DROP COLUMN zz;\n"
          "DROP TABLE nosuch2;\n"
          "ALTER TABLE t ADD COLUMN b int;\n"
          "TRUNCATE TABLE nosuch3;\n"
          "ALTER TABLE nosuch4 ADD COLUMN y int;\n")


@pytest.mark.parametrize("dialect", ["mysql", "postgres"])
def test_parse_prints_warnings_with_line_numbers(tmp_path, dialect):
    f = tmp_path / "w.sql"
    f.write_text(WARNED)
    db = ["--database", "d"] if dialect == "mysql" else []
    r = ddlcore("parse", "--dialect", dialect, *db, f)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert lines[0].startswith(f"warning {f}:2: table ") and "nosuch is not known" in lines[0]
    assert lines[1].startswith(f"warning {f}:3: ")
    # dropping a missing column is treated as altering a missing table: a warning, not a failure
    assert lines[2].startswith(f"warning {f}:4: column zz of table ") and "drop ignored" in lines[2]
    assert len(lines) == 6 and lines[-1] == "6 warning(s) (1 more with -v)"
    assert [c["name"] for c in json.loads(r.stdout)["tables"][0]["columns"]] == ["a", "b"]
    r = ddlcore("parse", "--dialect", dialect, *db, "-v", f)
    assert len(r.stderr.splitlines()) == 7 and f"{f}:8: " in r.stderr
    r = ddlcore("parse", "--dialect", dialect, *db, "--strict-warnings", f)
    assert r.returncode == 1 and r.stderr.splitlines()[-1] == "error: 6 warning(s) with --strict-warnings"


def test_statements_skipped_after_a_failed_create_are_warnings_with_lines(tmp_path):
    f = tmp_path / "l.sql"
    f.write_text("CREATE TABLE film (id int, CONSTRAINT);\nALTER TABLE film ADD COLUMN x int;\n"
                 "CREATE INDEX i ON film (x);\n")
    r = ddlcore("parse", "--dialect", "postgres", "--lenient", f)
    assert r.returncode == 0
    assert f"skipped unparsable statement {f}:1:" in r.stderr
    assert f"warning {f}:2: table public.film is not known" in r.stderr
    assert f"warning {f}:3: " in r.stderr
    assert r.stderr.splitlines()[-1] == "1 statement(s) could not be parsed (--lenient); 2 warning(s)"


@pytest.mark.parametrize("name, data, needle", [
    ("z.sql.gz", gzip.compress(DDL.encode(), mtime=0)[:-12], "truncated gzip data"),
    ("bin.sql", b"\x7fELF\x02\x01\x01\x00\x00", "byte 7: a NUL byte"),
    ("u16.sql", DDL.encode("utf-16"), "byte 0: UTF-16 text"),
])
def test_parse_and_history_record_refuse_the_same_files_alike(tmp_path, name, data, needle):
    f = tmp_path / name
    f.write_bytes(data)
    one_error_line(ddlcore("parse", "--dialect", "mysql", f), 1, str(f), needle)
    store = tmp_path / "h.sqlite"
    one_error_line(ddlcore("history", "record", "--dialect", "mysql", "--store", store, f), 1, str(f), needle)
    assert not store.exists() and not list(tmp_path.glob("h.sqlite*"))  # no half-made store


def test_history_record_reads_gzip_dumps(tmp_path):
    f = tmp_path / "dump.sql.gz"
    f.write_bytes(gzip.compress(DDL.encode()))
    store = tmp_path / "h.sqlite"
    r = ddlcore("history", "record", "--dialect", "mysql", "--store", store, f)
    assert r.returncode == 0, r.stderr
    assert "1 applied" in r.stderr


@pytest.mark.parametrize("name, data, needle", [
    ("bin.jsonl", b"\x7fELF\x02\x01\x01\x00\x00", "byte 7: a NUL byte: binary data, not a change log"),
    ("dump.jsonl", b"CREATE TABLE t (id int);\n", "byte 0: text starting with 'CREATE TABLE"),
    ("log.jsonl.gz", gzip.compress(b'{"seq": 1}\n' * 50, mtime=0)[:-10], "truncated gzip data"),
    ("log.jsonl", gzip.compress(b'{"seq": 1}\n', mtime=0), "gzip data in a file not named .gz"),
    ("arr.json", b'[{"seq": 1}]', "a JSON array: write one event per line"),
])
def test_run_refuses_a_file_that_is_not_a_change_log_before_spark_starts(tmp_path, name, data, needle):
    f = tmp_path / name
    f.write_bytes(data)
    one_error_line(ddlcore("run", "--changelog", f, "--out", tmp_path / "out"), 1, str(f), needle)
    assert not (tmp_path / "out").exists()


def test_a_directory_without_change_log_files_is_named_plainly(tmp_path):
    d = tmp_path / "dir_nonlog"
    d.mkdir()
    (d / "checkpoint.json").write_text("{}")
    (d / "notes.txt").write_text("x")
    line = one_error_line(ddlcore("run", "--changelog", d, "--out", tmp_path / "out"), 1,
                          f"{d}: no change-log files (*.jsonl, *.jsonl.gz, *.ndjson, *.ndjson.gz, *.parquet)")
    assert "None" not in line
    store = tmp_path / "h.sqlite"
    one_error_line(ddlcore("history", "record", "--dialect", "mysql", "--store", store, d), 1, f"{d}: no change-log")
    assert not store.exists()


def test_history_errors_are_one_line(tmp_path, ddl):
    store = tmp_path / "h.sqlite"
    assert ddlcore("history", "record", "--dialect", "mysql", "--store", store, ddl).returncode == 0
    one_error_line(ddlcore("history", "show", "--store", tmp_path / "none.sqlite"), 1, "no schema history")
    one_error_line(ddlcore("history", "versions", "--store", store, "nosuch.t"), 1, "nosuch.t")
    one_error_line(ddlcore("history", "diff", "--store", store, "t", "1", "x"), 2, "V2")
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"\x00" * 200)
    one_error_line(ddlcore("history", "info", "--store", junk), 1, str(junk))


def test_a_parse_error_is_one_line_file_line_column(tmp_path):
    f = tmp_path / "e.sql"
    f.write_text("CREATE TABLE a (id int);\nCREATE TABLE b (id int,, x int);\n")
    one_error_line(ddlcore("parse", "--dialect", "mysql", "--database", "d", f), 1, f"{f}:2:23: ", "in statement: CREATE TABLE b")
    store = tmp_path / "h.sqlite"
    one_error_line(ddlcore("history", "record", "--dialect", "mysql", "--database", "d", "--store", store, f), 1,
                   f"{f}:2:23: ",
                   "nothing recorded for this statement")


def test_debug_shows_the_traceback(tmp_path):
    r = ddlcore("parse", "--dialect", "mysql", "--debug", tmp_path / "missing.sql")
    assert r.returncode == 2
    f = tmp_path / "z.sql.gz"
    f.write_bytes(gzip.compress(DDL.encode())[:-12])
    r = ddlcore("parse", "--dialect", "mysql", "--debug", f)
    assert r.returncode == 1 and "Traceback" in r.stderr and r.stderr.splitlines()[-1].startswith("error: ")


def test_history_changes_and_prune_errors_are_one_line(tmp_path, ddl):
    one_error_line(ddlcore("history", "changes", "--store", tmp_path / "none.sqlite"), 1, "no schema history")
    one_error_line(ddlcore("history", "prune", "--store", tmp_path / "none.sqlite", "--before", "x"), 2, "--before")


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_capture_failures_are_one_line(tmp_path):
    port = _closed_port()
    one_error_line(ddlcore("capture", "mysql", "--port", port, "--server-id", "5", "--out", tmp_path / "m",
                           "--retry-for", "0"), 1, "Connection refused")
    one_error_line(ddlcore("capture", "postgres", "--dsn", f"host=127.0.0.1 port={port} dbname=x", "--slot", "s",
                           "--publication", "p", "--out", tmp_path / "p", "--retry-for", "0"), 1, "Connection refused")
    one_error_line(ddlcore("capture", "postgres", "--install", "--dsn", f"host=127.0.0.1 port={port} dbname=x"), 1,
                   "cannot connect")
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x05not a binlog message")
    one_error_line(ddlcore("capture", "tidb", "--from-file", junk, "--out", tmp_path / "t"), 1, "not a TiDB Binlog")


def test_history_table_ids_resolve_as_the_dialect_does(tmp_path):
    f = tmp_path / "pg.sql"
    f.write_text("CREATE TABLE items (id int);\nCREATE SCHEMA app;\nCREATE TABLE app.items (id int, x int);\n"
                 "CREATE TABLE app.orders (id int);\n")
    store = tmp_path / "h.sqlite"
    r = ddlcore("history", "record", "--dialect", "postgres", "-o", "database=shop", "--store", store, f)
    assert r.returncode == 0, r.stderr
    for given, meant in (("public.items", "shop.public.items"), ("items", "shop.public.items"),
                         ("app.items", "shop.app.items"), ("orders", "shop.app.orders"),
                         ("shop.app.items", "shop.app.items")):
        r = ddlcore("history", "versions", "--store", store, "--format", "json", given)
        assert r.returncode == 0, (given, r.stderr)
        tid = json.loads(r.stdout)["table_id"]
        assert f"{tid['database']}.{tid['schema']}.{tid['name']}" == meant, given
    one_error_line(ddlcore("history", "versions", "--store", store, "public.itemz"), 1,
                   "the history has no table public.itemz; closest: shop.public.items")
    one_error_line(ddlcore("history", "show", "--store", store, "nosuch"), 1, "no table nosuch", "at the end")
    r = ddlcore("history", "diff", "--store", store, "items", "1", "1")
    assert r.returncode == 0, r.stderr


def test_a_run_without_events_says_so_plainly():
    from types import SimpleNamespace

    from rich.console import Console

    from ddlcore.cli.run_cli import render_summary

    for previous, said in ((None, "no events in the change log: nothing to do"),
                           (49, "no events past the checkpoint (seq 49): nothing to do")):
        console = Console(record=True, width=200)
        render_summary(console, SimpleNamespace(counts={}, events=0, replayed=0, previous_seq=previous,
                                                last_seq=previous), "out")
        assert console.export_text().strip() == said


def test_history_record_takes_the_dialect_the_change_log_names(tmp_path):
    events = [{"seq": 1, "position": "p1", "ts": 0, "op": "source", "database": None, "table": None,
               "source": {"dialect": "postgres", "epoch": "e1", "parser_options": {"search_path": ["app"]}}},
              {"seq": 2, "position": "p2", "ts": 0, "op": "ddl", "database": "shop", "table": None,
               "ddl": "CREATE TABLE Items (id int)"}]
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    store = tmp_path / "h.sqlite"
    r = ddlcore("history", "record", "--store", store, log)
    assert r.returncode == 0, r.stderr
    info = json.loads(ddlcore("history", "info", "--store", store).stdout)
    assert info["dialect"] == "postgres"
    assert ddlcore("history", "versions", "--store", store, "items").returncode == 0  # folded, on app
    sql = tmp_path / "t.sql"
    sql.write_text(DDL)
    one_error_line(ddlcore("history", "record", "--store", tmp_path / "new.sqlite", sql), 2,
                   "--dialect is required: 2 dialects are installed")
    assert not (tmp_path / "new.sqlite").exists()
