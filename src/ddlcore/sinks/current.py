"""The current-state Iceberg table of a source table (docs/tables.md, "The current-state table"):
what each run adds to and removes from it, computed in Spark or, for a rebuild, on the driver.

Owns: choosing between a rebuild and a merge, and staging the merge's files: the new rows'
data files (written by Spark), one position delete file per data file that held a row of a
key the run changed (``ddlcore.sinks.posdeletes``), and the data files compacted in this run.
The commit (``ddlcore.sinks.icecommit``) registers them in one snapshot
(``ddlcore.sinks.rowdelta``).  The merge rules are ``ddlcore.sinks.read.current_frame``'s (the
rules of ``read_table(current=True)``).  Must not know: Iceberg transactions.

Merge (a run whose events for the table are row events only, without a ``TRUNCATE``): Spark
reads the key columns, file path and row position (``_metadata.file_path``,
``_metadata.row_index``) of the table's data files, joined with the run's keys: the positions of
the rows the run replaces.  Positions a delete file already holds are dead rows.  Each data
file with a live hit gets one new delete file holding its old and new deleted positions (it
replaces the file's earlier one), or, when its deleted fraction reaches the table property
``ddlcore.compact-deleted-fraction`` (``COMPACT_FRACTION``), is compacted: its live rows are
written again with the run's rows and it and its delete file leave the table.  The previous
rows of the run's keys are read in full only for keys with an event that leaves a column
absent (``_absent``: they keep the stored value) and for a table without a primary key (every
stored row counts: ``read._multiset``).  So a run costs what it changes plus a scan
of the key columns.

Rebuilt from the changes (every version's files): when the table is new to the output, when a
DDL of the run changed the table (fields, names or key); a ``TRUNCATE`` in the run replaces
every file with the rows after it; a dropped table is emptied.  A rebuild is computed on the
driver by the Arrow face (``ddlcore.sinks.arrowcurrent``, in a process forked from the driver)
when the lineage's files are within the driver's limits (``arrowcurrent.within``) and the face
is sure of Spark's result; else by Spark jobs.  A merge likewise: by the merge's Arrow face
(``ddlcore.sinks.arrowmerge``, the same files ``_merge`` writes) when ``DriverFace.merge`` is on,
the run's rows with the table's (``arrowmerge.stored_size``) are within the same limits, the
table's files are local and the face is sure; else by ``_merge``'s Spark jobs.
"""

from __future__ import annotations

import os
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import PipelineError
from . import naming
from .arrowcurrent import CurrentJob, Unsure, VersionFiles, current_files
from .fields import Lineage
from .icecommit import data_file, file_uri
from .posdeletes import positions, write_delete_file
from .read import changes_frame, current_fields, current_frame, row_images

__all__ = ["stage_current", "STAGED_COUNTS", "COMPACT_FRACTION", "PROPERTY_COMPACT", "BROADCAST_ROWS", "DriverFace",
           "current_driver_rows", "stage_workers"]

PROPERTY_RUN = "ddlcore.run"
#: a stage entry's key (popped by ``IcebergSink.stage``): the record count and size of the
#: staged version files the Arrow face read, by output-relative path (``_file_counts``)
STAGED_COUNTS = "staged_counts"
#: the table property naming the deleted fraction (deleted rows / rows) of a data file at which
#: the merge rewrites it instead of adding deletes; ``COMPACT_FRACTION`` when unset
PROPERTY_COMPACT = "ddlcore.compact-deleted-fraction"
COMPACT_FRACTION = 0.3
#: a run with at most this many row events for a table joins its keys to the table's key
#: columns by broadcasting them (no shuffle of the table's keys); more: Spark chooses
BROADCAST_ROWS = 500_000
#: a rebuild of at most this many row events computes the current state in one task (no shuffle
#: stage: a small table's job is mostly fixed costs); more: Spark partitions by key
SINGLE_TASK_ROWS = 200_000
_FILE, _POS, _NEED = "__ddlcore_file", "__ddlcore_pos", "__ddlcore_need"


