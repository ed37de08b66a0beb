"""The Iceberg commit of one run: for every table of the plan (``IcebergSink.plan``), one
Iceberg transaction (schema changes, the run's data files appended, properties), then one for
its current-state table when the run changed it (the run's data files and position delete
files added and the files they replace removed, in one snapshot: ``ddlcore.sinks.rowdelta``),
idempotent.

Owns: turning the fields of ``ddlcore.sinks.fields`` into Iceberg schema updates against what
the table's last commit declared (table property ``ddlcore.fields``: field key → Iceberg ids),
the name mapping, and the fast append of the files Spark wrote (``DataFile`` from each file's
Parquet footer: record count and size; no column statistics).  Must not know: Spark jobs.

Idempotence: the transaction sets ``ddlcore.run`` (the run id) and ``ddlcore.last-seq``; a
roll-forward finds its run there and skips the table (a commit is all or nothing).
"""

from __future__ import annotations

import json
from typing import Any

from .fields import Field
from .icetypes import to_iceberg

__all__ = ["commit", "data_file", "file_uri", "META_FIELDS", "PROPERTY_FIELDS", "PROPERTY_RUN", "PROPERTY_SEQ"]

PROPERTY_FIELDS = "ddlcore.fields"
PROPERTY_RUN = "ddlcore.run"
PROPERTY_SEQ = "ddlcore.last-seq"
NAME_MAPPING = "schema.name-mapping.default"
#: the pipeline's columns (docs/pipeline.md) after the source columns; ``_before`` is a struct
#: of the source columns' fields
META_FIELDS = (("_op", "string"), ("_seq", "long"), ("_position", "string"), ("_ts", "long"),
               ("_tx", "string"), ("_row", "long"), ("_absent", ["list", "string"]), ("_before", None),
               ("_before_absent", ["list", "string"]))
BEFORE = "_before"
#: tables committed at the same time (one Iceberg transaction each)
COMMIT_THREADS = 4
_TMP = "__ddlcore_rename_"


def file_uri(text: str) -> str:
    """A Hadoop-qualified ``file:/x`` as ``file:///x`` (what ``pyiceberg``'s FileIO reads)."""
    if text.startswith("file:/") and not text.startswith("file:///"):
        return "file:///" + text[len("file:/"):].lstrip("/")
    return text


def _schema(meta: tuple[tuple[str, Any], ...] = META_FIELDS) -> Any:
    """A new table's schema: the pipeline's columns ``meta`` (``_before`` empty); ``_evolve``
    adds the source columns in the same transaction."""
    from pyiceberg.schema import Schema, assign_fresh_schema_ids
    from pyiceberg.types import NestedField, StructType

    top = [NestedField(-1, n, StructType() if spec is None else to_iceberg(spec), required=False)
           for n, spec in meta]
    return assign_fresh_schema_ids(Schema(*top))


def _tmp(key: str) -> str:
    return f"{_TMP}{key.replace('.', '_')}"


