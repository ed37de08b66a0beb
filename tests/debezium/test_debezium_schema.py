"""``ddlcore_postgres.debezium_schema``: the column type of Debezium's field schemas (the
PostgreSQL connector documentation's "Data type mappings", and the ``__debezium.source.column.*``
parameters of ``column.propagate.source.type``), and the ALTER TABLE a later message's fields
call for on a table they described — never on a table of real DDL."""

from __future__ import annotations

import pytest

from ddlcore.debezium import FieldSchema, Record
from ddlcore.history import SchemaHistory
from ddlcore.model import TableId
from ddlcore_postgres.debezium_schema import MARKER, field_type, schema_ddl

SRC = "__debezium.source.column."


@pytest.mark.parametrize("field, want", [
    (FieldSchema("string", None, {SRC + "type": "VARCHAR", SRC + "length": "20"}), "varchar(20)"),
    (FieldSchema("string", None, {SRC + "type": "VARCHAR", SRC + "length": "2147483647"}), "varchar"),
    (FieldSchema("string", "io.debezium.data.Enum", {"allowed": "a,b", SRC + "type": "MOOD"}), "text"),
    (FieldSchema("array", None, {SRC + "type": "_INT4"}), "int4[]"),
    (FieldSchema("bytes", None, {SRC + "type": "NUMERIC", SRC + "length": "10", SRC + "scale": "0"}), "numeric(10,0)"),
    (FieldSchema("bytes", "org.apache.kafka.connect.data.Decimal", {"scale": "2"}), "numeric"),
    (FieldSchema("bytes", "org.apache.kafka.connect.data.Decimal", {"scale": "2", "connect.decimal.precision": "7"}),
     "numeric(7,2)"),
    (FieldSchema("int64", "io.debezium.time.MicroTimestamp"), "timestamp"),
    (FieldSchema("int32", "io.debezium.time.Time"), "time(3)"),
    (FieldSchema("string", "io.debezium.time.ZonedTimestamp"), "timestamptz"),
    (FieldSchema("int16"), "smallint"),
    (FieldSchema("float64"), "double precision"),
    (FieldSchema("string", "io.debezium.data.Json"), "jsonb"),
])
def test_field_type(field, want):
    assert field_type(field) == want


def _history(*ddl: str) -> SchemaHistory:
    h = SchemaHistory.open(":memory:", dialect="postgres")
    h.record({"seq": 1, "position": "0/1", "ts": None, "op": "source",
              "source": {"dialect": "postgres", "epoch": "e", "parser_options": {"search_path": ["public"]}}})
    for i, text in enumerate(ddl, start=2):
        h.record({"seq": i, "position": "0/1", "ts": None, "op": "ddl", "database": "d", "ddl": text})
    return h


def _row(**fields: FieldSchema) -> Record:
    return Record("row", "c", {"db": "d", "schema": "public", "table": "t"}, None, {k: 1 for k in fields}, fields)


def test_later_fields_alter_a_described_table_and_never_a_table_of_real_ddl():
    first = schema_ddl(_row(id=FieldSchema("int32"), a=FieldSchema("string"), b=FieldSchema("int16")), None)
    assert first.statements[0] == 'CREATE TABLE "public"."t" ("id" integer, "a" text, "b" smallint)'
    assert first.warning.startswith("public.t: no DDL describes it")
    h = _history(*first.statements)
    table = h.table_at(TableId("d", "public", "t"), 3)
    assert table.comment == MARKER
    assert schema_ddl(_row(id=FieldSchema("int32"), a=FieldSchema("string"), b=FieldSchema("int16")), table) is None
    later = schema_ddl(_row(id=FieldSchema("int32"), b=FieldSchema("int64"), c=FieldSchema("boolean")), table)
    assert later.statements == ('ALTER TABLE "public"."t" DROP COLUMN "a", ALTER COLUMN "b" TYPE bigint, '
                                'ADD COLUMN "c" boolean',)
    real = _history('CREATE TABLE t (id int, a text)').table_at(TableId("d", "public", "t"), 2)
    assert schema_ddl(_row(id=FieldSchema("int32"), z=FieldSchema("string")), real) is None


def test_without_schemas_the_reason():
    rec = Record("row", "c", {"db": "d", "schema": "public", "table": "t"}, None, {"id": 1}, {})
    assert "the message has no schema to type it by" in schema_ddl(rec, None).reason
