"""The current-state merge computed on the driver with Arrow: the Arrow face of
``ddlcore.sinks.current``'s merge (docs/tables.md, "The current-state table"), computing what its
Spark face (``current._merge``) computes, file for file.

Owns: the merge's job (``MergeJob``: plain data the driver gathers from the table's snapshot,
``merge_job``) and its work in a process forked from the driver (``merge_current``):

1. the key scan: each data file's key columns (every column of a table without a primary key)
   read with pyarrow, with their row positions; the hits are the stored rows whose key (null
   equal to null, as Spark's ``<=>``) one of the run's row images has (``read.row_images``: an
   update's old key too), each with ``need``: the key has an event leaving a column absent;
2. per data file with hits that are not rows its delete files already hold: a new position
   delete file with its old and new positions (``posdeletes.write_delete_file``; it replaces
   the file's earlier ones), or, when its deleted rows reach ``fraction`` of its rows, its
   compaction (its live rows written again, it and its delete files removed);
3. the previous rows, read in full at the fresh hits whose key needs them (a table without a
   primary key: every one, ``read._multiset``), folded as the first events of their keys
   (``_op`` ``r``, ``_row`` 0, ``_unknown`` as flags) before the run's row images
   (``arrowcurrent.current_table``: the same fold as the rebuild's face);
4. one data file of the folded rows and the compacted files' live rows, written as Spark's
   write of the merge gives it (``arrowcurrent.write_spark_parquet``: names, Spark types,
   nullability, footer; ``_unknown`` nullable when files were compacted: Spark's union with
   the rows read back makes it so).

A run with a ``TRUNCATE`` is no merge (``current._hits`` returns ``None``): every stored file
leaves the table and the rows after it are written (the rebuild face over the run's files).
Everything the face cannot know to equal Spark's result raises ``arrowcurrent.Unsure`` before a
file is written (the Spark face then computes the table): what the rebuild face raises for, a
stored file without Spark's footer or written with its legacy calendar, and a stored column
missing or of another Spark type than its field's.  Must not know: Spark sessions, catalogs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .arrowcurrent import (CurrentJob, Unsure, arrow_type, current_table, group_key, image_rows, output_struct_json,
                           spark_fields, spark_json_type, write_current, write_spark_parquet)
from .posdeletes import positions, write_delete_file

__all__ = ["StoredFile", "MergeJob", "merge_job", "stored_size", "merge_current"]


@dataclass(frozen=True)
class StoredFile:
    """A data file of the current-state table's snapshot: its path as the manifests name it (a
    ``file:`` URI), its rows, and the paths of its position delete files."""

    path: str
    record_count: int
    deletes: tuple[str, ...]


@dataclass
class MergeJob:
    """What ``merge_current`` needs (picklable): ``current``: the run's row events of the
    lineage (its staged version files; ``dest``: the local directory of the new data file);
    ``files``: the table's data files; ``location``: the table's location (URI); ``run_id``;
    ``fraction``: the deleted fraction at which a data file is compacted."""

    current: CurrentJob
    files: list[StoredFile]
    location: str
    run_id: str
    fraction: float


@dataclass(frozen=True)
class _Delete:
    """A delete file as ``posdeletes.positions`` takes it."""

    file_path: str


def _local(uri: str) -> bool:
    return uri.startswith("file:") or ":" not in uri.split("/", 1)[0]


def merge_job(tasks: list[Any], location: str, current: CurrentJob, run_id: str, fraction: float) -> MergeJob | None:
    """The job of the table whose scan planned ``tasks`` (``FileScanTask``s) at ``location``;
    ``None`` when a file is not on the local filesystem (the face reads and writes local
    files)."""
    files = [StoredFile(t.file.file_path, t.file.record_count, tuple(sorted(d.file_path for d in t.delete_files)))
             for t in tasks]
    paths = [location] + [f.path for f in files] + [d for f in files for d in f.deletes]
    if not all(_local(p) for p in paths):
        return None
    return MergeJob(current, files, location, run_id, fraction)


def stored_size(tasks: list[Any]) -> tuple[int, int]:
    """``(rows, bytes)`` of the table's data files (``current._merge_on_driver`` takes them off the
    worker's limits: the worker scans every row's key and may read a file in full); bytes: the
    files' sizes."""
    return (sum(t.file.record_count for t in tasks), sum(t.file.file_size_in_bytes for t in tasks))


def _io(location: str) -> Any:
    from pyiceberg.io import load_file_io

    return load_file_io({}, location)


