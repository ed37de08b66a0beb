"""``ddlcore.spark.localjvm``: a local session started by ``spark_session`` writes files with
the modes Hadoop's ``LocalFileSystem`` gives them, without a ``chmod`` process per file, and
runs the parallel collector with its adaptive size policy (the JVM's default); a setting the
caller or the Spark configuration makes wins.

Each session runs in a fresh Python process (the filesystem class and the collector are fixed
when the JVM starts), with a ``chmod`` first on ``PATH`` that logs its calls before running the
real one: the Hadoop filesystem's run shows that the log catches Hadoop's processes, and
ddlcore's must leave it empty."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ddlcore.spark import localjvm

_SCRIPT = r"""
import json, sys
from ddlcore.spark import localjvm
from ddlcore.spark.pipeline import spark_session
spark = spark_session("local[1]", "localjvm test", conf=json.loads(sys.argv[2]))
spark.range(6).selectExpr("id", "id % 2 AS p").write.partitionBy("p").parquet(sys.argv[1])
jvm = spark._jvm
fs = jvm.org.apache.hadoop.fs.FileSystem.get(jvm.java.net.URI("file:///"), spark._jsc.hadoopConfiguration())
management = jvm.java.lang.management.ManagementFactory
gcs = [b.getName() for b in management.getGarbageCollectorMXBeans()]
hotspot = management.getPlatformMXBean(jvm.java.lang.Class.forName("com.sun.management.HotSpotDiagnosticMXBean"))
from pyspark.errors.utils import is_debugging_enabled
print(json.dumps({"status": localjvm.status(), "fs": fs.getClass().getName(), "gc": gcs,
                  "adaptive": hotspot.getVMOption("UseAdaptiveSizePolicy").getValue(),
                  "debugging": is_debugging_enabled()}))
spark.stop()
"""


def _write(tmp_path: Path, name: str, conf: dict) -> tuple[dict, list[str], list[tuple]]:
    """One session's write into ``tmp_path/shared/name``: (what the script printed, the
    ``chmod`` calls logged, each written path's normalised name and mode)."""
    bin_dir, log = tmp_path / "bin", tmp_path / f"chmod-{name}.log"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "chmod"
    fake.write_text(f'#!/bin/sh\necho "$@" >> "$CHMOD_LOG"\nexec {shutil.which("chmod")} "$@"\n')
    fake.chmod(0o755)
    shared = tmp_path / "shared"  # set-group-ID: what a directory made in it inherits, and keeps
    shared.mkdir(exist_ok=True)
    shared.chmod(0o2775)
    out = shared / name
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "CHMOD_LOG": str(log)}
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, str(out), json.dumps(conf)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    printed = json.loads(proc.stdout.strip().splitlines()[-1])
    modes = []
    for p in sorted(out.rglob("*")):
        rel = re.sub(r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}", "UUID", str(p.relative_to(out)))
        modes.append((rel, p.is_dir(), stat.S_IMODE(p.stat().st_mode)))
    calls = log.read_text().splitlines() if log.exists() else []
    return printed, calls, modes


def test_local_session_writes_the_same_modes_without_a_chmod_process(tmp_path):
    ours, our_calls, our_modes = _write(tmp_path, "ddlcore", {})
    # the caller's choices win: Hadoop's filesystem, G1
    hadoop, hadoop_calls, hadoop_modes = _write(
        tmp_path, "hadoop", {localjvm.FS_IMPL_KEY: "org.apache.hadoop.fs.LocalFileSystem",
                             localjvm.JAVA_OPTIONS_KEY: "-XX:+UseG1GC"})
    assert ours["fs"] == localjvm.FS_CLASS and f"{localjvm.FS_CLASS} from" in ours["status"], ours
    assert "PS MarkSweep" in ours["gc"] and "-XX:+UseParallelGC" in ours["status"], ours
    # with the adaptive size policy on: fixed generation sizes kept the old generation at its
    # starting size, and a fresh JVM's first job on a wide table stalled in full collections
    assert ours["adaptive"] == "true" and hadoop["adaptive"] == "true", (ours, hadoop)
    # and PySpark's call-site recording for each Column function is off (spark_session)
    assert ours["debugging"] is False and hadoop["debugging"] is False
    assert hadoop["fs"] == "org.apache.hadoop.fs.LocalFileSystem", hadoop
    assert "G1 Old Generation" in hadoop["gc"] and "-XX:+UseG1GC, as given" in hadoop["status"], hadoop
    # the log catches Hadoop's processes (one per file and directory it made) ...
    assert len(hadoop_calls) >= 4 and all(c.split()[0] in ("0644", "0755") for c in hadoop_calls), hadoop_calls
    # ... and ddlcore's filesystem starts none
    assert our_calls == []
    assert our_modes == hadoop_modes
    assert any(is_dir and mode & stat.S_ISGID for _, is_dir, mode in our_modes), our_modes
    assert any(name.endswith(".parquet") and mode == 0o644 for name, _, mode in our_modes), our_modes


