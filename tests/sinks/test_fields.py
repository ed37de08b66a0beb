"""The Iceberg fields and physical names of a source table, from its history alone
(``ddlcore.sinks.fields``), and the Iceberg names (``ddlcore.sinks.naming``)."""

from __future__ import annotations

import dataclasses

import hypothesis.strategies as st
from hypothesis import given

from ddlcore.history import SchemaHistory
from ddlcore.model import TableId
from ddlcore.sinks import ColumnAdded, ColumnDropped, ColumnRenamed, ColumnRetyped, TableRenamed, schema_changes
from ddlcore.sinks.fields import build_fields, lineages
from ddlcore.sinks.naming import CHANGES_SUFFIX, changes_name, component, current_name

_SPECS = {"int": "int", "bigint": "long", "varchar": "string", "text": "string", "decimal": None}


def _types(table):
    return [["decimal", c.numeric_precision, c.numeric_scale] if c.data_type == "decimal" else _SPECS[c.data_type]
            for c in table.columns]


def _history(script: str) -> SchemaHistory:
    h = SchemaHistory(dialect="mysql")
    for i, text in enumerate(h.parser.split(script), 1):
        h.record({"seq": i, "ddl": text.text, "database": "d"})
    return h


def _lineage(script: str):
    (lin,) = [build_fields(x, _types) for x in lineages(_history(script).all_versions())]
    return lin


def test_rename_keeps_the_field_and_a_reused_name_gets_its_own_physical_name():
    lin = _lineage("""
        CREATE TABLE t (id INT PRIMARY KEY, a INT, c INT);
        ALTER TABLE t RENAME COLUMN a TO b;
        ALTER TABLE t ADD COLUMN a VARCHAR(5);
        ALTER TABLE t DROP COLUMN c;
        ALTER TABLE t ADD COLUMN c INT;
    """)
    f = {k: (x.name, x.physical, x.alive) for k, x in lin.fields.items()}
    assert f == {"0.1.0": ("id", ["id"], True), "0.2.0": ("b", ["a", "b"], True),
                 "0.3.0": ("c", ["c"], False), "0.4.0": ("a", ["a__f0_4_0"], True),
                 "0.5.0": ("c", ["c__f0_5_0"], True)}
    assert lin.physical[("d.t", 5)] == {"id": "id", "b": "b", "a": "a__f0_4_0", "c": "c__f0_5_0"}
    owners = [p for x in lin.fields.values() for p in x.physical]
    assert len(owners) == len(set(owners))  # every physical name belongs to one field


def test_widening_updates_in_place_and_other_retypes_retire_the_old_field():
    lin = _lineage("""
        CREATE TABLE t (id INT PRIMARY KEY, n INT, code INT, p DECIMAL(5,2));
        ALTER TABLE t MODIFY n BIGINT, MODIFY code VARCHAR(20), MODIFY p DECIMAL(9,2);
        ALTER TABLE t MODIFY p DECIMAL(9,3);
    """)
    f = {k: (x.name, x.spec, x.physical, x.alive, x.current) for k, x in lin.fields.items()}
    assert f["0.2.0"] == ("n", "long", ["n"], True, True)
    assert f["0.3.0"] == ("code__int_v2", "int", ["code"], True, False)
    assert f["0.3.1"] == ("code", "string", ["code__f0_3_1"], True, True)
    assert f["0.4.0"] == ("p__decimal9_2_v3", ["decimal", 9, 2], ["p"], True, False)
    assert f["0.4.1"] == ("p", ["decimal", 9, 3], ["p__f0_4_1"], True, True)


def test_a_renamed_table_is_one_lineage_and_a_recreated_one_a_new_incarnation():
    lin = _lineage("""
        CREATE TABLE t (id INT, a INT);
        RENAME TABLE t TO u;
        DROP TABLE u;
        CREATE TABLE u (id INT, b INT);
    """)
    assert [str(n) for n in lin.names] == ["d.t", "d.u"]
    f = {k: (x.name, x.physical, x.alive) for k, x in lin.fields.items()}
    assert f == {"0.1.0": ("id", ["id"], False), "0.2.0": ("a", ["a"], False),
                 "1.1.0": ("id", ["id__f1_1_0"], True), "1.2.0": ("b", ["b"], True)}


