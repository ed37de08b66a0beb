"""The Iceberg schema of one of a source table's Iceberg tables, computed in one step from the
fields a commit declares (``ddlcore.sinks.fields``): the schema a new table is created with,
and the next schema of an existing table.

Owns: field ids and the order of fields.  A kept field keeps its id (a rename, a widening and
a new ``doc`` change its metadata only); a field new to the table, and each of its nested
fields, takes the next ids after the table's ``last-column-id``, in the order
``UpdateSchema.add_column`` would give them (top-level field, its nested fields, then its
field in the nested struct ``_before`` and that one's nested fields).  A field new to the
table and already dead (added and dropped within one run: its physical name is in this run's
files) takes ids too, so that the name mapping maps that name to a field no schema shows:
they are reserved by a schema holding it under a temporary name (``SchemaPlan.reserve``),
committed before the final one (Iceberg's ``last-column-id`` only grows with the schemas a
table had).  Order: the source columns in the plan's ``order`` (``fields.column_order``), then
the pipeline's columns as the table has them; ``_before`` repeats the source columns in the same
order.  Must not know: catalogs, transactions, files.

The rules of the schema changes are the Iceberg specification's (v2, "Schema Evolution"):
widening in place only (``icetypes.widens``), ids never reused.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any, Iterable

from .fields import Field
from .icetypes import to_iceberg, widens

__all__ = ["Layout", "SchemaPlan", "CHANGES", "CURRENT", "TMP_PREFIX", "new_schema", "next_schema", "tmp_name",
           "mapped"]

#: the name a field takes in a schema that only reserves its ids (module docstring)
TMP_PREFIX = "__ddlcore_rename_"


@dataclass(frozen=True)
class Layout:
    """The pipeline's columns of one kind of table, after the source columns: ``(name, type
    spec)``, spec ``None`` for ``nested`` (the struct repeating the source columns; ``None``:
    none)."""

    pipeline: tuple[tuple[str, Any], ...]
    nested: str | None


#: the changes table (docs/pipeline.md's columns; ``_before`` repeats the source columns)
CHANGES = Layout((("_op", "string"), ("_seq", "long"), ("_position", "string"), ("_ts", "long"),
                  ("_tx", "string"), ("_row", "long"), ("_absent", ["list", "string"]), ("_before", None),
                  ("_before_absent", ["list", "string"])), "_before")
#: the current-state table (docs/tables.md, "The current-state table")
CURRENT = Layout((("_seq", "long"), ("_unknown", ["list", "string"])), None)


@dataclass
class SchemaPlan:
    """A table's next schema: ``schema`` (its ``schema_id`` the table's current one, so that
    it can be given to ``UpdateSchema(schema=...)``), ``reserve`` (a schema to commit before it,
    holding the new dead fields; ``None``: none), and each declared field's top-level
    ``NestedField`` and its field in the nested struct (``top`` / ``inner``, by key; ``inner``
    empty without a nested struct).  ``changed``: ``schema`` differs from the table's."""

    schema: Any
    reserve: Any = None
    top: dict[str, Any] = field(default_factory=dict)
    inner: dict[str, Any] = field(default_factory=dict)
    changed: bool = True


def tmp_name(key: str) -> str:
    """The name of field ``key`` in a schema that only reserves its ids."""
    return f"{TMP_PREFIX}{key.replace('.', '_')}"


def _ordered(fields: list[Field], order: list[str] | None, first: Iterable[str] = ()) -> list[Field]:
    """The alive ``fields`` in ``order`` (their names); without one: the names ``first`` (the
    table's present order), then the others in ``fields``' order."""
    alive = {f.name: f for f in fields if f.alive}
    names = list(order) if order else [n for n in first if n in alive]
    seen = set(names)
    missing = [n for n in names if n not in alive]
    if missing:
        raise ValueError(f"the commit plan orders fields it does not declare: {', '.join(missing)}")
    return [alive[n] for n in names] + [f for f in alive.values() if f.name not in seen]


def _struct(fields: list[Any]) -> Any:
    from pyiceberg.types import StructType

    return StructType(*fields)


def _with(base: Any, f: Field, kind: Any) -> Any:
    """``base`` (a ``NestedField``) named and documented as ``f`` says, of type ``kind``."""
    from pyiceberg.types import NestedField

    return NestedField(field_id=base.field_id, name=f.name, field_type=kind, required=base.required, doc=f.doc,
                       initial_default=base.initial_default, write_default=base.write_default)


