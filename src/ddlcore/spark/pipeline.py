"""The main job: a change log (DDL + row events) → typed Parquet tables, with PySpark.

Owns: reading the change log in Spark, building the schema history from its DDL events on the
driver, tagging every row event with the table version in force at its ``seq``, converting
rows with ``RowConverter.columns`` (JVM expressions, no Python per row), writing each table
version, the schemas, the quarantine and the run summary, and committing a run atomically
(checkpoint by ``seq``).  Must not know: any dialect (it is a name passed through).

Output layout (``OUT``)::

    OUT/<database>/<table>/schema_version=<N>/*.parquet   rows of that table version
    OUT/_schemas/<database>.<table>.v<N>.json             StructType JSON + the table model
    OUT/_quarantine/*.json                                events that could not be interpreted
    OUT/_run.json                                         counts of the last run and in total
    OUT/_history.sqlite                                   the schema history (default --history)
    OUT/_state/checkpoint.json                            last committed seq

Row files hold the table version's columns (``struct_type``) — the *after* image for
``c``/``u``/``r`` and the *before* image for ``d`` (so a delete carries its key) — plus
``_op``, ``_seq`` (long), ``_position``, ``_ts`` (long, ms) and ``_before`` (a struct of the
before image for ``u`` and ``d``, null otherwise).

Quarantine records (``OUT/_quarantine/*.json``) carry ``seq, position, op, database, table,
reason, event`` (the event's raw text), every key present even when null.

Commit protocol: a run writes into ``OUT/_state/staging/<run>/`` (rows that cannot be
converted go first to ``OUT/_state/staging/<run>.bad/``, from which the quarantine file is
written); when every write has succeeded it writes ``OUT/_state/pending.json`` (the files to
move and the new checkpoint, fsynced), moves the files into place, writes the checkpoint and
removes ``pending.json``.
A run killed before ``pending.json`` exists leaves only staging files, removed by the next
run, which redoes the work; a run killed after it is rolled forward by the next run before it
reads anything.  So no row is lost or written twice, and readers of a table directory only
ever see files of committed runs (up to the few renames of a roll-forward in progress).
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..errors import DdlCoreError, DdlParseError

__all__ = ["run_pipeline", "RunResult", "PipelineError", "EVENT_SCHEMA_DDL", "DEFAULT_CONCURRENT_JOBS", "spark_session"]

#: the change-log event as Spark reads it (row images as array<string>: ddlcore.raw text form)
EVENT_SCHEMA_DDL = ("seq LONG, position STRING, ts LONG, op STRING, database STRING, "
                    "`table` STRING, ddl STRING, before ARRAY<STRING>, after ARRAY<STRING>")
ROW_OPS = ("c", "u", "d", "r")


class PipelineError(DdlCoreError):
    """The run stopped (``--strict`` and a bad event, or a DDL event that cannot be parsed
    in strict mode); ``seq`` / ``reason`` name the first bad event.  Nothing was committed."""

    def __init__(self, reason: str, seq: int | None = None):
        self.reason = reason
        self.seq = seq
        super().__init__(f"event seq {seq}: {reason}" if seq is not None else reason)


@dataclass
class RunResult:
    """What a run did: ``events`` read past the checkpoint, ``rows`` written,
    ``quarantined`` events, ``ddl`` events recorded, ``counts`` ``{(db, table, version, op):
    n}``, ``quarantine_reasons`` ``{reason: n}``, ``last_seq`` committed, ``seconds``."""

    events: int = 0
    rows: int = 0
    quarantined: int = 0
    ddl: int = 0
    counts: dict[tuple[str, str, int, str], int] = field(default_factory=dict)
    quarantine_reasons: dict[str, int] = field(default_factory=dict)
    last_seq: int | None = None
    previous_seq: int | None = None
    seconds: float = 0.0
    versions_written: list[tuple[str, str, int]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "events": self.events, "rows": self.rows, "quarantined": self.quarantined,
            "ddl": self.ddl, "last_seq": self.last_seq, "previous_seq": self.previous_seq,
            "seconds": round(self.seconds, 3),
            "counts": [{"database": d, "table": t, "schema_version": v, "op": o, "rows": n}
                       for (d, t, v, o), n in sorted(self.counts.items())],
            "quarantine_reasons": dict(sorted(self.quarantine_reasons.items())),
        }


def spark_session(master: str | None = None, app_name: str = "ddlcore run"):
    """A SparkSession: ``master`` (default: the one ``spark-submit`` set, else ``local[*]``),
    UTC session time zone, few shuffle partitions, no UI, no console progress bar (``ddlcore
    run`` shows its own status).  An already running session is returned with these SQL
    settings applied."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    if master:
        builder = builder.master(master)
    elif not os.environ.get("SPARK_MASTER") and "spark.master" not in os.environ.get("PYSPARK_SUBMIT_ARGS", ""):
        builder = builder.master("local[*]")
    return (builder.config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.shuffle.partitions", "8")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            # the SQL status store keeps each query's plan description (large: the converters'
            # expressions) even without a UI; a run issues a few queries per table version
            .config("spark.sql.ui.retainedExecutions", "20")
            .config("spark.sql.sources.partitionOverwriteMode", "dynamic")
            .getOrCreate())


