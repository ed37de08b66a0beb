"""The Iceberg commit of one run: for every table of the plan (``IcebergSink.plan``), one
Iceberg commit (schema changes, the run's data files appended, properties), then one for its
current-state table when the run changed it (the run's data files and position delete files
added and the files they replace removed, in one snapshot: ``ddlcore.sinks.rowdelta``),
idempotent.

Owns: each table's commit — a new table created with its final schema, properties and name
mapping in the creating commit, an existing one's next schema set in one schema update (both
computed by ``ddlcore.sinks.iceschema`` from the fields the table's last commit declared, table
property ``ddlcore.fields``: field key → Iceberg ids), the name mapping, and the fast append of
the files Spark wrote (``DataFile`` from each file's Parquet footer: record count and size; no
column statistics; the plan's ``file_counts`` where the stage read the footer already).
Where the tables' commits run is ``ddlcore.sinks.icepool``.  Must not know: Spark jobs.

Which path each catalog takes: in ``pyiceberg``'s ``SqlCatalog`` (the embedded SQLite catalog
``OUT/_catalog.sqlite``, or an SQL database the user configured) a table new to the catalog is
created with its first snapshot in one step (``ddlcore.sinks.icecreate``: one metadata file,
one ``INSERT``; two-level namespaces too), and an existing changes table is committed with the
catalog's ``commit_table`` without a transaction (``ddlcore.sinks.iceappend``); an existing
current-state table goes through a ``pyiceberg`` transaction (``rowdelta``).  Every other
catalog (REST, Hive, Glue, ...) commits through ``pyiceberg``'s transactions
(``create_table_transaction``, ``Table.transaction``).  Both give the same metadata
(``tests/sinks/test_icecreate.py``).

Idempotence: the commit sets ``ddlcore.run`` (the run id) and ``ddlcore.last-seq``; a
roll-forward finds its run there and skips the table (a commit is all or nothing: a crash before
a new table's ``INSERT`` leaves only unreferenced files, and the table absent).

Cost (``benchmarks/icecommit.py``, 300 tables, ``make bench``: docs/tables.md, "How it is
verified"): about 2.5 ms of CPU per new table in an SQL catalog in one process (7 ms through
``pyiceberg``'s transactions), 6 ms per existing table; what is left of a new table's is
mostly creating its three files (manifest, manifest list, metadata) and the tables' directories,
then ``pyiceberg``'s pydantic models of the metadata; the new tables of
``TABLES_PER_TRANSACTION`` source tables share one catalog transaction
(``commit_source_tables``), and tables of one shape share their schema
(``iceschema.new_schema``).
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import DdlCoreError
from . import icecreate
from .fields import Field
from .icetx import cached
from .iceschema import CHANGES, CURRENT, Layout, SchemaPlan, mapped, new_schema, next_schema

__all__ = ["commit", "commit_source_table", "commit_source_tables", "TABLES_PER_TRANSACTION", "data_file",
           "local_data_file", "file_uri", "IcebergCommitError", "META_FIELDS", "CURRENT_FIELDS", "PROPERTY_FIELDS",
           "PROPERTY_RUN", "PROPERTY_SEQ"]

PROPERTY_FIELDS = "ddlcore.fields"
PROPERTY_RUN = "ddlcore.run"
PROPERTY_SEQ = "ddlcore.last-seq"
NAME_MAPPING = "schema.name-mapping.default"
#: the pipeline's columns (docs/pipeline.md) after the source columns; ``_before`` is a struct
#: of the source columns' fields
META_FIELDS = CHANGES.pipeline
#: the current-state table's pipeline columns (docs/tables.md, "The current-state table")
CURRENT_FIELDS = CURRENT.pipeline
BEFORE = CHANGES.nested


#: source tables whose new Iceberg tables one catalog transaction registers (``commit_source_tables``)
TABLES_PER_TRANSACTION = 16


class IcebergCommitError(DdlCoreError):
    """The Iceberg commit of one table failed: the message names the table and the cause.  The
    run's commit plan stays in place: the next run rolls it forward (the tables committed
    before it are skipped: ``ddlcore.run``)."""


def file_uri(text: str) -> str:
    """A Hadoop-qualified ``file:/x`` as ``file:///x`` (what ``pyiceberg``'s FileIO reads)."""
    if text.startswith("file:/") and not text.startswith("file:///"):
        return "file:///" + text[len("file:/"):].lstrip("/")
    return text