def _evolve(tx: Any, old: dict[str, dict[str, Any]], fields: list[Field], nested: str | None = BEFORE,
            anchor: str = "_op") -> None:
    """Schema updates from the fields the table declared (``old``: key → declared name, spec,
    doc, alive) to ``fields``, each on the top level and in ``_before``: deletes, renames
    (through temporary names, so swaps work), widenings and doc changes, adds (before ``_op``).
    A field new to the table and already dead (added and dropped within one run) is added
    under a temporary name and deleted, so that it has an id for the name mapping: its
    physical name is in this run's files.  ``nested``: the struct repeating the source columns
    (``None``: none); ``anchor``: the first pipeline column (source columns are added before it)."""
    want = {f.key: f for f in fields if f.alive}
    live = {k: v for k, v in old.items() if v.get("alive", True)}
    gone = [k for k in live if k not in want]
    moved = [k for k in live if k in want and want[k].name != live[k]["name"]]
    dead = [f for f in fields if not f.alive and f.key not in old]
    if gone:
        with tx.update_schema(allow_incompatible_changes=True) as u:
            for k in gone:
                u.delete_column((live[k]["name"],))
                if nested:
                    u.delete_column((nested, live[k]["name"]))
    for step in ("tmp", "final"):
        if moved:
            with tx.update_schema() as u:
                for k in moved:
                    src = live[k]["name"] if step == "tmp" else _tmp(k)
                    dst = _tmp(k) if step == "tmp" else want[k].name
                    u.rename_column((src,), dst)
                    if nested:
                        u.rename_column((nested, src), dst)
    changed = [k for k in live if k in want and (want[k].spec != live[k]["spec"] or want[k].doc != live[k]["doc"])]
    added = [(want[k], want[k].name) for k in want if k not in old] + [(f, _tmp(f.key)) for f in dead]
    if changed or added:
        with tx.update_schema() as u:
            for k in changed:
                f = want[k]
                kind = to_iceberg(f.spec) if f.spec != live[k]["spec"] else None
                for path in ((f.name,),) + (((nested, f.name),) if nested else ()):
                    u.update_column(path, field_type=kind, doc=f.doc)
            for f, name in added:
                u.add_column((name,), to_iceberg(f.spec), doc=f.doc)
                if nested:
                    u.add_column((nested, name), to_iceberg(f.spec), doc=f.doc)
                u.move_before((name,), (anchor,))
    if dead:
        with tx.update_schema(allow_incompatible_changes=True) as u:
            for f in dead:
                u.delete_column((_tmp(f.key),))
                if nested:
                    u.delete_column((nested, _tmp(f.key)))


def _reorder(tx: Any, names: list[str] | None, nested: tuple[str, ...] = ()) -> None:
    """Move the first ``len(names)`` top-level fields (and those of each struct in ``nested``)
    into the order ``names`` (``fields.column_order``: an added column at the source's
    ``AFTER`` / ``FIRST`` position); fields already in place are not moved."""
    if not names:
        return
    schema = tx.table_metadata.schema()
    for parent in ((),) + tuple((n,) for n in nested):
        kind = schema.as_struct() if not parent else schema.find_field(parent[0]).field_type
        have = [f.name for f in kind.fields if f.name in names]
        if have == names:
            continue
        with tx.update_schema() as u:
            for i, name in enumerate(names):
                if have[i] != name:
                    if i == 0:
                        u.move_first(parent + (name,))
                    else:
                        u.move_after(parent + (name,), parent + (names[i - 1],))
                    have.remove(name)
                    have.insert(i, name)


def _mapped(field: Any, names: list[str]) -> dict[str, Any]:
    """The name-mapping entry of a schema field: ``names``, and its nested fields by the names
    Spark gives them in Parquet (``element``; ``key`` / ``value``; struct fields by name)."""
    out: dict[str, Any] = {"field-id": field.field_id, "names": list(names)}
    nested = _nested(field.field_type)
    if nested:
        out["fields"] = nested
    return out


def _nested(kind: Any) -> list[dict[str, Any]]:
    from pyiceberg.types import ListType, MapType, StructType

    if isinstance(kind, ListType):
        return [_mapped(kind.element_field, ["element"])]
    if isinstance(kind, MapType):
        return [_mapped(kind.key_field, ["key"]), _mapped(kind.value_field, ["value"])]
    if isinstance(kind, StructType):
        return [_mapped(f, [f.name]) for f in kind.fields]
    return []


def _field_of(metadata: Any, name: str) -> tuple[Any, Any] | None:
    """The top-level and ``_before`` field called ``name`` in the newest schema of ``metadata``
    that has it (a field deleted in this transaction is in an earlier one)."""
    for schema in reversed(metadata.schemas):
        top = schema.as_struct().field_by_name(name)
        if top is not None:
            return top, schema.find_field(BEFORE).field_type.field_by_name(name)
    return None