# --------------------------------------------------------------------------------------------
# state and commit
# --------------------------------------------------------------------------------------------


def _write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as fh:
        json.dump(data, fh, indent=2, sort_keys=True)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class _State:
    def __init__(self, out: Path):
        self.dir = out / "_state"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.checkpoint = self.dir / "checkpoint.json"
        self.pending = self.dir / "pending.json"
        self.staging = self.dir / "staging"

    def last_seq(self) -> int | None:
        if not self.checkpoint.exists():
            return None
        return json.loads(self.checkpoint.read_text())["last_seq"]

    def recover(self) -> bool:
        """Roll a committed-but-unfinished run forward; drop uncommitted staging files."""
        rolled = False
        if self.pending.exists():
            plan = json.loads(self.pending.read_text())
            _apply_moves(plan["moves"])
            _write_json_atomic(self.checkpoint, plan["checkpoint"])
            if plan.get("run_json") is not None:
                _write_json_atomic(Path(plan["run_json_path"]), plan["run_json"])
            self.pending.unlink()
            rolled = True
        if self.staging.exists():
            shutil.rmtree(self.staging)
        return rolled


def _apply_moves(moves: list[list[str]]) -> None:
    """Idempotent renames (a source already moved is skipped)."""
    dirs = set()
    for src, dst in moves:
        s, d = Path(src), Path(dst)
        if s.exists():
            d.parent.mkdir(parents=True, exist_ok=True)
            os.replace(s, d)
            dirs.add(d.parent)
    for d in dirs:
        _fsync_dir(d)


# --------------------------------------------------------------------------------------------
# the job
# --------------------------------------------------------------------------------------------


def _is_parquet(changelog: Path) -> bool:
    return changelog.is_dir() and any(changelog.glob("*.parquet")) or changelog.suffix == ".parquet"


#: a line whose event may be a DDL event: its ``op`` member is ``"ddl"``, with any JSON
#: whitespace and any of the letters spelt as a ``\u`` escape (JSON has no other way to
#: write them) — exact as a pre-filter: a parsed ``op`` equal to ``ddl`` matches it
_MAYBE_DDL = (r'"(o|\\u006[fF])(p|\\u0070)"\s*:\s*"(d|\\u0064)(d|\\u0064)(l|\\u006[cC])"')


def _read_events(spark, changelog: Path, *, ddl_only: bool = False):
    """Events as a DataFrame: the event columns, ``_line`` (the raw text) and ``_valid``.
    ``ddl_only``: only lines that may hold DDL events are parsed (a superset of them; the
    caller still filters on ``op``) — the cheap pass that collects the DDL."""
    from pyspark.sql import functions as F

    if _is_parquet(changelog):
        df = spark.read.parquet(str(changelog))
        if ddl_only:
            df = df.where(F.col("op") == "ddl")
        df = (df.withColumn("before", F.from_json("before", "ARRAY<STRING>"))
                .withColumn("after", F.from_json("after", "ARRAY<STRING>"))
                .withColumn("_line", F.to_json(F.struct(*[F.col(c) for c in df.columns]))))
    else:
        text = spark.read.text(str(changelog)).where(F.trim("value") != "")
        if ddl_only:
            text = text.where(F.col("value").rlike(_MAYBE_DDL))
        parsed = text.select(F.col("value").alias("_line"),
                             F.from_json("value", EVENT_SCHEMA_DDL, {"mode": "PERMISSIVE"}).alias("e"))
        df = parsed.select("_line", "e.*")
    ops = F.col("op")
    valid = (F.col("seq").isNotNull() & F.col("position").isNotNull() & ops.isin("ddl", *ROW_OPS)
             & F.when(ops == "ddl", F.col("ddl").isNotNull())
                .otherwise(F.col("table").isNotNull()
                           & F.when(ops.isin("c", "r"), F.col("after").isNotNull())
                           .when(ops == "u", F.col("after").isNotNull() & F.col("before").isNotNull())
                           .otherwise(F.col("before").isNotNull())))
    return df.withColumn("_valid", F.coalesce(valid, F.lit(False)))


