"""``pyiceberg``'s manifest and manifest-list writers (Iceberg spec v2, "Manifests" and
"Manifest Lists") with their Avro schema work done once per process.

``pyiceberg`` (0.12) builds, for every Avro file it writes, the file's schema (a manifest
entry's: ``manifest_entry_schema_with_data_file`` with the table's partition type), the writer
tree that converts its records (``resolve_writer``) and the schema's Avro JSON for the header
(``AvroSchemaConversion.iceberg_to_avro``): 2 ms of CPU per snapshot of one manifest and one
manifest list on this machine, more than writing them.  All three depend only on the format
version, the partition type and the record schema, never on the file's content: here they are
computed once per (schemas, name) and kept.  The files written are byte for byte pyiceberg's
(``tests/sinks/test_icecreate.py`` compares them with the same sync marker).  Relies on
``AvroOutputFile``'s attributes and header layout, ``ManifestWriter._with_partition`` and
``ManifestListWriter``'s attributes: for the ``pyiceberg`` versions ``iceinternals.SUPPORTED``
(the callers check it).

Owns: ``manifest_writer_class``, ``manifest_writer``, ``manifest_list_writer``, ``prepare``.  Must not know:
tables, snapshots.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["manifest_writer_class", "manifest_writer", "manifest_list_writer", "prepare"]

_CLASSES: dict[str, type] = {}
_RESOLVED: dict[tuple[int, int, str], tuple[Any, Any, Any, str]] = {}  # ids → (schemas kept alive, writer, JSON)
_ENTRY_SCHEMAS: dict[tuple[int, Any], tuple[Any, Any]] = {}


def _resolved(file_schema: Any, record_schema: Any, name: str) -> tuple[Any, str]:
    """The writer of ``record_schema`` records into ``file_schema`` and the Avro JSON of
    ``file_schema`` named ``name`` (computed once; the schemas are kept, so their ids stay
    theirs)."""
    key = (id(file_schema), id(record_schema), name)
    have = _RESOLVED.get(key)
    if have is None:
        import json

        from pyiceberg.avro.resolver import construct_writer, resolve_writer
        from pyiceberg.utils.schema_conversion import AvroSchemaConversion

        writer = (construct_writer(file_schema=file_schema) if record_schema is None
                  else resolve_writer(record_schema=record_schema, file_schema=file_schema))
        text = json.dumps(AvroSchemaConversion().iceberg_to_avro(file_schema, schema_name=name))
        have = _RESOLVED[key] = (file_schema, record_schema, writer, text)
    return have[2], have[3]


def _output_class() -> type:
    """``AvroOutputFile`` taking its writer and header schema from ``_resolved``."""
    from pyiceberg.avro import file as avro
    from pyiceberg.avro.resolver import construct_writer
    from pyiceberg.table import TableProperties

    meta_writer = construct_writer(avro.META_SCHEMA)

    class CachedAvroOutputFile(avro.AvroOutputFile):
        def __init__(self, output_file: Any, file_schema: Any, schema_name: str, record_schema: Any = None,
                     metadata: dict[str, str] | None = None) -> None:
            self.output_file = output_file
            self.file_schema = file_schema
            self.schema_name = schema_name
            self.sync_bytes = os.urandom(avro.SYNC_SIZE)
            self.writer, self._avro_json = _resolved(file_schema, record_schema, schema_name)
            self.metadata = metadata or {}

        def _write_header(self) -> None:  # pyiceberg's, with the schema's JSON computed once
            codec = self.metadata.get(avro.AVRO_CODEC_KEY, TableProperties.WRITE_AVRO_COMPRESSION_DEFAULT)
            codec = avro.CODEC_MAPPING_ICEBERG_TO_AVRO.get(codec) or codec
            meta = {**self.metadata, avro._SCHEMA_KEY: self._avro_json, avro.AVRO_CODEC_KEY: codec}
            meta_writer.write(self.encoder, avro.AvroFileHeader(avro.MAGIC, meta, self.sync_bytes))

    return CachedAvroOutputFile


def _class(name: str) -> type:
    """The writer class ``name`` (``_writer_classes``), the classes built once."""
    if not _CLASSES:
        _CLASSES.update(_writer_classes(_output_class()))
    return _CLASSES[name]


def _writer_classes(output: type) -> dict[str, type]:
    from pyiceberg.manifest import (DEFAULT_READ_VERSION, MANIFEST_LIST_FILE_SCHEMAS, ManifestContent,
                                    ManifestListWriterV2, ManifestWriterV2)

    class CachedManifestWriterV2(ManifestWriterV2):
        """A v2 data manifest writer (``ManifestWriterV2``) with the cached Avro work."""

        def new_writer(self) -> Any:
            key = (self.version, self._spec.partition_type(self._schema))
            if key not in _ENTRY_SCHEMAS:
                _ENTRY_SCHEMAS[key] = (self._with_partition(self.version), self._with_partition(DEFAULT_READ_VERSION))
            file_schema, record_schema = _ENTRY_SCHEMAS[key]
            return output(output_file=self._output_file, file_schema=file_schema, record_schema=record_schema,
                          schema_name="manifest_entry", metadata=self._meta)

    class DeleteManifestWriter(CachedManifestWriterV2):
        """A v2 manifest of delete files: ``content`` 1 in the manifest list, ``deletes`` in
        the Avro metadata."""

        def content(self) -> Any:
            return ManifestContent.DELETES

        @property
        def _meta(self) -> dict[str, str]:
            return {**super()._meta, "content": "deletes"}

    class CachedManifestListWriterV2(ManifestListWriterV2):
        """A v2 manifest list writer (``ManifestListWriterV2``) with the cached Avro work."""

        def __enter__(self) -> Any:
            self._writer = output(output_file=self._output_file, record_schema=MANIFEST_LIST_FILE_SCHEMAS[
                DEFAULT_READ_VERSION], file_schema=MANIFEST_LIST_FILE_SCHEMAS[self._format_version],
                schema_name="manifest_file", metadata=self._meta)
            self._writer.__enter__()
            return self

    return {"data": CachedManifestWriterV2, "deletes": DeleteManifestWriter, "list": CachedManifestListWriterV2}


def manifest_writer_class(deletes: bool) -> type:
    """The class of a v2 manifest writer (``ManifestWriterV2``'s constructor) of data files or,
    ``deletes``, of delete files, with the cached Avro work.  For the ``pyiceberg`` versions
    ``iceinternals.SUPPORTED`` only: callers check it (``rowdelta.check_version``)."""
    return _class("deletes" if deletes else "data")


def manifest_writer(content: Any, spec: Any, schema: Any, output: Any, snapshot_id: int, compression: Any) -> Any:
    """A v2 manifest writer (``pyiceberg.manifest.ManifestWriterV2``) of ``content``
    (``ManifestContent``: data files, or delete files: ``content`` 1 in the manifest list,
    ``deletes`` in the Avro metadata, Iceberg spec "Manifests") into ``output`` (an
    ``OutputFile``), its entries added by ``snapshot_id``; ``compression``: the Avro codec.
    Same versions as ``manifest_writer_class`` (the callers check them: ``rowdelta.RowDelta``,
    ``icesnap.write_snapshot``'s)."""
    from pyiceberg.manifest import ManifestContent

    return manifest_writer_class(content == ManifestContent.DELETES)(spec, schema, output, snapshot_id, compression)


def manifest_list_writer(output_file: Any, snapshot_id: int, parent_snapshot_id: int | None, sequence_number: int,
                         compression: Any) -> Any:
    """A v2 manifest list writer (``pyiceberg.manifest.write_manifest_list``'s arguments for
    format version 2) with the cached Avro work; same versions as ``manifest_writer_class``."""
    return _class("list")(output_file, snapshot_id, parent_snapshot_id, sequence_number, compression)


def prepare() -> None:
    """Build the classes and the Avro work of an unpartitioned table's manifests and of the
    manifest list now (before forking workers, which then share them), where the ``pyiceberg``
    version is supported; else nothing."""
    from pyiceberg.manifest import DEFAULT_READ_VERSION, MANIFEST_LIST_FILE_SCHEMAS
    from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
    from pyiceberg.schema import Schema

    from .iceinternals import supported

    if not supported():
        return
    writer = manifest_writer_class(False)(UNPARTITIONED_PARTITION_SPEC, Schema(), None, 0, "gzip")
    writer.new_writer()
    _resolved(MANIFEST_LIST_FILE_SCHEMAS[2], MANIFEST_LIST_FILE_SCHEMAS[DEFAULT_READ_VERSION], "manifest_file")
