"""The convert-and-write stage of ``ddlcore run``: each table version's staged rows, converted to
its typed columns and written as Parquet into the run's staging.

Owns: the order and grouping of the conversion jobs (``convert_versions``): the conversion
groups the driver converts (as the run's ``ddlcore.spark.strategy.ExecutionStrategy`` chooses;
``ddlcore.spark.driver.convert_staged``), then the others as Spark
jobs, interpreted or compiled (``sessionconf.INTERPRETED``, ``COMPILED``) and concurrently
(``sessionconf.map_concurrently``); one Spark job's plan (``converted``, ``write_version``);
the run's row counts (``count_rows``).  Must not know: how rows are tagged, or committed.
"""

from __future__ import annotations

import functools
import gc
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from ..changelog import AFTER_OPS, BEFORE_OPS, ROW_OPS
from . import commit, sessionconf
from . import driver as driver_side
from . import versions as vs
from .layout import version_dir
from .quarantine import CANNOT_CONVERT
from .strategy import Path
from .versions import META_COLUMNS, META_METADATA

if TYPE_CHECKING:  # pragma: no cover
    from ..history import TableVersion
    from .context import RunContext
    from .stage import Staged

__all__ = ["OUTPUT_PARQUET", "KEEP", "column_refs", "converted", "write_version", "StagedCounts",
           "staged_counts", "versions_with_rows", "convert_versions",
           "count_rows"]

#: Parquet options of the output: no dictionary for the columns whose values are all distinct
#: (Parquet's writer would build each one's dictionary up to its size limit, then fall back to
#: plain encoding and re-encode the values it held)
OUTPUT_PARQUET = {f"parquet.enable.dictionary#{c}": "false" for c in ("_seq", "_position")}


#: the staged columns a conversion job carries through to its output
KEEP = ["seq", "position", "op", "database", "schema", "table", "ts", "tx", "row", "_part"]


def column_refs() -> Callable[[str], Any]:
    """``F.col`` that gives one ``Column`` per name, built on its first use: a conversion job
    names the same columns in each of its projections, and each ``F.col`` costs three py4j
    round trips (the lookups of ``functions`` and ``col``, then the call).  A ``Column`` is an
    unresolved reference, resolved in each projection it is used in, so sharing it changes
    nothing in the plans.  Make one per job (a ``Column`` belongs to its session's JVM)."""
    from pyspark.sql import functions as F

    return functools.lru_cache(maxsize=None)(F.col)


