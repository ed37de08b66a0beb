"""The main job: a change log (DDL + row events) → typed Parquet tables, with PySpark.

Owns: the run's order of stages (``run_pipeline``): reading the change log in Spark
(``ddlcore.spark.readlog``), building the schema history from its DDL and source events on the
driver, tagging every row event with the table version in force at its ``seq``
(``ddlcore.spark.versions``) and staging it by conversion group, converting each group —
with ``RowConverter``'s Spark expressions in a Spark job (the JVM: no Python per row), or on
the driver with its Arrow kernels and Python face (``ddlcore.spark.driver``: every group in
local mode writing to a local output, those of few rows elsewhere, and a small increment
whole) — writing each table version, the schemas, the quarantine (``ddlcore.spark.quarantine``)
and the run summary, and committing a run atomically (``ddlcore.spark.commit``).  Its options
are one ``ddlcore.runconfig.RunConfig``.  Must not know: any dialect (it is a name passed
through or read from the log's source event).

Output layout (``OUT``; names escaped by ``ddlcore.spark.layout``)::

    OUT/<database>/[<schema>/]<table>/schema_version=<N>/*.parquet   rows of that table version
    OUT/_schemas/<database>.[<schema>.]<table>.v<N>.json             StructType JSON + the table model
    OUT/_quarantine/*.json                                events that could not be interpreted
    OUT/_run.json                                         counts of the last run and in total
    OUT/_history.sqlite                                   the schema history (default --history)
    OUT/_state/checkpoint.json                            last committed seq
    OUT/_state/log.json                                   the log's identity and the run options
    OUT/_state/inputs.json                                bytes of each change-log file read so far

Row files hold the table version's columns (``struct_type``) — the *after* image for
``c``/``u``/``r`` and the *before* image for ``d`` (so a delete carries its key), all null for
``t`` (truncate) — plus ``_op``, ``_seq`` (long), ``_position``, ``_ts`` (long, ms since the
epoch, UTC), ``_tx`` (the transaction, when the log gives it), ``_row`` (the row's index within
the source's row event), ``_absent`` (names of the columns the source left out of the row
image: their values are null *because they are unknown*, not because they are NULL; null when
none), ``_before`` (a struct of the before image for ``u`` and ``d``) and ``_before_absent``.

Parquet: timestamps are INT64 ``TIMESTAMP(MICROS)`` (``PARQUET_TIMESTAMPS``), never INT96; each
field's metadata (the column's ``column_type``, ``enum_values``/``set_values``,
``character_set_name``, ... and ``comment``; ``META_METADATA`` for the pipeline's columns) is in
every file's footer key-value metadata under ``org.apache.spark.sql.parquet.row.metadata``
(Spark's ``StructType`` JSON; Arrow readers do not turn it into Arrow field metadata by
themselves: docs/pipeline.md, "Reading the output without Spark").

Quarantine records (``OUT/_quarantine/*.json``) carry ``seq, position, op, database, schema,
table, reason, event`` (the event's raw text), every key present even when null.

Commit protocol: ``ddlcore.spark.commit`` (a run writes into ``OUT/_state/staging/<run>/`` and
commits by one plan, ``pending.json``, rolled forward by the next run if it was killed after
writing it: no row lost or written twice).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import os
import shutil
import tempfile
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..changelog import AFTER_OPS, BEFORE_OPS, HISTORY_OPS, ROW_OPS
from ..errors import PipelineError
from ..runconfig import DEFAULT_CONCURRENT_JOBS, RunConfig, Tuning
from . import commit, historypass, readlog
from . import driver as driver_side
from . import versions as vs
from .commit import OutputState
from .context import RunContext
from .frames import local_frame, union
from .layout import schema_file, version_dir
from .quarantine import (CANNOT_CONVERT, CAPTURE_REASON, QUARANTINE_FIELDS, QUARANTINE_SCHEMA, STMT_REASON,
                         STMT_TEXT_CHARS, UNKNOWN_TABLE_REASON, PartKind, short_reason)
from .readlog import EVENT_SCHEMA_DDL
from .versions import META_COLUMNS, META_METADATA

if TYPE_CHECKING:  # pragma: no cover
    from ..history import TableVersion
    from .fs import OutputFS

__all__ = ["run_pipeline", "RunResult", "PipelineError", "EVENT_SCHEMA_DDL", "DEFAULT_CONCURRENT_JOBS",
           "RunConfig", "Tuning", "spark_session", "check_run_options", "short_reason", "META_COLUMNS", "META_METADATA"]

@dataclass
class RunResult:
    """What a run did: ``events`` read past the checkpoint, ``rows`` written,
    ``quarantined`` events, ``ddl`` events recorded, ``counts`` ``{(db, table, version, op):
    n}`` (``table`` is ``schema.table`` for PostgreSQL), ``quarantine_reasons`` ``{reason:
    n}``, ``replayed`` quarantined events written by ``--replay-quarantine``, ``drift``
    warnings of the history, ``last_seq`` committed, ``seconds``, ``held``: the unterminated
    last lines of files left for a later run (``FILE:LINE: ...``)."""

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
    replayed: int = 0
    drift: list[str] = field(default_factory=list)
    dialect: str | None = None
    held: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "events": self.events, "rows": self.rows, "quarantined": self.quarantined,
            "ddl": self.ddl, "last_seq": self.last_seq, "previous_seq": self.previous_seq,
            "seconds": round(self.seconds, 3), "replayed": self.replayed, "dialect": self.dialect,
            "drift": list(self.drift), "held": list(self.held),
            "counts": [{"database": d, "table": t, "schema_version": v, "op": o, "rows": n}
                       for (d, t, v, o), n in sorted(self.counts.items())],
            "quarantine_reasons": dict(sorted(self.quarantine_reasons.items())),
        }


#: PySpark's setting for the call-site context of DataFrame errors (read once per process)
_DATAFRAME_DEBUGGING = "spark.python.sql.dataFrameDebugging.enabled"


def spark_session(master: str | None = None, app_name: str = "ddlcore run",
                  conf: dict[str, str] | None = None):
    """A SparkSession: ``master`` (default: the one ``spark-submit`` set — ``submitted()`` —
    else ``local[*]``), UTC session time zone, few shuffle partitions, no UI, no console
    progress bar (``ddlcore run`` shows its own status), Parquet timestamps as
    ``TIMESTAMP_MICROS``, no checksum side files (``.crc``) for what this JVM writes to local
    paths, no call-site recording per Column function (PySpark's DataFrame debugging), and —
    for a local master, when this call starts the JVM — Hadoop's local filesystem without a
    ``chmod`` process per file and the parallel collector (``ddlcore.spark.localjvm``; its
    ``status()`` says what the session got); ``conf`` (Spark properties, e.g.
    ``spark.executor.memory``) last, so it overrides these.  An already running session is
    returned with these SQL settings applied."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    from . import localjvm

    builder = SparkSession.builder.appName(app_name)
    if master:
        builder = builder.master(master)
    elif not submitted():
        builder = builder.master("local[*]")
    builder = (builder.config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.shuffle.partitions", "8")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               # the SQL status store keeps each query's plan description (large: the converters'
               # expressions) even without a UI; a run issues a few queries per table version
               .config("spark.sql.ui.retainedExecutions", "20")
               .config("spark.sql.sources.partitionOverwriteMode", "dynamic")
               # PySpark's DataFrame debugging records the Python call site of every Column
               # function it is handed (stack inspection and about six py4j round trips each;
               # Spark's docs: "a non-trivial performance overhead"): ddlcore's converters are
               # built of thousands of such calls (docs/pipeline.md, Performance)
               .config(_DATAFRAME_DEBUGGING, "false")
               .config(*PARQUET_TIMESTAMPS))
    conf = dict(conf or {})
    # a local JVM started here: Hadoop's local filesystem sets file modes without a ``chmod``
    # process per file and directory, and the collector is the throughput one
    # (``ddlcore.spark.localjvm``)
    if not submitted() and SparkContext._gateway is None:
        conf.update(localjvm.session_conf(master or "local[*]", conf))
    for key, value in conf.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    # Spark's writers on ``file:`` paths in this JVM (all of them in local mode) share Hadoop's
    # cached local filesystem: no ``.crc`` side file per file they write — a create less, and
    # without Hadoop's native library a ``chmod`` process less, each (docs/pipeline.md,
    # Performance)
    jvm = session._jvm
    jvm.org.apache.hadoop.fs.FileSystem.get(jvm.java.net.URI("file:///"),
                                            session._jsc.hadoopConfiguration()).setWriteChecksum(False)
    return session


def submitted() -> bool:
    """Whether this driver was started by ``spark-submit`` (its JVM is already running, with
    the ``--master`` it was given: ``PYSPARK_GATEWAY_PORT`` is set), or a master is named in
    ``PYSPARK_SUBMIT_ARGS`` / ``SPARK_MASTER``: then no master is set here."""
    args = os.environ.get("PYSPARK_SUBMIT_ARGS", "")
    return bool(os.environ.get("PYSPARK_GATEWAY_PORT") or os.environ.get("SPARK_MASTER")
                or "spark.master" in args or "--master" in args)


# --------------------------------------------------------------------------------------------
# state and commit
# --------------------------------------------------------------------------------------------


#: the session settings of an incremental run that reads tails of at most
#: ``Tuning.interpreted_max_bytes`` bytes in all (about 16,000 events of the benchmark's): expressions are interpreted, not compiled.  Generating
#: and compiling the code of the conversion plans (thousands of expression nodes each) costs
#: seconds per job, more than interpreting them over a few thousand rows; from a few tens of
#: thousands of rows on, compiled code is faster (docs/pipeline.md, Performance)
_INTERPRETED = {"spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}
#: the session settings of the compiled conversion jobs: a whole stage whose generated method
#: outgrows HotSpot's limit for just-in-time compilation (8,000 bytes of bytecode) is not fused
#: (Spark's ``hugeMethodLimit``, which its documentation suggests at 8,000 on HotSpot): its
#: operators' code is then split into methods the JIT compiles.  Fused, a group job's output
#: projection feeding the sort of a sorted partitioned write (``_partitioned_writers``) ran in
#: the bytecode interpreter (docs/pipeline.md, Performance)
_COMPILED = {"spark.sql.codegen.hugeMethodLimit": "8000"}


#: a conversion group of at most ``Tuning.interpreted_max_rows`` staged rows is converted with
#: its expressions interpreted (``_INTERPRETED``), also in a full run: generating and compiling a
#: new plan's code (Janino, then the JIT on the new classes) costs about 0.27 s of CPU more per
#: group, interpreting about 11 us more per row (2M, 500 x 4, ``--distinct``: 200 groups of
#: ~9,000 rows; docs/pipeline.md, Performance)


def _session_settings(spark, settings: dict[str, str]) -> Callable[[], None]:
    """Set the session's SQL ``settings``; returns the function that puts the previous values
    back (unset where there was none)."""
    saved = {k: spark.conf.get(k, None) for k in settings}
    for k, v in settings.items():
        spark.conf.set(k, v)

    def restore() -> None:
        for k, v in saved.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)
    return restore


@contextlib.contextmanager
def _settings(spark, settings: dict[str, str]):
    """The session's SQL ``settings`` inside the block, then put back (``_session_settings``)."""
    put_back = _session_settings(spark, settings)
    try:
        yield
    finally:
        put_back()


#: Spark lists the files of a read of more paths (or partition directories) than this with a
#: Spark job of one task per path ("parallel partition discovery"; default 32)
_PARALLEL_LISTING = "spark.sql.sources.parallelPartitionDiscovery.threshold"


def _read_own(spark, fs: "OutputFS", *paths: str):
    """``spark.read.parquet(*paths)`` of directories the run wrote under the output (``fs``):
    staged rows, rows that could not be converted.  On the local filesystem the driver lists
    them whatever their number.  Spark's default lists more than 32 directories with a Spark
    job of a task per directory.  A staged log of 2,000 conversion groups took 7 s of a 2M-event
    run that way; listed on the driver, under a second (docs/pipeline.md, Performance).  On
    other filesystems (HDFS, object stores), each listing is a round trip, so Spark's parallel
    listing is kept.  Raises what Spark raises for a missing path."""
    if fs.scheme != "file":
        return spark.read.parquet(*paths)
    with _settings(spark, {_PARALLEL_LISTING: str(2 ** 31 - 1)}):  # Spark lists when the read is made
        return spark.read.parquet(*paths)


#: ``check_run_options``' default: read the output's log.json if it is local
_LOCAL = object()
#: timestamps as Parquet INT64 ``TIMESTAMP(MICROS)`` (``isAdjustedToUTC`` true for
#: ``TimestampType``, false for ``TimestampNTZType``), not Spark's default, the deprecated INT96
PARQUET_TIMESTAMPS = ("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")


# --------------------------------------------------------------------------------------------
# run options and the log's identity
# --------------------------------------------------------------------------------------------


def check_run_options(out: str | os.PathLike, dialect: str | None,
                      spark_options: dict[str, Any] | None, *, log_info: Any = _LOCAL) -> dict[str, Any]:
    """Validate a run's options before Spark starts and against the output's recorded ones:
    the dialect must be installed, the ``-s`` options known with valid values, and equal to
    those the output was written with (types must not change inside a ``schema_version``
    directory).  Returns the normalised type-mapping options.  Raises ``PipelineError``
    naming the problem.

    ``log_info``: the output's ``_state/log.json`` (``None``: none), as the run reads it
    through Hadoop's FileSystem; by default — the check ``ddlcore run`` makes before it starts
    Spark — it is read from a local output directory only (a URI of another filesystem is
    checked by the run itself)."""
    from ..errors import DialectNotFound
    from ..plugins import get_dialect
    from .options import SparkOptions

    if dialect is not None:
        try:
            get_dialect(dialect)
        except DialectNotFound as exc:
            raise PipelineError(str(exc)) from None
    try:
        opts = SparkOptions.of(spark_options or {})
    except (TypeError, ValueError) as exc:
        raise PipelineError(f"-s: {exc}") from None
    normal = opts.as_dict(dialect)
    info = _local_log_info(out) if log_info is _LOCAL else log_info
    # an option declared after the output was written had its default then (a new option's
    # default keeps the behaviour from before it existed)
    recorded = None if info is None or info.get("spark_options") is None else {
        **SparkOptions().as_dict(dialect), **info["spark_options"]}
    if recorded is not None and recorded != normal:
        diff = {k: (recorded.get(k), v) for k, v in normal.items() if recorded.get(k) != v}
        said = ", ".join(f"-s {k}={old} (this run: {new})" for k, (old, new) in sorted(diff.items()))
        raise PipelineError(f"{out} was written with {said}: types must not change inside a schema_version "
                            f"directory; run with the same options or write to a new output directory")
    return normal


def _local_log_info(out: str | os.PathLike) -> dict | None:
    """``OUT/_state/log.json`` of a local output (a path or a ``file:`` URI), read before
    Spark starts — or, when a commit is pending (``pending.json``: the next run rolls it
    forward first), the ``log.json`` that commit writes; ``None`` for another filesystem or
    when there is none."""
    from urllib.parse import urlparse

    text = str(out)
    scheme = urlparse(text).scheme
    if len(scheme) > 1 and scheme != "file":
        return None
    state = Path(urlparse(text).path if scheme == "file" else text) / "_state"
    if (state / "pending.json").is_file():
        with contextlib.suppress(OSError, ValueError, AttributeError):
            pending = (json.loads((state / "pending.json").read_text()).get("state") or {}).get("log.json")
            if pending is not None:
                return pending
    path = state / "log.json"
    return json.loads(path.read_text()) if path.is_file() else None


def run_pipeline(changelog: str | os.PathLike, out: str | os.PathLike, config: RunConfig | None = None, *,
                 spark=None, progress: Callable[[str], None] | None = None, **options: Any) -> RunResult:
    """Run the job once over ``changelog`` (JSON Lines, optionally gzip, or Parquet; or a
    directory of them, e.g. a capture's ``--out``) into ``out`` and return a ``RunResult``.
    Only events with ``seq`` past the checkpoint are processed; the run commits atomically
    (module docstring).

    ``config``: the run's options and tuning (``ddlcore.runconfig.RunConfig``: dialect,
    history store, strictness, ``-s`` options, concurrent jobs, quarantine replay, output
    format and catalog, the session's master and properties, the output lock, a batch's end,
    ``Tuning``); ``options``: ``RunConfig`` fields replacing ``config``'s (``strict=True``,
    ``tuning=Tuning(driver_max_rows=-1)``, ...: ``RunConfig.of``; an unknown name is a
    ``TypeError``); ``spark``: the session to use (default: one made from ``master`` and
    ``spark_conf``, ``spark_session``); ``progress``: called with a line at each stage.
    A dialect that contradicts the log's source event, ``-s`` options other than the output's,
    and a format other than the output's are errors (``PipelineError``).
    The previous run's commit is rolled forward before the options and the log's identity are
    checked against those the output was written with.

    Raises ``FileNotFoundError`` for a missing change log and ``PipelineError`` for a log that
    is not the continuation of the output's, run options that differ from the output's, a
    change log that cannot be read (a truncated gzip file: named), and in strict mode;
    ``OutputLocked`` (a ``PipelineError``) when another run holds the output."""
    from pyspark.errors import PySparkException
    from py4j.protocol import Py4JJavaError

    from .fs import OutputFS
    from .outlock import OutputLock
    from .seqcheck import check_files

    cfg = RunConfig.of(config, **options)
    dialect, output_format, catalog = cfg.dialect, cfg.output_format, cfg.catalog
    say = progress or (lambda msg: None)
    t0 = time.perf_counter()
    from .fs import is_uri

    out = str(out)
    remote_log = is_uri(changelog)
    if not remote_log:
        changelog = Path(readlog.plain_path(str(changelog)))
        if not changelog.exists():
            raise FileNotFoundError(f"change log not found: {changelog}")
        inputs = readlog.only_files(readlog.inputs_of(changelog), cfg.batch_files)
        bound = getattr(inputs, "bound", None)
        if bound is not None and cfg.batch_end is not None and cfg.batch_end[0] < bound.seq:
            inputs.bound = bound = replace(bound, seq=cfg.batch_end[0],
                                           durable_bytes=min(cfg.batch_end[1], bound.durable_bytes))
        check_files(inputs[0] + inputs[1], capture_log=None if bound is None else bound.changelog)  # the seq rule
    # the values, before Spark starts; against the output's, once its last commit is rolled forward
    check_run_options(out, dialect, cfg.spark_options, log_info=None)
    from ..sinks import make_sink
    try:
        make_sink(output_format, out, catalog=catalog)  # a bad format or a missing library: before Spark starts
    except ValueError as exc:
        raise PipelineError(str(exc)) from None
    spark = spark or spark_session(cfg.master, conf=cfg.spark_conf)
    if remote_log:
        try:
            inputs = readlog.only_files(readlog.remote_inputs(spark, str(changelog)), cfg.batch_files)
        except Py4JJavaError as exc:
            raise PipelineError(f"change log {changelog}: {_java_error(exc)}") from None
    try:
        fs = OutputFS(spark, out)
    except Py4JJavaError as exc:  # no filesystem for the scheme, an unreachable name node, ...
        raise PipelineError(f"output {out}: {_java_error(exc)}") from None
    state = OutputState(fs)
    created = None
    lock = OutputLock(fs) if cfg.take_lock else None
    try:
        existed = fs.exists()
        fs.mkdirs()
        if lock is not None:
            lock.acquire()  # one output, one writer: before anything of OUT is read or changed
        created = not existed
        if state.recover():
            say("rolled forward the previous run's commit")
        # after the roll-forward: the options the recovered output was written with
        sopts = check_run_options(out, dialect, cfg.spark_options, log_info=state.log_info())
        written = (state.log_info() or {}).get("format", output_format if state.log_info() is None else "parquet")
        if written != output_format:  # the physical column names differ by format (ddlcore.sinks)
            raise PipelineError(f"--format {output_format}: {out} was written with --format {written}")
        if output_format == "iceberg" and catalog is None and fs.local_root is None:
            raise PipelineError(f"--format iceberg: the embedded catalog needs a local --out ({out}); "
                                f"name a configured catalog with --catalog NAME")
        bound = getattr(inputs, "bound", None)  # a local capture directory (not a remote URI)
        if bound is not None and bound.seq == 0:
            # a capture whose first checkpoint is not written yet, or whose snapshot is in
            # progress: nothing of its log is final — nothing read, nothing committed (not even
            # the dialect: the log's source event is not final either)
            say(f"{bound.changelog}: the capture has made nothing final yet (phase {bound.phase}): nothing to read")
            last = state.last_seq()
            return RunResult(previous_seq=last, last_seq=last, seconds=time.perf_counter() - t0)
        saved_ts = spark.conf.get(PARQUET_TIMESTAMPS[0], None)
        spark.conf.set(*PARQUET_TIMESTAMPS)  # also in a session the caller made
        try:
            return _run(spark, inputs, out, state, cfg, sopts=sopts, say=say, t0=t0,
                        sink=make_sink(output_format, out, catalog=catalog, dialect=dialect, spark_options=sopts))
        finally:
            if saved_ts is None:
                spark.conf.unset(PARQUET_TIMESTAMPS[0])
            else:
                spark.conf.set(PARQUET_TIMESTAMPS[0], saved_ts)
    except (Py4JJavaError, PySparkException):
        problem = readlog.unreadable_input(inputs)
        if problem is not None:
            raise PipelineError(problem) from None
        raise
    finally:
        if created is not None and not fs.exists(state.pending):  # (else: committed, to roll forward)
            fs.delete(state.staging, recursive=True)
            if created and not fs.exists(state.checkpoint) and _only_state(fs):
                fs.delete("", recursive=True)  # a first run that failed leaves nothing
        if lock is not None:
            lock.release()
        fs.close()


def _java_error(exc) -> str:
    """The Java exception of a py4j error, as one line (``class: message``)."""
    try:
        return str(exc.java_exception.toString()).splitlines()[0]
    except Exception:  # pragma: no cover - a py4j error without its Java side
        return str(exc).splitlines()[0]


def _only_state(fs: "OutputFS") -> bool:
    return all(name in ("_state", "_history.sqlite", "_history.sqlite-wal", "_history.sqlite-shm")
               for name, _ in fs.list())


def _run(spark, inputs, out: str, state: OutputState, cfg: RunConfig, *, sopts, say, t0, sink=None) -> RunResult:
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    from . import seqcheck

    fs = state.fs
    tuning = cfg.tuning
    last = state.last_seq()
    result = RunResult(previous_seq=last)
    run_id = time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]
    ctx = RunContext(spark, state, cfg, run_id, last, result, say)
    # paths relative to the output (``fs``); ``fs.str(...)`` is the URI Spark reads and writes
    staging, rows_dir = ctx.staging, ctx.rows_dir
    local_tmp = None
    restore_settings: Callable[[], None] = lambda: None

    def past_checkpoint(df):
        return df if last is None else df.where(F.col("seq").isNull() | (F.col("seq") > F.lit(last)))

    restore_names = _session_settings(spark, commit.file_names(run_id))
    try:
        # -- only the bytes of the change-log files past what the committed runs read -----------
        given = len(inputs[0])
        inputs, marks = readlog.incremental_inputs(spark, fs, inputs, state.marks() if last is not None else {}, run_id)
        if getattr(inputs, "tails", ()) or len(inputs[0]) < given:
            say(f"reading {len(inputs[0])} of {given} JSON Lines change-log file(s), "
                f"{len(inputs.tails)} from where the last run ended ({inputs.tail_bytes:,} bytes)")
        # a small increment's lines, read on the driver (``None``: the run reads them with Spark)
        increment = None if cfg.replay_quarantine else driver_side.DriverIncrement.read(spark, inputs, fs, last=last, tuning=tuning)
        if increment is None and not inputs.whole and inputs.tail_bytes <= tuning.interpreted_max_bytes:
            restore_settings = _session_settings(spark, _INTERPRETED)
            say("a small increment: expressions are interpreted (no code generation)")

        # -- DDL and source events → history (driver: ddlcore.spark.historypass) -----------------
        hp = historypass.record_history(ctx, inputs, increment, out, sink)
        identity, name, fold, versions, hist_path = hp.identity, hp.dialect, hp.fold, hp.versions, hp.path
        local_tmp = hp.local_copy

        # -- quarantined events to replay ---------------------------------------------------------
        replay_lines, replay_keys, old_quarantine = [], set(), []
        if cfg.replay_quarantine:
            replay_lines, replay_keys, old_quarantine = _replayable(fs, versions, fold)
            say(f"replaying {len(replay_lines)} quarantined event(s)")

        # -- a small increment: tagged, converted and written on the driver, no Spark job
        # (ddlcore.spark.driver; docs/pipeline.md, "Incremental runs")
        if increment is not None:
            group_dirs, new_malformed, deletes = increment.run(
                result, versions=versions, fold=fold, history_records=hp.records, state=state,
                staging=staging, run_id=run_id, sopts=sopts, dialect=name, strict=cfg.strict, say=say)
        else:
            # -- row events → table version in force at their seq, staged by conversion group -------
            say("tagging row events with their table version")
            seen, fresh = Observation("all events"), Observation("new events")
            # lines before the checkpoint are not parsed (``after_seq``); the largest seq among them
            # still counts for the check below
            skipped = Observation("events before the checkpoint") if (last is not None and inputs[0]) else None
            everything = readlog.read_events(spark, inputs, after_seq=last, skipped=skipped).observe(
                seen, F.max("seq").alias("max_seq"))
            events_df = (past_checkpoint(everything).observe(fresh, F.count(F.lit(1)).alias("events"),
                                                             *seqcheck.span_columns())
                         .withColumn("_replay", F.lit(None).cast("INT")))
            if replay_lines:
                rp = local_frame(spark, replay_lines, "_line STRING, _replay INT")
                rp = rp.select("_line", F.lit("replay").alias("_file"),
                               F.from_json("_line", EVENT_SCHEMA_DDL).alias("e"), "_replay").select(
                    "_line", "_file", "e.*", F.lit(True).alias("_valid"), "_replay")
                events_df = events_df.unionByName(rp)
            # a source column named like a pipeline column (``_op``, ...): its version's rows are
            # quarantined with this reason, never mixed up with the pipeline's own columns
            collide = vs.collisions(versions)
            # the versions that can get rows in this run (in force past the checkpoint, or a replay
            # target), in conversion groups: the rows are staged by group, so a log of thousands of
            # table versions stages a few dozen directories, not thousands
            live = sorted(set(vs.live(versions, last)) | {k for _, k in replay_lines})
            groups = vs.conversion_groups(live, [v.table for v in versions])
            gdf = local_frame(spark, [(k, g) for g, members in enumerate(groups) for k in members],
                               "g_part INT, g_grp INT")
            vdf = local_frame(
                spark, [(vs.fold_name(v.table_id.database, fold), vs.fold_name(v.table_id.schema, fold), vs.fold_name(v.table_id.name, fold), k,
                  v.valid_from_seq, v.valid_to_seq, v.reason if v.blocked else collide.get(k)) for k, v in enumerate(versions)],
                "v_database STRING, v_schema STRING, v_table STRING, v_part INT, v_from LONG, v_to LONG, v_reason STRING")
            rows = events_df.where(~(F.col("_valid") & F.col("op").isin(*HISTORY_OPS)))
            is_row = F.col("_valid") & F.col("op").isin(*ROW_OPS) & F.col("_replay").isNull()
            fd = (lambda c: F.lower(c)) if fold else (lambda c: c)
            cond = (is_row & fd(rows["database"]).eqNullSafe(vdf["v_database"])
                    & fd(rows["schema"]).eqNullSafe(vdf["v_schema"]) & (fd(rows["table"]) == vdf["v_table"])
                    & (rows["seq"] > vdf["v_from"]) & (vdf["v_to"].isNull() | (rows["seq"] < vdf["v_to"])))
            tagged = rows.join(F.broadcast(vdf), cond, "left")
            op = F.col("op")
            part = (F.when(F.col("_replay").isNotNull(), F.col("_replay"))
                    .when(~F.col("_valid"), F.lit(PartKind.INVALID.value))
                    .when(op == "stmt", F.lit(PartKind.STATEMENT.value))
                    .when(F.col("quarantine").isNotNull(), F.lit(PartKind.CAPTURE.value))
                    .when(F.col("v_part").isNull(), F.lit(PartKind.UNKNOWN_TABLE.value))
                    .when(F.col("v_reason").isNotNull(), F.lit(PartKind.BLOCKED.value))
                    .otherwise(F.col("v_part")))
            where = F.concat_ws(".", F.coalesce(F.col("database"), F.lit("?")), F.col("schema"), F.col("table"))
            reason = (F.when(F.col("_part") == PartKind.STATEMENT.value,
                             F.concat(F.lit(STMT_REASON), F.substring(F.col("ddl"), 1, STMT_TEXT_CHARS)))
                      .when(F.col("_part") == PartKind.CAPTURE.value, F.concat(F.lit(CAPTURE_REASON), F.col("quarantine")))
                      .when(F.col("_part") == PartKind.UNKNOWN_TABLE.value,
                            F.concat(F.lit(UNKNOWN_TABLE_REASON[0]), where, F.lit(UNKNOWN_TABLE_REASON[1])))
                      .when(F.col("_part") == PartKind.BLOCKED.value, F.col("v_reason")))
            staged = (tagged.withColumn("_part", part)
                      .join(F.broadcast(gdf), F.col("_part") == gdf["g_part"], "left")
                      .select("seq", "position", "ts", "op", "database", "schema", "table", "tx", "row", "before",
                              "after", "_part", F.when(F.col("_part") >= 0, F.col("g_grp")).otherwise(F.col("_part"))
                              .alias("_grp"), reason.alias("_reason"),
                              F.when(F.col("_part") < 0, F.col("_line")).alias("_line"),
                              F.when(F.col("_part") == PartKind.INVALID.value, F.col("_file")).alias("_file"),
                              # the bytes of its values, summed per group below (groups of few
                              # rows but large values are not converted on the driver)
                              F.when(F.col("_part") >= 0, F.expr(f"{_IMAGE_BYTES.format('after')} + "
                                                                 f"{_IMAGE_BYTES.format('before')}")).alias("_bytes")))
            # one open file per staged directory and task, instead of sorting each task's rows by
            # directory first — unless there are more directories than the heap lets a task
            # keep files open (``_partitioned_writers``)
            staged_dirs = len(groups) + len(PartKind)
            with _settings(spark, {_CONCURRENT_WRITERS: _partitioned_writers(
                    staged_dirs, _open_writers_per_task(spark, 1, tuning.heap_mb_per_open_writer))}):
                (staged.write.mode("overwrite").options(**_STAGING_PARQUET)
                 .partitionBy("_grp").parquet(fs.str(rows_dir)))
            max_seq = max((m for m in (seen.get.get("max_seq"), skipped.get.get("max_seq") if skipped else None)
                           if m is not None), default=None)
            if last is not None and max_seq is not None and max_seq < last:
                raise PipelineError(f"the change log ends at seq {max_seq}, before this output's checkpoint (seq {last}): "
                                    f"it is not the log this output was written from (a new capture restarts seq "
                                    f"at 1); write it to a new output directory")
            parts = sorted(int(n.split("=", 1)[1]) for n, is_dir in fs.list(rows_dir) if is_dir and n.startswith("_grp="))
            result.events = fresh.get.get("events") or 0
            if seqcheck.span_has_duplicate(fresh.get):  # the seq rule inside the run (only then: a pass more)
                dup = (past_checkpoint(readlog.read_events(spark, inputs, after_seq=last)).where(F.col("seq").isNotNull())
                       .groupBy("seq").agg(F.collect_list("_file").alias("files")).where(F.size("files") > 1)
                       .orderBy("seq").limit(1).collect())
                if dup:
                    raise seqcheck.duplicate_error(dup[0].seq, list(dup[0].files))
            last_seq = max((x for x in (max_seq, last) if x is not None), default=None)
            result.last_seq = last_seq

            quarantined = []
            new_malformed: list[str] = []
            records = list(hp.records)
            if PartKind.INVALID in parts:
                malformed, new_malformed = readlog.malformed_records(spark, fs.str(f"{rows_dir}/_grp={PartKind.INVALID.value}"),
                                                              state,
                                                              inputs, on_held=result.held.append)
                records += malformed
            if records:
                quarantined.append(local_frame(spark, [r.as_tuple() for r in records], QUARANTINE_SCHEMA))
            for k in (k for k in parts if k < 0 and k != PartKind.INVALID):
                quarantined.append(spark.read.parquet(fs.str(f"{rows_dir}/_grp={k}")).select(
                    "seq", "position", "op", "database", "schema", "table", F.col("_reason").alias("reason"),
                    F.col("_line").alias("event")))
            if cfg.strict and quarantined:
                first = union(quarantined).orderBy(F.col("seq").asc_nulls_first()).limit(1).collect()[0]
                raise PipelineError(first.reason, first.seq)

            # -- convert and write each table version ----------------------------------------------
            bad_dirs: list[str] = []
            # rows per version and op, and the bytes of their values per version, from the staged
            # rows (one scan of the ``op`` and ``_bytes`` columns); the rows that cannot be
            # converted are subtracted below
            staged_counts: dict[tuple[int, str], int] = {}
            staged_bytes: dict[int, int] = defaultdict(int)
            staged_rows = _read_own(spark, fs, fs.str(rows_dir)) if any(g >= 0 for g in parts) else None
            if staged_rows is not None:
                for r in staged_rows.where(F.col("_grp") >= 0).groupBy("_part", "op").agg(
                        F.count(F.lit(1)).alias("count"), F.sum("_bytes").alias("bytes")).collect():
                    staged_counts[(r["_part"], r["op"])] = r["count"]
                    staged_bytes[r["_part"]] += r["bytes"] or 0
            todo = sorted({k for k, _ in staged_counts}, key=lambda k: (
                versions[k].table_id.database or "", versions[k].table_id.schema or "", versions[k].table_id.name, versions[k].version))
            # column names differing only in case (PostgreSQL): written as they are
            case = ({"spark.sql.caseSensitive": "true"} if any(vs.case_collision(versions[k].table) for k in todo)
                    else {})
            # versions whose conversion and output schema are the same (the same columns and table
            # defaults: sharded or copied tables, and versions whose change left the columns alone)
            # are converted by one plan and written by one job, partitioned by version; each reads
            # its group's staged directory
            with_rows = set(todo)
            group_of = {k: g for g, members in enumerate(groups) for k in members}
            groups = [[k for k in members if k in with_rows] for members in groups]
            rank = {k: i for i, k in enumerate(todo)}
            order = sorted((g for g, members in enumerate(groups) if members), key=lambda g: rank[groups[g][0]])

            def convert(i: int, g: int) -> tuple[list[int], str | None]:
                group = groups[g]
                v = versions[group[0]]
                say(f"converting {vs.label(v)} version {v.version}"
                    + (f" and {len(group) - 1} more table version(s) of the same columns" if len(group) > 1 else "")
                    + f" ({i + 1}/{len(order)})")
                bad_dir = fs.str(f"{state.staging}/{run_id}.bad/{group[0]}")
                # the images the rows carry, by their ops: after (c, r, u), before (d, u); a
                # version whose rows carry one image only is planned with that image alone
                members = set(group)
                ops = {o for (k, o), n in staged_counts.items() if n and k in members}
                rows = spark.read.parquet(fs.str(f"{rows_dir}/_grp={group_of[group[0]]}"))
                if len(group) == 1:
                    target = fs.str(f"{staging}/{version_dir(v.table_id.database, v.table_id.schema, v.table_id.name, v.version)}")
                    partition_by = None
                else:
                    target, partition_by = fs.str(f"{staging}/{commit.GROUPS}/{group[0]}"), "_part"
                has_bad = _write_version(rows, v.table, sopts, name, target, bad_dir,
                                         after=bool(ops & {"c", "r", "u"}), before=bool(ops & {"d", "u"}),
                                         partition_by=partition_by, partitions=len(group))
                # py4j's JavaObject and JavaMember refer to each other, so the Python objects of a
                # version's expressions are freed only by the cycle collector — and until then they
                # pin the version's (large) expression trees in the driver JVM: a long log would
                # exhaust the driver's heap.  Collect now.
                gc.collect()
                return group, (bad_dir if has_bad else None)

            group_dirs: dict[int, str] = {}
            # the objects alive now (parsers, the history, Spark's and py4j's modules) are moved out
            # of the collector's reach until the versions are written: each version's
            # ``gc.collect()`` then walks only what was made since (milliseconds instead of a
            # quarter of a second per version on a busy 2-core machine)
            gc.freeze()
            try:
                # groups of few rows first, with expressions interpreted: generating and compiling a
                # conversion plan's code costs more than interpreting it over a few thousand rows
                size: dict[int, int] = defaultdict(int)
                for (k, _), n in staged_counts.items():
                    size[group_of[k]] += n
                group_bytes: dict[int, int] = defaultdict(int)
                for k, n in staged_bytes.items():
                    group_bytes[group_of[k]] += n
                # the groups ``driver_max_rows`` allows (every one in local mode, those of few rows
                # elsewhere): converted and written on the driver (in worker processes), no Spark
                # job each (ddlcore.spark.driver.convert_staged; docs/pipeline.md, step 3)
                max_rows = driver_side.driver_max_rows(spark, fs, tuning)  # ``None``: any number
                on_driver = {g: groups[g] for g in order if max_rows is None or size[g] <= max_rows}
                if on_driver:
                    say(f"converting {len(on_driver)} conversion group(s)"
                        + ("" if max_rows is None else f" of at most {max_rows:,} row(s)") + " on the driver")
                    driver_bad = f"{state.staging}/{run_id}.bad/driver"
                    left, has_bad = driver_side.convert_staged(
                        staged_rows, on_driver, size, group_bytes, versions, sopts=sopts, dialect=name, fs=fs,
                        rows_dir=rows_dir, staging=staging, run_id=run_id, bad_dir=driver_bad, tuning=tuning,
                        say=say)
                    if has_bad:
                        bad_dirs.append(fs.str(driver_bad))
                    done = set(on_driver) - set(left)
                    order = [g for g in order if g not in done]
                few_rows = [g for g in order if size[g] <= tuning.interpreted_max_rows]
                many_rows = [g for g in order if size[g] > tuning.interpreted_max_rows]
                converted = []
                # a partitioned write keeps one file open per version and task instead of sorting
                # its rows by version, for groups of fewer versions than the heap lets a task keep
                # files open (``_partitioned_writers``); larger groups sort, in a phase of their
                # own: the setting is made once per phase, as the concurrent jobs' threads share
                # the session's settings (set per job, one job's value was seen by another, whose
                # writer then fell back to sorting mid-task and failed on a file it had made)
                jobs = max(1, cfg.concurrent_jobs)
                open_per_task = _open_writers_per_task(spark, jobs, tuning.heap_mb_per_open_writer)
                phases = []
                for kind, settings in ((few_rows, _INTERPRETED), (many_rows, _COMPILED)):
                    open_files = [g for g in kind if len(groups[g]) < open_per_task]
                    sorted_rows = [g for g in kind if len(groups[g]) >= open_per_task]
                    for phase in (open_files, sorted_rows):
                        if phase:
                            widest = max(len(groups[g]) for g in phase)
                            phases.append((phase, {**settings, _CONCURRENT_WRITERS: _partitioned_writers(
                                widest, open_per_task)}))
                for phase, settings in phases:
                    with _settings(spark, {**case, **settings}):
                        converted += list(_map_concurrently(convert, phase, jobs, spark.sparkContext.cancelAllJobs))
                for group, bad in converted:
                    if bad:
                        bad_dirs.append(bad)
                    if len(group) > 1:
                        for k in group:
                            v = versions[k]
                            group_dirs[k] = version_dir(v.table_id.database, v.table_id.schema, v.table_id.name, v.version)
            finally:
                gc.unfreeze()
            bad_counts: dict[tuple[int, str], int] = defaultdict(int)
            if bad_dirs:
                for r in _read_own(spark, fs, *bad_dirs).groupBy("_part", "op").count().collect():
                    bad_counts[(r["_part"], r["op"])] += r["count"]
            for k in todo:
                v = versions[k]
                for o in ROW_OPS:
                    n = staged_counts.get((k, o), 0) - bad_counts.get((k, o), 0)
                    if n:
                        result.counts[(v.table_id.database or "", vs.label(v, db=False), v.version, o)] = n
                        result.rows += n
                result.versions_written.append((v.table_id.database, vs.label(v, db=False), v.version))
            if bad_dirs:
                converted_bad = _read_own(spark, fs, *bad_dirs)
                if cfg.strict:
                    first = converted_bad.orderBy("seq").limit(1).collect()[0]
                    raise PipelineError(first.reason, first.seq)
                # the events' raw text, read back from the change log for these events only
                lines = past_checkpoint(readlog.read_events(spark, inputs, after_seq=last)).select(
                    "seq", "position", "op", F.col("_line").alias("event"))
                if replay_lines:
                    lines = lines.unionByName(local_frame(spark, replay_lines, "_line STRING, _replay INT").select(
                        F.from_json("_line", EVENT_SCHEMA_DDL).alias("e"), F.col("_line").alias("event")).select(
                        "e.seq", "e.position", "e.op", "event"))
                quarantined.append(converted_bad.join(lines, ["seq", "position", "op"], "left").select(
                    "seq", "position", "op", "database", "schema", "table", "reason", "event"))

            # -- quarantine ------------------------------------------------------------------------
            if quarantined:
                bad = union(quarantined).persist()
                try:
                    for r in bad.groupBy("reason").count().collect():
                        short = short_reason(r.reason)
                        result.quarantine_reasons[short] = result.quarantine_reasons.get(short, 0) + r["count"]
                        result.quarantined += r["count"]
                    # every field in every record, null ones too (Spark's JSON writer drops them by default)
                    (bad.orderBy(F.col("seq").asc_nulls_first()).coalesce(1).write.mode("overwrite")
                     .option("ignoreNullFields", "false").json(fs.str(f"{staging}/_quarantine")))
                finally:
                    bad.unpersist()
            deletes: list[str] = []
            if replay_keys:
                kept = [r for r in old_quarantine if _record_key(r) not in replay_keys]
                result.replayed = len(old_quarantine) - len(kept)
                fs.write_text(f"{staging}/_quarantine/{run_id}-part-kept.json", "".join(
                    json.dumps({k: r.get(k) for k in QUARANTINE_FIELDS}, ensure_ascii=False) + "\n" for r in kept))
                deletes = sorted({r["_path"] for r in old_quarantine})

        # -- schemas ---------------------------------------------------------------------------
        schemas = _schemas_to_write(fs, versions, last)
        say(f"writing {len(schemas)} schema file(s)")
        _write_schemas(fs, f"{staging}/_schemas", schemas, sopts, name)
        if local_tmp is not None:  # the history's copy goes with the run's files
            fs.copy_from_local(str(hist_path), f"{staging}/_history.sqlite")
    finally:
        gc.collect()  # see ``convert`` above: frees this run's expression trees in the JVM
        restore_settings()
        restore_names()
        if local_tmp is not None:
            shutil.rmtree(local_tmp, ignore_errors=True)

    # -- commit (ddlcore.spark.commit) --------------------------------------------------------------
    say("committing")
    result.seconds = time.perf_counter() - t0
    log_info = {"identity": identity, "dialect": name, "spark_options": sopts,
                "format": "parquet" if sink is None else sink.format}
    commit.commit(ctx, group_dirs=group_dirs, deletes=deletes, new_malformed=new_malformed, marks=marks,
                  log_info=log_info, sink=sink)
    say("committed")
    return result