def _name_mapping(metadata: Any, old: dict[str, dict[str, Any]], fields: list[Field]) -> tuple[str, dict]:
    """The name mapping (JSON text) and what the table declares now (key → name, spec, doc,
    alive, and the mapping entries of its top-level and ``_before`` field).  Every physical
    name any file of the table holds is mapped: dropped fields keep their entries (their ids
    are not in the current schema, so no reader shows them)."""
    declared: dict[str, dict[str, Any]] = {}
    for f in fields:
        prev = old.get(f.key)
        if not f.alive and prev is not None:  # declared before: its ids (its name may be reused now)
            declared[f.key] = {**prev, "alive": False, "map": {**prev["map"], "names": list(f.physical)},
                               "before_map": {**prev["before_map"], "names": list(f.physical)}}
            continue
        top, before = _field_of(metadata, f.name if f.alive else _tmp(f.key))  # type: ignore[misc]
        declared[f.key] = {"name": f.name, "spec": f.spec, "doc": f.doc, "alive": f.alive,
                           "map": _mapped(top, f.physical), "before_map": _mapped(before, f.physical)}
    schema = metadata.schema()
    mapping = []
    for top in schema.fields:
        if top.name == BEFORE:
            mapping.append({"field-id": top.field_id, "names": [BEFORE],
                            "fields": [d["before_map"] for d in declared.values()]})
        elif not any(d["alive"] and d["name"] == top.name for d in declared.values()):
            mapping.append(_mapped(top, [top.name]))
    mapping = [d["map"] for d in declared.values()] + mapping
    return json.dumps(mapping, separators=(",", ":")), declared


def data_file(io: Any, path: str) -> Any:
    """A ``DataFile`` for the Parquet file at ``path`` (a URI): record count and size from its
    footer."""
    import pyarrow.parquet as pq
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.typedef import Record

    inp = io.new_input(path)
    with inp.open() as fh:
        meta = pq.ParquetFile(fh).metadata
    return DataFile.from_args(content=DataFileContent.DATA, file_path=path, file_format=FileFormat.PARQUET,
                              partition=Record(), record_count=meta.num_rows, file_size_in_bytes=len(inp))


def _data_files(io: Any, fs: Any, dirs: list[str], run_id: str) -> list[Any]:
    """A ``DataFile`` for each Parquet file of this run in ``dirs`` (output-relative)."""
    return [data_file(io, file_uri(fs.str(f"{d}/{name}"))) for d in dirs for name in fs.names(d)
            if name.startswith(f"{run_id}-") and name.endswith(".parquet")]


def _find(catalog: Any, entry: dict[str, Any]) -> Any:
    """The table of a lineage: under its identifier, or under an earlier one (renamed now)."""
    from pyiceberg.exceptions import NoSuchTableError

    ident = tuple(entry["identifier"])
    for cand in [ident] + [tuple(p) for p in reversed(entry["previous"])]:
        try:
            table = catalog.load_table(cand)
        except NoSuchTableError:
            continue
        if table.properties.get("ddlcore.lineage") not in (None, entry["lineage"]):
            if cand == ident:
                raise ValueError(f"Iceberg table {'.'.join(ident)} belongs to another source table "
                                 f"({table.properties.get('ddlcore.lineage')}); this one is {entry['lineage']}")
            continue
        if cand != ident:
            catalog.create_namespace_if_not_exists(ident[:-1])
            table = catalog.rename_table(cand, ident)
        return table
    return None


def _create(catalog: Any, ident: tuple[str, ...], schema: Any, location: str) -> Any:
    """The transaction creating table ``ident``.  ``pyiceberg`` (0.12) stages a new table only
    under a one-level namespace (``Catalog._create_staged_table`` refuses ``(db, schema, t)``:
    "hierarchical namespaces are not supported") although its catalogs hold such tables: a
    PostgreSQL table's is created empty first (a roll-forward finds it without ``ddlcore.run``
    and commits into it)."""
    if len(ident) <= 2:
        return catalog.create_table_transaction(ident, schema, location=location)
    return catalog.create_table(ident, schema, location=location).transaction()


