"""The Iceberg fields of one source table, derived from its schema history alone.

Owns: following a source table through its versions (renames included: a *lineage*) and
deciding, for every column of every version, the Iceberg field it belongs to and the physical
name its values are written under.  A pure function of the history, so the names a run writes
and the fields a later commit declares always agree, and a roll-forward recomputes the same.
Must not know: catalogs, Spark sessions, files.

Rules (docs/tables.md, "Schema evolution"):

* a field is a column identity (``Column.column_id``) in one incarnation of the table (a
  ``CREATE`` after a ``DROP`` starts a new one) while its Iceberg type only widens
  (``icetypes.widens``); a rename keeps the field (old rows appear under the new name);
* any other type change is never coerced: the old field keeps its values under the name
  ``<name>__<old type>_v<N>`` (``N``: the version that changed the type) and a new field takes
  the source name;
* a dropped column's field is deleted from the schema (its values stay in the old snapshots);
* a ``DROP TABLE`` keeps the table's fields (its changes table stays readable with the
  schema it had); a ``CREATE`` of the name after it deletes them (a new incarnation);
* physical names (the Parquet column names Spark writes): the source name, unless another field
  of the table ever had that physical name (a name reused after a drop, or by the new field of a
  retype), then ``<name>__f<incarnation>_<column_id>_<n>``.  So every physical name belongs to
  exactly one field, and the Iceberg name mapping (``schema.name-mapping.default``) maps each
  file column to its field without ambiguity in every reader.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from .icetypes import spec_text, widens

__all__ = ["Field", "Lineage", "lineages", "build_fields", "column_order"]


@dataclass
class Field:
    """One Iceberg field of a source table: ``key`` (``"<incarnation>.<column_id>.<n>"``),
    its current logical ``name``, every ``physical`` name it was written under, its type
    ``spec``, ``doc`` (the native ``column_type``), ``alive`` (in the current schema) and
    ``current`` (it holds the source column's values now: not dropped, not retired)."""

    key: str
    name: str
    spec: Any
    doc: str
    physical: list[str] = field(default_factory=list)
    alive: bool = True
    current: bool = True
    #: for a field that began on a table that existed (``ADD COLUMN``, or the new field of a
    #: retype): the seq and ts (ms) of that DDL event, the column's default then, and the key of
    #: the field it replaced (a retype); ``None`` for a field the table was created with
    since_seq: int | None = None
    since_ts: int | None = None
    default: str | None = None
    replaces: str | None = None
    #: the retype's DDL text has a ``USING`` clause (PostgreSQL): the server computed the new
    #: values with an expression, not a cast (conservatively: any ``USING`` in that DDL text)
    using: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "name": self.name, "spec": self.spec, "doc": self.doc,
                "physical": list(self.physical), "alive": self.alive, "current": self.current,
                "since_seq": self.since_seq, "since_ts": self.since_ts, "default": self.default,
                "replaces": self.replaces, "using": self.using}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Field":
        return cls(d["key"], d["name"], d["spec"], d["doc"], list(d["physical"]), d["alive"], d["current"],
                   d.get("since_seq"), d.get("since_ts"), d.get("default"), d.get("replaces"), d.get("using", False))


@dataclass
class Lineage:
    """A source table followed through renames: its ``versions`` (``TableVersion`` of the
    history, in order), ``fields`` (by key, in the order they appeared), the physical name of
    each column of each version (``physical[(table id text, version)][column name]``) and its
    field (``keys[...][column name]``: the key), the
    table ids it had (``names``, oldest first) and whether it is dropped now."""

    versions: list[Any] = field(default_factory=list)
    fields: dict[str, Field] = field(default_factory=dict)
    physical: dict[tuple[str, int], dict[str, str]] = field(default_factory=dict)
    keys: dict[tuple[str, int], dict[str, str]] = field(default_factory=dict)
    names: list[Any] = field(default_factory=list)
    dropped: bool = False

    @property
    def table_id(self) -> Any:
        """The table's latest id."""
        return self.names[-1]

    @property
    def lineage_id(self) -> str:
        """A stable name of the lineage: its first table id and the seq it began at."""
        return f"{self.names[0]}@{self.versions[0].valid_from_seq}"


def lineages(versions: Iterable[Any]) -> list[Lineage]:
    """The lineages of a history's table versions (``SchemaHistory.all_versions()``): a key's
    versions continue the lineage of the table renamed into it from its ``rename`` version on
    (``previous_id``); blocked versions are skipped (their rows are quarantined)."""
    by_key: dict[str, list[Any]] = {}
    for v in versions:
        if not v.blocked:
            by_key.setdefault(str(v.table_id), []).append(v)
    segments: list[list[Any]] = []
    arriving: dict[tuple[str, int], list[Any]] = {}  # (key, seq) of a rename arrival → its segment
    for key, vs in by_key.items():
        seg: list[Any] = []
        for v in vs:
            if v.kind == "rename" and v.table is not None and seg:
                segments.append(seg)
                seg = []
            seg.append(v)
        segments.append(seg)
    for seg in segments:
        first = seg[0]
        if first.kind == "rename" and first.table is not None and first.previous_id is not None:
            arriving[(str(first.table_id), first.valid_from_seq)] = seg
    out: list[Lineage] = []
    used: set[int] = set()
    for seg in segments:
        first = seg[0]
        if first.kind == "rename" and first.table is not None and first.previous_id is not None \
                and any(str(v.table_id) == str(first.previous_id) for s in segments for v in s):
            continue  # continues another segment's lineage
        lin = Lineage()
        while seg is not None and id(seg) not in used:
            used.add(id(seg))
            for v in seg:
                if v.table is not None or v.renamed_to is None:
                    lin.versions.append(v)
                if not lin.names or str(lin.names[-1]) != str(v.table_id):
                    if v.table is not None:
                        lin.names.append(v.table_id)
            last = seg[-1]
            seg = arriving.get((str(last.renamed_to), last.valid_from_seq)) if last.renamed_to is not None else None
        out.append(lin)
    return out


