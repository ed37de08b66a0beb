"""What changed between two versions of a table.

Owns: ``TableDiff`` and the column lineage that explains it.  Must not know: DDL, stores.

A column is followed by its identity (``Column.column_id``, given where the DDL was applied:
``RENAME COLUMN`` / ``CHANGE old new`` keep it, ``DROP`` + ``ADD`` make a new one), step by
step along the table's version chain, so ``RENAME COLUMN a TO b`` and a later ``MODIFY b
BIGINT`` are one column and ``DROP COLUMN a, ADD COLUMN b`` is a drop and an add, never a
rename.  Versions recorded before identities existed have columns without ids: between two
such versions (or one such and one with ids) a column is its name (same name, same column;
no rename is inferred).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..model import Column, Table, TableId, casefold_key

__all__ = ["ColumnChange", "TableDiff", "diff_tables", "TYPE_FIELDS"]

#: column fields whose change is a change of type (how a value is stored or decoded)
TYPE_FIELDS = ("data_type", "column_type", "character_maximum_length", "character_octet_length",
               "numeric_precision", "numeric_scale", "datetime_precision", "character_set_name",
               "collation_name", "enum_values", "set_values", "unsigned", "zerofill",
               "array_dimensions", "srid")
_IGNORED = ("name", "ordinal_position", "column_id")


@dataclass(frozen=True)
class ColumnChange:
    """A column present in both versions whose definition changed: ``previous_name`` (in the
    old version), ``name`` (in the new one) and ``fields``: ``{field: [old, new]}`` for each
    differing field of ``Column`` (name and position excluded)."""

    name: str
    previous_name: str
    fields: dict[str, tuple[Any, Any]]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "previous_name": self.previous_name,
                "fields": {k: [_js(a), _js(b)] for k, (a, b) in self.fields.items()}}


def _js(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


@dataclass(frozen=True)
class TableDiff:
    """Differences from version ``from_version`` to ``to_version`` of ``table_id``.

    * ``added`` / ``dropped``: columns (as ``Column``) only in the new / old version;
    * ``renamed``: ``(old_name, new_name)`` pairs;
    * ``retyped``: columns whose type changed (any of ``TYPE_FIELDS``);
    * ``altered``: columns whose other attributes changed (nullability, default, comment, ...);
    * ``moved``: names (new version) of columns whose relative order changed;
    * ``primary_key``: ``(old, new)`` key column lists when the primary key changed, else None;
    * ``indexes_added`` / ``indexes_dropped``, ``foreign_keys_added`` / ``foreign_keys_dropped``:
      index / foreign key names;
    * ``table``: table-level fields that changed (``id``, charset, collation, comment, options)
      as ``{field: (old, new)}``;
    * ``before`` / ``after``: the two tables (``None`` where the version is a drop).
    """

    table_id: TableId
    from_version: int
    to_version: int
    before: Table | None
    after: Table | None
    added: tuple[Column, ...] = ()
    dropped: tuple[Column, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()
    retyped: tuple[ColumnChange, ...] = ()
    altered: tuple[ColumnChange, ...] = ()
    moved: tuple[str, ...] = ()
    primary_key: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    indexes_added: tuple[str, ...] = ()
    indexes_dropped: tuple[str, ...] = ()
    foreign_keys_added: tuple[str, ...] = ()
    foreign_keys_dropped: tuple[str, ...] = ()
    table: dict[str, tuple[Any, Any]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        """True when the two versions have the same columns, keys and table fields."""
        return not (self.added or self.dropped or self.renamed or self.retyped or self.altered
                    or self.moved or self.primary_key or self.indexes_added or self.indexes_dropped
                    or self.foreign_keys_added or self.foreign_keys_dropped or self.table
                    or (self.before is None) != (self.after is None))

    @property
    def key_changes(self) -> bool:
        return bool(self.primary_key or self.indexes_added or self.indexes_dropped
                    or self.foreign_keys_added or self.foreign_keys_dropped)

    def to_json(self) -> dict[str, Any]:
        return {
            "table_id": self.table_id.to_json(), "from_version": self.from_version,
            "to_version": self.to_version,
            "exists": [self.before is not None, self.after is not None],
            "added": [c.to_json() for c in self.added],
            "dropped": [c.to_json() for c in self.dropped],
            "renamed": [list(p) for p in self.renamed],
            "retyped": [c.to_json() for c in self.retyped],
            "altered": [c.to_json() for c in self.altered],
            "moved": list(self.moved),
            "primary_key": None if self.primary_key is None else [list(k) for k in self.primary_key],
            "indexes_added": list(self.indexes_added), "indexes_dropped": list(self.indexes_dropped),
            "foreign_keys_added": list(self.foreign_keys_added),
            "foreign_keys_dropped": list(self.foreign_keys_dropped),
            "table": {k: [_js(a), _js(b)] for k, (a, b) in self.table.items()},
        }


def _step(a: Table | None, b: Table | None, key: Callable[[str], str]) -> dict[str, str | None]:
    """Column lineage between two consecutive versions: old name → new name (or None).

    By ``column_id`` when every column of both versions has one (the identity the DDL gave);
    else (a version recorded before identities existed) by name: same name, same column."""
    if a is None or b is None:
        return {c.name: None for c in (a.columns if a else ())}
    if all(c.column_id is not None for c in a.columns + b.columns):
        by_id = {c.column_id: c.name for c in b.columns}
        return {c.name: by_id.get(c.column_id) for c in a.columns}
    b_by_key = {key(c.name): c.name for c in b.columns}
    return {c.name: b_by_key.get(key(c.name)) for c in a.columns}


def _lis_keep(seq: list[int]) -> set[int]:
    """Indexes (into ``seq``) of one longest increasing subsequence."""
    import bisect
    tails: list[int] = []
    tails_idx: list[int] = []
    prev = [-1] * len(seq)
    for i, x in enumerate(seq):
        k = bisect.bisect_left(tails, x)
        if k == len(tails):
            tails.append(x)
            tails_idx.append(i)
        else:
            tails[k] = x
            tails_idx[k] = i
        prev[i] = tails_idx[k - 1] if k else -1
    keep: set[int] = set()
    i = tails_idx[-1] if tails_idx else -1
    while i != -1:
        keep.add(i)
        i = prev[i]
    return keep


def diff_tables(chain: Sequence[Table | None], table_id: TableId, from_version: int, to_version: int,
                key: Callable[[str], str] = casefold_key) -> TableDiff:
    """The ``TableDiff`` between ``chain[0]`` and ``chain[-1]``, where ``chain`` holds every
    version in between in order (``None`` for a version where the table did not exist).
    ``key``: how column names compare (default: case-insensitive, as MySQL)."""
    if not chain:
        raise ValueError("empty version chain")
    a, b = chain[0], chain[-1]
    lineage: dict[str, str | None] = {c.name: c.name for c in (a.columns if a else ())}
    for x, y in zip(chain, chain[1:]):
        step = _step(x, y, key)
        lineage = {old: (None if cur is None else step.get(cur)) for old, cur in lineage.items()}

    added: list[Column] = []
    dropped: list[Column] = []
    renamed: list[tuple[str, str]] = []
    retyped: list[ColumnChange] = []
    altered: list[ColumnChange] = []
    b_cols = {key(c.name): c for c in (b.columns if b else ())}
    image: set[str] = set()
    survivors: list[tuple[Column, Column]] = []
    for c in (a.columns if a else ()):
        new_name = lineage.get(c.name)
        n = b_cols.get(key(new_name)) if new_name is not None else None
        if n is None:
            dropped.append(c)
            continue
        image.add(key(n.name))
        survivors.append((c, n))
        if n.name != c.name:
            renamed.append((c.name, n.name))
        old_d, new_d = c.to_json(), n.to_json()
        diffs = {k: (old_d[k], new_d[k]) for k in old_d if k not in _IGNORED and old_d[k] != new_d[k]}
        t = {k: v for k, v in diffs.items() if k in TYPE_FIELDS}
        o = {k: v for k, v in diffs.items() if k not in TYPE_FIELDS}
        if t:
            retyped.append(ColumnChange(n.name, c.name, {k: _tup(v) for k, v in t.items()}))
        if o:
            altered.append(ColumnChange(n.name, c.name, {k: _tup(v) for k, v in o.items()}))
    for c in (b.columns if b else ()):
        if key(c.name) not in image:
            added.append(c)
    order = [n.ordinal_position for _, n in survivors]
    keep = _lis_keep(order)
    moved = tuple(n.name for i, (_, n) in enumerate(survivors) if i not in keep)

    pk = None
    if a is not None and b is not None:
        mapped = tuple(lineage.get(c) or c for c in a.primary_key)
        if [key(x) for x in mapped] != [key(x) for x in b.primary_key]:
            pk = (a.primary_key, b.primary_key)
    elif (a.primary_key if a else ()) != (b.primary_key if b else ()):
        pk = (a.primary_key if a else (), b.primary_key if b else ())

    def follow(cols: Sequence[str | None]) -> tuple:
        return tuple(None if c is None else key(lineage.get(c) or c) for c in cols)

    def names(t: Table | None, attr: str, old: bool) -> dict[str, Any]:
        """name → comparable form (columns followed through renames on the old side)."""
        out: dict[str, Any] = {}
        for i, x in enumerate(getattr(t, attr) if t else ()):
            cols = follow(x.columns) if old else tuple(None if c is None else key(c) for c in x.columns)
            if attr == "indexes":
                out[x.name or f"#{i}"] = (x.kind, cols, x.comment)
            else:
                out[x.name or f"#{i}"] = (cols, x.referenced_table, x.referenced_columns, x.on_delete, x.on_update)
        return out

    ia, ib = names(a, "indexes", True), names(b, "indexes", False)
    fa, fb = names(a, "foreign_keys", True), names(b, "foreign_keys", False)
    table: dict[str, tuple[Any, Any]] = {}
    if a is not None and b is not None:
        if a.id != b.id:
            table["id"] = (str(a.id), str(b.id))
        for f in ("default_character_set_name", "default_collation_name", "comment"):
            if getattr(a, f) != getattr(b, f):
                table[f] = (getattr(a, f), getattr(b, f))
        if dict(a.options) != dict(b.options):
            table["options"] = (dict(a.options), dict(b.options))
    return TableDiff(
        table_id=table_id, from_version=from_version, to_version=to_version, before=a, after=b,
        added=tuple(added), dropped=tuple(dropped), renamed=tuple(renamed), retyped=tuple(retyped),
        altered=tuple(altered), moved=moved, primary_key=pk,
        indexes_added=tuple(k for k in ib if k not in ia or ia[k] != ib[k]),
        indexes_dropped=tuple(k for k in ia if k not in ib or ia[k] != ib[k]),
        foreign_keys_added=tuple(k for k in fb if k not in fa or fa[k] != fb[k]),
        foreign_keys_dropped=tuple(k for k in fa if k not in fb or fa[k] != fb[k]),
        table=table)


def _tup(v: tuple[Any, Any]) -> tuple[Any, Any]:
    return (v[0], v[1])
