"""Table versions with the same columns (sharded tables, copies) are converted by one plan
and written by one Spark job partitioned by version: the output, the counts, the quarantine
and the schema files are exactly those of one job per version.  (Groups of few rows are
converted on the driver by default; here every group is a Spark job.)"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark")

from ddlcore.runconfig import Tuning  # noqa: E402
from ddlcore.spark import commit  # noqa: E402
from ddlcore.spark import convertpass  # noqa: E402
from ddlcore.spark import pipeline as pl  # noqa: E402
from ddlcore.spark import readlog  # noqa: E402
from ddlcore.spark import sessionconf  # noqa: E402
from ddlcore.spark import versions  # noqa: E402

from .support import SHARD, Log, sharded_log  # noqa: E402

#: these tests are about the Spark jobs that convert groups: none is converted on the driver
#: (tests/pipeline/test_driver_groups.py compares the two)
SPARK_JOBS = Tuning(driver_max_rows=-1)


def run(*args, **kw):
    """``run_pipeline`` with every conversion group a Spark job (``SPARK_JOBS``)."""
    return pl.run_pipeline(*args, **{"tuning": SPARK_JOBS, "dialect": "mysql", **kw})


def _files(out: Path) -> dict[str, list]:
    return {str(p.relative_to(out)): p for p in sorted(out.rglob("schema_version=*")) if p.is_dir()}


def _rows(spark, path: Path) -> list:
    df = spark.read.parquet(str(path))
    return df.schema, sorted(df.collect(), key=lambda r: r["_seq"])


def test_versions_of_the_same_columns_share_one_job_and_write_what_separate_jobs_write(
        spark, tmp_path, monkeypatch):
    path = sharded_log(tmp_path).write()
    jobs: list[list[int]] = []
    real = versions.conversion_groups

    def recorded(todo, models):
        groups = real(todo, models)
        jobs.extend(groups)
        return groups

    monkeypatch.setattr(versions, "conversion_groups", recorded)
    grouped = run(path, tmp_path / "grouped", spark=spark)
    assert sorted(len(g) for g in jobs) == [1, 1, 3]    # s0, s1, s2 v1 together; s2 v2 and other alone
    monkeypatch.setattr(versions, "conversion_groups", lambda todo, models: [[k] for k in todo])
    single = run(path, tmp_path / "single", spark=spark)

    assert grouped.counts == single.counts and grouped.rows == single.rows == 10
    assert grouped.quarantine_reasons == single.quarantine_reasons == {"cannot convert": 1}
    assert sorted(grouped.versions_written) == sorted(single.versions_written)
    g, s = _files(tmp_path / "grouped"), _files(tmp_path / "single")
    assert sorted(g) == sorted(s) == ["shop/other/schema_version=1", "shop/s0/schema_version=1",
                                      "shop/s1/schema_version=1", "shop/s2/schema_version=1",
                                      "shop/s2/schema_version=2"]
    for rel in g:
        gs, gr = _rows(spark, g[rel])
        ss, sr = _rows(spark, s[rel])
        assert gs == ss and [f.metadata for f in gs.fields] == [f.metadata for f in ss.fields]
        assert "_part" not in gs.fieldNames()
        assert gr == sr
    # no group directory left behind, no stray file in a version directory
    assert not list((tmp_path / "grouped").rglob("_part=*"))
    assert not list((tmp_path / "grouped").rglob(commit.GROUPS))
    s1 = _rows(spark, g["shop/s1/schema_version=1"])[1]
    assert [(r["_op"], r["id"], r["status"]) for r in s1] == [("c", 2 ** 32 - 2, "new"), ("c", 2 ** 32 - 5, "new"),
                                                               ("u", 2 ** 32 - 2, "paid")]
    q = [json.loads(line) for f in (tmp_path / "grouped" / "_quarantine").glob("*.json")
         for line in f.read_text().splitlines()]
    assert [r["table"] for r in q] == ["s1"] and q[0]["reason"] == "cannot convert: status (7): enum index out of range"
    assert json.loads(q[0]["event"])["seq"] == 13
    schemas = sorted(p.name for p in (tmp_path / "grouped" / "_schemas").iterdir())
    assert schemas == sorted(p.name for p in (tmp_path / "single" / "_schemas").iterdir())


def test_groups_are_keyed_by_everything_but_the_table_name():
    from ddlcore import get_dialect

    parser = get_dialect("mysql").parser()
    tables = parser.new_tables()
    parser.parse("CREATE DATABASE a; CREATE DATABASE b;"
                 f"CREATE TABLE a.t {SHARD}; CREATE TABLE b.u {SHARD};"
                 f"CREATE TABLE a.c {SHARD} DEFAULT CHARSET=ascii;"                # another table default
                 "CREATE TABLE a.n (id int unsigned NOT NULL PRIMARY KEY, status enum('new','paid'), "
                 "note varchar(21) CHARACTER SET latin1, total decimal(8,2));"      # another length
                 "CREATE TABLE a.k (id int unsigned NOT NULL, status enum('new','paid'), "
                 "note varchar(20) CHARACTER SET latin1, total decimal(8,2));"           # no key
                 "CREATE TABLE a.p1 (id int, _PART int); CREATE TABLE a.p2 (id int, _PART int)", tables)
    names = ["a.t", "b.u", "a.c", "a.n", "a.k", "a.p1", "a.p2"]
    models = [tables.get(n) for n in names]
    # a column named like the partition column: never written by a job of several versions
    assert versions.conversion_groups(list(range(7)), models) == [[0, 1], [2], [3], [4], [5], [6]]
    # ``shape_key`` (the Iceberg sink's cache of Spark types): equal keys for equal shapes of
    # other names, and no two shapes share a key
    keys = [versions.shape_key(m) for m in models[:5]]
    assert keys[0] == keys[1] and hash(keys[0]) == hash(keys[1])
    assert len({keys[0], *keys[2:]}) == 4
    shapes = [versions.shape(m.to_json()) for m in models[:5]]
    assert all((keys[i] == keys[j]) == (shapes[i] == shapes[j]) for i in range(5) for j in range(5))


def test_an_incremental_run_parses_only_new_lines_and_loses_none(spark, tmp_path, monkeypatch):
    """Lines before the checkpoint are left out unparsed by their ``"seq": N`` text; a new line
    whose seq key is spelt with ``\\u`` escapes, and a torn line that shows an old seq, are
    still read (the first written, the second quarantined as malformed)."""
    log = sharded_log(tmp_path)
    path = log.write()
    first = run(path, tmp_path / "out", spark=spark)
    n = len(log.events)
    escaped = json.dumps({"op": "c", "database": "shop", "table": "s0", "position": "p", "ts": 1,
                          "after": ["7", "1", '{"$b64":"eA=="}', "1"]}).replace("{", '{"s\\u0065q": %d, ' % (n + 1), 1)
    plain = json.dumps({"seq": n + 2, "op": "c", "database": "shop", "table": "s1", "position": "q", "ts": 2,
                        "after": ["8", "2", '{"$b64":"eA=="}', "2"], "nested": {"seq": 1}})
    torn = '{"seq": 3, "op": "c", "database": "shop", "table": "s1", "after": ["9"'
    with open(path, "a") as fh:
        fh.write(escaped + "\n" + plain + "\n" + torn + "\n")
    parsed = []
    real = readlog.read_events

    def spy(*a, **k):
        parsed.append(k.get("after_seq"))
        return real(*a, **k)

    monkeypatch.setattr(readlog, "read_events", spy)
    second = run(path, tmp_path / "out", spark=spark)
    assert first.last_seq == n and second.previous_seq == n and second.last_seq == n + 2
    assert None not in parsed[1:]                     # the row pass left old lines out
    assert second.rows == 2 and second.quarantined == 1
    assert list(second.quarantine_reasons) == ["malformed event"]
    assert second.counts == {("shop", "s0", 1, "c"): 1, ("shop", "s1", 1, "c"): 1}


def test_interpreted_and_compiled_conversions_write_the_same(spark, tmp_path, monkeypatch):
    """Groups of few rows are converted with Spark's expressions interpreted
    (``_INTERPRETED_MAX_ROWS``), larger ones compiled: both write the same rows, counts and
    quarantine reasons (this log's groups are small: the second run forces them compiled)."""
    path = sharded_log(tmp_path).write()
    seen: list[str | None] = []
    real = convertpass.write_version

    limits: list[str | None] = []

    def recorded(rows, *a, **k):
        seen.append(rows.sparkSession.conf.get("spark.sql.codegen.factoryMode", None))
        limits.append(rows.sparkSession.conf.get("spark.sql.codegen.hugeMethodLimit", None))
        return real(rows, *a, **k)

    monkeypatch.setattr(convertpass, "write_version", recorded)
    interpreted = run(path, tmp_path / "interpreted", spark=spark)
    assert seen and set(seen) == {"NO_CODEGEN"}
    seen.clear()
    limits.clear()
    compiled = run(path, tmp_path / "compiled", spark=spark, tuning=replace(SPARK_JOBS, interpreted_max_rows=-1))
    assert seen and "NO_CODEGEN" not in seen
    assert set(limits) == {"8000"}                    # no fused method the JIT would not compile
    assert spark.conf.get("spark.sql.codegen.factoryMode", None) != "NO_CODEGEN"  # put back
    assert interpreted.counts == compiled.counts and interpreted.rows == compiled.rows == 10
    assert interpreted.quarantine_reasons == compiled.quarantine_reasons == {"cannot convert": 1}
    a, b = _files(tmp_path / "interpreted"), _files(tmp_path / "compiled")
    assert sorted(a) == sorted(b)
    for rel in a:
        assert _rows(spark, a[rel]) == _rows(spark, b[rel])
    qa, qb = ([json.loads(line) for f in (tmp_path / d / "_quarantine").glob("*.json") for line in f.read_text().splitlines()]
              for d in ("interpreted", "compiled"))
    assert qa == qb


def test_a_conversion_plan_fuses_every_projection_but_the_values(spark):
    """The conversion job's plan (``_converted``): Spark fuses every projection into
    whole-stage code except the value projection of each image, which is kept out on purpose
    (``convert._interpreted_projection``).  A higher-order function anywhere else (``absent``,
    the raw items, an ENUM or SET rule) would add an unfused projection, which copies every row
    whole: this counts them."""
    from ddlcore.history import SchemaHistory
    from ddlcore.spark import RowConverter

    hist = SchemaHistory.in_memory(dialect="mysql")
    hist.record({"op": "ddl", "database": "db", "seq": 1, "position": "p:1", "ddl": (
        "CREATE TABLE t (a int unsigned, e enum('x','y'), s set('a','b','c'), "
        "v varchar(10) CHARACTER SET latin1, d decimal(8,2), dt datetime(3), da date, j json, "
        "b blob, bt bit(3), ti time, y year, f double, big set('a','b','c','d','e','f','g','h','i'))")})
    conv = RowConverter(hist.table_at("db.t", 2), dialect="mysql")
    raw = ["1", "2", "3", "caf", '{"$dec":"1.50"}', "2024-01-02 03:04:05.678", "2024-01-02", '{"a":1}', '{"$b64":"eA=="}', "5",
           "01:02:03", "2024", "1.5", '{"$absent":true}']
    rows = spark.createDataFrame(
        [(1, "p:2", op, "db", None, "t", 0, None, None, before, after, 3)
         for op, before, after in (("c", None, raw), ("u", raw, raw), ("d", raw, None))],
        "seq LONG, position STRING, op STRING, database STRING, schema STRING, `table` STRING, ts LONG, "
        "tx STRING, row LONG, before ARRAY<STRING>, after ARRAY<STRING>, _part INT")
    # the value structs' fields are in the converter's canonical order
    field = {c: f"_{j}" for j, c in enumerate(conv.canonical_order(), start=1)}
    for after, before, images in ((True, True, 2), (True, False, 1), (False, True, 1)):
        df = convertpass.converted(rows, conv, after=after, before=before)
        plan = df._jdf.queryExecution().executedPlan().toString()
        unfused = [line for line in plan.splitlines() if re.match(r"^[\s+\-:]*Project \[", line)]
        assert len(unfused) == images, plan
        got = {r["op"]: r for r in df.collect()}
        assert not any(r["_bad"] for r in got.values()), got
        if after:
            assert got["c"]["_xa"] == ["big"] and got["c"]["_a"][field[1]] == "y" and got["c"]["_a"][field[2]] == ["a", "b"]
        if before:
            assert got["d"]["_xb"] == ["big"] and got["d"]["_b"][field[0]] == 1


def test_more_partitions_than_open_files_allowed_are_written_sorted_and_the_same(spark, tmp_path, monkeypatch):
    """A partitioned write keeps one file open per partition and task only for fewer
    partitions than the heap allows open writers (``_open_writers_per_task``: one task with
    584 files open exhausted a 1 GB heap — 1,200 sharded tables, or 1,200 table shapes
    staged); otherwise each task's rows are sorted by partition, for the staging pass and the
    group jobs alike.  Both write the same output."""
    path = sharded_log(tmp_path).write()
    per_task = sessionconf.open_writers_per_task(spark, 1)
    assert sessionconf.partitioned_writers(3, per_task) == "4"
    assert sessionconf.partitioned_writers(per_task, per_task) == "0"
    assert sessionconf.open_writers_per_task(spark, 4) == max(1, per_task // 4)
    seen: list[str | None] = []
    real = sessionconf.settings

    def recorded(spark_, settings):
        if sessionconf.CONCURRENT_WRITERS in settings:
            seen.append(settings[sessionconf.CONCURRENT_WRITERS])
        return real(spark_, settings)

    monkeypatch.setattr(sessionconf, "settings", recorded)
    concurrent = run(path, tmp_path / "concurrent", spark=spark)
    # the staging pass, then one phase for all the groups (of 3 versions and of 1): groups of
    # other sizes do not wait for each other
    assert len(seen) == 2 and "0" not in seen
    seen.clear()
    one_open_file = replace(SPARK_JOBS, heap_mb_per_open_writer=10 ** 9)    # one open file per task: sorted
    assert sessionconf.open_writers_per_task(spark, 1, one_open_file.heap_mb_per_open_writer) == 1
    one_open = run(path, tmp_path / "sorted", spark=spark, tuning=one_open_file)
    assert seen == ["0", "0"]                                           # staging, then every group sorted
    assert concurrent.counts == one_open.counts and concurrent.rows == one_open.rows == 10
    assert concurrent.quarantine_reasons == one_open.quarantine_reasons
    a, b = _files(tmp_path / "concurrent"), _files(tmp_path / "sorted")
    assert sorted(a) == sorted(b) and len(a) == 5
    for rel in a:
        assert _rows(spark, a[rel]) == _rows(spark, b[rel])


def _listing_jobs(spark) -> int:
    """How many Spark jobs this session has run to list files ("parallel partition discovery":
    a task per directory, described "Listing leaf files and directories for N paths")."""
    jobs = spark._jsc.sc().statusStore().jobsList(spark._jvm.java.util.ArrayList()).iterator()
    n = 0
    while jobs.hasNext():
        described = jobs.next().description()
        n += described.isDefined() and described.get().startswith("Listing leaf files")
    return n


def test_the_runs_own_directories_are_listed_on_the_driver_on_a_local_filesystem(spark, tmp_path):
    """Read as Spark reads by default, 40 partition directories are listed by a Spark job of a
    task per directory (a staged log of 2,000 conversion groups: 7 s of a run); ``_read_own``
    lists them on the driver when the output is local, and reads the same rows."""
    from ddlcore.spark.fs import OutputFS

    rows = [(k, f"v{k}") for k in range(40)]
    spark.createDataFrame(rows, "k INT, v STRING").write.partitionBy("k").parquet(str(tmp_path / "t"))
    before = _listing_jobs(spark)
    plain = spark.read.parquet(str(tmp_path / "t"))
    assert _listing_jobs(spark) == before + 1                 # Spark's default: a listing job
    own = sessionconf.read_own(spark, OutputFS(spark, str(tmp_path)), str(tmp_path / "t"))
    assert _listing_jobs(spark) == before + 1                 # listed on the driver
    assert sorted(own.collect()) == sorted(plain.collect()) and own.count() == 40
    assert spark.conf.get(sessionconf.PARALLEL_LISTING) == "32"       # the session's setting put back


def test_a_log_of_many_conversion_groups_runs_no_listing_job(spark, tmp_path, monkeypatch):
    """40 tables of columns of their own: 40 staged directories, read back without a Spark job
    to list them (groups converted on the driver here, as a log of many small tables is)."""
    log = Log(tmp_path / "changelog.jsonl")
    log.ddl("CREATE DATABASE shop")
    for t in range(40):
        log.ddl(f"CREATE TABLE t{t} (id int, note varchar({10 + t}))")
        log.row("c", f"t{t}", after=[t, b"x"])
    before = _listing_jobs(spark)
    res = run(log.write(), tmp_path / "out", spark=spark, tuning=Tuning(driver_max_rows=1_000))
    assert res.rows == 40 and len(res.versions_written) == 40
    assert _listing_jobs(spark) == before