def _read(io: Any, path: str, columns: list[str], types: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The ``columns`` of the data file ``path`` and its Spark fields (footer); ``Unsure`` when
    the footer is not Spark's or a column's Spark type is not ``types``' (by name)."""
    import pyarrow.parquet as pq

    with io.new_input(path).open() as fh:
        pf = pq.ParquetFile(fh)
        spark = spark_fields(pf.metadata.metadata, path)
        for c in columns:
            if c in types and (c not in spark or spark[c]["type"] != types[c]):
                raise Unsure(f"{path}: column {c} is not of the field's Spark type {json.dumps(types[c])}")
        return pf.read(columns=columns), spark


def _key_table(values: dict[str, Any], job: CurrentJob, key: list[str], extra: dict[str, Any]) -> Any:
    """``__k<i>`` per key column (``arrowcurrent.group_key``) and the ``extra`` columns."""
    import pyarrow as pa

    specs = {f.name: f.spec for f in job.fields}
    cols = {f"__k{i}": group_key(values[k], spark_json_type(specs[k]), k) for i, k in enumerate(key)}
    return pa.table({**cols, **extra})


def _hits(io: Any, job: MergeJob, rows: Any, key: list[str]) -> dict[int, dict[int, bool]]:
    """Per data file (index into ``job.files``) with hits: position -> ``need`` (module
    docstring, 1)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    fields = job.current.fields
    names = [f.name for f in fields]
    specs = {f.name: f.spec for f in fields}
    types = {f.name: spark_json_type(f.spec) for f in fields}
    stored = []
    for n, f in enumerate(job.files):
        table, _ = _read(io, f.path, key, types)
        values = {k: table.column(k).combine_chunks().cast(arrow_type(specs[k])) for k in key}
        m = table.num_rows
        stored.append(_key_table(values, job.current, key, {
            "__f": pa.array(np.full(m, n, dtype=np.int64)), "__p": pa.array(np.arange(m, dtype=np.int64)),
            "__n": pa.array(np.zeros(m, dtype=np.int8))}))
    absent = pc.fill_null(pc.list_value_length(rows.column("_absent")), 0)
    need = pc.and_(pc.greater(absent, 0), pc.equal(rows.column("_sub"), 1)).cast(pa.int8())
    values = {k: rows.column(f"__v{names.index(k)}").combine_chunks() for k in key}
    run = _key_table(values, job.current, key, {"__f": pa.nulls(rows.num_rows, pa.int64()),
                                                "__p": pa.nulls(rows.num_rows, pa.int64()), "__n": need})
    both = pa.concat_tables(stored + [run])
    both = both.append_column("__i", pa.array(np.arange(both.num_rows, dtype=np.int64)))
    groups = both.group_by([f"__k{i}" for i in range(len(key))], use_threads=False).aggregate(
        [("__f", "count"), ("__n", "max"), ("__i", "list")])
    # (a group with run rows holds more rows than the stored ones: count counts the stored)
    sizes = pc.list_value_length(groups.column("__i_list"))
    touched = groups.filter(pc.greater(sizes, groups.column("__f_count")))
    members = pc.list_flatten(touched.column("__i_list"))
    needs = touched.column("__n_max").combine_chunks().take(pc.list_parent_indices(touched.column("__i_list")))
    picked = both.select(["__f", "__p"]).take(members)
    out: dict[int, dict[int, bool]] = {}
    for f, p, nd in zip(picked.column("__f").to_pylist(), picked.column("__p").to_pylist(), needs.to_pylist()):
        if f is not None:
            out.setdefault(f, {})[p] = bool(nd)
    return out


def _unknown_flags(unknown: Any, names: list[str]) -> list[Any]:
    """Per name, whether each row's ``_unknown`` list holds it."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    flat = pc.list_flatten(unknown).to_numpy(zero_copy_only=False)
    parents = pc.list_parent_indices(unknown).to_numpy(zero_copy_only=False)
    out = []
    for nm in names:
        mask = np.zeros(len(unknown), dtype=bool)
        mask[parents[flat == nm]] = True
        out.append(pa.array(mask))
    return out


def _base(stored: Any, rows: Any, names: list[str]) -> Any:
    """The stored rows as the first row images of their keys (``read.current_frame``'s
    ``previous``), in ``rows``' schema."""
    import pyarrow as pa

    n = stored.num_rows
    flags = _unknown_flags(stored.column("_unknown").combine_chunks(), names)
    cols: dict[str, Any] = {}
    for i, nm in enumerate(names):
        cols[f"__v{i}"] = stored.column(nm).combine_chunks().cast(rows.schema.field(f"__v{i}").type)
        cols[f"__u{i}"] = flags[i]
    cols.update({"_op": pa.repeat(pa.scalar("r"), n), "_seq": stored.column("_seq").combine_chunks(),
                 "_row": pa.repeat(pa.scalar(0, pa.int64()), n), "_absent": pa.nulls(n, pa.list_(pa.string())),
                 "_sub": pa.repeat(pa.scalar(1, pa.int8()), n)})
    return pa.table({c: cols[c].cast(rows.schema.field(c).type) for c in rows.column_names})


@dataclass
class _Plan:
    """The files step 2 of the module docstring decides: ``previous`` and ``kept``, per data
    file, the positions to read; ``remove``; ``deletes``: (delete file, data file, positions)."""

    previous: dict[int, list[int]]
    kept: dict[int, set[int]]
    remove: list[str]
    deletes: list[tuple[str, str, set[int]]]


def _plan(io: Any, job: MergeJob, hits: dict[int, dict[int, bool]], multiset: bool) -> _Plan:
    plan = _Plan({}, {}, [], [])
    for n in sorted(hits, key=lambda i: job.files[i].path):
        f, found = job.files[n], hits[n]
        old = positions(io, [_Delete(d) for d in f.deletes], f.path)
        fresh = set(found) - old
        if not fresh:
            continue  # every hit is a row an earlier run deleted
        want = sorted(p for p in fresh if found[p] or multiset)
        if want:
            plan.previous[n] = want
        dead = old | fresh
        plan.remove += list(f.deletes)
        if len(dead) >= job.fraction * f.record_count:
            plan.kept[n] = dead
            plan.remove.append(f.path)
        else:
            path = f"{job.location.rstrip('/')}/data/{job.run_id}-deletes/{len(plan.deletes):05d}.parquet"
            plan.deletes.append((path, f.path, dead))
    return plan


def _rows_of(io: Any, job: MergeJob, at: dict[int, Any], keep: bool, columns: list[str]) -> tuple[Any, Any]:
    """The rows of the data files ``at`` (index -> positions) at those positions (``keep``
    false: every other row), ``columns`` only; and the first file's Spark fields."""
    import numpy as np
    import pyarrow as pa

    types = {f.name: spark_json_type(f.spec) for f in job.current.fields}
    tables, spark = [], None
    for n in sorted(at):
        table, fields = _read(io, job.files[n].path, columns, types)
        spark = spark or fields
        mask = np.zeros(table.num_rows, dtype=bool)
        mask[np.fromiter(at[n], dtype=np.int64, count=len(at[n]))] = True
        tables.append(table.filter(pa.array(mask if not keep else ~mask)))
    # (files of Spark's and of the Arrow face's writer differ in the nullability of ``_unknown``)
    return (pa.concat_tables(tables, promote_options="permissive") if tables else None), spark


def _struct(job: MergeJob, spark: Any, first: Any, compacted: bool) -> dict[str, Any]:
    """The Spark schema of the merge's output: the rebuild's (``output_struct_json``; ``first``:
    the Spark fields of the run's first version file) with the metadata of the stored files'
    columns when previous rows were read (``spark``; Spark's union takes its first side's, the
    stored rows'; ``_seq`` of a table without a primary key keeps none: ``read._multiset``'s
    ``max``), and ``_unknown`` nullable when files were compacted."""
    struct = output_struct_json(job.current, first)
    for f in struct["fields"]:
        if spark is not None and f["name"] != "_unknown" and (f["name"] != "_seq" or job.current.key):
            f["metadata"] = spark.get(f["name"], {}).get("metadata", {})
        if f["name"] == "_unknown":
            f["nullable"] = compacted
    return struct


def merge_current(job: MergeJob) -> dict[str, Any]:
    """The merge of the module docstring: writes the new data file into ``job.current.dest`` and
    the delete files under the table's ``data/<run_id>-deletes/``; returns the commit entry's
    ``files`` (names in ``dest``), ``remove`` (paths; ``None``: every file) and ``deletes``
    (``[delete file, data file]``).  Raises ``Unsure`` (nothing written) and what pyarrow
    raises."""
    import pyarrow as pa

    cj = job.current
    if not job.files:
        return {"files": write_current(cj), "remove": [], "deletes": []}
    rows, first, truncated = image_rows(cj)
    if truncated:  # (the rows after it replace every file, as the Spark path does)
        return {"files": write_current(cj), "remove": None, "deletes": []}
    io = _io(job.location)
    names = [f.name for f in cj.fields]
    key = list(cj.key) or names
    plan = _plan(io, job, _hits(io, job, rows, key), not cj.key)
    columns = names + ["_seq", "_unknown"]
    stored, spark = _rows_of(io, job, plan.previous, False, columns)
    if stored is not None:
        rows = pa.concat_tables([_base(stored, rows, names), rows])
    merged = current_table(cj, rows)
    kept, _ = _rows_of(io, job, plan.kept, True, columns)
    if kept is not None:
        schema = pa.schema([f.with_nullable(True) for f in merged.schema])
        merged = pa.concat_tables([merged.cast(schema), kept.select(columns).cast(schema)])
    for path, data, dead in plan.deletes:
        write_delete_file(io, path, data, dead)
    files = write_spark_parquet(merged, _struct(job, spark, first, bool(plan.kept)), cj.dest, prefix=cj.prefix)
    return {"files": files, "remove": plan.remove, "deletes": [[p, d] for p, d, _ in plan.deletes]}
