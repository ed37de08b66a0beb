"""The main job: a change log (DDL + row events) → typed Parquet tables, with PySpark.

Owns: the run's options checked (``check_run_options``), the Spark session, and the run's
order of stages (``run_pipeline``), each in its own module sharing one ``RunContext``: reading
the change log (``ddlcore.spark.readlog``), building the schema history from its DDL and source
events on the driver (``ddlcore.spark.historypass``), tagging every row event with the table
version in force at its ``seq`` and staging it by conversion group (``ddlcore.spark.stage``),
converting each group and writing each table version (``ddlcore.spark.convertpass``) — with
``RowConverter``'s Spark expressions in a Spark job (the JVM: no Python per row), or on the
driver in Python, with the rules' Arrow faces and ``RowConverter``'s Python face
(``ddlcore.spark.driver``: every group in local mode writing to a local output, those of few
rows elsewhere, and a small increment whole; chosen by the run's
``ddlcore.spark.strategy.ExecutionStrategy``) —
the quarantine (``ddlcore.spark.quarantinepass``), the schema files
(``ddlcore.spark.schemafiles``), and committing a run atomically with its summary
(``ddlcore.spark.commit``).  Its options are one ``ddlcore.runconfig.RunConfig``.  Must not
know: any dialect (it is a name passed through or read from the log's source event).

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
import gc
import json
import os
import shutil
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..errors import PipelineError
from ..runconfig import DEFAULT_CONCURRENT_JOBS, RunConfig, Tuning
from . import commit, convertpass, historypass, quarantinepass, readlog, schemafiles, sessionconf, stage
from . import driver as driver_side
from .commit import OutputState
from .context import RunContext
from .quarantine import short_reason
from .readlog import EVENT_SCHEMA_DDL
from .versions import META_COLUMNS, META_METADATA

if TYPE_CHECKING:  # pragma: no cover
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
    No dialect (``dialect`` not given, no source event naming one, none recorded by the output:
    never guessed), a dialect that contradicts the log's source event, ``-s`` options other than the output's,
    and a format other than the output's are errors (``PipelineError``).
    The previous run's commit is rolled forward before the options and the log's identity are
    checked against those the output was written with.

    Raises ``FileNotFoundError`` for a missing change log and ``PipelineError`` for a log that
    is not the continuation of the output's, run options that differ from the output's, a
    change log that cannot be read (a truncated gzip file: named), and in strict mode;
    ``OutputLocked`` (a ``PipelineError``) when another run holds the output."""
    from pyspark.errors import PySparkException
    from py4j.protocol import Py4JJavaError

    from ..sinks import make_sink
    from .fs import is_uri
    from .outlock import OutputLock

    cfg = RunConfig.of(config, **options)
    say = progress or (lambda msg: None)
    t0 = time.perf_counter()
    out = str(out)
    remote_log = is_uri(changelog)
    inputs = None if remote_log else _local_inputs(changelog, cfg)
    # the values, before Spark starts; against the output's, once its last commit is rolled forward
    check_run_options(out, cfg.dialect, cfg.spark_options, log_info=None)
    try:
        make_sink(cfg.output_format, out, catalog=cfg.catalog)  # a bad format or a missing library: before Spark
    except ValueError as exc:
        raise PipelineError(str(exc)) from None
    spark = spark or spark_session(cfg.master, conf=cfg.spark_conf)
    if remote_log:
        try:
            inputs = readlog.only_files(readlog.remote_inputs(spark, str(changelog)), cfg.batch_files)
        except Py4JJavaError as exc:
            raise PipelineError(f"change log {changelog}: {_java_error(exc)}") from None
    fs = _output_fs(spark, out)
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
        sopts = _recovered_options(out, state, cfg)
        bound = getattr(inputs, "bound", None)  # a local capture directory (not a remote URI)
        if bound is not None and bound.seq == 0:
            # a capture whose first checkpoint is not written yet, or whose snapshot is in
            # progress: nothing of its log is final — nothing read, nothing committed (not even
            # the dialect: the log's source event is not final either)
            say(f"{bound.changelog}: the capture has made nothing final yet (phase {bound.phase}): nothing to read")
            last = state.last_seq()
            return RunResult(previous_seq=last, last_seq=last, seconds=time.perf_counter() - t0)
        sink = make_sink(cfg.output_format, out, catalog=cfg.catalog, dialect=cfg.dialect, spark_options=sopts,
                         tuning=cfg.tuning)
        with _parquet_timestamps(spark):  # also in a session the caller made
            return _run(spark, inputs, out, state, cfg, sopts=sopts, say=say, t0=t0, sink=sink)
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