def _replayable(fs: "OutputFS", versions: list[TableVersion], fold: bool) -> tuple[list[tuple[str, int]], set, list[dict]]:
    """The committed quarantine records of row events whose table had no known schema at their
    seq (blocked, or unknown) and whose *next* version is a definition from the source
    (``snapshot``: a resync, or ``create``) with nothing in between: ``(event line, target
    version index)`` each, their keys, and every committed record (with ``_path``)."""
    records = []
    for name, is_dir in fs.list("_quarantine"):
        if is_dir or not name.endswith(".json"):
            continue
        for text in fs.read_text(f"_quarantine/{name}").splitlines():
            if text.strip():
                r = json.loads(text)
                r["_path"] = f"_quarantine/{name}"
                records.append(r)
    by_table: dict[tuple, list[tuple[int, dict]]] = defaultdict(list)
    for k, v in enumerate(versions):
        by_table[vs.fold_key(v.table_id, fold)].append((k, v))
    for spans in by_table.values():
        spans.sort(key=lambda kv: kv[1].valid_from_seq)
    lines, keys = [], set()
    for r in records:
        if r.get("op") not in ROW_OPS or not r.get("event") or r.get("seq") is None:
            continue
        reason = r.get("reason") or ""
        drift = reason.startswith("capture: drift: ")
        if not (drift or reason.startswith("schema unknown since seq") or reason.startswith("unknown table:")):
            continue
        key = (vs.fold_name(r.get("database"), fold), vs.fold_name(r.get("schema"), fold), vs.fold_name(r.get("table"), fold))
        seq = r["seq"]
        later = [(k, v) for k, v in by_table.get(key, []) if v.valid_from_seq > seq]
        before = [v for _, v in by_table.get(key, []) if v.valid_from_seq < seq]
        if not later:
            continue
        k, nxt = later[0]
        in_force = before[-1] if before else None
        if drift:  # the binlog's metadata contradicted the history: only a resync settles it
            if nxt.kind != "snapshot":
                continue
        elif in_force is not None and not in_force.blocked:
            continue  # a schema was known at its seq (dropped, or in force): not replayable
        if nxt.table is None or nxt.kind not in ("snapshot", "create") or vs.meta_collision(nxt.table):
            continue
        lines.append((r["event"], k))
        keys.add(_record_key(r))
    return lines, keys, records


