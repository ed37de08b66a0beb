"""``ddlcore.sinks.rowdelta`` and ``ddlcore.sinks.posdeletes`` without Spark: a snapshot that adds
a data file and a position delete file (in a delete manifest) and one that removes a data file
with its delete file, read back by pyiceberg (Arrow), Polars (its native reader and pyiceberg's),
DuckDB over Arrow and time travel; the version guard."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("pyiceberg")

from ddlcore.sinks import rowdelta  # noqa: E402
from ddlcore.sinks.posdeletes import delete_data_file, positions, write_delete_file  # noqa: E402


def _table(tmp_path: Path):
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    cat = SqlCatalog("t", uri=f"sqlite:///{tmp_path}/cat.sqlite", warehouse=f"file://{tmp_path}/wh")
    cat.create_namespace("db")
    schema = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "v", StringType(), required=False))
    mapping = '[{"field-id":1,"names":["id"]},{"field-id":2,"names":["v"]}]'
    return cat.create_table(("db", "t"), schema, properties={"schema.name-mapping.default": mapping})


def _data(tmp_path: Path, name: str, ids: list[int]) -> str:
    path = tmp_path / "wh" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "v": [f"v{i}" for i in ids]}), path)
    return f"file://{path}"


def _file(table, uri: str):
    from ddlcore.sinks.icecommit import data_file
    return data_file(table.io, uri)


def _ids(table, **scan) -> list[int]:
    return sorted(table.scan(**scan).to_arrow()["id"].to_pylist())


def test_a_row_delta_adds_data_and_position_deletes_in_one_snapshot_and_every_reader_applies_them(tmp_path):
    import duckdb
    import polars as pl
    from pyiceberg.manifest import ManifestContent

    t = _table(tmp_path)
    first = _data(tmp_path, "a.parquet", [1, 2, 3, 4])
    with t.transaction() as tx:
        with tx.update_snapshot().fast_append() as app:
            app.append_data_file(_file(t, first))
    t = t.refresh()
    # run 2: keys 2 and 4 change (rows at positions 1 and 3 of a.parquet deleted), 2 comes back in b
    second = _data(tmp_path, "b.parquet", [2])
    dels = f"file://{tmp_path}/wh/a-deletes.parquet"
    assert write_delete_file(t.io, dels, first, [3, 1, 3]) == 2
    with t.transaction() as tx:
        rowdelta.row_delta(tx, t.io, {"run": "2"}, add=[_file(t, second), delete_data_file(t.io, dels, first)],
                           remove=set())
    t = t.refresh()
    snap = t.current_snapshot()
    assert snap.summary["run"] == "2" and snap.summary["total-position-deletes"] == "2"
    assert snap.summary["total-records"] == "5" and snap.summary["total-delete-files"] == "1"
    assert sorted(m.content for m in snap.manifests(t.io)) == [ManifestContent.DATA, ManifestContent.DATA,
                                                               ManifestContent.DELETES]
    assert _ids(t) == [1, 2, 3]
    assert sorted(t.scan().to_pandas()["v"]) == ["v1", "v2", "v3"]
    for reader in ("native", "pyiceberg"):
        assert sorted(pl.scan_iceberg(t, reader_override=reader).collect()["id"].to_list()) == [1, 2, 3], reader
    arrow = t.scan().to_arrow()  # noqa: F841 - read by DuckDB by its variable name
    assert duckdb.sql("SELECT count(*), sum(id) FROM arrow").fetchall() == [(3, 6)]
    assert _ids(t, snapshot_id=t.snapshots()[0].snapshot_id) == [1, 2, 3, 4]  # time travel
    assert positions(t.io, [delete_data_file(t.io, dels, first)], first) == {1, 3}
    # run 3 compacts a.parquet: it and its delete file go, its live rows come back in c.parquet
    third = _data(tmp_path, "c.parquet", [1, 3])
    with t.transaction() as tx:
        rowdelta.row_delta(tx, t.io, {}, add=[_file(t, third)], remove={first, dels})
    t = t.refresh()
    assert _ids(t) == [1, 2, 3] and t.current_snapshot().summary["total-delete-files"] == "0"
    assert {task.file.file_path for task in t.scan().plan_files()} == {second, third}
    assert sorted(pl.scan_iceberg(t).collect()["id"].to_list()) == [1, 2, 3]
    assert _ids(t, snapshot_id=t.snapshots()[1].snapshot_id) == [1, 2, 3]
    with pytest.raises(ValueError, match="not in the table's current snapshot"):
        with t.transaction() as tx:
            rowdelta.row_delta(tx, t.io, {}, add=[], remove={first})
    with t.transaction() as tx:  # every file
        rowdelta.row_delta(tx, t.io, {}, add=[], remove=None)
    assert _ids(t.refresh()) == []


def test_a_delete_file_left_out_of_the_commit_shows_the_deleted_row(tmp_path):
    t = _table(tmp_path)
    first = _data(tmp_path, "a.parquet", [1, 2])
    second = _data(tmp_path, "b.parquet", [2])
    with t.transaction() as tx:
        rowdelta.row_delta(tx, t.io, {}, add=[_file(t, first)], remove=set())
    with t.transaction() as tx:  # key 2 updated, its delete file not committed
        rowdelta.row_delta(tx, t.io, {}, add=[_file(t, second)], remove=set())
    assert _ids(t.refresh()) == [1, 2, 2]


def test_another_pyiceberg_version_is_refused_before_anything_is_written(monkeypatch, tmp_path):
    import pyiceberg

    from ddlcore.sinks.iceberg import IcebergSink

    monkeypatch.setattr(pyiceberg, "__version__", "0.13.0")
    with pytest.raises(rowdelta.RowDeltaUnsupported, match="pyiceberg 0.12.x; installed: 0.13.0"):
        rowdelta.check_version()
    with pytest.raises(ValueError, match="installed: 0.13.0"):  # the sink, before a run does anything
        IcebergSink(str(tmp_path / "out"))


def test_removing_one_file_of_a_manifest_keeps_the_others_as_existing_entries(tmp_path):
    from pyiceberg.manifest import ManifestEntryStatus

    t = _table(tmp_path)
    a, b = _data(tmp_path, "a.parquet", [1, 2]), _data(tmp_path, "b.parquet", [3])
    with t.transaction() as tx:
        rowdelta.row_delta(tx, t.io, {}, add=[_file(t, a), _file(t, b)], remove=set())
    with t.transaction() as tx:
        rowdelta.row_delta(tx, t.io, {}, add=[], remove={a})
    t = t.refresh()
    assert _ids(t) == [3] and t.current_snapshot().summary["total-records"] == "1"
    entries = [e for m in t.current_snapshot().manifests(t.io)
               for e in m.fetch_manifest_entry(t.io, discard_deleted=False)]
    assert sorted((e.data_file.file_path, e.status) for e in entries) == [(a, ManifestEntryStatus.DELETED),
                                                                           (b, ManifestEntryStatus.EXISTING)]