def _invalid_reason():
    from pyspark.sql import functions as F

    return (F.when(F.col("seq").isNull(), F.lit("malformed event: not JSON or no seq"))
            .when(F.col("position").isNull(), F.lit("malformed event: no position"))
            .when(~F.col("op").isin("ddl", *ROW_OPS) | F.col("op").isNull(), F.lit("malformed event: unknown op"))
            .when(F.col("op") == "ddl", F.lit("malformed event: ddl event without ddl text"))
            .when(F.col("table").isNull(), F.lit("malformed event: row event without table"))
            .otherwise(F.concat(F.lit("malformed event: op="), F.col("op"), F.lit(" without its row image"))))


def _images():
    """Which row images an event carries, as staged (``_img``): ``a`` (after: ``c``, ``r``),
    ``b`` (before: ``d``), ``ab`` (``u``); ``x`` for an event that is not a valid row event.
    A version whose rows carry no before image is converted with a plan for one image only."""
    from pyspark.sql import functions as F

    op = F.col("op")
    return (F.when(~F.col("_valid") | F.col("v_part").isNull(), F.lit("x"))
            .when(op == "u", F.lit("ab")).when(op == "d", F.lit("b")).otherwise(F.lit("a")))


#: staged row partitions (``_part``) that are not a table version
_PART_INVALID, _PART_UNKNOWN = -2, -1
_QUARANTINE_SCHEMA = ("seq LONG, position STRING, op STRING, database STRING, `table` STRING, "
                      "reason STRING, event STRING")
#: table versions converted and written at the same time (Spark jobs submitted from threads)
DEFAULT_CONCURRENT_JOBS = 4