def _local_inputs(changelog: str | os.PathLike, cfg: RunConfig):
    """The ``readlog.Inputs`` of a change log on the local filesystem (a file or a directory,
    e.g. a capture's), only ``cfg.batch_files`` of them when set, bounded by ``cfg.batch_end``
    (``(seq, bytes)``: a ``--follow`` batch's end) when below the capture's bound; the seq rule
    checked over their files (``seqcheck.check_files``).  Raises ``FileNotFoundError`` for a
    missing change log and ``PipelineError`` for overlapping files."""
    from .seqcheck import check_files

    changelog = Path(readlog.plain_path(str(changelog)))
    if not changelog.exists():
        raise FileNotFoundError(f"change log not found: {changelog}")
    inputs = readlog.only_files(readlog.inputs_of(changelog), cfg.batch_files)
    bound = getattr(inputs, "bound", None)
    if bound is not None and cfg.batch_end is not None and cfg.batch_end[0] < bound.seq:
        inputs.bound = bound = replace(bound, seq=cfg.batch_end[0],
                                       durable_bytes=min(cfg.batch_end[1], bound.durable_bytes))
    check_files(inputs[0] + inputs[1], capture_log=None if bound is None else bound.changelog)  # the seq rule
    return inputs


def _output_fs(spark, out: str) -> "OutputFS":
    """The output's ``OutputFS``; ``PipelineError`` for a scheme without a filesystem, an
    unreachable name node, ... (the Java error's first line)."""
    from py4j.protocol import Py4JJavaError

    from .fs import OutputFS

    try:
        return OutputFS(spark, out)
    except Py4JJavaError as exc:
        raise PipelineError(f"output {out}: {_java_error(exc)}") from None


def _recovered_options(out: str, state: OutputState, cfg: RunConfig) -> dict[str, Any]:
    """The run's type-mapping options checked against those the output (its last commit rolled
    forward) was written with (``check_run_options``), and its format and catalog against the
    output's; returns the options.  Raises ``PipelineError``."""
    info = state.log_info()
    sopts = check_run_options(out, cfg.dialect, cfg.spark_options, log_info=info)
    written = (info or {}).get("format", cfg.output_format if info is None else "parquet")
    if written != cfg.output_format:  # the physical column names differ by format (ddlcore.sinks)
        raise PipelineError(f"--format {cfg.output_format}: {out} was written with --format {written}")
    if cfg.output_format == "iceberg" and cfg.catalog is None and state.fs.local_root is None:
        raise PipelineError(f"--format iceberg: the embedded catalog needs a local --out ({out}); "
                            f"name a configured catalog with --catalog NAME")
    return sopts


@contextlib.contextmanager
def _parquet_timestamps(spark):
    """``PARQUET_TIMESTAMPS`` set in ``spark``'s session for the block, its value before put back."""
    saved = spark.conf.get(PARQUET_TIMESTAMPS[0], None)
    spark.conf.set(*PARQUET_TIMESTAMPS)
    try:
        yield
    finally:
        if saved is None:
            spark.conf.unset(PARQUET_TIMESTAMPS[0])
        else:
            spark.conf.set(PARQUET_TIMESTAMPS[0], saved)


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
    """One run's stages in order, each in its own module sharing one ``RunContext``: read the
    log (``readlog``), record the history (``historypass``), then on the driver for a small
    increment (``driver.DriverIncrement``) or with Spark: tag and stage (``stage``), convert
    and write (``convertpass``), quarantine (``quarantinepass``); the schema files
    (``schemafiles``) and the commit (``commit``)."""
    last = state.last_seq()
    result = RunResult(previous_seq=last)
    run_id = time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]
    ctx = RunContext(spark, state, cfg, run_id, last, result, say)
    local_tmp = None
    schema_files = None  # the schema files being written (``schemafiles.start_writing``)
    restore_settings: Callable[[], None] = lambda: None
    restore_names = sessionconf.session_settings(spark, commit.file_names(run_id))
    try:
        inputs, marks, increment, restore_settings = _read_log(ctx, inputs)
        hp = historypass.record_history(ctx, inputs, increment, out, sink)
        local_tmp = hp.local_copy
        if increment is not None:
            # a small increment: tagged, converted and written on the driver, no Spark job
            # (ddlcore.spark.driver; docs/pipeline.md, "Incremental runs")
            group_dirs, new_malformed, deletes = increment.run(
                result, versions=hp.versions, fold=hp.fold, history_records=hp.records, state=state,
                staging=ctx.staging, run_id=run_id, sopts=sopts, dialect=hp.dialect, strict=cfg.strict, say=say)
        else:
            group_dirs, new_malformed, deletes = _spark_stages(ctx, inputs, hp, sopts)
        schemas = schemafiles.schemas_to_write(state.fs, hp.versions, last)
        say(f"writing {len(schemas)} schema file(s)")
        schema_files = schemafiles.start_writing(state.fs, f"{ctx.staging}/_schemas", schemas, sopts, hp.dialect)
        if local_tmp is not None:  # the history's copy goes with the run's files
            state.fs.copy_from_local(str(hp.path), f"{ctx.staging}/_history.sqlite")
    except BaseException:
        schemafiles.settle(schema_files)  # (nothing writes into the staging directory once it is left)
        raise
    finally:
        gc.collect()  # see ``convertpass._convert_group``: frees this run's expression trees in the JVM
        restore_settings()
        restore_names()
        if local_tmp is not None:
            shutil.rmtree(local_tmp, ignore_errors=True)

    # -- commit (ddlcore.spark.commit) --------------------------------------------------------------
    say("committing")
    result.seconds = time.perf_counter() - t0
    log_info = {"identity": hp.identity, "dialect": hp.dialect, "spark_options": sopts,
                "format": "parquet" if sink is None else sink.format}
    try:  # the sink stages its tables while the schema files are written
        commit.commit(ctx, group_dirs=group_dirs, deletes=deletes, new_malformed=new_malformed, marks=marks,
                      log_info=log_info, sink=sink, before_moves=schema_files.result)
    finally:
        schemafiles.settle(schema_files)
    say("committed")
    return result


