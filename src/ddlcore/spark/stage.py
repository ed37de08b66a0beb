"""The tag-and-stage stage of ``ddlcore run`` on Spark: every row event, tagged with the table
version in force at its ``seq``, staged by conversion group.

Owns: reading the change log's events past the checkpoint (``past_checkpoint``) with the
replayed quarantine records, each row joined with the versions in force at its ``seq`` and
tagged (``ddlcore.spark.tagging.tag``, the rule the driver's path evaluates in Python: a
version's index, or a ``PartKind`` with its quarantine reason), the staged Parquet directories
(``RunContext.rows_dir``, ``_grp=<group>``), and the checks on the log's ``seq`` (before the
checkpoint; duplicates: ``ddlcore.spark.seqcheck``).  Must not know: how rows are converted or
written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..changelog import HISTORY_OPS, ROW_OPS
from ..errors import PipelineError
from . import readlog, seqcheck, sessionconf
from . import versions as vs
from .frames import local_frame
from .quarantine import PartKind
from .readlog import EVENT_SCHEMA_DDL
from .tagging import SparkFaces, TagInputs, in_force, tag, version_reason

if TYPE_CHECKING:  # pragma: no cover
    from ..history import TableVersion
    from .context import RunContext

__all__ = ["IMAGE_BYTES", "STAGING_PARQUET", "Staged", "past_checkpoint", "stage_rows"]

#: the bytes of a staged image's values (their UTF-8 text forms; null: 0), a SQL expression over
#: the image's column: staged with each row (``_bytes``), summed per conversion group
IMAGE_BYTES = "coalesce(octet_length(array_join({0}, '', '')), 0)"
#: Parquet options of the staged rows, read once by their conversion job: no dictionary
#: encoding and no column statistics (the raw texts are mostly distinct: building the
#: dictionaries and min/max of each page was an eighth of a full run's CPU time, 1M events)
STAGING_PARQUET = {"parquet.enable.dictionary": "false", "parquet.column.statistics.enabled": "false"}

@dataclass(frozen=True)
class Staged:
    """What ``stage_rows`` staged: ``parts``, the ``_grp`` values of the staged directories (a
    conversion group's index, ``>= 0``, or a ``PartKind``); ``groups``, the conversion groups
    (lists of version indexes, ``versions.conversion_groups``) of the versions that can get rows
    in this run."""

    parts: list[int]
    groups: list[list[int]]


def past_checkpoint(df, last: int | None):
    """The events of ``df`` after the checkpoint ``last`` (and those without a ``seq``);
    ``last`` ``None``: all of them."""
    from pyspark.sql import functions as F

    return df if last is None else df.where(F.col("seq").isNull() | (F.col("seq") > F.lit(last)))


def _events(ctx: "RunContext", inputs, replay_lines: list[tuple[str, int]]):
    """The run's events past the checkpoint, with the replayed ones (``_replay``: their target
    version), and the observations ``(seen, fresh, skipped)`` of all the events, the new ones
    and those before the checkpoint."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    spark, last = ctx.spark, ctx.last
    seen, fresh = Observation("all events"), Observation("new events")
    # lines before the checkpoint are not parsed (``after_seq``); the largest seq among them
    # still counts for the check below
    skipped = Observation("events before the checkpoint") if (last is not None and inputs[0]) else None
    everything = readlog.read_events(spark, inputs, after_seq=last, skipped=skipped).observe(
        seen, F.max("seq").alias("max_seq"))
    events_df = (past_checkpoint(everything, last).observe(fresh, F.count(F.lit(1)).alias("events"),
                                                           *seqcheck.span_columns())
                 .withColumn("_replay", F.lit(None).cast("INT")))
    if replay_lines:
        rp = local_frame(spark, replay_lines, "_line STRING, _replay INT")
        rp = rp.select("_line", F.lit("replay").alias("_file"),
                       F.from_json("_line", EVENT_SCHEMA_DDL).alias("e"), "_replay").select(
            "_line", "_file", "e.*", F.lit(True).alias("_valid"), "_replay")
        events_df = events_df.unionByName(rp)
    return events_df, seen, fresh, skipped


