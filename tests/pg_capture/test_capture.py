"""``ddlcore capture postgres`` against a real PostgreSQL 15: the snapshot and the stream carry
every value as the text the server's output function gives (what SELECT returns with the same
session settings); an unchanged TOASTed value is absent, never null; ``before`` holds what the
replica identity gives; DDL events arrive in commit order with the rows around them, one per
command of a query string, each with its catalog description; the checkpoint is what the slot
is confirmed at; a capture stopped and resumed writes what an uninterrupted one writes."""

from __future__ import annotations

import json

import pytest

from ddlcore.changelog import read_changelog
from ddlcore_postgres.capture import CaptureError

from .support import events, row_text, run_capture

ABSENT = {"$absent": True}

VALUES_TABLE = """CREATE TABLE vals (
  id int PRIMARY KEY, i8 bigint, n numeric, n2 numeric(12,3), f4 real, f8 float8, t text, vc varchar(10),
  c char(4), b bytea, ok boolean, d date, ts timestamp(3), tstz timestamptz, tm time, iv interval,
  u uuid, j json, jb jsonb, ip inet, m money, bt bit(4), vb varbit(9), ia int[], ta text[][], mo mood,
  mos mood[], dm code, rng int4range, x xml)"""

ROWS = [
    "(1, 9223372036854775807, 'NaN', -12.5, 1.1, 0.1, '12', 'a', 'ab', '\\x00ff', true, '2024-02-29', "
    "'2024-01-02 03:04:05.678', '2024-06-01 12:00:00+02', '24:00:00', '1 year 2 mons -3 days 04:05:06.5', "
    "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{\"a\": [1, 2]}', '{\"b\": null, \"a\": 1}', '10.0.0.1/8', 12.34, "
    "B'1010', B'101', '{1,NULL,3}', '{{\"a b\",\"c,d\"},{\"\\\\\\\\\",NULL}}', 'ok', '{sad,ok}', 'xy', '[1,5)', '<a>é</a>')",
    "(2, NULL, 'Infinity', 0, 'Infinity', '-0', '{\"$s\": 1}', '', '    ', '\\x', false, '4713-01-01 BC', "
    "'infinity', '-infinity', '00:00:00.000001', '-178000000 years', NULL, 'null', '[]', '::1', -0.01, "
    "B'0000', B'', '{}', '{}', 'sad', '{}', NULL, 'empty', NULL)",
    "(3, -1, '-0.000000000000000000001', 123456789.123, 'NaN', 1e300, 'naïve ☃ \t\n\\\\', NULL, NULL, NULL, NULL, "
    "'0001-01-01', '2000-01-01 00:00', '1999-12-31 23:59:59.999999+14', NULL, '0', NULL, NULL, '\"x\"', NULL, NULL, "
    "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
]


def _prepare_types(db):
    db.execute("CREATE TYPE mood AS ENUM ('sad', 'ok')", "CREATE DOMAIN code AS varchar(3)")


def _rows(evs, table, ops=("c", "r")):
    return [ev for ev in evs if ev["op"] in ops and ev["table"] == table]


def test_values_are_the_server_text_in_snapshot_and_stream(capdb, tmp_path):
    _prepare_types(capdb)
    capdb.execute(VALUES_TABLE, f"INSERT INTO vals VALUES {ROWS[0]}, {ROWS[1]}")
    out = tmp_path / "out"
    stats, _ = run_capture(capdb, out)
    assert stats.ops["r"] == 2 and stats.snapshot_tables == 1
    capdb.execute(f"INSERT INTO vals VALUES {ROWS[2]}", "INSERT INTO vals SELECT id + 10, i8, n, n2, f4, f8, t, vc, "
                  "c, b, ok, d, ts, tstz, tm, iv, u, j, jb, ip, m, bt, vb, ia, ta, mo, mos, dm, rng, x FROM vals")
    run_capture(capdb, out)
    evs = events(out)
    expected = {int(r[0]): r for r in capdb.select_text("SELECT * FROM vals ORDER BY id")}
    got = _rows(evs, "vals")
    assert [ev["op"] for ev in got] == ["r", "r"] + ["c"] * 4
    for ev in got:
        image = [row_text(v) for v in ev["after"]]
        assert image == expected[int(image[0])], image[0]
        assert ev["schema"] == "public" and ev["database"] == capdb.name
    # the log is a valid change log (every event validates)
    assert len(list(read_changelog(out / "changelog.jsonl"))) == len(evs)


