"""The table versions a run tags row events with: which they are, which can get rows, how they
are named and grouped for conversion.

Owns: ``version_list`` (the history's versions a row can be tagged with; a run refers to one by
its index), ``label``, ``fold_name`` (table names as the history compares them), ``collisions``
and ``live`` (versions whose rows are quarantined, versions that can get rows after a
checkpoint), ``conversion_groups`` (versions converted by one plan: equal models but for the
name), and the output's own columns (``META_COLUMNS``, ``META_METADATA``).  Must not know:
Spark, how rows are converted or written.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ..history import TableVersion

__all__ = ["version_list", "label", "fold_name", "fold_key", "meta_collision", "collisions", "live", "case_collision",
           "shape", "shape_key", "conversion_groups", "META_COLUMNS", "META_METADATA"]

#: the pipeline's own columns in every row file
META_COLUMNS = ("_op", "_seq", "_position", "_ts", "_tx", "_row", "_absent", "_before", "_before_absent")
#: the field metadata of the pipeline's own columns (``comment`` is the key Spark shows as a
#: column comment; ``unit`` names the unit of a number)
META_METADATA: dict[str, dict[str, str]] = {
    "_op": {"comment": "the change: c insert, u update, d delete, r snapshot read, t truncate"},
    "_seq": {"comment": "the event's seq in the change log (its order)"},
    "_position": {"comment": "the event's position in the source's log (binlog file:offset, GTID, LSN, commit_ts)"},
    "_ts": {"comment": "commit time of the change: milliseconds since the Unix epoch (UTC)", "unit": "ms"},
    "_tx": {"comment": "the transaction (GTID or its BEGIN position, PostgreSQL xid); null when the log has none"},
    "_row": {"comment": "index of the row within the source's row event"},
    "_absent": {"comment": "columns absent from the row image: null because unknown, not NULL"},
    "_before": {"comment": "the before image (u and d)"},
    "_before_absent": {"comment": "columns absent from the before image"},
}


def fold_name(name: str | None, fold: bool) -> str | None:
    """``name`` lower-cased when the history folds table names (``fold``), else as it is."""
    return name.lower() if (fold and name is not None) else name


def fold_key(table_id: Any, fold: bool) -> tuple:
    """``(database, schema, name)`` of ``table_id`` (a ``TableId``), each ``fold_name``d."""
    return (fold_name(table_id.database, fold), fold_name(table_id.schema, fold), fold_name(table_id.name, fold))


def label(v: TableVersion, db: bool = True) -> str:
    """A version's table as a run names it: ``database.[schema.]table`` (``?`` for no
    database), without the database when ``db`` is false (``RunResult.counts``' ``table``)."""
    tid = v.table_id
    parts = ([tid.database or "?"] if db else []) + ([tid.schema] if tid.schema is not None else [])
    return ".".join(parts + [v.table_id.name])


def meta_collision(table) -> bool:
    """Some column of ``table`` is named like a pipeline column (``META_COLUMNS``)."""
    return bool(set(table.column_names) & set(META_COLUMNS))


def collisions(versions: list[TableVersion]) -> dict[int, str]:
    """The versions (indexes into ``version_list``) with a source column named like a pipeline
    column (``_op``, ...), each with the reason its rows are quarantined: never mixed up with
    the pipeline's own columns."""
    return {k: (f"column name(s) {', '.join(sorted(set(v.table.column_names) & set(META_COLUMNS)))} "
                f"of {v.table_id.name} collide with the pipeline's own columns: rows not written")
            for k, v in enumerate(versions) if v.table is not None and meta_collision(v.table)}


def live(versions: list[TableVersion], last: int | None) -> list[int]:
    """The versions (indexes into ``version_list``, ascending) that can get rows in a run
    after the checkpoint ``last`` (``None``: a first run): with a model, not blocked, no
    column named like the pipeline's, in force past ``last``."""
    return [k for k, v in enumerate(versions)
            if v.table is not None and not v.blocked and not meta_collision(v.table)
            and (last is None or v.valid_to_seq is None or v.valid_to_seq > last)]


def case_collision(table) -> bool:
    """Some column names of ``table`` differ only in case (PostgreSQL)."""
    names = [n.lower() for n in table.column_names]
    return len(set(names)) != len(names)


#: the table model's fields that name the table: versions equal but for these are converted alike
_IDENTITY_FIELDS = ("database", "schema", "name")


def shape(model: dict[str, Any]) -> str:
    """What a version's conversion and ``struct_type`` depend on: its table model's JSON
    (``Table.to_json()``) but the table's name (``_IDENTITY_FIELDS``), as canonical text."""
    return json.dumps({f: x for f, x in model.items() if f not in _IDENTITY_FIELDS}, sort_keys=True, default=str)


def shape_key(table: Any) -> tuple[Any, ...]:
    """A cheap cache key of a version's ``shape``: the fields of its ``Table`` but its ``id``
    (the name), as a tuple, hashable because the model's dataclasses are frozen (a few
    microseconds, against ``shape``'s 0.1 ms of JSON).  Equal keys have equal shapes."""
    names = _SHAPE_FIELDS.get(type(table))
    if names is None:
        import dataclasses

        names = _SHAPE_FIELDS[type(table)] = tuple(f.name for f in dataclasses.fields(table) if f.name != "id")
    return tuple(getattr(table, n) for n in names)


_SHAPE_FIELDS: dict[type, tuple[str, ...]] = {}  # ``shape_key``'s field names per model class


def conversion_groups(todo: list[int], models: list[Any]) -> list[list[int]]:
    """``todo`` (version indexes into ``models``, the versions' tables) grouped by what their
    conversion and output schema depend on: the table model (columns, key, defaults, options: what
    ``SparkRules.rule`` may read)
    but its name.  Versions in a group get the same ``RowConverter`` rules and ``struct_type``
    (both are functions of the model without its name), so one plan converts them all.
    Groups keep ``todo``'s order (by their first version).  A version with a column named
    like the partition column (``_part``, in any case) is written alone."""
    groups: dict[str, list[int]] = {}
    for k in todo:
        if any(n.lower() == "_part" for n in models[k].column_names):
            groups[f"alone {k}"] = [k]
            continue
        groups.setdefault(shape(models[k].to_json()), []).append(k)
    return list(groups.values())


def version_list(hist) -> list[TableVersion]:
    """The table versions of the history ``hist`` that row events can be tagged with
    (``ddlcore.history.TableVersion``: ``table_id``, ``version``, ``valid_from_seq`` /
    ``valid_to_seq``, ``kind``, ``table`` — the model — and, when ``blocked``, the ``reason`` its
    span's rows are quarantined with).  Dropped spans are left out (rows there are of an unknown
    table).  A run refers to a version by its index in this list (the staged ``_part``)."""
    return [v for v in hist.all_versions() if v.table is not None or v.blocked]