def test_typed_schema_changes_follow_identity():
    h = _history("CREATE TABLE t (id INT, a INT, c INT); ALTER TABLE t DROP COLUMN a, ADD COLUMN b INT AFTER id, "
                 "RENAME COLUMN c TO c2, MODIFY id BIGINT; RENAME TABLE t TO u;")
    v = h.versions("d.t")
    got = schema_changes(v[0].table, v[1].table, 2)
    assert [type(c).__name__ for c in got] == ["ColumnDropped", "ColumnRenamed", "ColumnRetyped", "ColumnAdded"]
    assert isinstance(got[0], ColumnDropped) and got[0].column.name == "a"
    assert isinstance(got[1], ColumnRenamed) and (got[1].previous_name, got[1].name) == ("c", "c2")
    assert isinstance(got[2], ColumnRetyped) and got[2].column_type == "bigint(20)"
    assert isinstance(got[3], ColumnAdded) and (got[3].column.name, got[3].after) == ("b", "id")
    moved = schema_changes(v[1].table, h.versions("d.u")[0].table, 3)
    assert moved == [TableRenamed(TableId("d", None, "u"), 3, TableId("d", None, "t"))]


@given(st.text(min_size=1, max_size=8), st.text(min_size=1, max_size=8))
def test_iceberg_names_never_collide(a, b):
    ca, cb = component(a), component(b)
    assert "__" not in ca and "." not in ca
    assert (ca == cb) == (a == b)
    ta, tb = TableId("d", None, a), TableId("d", None, b)
    assert changes_name(ta) != current_name(tb)
    assert changes_name(ta)[-1].endswith(CHANGES_SUFFIX)


def test_a_postgresql_retype_with_using_is_marked():
    h = SchemaHistory(dialect="postgres")
    for i, text in enumerate(["CREATE TABLE t (id int PRIMARY KEY, total numeric(10,2), n int)",
                              "ALTER TABLE t ALTER COLUMN total TYPE text USING total || ' EUR'",
                              "ALTER TABLE t ALTER COLUMN n TYPE text"], 1):
        h.record({"seq": i, "ddl": text, "database": "db"})
    types = {"integer": "int", "numeric": None, "text": "string"}

    def spec(table):
        return [["decimal", c.numeric_precision, c.numeric_scale] if c.data_type == "numeric" else types[c.data_type]
                for c in table.columns]

    (lin,) = [build_fields(x, spec) for x in lineages(h.all_versions())]
    new = {f.name: f for f in lin.fields.values() if f.current}
    assert (new["total"].using, new["total"].since_seq) == (True, 2)
    assert (new["n"].using, new["n"].replaces) == (False, "0.3.0")


def test_the_sinks_prepare_typed_versions_and_change_only_the_models_of_reused_names(tmp_path):
    """``Sink.prepare`` takes and returns ``TableVersion`` records, one for one: the Iceberg sink
    renames a reused name to its physical name in the model and leaves every other field."""
    from ddlcore.history import TableVersion
    from ddlcore.sinks.base import ParquetSink
    from ddlcore.sinks.iceberg import IcebergSink

    h = _history("""
        CREATE TABLE t (id INT PRIMARY KEY, c INT);
        ALTER TABLE t DROP COLUMN c;
        ALTER TABLE t ADD COLUMN c VARCHAR(5);
    """)
    given = list(h.all_versions())
    got = IcebergSink(str(tmp_path), dialect="mysql").prepare(h, given, dialect="mysql")
    assert all(isinstance(v, TableVersion) for v in got)
    assert [v.table.column_names for v in got] == [["id", "c"], ["id"], ["id", "c__f0_3_0"]]
    assert [dataclasses.replace(v, table=None) for v in got] == [dataclasses.replace(v, table=None) for v in given]
    assert got[:2] == given[:2]
    assert ParquetSink().prepare(h, given, dialect="mysql") == given