@dataclass(frozen=True)
class DriverFace:
    """Where the Arrow face runs (``ddlcore.sinks.arrowcurrent``): ``submit(fn, *args) ->
    Future`` (``spark.forkpool.WorkerPool``: a process forked from the driver), the output's
    local root, ``limit``: ``current_driver_rows``, ``max_bytes``: the most bytes of values a
    worker holds (``Tuning.group_max_bytes``, as for a conversion group; with ``limit``, the
    worker's ``arrowcurrent.within``), and ``root_uri``: the output root's URI as
    ``OutputFS.str`` gives it (the written files' URIs are built from it; ``None``: asked of
    the filesystem); ``merge``: merges too (``ddlcore.sinks.arrowmerge``;
    ``Tuning.merge_on_driver``), else rebuilds only."""

    submit: Callable[..., Any]
    root: str
    limit: int | None
    max_bytes: int
    root_uri: str | None = None
    merge: bool = True

    def uri(self, fs: Any, rel: str) -> str:
        """The URI of ``rel`` (output-relative, plain components) as ``fs.str(rel)`` gives it."""
        return f"{self.root_uri}/{rel}" if self.root_uri is not None else fs.str(rel)


def current_driver_rows(spark: Any, fs: Any, tuning: Any) -> int | None:
    """The most row events of one lineage whose current state is computed on the driver by the
    Arrow face instead of Spark jobs (``ExecutionStrategy.current_state_max_rows``: ``None``, no
    limit, in local mode writing to the local filesystem; ``-1``: none).  With
    ``arrowcurrent.within``, the one place the current state's path is chosen."""
    from ..spark.strategy import ExecutionStrategy

    return ExecutionStrategy.of(spark, fs, tuning).current_state_max_rows()


def stage_workers(workers: int | None, lineages: int) -> int:
    """Processes forked for the Arrow face: ``workers`` (``Tuning.driver_workers``; ``None``: the
    CPUs this process may use), at most one per lineage; 1 (the driver itself) but on Linux
    (``spark.forkpool.WorkerPool`` forks)."""
    import sys

    if not sys.platform.startswith("linux"):
        return 1
    if workers is None:
        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(workers, lineages))


def _local_files(root: str, roots: list[str], v: Any) -> tuple[str, ...]:
    """The local Parquet files of version ``v`` under ``roots`` (output-relative) of the output
    at the local ``root``, as Spark's reader lists them (no ``.``/``_`` names)."""
    from ..spark.layout import version_dir

    d = version_dir(v.table_id.database, v.table_id.schema, v.table_id.name, v.version)
    out = []
    for r in roots:
        path = os.path.join(root, r, d) if r else os.path.join(root, d)
        if os.path.isdir(path):
            out += [os.path.join(path, n) for n in sorted(os.listdir(path))
                    if n.endswith(".parquet") and not n.startswith((".", "_"))]
    return tuple(out)


def _arrow_job(face: DriverFace, lin: Lineage, roots: list[str], key: list[str], dest: str,
               prefix: str) -> CurrentJob | None:
    """The Arrow face's job for ``lin`` (``None``: ``face`` takes none), writing into the
    table's data directory ``dest`` (output-relative) a file named after ``prefix`` (the run
    id: ``CurrentJob.prefix``); whether the worker takes the lineage's files
    (``arrowcurrent.within``) is decided where it reads their footers."""
    if face.limit is not None and face.limit < 0:
        return None
    versions = []
    for v in lin.versions:
        files = _local_files(face.root, roots, v) if v.table is not None else ()
        if files:
            vkey = (str(v.table_id), v.version)
            versions.append(VersionFiles(files, {k: lin.physical[vkey][c] for c, k in lin.keys[vkey].items()}))
    fields = current_fields(lin)
    drops = [i for i, v in enumerate(lin.versions) if v.table is None]
    since = lin.versions[drops[-1] + 1].valid_from_seq if drops and drops[-1] + 1 < len(lin.versions) else None
    return CurrentJob(versions, fields, {f.replaces: lin.fields[f.replaces] for f in fields if f.replaces},
                      key, since, os.path.join(face.root, dest), face.limit, face.max_bytes, prefix)