def _local_path(uri: str) -> str | None:
    """The local path of a ``file:`` URI as Hadoop writes them (not percent-encoded), else ``None``."""
    return "/" + uri[len("file:"):].lstrip("/") if uri.startswith("file:/") else None


def data_file(io: Any, path: str) -> Any:
    """A ``DataFile`` for the Parquet file at ``path`` (a URI) read through ``io`` (a
    ``pyiceberg`` FileIO): record count and size from its footer."""
    import pyarrow.parquet as pq

    inp = io.new_input(path)
    with inp.open() as fh:
        meta = pq.ParquetFile(fh).metadata
    return _data_file(path, meta.num_rows, len(inp))


def local_data_file(uri: str) -> Any:
    """``data_file`` for a ``file:`` URI, read directly from the local filesystem (one
    ``stat`` and the footer)."""
    import pyarrow.parquet as pq

    path = _local_path(uri)
    if path is None:
        raise ValueError(f"not a local file URI: {uri}")
    return _data_file(uri, pq.read_metadata(path).num_rows, os.path.getsize(path))


def _data_file(path: str, rows: int, size: int) -> Any:
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.typedef import Record

    return DataFile.from_args(content=DataFileContent.DATA, file_path=path, file_format=FileFormat.PARQUET,
                              partition=Record(), record_count=rows, file_size_in_bytes=size)


def _data_files(uris: dict[str, list[int] | None], location: str) -> list[Any]:
    """The ``DataFile`` of each Parquet file of ``uris`` (URI → its ``[record_count,
    file_size_in_bytes]`` where known: the stage read its footer, ``IcebergSink.plan``'s
    ``file_counts``; ``None``: its footer is read here, a local file directly, others through
    the FileIO of the table at ``location``)."""
    io = None
    out = []
    for uri, counts in uris.items():
        if counts is not None:
            out.append(_data_file(uri, int(counts[0]), int(counts[1])))
            continue
        if _local_path(uri) is not None:
            out.append(local_data_file(uri))
            continue
        if io is None:
            from pyiceberg.io import load_file_io
            io = load_file_io({}, location)
        out.append(data_file(io, uri))
    return out


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


#: how a table declares its fields: (schema plan, what it declared, fields) → (name mapping JSON, declared)
Declare = Callable[[SchemaPlan, dict[str, Any], list[Field]], tuple[str, dict[str, Any]]]


def _declare_changes(plan: SchemaPlan, old: dict[str, dict[str, Any]], fields: list[Field]) -> tuple[str, dict]:
    """The changes table's name mapping (JSON text) and what it declares now (key → name, spec,
    doc, alive, and the mapping entries of its top-level and ``_before`` field).  Every physical
    name any file of the table holds is mapped: dropped fields keep their entries (their ids
    are not in the current schema, so no reader shows them)."""
    declared: dict[str, dict[str, Any]] = {}
    for f in fields:
        if f.key not in plan.top:  # dropped, declared before: its ids (its name may be reused now)
            prev = old[f.key]
            declared[f.key] = {**prev, "alive": False, "map": {**prev["map"], "names": list(f.physical)},
                               "before_map": {**prev["before_map"], "names": list(f.physical)}}
            continue
        declared[f.key] = {"name": f.name, "spec": f.spec, "doc": f.doc, "alive": f.alive,
                           "map": mapped(plan.top[f.key], f.physical),
                           "before_map": mapped(plan.inner[f.key], f.physical)}
    taken = {d["name"] for d in declared.values() if d["alive"]}
    mapping = [d["map"] for d in declared.values()]
    for top in plan.schema.fields:
        if top.name == BEFORE:
            mapping.append({"field-id": top.field_id, "names": [BEFORE],
                            "fields": [d["before_map"] for d in declared.values()]})
        elif top.name not in taken:
            mapping.append(mapped(top, [top.name]))
    return json.dumps(mapping, separators=(",", ":")), declared