_USING = re.compile(r"\bUSING\b", re.IGNORECASE)


def _retired_name(f: Field, version: int) -> str:
    return f"{f.name}__{spec_text(f.spec)}_v{version}"


def build_fields(lin: Lineage, spark_types: Callable[[Any], list[Any]]) -> Lineage:
    """Fill ``lin.fields`` and ``lin.physical`` (module docstring).  ``spark_types(table)``:
    the Iceberg type spec of each column of a ``Table``, in column order."""
    owner: dict[str, str] = {}
    by_col: dict[int, str] = {}
    incarnation, exists = 0, False
    for v in lin.versions:
        if v.table is None:  # DROP TABLE: the changes table keeps its fields (its rows stay readable)
            for k in by_col.values():
                lin.fields[k].current = False
            by_col, exists = {}, False
            lin.dropped = True
            continue
        if not exists and lin.fields:  # created again after a DROP: the dropped table's fields go
            incarnation += 1
            for f in lin.fields.values():
                f.alive = f.current = False
        existed = exists
        exists, lin.dropped = True, False
        table = v.table.identified()
        names: dict[str, str] = {}
        keys: dict[str, str] = {}
        seen: set[str] = set()
        for col, spec in zip(table.columns, spark_types(table)):
            k = by_col.get(col.column_id)
            replaced = None
            if k is not None and not widens(lin.fields[k].spec, spec):
                old = lin.fields[k]
                old.name, old.current = _retired_name(old, v.version), False
                k, replaced = None, old.key
            if k is None:
                n = sum(1 for key in lin.fields if key.startswith(f"{incarnation}.{col.column_id}."))
                k = f"{incarnation}.{col.column_id}.{n}"
                lin.fields[k] = Field(k, col.name, spec, col.column_type)
                if existed:
                    lin.fields[k].since_seq, lin.fields[k].since_ts = v.valid_from_seq, v.ts
                    lin.fields[k].default, lin.fields[k].replaces = col.column_default, replaced
                    lin.fields[k].using = replaced is not None and bool(_USING.search(v.ddl or ""))
                by_col[col.column_id] = k
            f = lin.fields[k]
            f.name, f.spec, f.doc = col.name, spec, col.column_type
            seen.add(k)
            phys = _physical(col.name, k, owner)
            if phys not in f.physical:
                f.physical.append(phys)
            names[col.name] = phys
            keys[col.name] = k
        for cid, k in list(by_col.items()):
            if k not in seen:
                lin.fields[k].alive = lin.fields[k].current = False
                del by_col[cid]
        lin.physical[(str(v.table_id), v.version)] = names
        lin.keys[(str(v.table_id), v.version)] = keys
    return lin


def column_order(lin: Lineage) -> list[Field]:
    """The alive fields of ``lin`` in the order the changes table shows them (docs/tables.md,
    "Schema evolution"): the current source columns in the source's order (an ``ADD COLUMN ...
    AFTER x`` / ``FIRST`` at its place), each retired field of a retype right before the field
    that replaced it (oldest first), a retired field whose successor is gone at the end."""
    last = [v for v in lin.versions if v.table is not None]
    keys = lin.keys[(str(last[-1].table_id), last[-1].version)].values() if last else ()
    order = [lin.fields[k] for k in keys if lin.fields[k].alive]
    successor = {f.replaces: f.key for f in lin.fields.values() if f.replaces is not None}
    placed = {f.key for f in order}
    retired = [f for f in lin.fields.values() if f.alive and f.key not in placed]
    tail: list[Field] = []
    for f in reversed(retired):  # newest first: a chain c_v2 <- c_v4 <- c reads c_v2, c_v4, c
        nxt = successor.get(f.key)
        if nxt in placed:
            at = next(i for i, g in enumerate(order) if g.key == nxt)
            order.insert(at, f)
            placed.add(f.key)
        else:
            tail.insert(0, f)
    return order + tail


def _physical(name: str, key: str, owner: dict[str, str]) -> str:
    """The physical name of field ``key`` for source name ``name`` (module docstring)."""
    candidate = name
    n = 0
    while owner.get(candidate, key) != key:
        candidate = f"{name}__f{key.replace('.', '_')}" + (f"_{n}" if n else "")
        n += 1
    owner[candidate] = key
    return candidate