def _record_key(r: dict) -> tuple:
    return (r.get("seq"), r.get("position"), r.get("op"))


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


#: Spark's setting for writing a partitioned output without sorting each task's rows by
#: partition first (up to this many files open per task)
_CONCURRENT_WRITERS = "spark.sql.maxConcurrentOutputFileWriters"
#: ``Tuning.heap_mb_per_open_writer``: MB of a JVM's heap per Parquet writer its tasks keep open
#: at once.  Each open writer holds its columns' buffers until it closes: one task writing 1,200
#: partitions at once (1,200 tables of one shape, or of 1,200 shapes in the staging pass)
#: exhausted a 1 GB heap with 584 files open; 8 MB each keeps a 1 GB heap to 128 open writers


def _open_writers_per_task(spark, jobs: int, mb_per_writer: int = Tuning.heap_mb_per_open_writer) -> int:
    """How many files one task may keep open (one per partition it writes to) so that the
    writers of all the tasks one JVM runs at once stay within ``mb_per_writer`` MB of
    heap each: the heap (in local mode the driver's, which runs the tasks; else
    ``spark.executor.memory``) over ``jobs`` concurrent jobs times the JVM's task slots (in
    local mode the master's threads; else ``spark.executor.cores``, or all the cluster's
    cores when that is not set: fewer open files than the memory allows, never more).  At
    least 1."""
    sc = spark.sparkContext
    local = sc.master.startswith("local")
    if local:
        heap_mb = int(spark._jvm.java.lang.Runtime.getRuntime().maxMemory()) >> 20
        slots = sc.defaultParallelism
    else:
        heap_mb = int(sc._jsc.sc().executorMemory())
        slots = int(sc.getConf().get("spark.executor.cores", str(sc.defaultParallelism)))
    return max(1, heap_mb // max(1, mb_per_writer) // (max(1, jobs) * max(1, slots)))


def _partitioned_writers(partitions: int, open_per_task: int) -> str:
    """The ``spark.sql.maxConcurrentOutputFileWriters`` setting for partitioned writes of at
    most ``partitions`` partition values each: one more than ``partitions`` when each task may
    keep a file open per partition (fewer than ``open_per_task``, ``_open_writers_per_task``'s
    bound) — its rows are then written as they come — else ``"0"``: Spark sorts each task's
    rows by partition and keeps one file open at a time.  Never a value in between: a task
    that outgrows the setting falls back to sorting mid-task, which fails on a file name it
    has already used (the files are named after the run, ``commit.file_names``)."""
    return str(partitions + 1) if partitions < open_per_task else "0"


#: the bytes of a staged image's values (their UTF-8 text forms; null: 0), a SQL expression over
#: the image's column: staged with each row (``_bytes``), summed per conversion group
_IMAGE_BYTES = "coalesce(octet_length(array_join({0}, '', '')), 0)"
#: Parquet options of the staged rows, read once by their conversion job: no dictionary
#: encoding and no column statistics (the raw texts are mostly distinct: building the
#: dictionaries and min/max of each page was an eighth of a full run's CPU time, 1M events)
_STAGING_PARQUET = {"parquet.enable.dictionary": "false", "parquet.column.statistics.enabled": "false"}
#: Parquet options of the output: no dictionary for the columns whose values are all distinct
#: (Parquet's writer would build each one's dictionary up to its size limit, then fall back to
#: plain encoding and re-encode the values it held)
_OUTPUT_PARQUET = {f"parquet.enable.dictionary#{c}": "false" for c in ("_seq", "_position")}


#: the staged columns a conversion job carries through to its output
_KEEP = ["seq", "position", "op", "database", "schema", "table", "ts", "tx", "row", "_part"]


def _column_refs() -> Callable[[str], Any]:
    """``F.col`` that gives one ``Column`` per name, built on its first use: a conversion job
    names the same columns in each of its projections, and each ``F.col`` costs three py4j
    round trips (the lookups of ``functions`` and ``col``, then the call).  A ``Column`` is an
    unresolved reference, resolved in each projection it is used in, so sharing it changes
    nothing in the plans.  Make one per job (a ``Column`` belongs to its session's JVM)."""
    from pyspark.sql import functions as F

    return functools.lru_cache(maxsize=None)(F.col)


def _converted(rows, conv, *, after: bool = True, before: bool = True,
               col: Callable[[str], Any] | None = None):
    """The staged row events ``rows`` with both images converted by ``conv`` (a
    ``RowConverter``): ``_KEEP``'s columns, then ``_xa``/``_xb`` (the absent columns' names of
    each image, ``array<string>``), ``_a``/``_b`` (each image's values, a struct of positional
    fields ``_1`` … in ``conv.canonical_order()``: field ``_j`` is column ``order[j - 1]``),
    ``_bad`` (a value of either image failed).  ``after``/``before``: as for
    ``_write_version``; ``col``: ``_column_refs()`` to share with the caller's expressions.

    The plan's shape is part of the speed: every projection but the two of the values is
    fused into whole-stage code (no higher-order function; see
    ``convert._interpreted_projection``), tested by tests/pipeline/test_pipeline_groups.py."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructField, StructType

    # each conversion is built once over a column named ``_raw`` and applied to each image in
    # turn (building it costs thousands of py4j calls; Spark resolves ``_raw`` in each
    # projection, so the plan is the same as with two copies)
    # each raw value is projected as a column of its own first (``raw_items``), so that the
    # rules refer to it by name: plans a good deal smaller than with the array access inline
    # in the converter's canonical order: tables whose columns have the same rules in another
    # order share the value projections' generated code (``RowConverter.canonical_order``)
    col = col or _column_refs()
    order = conv.canonical_order()
    names = [f"_x{j}" for j in range(len(order))]
    raw_items = conv.raw_items("_raw", absent_as_null=True)
    items = [raw_items[c].alias(name) for c, name in zip(order, names)]
    values = conv.value_struct("_raw", names, order)
    failed = conv.failed("_raw", "_v", names, order)
    keep = [col(n) for n in _KEEP]
    refs = [col(n) for n in names]
    none = F.lit(None).cast(StructType([StructField(f"_{j}", conv.struct_type.fields[c].dataType)
                                        for j, c in enumerate(order, start=1)]))
    no_names = F.lit(None).cast("array<string>")
    if after:
        conv_df = (rows.select(*keep, col("before"), conv.absent("after").alias("_xa"),
                               col("after").alias("_raw"))
                   .select(*keep, *map(col, ("before", "_xa", "_raw")), *items)
                   .select(*keep, *map(col, ("before", "_xa", "_raw")), *refs, values.alias("_v"))
                   .select(*keep, col("before"), col("_xa"), col("_v").alias("_a"),
                           (col("op").isin(*AFTER_OPS) & failed).alias("_fa")))
    else:
        conv_df = rows.select(*keep, col("before"), no_names.alias("_xa"), none.alias("_a"),
                              F.lit(False).alias("_fa"))
    if before:
        conv_df = (conv_df.select(*keep, *map(col, ("_xa", "_a", "_fa")), conv.absent("before").alias("_xb"),
                                  col("before").alias("_raw"))
                   .select(*keep, *map(col, ("_xa", "_a", "_fa", "_xb", "_raw")), *items)
                   .select(*keep, *map(col, ("_xa", "_a", "_fa", "_xb", "_raw")), *refs, values.alias("_v"))
                   .select(*keep, *map(col, ("_xa", "_a", "_xb")), col("_v").alias("_b"),
                           (col("_fa") | (col("op").isin(*BEFORE_OPS) & failed)).alias("_bad")))
    else:
        conv_df = conv_df.select(*keep, col("_xa"), col("_a"), no_names.alias("_xb"), none.alias("_b"),
                                 col("_fa").alias("_bad"))
    return conv_df


def _write_version(rows, table, sopts, dialect, target: str, bad_dir: str, *, after: bool = True,
                   before: bool = True, partition_by: str | None = None, partitions: int = 1) -> bool:
    """Convert and write the staged row events of one table version (``rows``, with their
    version in ``_part``): its good rows as Parquet into ``target`` (one Spark job, counting
    the bad rows as it goes), and, only if some row cannot be converted, those rows with
    ``_part`` and the reasons as Parquet into ``bad_dir`` (a second job).  Returns whether any
    row was bad.  ``partition_by="_part"``: ``rows`` hold several versions of the same
    columns (one conversion for all), written to ``target/_part=<version>/``; ``partitions``:
    how many versions they are: the session's ``spark.sql.maxConcurrentOutputFileWriters``
    must exceed it (each task keeps one file open per version) or be 0 (each task's rows are
    sorted by version); the caller sets it once for all concurrent jobs
    (``_partitioned_writers``); raises ``ValueError`` for a value in between.
    Only the images an event's op carries count: ``after`` for c, r, u; ``before`` for u, d
    (an insert's stray ``before`` is neither converted into its row nor a reason to quarantine
    it).

    The first job's plan holds the values and ``RowConverter.failed`` only; the error column
    (the reasons: as large again as the values) is built by the second job alone.
    ``after`` / ``before``: whether any row carries that image (``False``: the plan leaves
    its conversion out — an insert-only version plans one image, not two).  Absent values
    (``{"$absent": true}``) are read as null and listed in ``_absent`` / ``_before_absent``."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    from . import RowConverter
    from .convert import ERRORS_TYPE

    conv = RowConverter(table, dialect, options=sopts)
    col = _column_refs()
    conv_df = _converted(rows, conv, after=after, before=before, col=col)
    keep = _KEEP
    is_bad = col("_bad")
    # counted as the rows flow through the write (Spark does not push filters below ``observe``)
    tally = Observation()
    observed = conv_df.observe(tally, F.count(F.when(is_bad, 1)).alias("_bad"))
    good = observed.where(~is_bad)
    # the images' fields are positional (``_1`` …): names and each field's metadata (the
    # column's source facts) are attached here
    position = {c: j for j, c in enumerate(conv.canonical_order(), start=1)}  # as ``_converted`` orders them
    fields = [(f"_{position[c]}", f.name, f.metadata) for c, f in enumerate(conv.struct_type.fields)]
    is_delete = col("op") == "d"
    row_image = [F.when(is_delete, col(f"_b.{p}")).otherwise(col(f"_a.{p}"))
                 .alias(n, metadata=md) for p, n, md in fields]
    has_before = col("op").isin("u", "d")
    before_struct = F.when(has_before, F.struct(*[col(f"_b.{p}").alias(n, metadata=md) for p, n, md in fields]))
    meta = [col("op"), col("seq"), col("position"), col("ts"), col("tx"), col("row"),
            F.when(is_delete, col("_xb")).otherwise(col("_xa")), before_struct,
            F.when(has_before, col("_xb"))]
    out_df = good.select(*row_image, *[c.alias(n, metadata=META_METADATA[n]) for c, n in zip(meta, META_COLUMNS)],
                         *([col(partition_by)] if partition_by else []))
    writer = out_df.write.mode("overwrite").options(**_OUTPUT_PARQUET)
    if partition_by:  # one open file per version and task, or each task's rows sorted by version
        writers = int(rows.sparkSession.conf.get(_CONCURRENT_WRITERS, "0") or 0)
        if 0 < writers <= partitions:
            raise ValueError(f"{_CONCURRENT_WRITERS} is {writers}: a job writing {partitions} versions needs more "
                             f"than {partitions}, or 0 (sorted; set once for all concurrent jobs: see _run)")
        writer.partitionBy(partition_by).parquet(str(target))
    else:
        writer.parquet(str(target))
    metrics = tally.get
    has_bad = bool(metrics.get("_bad"))
    if has_bad:
        image = F.struct(*conv.columns("_raw", errors="_errors"))
        with_errors = (rows.select(*keep, "before", conv.present("after").alias("_raw"))
                       .select(*keep, "before", image.alias("_a"))
                       .select(*keep, "_a", conv.present("before").alias("_raw"))
                       .select(*keep, "_a", image.alias("_b")))
        none = F.array().cast(ERRORS_TYPE)
        errs = F.concat(F.when(F.col("op").isin(*AFTER_OPS), F.coalesce(F.col("_a._errors"), none)).otherwise(none),
                        F.when(F.col("op").isin(*BEFORE_OPS), F.coalesce(F.col("_b._errors"), none)).otherwise(none))
        conv_bad = with_errors.withColumn("_errs", errs).where(F.size("_errs") > 0).select(
            "seq", "position", "op", "database", "schema", "table", "_part",
            F.concat(F.lit(CANNOT_CONVERT), F.concat_ws("; ", F.transform(
                "_errs", lambda e: F.concat(F.coalesce(e["column"], F.lit("row")), F.lit(" ("),
                                            F.coalesce(e["value"], F.lit("null")), F.lit("): "),
                                            F.coalesce(e["reason"], F.lit("")))))).alias("reason"))
        conv_bad.write.mode("overwrite").parquet(str(bad_dir))
    return has_bad


def _schemas_to_write(fs: "OutputFS", versions: list[TableVersion], last: int | None) -> list[TableVersion]:
    """The versions (of ``vs.version_list``) whose schema file this run writes: on a first run
    (``last`` ``None``) every version with a table model; then those that began after the
    checkpoint ``last`` (new), those that ended after it (their ``valid_to_seq`` changed),
    and any whose file is missing from ``OUT/_schemas`` — a committed file of a version that
    began and ended by ``last`` holds what this run would write (``_run``: the history
    records events after the checkpoint only; the type-mapping options and the dialect are
    the output's, ``check_run_options``)."""
    todo = [v for v in versions if v.table is not None]
    if last is None:
        return todo
    have = set(fs.names("_schemas"))
    return [v for v in todo if v.valid_from_seq > last or (v.valid_to_seq is not None and v.valid_to_seq > last)
            or schema_file(v.table_id.database, v.table_id.schema, v.table_id.name, v.version) not in have]


def _write_schemas(fs: "OutputFS", rel: str, schemas: list[TableVersion], sopts: dict[str, Any],
                   dialect: str) -> None:
    """The schema file of each version of ``schemas`` (``vs.version_list`` entries) into the
    directory ``rel`` of the output, which does not exist yet: written with Python into a local
    temporary directory, then moved in at once (``OutputFS.put_tree``: one rename on a local
    output) — not one Hadoop ``create`` per file through the gateway (2,000 schema files took
    4.7 s that way; docs/pipeline.md, Performance).  The ``struct_type`` is ``struct_type``'s,
    the one ``RowConverter`` builds (without the converter's functions), built once per model
    shape (``vs.shape``: versions of sharded tables share it, as they share a conversion plan)."""
    if not schemas:
        return
    from .schema import struct_type

    local = tempfile.mkdtemp(prefix="ddlcore-schemas-")
    try:
        tree = Path(local, "_schemas")
        tree.mkdir()  # the umask's mode, not mkdtemp's 0700
        structs: dict[str, Any] = {}
        for v in schemas:
            model = v.table.to_json()
            shape = vs.shape(model)
            if shape not in structs:
                structs[shape] = struct_type(v.table, dialect, options=sopts).jsonValue()
            (tree / schema_file(v.table_id.database, v.table_id.schema, v.table_id.name, v.version)).write_text(json.dumps({
                "database": v.table_id.database, "schema": v.table_id.schema, "table": v.table_id.name,
                "schema_version": v.version, "valid_from_seq": v.valid_from_seq, "valid_to_seq": v.valid_to_seq,
                "directory": version_dir(v.table_id.database, v.table_id.schema, v.table_id.name, v.version),
                "struct_type": structs[shape], "model": model}, indent=2), encoding="utf-8")
        fs.mkdirs(rel.rpartition("/")[0])
        fs.put_tree(str(tree), rel)
    finally:
        shutil.rmtree(local, ignore_errors=True)