def _declare_current(plan: SchemaPlan, old: dict[str, dict[str, Any]], fields: list[Field]) -> tuple[str, dict]:
    """The current-state table's name mapping (its files carry the field names) and fields."""
    mapping = [mapped(f, [f.name]) for f in plan.schema.fields]
    declared = {f.key: {"name": f.name, "spec": f.spec, "doc": f.doc, "alive": True} for f in fields}
    return json.dumps(mapping, separators=(",", ":")), declared


def _properties(run: dict[str, Any], entry: dict[str, Any], mapping: str, declared: dict) -> dict[str, str]:
    return {NAME_MAPPING: mapping, PROPERTY_FIELDS: json.dumps(declared, separators=(",", ":")),
            PROPERTY_RUN: run["run"], PROPERTY_SEQ: str(run["last_seq"]), "ddlcore.lineage": entry["lineage"],
            "ddlcore.source-table": entry["source_table"], "ddlcore.dialect": str(run.get("dialect")),
            "ddlcore.dropped": "true" if entry["dropped"] else "false"}


def _set_schema(tx: Any, schema: Any, schema_id: int) -> None:
    """Make ``schema`` the current schema of the transaction ``tx`` whose current schema's id is
    ``schema_id``: one schema update (``UpdateSchema`` started from ``schema`` itself, so that
    it adds it as it is, ids included)."""
    from pyiceberg.schema import Schema
    from pyiceberg.table.update.schema import UpdateSchema

    base = Schema(*schema.fields, schema_id=schema_id, identifier_field_ids=schema.identifier_field_ids)
    UpdateSchema(tx, allow_incompatible_changes=True, schema=base).commit()


@dataclass
class _Target:
    """Where a table's commit goes: ``tx``, a transaction with the table's next schema set, on
    ``table`` (``None``: created by the transaction), or, ``tx`` ``None``, in an SQL catalog,
    without a transaction: a new table (``table`` ``None``) created in one step
    (``ddlcore.sinks.icecreate``), an existing one committed with ``ddlcore.sinks.iceappend``;
    ``schemas``: the schemas to commit then, in order.  ``location``: the table's; ``props``:
    the properties to set."""

    tx: Any
    table: Any
    location: str
    props: dict[str, str]
    schemas: list[Any] = field(default_factory=list)


def _begin(catalog: Any, run: dict[str, Any], entry: dict[str, Any], layout: Layout, order: list[str] | None,
           declare: Declare, direct: bool = False) -> _Target | None:
    """Where the commit of ``entry``'s table goes (``_Target``); ``None`` when this run is
    committed there already.  A new table is created with its schema and properties in the
    creating transaction, or in one step in an SQL catalog (``icecreate``); in an SQL catalog
    and with ``direct``, an existing table is committed without a transaction (``iceappend``).  ``pyiceberg``
    (0.12) stages a new table in a transaction only under a one-level namespace
    (``Catalog._create_staged_table`` refuses ``(db, schema, t)``: "hierarchical namespaces are
    not supported") although its catalogs hold such tables: in a catalog other than an SQL one a
    PostgreSQL table's is created first with its schema and properties but ``ddlcore.run`` (a
    roll-forward finds it and commits into it)."""
    table = None if entry.get("absent") else _find(catalog, entry)
    if table is not None and table.properties.get(PROPERTY_RUN) == run["run"]:
        return None  # committed before a crash: the roll-forward has nothing to do here
    fields = [Field.from_json(f) for f in entry["fields"]]
    ident = tuple(entry["identifier"])
    if table is None:
        plan = new_schema(fields, order, layout)
        props = _properties(run, entry, *declare(plan, {}, fields))
        location = file_uri(f"{run['location']}/{'/'.join(ident)}")
        initial = plan.reserve if plan.reserve is not None else plan.schema
        if icecreate.supports(catalog):
            return _Target(None, None, location, props, [initial] + ([plan.schema] if plan.reserve is not None else []))
        if len(ident) <= 2:
            tx = cached(catalog.create_table_transaction(ident, initial, location=location, properties=dict(props)))
            if plan.reserve is not None:
                _set_schema(tx, plan.schema, initial.schema_id)
            return _Target(tx, None, location, props)
        first = {k: v for k, v in props.items() if k not in (PROPERTY_RUN, PROPERTY_SEQ)}
        table = catalog.create_table(ident, initial, location=location, properties=first)
    meta = table.metadata
    old = json.loads(table.properties.get(PROPERTY_FIELDS, "{}"))
    plan = next_schema(meta.schema(), meta.last_column_id, old, fields, order, layout, ".".join(ident))
    props = _properties(run, entry, *declare(plan, old, fields))
    if direct and icecreate.supports(catalog):
        schemas = [plan.reserve, plan.schema] if plan.reserve is not None else [plan.schema] if plan.changed else []
        return _Target(None, table, meta.location, props, schemas)
    tx = cached(table.transaction())
    if plan.reserve is not None:
        _set_schema(tx, plan.reserve, meta.current_schema_id)
        _set_schema(tx, plan.schema, 1 + max(s.schema_id for s in meta.schemas))
    elif plan.changed:
        _set_schema(tx, plan.schema, meta.current_schema_id)
    return _Target(tx, table, meta.location, props)