def test_unchanged_toasted_values_are_absent_never_null(capdb, tmp_path):
    capdb.execute("CREATE TABLE docs (id int PRIMARY KEY, body text, note text)")
    out = tmp_path / "out"
    run_capture(capdb, out)
    big = "(SELECT string_agg(md5(i::text), '') FROM generate_series(1, 2000) i)"  # incompressible: TOASTed
    capdb.execute(f"INSERT INTO docs VALUES (1, {big}, 'a')", "UPDATE docs SET note = 'b' WHERE id = 1",
                  "UPDATE docs SET note = NULL, body = NULL WHERE id = 1")
    run_capture(capdb, out)
    ins, upd, upd2 = _rows(events(out), "docs", ("c", "u"))
    assert len(ins["after"][1]) == 64000
    assert upd["after"] == [{"$s": "1"}, ABSENT, "b"]  # the unchanged TOASTed body is not in the stream
    assert upd2["after"] == [{"$s": "1"}, None, None]  # a real NULL is null


def test_before_images_follow_the_replica_identity(capdb, tmp_path):
    capdb.execute("CREATE TABLE ri_default (id int PRIMARY KEY, v text)",
                  "CREATE TABLE ri_full (id int, v text)", "ALTER TABLE ri_full REPLICA IDENTITY FULL",
                  "CREATE TABLE ri_index (id int NOT NULL, k int NOT NULL, v text)",
                  "CREATE UNIQUE INDEX ri_index_k ON ri_index (k)", "ALTER TABLE ri_index REPLICA IDENTITY USING INDEX ri_index_k",
                  "CREATE TABLE ri_nothing (id int, v text)", "ALTER TABLE ri_nothing REPLICA IDENTITY NOTHING")
    out = tmp_path / "out"
    run_capture(capdb, out)
    capdb.execute("INSERT INTO ri_default VALUES (1, 'a')", "UPDATE ri_default SET v = 'b'",
                  "UPDATE ri_default SET id = 2", "DELETE FROM ri_default",
                  "INSERT INTO ri_full VALUES (1, 'a')", "UPDATE ri_full SET v = 'b'", "DELETE FROM ri_full",
                  "INSERT INTO ri_index VALUES (1, 10, 'a')", "UPDATE ri_index SET v = 'b'",
                  "UPDATE ri_index SET k = 11", "DELETE FROM ri_index",
                  "INSERT INTO ri_nothing VALUES (1, 'a')")
    # REPLICA IDENTITY NOTHING: a publication that publishes updates makes the server refuse them
    import psycopg

    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState):
        capdb.execute("UPDATE ri_nothing SET v = 'b'")
    run_capture(capdb, out)
    evs = events(out)

    def images(table):
        return [(ev["op"], ev["before"]) for ev in _rows(evs, table, ("u", "d"))]

    one, two = {"$s": "1"}, {"$s": "2"}
    assert images("ri_default") == [("u", [one, ABSENT]), ("u", [one, ABSENT]), ("d", [two, ABSENT])]
    assert images("ri_full") == [("u", [one, "a"]), ("d", [one, "b"])]
    assert images("ri_index") == [("u", [ABSENT, {"$s": "10"}, ABSENT]), ("u", [ABSENT, {"$s": "10"}, ABSENT]),
                                  ("d", [ABSENT, {"$s": "11"}, ABSENT])]
    assert images("ri_nothing") == []


