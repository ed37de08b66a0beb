"""Iceberg position delete files (Iceberg spec, "Position Delete Files"), one per data file.

Owns: writing a position delete file (Parquet: ``file_path`` string, field id 2147483546;
``pos`` long, field id 2147483545; every row names the one data file, sorted by ``pos``),
the ``DataFile`` that registers it (``content`` = position deletes, record count and size
from its footer, and ``file_path`` lower and upper bounds both set to the data file: a reader
knows which data file it deletes from without opening it — ``pyiceberg`` indexes it by path,
Polars' native reader requires it), and reading the positions the delete files of a data file
hold.  Files are read and written through ``pyiceberg``'s ``FileIO`` (local paths and the
object stores it supports).  Must not know: Spark, which rows are deleted.
"""

from __future__ import annotations

from typing import Any, Iterable

__all__ = ["FILE_PATH_ID", "POS_ID", "write_delete_file", "delete_data_file", "positions"]

FILE_PATH_ID = 2147483546
POS_ID = 2147483545


def _schema() -> Any:
    import pyarrow as pa

    def field(name: str, kind: Any, field_id: int) -> Any:
        return pa.field(name, kind, nullable=False, metadata={"PARQUET:field_id": str(field_id)})

    return pa.schema([field("file_path", pa.string(), FILE_PATH_ID), field("pos", pa.int64(), POS_ID)])


def write_delete_file(io: Any, path: str, data_file: str, pos: Iterable[int]) -> int:
    """Write the position delete file ``path`` (a URI) deleting rows ``pos`` (0-based row
    positions) of the data file ``data_file`` (its path as the table's manifests hold it);
    returns the number of rows written (distinct positions)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = sorted(set(int(p) for p in pos))
    table = pa.table([pa.array([data_file] * len(rows), pa.string()), pa.array(rows, pa.int64())], schema=_schema())
    with io.new_output(path).create(overwrite=True) as fh:
        pq.write_table(table, fh)
    return len(rows)


def delete_data_file(io: Any, path: str, data_file: str) -> Any:
    """The ``DataFile`` (position deletes) of the delete file at ``path`` holding deletes of
    ``data_file`` only."""
    import pyarrow.parquet as pq
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.typedef import Record

    inp = io.new_input(path)
    with inp.open() as fh:
        meta = pq.ParquetFile(fh).metadata
    bound = {FILE_PATH_ID: data_file.encode("utf-8")}
    return DataFile.from_args(content=DataFileContent.POSITION_DELETES, file_path=path, file_format=FileFormat.PARQUET,
                              partition=Record(), record_count=meta.num_rows, file_size_in_bytes=len(inp),
                              lower_bounds=dict(bound), upper_bounds=dict(bound))


def positions(io: Any, delete_files: Iterable[Any], data_file: str) -> set[int]:
    """The row positions of ``data_file`` deleted by the position delete files ``delete_files``
    (``DataFile``s; rows naming other data files are ignored)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    out: set[int] = set()
    for f in delete_files:
        with io.new_input(f.file_path).open() as fh:
            table = pq.read_table(fh, columns=["file_path", "pos"])
        out.update(table.filter(pc.equal(table["file_path"], data_file))["pos"].to_pylist())
    return out