def converted(rows, conv, *, after: bool = True, before: bool = True,
               col: Callable[[str], Any] | None = None):
    """The staged row events ``rows`` with both images converted by ``conv`` (a
    ``RowConverter``): ``KEEP``'s columns, then ``_xa``/``_xb`` (the absent columns' names of
    each image, ``array<string>``), ``_a``/``_b`` (each image's values, a struct of positional
    fields ``_1`` … in ``conv.canonical_order()``: field ``_j`` is column ``order[j - 1]``),
    ``_bad`` (a value of either image failed).  ``after``/``before``: as for
    ``write_version``; ``col``: ``column_refs()`` to share with the caller's expressions.

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
    col = col or column_refs()
    order = conv.canonical_order()
    names = [f"_x{j}" for j in range(len(order))]
    raw_items = conv.raw_items("_raw", absent_as_null=True)
    items = [raw_items[c].alias(name) for c, name in zip(order, names)]
    values = conv.value_struct("_raw", names, order)
    failed = conv.failed("_raw", "_v", names, order)
    keep = [col(n) for n in KEEP]
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


def write_version(rows, table, sopts, dialect, target: str, bad_dir: str, *, after: bool = True,
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
    (``sessionconf.partitioned_writers``); raises ``ValueError`` for a value in between.
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
    col = column_refs()
    conv_df = converted(rows, conv, after=after, before=before, col=col)
    keep = KEEP
    is_bad = col("_bad")
    # counted as the rows flow through the write (Spark does not push filters below ``observe``)
    tally = Observation()
    observed = conv_df.observe(tally, F.count(F.when(is_bad, 1)).alias("_bad"))
    good = observed.where(~is_bad)
    # the images' fields are positional (``_1`` …): names and each field's metadata (the
    # column's source facts) are attached here
    position = {c: j for j, c in enumerate(conv.canonical_order(), start=1)}  # as ``converted`` orders them
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
    writer = out_df.write.mode("overwrite").options(**OUTPUT_PARQUET)
    if partition_by:  # one open file per version and task, or each task's rows sorted by version
        writers = int(rows.sparkSession.conf.get(sessionconf.CONCURRENT_WRITERS, "0") or 0)
        if 0 < writers <= partitions:
            raise ValueError(f"{sessionconf.CONCURRENT_WRITERS} is {writers}: a job writing {partitions} versions "
                             f"needs more than {partitions}, or 0 (sorted; set once for all concurrent jobs: "
                             f"see convert_versions)")
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


@dataclass
class StagedCounts:
    """The staged rows of the table versions (``rows``: a DataFrame of all the staged
    directories, ``None`` when no version has rows), their number per ``(version index, op)``
    (``counts``) and the bytes of their values per version (``bytes``, ``stage.IMAGE_BYTES``)."""

    rows: Any
    counts: dict[tuple[int, str], int]
    bytes: dict[int, int]


def staged_counts(ctx: "RunContext", parts: list[int]) -> StagedCounts:
    """Rows per version and op, and the bytes of their values per version, from the staged rows
    (one scan of the ``op`` and ``_bytes`` columns); ``parts``: ``stage.Staged.parts``."""
    from pyspark.sql import functions as F

    counts: dict[tuple[int, str], int] = {}
    sizes: dict[int, int] = defaultdict(int)
    fs = ctx.fs
    rows = sessionconf.read_own(ctx.spark, fs, fs.str(ctx.rows_dir)) if any(g >= 0 for g in parts) else None
    if rows is not None:
        for r in rows.where(F.col("_grp") >= 0).groupBy("_part", "op").agg(
                F.count(F.lit(1)).alias("count"), F.sum("_bytes").alias("bytes")).collect():
            counts[(r["_part"], r["op"])] = r["count"]
            sizes[r["_part"]] += r["bytes"] or 0
    return StagedCounts(rows, counts, sizes)


@dataclass(frozen=True)
class _GroupJobs:
    """What each conversion group's Spark job reads (``_convert_group``)."""

    ctx: "RunContext"
    versions: list
    groups: list[list[int]]
    group_of: dict[int, int]
    counts: dict[tuple[int, str], int]
    sopts: dict[str, Any]
    dialect: str
    total: int


def _convert_group(jobs: _GroupJobs, i: int, g: int) -> tuple[list[int], str | None]:
    """Convert and write conversion group ``g`` (the ``i``-th of ``jobs.total``) with one Spark
    job; returns its versions and the directory of its rows that cannot be converted (``None``:
    none)."""
    ctx = jobs.ctx
    fs = ctx.fs
    group = jobs.groups[g]
    v = jobs.versions[group[0]]
    ctx.say(f"converting {vs.label(v)} version {v.version}"
            + (f" and {len(group) - 1} more table version(s) of the same columns" if len(group) > 1 else "")
            + f" ({i + 1}/{jobs.total})")
    bad_dir = fs.str(f"{ctx.bad_dir}/{group[0]}")
    # the images the rows carry, by their ops: after (c, r, u), before (d, u); a
    # version whose rows carry one image only is planned with that image alone
    members = set(group)
    ops = {o for (k, o), n in jobs.counts.items() if n and k in members}
    rows = ctx.spark.read.parquet(fs.str(f"{ctx.rows_dir}/_grp={jobs.group_of[group[0]]}"))
    if len(group) == 1:
        tid = v.table_id
        target = fs.str(f"{ctx.staging}/{version_dir(tid.database, tid.schema, tid.name, v.version)}")
        partition_by = None
    else:
        target, partition_by = fs.str(f"{ctx.staging}/{commit.GROUPS}/{group[0]}"), "_part"
    has_bad = write_version(rows, v.table, jobs.sopts, jobs.dialect, target, bad_dir,
                            after=bool(ops & {"c", "r", "u"}), before=bool(ops & {"d", "u"}),
                            partition_by=partition_by, partitions=len(group))
    # py4j's JavaObject and JavaMember refer to each other, so the Python objects of a
    # version's expressions are freed only by the cycle collector — and until then they
    # pin the version's (large) expression trees in the driver JVM: a long log would
    # exhaust the driver's heap.  Collect now.
    gc.collect()
    return group, (bad_dir if has_bad else None)