def _commit_table(catalog: Any, plan: dict[str, Any], entry: dict[str, Any], fs: Any) -> None:
    """One table's transaction (module docstring)."""
    from pyiceberg.io import load_file_io

    run_id = plan["run"]
    fields = [Field.from_json(f) for f in entry["fields"]]
    ident = tuple(entry["identifier"])
    table = _find(catalog, entry)
    if table is not None and table.properties.get(PROPERTY_RUN) == run_id:
        return  # committed before a crash: the roll-forward has nothing to do here
    if table is None:
        catalog.create_namespace_if_not_exists(ident[:-1])
        location = f"{plan['location']}/{'/'.join(ident)}"
        tx = _create(catalog, ident, _schema(), file_uri(location))
        old: dict[str, Any] = {}
    else:
        tx = table.transaction()
        old = json.loads(table.properties.get(PROPERTY_FIELDS, "{}"))
    _evolve(tx, old, fields)
    _reorder(tx, entry.get("order"), (BEFORE,))
    mapping, declared = _name_mapping(tx.table_metadata, old, fields)
    files = _data_files(load_file_io({}, tx.table_metadata.location), fs, entry["dirs"], run_id)
    props = {NAME_MAPPING: mapping, PROPERTY_FIELDS: json.dumps(declared, separators=(",", ":")),
             PROPERTY_RUN: run_id, PROPERTY_SEQ: str(plan["last_seq"]), "ddlcore.lineage": entry["lineage"],
             "ddlcore.source-table": entry["source_table"], "ddlcore.dialect": str(plan.get("dialect")),
             "ddlcore.dropped": "true" if entry["dropped"] else "false"}
    if files:
        summary = {PROPERTY_RUN: run_id, PROPERTY_SEQ: str(plan["last_seq"])}
        with tx.update_snapshot(snapshot_properties=summary).fast_append() as append:
            for f in files:
                append.append_data_file(f)
    tx.set_properties(props)
    tx.commit_transaction()


#: the current-state table's pipeline columns (docs/tables.md, "The current-state table")
CURRENT_FIELDS = (("_seq", "long"), ("_unknown", ["list", "string"]))


