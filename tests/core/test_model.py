"""The table model: immutability, editors, JSON round trip, fingerprints."""

from __future__ import annotations

import dataclasses
import json

import pytest

from ddlcore import CheckConstraint, Column, ForeignKey, Index, Table, TableId, Tables
from ddlcore.model import ModelError, lower_table_key


def col(name, pos=0, dt="int", ct="int(11)", **kw):
    return Column(name, pos, dt, ct, **kw)


def sample() -> Table:
    return Table(
        TableId("shop", None, "orders"),
        (col("id", 1, nullable=False, auto_increment=True),
         col("status", 2, "enum", "enum('a','b''c')", enum_values=("a", "b'c"), column_default="'a'",
             character_set_name="utf8mb4", collation_name="utf8mb4_general_ci"),
         col("note", 3, "varchar", "varchar(10)", comment="free text", character_maximum_length=10)),
        primary_key=("id",),
        default_character_set_name="utf8mb4",
        default_collation_name="utf8mb4_general_ci",
        comment="orders",
        options=(("ENGINE", "InnoDB"),),
        indexes=(Index("ix_note", "INDEX", ("note",), ("`note`(5)",)),),
        foreign_keys=(ForeignKey("fk", ("id",), TableId("shop", None, "x"), ("id",), "CASCADE"),),
        checks=(CheckConstraint("ck", "id > 0"),),
    )


def test_values_are_immutable():
    t = sample()
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.comment = "x"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.columns[0].name = "y"  # type: ignore[misc]


def test_json_round_trip_is_exact():
    t = sample()
    text = json.dumps(t.to_json())
    back = Table.from_json(json.loads(text))
    assert back == t
    assert back.to_json_text() == t.to_json_text()


def test_tables_json_round_trip():
    tables = Tables()
    tables.put(sample())
    tables.current_database = "shop"
    back = Tables.from_json(json.loads(json.dumps(tables.to_json())))
    assert back.to_json() == tables.to_json()
    assert back.get("shop.orders") == sample()


def test_fingerprint_ignores_comments_and_name_but_not_types():
    t = sample()
    renamed = t.edit().rename(TableId("shop", None, "orders2")).build()
    recommented = dataclasses.replace(t, comment="other", options=(("ENGINE", "MyISAM"),))
    col_comment = t.edit().update_column("note", comment="changed").build()
    retyped = t.edit().update_column("note", column_type="varchar(11)", character_maximum_length=11).build()
    assert t.fingerprint() == renamed.fingerprint() == recommented.fingerprint() == col_comment.fingerprint()
    assert t.fingerprint() != retyped.fingerprint()
    assert len(t.fingerprint()) == 64


def test_editor_add_first_after_and_renumber():
    t = sample().edit().add_column(col("a"), first=True).add_column(col("b"), after="status").build()
    assert t.column_names == ["a", "id", "status", "b", "note"]
    assert [c.ordinal_position for c in t.columns] == [1, 2, 3, 4, 5]


def test_editor_duplicate_and_unknown_columns_raise():
    with pytest.raises(ModelError, match="duplicate column"):
        sample().edit().add_column(col("ID"))  # case-insensitive by default (MySQL)
    with pytest.raises(ModelError, match="no column"):
        sample().edit().drop_column("nope")
    with pytest.raises(ModelError, match="AFTER names unknown"):
        sample().edit().add_column(col("z"), after="nope")


def test_drop_column_leaves_keys_that_named_it():
    t = sample().edit().drop_column("note").drop_column("id").build()
    assert t.primary_key == ()
    assert t.indexes == ()


def test_change_column_renames_key_references():
    t = sample()
    e = t.edit()
    e.replace_column("id", t.columns[0].replace(name="order_id"), after="note")
    new = e.build()
    assert new.column_names == ["status", "note", "order_id"]
    assert new.primary_key == ("order_id",)
    assert new.foreign_keys[0].columns == ("order_id",)


def test_primary_key_makes_columns_not_null():
    t = sample().edit().set_primary_key(["STATUS"]).build()
    assert t.primary_key == ("status",)
    assert t.column("status").nullable is False


def test_exact_key_keeps_case_distinct():
    from ddlcore.model import exact_key
    t = Table(TableId(None, "public", "t"), (col("Foo", 1),))
    e = t.edit(exact_key).add_column(col("foo"))
    assert e.build().column_names == ["Foo", "foo"]


def test_tables_registry_lookup_and_case_rules():
    tables = Tables()
    tables.put(sample())
    assert tables.get("shop.orders") is not None
    assert tables.get(TableId("shop", None, "orders")) is not None
    assert tables.get("shop.ORDERS") is None  # lower_case_table_names=0
    lowered = Tables(lower_table_key)
    lowered.put(sample())
    assert lowered.get("SHOP.Orders") is not None


def test_table_id_parse_and_str():
    assert str(TableId.parse("a.b")) == "a.b"
    assert TableId.parse("a.b.c") == TableId("a", "b", "c")
    with pytest.raises(ValueError):
        TableId.parse("a..b")