def _file_counts(entry: dict[str, Any], counts: dict[str, list[int]], uris: dict[str, str], dest: str,
                 staging: str) -> None:
    """Record in ``entry`` what the Arrow face knows of the files' footers (``counts``:
    ``arrowcurrent.current_files``' ``file_counts``, by local path): the files it wrote into
    the local directory ``dest`` (``uris``: name → URI in ``entry["files"]``) by URI
    (``file_counts``, for the commit), and the version files it read under the local staging
    directory ``staging`` by output-relative path (``STAGED_COUNTS``, for ``IcebergSink.plan``:
    the changes table's entry)."""
    written = {os.path.join(dest, name): uri for name, uri in uris.items()}
    entry["file_counts"] = {written[p]: c for p, c in counts.items() if p in written}
    prefix = staging.rstrip(os.sep) + os.sep
    entry[STAGED_COUNTS] = {p[len(prefix):]: c for p, c in counts.items() if p.startswith(prefix)}


def _on_driver(face: DriverFace, fn: Callable[[Any], Any], job: Any, lin: Lineage) -> dict[str, Any] | None:
    """``fn(job)`` in ``face``'s worker: the entry's ``files`` (names in the job's ``dest``) and
    what ``fn`` returns besides (``arrowmerge.merge_current``); ``None`` when the face raised
    ``Unsure`` (the reason is its message: the Spark face computes the table)."""
    try:
        done = face.submit(fn, job).result()
    except Unsure:
        return None
    except BrokenProcessPool:
        raise PipelineError(f"the current state of {lin.table_id}: a driver worker process died") from None
    return done if isinstance(done, dict) else {"files": done}


def _merge_on_driver(face: DriverFace, table: Any, lin: Lineage, staging: str, run_id: str,
                     dest: str) -> dict[str, Any] | None:
    """The merge by the Arrow face (``ddlcore.sinks.arrowmerge``) when the table's stored rows
    and bytes (``arrowmerge.stored_size``) leave room within ``face``'s limits for the run's
    (the worker checks those: ``arrowcurrent.within``) and its files are local; else ``None``."""
    import dataclasses

    from .arrowmerge import merge_current, merge_job, stored_size

    tasks = list(table.scan().plan_files())
    last = [v.table for v in lin.versions if v.table is not None][-1]
    job = _arrow_job(face, lin, [staging], list(last.primary_key), dest, run_id)
    if job is None:
        return None
    rows, nbytes = stored_size(tasks)
    job = dataclasses.replace(job, max_rows=None if job.max_rows is None else max(-1, job.max_rows - rows),
                              max_bytes=job.max_bytes - nbytes)
    if job.max_bytes < 0 or job.max_rows == -1:
        return None
    merge = merge_job(tasks, table.location(), job, run_id, compact_fraction(table))
    return _on_driver(face, merge_current, merge, lin) if merge is not None and merge.current.versions else None


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


def _dirs(fs: Any, roots: list[str], v: Any) -> list[str]:
    """The directories of version ``v`` under ``roots`` (output-relative; ``""``: the output)
    that hold Parquet files, as Spark paths."""
    from ..spark.layout import version_dir

    d = version_dir(v.table_id.database, v.table_id.schema, v.table_id.name, v.version)
    rels = [f"{r}/{d}" if r else d for r in roots]
    return [fs.str(p) for p in rels if fs.exists(p) and any(n.endswith(".parquet") for n in fs.names(p))]


def compact_fraction(table: Any) -> float:
    """The table's ``ddlcore.compact-deleted-fraction`` (a number in (0, 1]); ``ValueError``
    naming the table and the property otherwise."""
    text = table.properties.get(PROPERTY_COMPACT)
    if text is None:
        return COMPACT_FRACTION
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 1:
        raise ValueError(f"Iceberg table {'.'.join(table.name())}: property {PROPERTY_COMPACT}={text!r} "
                         f"is not a number in (0, 1]")
    return value


def _path_key(uri: str, encoded: bool) -> str:
    """A file's URI in one form whether Spark (``encoded``: ``_metadata.file_path`` is
    URL-encoded, ``file:/x`` or ``file:///x``) or the manifests (``file:///x``) name it."""
    from urllib.parse import unquote

    scheme, sep, rest = uri.partition(":")
    if not sep:
        scheme, rest = "file", uri
    if encoded:
        rest = unquote(rest)
    return f"{scheme}:/{rest.lstrip('/')}" if scheme == "file" else f"{scheme}:{rest}"


