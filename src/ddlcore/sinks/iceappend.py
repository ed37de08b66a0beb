"""An existing table's commit of its next schemas, a fast append and its properties, built
without ``pyiceberg``'s transaction machinery and committed with the catalog's own
``commit_table`` (requirements checked, metadata file written, catalog row swapped there).

Why: a ``Transaction`` (``pyiceberg`` 0.12) re-applies its staged updates each time its
metadata is read, ``UpdateSchema`` rebuilds the schema with a visitor, and the snapshot producer
deep-copies the metadata and writes its manifest in an executor thread with the Avro schema work
done again (``ddlcore.sinks.icesnap`` writes the snapshot instead).  The updates are those the
transaction path stages: per schema, ``AddSchemaUpdate`` + ``SetCurrentSchemaUpdate`` (or only
the latter for a schema the table had), as ``UpdateSchema`` commits a schema given whole; then
``AddSnapshotUpdate`` and the ``main`` branch; then ``SetPropertiesUpdate``.  Requirements: the
table's uuid, its current schema id (when the schema changes) and its main branch's snapshot.

Which catalogs: ``icecreate.supports`` (``pyiceberg``'s ``SqlCatalog``); the others commit
through transactions (``ddlcore.sinks.icecommit``).  Must not know: ddlcore's fields or runs.
"""

from __future__ import annotations

from typing import Any

__all__ = ["append"]


def _schema_updates(metadata: Any, schemas: list[Any]) -> tuple[list[Any], Any]:
    """The updates making each of ``schemas`` current in turn (``UpdateSchema``'s rule: a schema
    equal to one the table has is set current by its id, a new one added with the next id) and
    the last one with its id."""
    from pyiceberg.schema import Schema
    from pyiceberg.table.update import AddSchemaUpdate, SetCurrentSchemaUpdate

    known = list(metadata.schemas)
    current = metadata.schema()
    updates: list[Any] = []
    for schema in schemas:
        same = next((s for s in known if s == schema), None)
        if same is not None and same.schema_id == current.schema_id:
            continue
        if same is None:
            same = Schema(*schema.fields, schema_id=1 + max(s.schema_id for s in known),
                          identifier_field_ids=schema.identifier_field_ids)
            known.append(same)
            updates += [AddSchemaUpdate(schema=same), SetCurrentSchemaUpdate(schema_id=-1)]
        else:
            updates.append(SetCurrentSchemaUpdate(schema_id=same.schema_id))
        current = same
    return updates, current


def append(catalog: Any, table: Any, schemas: list[Any], properties: dict[str, str], *, operation: Any,
           files: list[Any], summary: dict[str, str]) -> None:
    """Commit to ``table`` (of ``catalog``) the ``schemas`` in order (the last one current;
    none: the schema stays), when ``files`` (``DataFile``) are given one snapshot of
    ``operation`` adding them to its main branch (``summary`` added to the snapshot's summary),
    and ``properties``, in one ``commit_table``.  Raises what ``commit_table`` raises
    (``CommitFailedException`` when the table changed since ``table`` was loaded)."""
    from pyiceberg.table.refs import MAIN_BRANCH, SnapshotRefType
    from pyiceberg.table.update import (AddSnapshotUpdate, AssertCurrentSchemaId, AssertRefSnapshotId,
                                        AssertTableUUID, SetPropertiesUpdate, SetSnapshotRefUpdate)

    from .icesnap import write_snapshot

    meta = table.metadata
    updates, schema = _schema_updates(meta, schemas)
    requirements: list[Any] = [AssertTableUUID(uuid=meta.table_uuid)]
    if updates:
        requirements.append(AssertCurrentSchemaId(current_schema_id=meta.current_schema_id))
    if files:
        snapshot = write_snapshot(meta, schema, table.location_provider(), table.io, operation, files, summary)
        updates += [AddSnapshotUpdate(snapshot=snapshot),
                    SetSnapshotRefUpdate(snapshot_id=snapshot.snapshot_id,
                                         parent_snapshot_id=snapshot.parent_snapshot_id, ref_name=MAIN_BRANCH,
                                         type=SnapshotRefType.BRANCH)]
        requirements.append(AssertRefSnapshotId(snapshot_id=snapshot.parent_snapshot_id, ref=MAIN_BRANCH))
    updates.append(SetPropertiesUpdate(updates=properties))
    catalog.commit_table(table, tuple(requirements), tuple(updates))
