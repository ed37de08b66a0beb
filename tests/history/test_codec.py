"""Bodies: the fast encoder agrees with the model's own JSON and fingerprint, and decoding
restores the exact value."""

from __future__ import annotations

import json

from ddlcore import (CheckConstraint, Column, Database, ForeignKey, Index, Table, TableId, View)
from ddlcore.history.codec import Encoder, decode, id_text, table_json

from .synthetic import SCRIPTED_HISTORY


def _rich_table() -> Table:
    cols = (
        Column("id", 1, "bigint", "bigint(20) unsigned", nullable=False, auto_increment=True,
               unsigned=True, numeric_precision=20, numeric_scale=0),
        Column("state", 2, "enum", "enum('a','b''c')", enum_values=("a", "b'c"), column_default="'a'",
               character_set_name="utf8mb4", collation_name="utf8mb4_general_ci", comment="état"),
        Column("flags", 3, "set", "set('x','y')", set_values=("x", "y")),
        Column("total", 4, "decimal", "decimal(12,2)", numeric_precision=12, numeric_scale=2,
               generation_expression="`a` * 2", generation_stored=True, invisible=True),
        Column("tags", 5, "character varying", "character varying(20)[]", array_dimensions=1,
               character_maximum_length=20, identity=None, srid=None, zerofill=False),
        Column("at", 6, "timestamp", "timestamp(3)", datetime_precision=3, on_update="current_timestamp(3)"),
    )
    return Table(
        TableId("shop", None, "orders"), cols, ("id",), "utf8mb4", "utf8mb4_general_ci", "orders table",
        (("ENGINE", "InnoDB"), ("ROW_FORMAT", "DYNAMIC")),
        (Index("ix_state", "INDEX", ("state", None), ("`state`", "(lower(x))")),),
        (ForeignKey("fk_c", ("id",), TableId("shop", None, "c"), ("cid",), "CASCADE", None),),
        (CheckConstraint("ck", "total > 0"),))


def test_fast_encoding_equals_the_model_json_and_fingerprint():
    t = _rich_table()
    enc = Encoder()
    assert table_json(t) == t.to_json()
    assert enc.fingerprint(t) == t.fingerprint()
    assert enc._fast is True
    h, text = enc(t)
    body = json.loads(text)
    assert "name" not in body and "database" not in body
    assert "zerofill" not in body["columns"][0]  # defaults are left out
    assert decode("table", id_text(t.id), text) == t


def test_parsed_tables_round_trip(parser_factory):
    tables = parser_factory().parse(SCRIPTED_HISTORY).tables
    enc = Encoder()
    for t in tables:
        assert table_json(t) == t.to_json()
        assert enc.fingerprint(t) == t.fingerprint()
        _, text = enc(t)
        assert decode("table", id_text(t.id), text) == t


def test_views_and_databases_round_trip():
    enc = Encoder()
    v = View(TableId("shop", None, "v"), "SELECT 1", ("one",))
    d = Database("shop", "latin1", "latin1_swedish_ci", "c")
    assert decode("view", id_text(v.id), enc(v)[1]) == v
    assert decode("database", json.dumps(["shop"]), enc(d)[1]) == d


def test_equal_bodies_equal_hashes_across_names():
    enc = Encoder()
    t = _rich_table()
    u = Table.from_json({**t.to_json(), "name": "orders_2"})
    assert enc(t)[0] == enc(u)[0]
    assert enc(Table.from_json({**t.to_json(), "comment": "x"}))[0] != enc(t)[0]


def test_replica_identity_and_the_next_column_id_survive_the_fast_encoder():
    """The fast encoder once left ``replica_identity`` out of the body (after its check on a
    first table without one): a PostgreSQL table's replica identity was lost on recovery."""
    enc = Encoder()
    plain = Table(TableId("d", "public", "a"), (Column("id", 1, "integer", "integer"),)).identified()
    enc(plain)  # verifies the fast path on a table without a replica identity
    full = Table(TableId("d", "public", "b"), (Column("id", 1, "integer", "integer"),),
                 replica_identity="full").identified()
    _, text = enc(full)
    back = decode("table", id_text(full.id), text)
    assert back == full and back.replica_identity == "full" and back.next_column_id == 2
