"""``ddlcore run`` on a Spark standalone cluster: a master and two workers, each its own
process started from the pyspark installation on loopback (``spark-class ...Master`` /
``...Worker``, own work directories, 1 core and a small memory each), writing to a directory
they all see.

What the tests prove:

* ``ddlcore run --master spark://HOST:PORT`` and the same job through ``spark-submit`` write
  exactly the output of a local run (in the test process's local session; every row of every
  table version with its Parquet schema and field metadata, the schema files, the quarantine,
  the checkpoint, the run counts), and both workers ran executors of each job;
* the executors' Python is a separate virtual environment with **no ddlcore** (nor anything
  but the standard library: the workers add pyspark's own zip files): a task that imports
  ddlcore fails there, a task that asks for ``sys.executable`` runs there — and the pipeline's
  runs started **no Python process at all** on the executors (``PYSPARK_PYTHON`` is a wrapper
  that logs every start): the hot path is Spark's JVM alone.

Under ``CI=true`` a missing Java or pyspark fails these tests; elsewhere they are skipped.
"""

from __future__ import annotations

import decimal
import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

from ddlcore.raw import encode_json as e

CI = os.environ.get("CI") == "true"
#: three ddlcore runs and a probe, each a Spark application: minutes on a loaded 2-core machine
pytestmark = pytest.mark.slow


def _require(what: str, ok: bool) -> None:
    if ok:
        return
    if CI:  # a collection error: the run fails
        pytest.fail(f"{what} is needed for the Spark cluster tests (CI=true: not skipped)")
    pytest.skip(f"{what} is needed for the Spark cluster tests", allow_module_level=True)


_require("Java", shutil.which("java") is not None or bool(os.environ.get("JAVA_HOME")))
try:
    import pyarrow.parquet as pq
    from pyspark.find_spark_home import _find_spark_home
except ImportError as exc:  # pragma: no cover - the environment says
    _require(f"pyspark and pyarrow ({exc})", False)

SPARK_KEY = b"org.apache.spark.sql.parquet.row.metadata"
BIN = Path(sys.executable).parent
#: executors: one per worker, small (2 cores shared by everything on this machine)
EXECUTOR_CONF = {"spark.executor.memory": "512m", "spark.executor.cores": "1", "spark.cores.max": "2",
                 "spark.driver.host": "127.0.0.1", "spark.driver.memory": "768m"}