def run_pipeline(changelog: str | os.PathLike, out: str | os.PathLike, *, dialect: str = "mysql",
                 history: str | os.PathLike | None = None, master: str | None = None,
                 strict: bool = False, spark=None, spark_options: dict[str, Any] | None = None,
                 progress: Callable[[str], None] | None = None,
                 concurrent_jobs: int = DEFAULT_CONCURRENT_JOBS) -> RunResult:
    """Run the job once over ``changelog`` (JSON Lines, optionally gzip, or Parquet) into
    ``out`` and return a ``RunResult``.  Only events with ``seq`` past the checkpoint are
    processed; the run commits atomically (module docstring).

    ``history``: the schema history store (default ``OUT/_history.sqlite``); ``dialect``: the
    DDL dialect; ``spark_options``: ``ddlcore.spark.SparkOptions`` fields (type-mapping modes);
    ``strict``: stop with ``PipelineError`` at the first event that cannot be interpreted
    (nothing committed) instead of quarantining it; ``concurrent_jobs``: table versions
    converted at the same time (each a Spark job, submitted from its own driver thread, so
    one version's planning overlaps another's execution).  Raises ``FileNotFoundError`` for
    a missing change log.

    Passes over the change log: one over the lines that may hold DDL (collected on the
    driver, recorded in the history), one that tags every row event with the table version
    in force at its ``seq`` and stages it as Parquet partitioned by version, then one job per
    version reading only its partition — so the work is linear in the log's size, whatever
    the number of versions.  Only when some row cannot be converted is the log read once more,
    for those events' raw text."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    from ..history import SchemaHistory
    from . import RowConverter

    say = progress or (lambda msg: None)
    t0 = time.perf_counter()
    changelog, out = Path(changelog), Path(out)
    if not changelog.exists():
        raise FileNotFoundError(f"change log not found: {changelog}")
    out.mkdir(parents=True, exist_ok=True)
    state = _State(out)
    if state.recover():
        say("rolled forward the previous run's commit")
    last = state.last_seq()
    result = RunResult(previous_seq=last)
    spark = spark or spark_session(master)
    run_id = time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]
    staging = state.staging / run_id
    rows_dir = state.staging / f"{run_id}.rows"

    def past_checkpoint(df):
        return df if last is None else df.where(F.col("seq").isNull() | (F.col("seq") > F.lit(last)))

    try:
        # -- DDL → history (driver) -------------------------------------------------------------
        say("reading the DDL events of the change log")
        # the candidates are filtered on the driver: a Spark filter on the parsed fields would
        # be merged with the text pre-filter, and the generated code would then parse every
        # line (common-subexpression elimination evaluates the shared ``from_json`` first)
        candidates = _read_events(spark, changelog, ddl_only=True).select(
            "seq", "position", "ts", "op", "database", "ddl", "_line", "_valid").collect()
        ddl_rows = sorted((r for r in candidates if r["_valid"] and r.op == "ddl" and (last is None or r.seq > last)),
                          key=lambda r: r.seq)
        say(f"recording {len(ddl_rows)} DDL event(s) in the schema history")
        hist_path = Path(history) if history else out / "_history.sqlite"
        failed_ddl: list[tuple[int, str, str | None, str, str]] = []
        with SchemaHistory.open(hist_path, dialect=dialect, lenient=not strict) as hist:
            for r in ddl_rows:
                try:
                    ev = hist.record({"seq": r.seq, "position": r.position, "ts": r.ts,
                                      "database": r.database, "ddl": r.ddl})
                except DdlParseError as exc:
                    raise PipelineError(f"DDL cannot be parsed: {exc}", r.seq) from None
                if ev.status == "failed":
                    failed_ddl.append((r.seq, r.position, r.database,
                                       (ev.error or {}).get("reason", "unparsable DDL"), r["_line"]))
            result.ddl = len(ddl_rows)
            versions = _version_rows(hist)

        # -- row events → table version in force at their seq, staged by version ----------------
        say("tagging row events with their table version")
        seen = Observation("events")
        events = past_checkpoint(_read_events(spark, changelog)).observe(
            seen, F.count(F.lit(1)).alias("events"), F.max("seq").alias("max_seq"))
        vdf = spark.createDataFrame(
            [(d, t, k, lo, hi) for k, (d, t, _v, lo, hi, _) in enumerate(versions)],
            "v_database STRING, v_table STRING, v_part INT, v_from LONG, v_to LONG")
        rows = events.where(~(F.col("_valid") & (F.col("op") == "ddl")))
        is_row = F.col("_valid") & F.col("op").isin(*ROW_OPS)
        cond = (is_row & rows["database"].eqNullSafe(vdf["v_database"]) & (rows["table"] == vdf["v_table"])
                & (rows["seq"] > vdf["v_from"]) & (vdf["v_to"].isNull() | (rows["seq"] < vdf["v_to"])))
        tagged = rows.join(F.broadcast(vdf), cond, "left")
        part = (F.when(~F.col("_valid"), F.lit(_PART_INVALID))
                .when(F.col("v_part").isNull(), F.lit(_PART_UNKNOWN)).otherwise(F.col("v_part")))
        unknown = F.concat(F.lit("unknown table: no schema of "), F.coalesce(F.col("database"), F.lit("?")),
                           F.lit("."), F.col("table"), F.lit(" in force at this seq"))
        (tagged.select("seq", "position", "ts", "op", "database", "table", "before", "after",
                       part.alias("_part"),
                       F.when(~F.col("_valid"), _invalid_reason()).when(F.col("v_part").isNull(), unknown)
                       .alias("_reason"),
                       F.when(F.col("v_part").isNull(), F.col("_line")).alias("_line"),
                       _images().alias("_img"))
         .write.mode("overwrite").partitionBy("_part", "_img").parquet(str(rows_dir)))
        metrics = seen.get
        result.events = metrics.get("events") or 0
        max_seq = metrics.get("max_seq")
        result.last_seq = max(x for x in (max_seq, last) if x is not None) if (max_seq is not None or last is not None) else None
        parts = sorted(int(p.name.split("=", 1)[1]) for p in rows_dir.glob("_part=*") if p.is_dir())

        quarantined = []
        if failed_ddl:
            quarantined.append(spark.createDataFrame(
                [(s, p, "ddl", db, None, f"DDL could not be parsed: {why}", line)
                 for s, p, db, why, line in failed_ddl], _QUARANTINE_SCHEMA))
        for k in (k for k in parts if k < 0):
            quarantined.append(spark.read.parquet(str(rows_dir / f"_part={k}")).select(
                "seq", "position", "op", "database", "table", F.col("_reason").alias("reason"),
                F.col("_line").alias("event")))
        if strict and quarantined:
            first = _union(quarantined).orderBy(F.col("seq").asc_nulls_first()).limit(1).collect()[0]
            raise PipelineError(first.reason, first.seq)

        # -- convert and write each table version ----------------------------------------------
        sopts = dict(spark_options or {})
        todo = [k for k in parts if k >= 0]
        todo.sort(key=lambda k: (versions[k][0] or "", versions[k][1], versions[k][2]))
        bad_dirs: list[str] = []

        def convert(i: int, k: int) -> tuple[int, dict[str, int], bool]:
            db, tbl_name, ver, _lo, _hi, table = versions[k]
            say(f"converting {db}.{tbl_name} version {ver} ({i + 1}/{len(todo)})")
            target = staging / (db or "_") / tbl_name / f"schema_version={ver}"
            bad_dir = state.staging / f"{run_id}.bad" / str(k)
            vdir = rows_dir / f"_part={k}"
            images = {p.name.split("=", 1)[1] for p in vdir.glob("_img=*")}
            counts, has_bad = _write_version(spark.read.parquet(str(vdir)), table, sopts, dialect, target,
                                             bad_dir, after=bool(images & {"a", "ab"}),
                                             before=bool(images & {"b", "ab"}))
            # py4j's JavaObject and JavaMember refer to each other, so the Python objects of a
            # version's expressions are freed only by the cycle collector — and until then they
            # pin the version's (large) expression trees in the driver JVM: a long log would
            # exhaust the driver's heap.  Collect now.
            gc.collect()
            return k, counts, has_bad

        for k, counts, has_bad in _map_concurrently(convert, todo, max(1, concurrent_jobs),
                                                    spark.sparkContext.cancelAllJobs):
            db, tbl_name, ver = versions[k][:3]
            for op, n in counts.items():
                result.counts[(db or "", tbl_name, ver, op)] = n
                result.rows += n
            if has_bad:
                bad_dirs.append(str(state.staging / f"{run_id}.bad" / str(k)))
            result.versions_written.append((db, tbl_name, ver))
        if bad_dirs:
            converted_bad = spark.read.parquet(*bad_dirs)
            if strict:
                first = converted_bad.orderBy("seq").limit(1).collect()[0]
                raise PipelineError(first.reason, first.seq)
            # the events' raw text, read back from the change log for these events only
            lines = past_checkpoint(_read_events(spark, changelog)).select(
                "seq", "position", "op", F.col("_line").alias("event"))
            quarantined.append(converted_bad.join(lines, ["seq", "position", "op"], "left").select(
                "seq", "position", "op", "database", "table", "reason", "event"))

        # -- quarantine ------------------------------------------------------------------------
        if quarantined:
            bad = _union(quarantined).persist()
            try:
                for r in bad.groupBy("reason").count().collect():
                    short = r.reason.split(": ", 1)[0] if r.reason.startswith(("cannot convert", "DDL could")) else r.reason
                    result.quarantine_reasons[short] = result.quarantine_reasons.get(short, 0) + r["count"]
                    result.quarantined += r["count"]
                # every field in every record, null ones too (Spark's JSON writer drops them by default)
                (bad.orderBy("seq").coalesce(1).write.mode("overwrite").option("ignoreNullFields", "false")
                 .json(str(staging / "_quarantine")))
            finally:
                bad.unpersist()

        # -- schemas ---------------------------------------------------------------------------
        schema_dir = staging / "_schemas"
        schema_dir.mkdir(parents=True, exist_ok=True)
        for (d, t, v, lo, hi, table) in versions:
            conv = RowConverter(table, sopts, dialect=dialect)
            (schema_dir / f"{d or '_'}.{t}.v{v}.json").write_text(json.dumps({
                "database": d, "table": t, "schema_version": v, "valid_from_seq": lo, "valid_to_seq": hi,
                "struct_type": conv.struct_type.jsonValue(), "model": table.to_json()}, indent=2))
    finally:
        gc.collect()  # see ``convert`` above: frees this run's expression trees in the JVM

    # -- commit ----------------------------------------------------------------------------------
    result.seconds = time.perf_counter() - t0
    run_json = _merge_run_json(out / "_run.json", result)
    moves = _plan_moves(staging, out, run_id)
    plan = {"run": run_id, "moves": moves, "checkpoint": {"last_seq": result.last_seq, "run": run_id},
            "run_json": run_json, "run_json_path": str(out / "_run.json")}
    _write_json_atomic(state.pending, plan)
    _apply_moves(moves)
    _write_json_atomic(state.checkpoint, plan["checkpoint"])
    _write_json_atomic(out / "_run.json", run_json)
    state.pending.unlink()
    shutil.rmtree(state.staging, ignore_errors=True)
    say("committed")
    return result


def _union(frames: list):
    out = frames[0]
    for f in frames[1:]:
        out = out.unionByName(f)
    return out


def _map_concurrently(fn: Callable[[int, int], Any], items: list[int], workers: int,
                      on_abort: Callable[[], None] = lambda: None):
    """``fn(i, item)`` for each item, ``workers`` at a time on driver threads (each thread
    submits its own Spark jobs); yields results in completion order.  The first exception —
    or an interruption of the caller (Ctrl-C), or the caller abandoning the generator —
    cancels the items not started and calls ``on_abort`` (``ddlcore run`` cancels its running
    Spark jobs there, so the threads end promptly); the exception is raised once the running
    items have ended."""
    from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

    if workers <= 1 or len(items) <= 1:
        for i, item in enumerate(items):
            yield fn(i, item)
        return
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ddlcore-version") as pool:
        pending = {pool.submit(fn, i, item) for i, item in enumerate(items)}
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_EXCEPTION)
                for fut in done:
                    if fut.exception() is not None:
                        raise fut.exception()
                    yield fut.result()
        except BaseException:
            for other in pending:
                other.cancel()
            on_abort()
            wait(pending)
            raise


def _write_version(rows, table, sopts, dialect, target: Path, bad_dir: Path, *, after: bool = True,
                   before: bool = True) -> tuple[dict[str, int], bool]:
    """Convert and write the staged row events of one table version (``rows``): its good rows
    as Parquet into ``target`` (one Spark job, counting rows by op and outcome as it goes),
    and, only if some row cannot be converted, those rows with the reasons as Parquet into
    ``bad_dir`` (a second job).  Returns ``({op: rows written}, whether any row was bad)``.

    The first job's plan holds the values and ``RowConverter.failed`` only; the error column
    (the reasons: as large again as the values) is built by the second job alone.
    ``after`` / ``before``: whether any row carries that image (``False``: the plan leaves
    its conversion out — an insert-only version plans one image, not two)."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    from pyspark.sql.types import StructField, StructType

    from . import RowConverter
    from .convert import ERRORS_TYPE

    conv = RowConverter(table, sopts, dialect=dialect)
    # each conversion is built once over a column named ``_raw`` and applied to each image in
    # turn (building it costs thousands of py4j calls; Spark resolves ``_raw`` in each
    # projection, so the plan is the same as with two copies)
    # each raw value is projected as a column of its own first (``raw_items``), so that the
    # rules refer to it by name: plans a good deal smaller than with the array access inline
    names = [f"_x{i}" for i in range(len(conv.rules))]
    items = [it.alias(name) for it, name in zip(conv.raw_items("_raw"), names)]
    values = conv.value_struct("_raw", names)
    failed = conv.failed("_raw", "_v", names)
    keep = ["seq", "position", "op", "database", "table", "ts"]
    none = F.lit(None).cast(StructType([StructField(f"_{i}", f.dataType) for i, f in
                                        enumerate(conv.struct_type.fields, start=1)]))
    if after:
        conv_df = (rows.select(*keep, "before", F.col("after").alias("_raw"))
                   .select(*keep, "before", "_raw", *items)
                   .select(*keep, "before", "_raw", *names, values.alias("_v"))
                   .select(*keep, "before", F.col("_v").alias("_a"), failed.alias("_fa")))
    else:
        conv_df = rows.select(*keep, "before", none.alias("_a"), F.lit(False).alias("_fa"))
    if before:
        conv_df = (conv_df.select(*keep, "_a", "_fa", F.col("before").alias("_raw"))
                   .select(*keep, "_a", "_fa", "_raw", *items)
                   .select(*keep, "_a", "_fa", "_raw", *names, values.alias("_v"))
                   .select(*keep, "_a", F.col("_v").alias("_b"), (F.col("_fa") | failed).alias("_bad")))
    else:
        conv_df = conv_df.select(*keep, "_a", none.alias("_b"), F.col("_fa").alias("_bad"))
    is_bad = F.col("_bad")
    # counted as the rows flow through the write (Spark does not push filters below ``observe``)
    tally = Observation()
    observed = conv_df.observe(tally, *[F.count(F.when(~is_bad & (F.col("op") == op), 1)).alias(op)
                                        for op in ROW_OPS], F.count(F.when(is_bad, 1)).alias("_bad"))
    good = observed.where(~is_bad)
    # the images' fields are positional (``_1`` …): names and each field's metadata (the
    # column's source facts) are attached here
    fields = [(f"_{i}", f.name, f.metadata) for i, f in enumerate(conv.struct_type.fields, start=1)]
    row_image = [F.when(F.col("op") == "d", F.col(f"_b.{p}")).otherwise(F.col(f"_a.{p}"))
                 .alias(n, metadata=md) for p, n, md in fields]
    before_struct = F.when(F.col("op").isin("u", "d"),
                           F.struct(*[F.col(f"_b.{p}").alias(n, metadata=md) for p, n, md in fields]))
    out_df = good.select(*row_image, F.col("op").alias("_op"), F.col("seq").alias("_seq"),
                         F.col("position").alias("_position"), F.col("ts").alias("_ts"),
                         before_struct.alias("_before"))
    out_df.write.mode("overwrite").parquet(str(target))
    metrics = tally.get
    has_bad = bool(metrics.get("_bad"))
    if has_bad:
        image = F.struct(*conv.columns("_raw", errors="_errors"))
        with_errors = (rows.select(*keep, "before", F.col("after").alias("_raw"))
                       .select(*keep, "before", image.alias("_a"))
                       .select(*keep, "_a", F.col("before").alias("_raw"))
                       .select(*keep, "_a", image.alias("_b")))
        errs = F.concat(F.coalesce(F.col("_a._errors"), F.array().cast(ERRORS_TYPE)),
                        F.coalesce(F.col("_b._errors"), F.array().cast(ERRORS_TYPE)))
        conv_bad = with_errors.withColumn("_errs", errs).where(F.size("_errs") > 0).select(
            "seq", "position", "op", "database", "table",
            F.concat(F.lit("cannot convert: "), F.concat_ws("; ", F.transform(
                "_errs", lambda e: F.concat_ws(" ", F.coalesce(e["column"], F.lit("row")),
                                               F.lit("("), F.coalesce(e["value"], F.lit("null")),
                                               F.lit("):"), e["reason"])))).alias("reason"))
        conv_bad.write.mode("overwrite").parquet(str(bad_dir))
    return {op: metrics[op] for op in ROW_OPS if metrics.get(op)}, has_bad


