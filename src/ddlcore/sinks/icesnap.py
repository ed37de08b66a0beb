"""One snapshot's files written without ``pyiceberg``'s snapshot producer: the manifests of the
files it adds, the manifest list (the parent's live manifests kept, as a fast append keeps them),
and the ``Snapshot`` with ``pyiceberg``'s summary.

Why: ``pyiceberg``'s producer (0.12) deep-copies the table's metadata when it starts, writes
each manifest in an executor thread and builds every Avro file's schema work again; here the
manifests are written by ``ddlcore.sinks.iceavro``'s writers in the caller's thread.  The names
are ``pyiceberg``'s (``<commit uuid>-m<n>.avro``, ``snap-<snapshot id>-0-<commit uuid>.avro``,
Iceberg Java's), the summary is ``SnapshotSummaryCollector``'s updated from the parent's
(``update_snapshot_summaries``), the sequence number the metadata's next.  For the
``pyiceberg`` versions ``iceinternals.SUPPORTED`` (the callers check it).

Owns: ``write_snapshot``.  Must not know: catalogs, ddlcore's tables.
"""

from __future__ import annotations

import uuid
from typing import Any

__all__ = ["write_snapshot"]


def write_snapshot(metadata: Any, schema: Any, provider: Any, io: Any, operation: Any, files: list[Any],
                   extra: dict[str, str]) -> Any:
    """The ``Snapshot`` of the table ``metadata`` on its main branch whose current schema is (or
    becomes, in the same commit) ``schema`` that adds ``files`` (``DataFile``: data and position
    delete files; one manifest per content, data first) to the main branch's snapshot (its live
    manifests kept); ``operation``: its summary's, ``extra`` added to it.  ``provider``: the
    table's ``LocationProvider``; ``io``: its FileIO.  Writes the manifests and the manifest list;
    raises ``ValueError`` for a file of another content (equality deletes)."""
    from pyiceberg.manifest import DataFileContent, ManifestContent, ManifestEntry, ManifestEntryStatus
    from pyiceberg.table import TableProperties
    from pyiceberg.table.refs import MAIN_BRANCH
    from pyiceberg.table.snapshots import Snapshot, SnapshotSummaryCollector, Summary, update_snapshot_summaries

    from .iceavro import manifest_list_writer, manifest_writer

    other = {f.content for f in files} - {DataFileContent.DATA, DataFileContent.POSITION_DELETES}
    if other:
        raise ValueError(f"a snapshot written here adds data and position delete files only, not {sorted(other)}")
    commit_uuid = uuid.uuid4()
    snapshot_id = metadata.new_snapshot_id()
    parent = metadata.snapshot_by_name(MAIN_BRANCH)
    spec = metadata.spec()
    compression = metadata.properties.get(TableProperties.WRITE_AVRO_COMPRESSION,
                                          TableProperties.WRITE_AVRO_COMPRESSION_DEFAULT)
    manifests = []
    for content, kind in ((ManifestContent.DATA, DataFileContent.DATA),
                          (ManifestContent.DELETES, DataFileContent.POSITION_DELETES)):
        added = [f for f in files if f.content == kind]
        if not added:
            continue
        output = io.new_output(provider.new_metadata_location(f"{commit_uuid}-m{len(manifests)}.avro"))
        with manifest_writer(content, spec, schema, output, snapshot_id, compression) as writer:
            for f in added:
                writer.add(ManifestEntry.from_args(status=ManifestEntryStatus.ADDED, snapshot_id=snapshot_id,
                                                   sequence_number=None, file_sequence_number=None, data_file=f))
        manifests.append(writer.to_manifest_file())
    if parent is not None:  # as a fast append keeps them (pyiceberg's _FastAppendFiles)
        manifests += [m for m in parent.manifests(io) if m.has_added_files() or m.has_existing_files()]
    sequence_number = metadata.next_sequence_number()
    parent_id = parent.snapshot_id if parent is not None else None
    manifest_list = provider.new_metadata_location(f"snap-{snapshot_id}-0-{commit_uuid}.avro")
    with manifest_list_writer(io.new_output(manifest_list), snapshot_id, parent_id, sequence_number,
                              compression) as writer:
        writer.add_manifests(manifests)
    collector = SnapshotSummaryCollector()
    for f in files:
        collector.add_file(f, schema=schema, partition_spec=spec)
    summary = update_snapshot_summaries(Summary(operation=operation, **collector.build(), **extra),
                                        previous_summary=parent.summary if parent is not None else None)
    return Snapshot(snapshot_id=snapshot_id, parent_snapshot_id=parent_id, manifest_list=manifest_list,
                    sequence_number=sequence_number, summary=summary, schema_id=schema.schema_id)
