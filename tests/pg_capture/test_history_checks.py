"""What the capture does with its schema history (the PostgreSQL dialect of the same plugin):
rows are aligned with the table version in force — a generated column, which pgoutput does not
send, is absent at its place — and a Relation message that contradicts the history (DDL the
event triggers did not see) marks the rows with a ``drift:`` quarantine reason, keeping every
value the stream carried."""

from __future__ import annotations

import pytest

from ddlcore.history import SchemaHistory
from ddlcore.model import TableId

from .support import dialect_installed, events, row_text, run_capture

ABSENT = {"$absent": True}

pytestmark = pytest.mark.skipif(not dialect_installed(), reason="the PostgreSQL dialect is not installed")


def test_generated_columns_are_absent_in_the_stream_and_present_in_the_snapshot(capdb, tmp_path):
    capdb.execute("CREATE TABLE g (id int PRIMARY KEY, a int, twice int GENERATED ALWAYS AS (a * 2) STORED, b text)",
                  "INSERT INTO g VALUES (1, 10, DEFAULT, 'x')")
    out = tmp_path / "out"
    run_capture(capdb, out)
    capdb.execute("INSERT INTO g (id, a, b) VALUES (2, 20, 'y')", "UPDATE g SET a = 11 WHERE id = 1")
    run_capture(capdb, out)
    rows = [(ev["op"], ev["after"]) for ev in events(out) if ev["table"] == "g"]
    assert rows == [("r", [{"$s": "1"}, {"$s": "10"}, {"$s": "20"}, "x"]),
                    ("c", [{"$s": "2"}, {"$s": "20"}, ABSENT, "y"]),
                    ("u", [{"$s": "1"}, {"$s": "11"}, ABSENT, "x"])]


def test_the_history_follows_the_catalog_descriptions(capdb, tmp_path):
    capdb.execute("CREATE TYPE st AS ENUM ('a', 'b')", "CREATE TABLE h (id int PRIMARY KEY, s st, n numeric(5,1))")
    out = tmp_path / "out"
    run_capture(capdb, out)
    capdb.execute("ALTER TYPE st ADD VALUE 'c'", "ALTER TABLE h ALTER COLUMN n TYPE text; ALTER TABLE h RENAME TO h2",
                  "ALTER TABLE h2 DROP COLUMN s", "ALTER TABLE h2 ADD COLUMN lonely int")  # no row after it
    run_capture(capdb, out)
    evs = events(out)
    history = SchemaHistory.open(out / "history.sqlite", dialect="postgres")
    try:
        seq_of = {ev["ddl"]: ev["seq"] for ev in evs if ev["op"] == "ddl"}
        t = history.table_at(TableId(capdb.name, "public", "h"), seq_of["ALTER TYPE st ADD VALUE 'c'"])
        assert t.column("s").enum_values == ("a", "b", "c")
        dropped = seq_of["ALTER TABLE h2 DROP COLUMN s"]
        assert history.table_at(TableId(capdb.name, "public", "h"), dropped) is None
        t2 = history.table_at(TableId(capdb.name, "public", "h2"), dropped)
        assert [(c.name, c.column_type, c.ordinal_position) for c in t2.columns] == [("id", "integer", 1),
                                                                                    ("n", "text", 3)]
        # a DDL with no row after it still makes its version, at its own seq
        lonely = seq_of["ALTER TABLE h2 ADD COLUMN lonely int"]
        assert evs[-1]["seq"] == lonely
        assert history.table_at(TableId(capdb.name, "public", "h2"), lonely).column_names == ["id", "n", "lonely"]
        assert history.table_at(TableId(capdb.name, "public", "h2"), lonely - 1).column_names == ["id", "n"]
    finally:
        history.close()


def test_ddl_the_triggers_did_not_see_quarantines_the_rows_with_the_drift(capdb, tmp_path):
    capdb.execute("CREATE TABLE d (id int PRIMARY KEY, v int)")
    out = tmp_path / "out"
    run_capture(capdb, out)
    capdb.execute("INSERT INTO d VALUES (1, 1)")
    # DDL with the triggers off (then on again, so that the capture starts)
    capdb.execute("ALTER EVENT TRIGGER ddlcore_ddl_command_end DISABLE",
                  "ALTER TABLE d ALTER COLUMN v TYPE text, ADD COLUMN w date",
                  "ALTER EVENT TRIGGER ddlcore_ddl_command_end ENABLE ALWAYS",
                  "INSERT INTO d VALUES (2, 'two', '2024-01-01')")
    stats, warnings = run_capture(capdb, out, allow_warnings=True)
    rows = [ev for ev in events(out) if ev["op"] == "c"]
    assert "quarantine" not in rows[0]
    reason = rows[1]["quarantine"]
    assert reason.startswith("drift: ") and "column v (type)" in reason and "text" in reason and "column(s) w" in reason
    assert [row_text(v) for v in rows[1]["after"]] == ["2", "two", "2024-01-01"]  # every value kept
    assert stats.drift and any("schema drift in public.d" in w for w in warnings)


def test_a_publication_column_list_and_row_filter_hold_in_snapshot_and_stream(capdb, tmp_path):
    capdb.execute("CREATE TABLE secret (id int PRIMARY KEY, a text, pii text, b int)",
                  "INSERT INTO secret VALUES (1, 'no', 'x', 1), (2, 'yes', 'private', 2)",
                  "CREATE PUBLICATION narrow FOR TABLE secret (id, a, b) WHERE (id > 1) WITH (publish = 'insert')")
    out = tmp_path / "out"
    run_capture(capdb, out, publication="narrow")
    capdb.execute("INSERT INTO secret VALUES (0, 'no', 'y', 0), (3, 'yes', 'hidden', 3)")
    run_capture(capdb, out, publication="narrow")
    rows = [(ev["op"], ev["after"]) for ev in events(out) if ev["table"] == "secret"]
    assert rows == [("r", [{"$s": "2"}, "yes", ABSENT, {"$s": "2"}]), ("c", [{"$s": "3"}, "yes", ABSENT, {"$s": "3"}])]
    assert all("quarantine" not in ev for ev in events(out))
    assert "private" not in (out / "changelog.jsonl").read_text() and "hidden" not in (out / "changelog.jsonl").read_text()