def _with_position(spark: Any, paths: list[str]) -> Any:
    """The data files ``paths`` with each row's file and row position (``_FILE``, ``_POS``)."""
    from pyspark.sql import functions as F

    return spark.read.parquet(*paths).select("*", F.col("_metadata.file_path").alias(_FILE),
                                             F.col("_metadata.row_index").alias(_POS))


def _hits(spark: Any, tasks: list[Any], changes: Any, key: list[str], broadcast: bool) -> dict[str, list] | None:
    """The rows of the data files of ``tasks`` whose key the run's ``changes`` (``read.row_images``:
    an update's old key too) have, by the file (as Spark names it): ``[(position, needed)]``,
    ``needed``: the key has an event leaving a column absent; ``None`` when the changes hold a
    ``TRUNCATE`` (found in the same job)."""
    from pyspark.sql import functions as F

    absent = (F.coalesce(F.size(F.col("_absent")), F.lit(0)) > 0) & (F.col("_sub") == 1)
    keys = (changes.where(F.col("_op") != "t").groupBy(*[F.col(f"`{k}`") for k in key])
            .agg(F.max(absent.cast("int")).alias(_NEED)))
    stored = _with_position(spark, [t.file.file_path for t in tasks]).select(
        *[F.col(f"`{k}`") for k in key], _FILE, _POS).alias("s")
    keys = (F.broadcast(keys) if broadcast else keys).alias("k")
    cond = [F.col(f"s.`{k}`").eqNullSafe(F.col(f"k.`{k}`")) for k in key]
    truncate = changes.where(F.col("_op") == "t").limit(1).select(
        F.lit(None).cast("string").alias(_FILE), F.lit(-1).cast("long").alias(_POS), F.lit(0).alias(_NEED))
    found = (stored.join(keys, cond, "inner").select(f"s.{_FILE}", f"s.{_POS}", f"k.{_NEED}")
             .unionByName(truncate).toArrow())
    out: dict[str, list] = {}
    for f, p, n in zip(*(found.column(c).to_pylist() for c in (_FILE, _POS, _NEED))):
        if p < 0:
            return None
        out.setdefault(f, []).append((p, bool(n)))
    return out


def _marks(spark: Any, rows: list[tuple[str, int]]) -> Any:
    """A frame of (``_FILE``, ``_POS``) from ``rows`` (through Arrow: no Python per row in Spark)."""
    import pyarrow as pa

    files, pos = zip(*rows) if rows else ((), ())
    return spark.createDataFrame(pa.table({_FILE: pa.array(files, pa.string()), _POS: pa.array(pos, pa.int64())}))


def _rows_at(spark: Any, paths: list[str], rows: list[tuple[str, int]], how: str) -> Any:
    """The rows of data files ``paths`` at (``how="inner"``) or not at (``"left_anti"``) the
    (file as Spark names it, position) pairs ``rows``, with the table's columns."""
    from pyspark.sql import functions as F

    marks = _marks(spark, rows)
    return _with_position(spark, paths).join(F.broadcast(marks) if how == "inner" else marks,
                                             [_FILE, _POS], how).drop(_FILE, _POS)


