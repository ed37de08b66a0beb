"""The Iceberg sink: every source table as an Apache Iceberg changes table and a current-state
table (docs/tables.md).

Owns: the run's side of the sink (``IcebergSink.prepare``: physical column names from
``ddlcore.sinks.fields``; ``IcebergSink.plan``: the tables, fields and data directories a
commit declares; ``IcebergSink.stage``: the current-state files, ``ddlcore.sinks.current``)
and the catalog a run commits into.  The commit itself is
``ddlcore.sinks.icecommit``.  Must not know: how rows are converted.

Spark keeps writing plain Parquet (no Iceberg jar: the Spark-side jars come only from Maven);
the driver commits those files into Iceberg with ``pyiceberg`` without rewriting them.  The
files carry no Parquet field ids (Spark cannot write one for a list element, and a file where
some column lacks an id is read by name in ``pyiceberg``): every table has its own name
mapping (``schema.name-mapping.default``) in which each physical name belongs to exactly one
field (``ddlcore.sinks.fields``).

Catalog: by default an embedded ``pyiceberg`` SQL catalog in ``OUT/_catalog.sqlite``
(``CATALOG_FILE``), metadata under ``OUT/_iceberg/``; ``--catalog NAME`` loads a catalog
configured the way ``pyiceberg`` users configure one (``.pyiceberg.yaml``,
``PYICEBERG_CATALOG__<NAME>__*``); tables are created at ``OUT/_iceberg/<namespace>/<table>``.
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING, Any

from ..gcpause import gc_paused
from ..model import Table
from ..spark.layout import version_dir
from ..spark.versions import shape_key
from . import icepreload, naming
from .catalog import CATALOG_FILE, DEFAULT_CATALOG, SQLITE_BUSY_SECONDS, WAREHOUSE_DIR, open_catalog
from .fields import Lineage, build_fields, column_order, lineages
from .icetypes import spark_type_specs

if TYPE_CHECKING:  # pragma: no cover
    from ..history import TableVersion

__all__ = ["IcebergSink", "open_catalog", "spark_type_specs", "physical_model", "retired_lineages",
           "table_identifiers", "CATALOG_FILE", "WAREHOUSE_DIR", "DEFAULT_CATALOG", "SQLITE_BUSY_SECONDS"]

#: current-state tables staged at the same time (``IcebergSink.stage``)
STAGE_THREADS = 4


def _missing_pyiceberg() -> str | None:
    try:
        import pyiceberg  # noqa: F401
    except ImportError:
        return "--format iceberg needs pyiceberg: pip install 'ddlcore[iceberg]'"
    from .rowdelta import RowDeltaUnsupported, check_version
    try:
        check_version()  # (the current-state merge's commit: before any work, not at the commit)
    except RowDeltaUnsupported as e:
        return str(e)
    return None


class IcebergSink:
    """``--format iceberg`` (module docstring)."""

    format = "iceberg"

    def __init__(self, out: str, *, catalog: str | None = None, dialect: str | None = None,
                 spark_options: dict[str, Any] | None = None, tuning: Any = None):
        from ..runconfig import Tuning

        missing = _missing_pyiceberg()
        if missing:
            raise ValueError(missing)
        icepreload.start()  # the stage's and the commit's modules, while Spark works
        self.out = str(out).rstrip("/")
        self.catalog = catalog
        self.dialect = dialect
        self.spark_options = spark_options
        self.tuning = tuning if tuning is not None else Tuning()
        # processes committing the tables (``ddlcore.sinks.icepool``; None: one per CPU)
        self.workers = self.tuning.driver_workers
        self.lineages: list[Lineage] = []
        self.current: dict[str, dict[str, Any]] = {}
        self.staged_counts: dict[str, list[int]] = {}  # output-relative path in staging → [records, bytes]
        self._specs: dict[tuple[Any, ...], list[Any]] = {}  # ``versions.shape_key`` → ``spark_type_specs`` (``_types``)

    def catalog_spec(self, fs: Any) -> dict[str, Any]:
        """How the commit opens the catalog (JSON, in the plan)."""
        if self.catalog:
            return {"name": self.catalog}
        local = fs.local(CATALOG_FILE)
        if local is None:
            raise ValueError("the embedded Iceberg catalog needs a local --out; name a configured "
                             "catalog with --catalog NAME")
        return {"name": DEFAULT_CATALOG, "uri": f"sqlite:///{local}", "warehouse": fs.str(WAREHOUSE_DIR)}

    def _types(self, table: Table) -> list[Any]:
        """``spark_type_specs`` of ``table``, computed once per model shape (``versions.shape_key``:
        what ``struct_type`` depends on; the versions of sharded tables share it)."""
        key = shape_key(table)
        specs = self._specs.get(key)
        if specs is None:
            specs = self._specs[key] = spark_type_specs(table, self.dialect, self.spark_options)
        return specs

    def prepare(self, history: Any, versions: list[TableVersion], *, dialect: str) -> list[TableVersion]:
        """Follow every table's lineage and give each version's model the physical column
        names its files are written with (``fields``: a name reused by another field); the
        other versions are returned as they are (``Sink.prepare``)."""
        self.dialect = dialect
        self._specs = {}
        versions = list(versions)
        known = {(v.table_id, v.version): v.table for v in versions if v.table is not None}
        with gc_paused():  # (every table's lineage: many objects, no cycle; ``ddlcore.gcpause``)
            self.lineages = [build_fields(lin, self._types) for lin in lineages(history.all_versions(known=known))]
        physical: dict[tuple[str, int], dict[str, str]] = {}
        for lin in self.lineages:
            physical.update(lin.physical)
        out = []
        for v in versions:
            names = physical.get((str(v.table_id), v.version))
            if v.table is not None and names and any(k != p for k, p in names.items()):
                v = dataclasses.replace(v, table=physical_model(v.table, names))
            out.append(v)
        return out

    def stage(self, spark: Any, fs: Any, staging: str, run_id: str, previous_seq: int | None) -> None:
        """Write the new files of every current-state table this run changes
        (``ddlcore.sinks.current``), for ``plan``."""
        from concurrent.futures import ThreadPoolExecutor

        from ..spark.forkpool import WorkerPool
        from .current import STAGED_COUNTS, DriverFace, current_driver_rows, stage_current, stage_workers

        catalog = open_catalog(self.catalog_spec(fs))
        limit = current_driver_rows(spark, fs, self.tuning)
        workers = 1 if limit == -1 else stage_workers(self.tuning.driver_workers, len(self.lineages))
        with WorkerPool(workers) as submit:
            if workers > 1:
                submit(os.getpid).result()  # the workers forked now, before this stage's threads
            driver = None if limit == -1 else DriverFace(submit, fs.local_root, limit, self.tuning.group_max_bytes,
                                                          fs.str(), self.tuning.merge_on_driver)
            # tables are independent: their Spark jobs overlap (a small table's jobs are mostly fixed
            # costs: scheduling, schema inference, py4j round trips, waiting on one core), and the
            # driver's workers compute the others' (``DriverFace``)
            with ThreadPoolExecutor(max_workers=STAGE_THREADS) as pool:
                futures = [(lin, pool.submit(stage_current, spark, catalog, fs, staging, run_id, lin, previous_seq,
                                             WAREHOUSE_DIR, driver)) for lin in self.lineages]
                entries = [(lin, f.result()) for lin, f in futures]  # the first error, as raised
        self.current = {lin.lineage_id: e for lin, e in entries if e is not None}
        # what the Arrow face read of the staged files' footers, for the changes tables' entries (``plan``)
        self.staged_counts = {}
        for e in self.current.values():
            self.staged_counts.update(e.pop(STAGED_COUNTS, None) or {})

    def plan(self, fs: Any, staging: str, run_id: str, last_seq: int | None,
             previous_seq: int | None) -> dict[str, Any] | None:
        """The commit's Iceberg part: per lineage touched by this run (rows staged, or a
        version after ``previous_seq``), its identifiers, fields and staged version dirs, and
        ``file_counts``: the record count and size of each staged file whose footer the stage
        read (output-relative path → ``[record_count, file_size_in_bytes]``: the commit
        registers it without opening it again)."""
        tables = []
        retired = retired_lineages(self.lineages)
        root = fs.local_root
        counted: dict[str, dict[str, list[int]]] = {}  # version dir → file name → ``staged_counts``
        for rel, counts in self.staged_counts.items():
            d, _, name = rel.rpartition("/")
            counted.setdefault(d, {})[name] = counts

        def staged(d: str) -> bool:  # (a local output without a gateway call per version)
            return os.path.isdir(os.path.join(root, staging, d)) if root is not None else fs.exists(f"{staging}/{d}")

        for lin in self.lineages:
            dirs = []
            for v in lin.versions:
                if v.table is None:
                    continue
                if previous_seq is not None and v.valid_to_seq is not None and v.valid_to_seq <= previous_seq:
                    continue  # no row of this run can be in a version that ended before it
                d = version_dir(v.table_id.database, v.table_id.schema, v.table_id.name, v.version)
                if staged(d):
                    dirs.append(d)
            changed = previous_seq is None or any(v.valid_from_seq > previous_seq for v in lin.versions)
            current = self.current.get(lin.lineage_id)
            drop, taken = retired.get(lin.lineage_id, (None, None))
            moving = taken is not None and (previous_seq is None or taken > previous_seq)
            if not dirs and not changed and current is None and not moving:
                continue
            entry = {
                "identifier": list(naming.changes_name(lin.table_id)),
                "previous": [list(naming.changes_name(t)) for t in lin.names[:-1]],
                "lineage": lin.lineage_id, "source_table": str(lin.table_id), "dropped": lin.dropped,
                "fields": [f.to_json() for f in lin.fields.values()], "dirs": dirs, "current": current,
                "order": [f.name for f in column_order(lin)],
                # (the footers the stage read: the commit registers these files without reading them)
                "file_counts": {f"{d}/{name}": c for d in dirs for name, c in counted.get(d, {}).items()},
            }
            if drop is not None:
                _move_aside(entry, lin, drop)
            tables.append(entry)
        return {"format": "iceberg", "catalog": self.catalog_spec(fs), "run": run_id, "last_seq": last_seq,
                "dialect": self.dialect, "location": fs.str(WAREHOUSE_DIR), "tables": tables,
                "workers": self.workers}


def retired_lineages(lins: list[Lineage]) -> dict[str, tuple[int, int]]:
    """The dropped lineages whose name a later lineage takes (``RENAME TABLE u TO t`` after
    ``DROP TABLE t``): lineage id → (the seq of its DROP, the seq the name was taken at).  Their
    Iceberg tables move aside (``naming.dropped_names``), so each name is one lineage's."""
    out: dict[str, tuple[int, int]] = {}
    for lin in lins:
        if lin.versions[-1].table is not None:  # (``lin.dropped`` is set by ``build_fields`` only)
            continue
        name, drop = str(lin.table_id), lin.versions[-1].valid_from_seq
        taken = [v.valid_from_seq for other in lins if other is not lin for v in other.versions
                 if v.table is not None and str(v.table_id) == name and v.valid_from_seq > drop]
        if taken:
            out[lin.lineage_id] = (drop, min(taken))
    return out


