"""A table new to an SQL catalog created with its first snapshot in one step: its metadata built
once from ``pyiceberg``'s models, written as one metadata file by ``pyiceberg``'s serializer,
and registered with one ``INSERT`` of the row ``SqlCatalog.register_table`` inserts
(``register``).

Why: ``pyiceberg``'s transaction machinery (0.12) is most of the CPU of a new table's commit:
``create_table_transaction`` builds an empty metadata with pydantic ``model_construct`` (whose
default factories' signatures ``inspect`` parses at every call) and replays the creation's ten
updates on it with a full validation at commit; the snapshot producer deep-copies the metadata
and writes the manifest in an executor thread; ``commit_table`` loads the table (absent) and
deep-copies the metadata again (profile of ``benchmarks/iceberg.py``'s 500 × 4 first run,
docs/tables.md, "How it is verified").  Here the metadata is one validated ``TableMetadataV2``
with the fields ``new_table_metadata`` gives a new table (the schema, the unpartitioned spec,
the unsorted order, the properties), a later schema added as ``UpdateSchema`` adds it, and the
snapshot's fields as ``AddSnapshotUpdate`` and ``SetSnapshotRefUpdate`` (``main``) set them; the
snapshot's files by ``ddlcore.sinks.icesnap``.  The result is the metadata the transaction path
writes (``tests/sinks/test_icecreate.py`` compares both).

Crash safety: the files are written before the ``INSERT``, which is the commit: a crash before
it leaves unreferenced files only (the table stays absent; the next attempt writes new ones),
and a table that exists already makes the ``INSERT`` fail (``TableAlreadyExistsError``).

Which catalogs: ``pyiceberg``'s ``SqlCatalog`` (the embedded SQLite catalog, or a database
server; its table rows accept hierarchical namespaces), with a ``pyiceberg`` version of
``iceinternals.SUPPORTED``.  Every other catalog (REST, Hive, Glue, ...) creates tables through
``pyiceberg``'s transactions (``ddlcore.sinks.icecommit``).  Must not know: ddlcore's fields, runs or plans.
"""

from __future__ import annotations

from typing import Any

__all__ = ["supports", "create", "register", "register_all"]


def supports(catalog: Any) -> bool:
    """Whether ``create`` may create a table in ``catalog`` (module docstring)."""
    from pyiceberg.catalog.sql import SqlCatalog

    from .iceinternals import supported

    return isinstance(catalog, SqlCatalog) and supported()


def create(catalog: Any, identifier: tuple[str, ...], schemas: list[Any], location: str, properties: dict[str, str],
           *, operation: Any, files: list[Any], summary: dict[str, str],
           pending: list[tuple[tuple[str, ...], str]] | None = None) -> str:
    """Create the table ``identifier`` (absent from ``catalog``; its namespace exists) at
    ``location`` with ``properties`` and the ``schemas`` in order (field ids as given, fresh as
    ``assign_fresh_schema_ids`` gives them; schema ids 0, 1, ...; the last one current), and,
    when ``files`` (``DataFile``: data and position delete files) are given, one snapshot of
    ``operation`` (``pyiceberg.table.snapshots.Operation``) adding them, ``summary`` added to
    its summary.  Returns the metadata file's location.  ``pending``: the table is not
    registered but ``(identifier, metadata location)`` appended to it, for ``register_all``
    (the caller's commit).  Raises ``TableAlreadyExistsError`` (nothing registered then),
    ``ValueError`` for a property ``format-version`` other than 2, and the FileIO's errors."""
    from pyiceberg.io import load_file_io
    from pyiceberg.serializers import ToOutputFile
    from pyiceberg.table.locations import load_location_provider
    from pyiceberg.table.metadata import TableMetadataV2

    fields = _metadata_fields(schemas, location, properties)
    metadata = TableMetadataV2(**fields)
    provider = load_location_provider(location, metadata.properties)
    metadata_location = provider.new_table_metadata_file_location()
    io = load_file_io({**catalog.properties, **metadata.properties}, metadata_location)
    if files:
        metadata = TableMetadataV2(**fields, **_first_snapshot(metadata, provider, io, operation, files, summary))
    ToOutputFile.table_metadata(metadata, io.new_output(metadata_location))
    if pending is None:
        register(catalog, identifier, metadata_location)
    else:
        pending.append((identifier, metadata_location))
    return metadata_location