def _free_ports(n: int) -> list[int]:
    """``n`` distinct free loopback ports: the sockets are held open together while the kernel
    picks them (one at a time, a port closed may be handed out again at once — the master's
    RPC and web UI ports once came out equal, and the readiness probe's HTTP request then
    reached the RPC port: "Too large frame")."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _cluster_env(tmp: Path) -> dict[str, str]:
    # LOG4J_CONFIGURATION_FILE: an in-process ``ddlcore run`` earlier in the suite leaves ddlcore's
    # log4j configuration there (ddlcore.spark.logs), which keeps the executors' task lines out of
    # the logs ``tasks_per_worker`` reads
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "SPARK_HOME",
                                                               "PYSPARK_SUBMIT_ARGS", "SPARK_MASTER",
                                                               "LOG4J_CONFIGURATION_FILE")}
    conf = tmp / "conf"  # no spark-defaults.conf or log4j settings of the machine's
    conf.mkdir(exist_ok=True)
    env.update(SPARK_LOCAL_IP="127.0.0.1", SPARK_DAEMON_MEMORY="256m", SPARK_CONF_DIR=str(conf),
               SPARK_LOCAL_DIRS=str(tmp / "local"), SPARK_HOME=_find_spark_home())
    return env


class Cluster:
    """A running standalone cluster: ``url``, the web UI's ``ui``, ``workers`` (their work dirs)."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.env = _cluster_env(tmp)
        self.port, ui, *worker_ui = _free_ports(4)
        self.url = f"spark://127.0.0.1:{self.port}"
        self.ui = f"http://127.0.0.1:{ui}/json/"
        self.procs: list[tuple[str, subprocess.Popen, Path]] = []
        spark_class = str(Path(self.env["SPARK_HOME"]) / "bin" / "spark-class")
        self._start("master", [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(self.port), "--webui-port", str(ui)])
        self.workers = []
        for n, worker_port in zip((1, 2), worker_ui):
            work = tmp / f"worker{n}"
            work.mkdir()
            self.workers.append(work)
            self._start(f"worker{n}", [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                                       "--cores", "1", "--memory", "640m", "--work-dir", str(work),
                                       "--webui-port", str(worker_port), self.url])

    def _start(self, name: str, cmd: list[str]) -> None:
        log = self.tmp / f"{name}.log"
        with open(log, "wb") as fh:
            proc = subprocess.Popen(cmd, env=self.env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append((name, proc, log))

    def logs(self) -> str:
        return "\n".join(f"--- {name} (exit {p.poll()}):\n" + log.read_text(errors="replace")[-3000:]
                         for name, p, log in self.procs)

    def state(self) -> dict:
        with urllib.request.urlopen(self.ui, timeout=5) as r:
            return json.loads(r.read())

    def wait_ready(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(p.poll() is not None for _, p, _ in self.procs):
                break
            try:
                if self.state().get("aliveworkers") == 2:
                    return
            except (OSError, ValueError):  # not listening yet, or an empty page while the UI starts
                pass
            time.sleep(0.5)
        raise AssertionError(f"the standalone cluster did not come up with 2 workers:\n{self.logs()}")

    def stop(self) -> None:
        for _, p, _ in reversed(self.procs):  # workers first; each took its executors in its group
            if p.poll() is None:
                p.terminate()
        for _, p, _ in reversed(self.procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(p.pid, 9)  # the process group this test started (executors included)
            except ProcessLookupError:
                pass
            p.wait()

    def executors_per_worker(self) -> list[int]:
        """How many executor directories (``app-*/N``) each worker's work dir holds."""
        return [len(list(w.glob("app-*/*/stderr"))) for w in self.workers]

    def tasks_per_worker(self) -> list[int]:
        """Tasks the executors of each worker ran (from their logs)."""
        return [sum(f.read_text(errors="replace").count("Running task") for f in w.glob("app-*/*/stderr"))
                for w in self.workers]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """The cluster, started (not yet ready: ``wait_ready`` — the reference run goes on while
    its JVMs start)."""
    c = Cluster(tmp_path_factory.mktemp("spark-cluster"))
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="module")
def clean_python(tmp_path_factory):
    """``(wrapper, log)``: a ``PYSPARK_PYTHON`` for the executors — a script that appends a line
    to ``log`` and runs the Python of a new virtual environment holding no package at all (the
    executors put pyspark's own ``pyspark.zip`` / ``py4j`` zip on its path)."""
    tmp = tmp_path_factory.mktemp("executor-python")
    venv = tmp / "venv"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", str(venv)],
                   check=True)
    log = tmp / "started.log"
    log.write_text("")
    wrapper = tmp / "python"
    wrapper.write_text(f"#!/bin/sh\necho \"$$ $*\" >> '{log}'\nexec '{venv / 'bin' / 'python'}' \"$@\"\n")
    wrapper.chmod(0o755)
    return wrapper, log


def write_log(directory: Path) -> Path:
    """A change log split over three files (several input partitions): two tables, three
    versions, inserts, updates, deletes, a value that cannot be converted, a row of an unknown
    table and a malformed line."""
    directory.mkdir()
    events = [{"op": "ddl", "database": "shop", "ddl": "CREATE DATABASE shop"},
              {"op": "ddl", "database": "shop", "ddl":
                  "CREATE TABLE orders (id int unsigned NOT NULL PRIMARY KEY, status enum('new','paid'), "
                  "note varchar(20) CHARACTER SET latin1, total decimal(8,2), placed datetime(3))"},
              {"op": "ddl", "database": "shop", "ddl": "CREATE TABLE items (id bigint PRIMARY KEY, tags set('a','b'), "
                                                       "changed timestamp(6))"}]
    for i in range(1, 121):
        events.append({"op": "c", "database": "shop", "table": "orders",
                       "after": [e(-i), e(1 + i % 2), e(b"caf\xe9" if i % 3 else None), e(decimal.Decimal(f"{i}.25")),
                                 e(f"2024-02-{1 + i % 28:02d} 13:14:15.{i:03d}")]})
        events.append({"op": "c", "database": "shop", "table": "items",
                       "after": [e(i), e(i % 4), e(f"2024-03-01 00:00:{i % 60:02d}.{i:06d}")]})
    events.append({"op": "u", "database": "shop", "table": "orders",
                   "before": [e(-1), e(2), e(b"caf\xe9"), e(decimal.Decimal("1.25")), e("2024-02-02 13:14:15.001")],
                   "after": [e(-1), e(9), e(b"x"), e(decimal.Decimal("1.25")), e(None)]})  # enum index 9: quarantined
    events.append({"op": "ddl", "database": "shop", "ddl": "ALTER TABLE orders ADD COLUMN qty smallint NOT NULL "
                                                          "DEFAULT 1 AFTER id, DROP COLUMN placed"})
    for i in range(1, 61):
        events.append({"op": "u", "database": "shop", "table": "orders",
                       "before": [e(-i), e(1), e(1), e(b"y"), e(decimal.Decimal("2.00"))], "after": [e(-i), e(i), e(2), e(b"z"), e(decimal.Decimal("3.00"))]})
        events.append({"op": "d", "database": "shop", "table": "items", "before": [e(i), e(1), e(None)]})
    events.append({"op": "c", "database": "shop", "table": "nowhere", "after": [e(1)]})
    lines = []
    for seq, ev in enumerate(events, start=1):
        ev.update(seq=seq, position=f"mariadb-bin.000001:{100 * seq}", ts=1_700_000_000_000 + seq)
        lines.append(json.dumps(ev))
    lines.insert(200, '{"seq": "not a number", "op": "c"')
    third = len(lines) // 3
    for n, chunk in enumerate((lines[:third], lines[third:2 * third], lines[2 * third:]), start=1):
        (directory / f"changelog-{n:06d}.jsonl").write_text("\n".join(chunk) + "\n")
    return directory


def snapshot(out: Path) -> dict:
    """Everything a reader of ``out`` sees, read without Spark (pyarrow and json)."""
    snap: dict = {}
    for d in sorted(out.rglob("schema_version=*")):
        files = sorted(d.glob("*.parquet"))
        schemas = {pq.read_schema(f).metadata[SPARK_KEY] for f in files}
        rows = pq.read_table(files).to_pylist()
        snap[str(d.relative_to(out))] = (schemas, sorted(rows, key=lambda r: (r["_seq"], r["_row"] or 0)))
    snap["_schemas"] = {f.name: json.loads(f.read_text()) for f in sorted((out / "_schemas").glob("*.json"))}
    snap["_quarantine"] = sorted((json.loads(line) for f in (out / "_quarantine").glob("*.json")
                                  for line in f.read_text().splitlines() if line.strip()),
                                 key=lambda r: (r["seq"] is not None, r["seq"] or 0, r["reason"]))
    snap["checkpoint"] = json.loads((out / "_state" / "checkpoint.json").read_text())["last_seq"]
    run = json.loads((out / "_run.json").read_text())["last_run"]
    run.pop("seconds")
    snap["_run.json"] = run
    return snap


def _run(cmd: list[str], env: dict[str, str], what: str) -> None:
    t0 = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{what} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    print(f"{what}: {time.monotonic() - t0:.1f} s")


def _conf_args(flag: str = "--conf") -> list[str]:
    return [a for k, v in EXECUTOR_CONF.items() for a in (flag, f"{k}={v}")]


@pytest.fixture(scope="module")
def local_output(spark, tmp_path_factory):
    """``(log, snapshot)``: the log and the output of its run in a local session — the JVM
    this test process already runs (``tests/pipeline/conftest.py``); a ``ddlcore run`` of its
    own (``local[*]``) started another JVM on a machine where the cluster's three were
    starting.  The CLI itself runs in the tests below (``ddlcore run --master``,
    ``spark-submit ... run``)."""
    from ddlcore.spark.pipeline import run_pipeline

    tmp = tmp_path_factory.mktemp("cluster-reference")
    log = write_log(tmp / "log")
    run_pipeline(log, tmp / "out", spark=spark, dialect="mysql")
    snap = snapshot(tmp / "out")
    assert snap["_run.json"]["rows"] == 120 + 60 + 120 + 60 and snap["_run.json"]["quarantined"] == 3
    return log, snap


def test_master_url_run_equals_the_local_run_and_executors_need_no_ddlcore(cluster, clean_python, local_output,
                                                                           tmp_path):
    wrapper, started = clean_python
    log, expected = local_output
    env = dict(cluster.env, PYSPARK_PYTHON=str(wrapper))
    cluster.wait_ready()
    apps_before = cluster.executors_per_worker()
    # the output as a URI: the driver's side goes through Hadoop's FileSystem, the executors write to it
    _run([str(BIN / "ddlcore"), "run", "--dialect", "mysql", "--changelog", str(log),
          "--out", (tmp_path / "out").as_uri(),
          "--master", cluster.url, *_conf_args()], env, "ddlcore run --master")
    assert snapshot(tmp_path / "out") == expected
    # the job ran on the cluster: an executor on each worker, and each ran tasks
    assert [n - b for n, b in zip(cluster.executors_per_worker(), apps_before)] == [1, 1]
    assert all(n > 0 for n in cluster.tasks_per_worker()), cluster.tasks_per_worker()
    assert started.read_text() == "", "the pipeline started Python on an executor"


def test_spark_submit_run_equals_the_local_run(cluster, clean_python, local_output, tmp_path):
    wrapper, started = clean_python
    log, expected = local_output
    before = started.read_text()
    submit = subprocess.run([sys.executable, "-m", "ddlcore.spark.submit"], capture_output=True, text=True,
                            check=True).stdout.strip()
    cluster.wait_ready()
    apps_before = cluster.executors_per_worker()
    _run([str(Path(cluster.env["SPARK_HOME"]) / "bin" / "spark-submit"), "--master", cluster.url,
          "--conf", f"spark.pyspark.python={wrapper}", "--conf", f"spark.pyspark.driver.python={sys.executable}",
          *_conf_args(), submit, "run", "--dialect", "mysql", "--changelog", str(log), "--out",
          str(tmp_path / "out")],
         cluster.env, "spark-submit ddlcore run")
    assert snapshot(tmp_path / "out") == expected
    assert [n - b for n, b in zip(cluster.executors_per_worker(), apps_before)] == [1, 1]
    assert started.read_text() == before, "the pipeline started Python on an executor"


PROBE = textwrap.dedent("""
    import json, sys
    from pyspark.sql import SparkSession

    conf = json.loads(sys.argv[2])
    builder = SparkSession.builder.master(sys.argv[1]).appName("probe").config("spark.task.maxFailures", "1")
    for k, v in conf.items():
        builder = builder.config(k, v)
    sc = builder.getOrCreate().sparkContext
    where = sc.parallelize(range(4), 4).map(lambda _: __import__("sys").executable).collect()
    try:
        sc.parallelize([0], 1).map(lambda _: __import__("ddlcore").__file__).collect()
        error = None
    except Exception as exc:
        error = str(exc)
    print(json.dumps({"executables": sorted(set(where)), "error": error}))
""")


def test_executor_python_has_no_ddlcore(cluster, clean_python, tmp_path):
    """The control for the tests above: a Python task on these executors runs in the clean
    environment, and importing ddlcore there fails."""
    wrapper, started = clean_python
    env = dict(cluster.env, PYSPARK_PYTHON=str(wrapper))
    cluster.wait_ready()
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    proc = subprocess.run([sys.executable, str(script), cluster.url, json.dumps(EXECUTOR_CONF)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-5000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    venv_python = wrapper.parent / "venv" / "bin" / "python"
    assert result["executables"] == [str(venv_python)]
    assert result["error"] is not None and "No module named 'ddlcore'" in result["error"], result["error"]
    assert "pyspark.daemon" in started.read_text()  # the wrapper saw the executors start Python
