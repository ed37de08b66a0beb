"""One replication slot, one capture: a capture drops or advances only a slot it created
itself, proven by its claim in ``ddlcore.capture_slots`` (the slot name and the capture
directory's epoch), never by its ``checkpoint.json`` alone; a slot another capture owns is an
error naming both directories.  Against the session's PostgreSQL 15 (docs/capture.md, "One
slot, one capture")."""

from __future__ import annotations

import json

import pytest

from ddlcore_postgres.capture import CaptureError, PostgresCapture

from .support import events, row_text, run_capture


def _names(out) -> list[str]:
    return [row_text(ev["after"][1]) for ev in events(out) if ev.get("table") == "items" and ev["after"]]


def _slots(db) -> set[str]:
    with db.connect() as conn:
        return {r[0] for r in conn.execute("SELECT slot_name FROM pg_replication_slots WHERE database = %s",
                                           (db.name,)).fetchall()}


def _epoch(out) -> str:
    return json.loads((out / "checkpoint.json").read_text())["epoch"]


@pytest.fixture
def items(capdb):
    capdb.execute("CREATE TABLE items (id serial PRIMARY KEY, name text)", "INSERT INTO items (name) VALUES ('a')")
    return capdb


def test_a_second_capture_on_a_slot_never_drops_it_and_loses_no_row(items, tmp_path):
    """The issue's reproduction: E captures with slot se; F with se fails, and fails again
    when retried (it used to drop se on the retry and exit 0); F with its own slot works; E
    resumes with the row written in between."""
    e, f = tmp_path / "E", tmp_path / "F"
    run_capture(items, e, slot="se")
    items.execute("INSERT INTO items (name) VALUES ('LOST-ROW-X')")
    for _ in range(2):
        with pytest.raises(CaptureError) as err:
            run_capture(items, f, slot="se")
        msg = str(err.value)
        assert "\n" not in msg and "slot se" in msg and str(e) in msg and str(f) in msg and _epoch(e) in msg
        assert "se" in _slots(items)
        assert json.loads((f / "checkpoint.json").read_text()).get("slot") is None  # names no slot it did not create
    run_capture(items, f, slot="sb")
    assert _slots(items) == {"se", "sb"}
    run_capture(items, e, slot="se")
    assert _names(e) == ["a", "LOST-ROW-X"]
    assert _names(f) == ["a", "LOST-ROW-X"]  # F's snapshot


def test_a_capture_killed_after_creating_its_slot_cleans_up_its_own_slot_only(items, tmp_path, monkeypatch):
    """Killed between the slot's creation and the first streaming checkpoint (in the snapshot,
    or before checkpoint.json named the slot): the rerun drops and recreates its own slot and
    starts over; another capture's slot is never touched, even when the rerun names it."""
    o, e = tmp_path / "O", tmp_path / "E"
    run_capture(items, o, slot="so")

    def killed(self, *a, **kw):
        raise KeyboardInterrupt("killed in the snapshot")

    monkeypatch.setattr(PostgresCapture, "_snapshot_read", killed)
    with pytest.raises(KeyboardInterrupt):
        run_capture(items, e, slot="se")
    cp = json.loads((e / "checkpoint.json").read_text())
    assert cp["phase"] == "snapshot" and cp["slot"] == "se" and _slots(items) == {"so", "se"}
    monkeypatch.undo()

    items.execute("INSERT INTO items (name) VALUES ('b')")
    with pytest.raises(CaptureError, match=rf"slot so .*{o}.*{e}"):
        run_capture(items, e, slot="so")  # the rerun given O's slot: refused, nothing dropped
    assert _slots(items) == {"so", "se"}

    # the state of a kill after CREATE_REPLICATION_SLOT, before checkpoint.json named it
    (e / "checkpoint.json").write_text(json.dumps({**cp, "slot": None}))
    run_capture(items, e, slot="se")
    assert _slots(items) == {"so", "se"} and _names(e) == ["a", "b"]
    items.execute("INSERT INTO items (name) VALUES ('c')")
    run_capture(items, o, slot="so")
    run_capture(items, e, slot="se")
    assert _names(o) == ["a", "b", "c"] and _names(e) == ["a", "b", "c"]


def test_a_capture_pointed_at_another_captures_directory_or_slot(items, tmp_path):
    """F pointed at E's directory with its own slot: refused, E's slot kept and E loses
    nothing.  E's slot dropped by hand and taken by G: E's resume refuses G's slot (its
    position is G's), naming both."""
    e, g = tmp_path / "E", tmp_path / "G"
    run_capture(items, e, slot="se")
    items.execute("INSERT INTO items (name) VALUES ('b')")
    with pytest.raises(CaptureError, match="slot se"):
        run_capture(items, e, slot="sf")
    assert _slots(items) == {"se"}
    run_capture(items, e, slot="se")
    assert _names(e) == ["a", "b"]

    with items.connect() as conn:
        conn.execute("SELECT pg_drop_replication_slot('se')")
    run_capture(items, g, slot="se")  # the slot is gone: G may claim the name
    with pytest.raises(CaptureError) as err:
        run_capture(items, e, slot="se")
    msg = str(err.value)
    assert str(e) in msg and str(g) in msg and _epoch(g) in msg and "\n" not in msg
    assert _slots(items) == {"se"}


@pytest.mark.parametrize("case", ["wrong port", "wrong database", "no publication"])
def test_a_failed_start_leaves_no_lock_and_no_directory(capdb, tmp_path, case):
    """A capture that cannot start (the server, the database or the publication is not
    there) exits 1 with one line and leaves neither ``capture.lock`` nor the directory it
    made; in a directory that was there, only what was there."""
    import subprocess

    from .support import REPO, cli_args

    args = cli_args(capdb, tmp_path / "new" / "out", "--until-end")
    if case == "wrong port":
        args[args.index("--dsn") + 1] = capdb.dsn.replace(f"port={capdb.server.port}", "port=1")
    elif case == "wrong database":
        args[args.index("--dsn") + 1] = capdb.dsn.replace(f"dbname={capdb.name}", "dbname=nosuchdb")
    else:
        args[args.index("--publication") + 1] = "nopub"
    assert args[args.index("--dsn") + 1] != capdb.dsn or case == "no publication"
    proc = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not (tmp_path / "new" / "out").exists()
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "notes.txt").write_text("mine")
    args[args.index("--out") + 1] = str(kept)
    proc = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and sorted(p.name for p in kept.iterdir()) == ["notes.txt"]