def _summary(run: dict[str, Any]) -> dict[str, str]:
    """The snapshot summary's ddlcore properties: the run and its last ``seq``."""
    return {PROPERTY_RUN: run["run"], PROPERTY_SEQ: str(run["last_seq"])}


def _commit_changes(catalog: Any, run: dict[str, Any], entry: dict[str, Any], files: dict[str, list[int] | None],
                    pending: list[tuple[tuple[str, ...], str]] | None = None) -> None:
    """The changes table's commit (module docstring); ``files``: the run's data files of the
    table (``_data_files``' ``uris``); ``pending``: as ``commit_source_table``'s."""
    target = _begin(catalog, run, entry, CHANGES, entry.get("order"), _declare_changes, direct=True)
    if target is None:
        return
    data = _data_files(files, target.location) if files else []
    if target.tx is None:
        from pyiceberg.table.snapshots import Operation

        from .iceappend import append

        if target.table is not None:
            append(catalog, target.table, target.schemas, target.props, operation=Operation.APPEND, files=data,
                   summary=_summary(run))
            return
        icecreate.create(catalog, tuple(entry["identifier"]), target.schemas, target.location, target.props,
                         operation=Operation.APPEND, files=data, summary=_summary(run), pending=pending)
        return
    tx = target.tx
    if data:
        with tx.update_snapshot(snapshot_properties=_summary(run)).fast_append() as append:
            for f in data:
                append.append_data_file(f)
    tx.set_properties(target.props)
    tx.commit_transaction()


def _commit_current(catalog: Any, run: dict[str, Any], entry: dict[str, Any],
                    pending: list[tuple[tuple[str, ...], str]] | None = None) -> None:
    """The current-state table's transaction (``ddlcore.sinks.current``): its schema follows
    the current fields in their order (files carry the field names: a run that changes the
    fields rewrites every file), then one snapshot (``ddlcore.sinks.rowdelta``) adds the run's
    data files and position delete files and removes the files ``remove`` (every file when
    ``None``); idempotent by ``ddlcore.run``; ``pending``: as ``commit_source_table``'s."""
    from pyiceberg.io import load_file_io

    from .posdeletes import delete_data_file
    from .rowdelta import check_version, row_delta

    check_version()
    order = [f["name"] for f in entry["fields"] if f.get("alive", True)]
    target = _begin(catalog, run, entry, CURRENT, order, _declare_current)
    if target is None:
        return
    tx, table, location = target.tx, target.table, target.location
    io = load_file_io({}, location)
    counts = entry.get("file_counts") or {}
    files = [f for f in _data_files({file_uri(p): counts.get(p) for p in entry["files"]}, location) if f.record_count]
    files += [delete_data_file(io, file_uri(path), data) for path, data in entry["deletes"]]
    remove = entry["remove"]
    if tx is None:
        if remove:
            raise ValueError(f"files to remove are not in the table's current snapshot: {', '.join(sorted(remove))}")
        from pyiceberg.table.snapshots import Operation

        icecreate.create(catalog, tuple(entry["identifier"]), target.schemas, location, target.props,
                         operation=Operation.OVERWRITE, files=files, summary=_summary(run), pending=pending)
        return
    replaces = table is not None and table.current_snapshot() is not None and (remove is None or bool(remove))
    if replaces or files:
        row_delta(tx, io, _summary(run), add=files, remove=None if remove is None else set(remove))
    tx.set_properties(target.props)
    tx.commit_transaction()