def _commit_current(catalog: Any, plan: dict[str, Any], entry: dict[str, Any]) -> None:
    """The current-state table's transaction (``ddlcore.sinks.current``): its schema follows
    the current fields (files carry the field names: a run that changes the fields rewrites
    every file), then one snapshot (``ddlcore.sinks.rowdelta``) adds the run's data files and
    position delete files and removes the files ``remove`` (every file when ``None``);
    idempotent by ``ddlcore.run``."""
    from pyiceberg.io import load_file_io

    from .posdeletes import delete_data_file
    from .rowdelta import check_version, row_delta

    check_version()
    run_id = plan["run"]
    fields = [Field.from_json(f) for f in entry["fields"]]
    ident = tuple(entry["identifier"])
    table = _find(catalog, entry)
    if table is not None and table.properties.get(PROPERTY_RUN) == run_id:
        return
    if table is None:
        catalog.create_namespace_if_not_exists(ident[:-1])
        location = f"{plan['location']}/{'/'.join(ident)}"
        tx = _create(catalog, ident, _schema(CURRENT_FIELDS), file_uri(location))
        old: dict[str, Any] = {}
    else:
        tx = table.transaction()
        old = json.loads(table.properties.get(PROPERTY_FIELDS, "{}"))
    _evolve(tx, old, fields, nested=None, anchor="_seq")
    names = [f.name for f in fields]
    if [f.name for f in tx.table_metadata.schema().fields][:len(names)] != names:  # the source's order
        with tx.update_schema() as u:
            u.move_first((names[0],))
            for prev, name in zip(names, names[1:]):
                u.move_after((name,), (prev,))
    mapping = [_mapped(f, [f.name]) for f in tx.table_metadata.schema().fields]
    declared = {f.key: {"name": f.name, "spec": f.spec, "doc": f.doc, "alive": True} for f in fields}
    io = load_file_io({}, tx.table_metadata.location)
    files = [f for f in (data_file(io, file_uri(path)) for path in entry["files"]) if f.record_count]
    files += [delete_data_file(io, file_uri(path), data) for path, data in entry["deletes"]]
    remove = entry["remove"]
    replaces = table is not None and table.current_snapshot() is not None and (remove is None or bool(remove))
    if replaces or files:
        summary = {PROPERTY_RUN: run_id, PROPERTY_SEQ: str(plan["last_seq"])}
        row_delta(tx, io, summary, add=files, remove=None if remove is None else set(remove))
    tx.set_properties({NAME_MAPPING: json.dumps(mapping, separators=(",", ":")),
                       PROPERTY_FIELDS: json.dumps(declared, separators=(",", ":")), PROPERTY_RUN: run_id,
                       PROPERTY_SEQ: str(plan["last_seq"]), "ddlcore.lineage": entry["lineage"],
                       "ddlcore.source-table": entry["source_table"], "ddlcore.dialect": str(plan.get("dialect")),
                       "ddlcore.dropped": "true" if entry["dropped"] else "false"})
    tx.commit_transaction()


def _commit_both(catalog: Any, plan: dict[str, Any], entry: dict[str, Any], fs: Any) -> None:
    """A source table's two transactions: its changes table, then its current state."""
    _commit_table(catalog, plan, entry, fs)
    if entry.get("current") is not None:
        _commit_current(catalog, plan, entry["current"])


def check_plan(plan: dict[str, Any], where: str) -> None:
    """Raise ``PipelineError`` (one line naming ``where``, the plan's file, and what to do) when
    this version cannot carry out the Iceberg part ``plan``: a current-state entry of the
    bucket layout (``buckets``, ``touched``: files of the touched buckets replaced), which an
    earlier version wrote before the current state took position deletes (f2b15d1)."""
    from ..errors import PipelineError

    for entry in plan.get("tables") or ():
        current = entry.get("current")
        if current is not None and not {"files", "deletes", "remove"} <= set(current):
            raise PipelineError(
                f"{where}: the unfinished commit of an earlier ddlcore (the current state of "
                f"{entry.get('source_table')} rewritten by buckets, before position deletes) cannot be finished by "
                f"this version: run the version that wrote it once on this output (its roll-forward finishes the "
                f"commit), then this one")


def commit(plan: dict[str, Any], fs: Any) -> None:
    """Carry out the Iceberg part of a commit plan (module docstring)."""
    from .iceberg import open_catalog

    from concurrent.futures import ThreadPoolExecutor

    catalog = open_catalog(plan["catalog"])
    for ns in sorted({tuple(e["identifier"][:-1]) for e in plan["tables"]}):  # first, one by one: not atomic
        catalog.create_namespace_if_not_exists(ns)
    # first, one by one: the dropped tables whose names a rename gives to another table move aside
    for entry in plan["tables"]:
        if entry.get("move_current"):
            _commit_both(catalog, plan, entry, fs)
            if entry.get("current") is None:
                _find(catalog, {"identifier": entry["move_current"][1], "previous": entry["move_current"][0],
                                "lineage": entry["lineage"]})
    # tables are independent: their commits overlap (each mostly waits on file and catalog I/O)
    with ThreadPoolExecutor(max_workers=COMMIT_THREADS) as pool:
        for done in [pool.submit(_commit_both, catalog, plan, entry, fs) for entry in plan["tables"]
                     if not entry.get("move_current")]:
            done.result()  # the first error, as raised
