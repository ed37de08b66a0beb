"""Conversion groups of few rows converted on the driver inside a Spark run
(``driver.convert_staged``, for groups of at most ``Tuning.driver_max_rows`` staged rows) against
a Spark job per group (``DRIVER_MAX_ROWS = -1``): the same log gives the same output — rows,
Parquet schemas and Spark's footer, ``_run.json`` counts, quarantine records, state — on logs
with every MySQL type family, PostgreSQL types, groups of several versions (sharded tables)
where one row cannot be converted, rows read in several batches, a group left to Spark for a
value whose text is not its raw value's text form, replayed quarantine, and ``--strict``; the
groups converted in worker processes and in the driver itself, and a worker's failure or death
stopping the run before its commit."""

from __future__ import annotations

import contextlib
import decimal
import hashlib
import json
import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from ddlcore.runconfig import Tuning  # noqa: E402
from ddlcore.spark import pipeline as pl  # noqa: E402
from ddlcore.spark import driver, forkpool  # noqa: E402

from .support import EXAMPLES, assert_same_output, event, lines_of, mysql_extra_events, quarantine  # noqa: E402
from .support import EVENT, Log, memo_table, sharded_log  # noqa: E402

_RESULT_FIELDS = ("events", "rows", "quarantined", "ddl", "counts", "quarantine_reasons", "last_seq",
                  "previous_seq", "versions_written", "dialect", "replayed")


#: the reference runs: every conversion group a Spark job
SPARK_JOBS = Tuning(driver_max_rows=-1)
#: the runs compared with them: groups of at most 2,000 rows on the driver
ON_DRIVER = Tuning(driver_max_rows=2_000)
#: the same in two worker processes
TWO_WORKERS = replace(ON_DRIVER, driver_workers=2)


def _run(spark, log: Path, out: Path, tuning: Tuning, **kw):
    """``run_pipeline`` with ``tuning`` (``driver_max_rows``: groups of at most that many rows
    on the driver); returns the result and the progress messages."""
    said: list[str] = []
    res = pl.run_pipeline(log, out, spark=spark, progress=said.append, tuning=tuning, **kw)
    return res, said


class SparkJobRuns:
    """The runs with Spark jobs only (``SPARK_JOBS``), one per log content, shared
    by this module's tests: the reference every driver run is compared with.  Such a run
    never reaches ``convert_staged`` (no group has at most -1 rows), so the settings the tests
    vary (``Tuning``'s ``driver_workers``, ``batch_rows``, ``batch_bytes``, ``chunk_rows``,
    ``part_rows``, ``group_max_bytes``; ``OutputFS.local``, the input split of the driver run) cannot change
    its output: the tests on the same log (the parametrized ones; the sharded log's) ran the
    same reference each before.  The log is copied to a directory of its content's, and both
    runs read that copy (the same path, as before: quarantine records name the file)."""

    def __init__(self, base: Path):
        self.base = base
        self.runs: dict[str, tuple] = {}

    def log(self, log: Path) -> Path:
        key = hashlib.sha256(log.read_bytes()).hexdigest()[:16]
        shared = self.base / key / log.name
        if not shared.exists():
            shared.parent.mkdir()
            shutil.copyfile(log, shared)
        return shared

    def run(self, spark, log: Path, **kw):
        """``(output, result, progress)`` of the Spark jobs' run of ``log`` (a path of ``log()``)."""
        key = (str(log), tuple(sorted(kw.items())))
        if key not in self.runs:
            out = log.parent / f"spark-{len(self.runs)}"
            self.runs[key] = (out, *_run(spark, log, out, SPARK_JOBS, **kw))
        return self.runs[key]


@pytest.fixture(scope="module")
def spark_runs(tmp_path_factory) -> SparkJobRuns:
    return SparkJobRuns(tmp_path_factory.mktemp("spark-job-runs"))


