"""A table new to the catalog is created with its final schema in the creating transaction
(``ddlcore.sinks.iceschema.new_schema``); an existing one evolves (``next_schema``).  Both paths
must give the same table: the same schema (names, types, docs, order), a name mapping that
sends every physical name to the same field, and the same rows in every reader — after a first
run that adds, drops (a column added and dropped within the run), renames and widens, and after
a second run that drops, re-adds a name with another type, renames back and adds ``FIRST``.  The
declared field ids (table property ``ddlcore.fields``, the name mapping) are the schema's."""

from __future__ import annotations

import json

import pytest

from ddlcore.history import SchemaHistory

pytest.importorskip("pyiceberg")

from ddlcore.sinks.iceberg import IcebergSink, open_catalog  # noqa: E402
from ddlcore.sinks.icecommit import NAME_MAPPING, PROPERTY_FIELDS, commit  # noqa: E402
from ddlcore.sinks.iceschema import CHANGES, new_schema  # noqa: E402

from .support import LocalFS, write_row  # noqa: E402

RUNS = [
    ["CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(9))", "ALTER TABLE t ADD COLUMN c INT",
     "ALTER TABLE t DROP COLUMN c", "ALTER TABLE t RENAME COLUMN a TO a2", "ALTER TABLE t MODIFY id BIGINT"],
    ["ALTER TABLE t DROP COLUMN b", "ALTER TABLE t ADD COLUMN b INT", "ALTER TABLE t RENAME COLUMN a2 TO a",
     "ALTER TABLE t ADD COLUMN c VARCHAR(9) FIRST", "ALTER TABLE t MODIFY b VARCHAR(9)"],
]


def _run(out, hist, stmts, seq0, run, previous):
    """Record ``stmts``, write one row after each in the version it made, return the plan."""
    for i, ddl in enumerate(stmts):
        hist.record({"seq": seq0 + i, "ddl": ddl, "database": "d"})
    sink = IcebergSink(str(out), dialect="mysql")
    written = {v.version: v.table for v in sink.prepare(hist, hist.all_versions(), dialect="mysql")}
    for i in range(len(stmts)):
        seq = seq0 + i
        v = next(x for x in hist.versions("d.t") if x.valid_from_seq <= seq
                 and (x.valid_to_seq is None or x.valid_to_seq > seq))
        write_row(out, written[v.version], v.version, 1000 + seq, run)
    plan = sink.plan(LocalFS(out), "", run, 1000 + seq0 + len(stmts), previous)
    plan["tables"][0]["dirs"] = sorted({str(p.parent.relative_to(out)) for p in out.rglob(f"{run}-*.parquet")})
    return plan


def _shape(kind):
    """A type without its field ids: ``list<string>``, ``struct<a: int, ...>`` with docs."""
    from pyiceberg.types import ListType, StructType

    if isinstance(kind, StructType):
        return [(f.name, _shape(f.field_type), f.doc) for f in kind.fields]
    if isinstance(kind, ListType):
        return ["list", _shape(kind.element_type)]
    return str(kind)


def _resolved(table):
    """The name mapping as physical name path → field name path in the current schema (or
    ``None``: a field no schema column shows)."""
    by_id = {fid: table.schema().find_column_name(fid) for fid in table.schema()._lazy_id_to_field}
    out = {}

    def walk(entries, prefix):
        for e in entries:
            for name in e["names"]:
                out[prefix + (name,)] = by_id.get(e["field-id"])
                walk(e.get("fields", []), prefix + (name,))

    walk(json.loads(table.properties[NAME_MAPPING]), ())
    return out


def _check_declared_ids(table):
    """Every declared field's ids are the schema's (alive) or reserved (at most
    ``last-column-id``, in no current column)."""
    schema, last = table.schema(), table.metadata.last_column_id
    for key, d in json.loads(table.properties[PROPERTY_FIELDS]).items():
        if d["alive"]:
            assert d["map"]["field-id"] == schema.find_field(d["name"]).field_id, key
            assert d["before_map"]["field-id"] == schema.find_field(f"_before.{d['name']}").field_id, key
        else:
            for m in (d["map"], d["before_map"]):
                assert m["field-id"] <= last and schema.find_column_name(m["field-id"]) is None, key


def test_a_new_table_equals_the_one_the_evolving_path_gives(tmp_path):
    created, evolved = tmp_path / "created", tmp_path / "evolved"
    plans = {}
    for out in (created, evolved):
        hist = SchemaHistory(dialect="mysql")
        previous, seq0 = None, 1
        for n, stmts in enumerate(RUNS):
            plan = _run(out, hist, stmts, seq0, f"run{n}", previous)
            cat = open_catalog(plan["catalog"])
            if out == evolved and n == 0:  # an existing table without fields: every field evolves in
                cat.create_namespace("d")
                cat.create_table(("d", "t__changes"), new_schema([], None, CHANGES).schema,
                                 location=f"file://{out}/_iceberg/d/t__changes")
            commit(plan, LocalFS(out))
            plans[out, n] = cat.load_table(("d", "t__changes"))
            previous, seq0 = seq0 + len(stmts) - 1, seq0 + len(stmts)
    for n in range(len(RUNS)):
        a, b = plans[created, n], plans[evolved, n]
        assert _shape(a.schema().as_struct()) == _shape(b.schema().as_struct())
        assert _resolved(a) == _resolved(b)
        assert a.scan().to_arrow().sort_by("_seq").to_pylist() == b.scan().to_arrow().sort_by("_seq").to_pylist()
        _check_declared_ids(a)
        _check_declared_ids(b)
    first = plans[created, 0]
    assert len(first.metadata.schemas) == 2  # created with the dead field reserved, then without it
    assert [f.name for f in first.schema().fields][:3] == ["id", "a2", "b"]
    rows = first.scan().to_arrow().sort_by("_seq").to_pylist()
    assert [r["a2"] for r in rows] == [(1000 + seq) * 100 + 2 for seq in range(1, 6)]  # a's values, renamed
    last = plans[created, 1].scan().to_arrow().sort_by("_seq").to_pylist()
    assert [r["b"] for r in last][:9] == [None] * 9  # the re-added b never shows the old b's (nor int b's)
    assert last[-1]["b"].startswith("s1010.")


def test_a_new_schema_has_the_ids_create_table_gives_it():
    """Nested types too (a list, a map, a struct; in ``_before``): ``create_table`` re-assigns
    fresh ids in pre-order, which must leave the declared ones unchanged."""
    from pyiceberg.schema import assign_fresh_schema_ids

    from ddlcore.sinks.fields import Field

    fields = [Field("0.1.0", "id", "long", "bigint"), Field("0.2.0", "tags", ["list", "string"], "set('a')"),
              Field("0.3.0", "m", ["map", "string", ["list", "int"]], "json"),
              Field("0.4.0", "s", ["struct", [["x", "int"], ["y", ["list", "long"]]]], "row"),
              Field("0.5.0", "gone", ["list", "int"], "int[]", alive=False)]
    plan = new_schema(fields, ["s", "id", "tags", "m"], CHANGES)
    assert assign_fresh_schema_ids(plan.reserve) == plan.reserve
    assert [f.name for f in plan.schema.fields][:4] == ["s", "id", "tags", "m"]
    assert plan.schema.highest_field_id < plan.reserve.highest_field_id  # the dead field's ids reserved
    assert plan.top["0.5.0"].field_id not in plan.schema._lazy_id_to_field
