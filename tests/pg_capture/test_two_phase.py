"""Two-phase commit (``PREPARE TRANSACTION``): the capture's pgoutput stream (without the
``two_phase`` option) carries a prepared transaction only when ``COMMIT PREPARED`` commits it —
once, even when the capture restarted between the PREPARE and the COMMIT — and nothing of one
that ``ROLLBACK PREPARED`` ends, its DDL included."""

from __future__ import annotations

import pytest

from .support import events, row_text, run_capture


@pytest.fixture
def prepared(capdb):
    """Rolls back what a failing test left prepared in ``capdb`` (its drop would fail)."""
    yield capdb
    with capdb.connect() as conn:
        for (gid,) in conn.execute("SELECT gid FROM pg_prepared_xacts WHERE database = current_database()").fetchall():
            conn.execute(f"ROLLBACK PREPARED '{gid}'")


def _prepare(db, gid: str, *statements: str) -> None:
    with db.connect() as conn:
        conn.execute("BEGIN")
        for sql in statements:
            conn.execute(sql)
        conn.execute(f"PREPARE TRANSACTION '{gid}'")


def test_prepared_transactions_appear_once_when_committed_and_never_when_rolled_back(prepared, tmp_path):
    db = prepared
    db.execute("CREATE TABLE tp (id int PRIMARY KEY, v text)")
    out = tmp_path / "out"
    run_capture(db, out)
    _prepare(db, "p1", "INSERT INTO tp VALUES (100, 'rolled back')", "ALTER TABLE tp ADD COLUMN gone int")
    db.execute("ROLLBACK PREPARED 'p1'")  # (p1's ALTER holds tp until then)
    _prepare(db, "p2", "INSERT INTO tp VALUES (200, 'committed'), (201, 'too')",
             "UPDATE tp SET v = 'late' WHERE id = 201")
    db.execute("INSERT INTO tp VALUES (1, 'plain')")
    run_capture(db, out)  # p2 is prepared, not committed: not in the log yet
    rows = [(e["op"], [row_text(v) for v in e["after"]]) for e in events(out) if e["op"] in ("c", "u")]
    assert rows == [("c", ["1", "plain"])]
    db.execute("COMMIT PREPARED 'p2'", "INSERT INTO tp VALUES (2, 'after')")
    run_capture(db, out)
    run_capture(db, out)  # nothing new: nothing repeated
    evs = events(out)
    rows = [(e["op"], [row_text(v) for v in e["after"]]) for e in evs if e["op"] in ("c", "u")]
    assert rows == [("c", ["1", "plain"]), ("c", ["200", "committed"]), ("c", ["201", "too"]),
                    ("u", ["201", "late"]), ("c", ["2", "after"])]
    assert not [e for e in evs if e["op"] == "ddl" and "gone" in e["ddl"]]
    assert [e["seq"] for e in evs] == list(range(1, len(evs) + 1))
    with db.connect() as conn:  # the slot decodes at COMMIT PREPARED, not at PREPARE
        assert conn.execute("SELECT bool_or(two_phase) FROM pg_replication_slots "
                            "WHERE database = current_database()").fetchone() == (False,)
