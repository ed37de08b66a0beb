"""What the parse-speed work must not change: the collector's state around a parse, and
``Column.replace`` equal to ``dataclasses.replace``."""

from __future__ import annotations

import dataclasses
import gc

import pytest

import ddlcore
from ddlcore.model import Column


def test_collector_state_is_kept_around_a_statement():
    parser = ddlcore.get_dialect("mysql").parser()
    tables = parser.new_tables()
    assert gc.isenabled()
    parser.apply("CREATE TABLE db.t (a int)", tables)
    assert gc.isenabled()
    gc.disable()
    try:
        parser.apply("CREATE TABLE db.u (a int)", tables)
        assert not gc.isenabled()  # the caller's choice stays
    finally:
        gc.enable()
    with pytest.raises(ddlcore.DdlParseError):
        parser.apply("CREATE TABLE db.v (a int,)", tables)
    assert gc.isenabled()  # also after an error


def test_column_replace_equals_dataclasses_replace():
    c = Column("a", 0, "enum", "enum('x')", enum_values=("x",), comment="c")
    for changes in ({"ordinal_position": 3}, {"name": "b", "nullable": False},
                    {"enum_values": ["x", "y"]}, {"set_values": ["p"], "comment": None}, {}):
        got, want = c.replace(**changes), dataclasses.replace(c, **changes)
        assert got == want and hash(got) == hash(want) and type(got) is Column
        assert got.to_json() == want.to_json()
    assert c.ordinal_position == 0  # the original is untouched
    with pytest.raises(TypeError):
        c.replace(no_such_field=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.replace(name="z").name = "y"