def commit_source_table(catalog: Any, run: dict[str, Any], entry: dict[str, Any], files: list[str] | dict[str, Any],
                        pending: list[tuple[tuple[str, ...], str]] | None = None) -> None:
    """A source table's two commits: its changes table (``files``: its data files' URIs, or
    each with its ``[record_count, file_size_in_bytes]`` where known: ``_data_files``), then
    its current state.  ``pending``: a table new to an SQL catalog is not registered but
    added to it (``icecreate.create``), for the caller's ``icecreate.register_all``.  Raises
    ``IcebergCommitError`` naming the table for any error."""
    with _naming(entry, entry["identifier"]):
        _commit_changes(catalog, run, entry, files if isinstance(files, dict) else dict.fromkeys(files), pending)
    if entry.get("current") is not None:
        with _naming(entry, entry["current"]["identifier"]):
            _commit_current(catalog, run, entry["current"], pending)


def commit_source_tables(catalog: Any, run: dict[str, Any], tasks: list[tuple[dict[str, Any], Any]]) -> None:
    """``commit_source_table`` for each ``(entry, files)`` of ``tasks`` in order, then the new
    tables among them registered in one catalog transaction (``icecreate.register_all``; one
    sync of the catalog instead of one per table).  A crash before that transaction leaves
    unreferenced files only (the roll-forward creates those tables again).  Raises
    ``IcebergCommitError`` naming the first table whose commit failed, or one that exists
    already (each then registered alone, in order, to know which), or the new tables when
    their registration failed otherwise."""
    from pyiceberg.exceptions import TableAlreadyExistsError

    pending: list[tuple[tuple[str, ...], str]] = []
    owners: dict[tuple[str, ...], dict[str, Any]] = {}
    for entry, files in tasks:
        commit_source_table(catalog, run, entry, files, pending)
        owners.update((tuple(e["identifier"]), entry) for e in (entry, entry.get("current")) if e is not None)
    try:
        icecreate.register_all(catalog, pending)
    except TableAlreadyExistsError:
        for ident, location in pending:
            with _naming(owners[tuple(ident)], ident):
                icecreate.register(catalog, ident, location)
    except Exception as exc:  # noqa: BLE001 - any cause: named with its tables, one line
        sources = sorted({owners[tuple(ident)]["source_table"] for ident, _ in pending})
        raise IcebergCommitError(f"Iceberg commit of the new tables {', '.join('.'.join(i) for i, _ in pending)} "
                                 f"(source tables {', '.join(sources)}), registered together: "
                                 f"{type(exc).__name__}: {exc}") from exc


