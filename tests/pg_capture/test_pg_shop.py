"""The pg_shop workload (``examples/pg_shop/workload.py``) captured from a real PostgreSQL 15:
every row event of the change log carries, column by column, the text the server returned to
``SELECT`` right after that change (an unchanged TOASTed value is absent — and only such a value
is), in the order the changes happened, with the table's schema and name of that moment; and
the bundled ``examples/pg_shop/changelog.jsonl`` is a valid change log of the same shape."""

from __future__ import annotations

from collections import Counter

import psycopg

from ddlcore.changelog import read_changelog

from .support import REPO, events, pg_shop_workload, row_text, run_capture

ABSENT = {"$absent": True}


W = pg_shop_workload()


def test_every_row_event_carries_what_select_returned(capdb, tmp_path):
    expected: list[tuple] = []
    conn = psycopg.connect(capdb.dsn, autocommit=True, options=W.connect_options())
    try:
        W.setup(conn, lambda *change: expected.append(change))
        out = tmp_path / "out"
        run_capture(capdb, out)
        W.run(conn, lambda *change: expected.append(change))
        run_capture(capdb, out)
    finally:
        conn.close()
    evs = events(out)
    rows = [ev for ev in evs if ev["op"] in ("r", "c", "u", "d", "t")]
    assert [(ev["op"], ev["schema"], ev["table"]) for ev in rows] == [(op, s, t) for s, t, op, *_ in expected]
    absent_seen = 0
    for ev, (schema, table, op, pk, row, columns) in zip(rows, expected):
        where = f"seq {ev['seq']} {op} {schema}.{table} {pk}"
        if op == "t":
            continue
        if op == "d":
            assert row is None and row_text(ev["before"][0]) == pk, where
            continue
        image = ev["after"]
        assert len(image) == len(row) == len(columns), where
        for value, want, (name, *_types) in zip(image, row, columns):
            if value == ABSENT:
                assert op == "u" and name == "bio" and len(want) > 8000, f"{where}: {name} absent"
                absent_seen += 1
                continue
            assert row_text(value) == want, f"{where}: {name}"
    assert absent_seen == 2  # the two updates of customer 1 leave its TOASTed bio unchanged
    ddl = [ev for ev in evs if ev["op"] == "ddl" and not ev.get("snapshot")]
    assert len(ddl) == 12 and all(ev.get("catalog") for ev in ddl)


def test_the_bundled_change_log_is_valid_and_complete():
    path = REPO / "examples" / "pg_shop" / "changelog.jsonl"
    evs = list(read_changelog(path))
    assert [e.seq for e in evs] == list(range(1, len(evs) + 1))
    assert evs[0].op == "source" and evs[0].source["dialect"] == "postgres"
    ops = Counter(e.op for e in evs)
    assert ops == Counter({"ddl": 18, "u": 9, "r": 8, "c": 6, "d": 4, "t": 1, "source": 1})
    # commit times pinned by examples/pg_shop/record.py (pin_clock): the workload's day, the
    # recorded gaps kept, in order
    ts = [e.ts for e in evs]
    assert ts[0] == 1_718_000_000_000 and ts == sorted(ts) and ts[-1] - ts[0] < 60_000, (ts[0], ts[-1])
    renames = [r for e in evs if e.catalog for r in e.catalog.get("renamed", ())]
    assert [(r["from"]["schema"], r["from"]["name"], r["to"]["schema"], r["to"]["name"]) for r in renames] == [
        ("public", "orders", "public", "purchases"), ("public", "purchases", "archive", "purchases")]