def _read_log(ctx: RunContext, inputs):
    """Only the bytes of the change-log files past what the committed runs read
    (``readlog.incremental_inputs``), and, for a small increment, its lines read on the driver
    (``None``: the run reads them with Spark).  Returns ``(inputs, marks, increment,
    restore)``: ``restore`` puts back the session settings of a small increment read with Spark
    (``sessionconf.INTERPRETED``)."""
    spark, fs, state, last, say = ctx.spark, ctx.fs, ctx.state, ctx.last, ctx.say
    restore: Callable[[], None] = lambda: None
    given = len(inputs[0])
    inputs, marks = readlog.incremental_inputs(spark, fs, inputs, state.marks() if last is not None else {},
                                               ctx.run_id)
    if getattr(inputs, "tails", ()) or len(inputs[0]) < given:
        say(f"reading {len(inputs[0])} of {given} JSON Lines change-log file(s), "
            f"{len(inputs.tails)} from where the last run ended ({inputs.tail_bytes:,} bytes)")
    increment = driver_side.DriverIncrement.read(spark, inputs, fs, last=last, strategy=ctx.strategy)
    if increment is None and ctx.strategy.interpreted_increment(inputs):
        restore = sessionconf.session_settings(spark, sessionconf.INTERPRETED)
        say("a small increment: expressions are interpreted (no code generation)")
    return inputs, marks, increment, restore


def _spark_stages(ctx: RunContext, inputs, hp, sopts: dict[str, Any]) -> tuple[dict[int, str], list[str], list[str]]:
    """The Spark path after the history (``hp``: ``historypass.record_history``'s result):
    replayed quarantine records, tag and stage, convert and write, quarantine.  Returns
    ``(group_dirs, new_malformed, deletes)`` for ``commit.commit``."""
    replay_lines, replay_keys, old_quarantine = [], set(), []
    if ctx.config.replay_quarantine:
        replay_lines, replay_keys, old_quarantine = quarantinepass.replayable(ctx.fs, hp.versions, hp.fold)
        ctx.say(f"replaying {len(replay_lines)} quarantined event(s)")
    staged = stage.stage_rows(ctx, inputs, hp.versions, hp.fold, replay_lines)
    quarantined, new_malformed = quarantinepass.staged_quarantine(ctx, inputs, staged.parts, hp.records)
    counted = convertpass.staged_counts(ctx, staged.parts)
    todo = convertpass.versions_with_rows(counted.counts, hp.versions)
    group_dirs, bad_dirs = convertpass.convert_versions(ctx, staged, counted, todo, hp.versions, sopts, hp.dialect)
    convertpass.count_rows(ctx, todo, hp.versions, counted.counts, bad_dirs)
    if bad_dirs:
        quarantined.append(quarantinepass.converted_quarantine(ctx, inputs, bad_dirs, replay_lines))
    quarantinepass.write_quarantine(ctx, quarantined)
    deletes = quarantinepass.keep_unreplayed(ctx, replay_keys, old_quarantine)
    return group_dirs, new_malformed, deletes
