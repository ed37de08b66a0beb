"""A table new to an SQL catalog is created with its first snapshot in one step
(``ddlcore.sinks.icecreate``): its metadata, manifests and manifest list must be what
``pyiceberg``'s transactions write for the same table (the path every other catalog takes), and
every reader must read it.  The manifests' Avro files are ``pyiceberg``'s byte for byte
(``ddlcore.sinks.iceavro``)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ddlcore.history import SchemaHistory

pytest.importorskip("pyiceberg")

from ddlcore.sinks import icecreate  # noqa: E402
from ddlcore.sinks.iceberg import IcebergSink, open_catalog  # noqa: E402
from ddlcore.sinks.icecommit import commit  # noqa: E402

from .support import LocalFS, write_row  # noqa: E402

#: a dead field (added and dropped in the run: a reserving schema first), a rename, a widening
DDL = ["CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(9))", "ALTER TABLE t ADD COLUMN c INT",
       "ALTER TABLE t DROP COLUMN c", "ALTER TABLE t RENAME COLUMN a TO a2", "ALTER TABLE t MODIFY id BIGINT"]
SECOND = ["ALTER TABLE t ADD COLUMN d INT", "ALTER TABLE t MODIFY a2 BIGINT"]


def _run(out, hist, ddl, seq0, run, previous):
    """A run's output of ``ddl`` from ``seq0`` on (a row in every version the run touches) and
    its commit plan."""
    for i, text in enumerate(ddl):
        hist.record({"seq": seq0 + i, "ddl": text, "database": "d"})
    sink = IcebergSink(str(out), dialect="mysql")
    written = {v.version: v.table for v in sink.prepare(hist, hist.all_versions(), dialect="mysql")}
    for v in hist.versions("d.t"):
        if v.valid_to_seq is None or v.valid_to_seq > seq0:
            write_row(out, written[v.version], v.version, 1000 + max(v.valid_from_seq, seq0), run)
    plan = sink.plan(LocalFS(out), "", run, 1000 + seq0 + len(ddl), previous)
    plan["tables"][0]["dirs"] = sorted({str(p.parent.relative_to(out)) for p in out.rglob(f"{run}-*.parquet")})
    return plan


def _normal(table) -> dict:
    """A table's metadata, snapshot and manifests without what differs between two commits of
    the same content (uuids, times, snapshot ids, file names)."""
    meta = table.metadata
    snap = meta.current_snapshot()
    volatile = ("table-uuid", "last-updated-ms", "snapshots", "snapshot-log", "refs", "current-snapshot-id",
                "metadata-log", "location")
    out = {"metadata": {k: v for k, v in meta.model_dump().items() if k not in volatile}}
    assert set(volatile) <= set(meta.model_dump())  # (the names left out are its fields)
    out["metadata"]["metadata-log"] = len(meta.metadata_log)
    if snap is None:
        return {**out, "snapshots": len(meta.snapshots)}
    ids = [s.snapshot_id for s in meta.snapshots]
    parent = None if snap.parent_snapshot_id is None else ids.index(snap.parent_snapshot_id)
    out["snapshot"] = (snap.summary.operation, dict(snap.summary.additional_properties), snap.sequence_number,
                       snap.schema_id, parent, ids.index(snap.snapshot_id), len(ids))
    out["refs"] = {name: (ref.snapshot_ref_type, ref.snapshot_id == snap.snapshot_id)
                   for name, ref in meta.refs.items()}
    out["log"] = [e.snapshot_id == snap.snapshot_id for e in meta.snapshot_log]
    out["manifests"] = [
        (m.content, m.sequence_number, m.min_sequence_number, m.added_files_count, m.added_rows_count,
         m.existing_files_count, m.deleted_files_count, m.partition_spec_id,
         sorted((e.status, e.sequence_number, e.file_sequence_number, e.data_file.file_path, e.data_file.content,
                 e.data_file.record_count, e.data_file.file_size_in_bytes) for e in m.fetch_manifest_entry(table.io)))
        for m in snap.manifests(table.io)]
    return out


def test_tables_committed_without_transactions_equal_the_transaction_paths(tmp_path, monkeypatch):
    """A first run (a new table: ``icecreate``) and a second one adding a column and rows (an
    existing table: ``iceappend``), each against the transaction path."""
    import polars as pl

    fast, plain = tmp_path / "fast", tmp_path / "plain"
    tables = {}
    for out in (fast, plain):
        hist = SchemaHistory(dialect="mysql")
        for n, (ddl, seq0, previous) in enumerate([(DDL, 1, None), (SECOND, 1 + len(DDL), len(DDL))]):
            plan = _run(out, hist, ddl, seq0, f"r{n}", previous)
            with monkeypatch.context() as m:
                if out == plain:
                    m.setattr(icecreate, "supports", lambda catalog: False)
                commit(plan, LocalFS(out))
            tables[out, n] = open_catalog(plan["catalog"]).load_table(("d", "t__changes"))
    for n in range(2):
        a, b = _normal(tables[fast, n]), _normal(tables[plain, n])
        for name in ("metadata", "snapshot", "refs", "log"):
            assert a[name] == b[name], (n, name)
        # the same files (under each output's directory) in manifests of the same shape
        assert [m[:-1] for m in a["manifests"]] == [m[:-1] for m in b["manifests"]]
        assert [[e[3].replace(str(fast), "") for e in m[-1]] for m in a["manifests"]] == \
            [[e[3].replace(str(plain), "") for e in m[-1]] for m in b["manifests"]]
    first = _normal(tables[fast, 0])
    assert len(first["metadata"]["schemas"]) == 2  # the reserving schema, then the final
    assert len(_normal(tables[fast, 1])["manifests"]) == 2  # the first run's manifest kept
    rows = tables[fast, 1].scan().to_arrow().sort_by("_seq")
    assert rows.to_pylist() == tables[plain, 1].scan().to_arrow().sort_by("_seq").to_pylist()
    assert rows["a2"].to_pylist() == [(1000 + seq) * 100 + 2 for seq in range(1, 8)]  # a's values, renamed
    assert rows["d"].to_pylist()[-1] is not None
    assert pl.scan_iceberg(tables[fast, 1]).sort("_seq").collect()["a2"].to_list() == rows["a2"].to_pylist()
    old = tables[fast, 1].scan(snapshot_id=tables[fast, 0].metadata.current_snapshot_id).to_arrow()
    assert old.num_rows == 5 and "d" not in old.column_names  # time travel: the first run's rows and schema


def test_a_new_current_state_table_with_a_delete_file_equals_a_row_deltas(tmp_path):
    """A first snapshot of a data file and a position delete file (``Operation.OVERWRITE``, as
    ``rowdelta.row_delta`` commits the current state), read by pyiceberg and Polars; DuckDB's
    own ``iceberg_scan`` reads the manifests written here."""
    import polars as pl
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.io import load_file_io
    from pyiceberg.schema import Schema
    from pyiceberg.table.snapshots import Operation
    from pyiceberg.types import LongType, NestedField

    from ddlcore.sinks.icecommit import local_data_file
    from ddlcore.sinks.posdeletes import delete_data_file, write_delete_file
    from ddlcore.sinks.rowdelta import row_delta
    from tests.duckdb_iceberg import iceberg_scan, metadata_file

    cat = SqlCatalog("t", uri=f"sqlite:///{tmp_path}/cat.sqlite", warehouse=f"file://{tmp_path}/wh")
    cat.create_namespace("db")
    schema = Schema(NestedField(1, "id", LongType(), required=False))
    props = {"schema.name-mapping.default": '[{"field-id":1,"names":["id"]}]', "ddlcore.run": "r1"}
    data = tmp_path / "a.parquet"
    pq.write_table(pa.table({"id": pa.array([1, 2, 3], pa.int64())}), data)
    io = load_file_io({}, f"file://{tmp_path}")
    deletes = tmp_path / "a-deletes.parquet"
    write_delete_file(io, f"file://{deletes}", f"file://{data}", [1])
    files = [local_data_file(f"file://{data}"), delete_data_file(io, f"file://{deletes}", f"file://{data}")]
    summary = {"ddlcore.run": "r1", "ddlcore.last-seq": "7"}
    icecreate.create(cat, ("db", "fast"), [schema], f"file://{tmp_path}/wh/fast", props, operation=Operation.OVERWRITE,
                     files=files, summary=summary)
    tx = cat.create_table_transaction(("db", "plain"), schema, location=f"file://{tmp_path}/wh/plain",
                                      properties=dict(props))
    row_delta(tx, io, summary, add=files, remove=None)
    tx.commit_transaction()
    fast, plain = cat.load_table(("db", "fast")), cat.load_table(("db", "plain"))
    a, b = _normal(fast), _normal(plain)
    assert a == b
    assert [m[0] for m in a["manifests"]] == [0, 1]  # a data manifest and a delete manifest
    assert fast.scan().to_arrow()["id"].to_pylist() == [1, 3]
    assert sorted(pl.scan_iceberg(fast).collect()["id"].to_list()) == [1, 3]
    _cols, got = iceberg_scan(f"SELECT id FROM iceberg_scan('{metadata_file(fast)}') ORDER BY id")
    assert got == [(1,), (3,)]


def test_a_table_that_exists_is_refused_and_left_as_it_was(tmp_path, monkeypatch):
    import pyiceberg
    from pyiceberg.exceptions import TableAlreadyExistsError
    from pyiceberg.schema import Schema
    from pyiceberg.table.snapshots import Operation
    from pyiceberg.types import LongType, NestedField

    cat = open_catalog({"name": "ddlcore", "uri": f"sqlite:///{tmp_path}/c.sqlite", "warehouse": f"file://{tmp_path}"})
    cat.create_namespace(("db", "s"))
    schema = Schema(NestedField(1, "id", LongType(), required=False))
    first = icecreate.create(cat, ("db", "s", "t"), [schema], f"file://{tmp_path}/t", {}, operation=Operation.APPEND,
                             files=[], summary={})
    with pytest.raises(TableAlreadyExistsError, match="db.s.t"):
        icecreate.create(cat, ("db", "s", "t"), [schema], f"file://{tmp_path}/t", {}, operation=Operation.APPEND,
                         files=[], summary={})
    assert cat.load_table(("db", "s", "t")).metadata_location == first  # a two-level namespace, registered once
    monkeypatch.setattr(pyiceberg, "__version__", "0.13.0")  # another version: register_table's own path
    icecreate.register(cat, ("db", "s", "u"), first)
    assert cat.load_table(("db", "s", "u")).metadata.table_uuid == cat.load_table(("db", "s", "t")).metadata.table_uuid


def test_cached_avro_writers_write_pyiceberg_s_bytes(tmp_path, monkeypatch):
    """A manifest and a manifest list through ``iceavro`` and through ``pyiceberg``'s writers,
    with the same sync marker, are the same bytes (twice: the second use of the cache too)."""
    import os

    from pyiceberg.io import load_file_io
    from pyiceberg.manifest import (ManifestContent, ManifestEntry, ManifestEntryStatus, ManifestWriterV2,
                                    write_manifest_list)
    from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField

    from ddlcore.sinks.iceavro import manifest_list_writer, manifest_writer_class
    from ddlcore.sinks.icecommit import local_data_file

    monkeypatch.setattr(os, "urandom", lambda n: b"s" * n)
    data = tmp_path / "a.parquet"
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64())}), data)
    entry = ManifestEntry.from_args(status=ManifestEntryStatus.ADDED, snapshot_id=7, sequence_number=None,
                                    file_sequence_number=None, data_file=local_data_file(f"file://{data}"))
    schema = Schema(NestedField(1, "id", LongType(), required=False))
    io = load_file_io({}, f"file://{tmp_path}")
    written = {}
    for n, (name, cls) in enumerate([("ours", manifest_writer_class(False)), ("theirs", ManifestWriterV2),
                                     ("ours", manifest_writer_class(False))]):
        with cls(UNPARTITIONED_PARTITION_SPEC, schema, io.new_output(f"file://{tmp_path}/m{n}.avro"), 7,
                 "gzip") as w:
            w.add(entry)
        manifest = manifest if n else w.to_manifest_file()  # (the lists name the same manifest)
        path = f"file://{tmp_path}/l{n}.avro"
        lists = (manifest_list_writer(io.new_output(path), 7, None, 1, "gzip") if name == "ours" else
                 write_manifest_list(format_version=2, output_file=io.new_output(path), snapshot_id=7,
                                     parent_snapshot_id=None, sequence_number=1, avro_compression="gzip"))
        with lists as writer:
            writer.add_manifests([manifest])
        written.setdefault(name, []).append([(tmp_path / f"{k}{n}.avro").read_bytes() for k in "ml"])
    assert manifest.content == ManifestContent.DATA
    assert written["ours"][0] == written["theirs"][0] == written["ours"][1]


def test_a_crash_before_the_insert_leaves_unreferenced_files_and_the_roll_forward_creates_the_table(
        tmp_path, monkeypatch):
    from ddlcore.sinks.icecommit import IcebergCommitError

    out = tmp_path / "out"
    plan = _run(out, SchemaHistory(dialect="mysql"), DDL[:1], 1, "r0", None)

    def crash(catalog, tables):
        raise OSError("killed")

    with monkeypatch.context() as m:
        m.setattr(icecreate, "register_all", crash)
        with pytest.raises(IcebergCommitError, match=r"d\.t__changes.*OSError: killed"):
            commit(plan, LocalFS(out))
    cat = open_catalog(plan["catalog"])
    assert cat.list_tables("d") == []
    orphans = sorted((out / "_iceberg" / "d" / "t__changes" / "metadata").glob("*.metadata.json"))
    assert len(orphans) == 1
    commit(plan, LocalFS(out))  # the roll-forward
    table = cat.load_table(("d", "t__changes"))
    assert table.metadata_location.endswith(".metadata.json") and not table.metadata_location.endswith(
        orphans[0].name)
    assert len(table.metadata.snapshots) == 1 and table.scan().to_arrow().num_rows == 1


def test_new_tables_are_registered_in_one_transaction_all_or_none(tmp_path):
    """``register_all``: one catalog transaction for several new tables; when one of them
    exists, none is registered and the error names it (a single table) or says so."""
    from pyiceberg.exceptions import TableAlreadyExistsError
    from pyiceberg.schema import Schema
    from sqlalchemy import event

    cat = open_catalog({"name": "ddlcore", "uri": f"sqlite:///{tmp_path}/c.sqlite", "warehouse": f"file://{tmp_path}"})
    cat.create_namespace("d")
    pending: list = []
    locations = [icecreate.create(cat, ("d", f"t{i}"), [Schema()], f"file://{tmp_path}/d/t{i}", {},
                                  operation=None, files=[], summary={}, pending=pending) for i in range(3)]
    assert pending == [(("d", f"t{i}"), loc) for i, loc in enumerate(locations)]
    commits = []
    event.listen(cat.engine, "commit", lambda conn: commits.append(1))
    assert cat.list_tables("d") == []  # ``pending``: written, not registered
    icecreate.register_all(cat, pending)
    assert len(commits) == 1
    assert sorted(cat.list_tables("d")) == [("d", "t0"), ("d", "t1"), ("d", "t2")]
    assert [cat.load_table(("d", f"t{i}")).metadata_location for i in range(3)] == locations
    with pytest.raises(TableAlreadyExistsError, match=r"One of the tables d\.t3, d\.t1 already exists \(none"):
        icecreate.register_all(cat, [(("d", "t3"), locations[0]), (("d", "t1"), locations[1])])
    assert ("d", "t3") not in cat.list_tables("d")
    with pytest.raises(TableAlreadyExistsError, match=r"^Table d\.t2 already exists$"):
        icecreate.register(cat, ("d", "t2"), locations[2])


def test_a_new_table_taken_before_the_batch_is_registered_is_named(tmp_path, monkeypatch):
    """``commit_source_tables``: the run's new tables registered together; one created by
    someone else in the meantime (absent when the plan was carried out, there at the
    ``INSERT``) fails its own registration, named."""
    from ddlcore.sinks import icecommit
    from ddlcore.sinks.icecommit import IcebergCommitError

    out = tmp_path / "out"
    plan = _run(out, SchemaHistory(dialect="mysql"), DDL[:1], 1, "r0", None)
    entry = {**plan["tables"][0], "absent": True}
    entry["current"] = None
    cat = open_catalog(plan["catalog"])
    cat.create_namespace("d")
    real = icecreate.register_all

    def taken(catalog, tables):  # another writer registers the table just before the batch
        from pyiceberg.schema import Schema
        catalog.create_table(("d", "t__changes"), Schema())
        monkeypatch.setattr(icecreate, "register_all", real)
        return real(catalog, tables)

    monkeypatch.setattr(icecreate, "register_all", taken)
    run = {k: plan.get(k) for k in ("run", "last_seq", "dialect", "location")}
    with pytest.raises(IcebergCommitError, match=r"^Iceberg commit of table d\.t__changes \(source table d\.t\): "
                       r"TableAlreadyExistsError: Table d\.t__changes already exists"):
        icecommit.commit_source_tables(cat, run, [(entry, [])])