def _version_rows(hist) -> list[tuple[str | None, str, int, int, int | None, Any]]:
    """Every table version in the history that has a definition:
    ``(database, table, version, valid_from_seq, valid_to_seq, Table)``."""
    return [(v.table_id.database, v.table_id.name, v.version, v.valid_from_seq, v.valid_to_seq, v.table)
            for v in hist.all_versions() if v.table is not None]


def _plan_moves(staging: Path, out: Path, run_id: str) -> list[list[str]]:
    """Staged data files → their place under ``out`` (each named after the run, so files of
    different runs never collide); schema files replace their namesakes."""
    moves = []
    if not staging.exists():
        return moves
    for f in sorted(staging.rglob("*")):
        if not f.is_file() or f.name.startswith(("_SUCCESS", ".")) or f.suffix == ".crc":
            continue
        rel = f.relative_to(staging)
        if rel.parts[0] == "_schemas":
            dst = out / rel
        else:
            dst = out / rel.parent / f"{run_id}-{f.name}"
        moves.append([str(f), str(dst)])
    return moves


def _merge_run_json(path: Path, result: RunResult) -> dict[str, Any]:
    total: dict[str, int] = defaultdict(int)
    runs = 0
    if path.exists():
        prev = json.loads(path.read_text())
        runs = prev.get("runs", 0)
        for row in prev.get("total", {}).get("counts", []):
            total[json.dumps([row["database"], row["table"], row["schema_version"], row["op"]])] += row["rows"]
    for (d, t, v, o), n in result.counts.items():
        total[json.dumps([d, t, v, o])] += n
    counts = [{"database": d, "table": t, "schema_version": v, "op": o, "rows": n}
              for (d, t, v, o), n in sorted((tuple(json.loads(k)), n) for k, n in total.items())]
    return {"runs": runs + 1, "last_run": result.to_json(), "total": {"counts": counts}}