def _phases(ctx: "RunContext", order: list[int], groups: list[list[int]], size: dict[int, int],
            open_per_task: int) -> list[tuple[list[int], dict[str, str]]]:
    """The Spark jobs' phases: the groups of ``order`` with the session settings each phase runs
    with.  Groups of few rows first, with expressions interpreted: generating and compiling a
    conversion plan's code costs more than interpreting it over a few thousand rows.  A
    partitioned write keeps one file open per version and task instead of sorting its rows by
    version, for groups of fewer versions than the heap lets a task keep files open
    (``sessionconf.partitioned_writers``); larger groups sort, in a phase of their own: the
    setting is made once per phase, as the concurrent jobs' threads share the session's
    settings (set per job, one job's value was seen by another, whose writer then fell back
    to sorting mid-task and failed on a file it had made)."""
    max_rows = ctx.config.tuning.interpreted_max_rows
    few_rows = [g for g in order if size[g] <= max_rows]
    many_rows = [g for g in order if size[g] > max_rows]
    phases = []
    for kind, settings in ((few_rows, sessionconf.INTERPRETED), (many_rows, sessionconf.COMPILED)):
        open_files = [g for g in kind if len(groups[g]) < open_per_task]
        sorted_rows = [g for g in kind if len(groups[g]) >= open_per_task]
        for phase in (open_files, sorted_rows):
            if phase:
                widest = max(len(groups[g]) for g in phase)
                phases.append((phase, {**settings, sessionconf.CONCURRENT_WRITERS: sessionconf.partitioned_writers(
                    widest, open_per_task)}))
    return phases


def _on_driver(ctx: "RunContext", counted: StagedCounts, order: list[int], groups: list[list[int]],
               group_of: dict[int, int], size: dict[int, int], versions: list, sopts: dict[str, Any],
               dialect: str, bad_dirs: list[str]) -> list[int]:
    """Convert on the driver the groups of ``order`` that the run's ``ExecutionStrategy`` gives
    it (``group_path``: every one in local mode, those of few rows elsewhere, none of large
    values): no Spark job each (``ddlcore.spark.driver.convert_staged``; docs/pipeline.md,
    step 3).  Appends the directory of their rows that cannot be converted to ``bad_dirs``;
    returns the groups of ``order`` left for Spark jobs."""
    fs, strategy, tuning = ctx.fs, ctx.strategy, ctx.config.tuning
    group_bytes: dict[int, int] = defaultdict(int)
    for k, n in counted.bytes.items():
        group_bytes[group_of[k]] += n
    by_rows = [g for g in order if strategy.on_driver(size[g])]
    if not by_rows:
        return order
    max_rows = strategy.driver_max_rows()  # ``None``: any number
    ctx.say(f"converting {len(by_rows)} conversion group(s)"
            + ("" if max_rows is None else f" of at most {max_rows:,} row(s)") + " on the driver")
    on_driver = {g: groups[g] for g in by_rows if strategy.group_path(size[g], group_bytes[g]) is Path.STAGED}
    if len(on_driver) < len(by_rows):
        ctx.say(f"{len(by_rows) - len(on_driver)} conversion group(s) left to Spark jobs: their values take more "
                f"than {tuning.group_max_bytes:,} bytes"
                + (f" per {tuning.chunk_rows:,} rows" if strategy.local_output else ""))
    driver_bad = f"{ctx.bad_dir}/driver"
    left, has_bad = driver_side.convert_staged(
        counted.rows, on_driver, size, group_bytes, versions, sopts=sopts, dialect=dialect, fs=fs,
        rows_dir=ctx.rows_dir, staging=ctx.staging, run_id=ctx.run_id, bad_dir=driver_bad, tuning=tuning,
        say=ctx.say)
    if has_bad:
        bad_dirs.append(fs.str(driver_bad))
    done = set(on_driver) - set(left)
    return [g for g in order if g not in done]


def versions_with_rows(counts: dict[tuple[int, str], int], versions: list[TableVersion]) -> list[int]:
    """The indexes in ``versions`` of those with staged rows (``counts``: ``StagedCounts.counts``),
    in output order (database, schema, table, version)."""
    return sorted({k for k, _ in counts}, key=lambda k: (
        versions[k].table_id.database or "", versions[k].table_id.schema or "", versions[k].table_id.name,
        versions[k].version))


