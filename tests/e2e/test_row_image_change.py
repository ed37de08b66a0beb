"""Faults of issue 30 tried against MariaDB 10.11: the global ``binlog_row_image`` changed
(FULL → MINIMAL → NOBLOB) while ``ddlcore capture mysql`` streams.  Partial images are marked
absent, never null; a reader merging the changes by key (keeping a column's previous value where
an image lacks it) ends with exactly the server's rows, from the change log and from the
pipeline's output (``_absent`` names what no image carried)."""

from __future__ import annotations

import base64
import threading
import time

from ddlcore_mysql.capture import CaptureOptions, MySqlCapture

from ddlcore.spark.pipeline import run_pipeline

from tests.capture.support import B, connection, events, master_position, run_capture

ABSENT = {"$absent": True}
IMAGES = ("MINIMAL", "NOBLOB")


def _merge(evs, width: int) -> dict:
    """Current rows by key (column 0) from the change events, absent values keeping the
    previous value; a column absent with no previous value stays absent (not known)."""
    rows: dict = {}
    for e in evs:
        if e.op in ("c", "r", "u"):
            old = rows.pop((e.before or e.after)[0], [ABSENT] * width)
            rows[e.after[0] if e.after[0] != ABSENT else old[0]] = [
                old[i] if v == ABSENT else v for i, v in enumerate(e.after)]
        elif e.op == "d":
            rows.pop(e.before[0])
    return rows


def row_value(v):
    """A change-log raw value as the pipeline writes it (varchar text, blob bytes)."""
    if isinstance(v, dict) and "$b64" in v:
        return base64.b64decode(v["$b64"])
    return v


def _merge_output(rows: list[dict], names: list[str]) -> dict:
    """``_merge`` of the pipeline's output rows (``_seq`` order; an absent value is null *and*
    named in ``_absent``)."""
    current: dict = {}
    for r in sorted(rows, key=lambda r: r["_seq"]):
        if r["_op"] == "d":
            current.pop(r["id"])
            continue
        old = current.pop(r["_before"]["id"] if r["_op"] == "u" else r["id"], [ABSENT] * len(names))
        absent = set(r["_absent"] or ())
        current[r["id"] if "id" not in absent else old[0]] = [
            old[i] if n in absent else r[n] for i, n in enumerate(names)]
    return current


def test_a_global_row_image_change_while_capturing(mariadb, mariadb_db, spark, tmp_path):
    db, out = mariadb_db.name, tmp_path / "out"
    with mariadb.connect(db) as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE t (id int PRIMARY KEY, a varchar(10), n int, b blob)")
        cur.execute("INSERT INTO t VALUES (1, 'one', 1, 'blob1'), (2, 'two', 2, 'blob2'), (3, 'three', 3, 'b3')")
        conn.commit()
    run_capture(mariadb, out, snapshot="initial", include=(f"{db}.*",)).last_seq
    cap = MySqlCapture(CaptureOptions(connection(mariadb), server_id=4242, out=out, progress=False,
                                      retry_for=0), on_warning=lambda w: None)
    thread = threading.Thread(target=cap.run)
    thread.start()
    try:
        for image in IMAGES:
            with mariadb.connect() as root, root.cursor() as cur:
                cur.execute(f"SET GLOBAL binlog_row_image = '{image}'")
            with mariadb.connect(db) as conn, conn.cursor() as cur:  # a new session takes the global value
                cur.execute("SELECT @@session.binlog_row_image")
                assert cur.fetchone()[0] == image
                cur.execute("UPDATE t SET n = n + 10 WHERE id = 1")
                cur.execute(f"UPDATE t SET a = '{image[:3]}', b = '{image}' WHERE id = 2")
                cur.execute("DELETE FROM t WHERE id = 3")
                cur.execute(f"INSERT INTO t (id, a) VALUES (3, '{image[:5]}')")
                conn.commit()
        with mariadb.connect() as root, root.cursor() as cur:
            cur.execute("SET GLOBAL binlog_row_image = 'FULL'")
        file, pos = master_position(mariadb).split(":")
        end = (file, int(pos))
        deadline = time.monotonic() + 30  # until the capture has checkpointed everything written
        while (cap.checkpoint is None or (cap.checkpoint.binlog_file, cap.checkpoint.binlog_position) < end) \
                and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        with mariadb.connect() as root, root.cursor() as cur:
            cur.execute("SET GLOBAL binlog_row_image = 'FULL'")
        cap.stop()
        thread.join(30)
    assert not thread.is_alive()
    evs = [e for e in events(out) if e.table == "t" and e.op in ("c", "r", "u", "d")]
    streamed = [e for e in evs if e.op != "r"]
    assert len(streamed) == 4 * len(IMAGES), [(e.op, e.before, e.after) for e in streamed]
    # partial images: absent, never null (no column of t is null on the server but n and b of id 3)
    assert any(ABSENT in (e.after or []) for e in streamed) and any(ABSENT in (e.before or []) for e in streamed)
    assert all(v is not None for e in streamed if e.op == "u" for v in e.after + e.before)
    with mariadb.connect(db) as conn, conn.cursor() as cur:
        cur.execute("SELECT id, a, n, b FROM t ORDER BY id")
        server = {r[0]: [r[0], B(r[1].encode()), r[2], None if r[3] is None else B(r[3])] for r in cur.fetchall()}
    merged = _merge(evs, 4)
    assert merged.keys() == server.keys()
    unknown = {(k, i) for k, row in merged.items() for i, v in enumerate(row) if v == ABSENT}
    assert all(merged[k][i] == server[k][i] for k in server for i in range(4) if (k, i) not in unknown)
    # the one value no image carried: the blob the NOBLOB insert of id 3 left out (null on the server)
    assert unknown == {(3, 3)} and server[3][3] is None

    # the pipeline's output, merged the same way: the same rows, the same unknown value
    out_dir = tmp_path / "tables"
    result = run_pipeline(out, out_dir, spark=spark)
    assert result.quarantined == 0
    rows = [r.asDict(recursive=True) for r in spark.read.parquet(str(out_dir / db / "t")).collect()]
    from_output = _merge_output(rows, ["id", "a", "n", "b"])
    text = lambda v: v if v == ABSENT else row_value(v).decode()  # noqa: E731  (varchar: text)
    want = {k: [row[0], text(row[1]), row[2], row_value(row[3])] for k, row in merged.items()}
    assert from_output == want