@contextlib.contextmanager
def _naming(entry: dict[str, Any], identifier: list[str] | tuple[str, ...]):
    """Any error of the block raised again as ``IcebergCommitError`` naming the Iceberg table
    ``identifier`` and ``entry``'s source table, on one line."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - any cause: named with its table, one line
        raise IcebergCommitError(f"Iceberg commit of table {'.'.join(identifier)} (source table "
                                 f"{entry['source_table']}): {type(exc).__name__}: {exc}") from exc


def _run_files(fs: Any, root: str | None, dirs: list[str], run_id: str) -> list[str]:
    """The URIs of this run's Parquet files in ``dirs`` (output-relative): with ``os.scandir``
    where the output is local (``root``: its local path), else through ``fs`` (Hadoop)."""
    def mine(name: str) -> bool:
        return name.startswith(f"{run_id}-") and name.endswith(".parquet")

    out = []
    for d in dirs:
        if root is None or ":" in d.split("/", 1)[0]:  # (a URI: through Hadoop)
            out += [file_uri(fs.str(f"{d}/{name}")) for name in fs.names(d) if mine(name)]
            continue
        path = os.path.join(root, d)
        try:
            names = sorted(e.name for e in os.scandir(path) if mine(e.name))
        except FileNotFoundError:
            continue
        out += ["file://" + os.path.join(path, name) for name in names]
    return out


def _counted(uris: list[str], root: str | None, counts: dict[str, list[int]] | None) -> dict[str, list[int] | None]:
    """``uris`` (``_run_files``) each with its ``[record_count, file_size_in_bytes]`` from
    ``counts`` (a plan entry's ``file_counts``: by output-relative path) where the output is
    local (``root``), else ``None`` (``_data_files`` reads its footer)."""
    known = {"file://" + os.path.join(root, rel): c for rel, c in (counts or {}).items()} if root is not None else {}
    return {uri: known.get(uri) for uri in uris}


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


def _with_absent(catalog: Any, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``entries`` (and their ``current`` entries) marked ``absent`` where the catalog has none
    of their identifiers (its tables listed once per namespace: a table new to the catalog is
    not looked up by name, twice, to be created)."""
    from pyiceberg.exceptions import NoSuchNamespaceError

    def names(e: dict[str, Any]) -> list[tuple[str, ...]]:
        return [tuple(e["identifier"])] + [tuple(p) for p in e["previous"]]

    subs = [e for entry in entries for e in (entry, entry.get("current")) if e is not None]
    existing: set[tuple[str, ...]] = set()
    for ns in sorted({n[:-1] for e in subs for n in names(e)}):
        try:
            existing.update(tuple(t) for t in catalog.list_tables(ns))
        except NoSuchNamespaceError:
            continue

    def mark(e: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if e is None else {**e, "absent": not any(n in existing for n in names(e))}

    return [{**mark(entry), "current": mark(entry.get("current"))} for entry in entries]  # type: ignore[dict-item]


def commit(plan: dict[str, Any], fs: Any) -> None:
    """Carry out the Iceberg part of a commit plan (module docstring): the namespaces, then the
    tables whose dropped predecessors move aside (``move_current``) one by one, then the others
    (``ddlcore.sinks.icepool``: ``plan["workers"]`` processes, or threads).  Raises
    ``IcebergCommitError`` naming the first table (in the plan's order) whose commit failed."""
    from .catalog import open_catalog
    from .icepool import run_all

    catalog = open_catalog(plan["catalog"])
    for ns in sorted({tuple(e["identifier"][:-1]) for e in plan["tables"]}):  # first, one by one: not atomic
        catalog.create_namespace_if_not_exists(ns)
    run = {k: plan.get(k) for k in ("run", "last_seq", "dialect", "location")}
    root = fs.local("")
    tasks = [(entry, _counted(_run_files(fs, root, entry["dirs"], plan["run"]), root, entry.get("file_counts")))
             for entry in plan["tables"]]
    # first, one by one: the dropped tables whose names a rename gives to another table move aside
    for entry, files in tasks:
        if entry.get("move_current"):
            commit_source_table(catalog, run, entry, files)
            if entry.get("current") is None:
                _find(catalog, {"identifier": entry["move_current"][1], "previous": entry["move_current"][0],
                                "lineage": entry["lineage"]})
    rest = [(entry, files) for entry, files in tasks if not entry.get("move_current")]
    marked = _with_absent(catalog, [entry for entry, _ in rest])
    step = TABLES_PER_TRANSACTION
    chunks = [(run, list(zip(marked[i:i + step], [files for _, files in rest[i:i + step]])))
              for i in range(0, len(rest), step)]
    run_all(commit_source_tables, chunks, catalog=catalog, spec=plan["catalog"], workers=plan.get("workers"),
            tables=len(rest))