def test_ddl_events_arrive_in_commit_order_with_the_rows_around_them(capdb, tmp_path):
    capdb.execute("CREATE TABLE o (id int PRIMARY KEY, n numeric(6,2))")
    out = tmp_path / "out"
    run_capture(capdb, out)
    capdb.execute(
        "INSERT INTO o VALUES (1, 1.5)",
        "BEGIN; INSERT INTO o VALUES (2, 2.5); ALTER TABLE o ALTER COLUMN n TYPE text USING 'n=' || n; "
        "INSERT INTO o VALUES (3, 'three'); COMMIT",
        # in a savepoint: the message is in a subtransaction, the row after it is not
        "BEGIN; SAVEPOINT s; ALTER TABLE o ADD COLUMN extra int DEFAULT 7; RELEASE s; INSERT INTO o VALUES (4, 'four'); COMMIT",
        "ALTER TABLE o ADD COLUMN lonely int",  # DDL with no row after it
    )
    run_capture(capdb, out)
    evs = [ev for ev in events(out) if ev["op"] != "source"]
    stream = [ev for ev in evs if not ev.get("snapshot")]
    summary = [(ev["op"], ev["after"] and row_text(ev["after"][0])) for ev in stream]
    assert summary == [("c", "1"), ("c", "2"), ("ddl", None), ("c", "3"), ("ddl", None), ("c", "4"), ("ddl", None)]
    by_op = {i: ev for i, ev in enumerate(stream)}
    # the row after ALTER COLUMN TYPE is decoded with the new type: text, not numeric
    assert by_op[3]["after"] == [{"$s": "3"}, "three"]
    assert by_op[1]["after"] == [{"$s": "2"}, {"$s": "2.50"}]
    assert [c["column_type"] for c in by_op[2]["catalog"]["tables"][0]["columns"]] == ["integer", "text"]
    assert by_op[5]["after"] == [{"$s": "4"}, "four", {"$s": "7"}]
    # one transaction's events share its xid and commit time; LSN positions
    assert by_op[1]["tx"] == by_op[2]["tx"] == by_op[3]["tx"] and by_op[1]["ts"] == by_op[3]["ts"]
    assert all("/" in ev["position"] for ev in stream)
    lonely = by_op[6]
    assert lonely["ddl"] == "ALTER TABLE o ADD COLUMN lonely int" and lonely["search_path"] == ["public"]
    assert [c["name"] for c in lonely["catalog"]["tables"][0]["columns"]] == ["id", "n", "extra", "lonely"]


def test_a_query_string_of_several_commands_gives_one_event_per_command(capdb, tmp_path):
    out = tmp_path / "out"
    run_capture(capdb, out, snapshot="never")
    text = ("CREATE TABLE q1 (id int); ALTER TABLE q1 ADD COLUMN a text; CREATE TABLE q2 (id int); "
            "ALTER TABLE q1 RENAME TO q3; INSERT INTO q2 VALUES (1)")
    capdb.execute(text)
    run_capture(capdb, out)
    evs = [ev for ev in events(out) if ev["op"] in ("ddl", "c")]
    assert [ev["op"] for ev in evs] == ["ddl"] * 4 + ["c"]
    assert all(ev["ddl"] == text for ev in evs[:4])
    tables = [[(t["name"], [c["name"] for c in t["columns"]]) for t in ev["catalog"]["tables"]] for ev in evs[:4]]
    assert tables == [[("q1", ["id"])], [("q1", ["id", "a"])], [("q2", ["id"])], [("q3", ["id", "a"])]]
    assert evs[3]["catalog"]["renamed"] == [{"from": {"database": capdb.name, "schema": "public", "name": "q1"},
                                             "to": {"database": capdb.name, "schema": "public", "name": "q3"}}]


def test_truncate_filters_and_the_ddlcore_schema(capdb, tmp_path):
    capdb.execute("CREATE SCHEMA other", "CREATE TABLE keep (id int PRIMARY KEY)", "CREATE TABLE skip (id int PRIMARY KEY)",
                  "CREATE TABLE other.elsewhere (id int PRIMARY KEY)", "INSERT INTO keep VALUES (1)",
                  "INSERT INTO skip VALUES (1)", "INSERT INTO other.elsewhere VALUES (1)")
    out = tmp_path / "out"
    run_capture(capdb, out, include=("public.*", "other.*"), exclude=("public.skip",))
    capdb.execute("INSERT INTO keep VALUES (2)", "INSERT INTO skip VALUES (2)", "TRUNCATE keep, skip",
                  "ALTER TABLE skip ADD COLUMN x int", "INSERT INTO other.elsewhere VALUES (2)")
    run_capture(capdb, out)
    evs = events(out)
    rows = [(ev["op"], ev.get("schema"), ev["table"]) for ev in evs if ev["op"] in ("r", "c", "t")]
    assert rows == [("r", "public", "keep"), ("r", "other", "elsewhere"),
                    ("c", "public", "keep"), ("t", "public", "keep"), ("c", "other", "elsewhere")]
    ddl = [ev for ev in evs if ev["op"] == "ddl" and not ev.get("snapshot")]
    assert [e["ddl"] for e in ddl] == ["ALTER TABLE skip ADD COLUMN x int"]  # DDL of every table is written
    assert not any(ev.get("schema") == "ddlcore" for ev in evs)
    snap_tables = [t["name"] for ev in evs if ev.get("snapshot") and ev.get("catalog")
                   for t in ev["catalog"]["tables"]]
    assert snap_tables == ["keep", "skip", "elsewhere"]  # every table's definition, rows of the captured ones


