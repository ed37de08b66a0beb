"""One Iceberg snapshot that adds data files and position delete files and removes files (data
or delete), as Iceberg Java's ``RowDelta`` plus file removals: what the current-state merge
commits (docs/tables.md, "The current-state table").

Owns: the only use of ``pyiceberg`` internals in ddlcore.  ``pyiceberg`` 0.12 reads position
deletes (``io/pyarrow.py`` ``_read_deletes``) but has no public API that commits a delete file:
its snapshot producers write every added file into a *data* manifest.  ``RowDelta`` is a
``pyiceberg.table.update.snapshot._SnapshotProducer`` whose ``_manifests`` writes the added
data files into a data manifest and the added delete files into a delete manifest (Iceberg
spec, "Manifests": ``content`` = ``deletes``), records removed files as ``DELETED`` entries in
a manifest of their own content, and keeps every other manifest (rewritten without the removed
entries where it held one).  The snapshot summary is ``pyiceberg``'s own
(``SnapshotSummaryCollector`` counts data and position delete files apart).  Must not know:
ddlcore's tables.

Guard: the internals used here (``_SnapshotProducer``'s constructor, ``_manifests``,
``_added_data_files``, ``_deleted_data_files``, ``new_manifest_output``, ``_parent_snapshot_id``,
``_compression``; ``ManifestWriterV2``, through ``iceavro.manifest_writer``) are those of
``pyiceberg`` ``SUPPORTED``; another version raises ``RowDeltaUnsupported`` before anything is
written (``check_version``), and ``tests/sinks/test_rowdelta.py`` checks the manifests this
module writes.
"""

from __future__ import annotations

from typing import Any

from .iceinternals import SUPPORTED, supported

__all__ = ["RowDelta", "RowDeltaUnsupported", "SUPPORTED", "check_version", "row_delta"]


class RowDeltaUnsupported(RuntimeError):
    """The installed ``pyiceberg`` is not a version ``RowDelta`` was written against."""


def check_version() -> None:
    """Raise ``RowDeltaUnsupported`` unless ``pyiceberg.__version__`` starts with one of
    ``SUPPORTED``."""
    import pyiceberg

    if not supported():
        raise RowDeltaUnsupported(
            f"ddlcore's current-state merge commits position delete files through pyiceberg internals written "
            f"for pyiceberg {' / '.join(v + 'x' for v in SUPPORTED)}; installed: {pyiceberg.__version__} "
            f"(pip install 'pyiceberg>=0.12,<0.13')")


def _producer_class() -> type:
    from pyiceberg.manifest import DataFileContent, ManifestContent, ManifestEntryStatus, ManifestEntry
    from pyiceberg.table.snapshots import Operation
    from pyiceberg.table.update.snapshot import _SnapshotProducer

    from .iceavro import manifest_writer

    class _RowDelta(_SnapshotProducer):
        """See the module docstring.  ``add`` a data or position delete file, ``remove`` files
        of the parent snapshot by path, then ``commit`` (inside a transaction)."""

        def __init__(self, transaction: Any, io: Any, snapshot_properties: dict[str, str]):
            super().__init__(Operation.OVERWRITE, transaction, io, snapshot_properties=snapshot_properties)
            self._kept: list[Any] = []  # the parent's manifests, kept as they are or rewritten
            self._gone: list[Any] = []  # the parent's entries of the removed files

        def add(self, data_file: Any) -> None:
            if data_file.content not in (DataFileContent.DATA, DataFileContent.POSITION_DELETES):
                raise ValueError(f"RowDelta adds data and position delete files, not {data_file.content}")
            self._added_data_files.append(data_file)

        def remove(self, paths: set[str] | None) -> None:
            """Remove the files at ``paths`` (data or delete files of the parent snapshot; every
            one must be live there, else ``ValueError``); ``None``: every file."""
            parent = self._transaction.table_metadata.snapshot_by_id(self._parent_snapshot_id) \
                if self._parent_snapshot_id is not None else None
            found: set[str] = set()
            self._kept, self._gone = [], []
            for manifest in parent.manifests(self._io) if parent is not None else []:
                entries = manifest.fetch_manifest_entry(self._io, discard_deleted=True)
                if not entries:
                    continue  # only files an earlier snapshot removed: not carried on
                gone = [e for e in entries if paths is None or e.data_file.file_path in paths]
                if not gone:
                    self._kept.append(manifest)
                    continue
                found.update(e.data_file.file_path for e in gone)
                self._gone += gone
                rest = [e for e in entries if paths is not None and e.data_file.file_path not in paths]
                if rest:
                    with self._writer(manifest.content) as w:
                        for e in rest:
                            w.existing(e)
                    self._kept.append(w.to_manifest_file())
            missing = sorted(set(paths or ()) - found)
            if missing:
                raise ValueError(f"files to remove are not in the table's current snapshot: {', '.join(missing)}")
            self._deleted_data_files = {e.data_file for e in self._gone}

        def _writer(self, content: Any) -> Any:
            meta = self._transaction.table_metadata
            return manifest_writer(content, meta.spec(), meta.schema(), self.new_manifest_output(), self._snapshot_id,
                                   self._compression)

        def _existing_manifests(self) -> list[Any]:
            return self._kept

        def _deleted_entries(self) -> list[Any]:
            return self._gone

        def _manifests(self) -> list[Any]:
            out = []
            for content, kind in ((ManifestContent.DATA, DataFileContent.DATA),
                                  (ManifestContent.DELETES, DataFileContent.POSITION_DELETES)):
                added = [f for f in self._added_data_files if f.content == kind]
                gone = [e for e in self._gone if e.data_file.content == kind]
                if not added and not gone:
                    continue
                with self._writer(content) as w:
                    for f in added:
                        w.add(ManifestEntry.from_args(status=ManifestEntryStatus.ADDED, snapshot_id=self._snapshot_id,
                                                      sequence_number=None, file_sequence_number=None, data_file=f))
                    for e in gone:
                        w.delete(e)
                out.append(w.to_manifest_file())
            return out + self._kept

    return _RowDelta


_CLASS: list[type] = []


def RowDelta(transaction: Any, io: Any, snapshot_properties: dict[str, str]) -> Any:  # noqa: N802 - a class
    """A row-delta snapshot producer for ``transaction`` (module docstring); raises
    ``RowDeltaUnsupported`` for a ``pyiceberg`` it was not written against."""
    check_version()
    if not _CLASS:
        _CLASS.append(_producer_class())
    return _CLASS[0](transaction, io, snapshot_properties)


def row_delta(transaction: Any, io: Any, snapshot_properties: dict[str, str], *, add: list[Any],
              remove: set[str] | None) -> None:
    """Commit one snapshot to ``transaction`` that adds the ``DataFile``s ``add`` (data and
    position delete files) and removes the files at the paths ``remove`` (``None``: every file
    of the current snapshot)."""
    delta = RowDelta(transaction, io, snapshot_properties)
    delta.remove(None if remove is None else set(remove))
    for f in add:
        delta.add(f)
    delta.commit()