def new_schema(fields: list[Field], order: list[str] | None, layout: Layout) -> SchemaPlan:
    """The schema a new table is created with, for ``fields`` in ``order``: ids from 1 in the
    pre-order ``pyiceberg.schema.assign_fresh_schema_ids`` gives (top-level fields, then each
    one's nested fields), which ``create_table`` applies again unchanged; the new dead fields
    reserved (module docstring).  Built once per shape (names, types, docs, layout) in a
    process: tables of one shape share the ``Schema`` (``pyiceberg``'s models are not changed
    after they are made)."""
    alive = _ordered(fields, order)
    dead = [f for f in fields if not f.alive]
    source = [(f.name, f.spec, f.doc) for f in alive] + [(tmp_name(f.key), f.spec, f.doc) for f in dead]
    shape = json.dumps([source, layout.pipeline, layout.nested], separators=(",", ":"), default=str)
    built = _FRESH.get(shape)
    if built is None:
        if len(_FRESH) >= FRESH_CACHE:
            _FRESH.clear()
        built = _FRESH[shape] = _fresh(source, len(alive), layout)
    fresh, struct, inner = built
    plan = SchemaPlan(fresh)
    for f in alive + dead:
        name = f.name if f.alive else tmp_name(f.key)
        plan.top[f.key] = struct.field_by_name(name)
        if inner is not None:
            plan.inner[f.key] = inner.field_by_name(name)
    if dead:
        plan.reserve = fresh
        plan.schema = _without_tmp(fresh, layout, fresh.schema_id)
    return plan


#: new tables' schemas by shape (``new_schema``): the tables of one shape (sharded tables, a
#: run's many tables of few layouts) share one immutable ``Schema``; at most this many kept
FRESH_CACHE = 256
_FRESH: dict[str, tuple[Any, Any, Any]] = {}


def _fresh(source: list[tuple[str, Any, str | None]], alive: int, layout: Layout) -> tuple[Any, Any, Any]:
    """``new_schema``'s schema of the fields ``source`` (``(name, spec, doc)``, the first
    ``alive`` of them in the current schema), its struct and its nested struct (or ``None``)."""
    from pyiceberg.schema import Schema
    from pyiceberg.types import NestedField

    ids = _Ids(0)
    names = source[:alive] + [(n, spec, None) for n, spec in layout.pipeline] + source[alive:]
    top_ids = [ids() for _ in names]
    top = []
    for field_id, (name, spec, doc) in zip(top_ids, names):
        if spec is None:  # the nested struct: its fields' ids, then their nested fields'
            inner_ids = [ids() for _ in source]
            kind = _struct([NestedField(i, n, to_iceberg(s, ids), required=False, doc=d)
                            for i, (n, s, d) in zip(inner_ids, source)])
        else:
            kind = to_iceberg(spec, ids)
        top.append(NestedField(field_id, name, kind, required=False, doc=doc))
    fresh = Schema(*top)
    struct = fresh.as_struct()
    return fresh, struct, struct.field_by_name(layout.nested).field_type if layout.nested else None


def _without_tmp(schema: Any, layout: Layout, schema_id: int) -> Any:
    """``schema`` without the fields named ``tmp_name(...)`` (top level and nested struct)."""
    from pyiceberg.schema import Schema

    out = []
    for f in schema.fields:
        if f.name.startswith(TMP_PREFIX):
            continue
        if f.name == layout.nested:
            f = _nested_field(f, [g for g in f.field_type.fields if not g.name.startswith(TMP_PREFIX)])
        out.append(f)
    return Schema(*out, schema_id=schema_id, identifier_field_ids=schema.identifier_field_ids)


def _nested_field(base: Any, fields: list[Any]) -> Any:
    from pyiceberg.types import NestedField

    return NestedField(field_id=base.field_id, name=base.name, field_type=_struct(fields), required=base.required,
                       doc=base.doc, initial_default=base.initial_default, write_default=base.write_default)


class _Ids:
    """The next field ids of a table (after ``last``), assigned as ``add_column`` assigns them."""

    def __init__(self, last: int):
        self._next = itertools.count(last + 1)

    def __call__(self) -> int:
        return next(self._next)

    def new(self, name: str, f: Field) -> Any:
        from pyiceberg.types import NestedField

        field_id = self()
        return NestedField(field_id, name, to_iceberg(f.spec, self), required=False, doc=f.doc)


def _kept(base: Any, old: dict[str, Any], f: Field, where: str) -> Any:
    """The field ``base`` of the table (declared ``old``) as ``f`` declares it now."""
    if f.spec == old["spec"]:
        return _with(base, f, base.field_type)
    if not widens(old["spec"], f.spec):
        raise ValueError(f"Iceberg table {where}: field {f.name!r} ({f.key}) cannot change type in place "
                         f"from {old['spec']} to {f.spec}")
    return _with(base, f, to_iceberg(f.spec))