def _merge(spark: Any, table: Any, run_id: str, changes: Any, lin: Lineage, key: list[str],
           broadcast: bool) -> tuple[Any, dict[str, Any]] | None:
    """The merge of the module docstring: the frame of the rows to write and the entry's
    ``remove`` (paths), ``deletes`` (``[delete file, data file]``, written here); ``None`` when
    the run truncates the table (nothing written)."""
    tasks = list(table.scan().plan_files())
    multiset = not [v.table for v in lin.versions if v.table is not None][-1].primary_key
    hits = _hits(spark, tasks, row_images(changes, lin), key, broadcast) if tasks else {}
    if hits is None:
        return None
    by_key = {_path_key(t.file.file_path, False): t for t in tasks}
    fraction = compact_fraction(table)
    previous: list[tuple[str, int]] = []
    compacted: list[tuple[str, int]] = []
    compact_paths: list[str] = []
    remove: list[str] = []
    deletes: list[list[str]] = []
    for spark_path, found in sorted(hits.items()):
        task = by_key[_path_key(spark_path, True)]
        data = task.file.file_path
        old = positions(table.io, task.delete_files, data)
        fresh = {p for p, _ in found} - old
        if not fresh:
            continue  # every hit is a row an earlier run deleted
        # (a table without a primary key: every stored row of a touched key counts, read._multiset)
        previous += [(spark_path, p) for p, need in found if (need or multiset) and p in fresh]
        dead = old | fresh
        remove += [d.file_path for d in task.delete_files]
        if len(dead) >= fraction * task.file.record_count:
            compact_paths.append(data)
            compacted += [(spark_path, p) for p in dead]
            remove.append(data)
        else:
            path = f"{table.location().rstrip('/')}/data/{run_id}-deletes/{len(deletes):05d}.parquet"
            write_delete_file(table.io, path, data, dead)
            deletes.append([path, data])
    prev = _rows_at(spark, sorted({by_key[_path_key(f, True)].file.file_path for f, _ in previous}), previous,
                    "inner") if previous else None
    merged = current_frame(changes, lin, prev, truncates=not tasks)  # (``_hits`` looked for one)
    if compact_paths:
        kept = _rows_at(spark, compact_paths, compacted, "left_anti")
        merged = merged.unionByName(kept.select(*merged.columns))
    return merged, {"remove": remove, "deletes": deletes}


def _staged_rows(fs: Any, io: Any, staging: str, lin: Lineage) -> int:
    """The run's row events of ``lin`` (its staged files' Parquet footers: no Spark job)."""
    return sum(data_file(io, path).record_count for path in _files(fs, [staging], lin))


def _files(fs: Any, roots: list[str], lin: Lineage) -> list[str]:
    """The URIs of the Parquet files of every version of ``lin`` under ``roots`` (``_dirs``)."""
    return [file_uri(f"{d}/{n}") for v in lin.versions if v.table is not None
            for d in _dirs(fs, roots, v) for n in fs.names(d) if n.endswith(".parquet")]


def _scan_ops(io: Any, paths: list[str]) -> tuple[int, bool]:
    """The rows of the Parquet files ``paths`` (URIs) and whether one is a ``TRUNCATE`` (``_op``
    ``t``), from their ``_op`` column read in the driver (dictionary-encoded: a fraction of a
    Spark job's fixed cost; the footers' min/max cannot tell, ``u`` sorts after ``t``)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    rows, truncates = 0, False
    for path in paths:
        with io.new_input(path).open() as fh:
            ops = pq.ParquetFile(fh).read(columns=["_op"]).column("_op")
        rows += len(ops)
        truncates = truncates or bool(pc.any(pc.equal(ops, "t")).as_py())
    return rows, truncates


#: the key-value metadata entry of a Parquet file Spark wrote: its schema as Spark JSON
SPARK_SCHEMA_KEY = b"org.apache.spark.sql.parquet.row.metadata"


def _spark_schema(fs: Any, io: Any, dirs: list[str]) -> Any:
    """The Spark schema of the Parquet files in ``dirs`` (Spark paths; one version's files, one
    schema) from the first file's footer (what Spark's inference reads, without its job);
    ``None`` for a file Spark did not write."""
    import json

    import pyarrow.parquet as pq
    from pyspark.sql.types import StructType

    name = next(n for n in sorted(fs.names(dirs[0])) if n.endswith(".parquet"))
    with io.new_input(file_uri(f"{dirs[0]}/{name}")).open() as fh:
        meta = pq.ParquetFile(fh).metadata.metadata or {}
    text = meta.get(SPARK_SCHEMA_KEY)
    return StructType.fromJson(json.loads(text)) if text is not None else None


def _write(fs: Any, frame: Any, dest: str) -> list[str]:
    """Write ``frame`` as Parquet into ``dest`` (output-relative); the files' Spark paths."""
    frame.write.mode("overwrite").parquet(fs.str(dest))
    return [fs.str(f"{dest}/{n}") for n in (fs.names(dest) if fs.exists(dest) else []) if n.endswith(".parquet")]