def _both_ways(spark, tmp_path: Path, log: Path, spark_runs: SparkJobRuns, *, tuning: Tuning = ON_DRIVER,
               driver_settings=contextlib.nullcontext, **kw):
    """``log`` run with Spark jobs only (``spark_runs``: once per log in this module), and into
    a new output with ``tuning`` (groups of at most ``driver_max_rows`` rows on the driver; within
    ``driver_settings()``, a context manager): asserts the outputs and results equal; returns
    the driver run's result and progress."""
    log = spark_runs.log(log)
    out_driver = tmp_path / "driver"
    out_spark, res_spark, said_spark = spark_runs.run(spark, log, **kw)
    assert not any("on the driver" in m for m in said_spark), said_spark
    with driver_settings():
        res_driver, said = _run(spark, log, out_driver, tuning, **kw)
    assert any("on the driver" in m for m in said), said
    assert_same_output(spark, out_driver, out_spark, "", "")
    for field in _RESULT_FIELDS:
        assert getattr(res_driver, field) == getattr(res_spark, field), field
    return res_driver, said


def _read_in_batches(monkeypatch) -> None:
    """Make ``convert_staged`` take the path of an output on another filesystem than the local
    one (the driver reads the groups' rows in batches through Spark and writes the files the
    workers return through Hadoop's ``FileSystem``) on this local output."""
    from ddlcore.spark.fs import OutputFS

    monkeypatch.setattr(OutputFS, "local", lambda self, rel="": None)


def _seq_of(line: str):
    try:
        return json.loads(line).get("seq")
    except ValueError:
        return None


@pytest.mark.parametrize("workers, batches", [(1, False), (2, False), (2, True)])
def test_mysql_log_on_the_driver_equals_spark_jobs(spark, tmp_path, monkeypatch, spark_runs, workers, batches):
    """In two worker processes and in the driver itself (``Tuning.driver_workers``); the groups' rows
    read by the workers (a local output) or by the driver in batches (any other)."""
    if batches:
        _read_in_batches(monkeypatch)
    lines = lines_of(EXAMPLES / "shop" / "changelog.jsonl")  # recorded from MariaDB: 50 events
    log = tmp_path / "changelog.jsonl"
    # but the lines placed before seq 49 (for a re-run's checkpoint: in this first run they would
    # give seq 3 and 4 twice, which the seq rule refuses)
    extra = [ln for ln in mysql_extra_events(len(lines)) if _seq_of(ln) is None or _seq_of(ln) > len(lines)]
    log.write_text("".join(ln + "\n" for ln in lines + extra))
    res, said = _both_ways(spark, tmp_path, log, spark_runs, tuning=replace(ON_DRIVER, driver_workers=workers))
    assert any(m == "converting them in 2 worker processes" for m in said) == (workers == 2), said
    assert res.rows > 0 and res.quarantined >= 9, res.quarantine_reasons
    reasons = {r["reason"] for r in quarantine(tmp_path / "driver")}
    assert any(r.startswith("cannot convert: status (9)") for r in reasons), reasons
    assert any(r.startswith("cannot convert: row (2): expected 18 raw values, got 2") for r in reasons), reasons
    # every group went to the driver: no conversion job
    assert not any(m.startswith("converting shop.") for m in said), said


def test_postgres_log_on_the_driver_equals_spark_jobs(spark, tmp_path, monkeypatch, spark_runs):
    pytest.importorskip("ddlcore_postgres")
    lines = lines_of(EXAMPLES / "pg_shop" / "changelog.jsonl")  # recorded from PostgreSQL 15: 47 events
    log = tmp_path / "changelog.jsonl"
    log.write_text("".join(ln + "\n" for ln in lines))
    _both_ways(spark, tmp_path, log, spark_runs)