def convert_versions(ctx: "RunContext", staged: "Staged", counted: StagedCounts, todo: list[int],
                     versions: list[TableVersion], sopts: dict[str, Any], dialect: str
                     ) -> tuple[dict[int, str], list[str]]:
    """Convert and write each table version of ``todo`` (the indexes in ``versions`` of those
    with staged rows, in output order) into the run's staging: the groups the driver takes
    (``_on_driver``), then the others as Spark jobs, ``ctx.config.concurrent_jobs`` at a time.
    Versions of the same conversion and output schema (the same columns and table defaults:
    sharded or copied tables, and versions whose change left the columns alone) are converted
    by one plan and written by one job, partitioned by version.  Returns the output directory
    of each version written in a group (``commit.GROUPS``: moved into place by the commit) and
    the directories of the rows that cannot be converted (Parquet: ``_part``, ``op``,
    ``reason`` ...)."""
    spark, tuning = ctx.spark, ctx.config.tuning
    bad_dirs: list[str] = []
    # column names differing only in case (PostgreSQL): written as they are
    case = ({"spark.sql.caseSensitive": "true"} if any(vs.case_collision(versions[k].table) for k in todo)
            else {})
    with_rows = set(todo)
    group_of = {k: g for g, members in enumerate(staged.groups) for k in members}
    groups = [[k for k in members if k in with_rows] for members in staged.groups]
    rank = {k: i for i, k in enumerate(todo)}
    order = sorted((g for g, members in enumerate(groups) if members), key=lambda g: rank[groups[g][0]])
    group_dirs: dict[int, str] = {}
    # the objects alive now (parsers, the history, Spark's and py4j's modules) are moved out
    # of the collector's reach until the versions are written: each version's
    # ``gc.collect()`` then walks only what was made since (milliseconds instead of a
    # quarter of a second per version on a busy 2-core machine)
    gc.freeze()
    try:
        size: dict[int, int] = defaultdict(int)
        for (k, _), n in counted.counts.items():
            size[group_of[k]] += n
        order = _on_driver(ctx, counted, order, groups, group_of, size, versions, sopts, dialect, bad_dirs)
        jobs = max(1, ctx.config.concurrent_jobs)
        open_per_task = sessionconf.open_writers_per_task(spark, jobs, tuning.heap_mb_per_open_writer)
        convert = functools.partial(_convert_group, _GroupJobs(ctx, versions, groups, group_of, counted.counts,
                                                               sopts, dialect, len(order)))
        converted_groups = []
        for phase, settings in _phases(ctx, order, groups, size, open_per_task):
            with sessionconf.settings(spark, {**case, **settings}):
                converted_groups += list(sessionconf.map_concurrently(convert, phase, jobs,
                                                                      spark.sparkContext.cancelAllJobs))
        for group, bad in converted_groups:
            if bad:
                bad_dirs.append(bad)
            if len(group) > 1:
                for k in group:
                    v = versions[k]
                    group_dirs[k] = version_dir(v.table_id.database, v.table_id.schema, v.table_id.name, v.version)
    finally:
        gc.unfreeze()
    return group_dirs, bad_dirs


def count_rows(ctx: "RunContext", todo: list[int], versions: list[TableVersion],
               counts: dict[tuple[int, str], int], bad_dirs: list[str]) -> None:
    """The rows written per version and op into ``ctx.result`` (``counts``, ``rows``,
    ``versions_written``): the staged ``counts`` less the rows of ``bad_dirs``."""
    result = ctx.result
    bad_counts: dict[tuple[int, str], int] = defaultdict(int)
    if bad_dirs:
        for r in sessionconf.read_own(ctx.spark, ctx.fs, *bad_dirs).groupBy("_part", "op").count().collect():
            bad_counts[(r["_part"], r["op"])] += r["count"]
    for k in todo:
        v = versions[k]
        for o in ROW_OPS:
            n = counts.get((k, o), 0) - bad_counts.get((k, o), 0)
            if n:
                result.counts[(v.table_id.database or "", vs.label(v, db=False), v.version, o)] = n
                result.rows += n
        result.versions_written.append((v.table_id.database, vs.label(v, db=False), v.version))
