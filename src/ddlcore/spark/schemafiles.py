"""The schema files of ``ddlcore run``: one JSON file per table version in ``OUT/_schemas``.

Owns: which versions' schema files a run writes (``schemas_to_write``) and writing them into the
run's staging (``write_schemas``): the version's span, directory, ``StructType`` JSON and table
model.  Must not know: the rows.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import versions as vs
from .layout import schema_file, version_dir

if TYPE_CHECKING:  # pragma: no cover
    from concurrent.futures import Future

    from ..history import TableVersion
    from .fs import OutputFS

__all__ = ["schemas_to_write", "write_schemas", "start_writing", "settle"]


def schemas_to_write(fs: "OutputFS", versions: list[TableVersion], last: int | None) -> list[TableVersion]:
    """The versions (of ``vs.version_list``) whose schema file this run writes: on a first run
    (``last`` ``None``) every version with a table model; then those that began after the
    checkpoint ``last`` (new), those that ended after it (their ``valid_to_seq`` changed),
    and any whose file is missing from ``OUT/_schemas`` — a committed file of a version that
    began and ended by ``last`` holds what this run would write (``ddlcore.spark.pipeline``: the history
    records events after the checkpoint only; the type-mapping options and the dialect are
    the output's, ``check_run_options``)."""
    todo = [v for v in versions if v.table is not None]
    if last is None:
        return todo
    have = set(fs.names("_schemas"))
    return [v for v in todo if v.valid_from_seq > last or (v.valid_to_seq is not None and v.valid_to_seq > last)
            or schema_file(v.table_id.database, v.table_id.schema, v.table_id.name, v.version) not in have]


def start_writing(fs: "OutputFS", rel: str, schemas: list[TableVersion], sopts: dict[str, Any],
                  dialect: str) -> "Future[None]":
    """``write_schemas`` in a thread of its own, started now: a run's sink stages its tables
    meanwhile (``ddlcore.spark.commit.commit`` waits for the future before it plans the moves;
    its ``result()`` raises what ``write_schemas`` raised).  Whoever starts it waits for it
    (``settle``) before leaving the run: nothing may write into a staging directory that is
    being deleted."""
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ddlcore-schema-files")
    try:
        return pool.submit(write_schemas, fs, rel, schemas, sopts, dialect)
    finally:
        pool.shutdown(wait=False)  # (the thread ends with its one task)


def settle(future: "Future[Any] | None") -> None:
    """Wait for ``future`` (``start_writing``'s, or ``None``) to finish, whatever its outcome
    (its error is raised where its ``result()`` is asked for)."""
    if future is not None:
        from concurrent.futures import wait

        wait([future])


def write_schemas(fs: "OutputFS", rel: str, schemas: list[TableVersion], sopts: dict[str, Any],
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
            tid = v.table_id
            (tree / schema_file(tid.database, tid.schema, tid.name, v.version)).write_text(json.dumps({
                "database": v.table_id.database, "schema": v.table_id.schema, "table": v.table_id.name,
                "schema_version": v.version, "valid_from_seq": v.valid_from_seq, "valid_to_seq": v.valid_to_seq,
                "directory": version_dir(v.table_id.database, v.table_id.schema, v.table_id.name, v.version),
                "struct_type": structs[shape], "model": model}, indent=2), encoding="utf-8")
        fs.mkdirs(rel.rpartition("/")[0])
        fs.put_tree(str(tree), rel)
    finally:
        shutil.rmtree(local, ignore_errors=True)
