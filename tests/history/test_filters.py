"""Table filters: the pattern language, and renames into and out of the filter (also across a
restart — the Flink CDC bug where a table renamed into the captured set is unknown)."""

from __future__ import annotations

import pytest

from ddlcore import TableId
from ddlcore.history import SchemaHistory, TableFilter


def _id(text: str) -> TableId:
    return TableId.parse(text)


@pytest.mark.parametrize("pattern, yes, no", [
    ("shop.orders", ["shop.orders"], ["shop.orders2", "shop.order", "crm.orders"]),
    ("shop.*", ["shop.orders", "shop.x"], ["crm.orders", "shopx.orders"]),
    ("shop.ord%", ["shop.orders", "shop.ord"], ["shop.xorders", "crm.orders"]),
    ("%.orders", ["shop.orders", "crm.orders"], ["shop.orders_old"]),
    ("orders", ["shop.orders", "crm.orders"], ["shop.customers"]),
    ("s%p.o_d%", ["shop.o_ders", "sp.o_d"], ["shop.orders"]),  # "_" is a literal
    ("pg.public.t%", ["pg.public.t1"], ["pg.other.t1"]),
    ("public.t%", ["pg.public.t1"], ["pg.other.t1"]),  # two parts against db.schema.table
])
def test_patterns(pattern, yes, no):
    f = TableFilter([pattern])
    for t in yes:
        assert f.matches(_id(t)), (pattern, t)
    for t in no:
        assert not f.matches(_id(t)), (pattern, t)


def test_several_patterns_and_case():
    f = TableFilter("shop.a, crm.*")
    assert f.patterns == ("shop.a", "crm.*")
    assert f.matches(_id("crm.z")) and f.matches(_id("shop.a")) and not f.matches(_id("shop.b"))
    assert not f.matches(_id("SHOP.A"))
    assert TableFilter(["shop.a"], case_sensitive=False).matches(_id("SHOP.A"))
    assert TableFilter().matches(_id("any.thing")) and not TableFilter()
    with pytest.raises(ValueError):
        TableFilter(["a..b"])


SCRIPT = """
CREATE DATABASE shop;
USE shop;
CREATE TABLE orders (id int NOT NULL, PRIMARY KEY (id));
CREATE TABLE staging (id int NOT NULL, v varchar(10), PRIMARY KEY (id));
ALTER TABLE staging ADD COLUMN w bigint;
RENAME TABLE staging TO orders_new;
ALTER TABLE orders_new ADD COLUMN z int;
RENAME TABLE orders TO archive;
ALTER TABLE archive ADD COLUMN gone int;
RENAME TABLE archive TO orders_back;
"""


@pytest.mark.parametrize("restart_every", [0, 1], ids=["one-run", "restart-each-event"])
def test_rename_into_and_out_of_the_filter(tmp_path, parser_factory, restart_every):
    path = tmp_path / "h.db"
    stmts = [s.text for s in parser_factory().split(SCRIPT)]
    h = SchemaHistory(path, parser=parser_factory(), filters=["shop.orders%"])
    for i, st in enumerate(stmts, 1):
        if restart_every:
            h.close()
            h = SchemaHistory(path, parser=parser_factory())
        h.record({"seq": i, "ddl": st})
    # staging was never versioned...
    assert h.versions("shop.staging") == [] and h.versions("shop.archive") == []
    # ...but its rename into the filter brings its full definition (w included)
    (first, second) = h.versions("shop.orders_new")
    assert first.kind == "rename" and first.previous_id == TableId("shop", None, "staging")
    assert first.table.column_names == ["id", "v", "w"]
    assert second.table.column_names == ["id", "v", "w", "z"]
    # orders renamed out of the filter: a tombstone saying where it went
    last = h.versions("shop.orders")[-1]
    assert (last.kind, last.table, last.renamed_to) == ("rename", None, TableId("shop", None, "archive"))
    # and back in, with the change made while it was outside
    (back,) = h.versions("shop.orders_back")
    assert back.table.column_names == ["id", "gone"] and back.previous_id == TableId("shop", None, "archive")
    assert sorted(str(t) for t in h.table_ids()) == ["shop.orders_back", "shop.orders_new"]
    assert set(h.tables_at().databases) == {"shop"}
    # schema change events: renames that cross the filter are reported, outside changes are not
    kinds = [(e.seq, [(c.kind, str(c.table_id)) for c in e.changes]) for e in h.schema_changes()]
    assert (6, [("rename", "shop.orders_new")]) in kinds
    assert (8, [("rename", "shop.archive")]) in kinds
    assert all(e.seq not in (4, 5, 9) or not e.changes for e in h.schema_changes())
    h.close()