def _metadata_fields(schemas: list[Any], location: str, properties: dict[str, str]) -> dict[str, Any]:
    """The fields of a new table's ``TableMetadataV2`` without snapshots: what
    ``new_table_metadata`` gives (unpartitioned, unsorted) for the first schema, with the
    later ones added as ``UpdateSchema`` adds them (schema id one more, ``last-column-id``
    the highest field id any had)."""
    import uuid as uuids

    from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
    from pyiceberg.schema import Schema
    from pyiceberg.table import TableProperties
    from pyiceberg.table.sorting import UNSORTED_SORT_ORDER

    props = dict(properties)
    version = int(props.pop(TableProperties.FORMAT_VERSION, 2))
    if version != 2:
        raise ValueError(f"a new table is created here in Iceberg format version 2, not {version}")
    numbered = [s if s.schema_id == n else Schema(*s.fields, schema_id=n, identifier_field_ids=s.identifier_field_ids)
                for n, s in enumerate(schemas)]
    for schema in numbered:
        schema.check_format_version_compatibility(version)
    return {"location": location, "schemas": numbered, "current_schema_id": numbered[-1].schema_id,
            "last_column_id": max(s.highest_field_id for s in numbered),
            "partition_specs": [UNPARTITIONED_PARTITION_SPEC], "default_spec_id": UNPARTITIONED_PARTITION_SPEC.spec_id,
            "last_partition_id": UNPARTITIONED_PARTITION_SPEC.last_assigned_field_id,
            "sort_orders": [UNSORTED_SORT_ORDER], "default_sort_order_id": UNSORTED_SORT_ORDER.order_id,
            "properties": props, "table_uuid": uuids.uuid4()}


def register(catalog: Any, identifier: tuple[str, ...], metadata_location: str) -> None:
    """Register one table: ``register_all(catalog, [(identifier, metadata_location)])``."""
    register_all(catalog, [(identifier, metadata_location)])


def register_all(catalog: Any, tables: list[tuple[tuple[str, ...], str]]) -> None:
    """Register each table ``(identifier, metadata file location)`` of ``tables`` in the SQL
    catalog ``catalog``, their namespaces existing, in one database transaction: the rows
    ``SqlCatalog.register_table`` inserts, with one SQLAlchemy Core ``INSERT`` of them all
    (``register_table`` also checks the namespace and loads the table it registered: 3 ms of
    CPU per table here, the ``INSERT`` alone 0.25 ms; one transaction for many tables syncs
    the catalog's file and takes SQLite's write lock once instead of once per table).  All or
    none: when one of them exists, none is registered and ``TableAlreadyExistsError`` is
    raised (naming the table when there is one; ``register`` each to know which).  Relies on
    ``SqlCatalog._create_table_row`` and the ``IcebergTables`` model (``pyiceberg`` 0.12,
    ``iceinternals.SUPPORTED``); another version, or a catalog without them, goes through
    ``register_table``, one table at a time."""
    from pyiceberg.catalog import Catalog

    from .iceinternals import supported

    if not tables:
        return
    row_of = getattr(catalog, "_create_table_row", None)
    if not supported() or row_of is None:
        for identifier, metadata_location in tables:
            catalog.register_table(identifier, metadata_location)
        return
    from pyiceberg.catalog.sql import IcebergTables
    from pyiceberg.exceptions import TableAlreadyExistsError
    from sqlalchemy import insert
    from sqlalchemy.exc import IntegrityError

    rows = [row_of(Catalog.namespace_to_string(Catalog.namespace_from(identifier)),
                   Catalog.table_name_from(identifier), metadata_location) for identifier, metadata_location in tables]
    try:
        with catalog.engine.begin() as conn:
            conn.execute(insert(IcebergTables), rows)
    except IntegrityError as exc:
        names = ", ".join(f"{row['table_namespace']}.{row['table_name']}" for row in rows)
        raise TableAlreadyExistsError(f"Table {names} already exists" if len(rows) == 1 else
                                      f"One of the tables {names} already exists (none registered)") from exc


def _first_snapshot(metadata: Any, provider: Any, io: Any, operation: Any, files: list[Any],
                    extra: dict[str, str]) -> dict[str, Any]:
    """The metadata fields of the first snapshot of the new table ``metadata`` on its main
    branch (what ``AddSnapshotUpdate`` and ``SetSnapshotRefUpdate`` set; ``icesnap``)."""
    from pyiceberg.table.refs import MAIN_BRANCH, SnapshotRef, SnapshotRefType
    from pyiceberg.table.snapshots import SnapshotLogEntry

    from .icesnap import write_snapshot

    snapshot = write_snapshot(metadata, metadata.schema(), provider, io, operation, files, extra)
    return {"snapshots": [snapshot], "current_snapshot_id": snapshot.snapshot_id,
            "last_sequence_number": snapshot.sequence_number, "last_updated_ms": snapshot.timestamp_ms,
            "snapshot_log": [SnapshotLogEntry(snapshot_id=snapshot.snapshot_id, timestamp_ms=snapshot.timestamp_ms)],
            "refs": {MAIN_BRANCH: SnapshotRef(snapshot_id=snapshot.snapshot_id,
                                              snapshot_ref_type=SnapshotRefType.BRANCH)}}