def test_postgres_names_that_differ_only_in_case_on_the_driver(spark, tmp_path, monkeypatch, spark_runs):
    """A PostgreSQL table whose column names differ only in case (written case-sensitively by
    the Spark jobs) and a text array, converted on the driver as by a Spark job."""
    pytest.importorskip("ddlcore_postgres")
    lines = lines_of(EXAMPLES / "pg_shop" / "changelog.jsonl")
    n = max(json.loads(ln)["seq"] for ln in lines)
    extra = [
        event(n + 1, op="ddl", database="shop", search_path=["public"],
              ddl='CREATE TABLE public.cased ("Id" int, "id" int, "ID" text[], note varchar(4))'),
        event(n + 2, op="c", database="shop", schema="public", table="cased", tx="900",
              after=[{"$s": "1"}, {"$s": "2"}, "{a,b}", "abcd"]),
        event(n + 3, op="u", database="shop", schema="public", table="cased", tx="901",
              before=[{"$s": "1"}, {"$s": "2"}, "{a,b}", "abcd"], after=[{"$s": "1"}, {"$s": "3"}, None, "toolong"]),
    ]
    log = tmp_path / "changelog.jsonl"
    log.write_text("".join(ln + "\n" for ln in lines + extra))
    res, _ = _both_ways(spark, tmp_path, log, spark_runs)
    assert ("shop", "public.cased", 1, "c") in res.counts, res.counts


