"""``ddlcore run`` keeps Spark's log off the terminal and in ``OUT/_logs`` (issue 29 item 5):
through the real ``ddlcore`` entry point in a subprocess (each test starts one Spark JVM)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

DDLCORE = str(Path(sys.executable).with_name("ddlcore"))


def _event(seq, op, **kw):
    return {"seq": seq, "position": f"p{seq}", "ts": 0, "op": op, "database": "db", "table": None, "ddl": None,
            "before": None, "after": None, **kw}


@pytest.fixture()
def bad_log(tmp_path) -> Path:
    """A change log whose third event is DDL the parser cannot read (found by the Spark run)."""
    p = tmp_path / "log.jsonl"
    events = [_event(1, "ddl", ddl="CREATE TABLE t (id int primary key)"),
              _event(2, "c", table="t", after=[1]),
              _event(3, "ddl", ddl="ALTER TABLE t ADD COLUMN ((( garbage")]
    p.write_text("".join(json.dumps(e) + "\n" for e in events))
    return p


def run(*args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([DDLCORE, *map(str, args)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})


def test_a_failed_run_is_one_line_and_spark_logs_to_the_output(tmp_path, bad_log):
    out = tmp_path / "out"
    r = run("run", "--strict", "--dialect", "mysql", "--changelog", bad_log, "--out", out,
            env={"DDLCORE_SPARK_LOG": ""})
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("error: stopped: event seq 3: DDL cannot be parsed: line 1, column 26")
    assert "Traceback" not in r.stderr and "WARN" not in r.stderr
    logs = sorted((out / "_logs").glob("run-*.log"))
    assert len(logs) == 1 and f"Spark's log: {logs[0]}" in lines[0]
    text = logs[0].read_text()
    assert "INFO org.apache.spark.SparkContext: Running Spark version" in text
    assert "Using incubator modules" in text  # the JVM's own stderr went to the file too


def test_verbose_and_the_level_variable_bring_spark_back_to_the_terminal(tmp_path, bad_log):
    r = run("run", "-v", "--strict", "--dialect", "mysql", "--changelog", bad_log, "--out", tmp_path / "out",
            env={"DDLCORE_SPARK_LOG": "INFO"})
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert any(" INFO SparkContext: Running Spark version" in s for s in lines), r.stderr[:2000]
    assert "Using incubator modules" in r.stderr  # -v: the JVM's stderr is the terminal's
    assert sum(s.startswith("error: stopped: event seq 3") for s in lines) == 1  # Spark's shutdown lines may follow


def test_the_console_threshold_follows_the_flags(tmp_path, monkeypatch):
    from pyspark import SparkContext

    from ddlcore.spark import logs

    # as in a fresh process: configure() changes nothing once a JVM runs (the suite's session)
    monkeypatch.setattr(SparkContext, "_gateway", None)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.delenv("LOG4J_CONFIGURATION_FILE", raising=False)
    for verbose, level, console in ((False, "", "OFF"), (True, "", "WARN"), (False, "debug", "DEBUG")):
        monkeypatch.setenv(logs.ENV_LEVEL, level)
        f = logs.configure(tmp_path / f"o{console}", verbose=verbose)
        cfg = logs.config_file(f).read_text()
        assert f.parent == tmp_path / f"o{console}" / "_logs"
        assert f"appender.console.filter.threshold.level = {console}\n" in cfg
    monkeypatch.setenv(logs.ENV_LEVEL, "loud")
    with pytest.raises(ValueError, match="DDLCORE_SPARK_LOG=LOUD: expected one of OFF"):
        logs.configure(tmp_path / "x")


def test_the_log4j_configuration_is_given_to_the_jvm_launch_only(tmp_path, monkeypatch):
    """configure() leaves the environment alone; jvm_launch() names the configuration to a
    process started inside it (as PySpark's spark-submit) and puts the environment back."""
    from pyspark import SparkContext

    from ddlcore.spark import logs

    monkeypatch.setattr(SparkContext, "_gateway", None)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.delenv("LOG4J_CONFIGURATION_FILE", raising=False)
    monkeypatch.delenv(logs.ENV_LEVEL, raising=False)
    before = dict(os.environ)
    f = logs.configure(tmp_path / "o")
    assert dict(os.environ) == before
    probe = [sys.executable, "-c", "import os, sys; print(os.environ.get('LOG4J_CONFIGURATION_FILE'))"]
    with logs.jvm_launch(f, quiet=False):
        inside = subprocess.run(probe, capture_output=True, text=True, check=True).stdout.strip()
    assert inside == str(logs.config_file(f)) and dict(os.environ) == before
    monkeypatch.setenv("LOG4J_CONFIGURATION_FILE", "/etc/mine.xml")  # a value of the caller's is restored
    with logs.jvm_launch(f, quiet=True):
        assert os.environ["LOG4J_CONFIGURATION_FILE"] == str(logs.config_file(f))
        os.write(2, b"jvm stderr line\n")
    assert os.environ["LOG4J_CONFIGURATION_FILE"] == "/etc/mine.xml"
    assert "jvm stderr line" in f.read_text()