def _tagged(ctx: "RunContext", events_df, versions: list[TableVersion], fold: bool, groups: list[list[int]]):
    """``events_df``'s rows (not the history's events) with their tag ``_part``, conversion group
    ``_grp``, quarantine ``_reason`` and the staged columns."""
    from pyspark.sql import functions as F

    spark = ctx.spark
    # a source column named like a pipeline column (``_op``, ...): its version's rows are
    # quarantined with this reason, never mixed up with the pipeline's own columns
    collide = vs.collisions(versions)
    gdf = local_frame(spark, [(k, g) for g, members in enumerate(groups) for k in members],
                      "g_part INT, g_grp INT")
    vdf = local_frame(
        spark, [(vs.fold_name(v.table_id.database, fold), vs.fold_name(v.table_id.schema, fold),
                 vs.fold_name(v.table_id.name, fold), k, v.valid_from_seq, v.valid_to_seq,
                 version_reason(k, v, collide)) for k, v in enumerate(versions)],
        "v_database STRING, v_schema STRING, v_table STRING, v_part INT, v_from LONG, v_to LONG, v_reason STRING")
    rows = events_df.where(~(F.col("_valid") & F.col("op").isin(*HISTORY_OPS)))
    is_row = F.col("_valid") & F.col("op").isin(*ROW_OPS) & F.col("_replay").isNull()
    fd = (lambda c: F.lower(c)) if fold else (lambda c: c)
    faces = SparkFaces("_part")
    cond = (is_row & fd(rows["database"]).eqNullSafe(vdf["v_database"])
            & fd(rows["schema"]).eqNullSafe(vdf["v_schema"]) & (fd(rows["table"]) == vdf["v_table"])
            & in_force(rows["seq"], vdf["v_from"], vdf["v_to"], faces))
    tagged = rows.join(F.broadcast(vdf), cond, "left")
    part, reason = tag(TagInputs(*map(F.col, ("_valid", "op", "ddl", "quarantine", "database", "schema", "table",
                                              "v_part", "v_reason", "_replay"))), faces)
    return (tagged.withColumn("_part", part)
            .join(F.broadcast(gdf), F.col("_part") == gdf["g_part"], "left")
            .select("seq", "position", "ts", "op", "database", "schema", "table", "tx", "row", "before",
                    "after", "_part", F.when(F.col("_part") >= 0, F.col("g_grp")).otherwise(F.col("_part"))
                    .alias("_grp"), reason.alias("_reason"),
                    F.when(F.col("_part") < 0, F.col("_line")).alias("_line"),
                    F.when(F.col("_part") == PartKind.INVALID.value, F.col("_file")).alias("_file"),
                    # the bytes of its values, summed per group (``convertpass``: groups of few
                    # rows but large values are not converted on the driver)
                    F.when(F.col("_part") >= 0, F.expr(f"{IMAGE_BYTES.format('after')} + "
                                                       f"{IMAGE_BYTES.format('before')}")).alias("_bytes")))


def stage_rows(ctx: "RunContext", inputs, versions: list[TableVersion], fold: bool,
               replay_lines: list[tuple[str, int]]) -> Staged:
    """Tag the run's row events (``inputs``: ``readlog.incremental_inputs``' files, and the
    replayed quarantine records ``replay_lines``: ``(event line, target version)``) with the
    version of ``versions`` in force at their ``seq`` (names folded to lower case when
    ``fold``) and stage them under ``ctx.rows_dir``; sets ``ctx.result.events`` and
    ``last_seq``.  Raises ``PipelineError`` when the log ends before the checkpoint, and
    ``seqcheck.duplicate_error``'s error for a ``seq`` in two files."""
    from pyspark.sql import functions as F

    spark, fs, last, result = ctx.spark, ctx.fs, ctx.last, ctx.result
    ctx.say("tagging row events with their table version")
    events_df, seen, fresh, skipped = _events(ctx, inputs, replay_lines)
    # the versions that can get rows in this run (in force past the checkpoint, or a replay
    # target), in conversion groups: the rows are staged by group, so a log of thousands of
    # table versions stages a few dozen directories, not thousands
    live = sorted(set(vs.live(versions, last)) | {k for _, k in replay_lines})
    groups = vs.conversion_groups(live, [v.table for v in versions])
    staged = _tagged(ctx, events_df, versions, fold, groups)
    # one open file per staged directory and task, instead of sorting each task's rows by
    # directory first — unless there are more directories than the heap lets a task
    # keep files open (``sessionconf.partitioned_writers``)
    staged_dirs = len(groups) + len(PartKind)
    with sessionconf.settings(spark, {sessionconf.CONCURRENT_WRITERS: sessionconf.partitioned_writers(
            staged_dirs, sessionconf.open_writers_per_task(spark, 1, ctx.config.tuning.heap_mb_per_open_writer))}):
        (staged.write.mode("overwrite").options(**STAGING_PARQUET)
         .partitionBy("_grp").parquet(fs.str(ctx.rows_dir)))
    max_seq = max((m for m in (seen.get.get("max_seq"), skipped.get.get("max_seq") if skipped else None)
                   if m is not None), default=None)
    if last is not None and max_seq is not None and max_seq < last:
        raise PipelineError(f"the change log ends at seq {max_seq}, before this output's checkpoint (seq {last}): "
                            f"it is not the log this output was written from (a new capture restarts seq "
                            f"at 1); write it to a new output directory")
    parts = sorted(int(n.split("=", 1)[1]) for n, is_dir in fs.list(ctx.rows_dir)
                   if is_dir and n.startswith("_grp="))
    result.events = fresh.get.get("events") or 0
    if seqcheck.span_has_duplicate(fresh.get):  # the seq rule inside the run (only then: a pass more)
        dup = (past_checkpoint(readlog.read_events(spark, inputs, after_seq=last), last)
               .where(F.col("seq").isNotNull())
               .groupBy("seq").agg(F.collect_list("_file").alias("files")).where(F.size("files") > 1)
               .orderBy("seq").limit(1).collect())
        if dup:
            raise seqcheck.duplicate_error(dup[0].seq, list(dup[0].files))
    result.last_seq = max((x for x in (max_seq, last) if x is not None), default=None)
    return Staged(parts, groups)
