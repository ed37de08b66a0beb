"""Diffs between versions: columns added, dropped, renamed (followed along the version chain),
retyped, altered, moved; key and table-level changes."""

from __future__ import annotations

import pytest

from ddlcore.history import HistoryError, SchemaHistory


@pytest.fixture
def history(parser_factory):
    h = SchemaHistory(parser=parser_factory())
    script = """
        CREATE TABLE t (id int NOT NULL, a varchar(10), b int, c datetime, PRIMARY KEY (id));
        ALTER TABLE t RENAME COLUMN a TO a2;
        ALTER TABLE t MODIFY COLUMN a2 varchar(50);
        ALTER TABLE t DROP COLUMN b, ADD COLUMN d bigint;
        ALTER TABLE t MODIFY COLUMN c datetime NOT NULL;
        ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (id, d);
        ALTER TABLE t ADD UNIQUE KEY uk_c (c);
        ALTER TABLE t COMMENT = 'hello';
        ALTER TABLE t MODIFY COLUMN d bigint FIRST;
        DROP TABLE t;
    """
    for i, st in enumerate(h.parser.split(script), 1):
        h.record({"seq": i, "ddl": st.text, "database": "d" if i == 1 else None})
    return h


def test_rename_then_retype_is_one_column(history):
    d = history.diff("d.t", 1, 3)
    assert d.renamed == (("a", "a2"),)
    assert [(c.previous_name, c.name, c.fields["column_type"]) for c in d.retyped] == [
        ("a", "a2", ("varchar(10)", "varchar(50)"))]
    assert not d.added and not d.dropped


def test_added_dropped_altered_keys(history):
    d = history.diff("d.t", 3, 7)
    assert [c.name for c in d.added] == ["d"]
    assert [c.name for c in d.dropped] == ["b"]
    assert [(c.name, c.fields) for c in d.altered] == [("c", {"nullable": (True, False)})]
    assert d.primary_key == (("id",), ("id", "d"))
    assert d.indexes_added == ("uk_c",) and d.key_changes
    assert not d.renamed and not d.retyped


def test_table_level_and_moved(history):
    d = history.diff("d.t", 7, 9)
    assert d.table == {"comment": (None, "hello")}
    assert d.moved == ("d",)


def test_diff_against_a_drop_and_in_reverse(history):
    d = history.diff("d.t", 9, 10)
    assert d.after is None and [c.name for c in d.dropped] == ["d", "id", "a2", "c"]
    r = history.diff("d.t", 3, 1)
    assert r.renamed == (("a2", "a"),)
    assert history.diff("d.t", 4, 4).empty


def test_unknown_version_is_an_error(history):
    with pytest.raises(HistoryError, match="no version 99"):
        history.diff("d.t", 1, 99)
    with pytest.raises(HistoryError):
        history.diff("d.nope", 1, 2)


def test_diff_json_round_trips(history):
    import json
    data = json.loads(json.dumps(history.diff("d.t", 1, 9).to_json()))
    assert data["renamed"] == [["a", "a2"]] and data["primary_key"] == [["id"], ["id", "d"]]
