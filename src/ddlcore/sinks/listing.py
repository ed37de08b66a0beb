"""What ``ddlcore tables OUT`` lists: every source table of a run output with its current
schema version, the rows of its changes table and of its current state, its last ``_seq`` and
its quarantined events, and for ``--format iceberg`` the rows of its current-state table (the
snapshot summary's ``total-records`` less its ``total-position-deletes``; read from the
embedded catalog ``OUT/_catalog.sqlite``).

Owns: gathering those facts from the output (the schema history, the version directories'
Parquet footers, ``_quarantine/*.json``, ``_state/log.json``; for ``--format iceberg`` the
catalog's table properties and snapshot summary).  Must not know: Spark.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..spark.layout import version_dir
from .fields import lineages

__all__ = ["TableFacts", "list_tables"]


@dataclass(frozen=True)
class TableFacts:
    """One source table: ``table`` (its latest id), ``schema_version`` (its latest version),
    ``dropped``, ``changes_rows`` (row events written), ``last_seq`` (of the last row event; ``None``:
    none), ``quarantined`` (its events in the quarantine) and ``iceberg`` (the changes table's
    identifier, ``None`` for ``--format parquet``), ``current_rows`` (rows of the current-state
    table; ``None`` for ``--format parquet`` or an output whose catalog is not the embedded one)."""

    table: str
    schema_version: int
    dropped: bool
    changes_rows: int
    last_seq: int | None
    quarantined: int
    iceberg: str | None
    current_rows: int | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _quarantine_counts(out: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for f in sorted((out / "_quarantine").glob("*.json")):
        for line in f.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                name = ".".join(p for p in (r.get("database"), r.get("schema"), r.get("table")) if p)
                counts[name] = counts.get(name, 0) + 1
    return counts


def _row_stats(out: Path, versions: list[Any]) -> tuple[int, int | None]:
    """Rows in the versions' Parquet files and the largest ``_seq`` among them (footers only)."""
    import pyarrow.parquet as pq

    rows, last = 0, None
    for v in versions:
        if v.table is None:
            continue
        vdir = out / version_dir(v.table_id.database, v.table_id.schema, v.table_id.name, v.version)
        for f in vdir.glob("*.parquet"):
            meta = pq.ParquetFile(f).metadata
            rows += meta.num_rows
            idx = meta.schema.to_arrow_schema().get_field_index("_seq")
            for g in range(meta.num_row_groups):
                st = meta.row_group(g).column(idx).statistics
                if st is not None and st.has_min_max:
                    last = st.max if last is None else max(last, st.max)
    return rows, last


def _current_rows(catalog: Any, ident: tuple[str, ...]) -> int | None:
    """Rows of the current-state table ``ident`` (0: no snapshot; ``None``: no such table): the
    snapshot's records less its position deletes (each deletes one row of a live data file)."""
    from pyiceberg.exceptions import NoSuchTableError

    try:
        table = catalog.load_table(ident)
    except NoSuchTableError:
        return None
    snap = table.current_snapshot()
    if snap is None:
        return 0
    return int(snap.summary["total-records"]) - int(snap.summary.get("total-position-deletes", 0))


def _embedded_catalog(out: Path, info: dict[str, Any]) -> Any:
    from .catalog import CATALOG_FILE, DEFAULT_CATALOG, WAREHOUSE_DIR, open_catalog

    if info.get("format") != "iceberg" or not (out / CATALOG_FILE).exists():
        return None
    return open_catalog({"name": DEFAULT_CATALOG, "uri": f"sqlite:///{out / CATALOG_FILE}",
                         "warehouse": f"file://{out / WAREHOUSE_DIR}"})


def list_tables(out: str | Path) -> list[TableFacts]:
    """The facts of every source table in the output ``out`` (a local directory), sorted by
    name."""
    from ..history import SchemaHistory
    from .iceberg import retired_lineages, table_identifiers

    out = Path(out)
    info_path = out / "_state" / "log.json"
    info = json.loads(info_path.read_text()) if info_path.exists() else {}
    quarantine = _quarantine_counts(out)
    with SchemaHistory.open(out / "_history.sqlite") as hist:
        lins = lineages(hist.all_versions())
    catalog = _embedded_catalog(out, info)
    retired = retired_lineages(lins)
    facts = []
    for lin in lins:
        rows, last = _row_stats(out, lin.versions)
        names = {str(n) for n in lin.names}
        live = [v for v in lin.versions if v.table is not None]
        changes, current = table_identifiers(lin, retired)
        ice = ".".join(changes) if info.get("format") == "iceberg" else None
        facts.append(TableFacts(str(lin.table_id), live[-1].version if live else 0, lin.versions[-1].table is None,
                                rows, last, sum(quarantine.get(n, 0) for n in names), ice,
                                None if catalog is None else _current_rows(catalog, current)))
    return sorted(facts, key=lambda f: f.table)