def test_the_filesystem_class_compiles_on_this_machine():
    if localjvm.javac() is None:
        pytest.skip("no javac on this machine: sessions use Hadoop's LocalFileSystem")
    where = localjvm.classes_dir()
    assert where is not None, localjvm.compile_outcome()
    assert all((where / c).is_file() for c in localjvm.CLASS_FILES)


def test_session_conf_leaves_each_setting_to_the_caller_and_the_configuration(tmp_path, monkeypatch):
    monkeypatch.setattr(localjvm, "_compiled", None)
    monkeypatch.setenv("DDLCORE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.delenv("SPARK_CONF_DIR", raising=False)
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)
    for v in localjvm.JVM_OPTION_VARIABLES:
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no javac
    collector = {localjvm.JAVA_OPTIONS_KEY: localjvm.COLLECTOR}
    assert localjvm.session_conf("local[2]") == collector
    assert "no javac" in localjvm.status()
    assert localjvm.session_conf("spark://127.0.0.1:7077") == {}
    assert "not local" in localjvm.status()
    given = {localjvm.FS_IMPL_KEY: "org.apache.hadoop.fs.LocalFileSystem",
             localjvm.JAVA_OPTIONS_KEY: "-Dx=1 -XX:+UseZGC"}
    assert localjvm.session_conf("local[*]", given) == {}
    assert "org.apache.hadoop.fs.LocalFileSystem, as the session's conf" in localjvm.status()
    assert "-XX:+UseZGC, as given" in localjvm.status()
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", "-XX:+UseSerialGC")
    assert localjvm.session_conf("local[*]") == {}
    monkeypatch.delenv("JAVA_TOOL_OPTIONS")
    # other Java options are kept, after the collector
    assert localjvm.session_conf("local[*]", {localjvm.JAVA_OPTIONS_KEY: "-Dx=1"}) == {
        localjvm.JAVA_OPTIONS_KEY: f"{localjvm.COLLECTOR} -Dx=1"}
    # a property the Spark configuration sets is not replaced
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    (conf_dir / "spark-defaults.conf").write_text(f"# {localjvm.JAVA_OPTIONS_KEY} -Dcommented=1\n")
    monkeypatch.setenv("SPARK_CONF_DIR", str(conf_dir))
    assert localjvm.session_conf("local") == collector  # a comment sets nothing
    (conf_dir / "spark-defaults.conf").write_text(f"{localjvm.CLASS_PATH_KEY} /opt/jars/x.jar\n"
                                                  f"{localjvm.JAVA_OPTIONS_KEY} -Dy=2\n")
    monkeypatch.setenv("SPARK_CONF_DIR", str(conf_dir))
    assert localjvm.session_conf("local") == {}
    assert localjvm.status().count("spark-defaults.conf") == 2
    monkeypatch.delenv("SPARK_CONF_DIR")
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--driver-java-options -Dz=3 pyspark-shell")
    assert localjvm.session_conf("local") == {}
    assert "PYSPARK_SUBMIT_ARGS" in localjvm.status()


def test_session_conf_keeps_the_callers_class_path(tmp_path, monkeypatch):
    where = localjvm.classes_dir()
    if where is None:
        pytest.skip(f"the class does not compile here: {localjvm.compile_outcome()}")
    monkeypatch.delenv("SPARK_CONF_DIR", raising=False)
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)
    for v in localjvm.JVM_OPTION_VARIABLES:
        monkeypatch.delenv(v, raising=False)
    conf = localjvm.session_conf("local[2]", {localjvm.CLASS_PATH_KEY: "/opt/jars/x.jar",
                                              localjvm.JAVA_OPTIONS_KEY: "-XX:+UseG1GC"})
    assert conf == {localjvm.CLASS_PATH_KEY: f"{where}{os.pathsep}/opt/jars/x.jar",
                    localjvm.FS_IMPL_KEY: localjvm.FS_CLASS}