def table_identifiers(lin: Lineage, retired: dict[str, tuple[int, int]]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The Iceberg identifiers (changes, current state) of lineage ``lin`` now; ``retired``:
    ``retired_lineages`` of the output's lineages."""
    if lin.lineage_id in retired:
        return naming.dropped_names(lin.table_id, retired[lin.lineage_id][0])
    return naming.changes_name(lin.table_id), naming.current_name(lin.table_id)


def _move_aside(entry: dict[str, Any], lin: Lineage, drop: int) -> None:
    """A retired lineage's plan entry under its ``__dropped<seq>`` identifiers; its earlier
    names (the source name among them) are where the commit finds its tables to move."""
    changes, current = naming.dropped_names(lin.table_id, drop)
    entry["identifier"] = list(changes)
    entry["previous"] = [list(naming.changes_name(t)) for t in lin.names]
    entry["move_current"] = [[list(naming.current_name(t)) for t in lin.names], list(current)]
    if entry["current"] is not None:
        entry["current"] = {**entry["current"], "identifier": list(current),
                            "previous": [list(naming.current_name(t)) for t in lin.names]}


def physical_model(model: Table, names: dict[str, str]) -> Table:
    """``model`` with each column named by ``names`` (source name → physical name), keys and
    indexes following."""
    import dataclasses

    def ren(n: Any) -> Any:
        return names.get(n, n) if n is not None else None

    cols = tuple(c.replace(name=names.get(c.name, c.name)) for c in model.columns)
    return dataclasses.replace(
        model, columns=cols, primary_key=tuple(ren(n) for n in model.primary_key),
        indexes=tuple(dataclasses.replace(ix, columns=tuple(ren(n) for n in ix.columns)) for ix in model.indexes),
        foreign_keys=tuple(dataclasses.replace(fk, columns=tuple(ren(n) for n in fk.columns))
                           for fk in model.foreign_keys))