def stage_current(spark: Any, catalog: Any, fs: Any, staging: str, run_id: str, lin: Lineage,
                  previous_seq: int | None, warehouse: str, driver: DriverFace | None = None) -> dict[str, Any] | None:
    """Write the new files of ``lin``'s current-state table for this run (staged changes under
    ``staging``; the output's committed ones under ``OUT``): data files into
    ``<warehouse>/<namespace>/<table>/data/<run_id>/`` (Spark's; the Arrow face's files are
    ``data/<run_id>-part-...``), delete files beside them, and return the
    commit's entry (``identifier``, ``previous`` names, ``fields``, ``files``: the data files,
    ``deletes``: ``[delete file, data file]``, ``remove``: the files leaving the table, ``None``
    for all), or ``None`` when the run changes nothing in it.  ``driver``: a rebuild (a merge:
    ``ddlcore.sinks.arrowmerge``) is computed there by the Arrow face when it takes the lineage
    (``arrowcurrent.within``) and is sure of the result (else ``arrowcurrent.Unsure``: by Spark,
    below)."""
    from pyiceberg.io import load_file_io

    ddl = previous_seq is None or any(v.valid_from_seq > previous_seq for v in lin.versions)
    if not ddl and not any(_dirs(fs, [staging], v) for v in lin.versions if v.table is not None):
        return None  # no event of this run
    table = _load(catalog, lin) if previous_seq is not None else None
    rebuild = table is None or table.properties.get(PROPERTY_RUN) is None or ddl
    fields = current_fields(lin)  # (of the last version: a dropped table keeps its schema)
    last = [v.table for v in lin.versions if v.table is not None][-1]
    key = list(last.primary_key) or [f.name for f in fields]
    ident = naming.current_name(lin.table_id)
    entry = {"identifier": list(ident), "previous": [list(naming.current_name(t)) for t in lin.names[:-1]],
             "lineage": lin.lineage_id, "source_table": str(lin.table_id), "dropped": lin.dropped,
             "fields": [{**f.to_json(), "alive": True} for f in fields], "remove": None, "files": [], "deletes": []}
    if lin.dropped:
        return entry  # a dropped table has no rows: every file removed
    data = f"{warehouse}/{'/'.join(ident)}/data"  # (the Arrow face: files named after the run, in it)
    dest = f"{data}/{run_id}"  # (Spark's output directory)
    job = (_arrow_job(driver, lin, ["", staging], list(last.primary_key), data, run_id)
           if rebuild and driver is not None else None)
    if job is not None and not job.versions:
        return entry  # no version has files: every file removed
    done = _on_driver(driver, current_files, job, lin) if job is not None else None
    if done is None and not rebuild and driver is not None and driver.merge:
        done = _merge_on_driver(driver, table, lin, staging, run_id, data)
    if done is not None:
        counts = done.pop("file_counts", {})
        entry.update(done)
        entry["files"] = [driver.uri(fs, f"{data}/{n}") for n in done["files"]]
        _file_counts(entry, counts, dict(zip(done["files"], entry["files"])), os.path.join(driver.root, data),
                     os.path.join(driver.root, staging))
        return entry
    io = load_file_io({}, fs.str(warehouse))
    changes = changes_frame(spark, lin, lambda v: _dirs(fs, ["", staging] if rebuild else [staging], v), True,
                            lambda dirs: _spark_schema(fs, io, dirs))
    if changes is None:
        return entry if rebuild else None
    if not rebuild:
        broadcast = _staged_rows(fs, table.io, staging, lin) <= BROADCAST_ROWS
        merged = _merge(spark, table, run_id, changes, lin, key, broadcast)
        if merged is not None:  # (else a TRUNCATE ended every earlier row: the rows after it replace every file)
            frame, delta = merged
            entry.update(delta)
            entry["files"] = _write(fs, frame, dest)
            return entry
    rows, truncates = _scan_ops(io, _files(fs, ["", staging] if rebuild else [staging], lin))
    if rows <= SINGLE_TASK_ROWS:
        changes = changes.coalesce(1)  # (one partition: the window needs no shuffle of the keys)
    truncates = truncates or not rebuild  # (not a rebuild: the merge found a TRUNCATE)
    entry["files"] = _write(fs, current_frame(changes, lin, truncates=truncates), dest)
    return entry
