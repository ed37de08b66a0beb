"""The quarantine stage of ``ddlcore run``: the events it cannot interpret, into ``_quarantine``.

Owns: gathering the run's quarantine records (the history's, the malformed lines', the staged
rows tagged with a negative ``PartKind``, the rows that could not be converted, each with its
raw event text), stopping a ``--strict`` run at the first, writing them as one JSON Lines file
into the run's staging, and replaying committed records (``--replay-quarantine``:
``replayable``, ``keep_unreplayed``).  The record's fields and reasons: ``ddlcore.spark.quarantine``.
Must not know: how rows are tagged or converted.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from ..changelog import ROW_OPS
from ..errors import PipelineError
from . import readlog, sessionconf
from . import versions as vs
from .frames import local_frame, union
from .quarantine import QUARANTINE_FIELDS, QUARANTINE_SCHEMA, PartKind, short_reason
from .readlog import EVENT_SCHEMA_DDL
from .stage import past_checkpoint

if TYPE_CHECKING:  # pragma: no cover
    from ..history import TableVersion
    from .context import RunContext
    from .fs import OutputFS

__all__ = ["replayable", "record_key", "staged_quarantine", "converted_quarantine", "write_quarantine",
           "keep_unreplayed"]


def replayable(fs: "OutputFS", versions: list[TableVersion],
               fold: bool) -> tuple[list[tuple[str, int]], set, list[dict]]:
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
        key = tuple(vs.fold_name(r.get(f), fold) for f in ("database", "schema", "table"))
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
        keys.add(record_key(r))
    return lines, keys, records


def record_key(r: dict) -> tuple:
    """A quarantine record's identity: its event's ``(seq, position, op)``."""
    return (r.get("seq"), r.get("position"), r.get("op"))



def staged_quarantine(ctx: "RunContext", inputs, parts: list[int], history_records) -> tuple[list[Any], list[str]]:
    """The run's quarantine records known before the conversion, as Spark DataFrames of
    ``QUARANTINE_SCHEMA``: the history's (``history_records``, ``QuarantineRecord``s), the
    malformed lines' (staged under ``PartKind.INVALID``) and the staged rows of the other
    negative ``parts``; and the change-log files with new malformed lines
    (``readlog.malformed_records``).  Raises ``PipelineError`` on the first record (by ``seq``)
    in a ``--strict`` run."""
    from pyspark.sql import functions as F

    spark, fs, rows_dir = ctx.spark, ctx.fs, ctx.rows_dir
    quarantined = []
    new_malformed: list[str] = []
    records = list(history_records)
    if PartKind.INVALID in parts:
        malformed, new_malformed = readlog.malformed_records(spark, fs.str(f"{rows_dir}/_grp={PartKind.INVALID.value}"),
                                                             ctx.state, inputs, on_held=ctx.result.held.append)
        records += malformed
    if records:
        quarantined.append(local_frame(spark, [r.as_tuple() for r in records], QUARANTINE_SCHEMA))
    for k in (k for k in parts if k < 0 and k != PartKind.INVALID):
        quarantined.append(spark.read.parquet(fs.str(f"{rows_dir}/_grp={k}")).select(
            "seq", "position", "op", "database", "schema", "table", F.col("_reason").alias("reason"),
            F.col("_line").alias("event")))
    if ctx.config.strict and quarantined:
        first = union(quarantined).orderBy(F.col("seq").asc_nulls_first()).limit(1).collect()[0]
        raise PipelineError(first.reason, first.seq)
    return quarantined, new_malformed


def converted_quarantine(ctx: "RunContext", inputs, bad_dirs: list[str], replay_lines: list[tuple[str, int]]):
    """The quarantine records of the rows that could not be converted (the Parquet directories
    ``bad_dirs``, ``convertpass``), with their events' raw text read back from the change log
    (``inputs``) or the replayed records (``replay_lines``) for these events only.  Raises
    ``PipelineError`` on the first (by ``seq``) in a ``--strict`` run."""
    from pyspark.sql import functions as F

    spark, fs, last = ctx.spark, ctx.fs, ctx.last
    converted_bad = sessionconf.read_own(spark, fs, *bad_dirs)
    if ctx.config.strict:
        first = converted_bad.orderBy("seq").limit(1).collect()[0]
        raise PipelineError(first.reason, first.seq)
    # the events' raw text, read back from the change log for these events only
    lines = past_checkpoint(readlog.read_events(spark, inputs, after_seq=last), last).select(
        "seq", "position", "op", F.col("_line").alias("event"))
    if replay_lines:
        lines = lines.unionByName(local_frame(spark, replay_lines, "_line STRING, _replay INT").select(
            F.from_json("_line", EVENT_SCHEMA_DDL).alias("e"), F.col("_line").alias("event")).select(
            "e.seq", "e.position", "e.op", "event"))
    return converted_bad.join(lines, ["seq", "position", "op"], "left").select(
        "seq", "position", "op", "database", "schema", "table", "reason", "event")


def write_quarantine(ctx: "RunContext", quarantined: list[Any]) -> None:
    """Write the records ``quarantined`` (DataFrames of ``QUARANTINE_SCHEMA``) as one JSON Lines
    file into the run's staging (``_quarantine``), in ``seq`` order, every field present even
    when null; counts them by ``short_reason`` into ``ctx.result``."""
    from pyspark.sql import functions as F

    if not quarantined:
        return
    result = ctx.result
    bad = union(quarantined).persist()
    try:
        for r in bad.groupBy("reason").count().collect():
            short = short_reason(r.reason)
            result.quarantine_reasons[short] = result.quarantine_reasons.get(short, 0) + r["count"]
            result.quarantined += r["count"]
        # every field in every record, null ones too (Spark's JSON writer drops them by default)
        (bad.orderBy(F.col("seq").asc_nulls_first()).coalesce(1).write.mode("overwrite")
         .option("ignoreNullFields", "false").json(ctx.fs.str(f"{ctx.staging}/_quarantine")))
    finally:
        bad.unpersist()


def keep_unreplayed(ctx: "RunContext", replay_keys: set, old_quarantine: list[dict]) -> list[str]:
    """After a replay (``replayable``): the committed records ``old_quarantine`` not replayed
    (not in ``replay_keys``) into one file of the run's staging; sets ``ctx.result.replayed``.
    Returns the committed quarantine files the commit deletes (relative to the output)."""
    if not replay_keys:
        return []
    kept = [r for r in old_quarantine if record_key(r) not in replay_keys]
    ctx.result.replayed = len(old_quarantine) - len(kept)
    ctx.fs.write_text(f"{ctx.staging}/_quarantine/{ctx.run_id}-part-kept.json", "".join(
        json.dumps({k: r.get(k) for k in QUARANTINE_FIELDS}, ensure_ascii=False) + "\n" for r in kept))
    return sorted({r["_path"] for r in old_quarantine})