def next_schema(schema: Any, last_column_id: int, old: dict[str, dict[str, Any]], fields: list[Field],
                order: list[str] | None, layout: Layout, where: str) -> SchemaPlan:
    """The next schema of a table whose current schema is ``schema`` (``last_column_id``: its
    metadata's), which declared ``old`` (property ``ddlcore.fields``: key → ``name``, ``spec``,
    ``alive``, ...), for ``fields`` in ``order`` (module docstring).  Fields the table declared
    alive and ``fields`` does not are deleted; fields named ``tmp_name(...)`` (ids reserved by an
    earlier commit) are left out.  ``where`` names the table in errors.  Raises ``ValueError``
    for a declared field the schema lacks, a field that was dropped and is alive again, or a
    type change Iceberg does not allow in place."""
    struct = schema.as_struct()
    inner = struct.field_by_name(layout.nested) if layout.nested else None
    if layout.nested and inner is None:
        raise ValueError(f"Iceberg table {where}: its schema has no {layout.nested} field")
    live = {k: v for k, v in old.items() if v.get("alive", True)}
    found: dict[str, tuple[Any, Any]] = {}
    for k, v in live.items():
        top = struct.field_by_name(v["name"])
        nested = inner.field_type.field_by_name(v["name"]) if inner is not None else None
        if top is None or (inner is not None and nested is None):
            raise ValueError(f"Iceberg table {where}: field {v['name']!r} ({k}), declared by its property "
                             f"ddlcore.fields, is not in its schema")
        found[k] = (top, nested)
    ids = _Ids(last_column_id)
    plan = SchemaPlan(schema)
    alive = _ordered(fields, order, [f.name for f in struct.fields])
    for f in alive + [f for f in fields if not f.alive and f.key not in old]:
        if f.key in found:
            top, nested = found[f.key]
            plan.top[f.key] = _kept(top, live[f.key], f, where)
            if nested is not None:
                plan.inner[f.key] = _kept(nested, live[f.key], f, where)
            continue
        if f.key in old:
            raise ValueError(f"Iceberg table {where}: field {f.name!r} ({f.key}) was dropped; it cannot be alive again")
        name = f.name if f.alive else tmp_name(f.key)
        plan.top[f.key] = ids.new(name, f)
        if inner is not None:
            plan.inner[f.key] = ids.new(name, f)
    source = {top.field_id for top, _ in found.values()}
    nested_source = {nested.field_id for _, nested in found.values() if nested is not None}
    dead = [f for f in fields if not f.alive and f.key not in old]
    plan.schema = _assemble(schema, [plan.top[f.key] for f in alive], [plan.inner.get(f.key) for f in alive],
                            source, nested_source, layout)
    if dead:
        plan.reserve = _assemble(schema, [plan.top[f.key] for f in alive + dead],
                                 [plan.inner.get(f.key) for f in alive + dead], source, nested_source, layout)
    plan.changed = plan.reserve is not None or plan.schema != schema
    return plan


def _assemble(schema: Any, top: list[Any], inner: list[Any], source: set[int], nested_source: set[int],
              layout: Layout) -> Any:
    """``top`` (the source fields), then the fields of ``schema`` that are not source fields
    (``source``: the ids of those it had) nor named ``tmp_name(...)``, in its order; the nested
    struct likewise with ``inner``."""
    from pyiceberg.schema import Schema

    def rest(fields: Iterable[Any], ids: set[int]) -> list[Any]:
        return [f for f in fields if f.field_id not in ids and not f.name.startswith(TMP_PREFIX)]

    out = list(top)
    for f in rest(schema.fields, source):
        if f.name == layout.nested:
            f = _nested_field(f, [g for g in inner if g is not None] + rest(f.field_type.fields, nested_source))
        out.append(f)
    return Schema(*out, schema_id=schema.schema_id, identifier_field_ids=schema.identifier_field_ids)


def mapped(f: Any, names: list[str]) -> dict[str, Any]:
    """The name-mapping entry of a schema field: ``names``, and its nested fields by the names
    Spark gives them in Parquet (``element``; ``key`` / ``value``; struct fields by name)."""
    out: dict[str, Any] = {"field-id": f.field_id, "names": list(names)}
    nested = _mapped_nested(f.field_type)
    if nested:
        out["fields"] = nested
    return out


def _mapped_nested(kind: Any) -> list[dict[str, Any]]:
    from pyiceberg.types import ListType, MapType, StructType

    if isinstance(kind, ListType):
        return [mapped(kind.element_field, ["element"])]
    if isinstance(kind, MapType):
        return [mapped(kind.key_field, ["key"]), mapped(kind.value_field, ["value"])]
    if isinstance(kind, StructType):
        return [mapped(f, [f.name]) for f in kind.fields]
    return []