def test_source_event_names_the_server_and_the_settings(capdb, tmp_path):
    out = tmp_path / "out"
    run_capture(capdb, out)
    src = events(out)[0]
    assert src["op"] == "source" and src["seq"] == 1
    s = src["source"]
    with capdb.connect() as conn:
        sysid = conn.execute("SELECT system_identifier::text FROM pg_control_system()").fetchone()[0]
        version = conn.execute("SHOW server_version").fetchone()[0]
    assert s["dialect"] == "postgres" and s["server"] == {"system_identifier": sysid, "version": version}
    assert s["parser_options"] == {"search_path": ["public"]}
    settings = s["settings"]
    assert (settings["DateStyle"], settings["IntervalStyle"], settings["TimeZone"], settings["bytea_output"],
            settings["extra_float_digits"]) == ("ISO, MDY", "postgres", "UTC", "hex", "3")
    assert "lc_monetary" in settings and s["capture"]["tool"] == "ddlcore capture postgres"
    # a restart with the same server writes no second source event
    run_capture(capdb, out)
    assert [ev["op"] for ev in events(out)].count("source") == 1


def test_the_slot_is_confirmed_at_the_checkpoint(capdb, tmp_path):
    capdb.execute("CREATE TABLE c (id int PRIMARY KEY)")
    out = tmp_path / "out"
    run_capture(capdb, out)
    capdb.execute("INSERT INTO c VALUES (1)", "INSERT INTO c VALUES (2)")
    run_capture(capdb, out)
    cp = json.loads((out / "checkpoint.json").read_text())
    assert cp["phase"] == "streaming" and cp["seq"] == events(out)[-1]["seq"]
    assert cp["changelog_bytes"] == (out / "changelog.jsonl").stat().st_size
    assert capdb.slot_lsn("ddlcore_test") == cp["lsn"]


def test_missing_triggers_or_publication_stop_the_capture_before_anything(capdb, tmp_path):
    with pytest.raises(CaptureError, match="publication nope does not exist"):
        run_capture(capdb, tmp_path / "a", publication="nope")
    capdb.execute("ALTER EVENT TRIGGER ddlcore_ddl_command_end DISABLE")
    with pytest.raises(CaptureError, match=r"ddlcore_ddl_command_end is disabled.*--install"):
        run_capture(capdb, tmp_path / "b")
    capdb.execute("ALTER EVENT TRIGGER ddlcore_ddl_command_end ENABLE ALWAYS")
    with capdb.connect() as conn:
        assert conn.execute("SELECT count(*) FROM pg_replication_slots").fetchone()[0] == 0


def test_a_first_run_needs_its_own_slot(capdb, tmp_path):
    with capdb.connect() as conn:
        conn.execute("SELECT pg_create_logical_replication_slot('ddlcore_test', 'pgoutput')")
    with pytest.raises(CaptureError, match="slot ddlcore_test already exists"):
        run_capture(capdb, tmp_path / "out")


def _workload(db, rounds: int) -> None:
    for i in range(rounds):
        db.execute(f"INSERT INTO w (id, v) SELECT g, 'v' || g FROM generate_series({i * 10 + 1}, {i * 10 + 10}) g",
                   f"UPDATE w SET v = v || 'x' WHERE id % 3 = {i % 3}", f"DELETE FROM w WHERE id = {i * 10 + 5}")
        if i % 4 == 3:
            db.execute(f"ALTER TABLE w ADD COLUMN c{i} int DEFAULT {i}")


def test_stopped_and_resumed_equals_uninterrupted(postgres, tmp_path):
    from .support import create_capture_db, drop_capture_db

    db = create_capture_db(postgres)
    try:
        db.execute("CREATE TABLE w (id int PRIMARY KEY, v text)")
        full, parts = tmp_path / "full", tmp_path / "parts"
        run_capture(db, full, slot="full")
        run_capture(db, parts, slot="parts")
        _workload(db, 12)
        run_capture(db, full, slot="full")
        runs = 0
        while True:
            stats, _ = run_capture(db, parts, slot="parts", stop_after_events=7)
            runs += 1
            if stats.events == 0 or runs > 200:
                break
        assert runs > 5

        def comparable(out):
            # the logs differ in their epoch, and their slots' creation points (the snapshot's
            # position and time); the stream is the same WAL
            return [{k: v for k, v in ev.items()
                     if k not in ("source", "ts", "position") or not (ev["op"] in ("source", "r") or ev.get("snapshot"))}
                    for ev in events(out)]

        assert comparable(parts) == comparable(full)
        assert len(events(full)) > 150
    finally:
        drop_capture_db(db)

