"""The current-state Iceberg table of a source table (docs/tables.md, "The current-state table"):
its data files computed in Spark at each run, bucket by bucket.

Owns: choosing what a run rewrites (the buckets its row events touch, or everything) and writing
those buckets' new Parquet files with Spark; the commit (``ddlcore.sinks.icecommit``) swaps them
in.  The merge itself is ``ddlcore.sinks.read.current_frame`` (the rules of
``read_table(current=True)``).  Must not know: Iceberg transactions.

Buckets: a row's bucket is ``pmod(xxhash64(key columns), buckets)`` (Spark's ``xxhash64``; key:
the primary key, or every column for a table without one); ``buckets`` is fixed per table
(table property ``ddlcore.buckets``, ``BUCKETS`` for a new table).  A file's bucket is in its
path (``_ddlcore_bucket=<n>/``).  A run whose events for the table are row events only rewrites
the buckets of their keys: it reads those buckets' files, merges this run's events into them and
writes one new file per bucket, so its cost follows the rows changed.  Everything is rebuilt
from the changes (every version's files) when the table is new to the output, when a DDL of the
run changed the table (its fields or names, or its key), and the table is emptied when it is
dropped; a ``TRUNCATE`` in the run touches every bucket.
"""

from __future__ import annotations

import re
from typing import Any

from . import naming
from .fields import Lineage
from .read import changes_frame, current_fields

__all__ = ["stage_current", "BUCKETS", "PROPERTY_BUCKETS", "BUCKET_COLUMN", "bucket_of_path"]

BUCKETS = 16
PROPERTY_BUCKETS = "ddlcore.buckets"
PROPERTY_RUN = "ddlcore.run"
BUCKET_COLUMN = "_ddlcore_bucket"
_BUCKET_DIR = re.compile(rf"/{BUCKET_COLUMN}=(\d+)/")


def bucket_of_path(path: str) -> int | None:
    """The bucket of a current-state data file, from its path (``None``: not in a bucket dir)."""
    m = _BUCKET_DIR.search(path)
    return None if m is None else int(m.group(1))


def _load(catalog: Any, lin: Lineage) -> Any:
    """The lineage's current-state table under its latest name or an earlier one (or ``None``)."""
    from pyiceberg.exceptions import NoSuchTableError

    for tid in reversed(lin.names):
        try:
            table = catalog.load_table(naming.current_name(tid))
        except NoSuchTableError:
            continue
        if table.properties.get("ddlcore.lineage") == lin.lineage_id:
            return table
    return None


def _bucket(key: list[str], buckets: int) -> Any:
    from pyspark.sql import functions as F
    return F.pmod(F.xxhash64(*[F.col(f"`{k}`") for k in key]), F.lit(buckets)).cast("int")


def _dirs(fs: Any, roots: list[str], v: Any) -> list[str]:
    """The directories of version ``v`` under ``roots`` (output-relative; ``""``: the output)
    that hold Parquet files, as Spark paths."""
    from ..spark.layout import version_dir

    d = version_dir(v.table_id.database, v.table_id.schema, v.table_id.name, v.version)
    rels = [f"{r}/{d}" if r else d for r in roots]
    return [fs.str(p) for p in rels if fs.exists(p) and any(n.endswith(".parquet") for n in fs.names(p))]


def stage_current(spark: Any, catalog: Any, fs: Any, staging: str, run_id: str, lin: Lineage,
                  previous_seq: int | None, warehouse: str) -> dict[str, Any] | None:
    """Write the new files of ``lin``'s current-state table for this run (staged changes under
    ``staging``; the output's committed ones under ``OUT``) into
    ``<warehouse>/<namespace>/<table>/data/<run_id>/`` and return the commit's entry
    (``identifier``, ``previous`` names, ``fields``, ``buckets``, ``touched``: the buckets
    replaced, ``None`` for all; ``files``: ``[path, bucket]``), or ``None`` when the run
    changes nothing in it."""
    from pyspark.sql import functions as F

    from .read import current_frame

    ddl = previous_seq is None or any(v.valid_from_seq > previous_seq for v in lin.versions)
    if not ddl and not any(_dirs(fs, [staging], v) for v in lin.versions if v.table is not None):
        return None  # no event of this run
    table = _load(catalog, lin) if previous_seq is not None else None
    rebuild = table is None or table.properties.get(PROPERTY_RUN) is None or ddl
    buckets = int(table.properties.get(PROPERTY_BUCKETS, BUCKETS)) if table is not None else BUCKETS
    fields = current_fields(lin)  # (of the last version: a dropped table keeps its schema)
    names = [f.name for f in fields]
    last = [v.table for v in lin.versions if v.table is not None][-1]
    key = list(last.primary_key) or names
    ident = naming.current_name(lin.table_id)
    entry = {"identifier": list(ident), "previous": [list(naming.current_name(t)) for t in lin.names[:-1]],
             "lineage": lin.lineage_id, "source_table": str(lin.table_id), "dropped": lin.dropped,
             "fields": [{**f.to_json(), "alive": True} for f in fields], "buckets": buckets, "touched": None,
             "files": []}
    if lin.dropped:
        return entry  # a dropped table has no rows: every bucket emptied
    changes = changes_frame(spark, lin, lambda v: _dirs(fs, ["", staging] if rebuild else [staging], v), True)
    if changes is None:
        return entry if rebuild else None
    previous = None
    if not rebuild:
        marks = changes.select(F.when(F.col("_op") == "t", F.lit(-1)).otherwise(_bucket(key, buckets)).alias("b"))
        touched = sorted(r.b for r in marks.distinct().collect())
        if -1 not in touched:  # (a TRUNCATE touches every bucket and ends every earlier row)
            entry["touched"] = touched
            paths = [t.file.file_path for t in table.scan().plan_files() if bucket_of_path(t.file.file_path) in touched]
            previous = spark.read.parquet(*paths) if paths else None
    merged = current_frame(changes, lin, previous)
    dest = f"{warehouse}/{'/'.join(ident)}/data/{run_id}"
    (merged.withColumn(BUCKET_COLUMN, _bucket(key, buckets)).repartition(BUCKET_COLUMN)
     .write.mode("overwrite").partitionBy(BUCKET_COLUMN).parquet(fs.str(dest)))
    for sub in (fs.names(dest) if fs.exists(dest) else []):
        b = bucket_of_path(f"/{sub}/")
        if b is not None:
            entry["files"] += [[fs.str(f"{dest}/{sub}/{n}"), b] for n in fs.names(f"{dest}/{sub}")
                               if n.endswith(".parquet")]
    return entry