@contextlib.contextmanager
def _split_input(spark, on: bool = True, split: int = 64):
    """Input splits of ``split`` bytes while on (64: a line or none each; 200, about a row
    event's line: one or two lines each): the staging pass writes a file per task and group,
    several per group (a group's parts when ``PART_ROWS`` is small)."""
    settings = {"spark.sql.files.maxPartitionBytes": str(split), "spark.sql.files.openCostInBytes": "0"} if on else {}
    old = {key: spark.conf.get(key) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in old.items():
            spark.conf.set(key, value)


@pytest.mark.parametrize("batch_rows, chunk_rows, parts", [(3, None, False), (None, None, False), (None, 2, False),
                                                           (None, None, True)])
def test_groups_of_several_versions_with_a_bad_row(spark, tmp_path, monkeypatch, spark_runs, batch_rows, chunk_rows,
                                                   parts):
    """Three sharded tables share one conversion group; one of its rows cannot be converted, so
    the group's job quarantines it and writes the others (read by the workers, or by the
    driver in batches of 3 rows: a batch per group; converted two rows at a time: a row group
    per chunk in each version's file; in parts, a staged file each: the failed row is in one
    part, and the rule — every row with an error is quarantined if some row failed — holds
    over the group)."""
    tuning = ON_DRIVER
    if batch_rows:
        tuning = replace(tuning, batch_rows=batch_rows)
        _read_in_batches(monkeypatch)
    if chunk_rows:
        tuning = replace(tuning, chunk_rows=chunk_rows)
    if parts:
        tuning = replace(tuning, part_rows=1)
    # the input split only for the run on the driver (whose parts are the staged files): a
    # Spark job per group reads the group's directory whatever its files
    res, said = _both_ways(spark, tmp_path, sharded_log(tmp_path).write(), spark_runs, tuning=tuning,
                           driver_settings=lambda: _split_input(spark, parts, split=200), dialect="mysql")
    assert res.quarantined == 1 and res.rows == 10
    assert any(" parts of about 1 rows" in m for m in said) == parts, said
    if parts:  # the group of the three shards (its failed row in one part) in several parts
        assert any(m.startswith("1 of them in parts") and not m.endswith(": 1 parts") for m in said), said


def test_large_groups_stay_spark_jobs(spark, tmp_path, monkeypatch, spark_runs):
    """With groups of at most 2 rows on the driver, the sharded tables' group (8 rows) is a
    Spark job and the rest are converted on the driver, into one output."""
    res, said = _both_ways(spark, tmp_path, sharded_log(tmp_path).write(), spark_runs,
                           tuning=Tuning(driver_max_rows=2), dialect="mysql")
    assert any(m.startswith("converting shop.s0 version 1 and 2 more") for m in said), said
    assert any("converted 2 of 2 conversion group(s)" in m for m in said), said


def test_groups_of_large_values_stay_spark_jobs_and_batches_are_bounded_by_bytes(spark, tmp_path, monkeypatch,
                                                                                  spark_runs):
    """A group whose values take more than ``Tuning.group_max_bytes`` (large BLOBs) is a Spark job
    however few its rows; batches hold at most ``batch_bytes`` of values."""
    log = Log(tmp_path / "changelog.jsonl")
    log.ddl("CREATE DATABASE shop")
    log.ddl("CREATE TABLE blobs (id int, data longblob)")
    for t in ("a", "b", "c"):
        log.ddl(f"CREATE TABLE {t} (id int, note varchar(10), n{t} int)")  # three shapes: three groups
    log.row("c", "blobs", after=[1, b"x" * 3000])                # 4,000 bytes of text (base64)
    log.row("c", "blobs", after=[2, b""])
    for t in ("a", "b", "c"):
        log.row("c", t, after=[1, "xy", 7])
    tuning = replace(ON_DRIVER, group_max_bytes=1_000, batch_bytes=5)  # a batch per group (4 bytes each)
    assert driver.group_batches([0, 1, 2], {0: 1, 1: 1, 2: 1}, {0: 4, 1: 4, 2: 4}, tuning) == [[0], [1], [2]]
    assert driver.group_batches([0, 1, 2], {0: 1, 1: 1, 2: 1}, {0: 2, 1: 2, 2: 9}, tuning) == [[0, 1], [2]]
    _read_in_batches(monkeypatch)
    res, said = _both_ways(spark, tmp_path, log.write(), spark_runs, tuning=tuning, dialect="mysql")
    assert res.rows == 5
    assert any("1 conversion group(s) left to Spark jobs: their values take more than 1,000 bytes" in m
               for m in said), said
    assert any(m.startswith("converting shop.blobs version 1") for m in said), said
    converted = [m for m in said if "conversion group(s) on the driver" in m and m.startswith("converted")]
    assert converted[-1].startswith("converted 3 of 3"), converted  # (the large group is not counted)


@pytest.mark.parametrize("chunk_rows, parts", [(None, False), (1, False), (None, True)])
def test_a_text_that_is_not_its_values_text_form_leaves_the_group_to_spark(spark, tmp_path, monkeypatch, spark_runs,
                                                                            chunk_rows, parts):
    """``"1.50"`` (a string where the log should have a number or ``$dec``) is a string to the
    JVM face, which quarantines it for a decimal column, but reads as the float 1.5 in Python,
    whose text form is ``1.5``: on such a text the faces are not known to agree, so its group
    is converted by a Spark job (as the reference does); the other group stays on the driver.
    Converted a row at a time (``Tuning.chunk_rows``), the group's first row (table ``a``, sharded
    with ``a2``) is written before the second is found unsure: its file is removed (the output
    would hold the row twice).  In parts (a staged file each, in two workers), the part that
    wrote the first row's file may end before or after the one found unsure: the driver
    removes the group's files when its last part ends."""
    tuning = ON_DRIVER
    if chunk_rows:
        tuning = replace(tuning, chunk_rows=chunk_rows)
    if parts:
        tuning = replace(tuning, part_rows=1)
    log = Log(tmp_path / "changelog.jsonl")
    log.ddl("CREATE DATABASE shop")
    log.ddl("CREATE TABLE a (id int, total decimal(8,2))")
    log.ddl("CREATE TABLE a2 (id int, total decimal(8,2))")
    log.ddl("CREATE TABLE b (id int, note varchar(10))")
    log.row("c", "a", after=[2, decimal.Decimal("2.25")])
    bad = log.add(op="c", database="shop", table="a2", after=[1, "1.50"])
    log.row("c", "b", after=[1, "x"])
    # the input split only for the run on the driver, whose parts are the staged files
    res, said = _both_ways(spark, tmp_path, log.write(), spark_runs, tuning=tuning,
                           driver_settings=lambda: _split_input(spark, parts), dialect="mysql")
    assert any(" parts of about 1 rows" in m for m in said) == parts, said
    assert res.rows == 2 and res.quarantined == 1
    [record] = quarantine(tmp_path / "driver")
    assert record["seq"] == bad and record["reason"].startswith("cannot convert: total (1.50)"), record
    assert any("1 conversion group(s) left to Spark jobs" in m for m in said), said
    assert any(m.startswith("converting shop.a version 1 and 1 more") for m in said), said


def test_replayed_quarantine_on_the_driver_equals_spark_jobs(spark, tmp_path, monkeypatch):
    """Rows of a table quarantined as unknown, replayed once its DDL is in the log: the replay
    run converts them on the driver as a Spark job would."""
    log = Log(tmp_path / "changelog.jsonl")
    log.ddl("CREATE DATABASE shop")
    log.row("c", "late", after=[1, "a"])                      # no schema yet: quarantined
    log.row("c", "late", after=[2, "b"])
    out_spark, out_driver = tmp_path / "spark", tmp_path / "driver"
    for out, tuning in ((out_spark, SPARK_JOBS), (out_driver, ON_DRIVER)):
        res, _ = _run(spark, log.write(), out, tuning, dialect="mysql")
        assert res.quarantined == 2
    log.add(op="ddl", database="shop", snapshot=True, ddl="CREATE TABLE late (id int, name varchar(5))")
    log.row("c", "late", after=[3, "c"])
    path = log.write()
    res_spark, _ = _run(spark, path, out_spark, SPARK_JOBS, replay_quarantine=True)
    res_driver, said = _run(spark, path, out_driver, ON_DRIVER, replay_quarantine=True)
    assert any("on the driver" in m for m in said), said
    assert res_driver.replayed == res_spark.replayed and res_driver.rows == res_spark.rows
    assert_same_output(spark, out_driver, out_spark, "", "")


def test_strict_stops_at_the_same_row_both_ways(spark, tmp_path, monkeypatch):
    lines = lines_of(EXAMPLES / "shop" / "changelog.jsonl")
    n = len(lines)
    log = tmp_path / "changelog.jsonl"
    log.write_text("".join(ln + "\n" for ln in lines + [
        event(n + 1, op="c", database="shop", table="purchases", after=[1]),   # wrong arity
        event(n + 2, op="c", database="shop", table="purchases", after=[2]),
    ]))
    errors = []
    for tuning in (SPARK_JOBS, ON_DRIVER):
        out = tmp_path / f"out{tuning.driver_max_rows}"
        with pytest.raises(pl.PipelineError) as exc:
            _run(spark, log, out, tuning, strict=True)
        errors.append((exc.value.seq, exc.value.reason))
        assert not (out / "_state" / "checkpoint.json").exists()  # nothing committed
        shutil.rmtree(out, ignore_errors=True)
    assert errors[0] == errors[1] and errors[0][0] == n + 1, errors
    assert errors[0][1].startswith("cannot convert: row (1)"), errors


def test_driver_groups_keep_spark_footer_and_names(spark, tmp_path, monkeypatch):
    """A file written on the driver carries Spark's footer (the struct as JSON, field metadata
    included), and is named after its run (the commit's rule)."""
    import pyarrow.parquet as pq

    lines = lines_of(EXAMPLES / "shop" / "changelog.jsonl")
    log = tmp_path / "changelog.jsonl"
    log.write_text("".join(ln + "\n" for ln in lines))
    out = tmp_path / "out"
    _run(spark, log, out, ON_DRIVER)
    files = [f for f in out.rglob("*.parquet") if not f.relative_to(out).parts[0].startswith("_")]
    assert files
    run = json.loads((out / "_state" / "checkpoint.json").read_text())["run"]
    for f in files:
        assert f.name.startswith(run + "-part-"), f.name
        meta = pq.read_schema(f).metadata
        struct = json.loads(meta[driver.ROW_METADATA_KEY.encode()])
        assert [x["name"] for x in struct["fields"]][-len(pl.META_COLUMNS):] == list(pl.META_COLUMNS)


def _no_commit(out: Path) -> None:
    assert not (out / "_state" / "checkpoint.json").exists()
    assert not [f for f in out.rglob("*.parquet") if not f.relative_to(out).parts[0].startswith("_")]


def _failing_group(how: str):
    def convert_group(*args, **kw):
        if how == "raise":
            raise RuntimeError("a worker's own error")
        os._exit(3)  # the process dies (killed, out of memory)
    return convert_group


def test_a_worker_error_stops_the_run_before_its_commit(spark, tmp_path, monkeypatch):
    """An error raised in a worker process is raised by the run (its traceback attached), and
    nothing is committed."""
    lines = lines_of(EXAMPLES / "shop" / "changelog.jsonl")
    log = tmp_path / "changelog.jsonl"
    log.write_text("".join(ln + "\n" for ln in lines))
    monkeypatch.setattr(driver.GroupJob, "add_staged", _failing_group("raise"))  # inherited by the forked workers
    out = tmp_path / "out"
    with pytest.raises(RuntimeError, match="a worker's own error") as exc:
        _run(spark, log, out, TWO_WORKERS)
    assert "convert_group" in str(exc.value.__cause__)  # the worker's traceback
    _no_commit(out)


def test_a_dead_worker_stops_the_run_before_its_commit(spark, tmp_path, monkeypatch):
    lines = lines_of(EXAMPLES / "shop" / "changelog.jsonl")
    log = tmp_path / "changelog.jsonl"
    log.write_text("".join(ln + "\n" for ln in lines))
    monkeypatch.setattr(driver.GroupJob, "add_staged", _failing_group("die"))
    out = tmp_path / "out"
    with pytest.raises(pl.PipelineError, match="a process converting conversion groups on the driver died"):
        _run(spark, log, out, TWO_WORKERS)
    _no_commit(out)
    # the next run, with healthy workers, writes the log whole
    monkeypatch.undo()
    res, _ = _run(spark, log, out, TWO_WORKERS)
    assert res.rows > 0 and (out / "_state" / "checkpoint.json").exists()


def _finalizers() -> int:
    from py4j import finalizer

    return len(finalizer.ThreadSafeFinalizer.finalizers)


def _ignores_sigint() -> bool:
    import signal

    return signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_workers_never_talk_to_the_jvm(spark):
    """A worker forked from the driver starts without the py4j finalizers it inherits (freeing
    an inherited py4j object there would send the JVM a command over the driver's connection)
    and ignoring Ctrl-C (PySpark's handler would cancel the jobs through py4j)."""
    keep = spark._jvm.java.util.ArrayList()  # a py4j object the driver holds (a finalizer)
    assert _finalizers() > 0 and keep is not None and not _ignores_sigint()
    with forkpool.WorkerPool(2) as submit:
        assert submit(_finalizers).result() == 0
        assert submit(_ignores_sigint).result()
    assert _finalizers() > 0 and not _ignores_sigint()


def _collects_inherited() -> bool:
    """Whether a collection here would walk a list made before this process was forked."""
    import gc

    return any(gc.get_objects(generation) for generation in range(3)) and gc.get_freeze_count() == 0


def test_workers_leave_the_inherited_heap_to_the_driver():
    """A worker's cyclic garbage collections walk only what it made: the objects it inherits
    from the driver are frozen (``gc.freeze``: a collection would write to every one of them,
    copying the driver's pages into the worker), the driver's own are not."""
    import gc

    held = [{"n": n} for n in range(1000)]  # objects the driver's collector tracks
    assert _collects_inherited() and held
    with forkpool.WorkerPool(2) as submit:
        assert submit(gc.get_freeze_count).result() >= len(held)
        assert not submit(_collects_inherited).result()
    assert _collects_inherited()


def _reference_values(texts: list) -> list | str:
    """What ``driver.staged_values`` must give: every text through ``raw.from_text``, kept where
    it is its value's text form or a tagged value that decodes; ``"unsure"`` otherwise."""
    from ddlcore import raw

    out = []
    for t in texts:
        if t is None or (t[:1] not in raw.NUMBER_START and not t.startswith('{"$')):
            out.append(t)
            continue
        try:
            v = raw.from_text(t)
            if not (v is not t and t.startswith('{"$')) and raw.text_form(v) != t:
                return "unsure"
            if v is raw.ABSENT and t != raw.ABSENT_TEXT:  # the marker in another spelling
                return "unsure"
        except (ValueError, TypeError, KeyError, OverflowError):
            return "unsure"
        out.append(v)
    return out


_TEXT = st.one_of(
    st.none(),
    st.text(alphabet='0123456789-+.eE{}"$:\\ ab\n\x01é', max_size=14),
    st.from_regex(r"\A-?[0-9]{1,25}\Z"),
    st.from_regex(r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}( [0-9:.]{0,12})?\n?\Z"),  # a date's text, not a number
    st.builds(lambda tag, payload: '{"' + tag + '":"' + payload + '"}',
              st.sampled_from(["$dec", "$date", "$datetime", "$time", "$b64", "$s", "$json", "$absent", "$x", "$Dec"]),
              st.text(alphabet='0123456789-:. ABab=+/"\\\x01é', max_size=24)),
    st.sampled_from(['{"$absent":true}', '{"$absent": true}', '{"$absent":false}', '-0', '0', '007', '٣',
                     '-', '-5', '1.50', '9' * 5000]))


@given(st.lists(_TEXT, max_size=4))
def test_staged_values_fast_paths_agree_with_raw_from_text(texts):
    """The fast paths of ``staged_values`` (an integer in its text form, a tagged value with a
    plain payload) give exactly what ``raw.from_text`` and the text-form check give, value and
    type, and leave to Spark exactly the same images."""
    try:
        got = driver.staged_values(texts)
    except driver.Unsure:
        got = "unsure"
    want = _reference_values(texts)
    assert repr(got) == repr(want)
    if want != "unsure":
        assert [type(v) for v in got] == [type(v) for v in want]


def test_workers_die_with_the_driver(tmp_path):
    """A driver killed mid-run (SIGKILL) leaves no conversion worker behind."""
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "driver.py"
    pids = tmp_path / "pids"
    script.write_text(f"""
import os, time
from ddlcore.spark import forkpool
def pid():
    return os.getpid()
with forkpool.WorkerPool(2) as submit:
    found = {{submit(pid).result() for _ in range(20)}}
    open({str(pids)!r}, "w").write(" ".join(map(str, found)))
    time.sleep(60)
""")
    driver = subprocess.Popen([sys.executable, str(script)])
    try:
        deadline = time.monotonic() + 60
        while not (pids.exists() and pids.read_text()) and time.monotonic() < deadline:
            time.sleep(0.1)
        workers = [int(p) for p in pids.read_text().split()]
        assert workers and driver.pid not in workers
        driver.send_signal(signal.SIGKILL)
        driver.wait(30)
        deadline = time.monotonic() + 30
        alive = workers
        while alive and time.monotonic() < deadline:
            time.sleep(0.1)
            alive = [p for p in workers if _running(p)]
        assert not alive, f"workers outlived their driver: {alive}"
    finally:
        driver.kill()


def _running(pid: int) -> bool:
    """``pid`` is a live process (not a zombie: a killed worker waits for init to reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_driver_max_rows_follows_where_the_run_is(spark, tmp_path, monkeypatch):
    """``None``: every group on the driver for a local master writing to the local filesystem
    (the workers read and write the files themselves, in parts), ``Tuning.cluster_max_rows``
    for an output elsewhere (the driver reads the rows through Spark); a set value wins."""
    from ddlcore.spark.fs import OutputFS

    local = OutputFS(spark, str(tmp_path))
    assert spark.sparkContext.master.startswith("local") and local.scheme == "file"
    assert driver.driver_max_rows(spark, local, Tuning()) is None
    monkeypatch.setattr(OutputFS, "scheme", property(lambda self: "hdfs"))
    assert driver.driver_max_rows(spark, local, Tuning()) == Tuning().cluster_max_rows == 20_000
    assert driver.driver_max_rows(spark, local, Tuning(driver_max_rows=7)) == 7


@given(st.lists(EVENT, max_size=12), st.integers(0, 12), st.sampled_from([1, 4096]),
       st.sampled_from([(True, True), (True, False), (False, True)]))
def test_the_column_pass_agrees_with_the_row_pass(events, cut, memo_texts, images):
    """``convert_rows`` over staged rows (the column pass through ``ColumnMemo``, one memo per
    image and column lasting across chunks) gives what the row pass gives with each image's
    values from ``staged_values`` — output columns, quarantined rows and reasons, failure —
    on images with values that do not convert, absent markers, nulls and a wrong arity, with
    the memo full after one text or not; and raises ``Unsure`` exactly where the row pass
    does."""
    from ddlcore.spark import RowConverter

    conv = RowConverter(memo_table(), dialect="mysql")
    after, before = images
    memos = {image: [driver.ColumnMemo(fn, memo_texts) for fn in conv.functions] for image in ("after", "before")}
    for chunk in (events[:cut], events[cut:]):  # two chunks: the memos carry over
        columns = {name: [None] * len(chunk) for name in driver.ROW_FIELDS}
        columns.update(op=[e[0] for e in chunk], seq=list(range(len(chunk))), after=[e[1] for e in chunk],
                       before=[e[2] for e in chunk])
        try:
            values = {"after": [driver.staged_values(e[1]) for e in chunk],
                      "before": [driver.staged_values(e[2]) for e in chunk]}
        except driver.Unsure:
            with pytest.raises(driver.Unsure):
                driver.convert_rows(conv, driver.Rows(columns), after=after, before=before, memos=memos)
            return
        want = driver.convert_rows(conv, driver.Rows(columns, values), after=after, before=before)
        got = driver.convert_rows(conv, driver.Rows(columns), after=after, before=before, memos=memos)
        assert repr(got[0]) == repr(want[0])
        assert [(ev.seq, reason) for ev, reason in got[1]] == [(ev.seq, reason) for ev, reason in want[1]]
        assert got[2] == want[2]
    assert all(len(m) <= memo_texts + 1 for ms in memos.values() for m in ms)  # (+ the null's entry)


def test_column_memos_are_bounded():
    """A group job's memos share ``Tuning.memo_texts`` over its columns and images (at least
    ``memo_min_texts`` each), keep no text longer than ``memo_text_chars``, and never keep a
    value that does not convert."""
    from ddlcore.spark import RowConverter
    from ddlcore.spark.rules import Fail

    conv = RowConverter(memo_table(), dialect="mysql")
    tuning = Tuning()
    memos = driver.conversion_memos(conv, tuning)
    assert {m.limit for ms in memos.values() for m in ms} == {max(tuning.memo_min_texts, tuning.memo_texts // 16)}

    def convert(v):
        if v == "bad":
            raise Fail("no")
        return v.upper()

    memo = driver.ColumnMemo(convert, 2)
    long = "x" * (tuning.memo_text_chars + 1)
    assert [memo[t] for t in ("a", long, "bad", "b", "c", "a")] == ["A", long.upper(), driver.SLOW, "B", "C", "A"]
    assert set(memo) == {None, "a", "b"} and memo.slow == 1
