"""``ddlcore capture tidb``: Binlog messages (file and Kafka) → change log → ``ddlcore run``.

The workload (``workload.py``) is every MySQL type TiDB has at its extremes, a column added,
modified and renamed, a table renamed and TiDB-only DDL, as Drainer would send it.  Every
output row is checked against the values put in, with the Spark types of that moment's
schema; a stream with Drainer's redeliveries, a capture restarted in the middle, and the same
messages read from a real broker give the same change log as the clean stream.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from ddlcore.capture import CaptureError
from ddlcore_mysql.tidb_capture import (TidbCapture, TidbCaptureOptions, binlog_pb2, column_value,
                                        compare_column_info, read_delimited, tso_physical_ms,
                                        write_delimited)

from .workload import CLUSTER_ID, DATABASE, TOPIC, build, with_redeliveries

W = build()


def write_file(path: Path, messages) -> Path:
    with open(path, "wb") as fh:
        for m in messages:
            write_delimited(fh, m)
    return path


def capture_file(path: Path, out: Path, **kw):
    return TidbCapture(TidbCaptureOptions(out=out, from_file=path, until_end=True, progress=False, **kw)).run()


def events(out: Path) -> list[dict]:
    """The change log without the source event's ``server`` (it names the file or topic)."""
    lines = [json.loads(x) for x in (out / "changelog.jsonl").read_text().splitlines()]
    for e in lines:
        if e["op"] == "source":
            e["source"] = {k: v for k, v in e["source"].items() if k not in ("server", "epoch")}
    return lines


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("clean")
    stats = capture_file(write_file(d / "clean.bin", W.messages), d / "out")
    assert stats.duplicates == 0 and not stats.drift and stats.ddl_failed == 0, stats.to_json()
    return d / "out"


# ------------------------------------------------------------------ the change log


def test_change_log_positions_and_images(clean):
    evs = events(clean)
    assert evs[0]["op"] == "source" and evs[0]["source"]["flavor"] == "tidb"
    assert evs[0]["source"]["parser_options"]["collation_server"] == "utf8mb4_bin"
    rows = [e for e in evs if e["op"] in ("c", "u", "d")]
    assert [(e["table"], e["op"], int(e["position"])) for e in rows] == \
           [(x.table, x.op, x.commit_ts) for x in W.rows]
    for e in evs[1:]:
        assert e["ts"] == tso_physical_ms(int(e["position"])) and e["tx"] == e["position"]
    assert [e["seq"] for e in evs] == list(range(1, len(evs) + 1))
    ddl = [e for e in evs if e["op"] == "ddl"]
    assert ddl[0]["database"] is None and all(e["database"] == DATABASE for e in ddl[1:] if "POLICY" not in e["ddl"])
    # raw values as the contract says: unsigned as given, enum index, set bitmask, bytes, text
    first = rows[1]["after"]
    assert first[10] == 18446744073709551615 and first[14] == 3 and first[15] == 7
    assert first[17] == {"$b64": "D/8="} and first[19] == {"$datetime": "9999-12-31 23:59:59.999999"}
    assert first[22] == {"$datetime": "2038-01-19 03:14:07.999000"}  # TIMESTAMP(3): six digits


def test_redeliveries_and_restart_give_the_clean_change_log(clean, tmp_path):
    stream = with_redeliveries(W.messages)
    stats = capture_file(write_file(tmp_path / "dup.bin", stream), tmp_path / "dup")
    assert stats.duplicates == len(stream) - len(W.messages) and stats.out_of_order == 0
    assert events(tmp_path / "dup") == events(clean)
    # stopped after 9 messages (in the middle of the redelivered ones), then resumed
    first = TidbCapture(TidbCaptureOptions(out=tmp_path / "restart", from_file=tmp_path / "dup.bin", until_end=True,
                                           progress=False, stop_after_messages=9)).run()
    assert first.messages == 9
    cp = json.loads((tmp_path / "restart" / "checkpoint.json").read_text())
    assert cp["commit_ts"] == W.messages[8].commit_ts
    again = capture_file(tmp_path / "dup.bin", tmp_path / "restart")
    assert again.duplicates >= 9 and again.resumed_from == str(W.messages[8].commit_ts)
    assert events(tmp_path / "restart") == events(clean)
    # a third run over the same file writes nothing
    assert capture_file(tmp_path / "dup.bin", tmp_path / "restart").events == 0
    assert events(tmp_path / "restart") == events(clean)


def test_rows_of_a_message_out_of_commit_order_are_kept_quarantined(tmp_path):
    """Not a redelivery (this run never wrote it): its rows are written with a quarantine
    reason — kept, never converted out of commit order — and a warning names it."""
    m = W.messages
    dml = [i for i in range(4, len(m) - 1) if m[i].type == 0]  # BinlogType.DML
    i = dml[0]
    stream = m[:i] + [m[i + 1], m[i]] + m[i + 2:i + 4]
    stats = capture_file(write_file(tmp_path / "o.bin", stream), tmp_path / "o")
    assert (stats.duplicates, stats.out_of_order) == (0, 1)
    assert any(f"commit_ts {m[i].commit_ts}" in w and "out of commit order" in w for w in stats.warnings)
    late = [e for e in events(tmp_path / "o") if e["op"] != "source" and int(e["position"]) == m[i].commit_ts]
    assert late and all("out of commit order" in e.get("quarantine", "") for e in late)
    assert sum(len(t.mutations) for t in m[i].dml_data.tables) == len(late)
    in_order = [e for e in events(tmp_path / "o") if e["op"] != "source" and int(e["position"]) != m[i].commit_ts]
    assert not any(e.get("quarantine") for e in in_order)


def _late_split(m):
    """``(i, first, second)``: a DML message ``m[i]`` arriving after ``m[i + 1]`` across two
    deliveries — the first ends with ``m[i + 1]``, the second starts with ``m[i]`` and then
    redelivers ``m[i + 1]``."""
    i = [i for i in range(4, len(m) - 1) if m[i].type == 0][0]  # BinlogType.DML
    return i, m[:i] + [m[i + 1]], [m[i], m[i + 1]] + m[i + 2:i + 4]


def _without_reasons(evs: list[dict]) -> list[dict]:
    """The events but the source events (each file is another source) without seq, with their
    quarantine reasons checked and taken out (they name the offset)."""
    evs = [{k: v for k, v in e.items() if k != "seq"} for e in evs if e["op"] != "source"]
    for e in evs:
        if "quarantine" in e:
            assert "out of commit order" in e.pop("quarantine")
    return evs


def test_a_late_message_after_a_restart_is_kept_quarantined_and_a_redelivery_dropped(tmp_path):
    """The late message ``m[i]`` was never written: the second run keeps it (quarantined), as
    one run over the same messages does; ``m[i + 1]`` again is a redelivery and dropped; a
    third run over the second file writes nothing."""
    m = W.messages
    i, first, second = _late_split(m)
    one = capture_file(write_file(tmp_path / "one.bin", first + second), tmp_path / "one")
    assert (one.duplicates, one.out_of_order) == (1, 1)
    capture_file(write_file(tmp_path / "1.bin", first), tmp_path / "two")
    again = capture_file(write_file(tmp_path / "2.bin", second), tmp_path / "two")
    assert (again.duplicates, again.out_of_order) == (1, 1)
    assert any(f"commit_ts {m[i].commit_ts}" in w and "out of commit order" in w for w in again.warnings)
    late = [e for e in events(tmp_path / "two") if e.get("position") == str(m[i].commit_ts)]
    assert late and all("out of commit order" in e.get("quarantine", "") for e in late)
    assert _without_reasons(events(tmp_path / "two")) == _without_reasons(events(tmp_path / "one"))
    third = capture_file(tmp_path / "2.bin", tmp_path / "two")
    assert (third.events, third.duplicates, third.out_of_order) == (0, len(second), 0)
    cp = json.loads((tmp_path / "two" / "checkpoint.json").read_text())
    assert m[i].commit_ts in cp["recent"] and len(cp["recent"]) <= 1024


def test_a_ddl_out_of_commit_order_stops_the_capture(tmp_path):
    m = W.messages
    i = next(i for i in range(1, len(m) - 1) if m[i].type == 1)  # BinlogType.DDL
    with pytest.raises(CaptureError, match="cannot be placed in the schema history"):
        capture_file(write_file(tmp_path / "d.bin", m[:i] + [m[i + 1], m[i]]), tmp_path / "d")


def test_filters_leave_rows_out_and_keep_every_ddl(clean, tmp_path):
    path = write_file(tmp_path / "in.bin", W.messages)
    stats = capture_file(path, tmp_path / "o", exclude=("shop.orders",))
    orders = sum(1 for x in W.rows if x.table == "orders")
    assert stats.filtered_rows == orders
    got = events(tmp_path / "o")
    assert not [e for e in got if e["table"] == "orders"]
    def ddl(evs):
        return [(e["position"], e["database"], e["ddl"]) for e in evs if e["op"] == "ddl"]

    assert ddl(got) == ddl(events(clean))
    only = capture_file(path, tmp_path / "p", include=("shop.t_%",))
    assert only.filtered_rows == orders and only.ops["c"] + only.ops["u"] + only.ops["d"] == len(W.rows) - orders


def test_timestamps_are_written_in_utc_from_the_message_time_zone(tmp_path):
    pb = binlog_pb2()
    ddl = pb.Binlog(type=pb.DDL, commit_ts=W.messages[1].commit_ts)
    ddl.ddl_data.schema_name = DATABASE
    ddl.ddl_data.ddl_query = b"CREATE TABLE z (id int PRIMARY KEY, ts timestamp(6) NULL, dt datetime)"
    msgs = [W.messages[0], ddl]
    for i, zone in enumerate(["Asia/Shanghai", "", "-05:00"]):
        b = pb.Binlog(type=pb.DML, commit_ts=ddl.commit_ts + (i + 1) * 10, time_zone=zone)
        t = b.dml_data.tables.add()
        t.schema_name, t.table_name = DATABASE, "z"
        for name, typ, key in (("id", "int", True), ("ts", "timestamp", False), ("dt", "datetime", False)):
            ci = t.column_info.add()
            ci.name, ci.mysql_type, ci.is_primary_key = name, typ, key
        m = t.mutations.add()
        m.type = pb.Insert
        m.row.columns.add().int64_value = i
        m.row.columns.add().string_value = "2024-06-01 08:00:00.250000"
        m.row.columns.add().string_value = "2024-06-01 08:00:00"
        msgs.append(b)
    # a message without time_zone: --time-zone (here +01:00)
    stats = capture_file(write_file(tmp_path / "z.bin", msgs), tmp_path / "o", time_zone="+01:00")
    assert not stats.drift
    rows = [e["after"] for e in events(tmp_path / "o") if e["op"] == "c"]
    assert [r[1] for r in rows] == [{"$datetime": "2024-06-01 00:00:00.250000"},
                                    {"$datetime": "2024-06-01 07:00:00.250000"},
                                    {"$datetime": "2024-06-01 13:00:00.250000"}]
    assert {r[2]["$datetime"] for r in rows} == {"2024-06-01 08:00:00"}  # DATETIME is wall time


def test_cli_from_file(clean, tmp_path):
    path = write_file(tmp_path / "in.bin", with_redeliveries(W.messages))
    proc = subprocess.run([sys.executable, "-m", "ddlcore.cli", "capture", "tidb", "--from-file", str(path),
                           "--out", str(tmp_path / "o"), "--no-progress", "--json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    stats = json.loads(proc.stdout)
    assert stats["duplicates"] == len(with_redeliveries(W.messages)) - len(W.messages)
    assert events(tmp_path / "o") == events(clean)
    bad = subprocess.run([sys.executable, "-m", "ddlcore.cli", "capture", "tidb", "--out", str(tmp_path / "x")],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "--from-file" in bad.stderr


def test_drift_is_reported_and_rows_quarantined(tmp_path):
    pb = binlog_pb2()
    msgs = W.messages[:2]  # CREATE DATABASE, CREATE TABLE t_all
    b = pb.Binlog(type=pb.DML, commit_ts=W.messages[1].commit_ts + 10)
    t = b.dml_data.tables.add()
    t.schema_name, t.table_name = DATABASE, "t_all"
    for name, typ in (("id", "bigint"), ("ti", "int")):  # two columns, the history has 30
        ci = t.column_info.add()
        ci.name, ci.mysql_type = name, typ
    m = t.mutations.add()
    m.type = pb.Insert
    m.row.columns.add().int64_value = 1
    m.row.columns.add().int64_value = 2
    stats = capture_file(write_file(tmp_path / "d.bin", msgs + [b]), tmp_path / "o")
    assert len(stats.drift) == 1 and "2 columns [id, ti] in the binlog, 30" in stats.drift[0]
    row = [e for e in events(tmp_path / "o") if e["op"] == "c"][0]
    assert row["quarantine"].startswith("drift: 2 columns")
    assert "schema drift in shop.t_all" in (tmp_path / "o" / "capture.log").read_text()


def test_compare_column_info_names_types_and_keys():
    import ddlcore

    p = ddlcore.get_dialect("mysql").parser(flavor="tidb")
    tables = p.new_tables()
    p.parse("CREATE TABLE t (id bigint PRIMARY KEY, v varchar(3), j json)", tables, database="d")
    t = tables.get("d.t")
    from ddlcore.model import TableId

    tid = TableId("d", None, "t")
    assert compare_column_info(tid, [("ID", "bigint", True), ("v", "var_string", False), ("j", "json", False)], t) == []
    problems = compare_column_info(tid, [("id", "int", False), ("w", "varchar", False), ("j", "json", False)], t)
    assert problems == ["column id (type): binlog has int, history has bigint",
                        "column id (primary key): binlog says not in the primary key, history says ",
                        "column 2: binlog has 'w', history has 'v'"]


def test_column_values_and_framing(tmp_path):
    pb = binlog_pb2()
    c = pb.Column(string_value="2024-06-01 12:00:00.5")
    assert column_value(c, "timestamp", dt.timezone(dt.timedelta(hours=8))).text == "2024-06-01 04:00:00.500000"
    assert column_value(pb.Column(string_value="0000-00-00 00:00:00"), "timestamp",
                        dt.timezone(dt.timedelta(hours=8))).text == "0000-00-00 00:00:00"
    assert column_value(pb.Column(string_value="12:00:00.000"), "time").text == "12:00:00"
    assert column_value(pb.Column(is_null=True), "int") is None
    with pytest.raises(CaptureError, match="year value"):
        column_value(pb.Column(string_value="x"), "year")
    path = write_file(tmp_path / "f.bin", W.messages[:3])
    data = path.read_bytes()
    (tmp_path / "cut.bin").write_bytes(data[:-5])
    with open(tmp_path / "cut.bin", "rb") as fh, pytest.raises(CaptureError, match="announces"):
        list(read_delimited(fh))
    with open(path, "rb") as fh:
        assert [pb.Binlog.FromString(x) for x in read_delimited(fh)] == W.messages[:3]
    (tmp_path / "junk.bin").write_bytes(b"\x05hello")
    with pytest.raises(CaptureError, match="not a TiDB Binlog message"):
        capture_file(tmp_path / "junk.bin", tmp_path / "junk")


# ------------------------------------------------------------------ Kafka


def produce(brokers: str, topic: str, messages, create: bool = False) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    if create:  # one partition, as Drainer's topic
        admin = AdminClient({"bootstrap.servers": brokers})
        for f in admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)]).values():
            f.result(30)
    producer = Producer({"bootstrap.servers": brokers, "linger.ms": 5})
    for m in messages:
        producer.produce(topic, value=m.SerializeToString(), partition=0)
    assert producer.flush(30) == 0


@pytest.fixture(scope="module")
def kafka_out(kafka_broker, tmp_path_factory) -> tuple[Path, dict]:
    """The workload with Drainer's redeliveries published to a real broker, captured with
    ``ddlcore capture tidb --brokers ... --topic <cluster_id>_obinlog --until-end``."""
    out = tmp_path_factory.mktemp("kafka") / "out"
    produce(kafka_broker, TOPIC, with_redeliveries(W.messages), create=True)
    proc = subprocess.run([sys.executable, "-m", "ddlcore.cli", "capture", "tidb", "--brokers", kafka_broker,
                           "--topic", TOPIC, "--out", str(out), "--until-end", "--no-progress", "--json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return out, json.loads(proc.stdout)


def test_kafka_capture_equals_file_capture(kafka_out, clean):
    out, stats = kafka_out
    stream = with_redeliveries(W.messages)
    assert stats["messages"] == len(stream) and stats["duplicates"] == len(stream) - len(W.messages)
    assert events(out) == events(clean)
    src = json.loads((out / "changelog.jsonl").read_text().splitlines()[0])["source"]
    assert src["server"] == {"cluster_id": CLUSTER_ID, "topic": TOPIC, "partition": 0}
    cp = json.loads((out / "checkpoint.json").read_text())
    assert cp["offset"] == len(stream) and cp["commit_ts"] == W.messages[-1].commit_ts


def test_kafka_resume_offset_and_commit_ts(kafka_broker, tmp_path):
    topic = "1234_obinlog"
    produce(kafka_broker, topic, W.messages, create=True)
    first = TidbCapture(TidbCaptureOptions(out=tmp_path / "k", brokers=kafka_broker, topic=topic,
                                           until_end=True, progress=False)).run()
    assert (first.messages, first.duplicates) == (len(W.messages), 0)
    # more messages arrive: the next run resumes at the checkpointed offset
    pb = binlog_pb2()
    extra = pb.Binlog(type=pb.DDL, commit_ts=W.messages[-1].commit_ts + (1 << 18))
    extra.ddl_data.schema_name = DATABASE
    extra.ddl_data.ddl_query = b"ALTER TABLE `orders` ADD COLUMN `z` int"
    produce(kafka_broker, topic, [W.messages[-2], extra])  # a late redelivery, then a new DDL
    again = TidbCapture(TidbCaptureOptions(out=tmp_path / "k", brokers=kafka_broker, topic=topic,
                                           until_end=True, progress=False)).run()
    assert (again.messages, again.duplicates, again.ops["ddl"]) == (2, 1, 1)
    assert events(tmp_path / "k")[-1]["ddl"] == "ALTER TABLE `orders` ADD COLUMN `z` int"
    # --offset: from that offset on
    off = TidbCapture(TidbCaptureOptions(out=tmp_path / "o", brokers=kafka_broker, topic=topic, offset=len(W.messages),
                                         until_end=True, progress=False)).run()
    assert (off.messages, off.duplicates, off.ops["ddl"], off.ops["c"]) == (2, 0, 1, 2)  # W.messages[-2]: 2 inserts
    # --commit-ts: only what committed after that TSO (seek by its physical time)
    later = TidbCapture(TidbCaptureOptions(out=tmp_path / "t", brokers=kafka_broker, topic=topic,
                                           commit_ts=W.messages[-3].commit_ts, until_end=True, progress=False)).run()
    positions = [int(e["position"]) for e in events(tmp_path / "t") if e["op"] != "source"]
    assert positions and all(p > W.messages[-3].commit_ts for p in positions)
    assert positions[-1] == extra.commit_ts and later.ops["ddl"] == 1



def test_two_kafka_captures_of_one_topic_keep_their_own_positions(kafka_broker, tmp_path):
    """Each capture reads from its own checkpoint's offset, never from a consumer group's: a
    second capture of the topic starts at the beginning, and the first one resumes where it
    stopped, neither taking the other's position."""
    topic = "4321_obinlog"
    half = len(W.messages) // 2
    produce(kafka_broker, topic, W.messages[:half], create=True)

    def capture(name: str):
        return TidbCapture(TidbCaptureOptions(out=tmp_path / name, brokers=kafka_broker, topic=topic,
                                              until_end=True, progress=False)).run()

    assert capture("A").messages == half
    produce(kafka_broker, topic, W.messages[half:])
    assert capture("B").messages == len(W.messages)
    assert capture("A").messages == len(W.messages) - half

    def rows(name: str) -> list[tuple]:
        return [(e["op"], e["position"], e.get("after")) for e in events(tmp_path / name) if e["op"] != "source"]

    assert rows("A") == rows("B") and len(rows("A")) > len(W.messages)
    epochs = {json.loads((tmp_path / n / "checkpoint.json").read_text())["epoch"] for n in ("A", "B")}
    assert len(epochs) == 2


def test_kafka_late_message_after_a_restart_is_kept_quarantined(kafka_broker, tmp_path):
    topic = "5678_obinlog"
    i, first, second = _late_split(W.messages)
    produce(kafka_broker, topic, first, create=True)
    opts = dict(out=tmp_path / "k", brokers=kafka_broker, topic=topic, until_end=True, progress=False)
    TidbCapture(TidbCaptureOptions(**opts)).run()
    produce(kafka_broker, topic, second)
    again = TidbCapture(TidbCaptureOptions(**opts)).run()
    assert (again.messages, again.duplicates, again.out_of_order) == (len(second), 1, 1)
    late = [e for e in events(tmp_path / "k") if e.get("position") == str(W.messages[i].commit_ts)]
    assert late and all("out of commit order" in e.get("quarantine", "") for e in late)


# ------------------------------------------------------------------ the pipeline


def test_pipeline_rows_equal_the_values_put_in(spark, clean, request, tmp_path):
    """``ddlcore run`` over the change log captured from the broker (with redeliveries; the
    file capture's log is the same, test above), or from the file where no broker is
    available outside CI."""
    from ddlcore.spark.pipeline import run_pipeline

    try:
        captured = request.getfixturevalue("kafka_out")[0]
    except pytest.skip.Exception:
        captured = clean
    out = tmp_path / "lake"
    # `ddlcore run --dialect mysql`: the flavor (tidb) and parser options come from the log's source event
    result = run_pipeline(captured, out, dialect="mysql", spark=spark)
    assert not list(out.glob("_quarantine/**/*.parquet")), "nothing may be quarantined"
    got = []
    for vdir in sorted((out / DATABASE).glob("*/schema_version=*")):
        df = spark.read.parquet(str(vdir))
        data = [f for f in df.schema.fields if not f.name.startswith("_")]
        for r in df.collect():
            got.append((vdir.parent.name, int(vdir.name.split("=")[1]), data, r.asDict(recursive=True)))
    got.sort(key=lambda g: g[3]["_seq"])
    assert len(got) == len(W.rows), result
    for (table, version, fields, row), want in zip(got, W.rows):
        where = f"{want.table} {want.op} at {want.commit_ts} (v{version})"
        assert table == want.table, where
        assert [(f.name, f.dataType) for f in fields] == want.columns, where
        assert row["_op"] == want.op and row["_position"] == str(want.commit_ts), where
        assert row["_ts"] == tso_physical_ms(want.commit_ts), where
        if want.after is not None:
            check(where, {f.name: row[f.name] for f in fields}, want.after, fields)
        if want.before is not None:
            check(where + " before", row["_before"], want.before, fields)


def check(where: str, got: dict, want: dict, fields) -> None:
    from pyspark.sql import types as T

    for f in fields:
        have, expected = got[f.name], want[f.name]
        if have is not None and isinstance(f.dataType, T.TimestampType):
            have = have.astimezone(dt.timezone.utc)  # collected as local wall time
        assert have == expected, f"{where}: {f.name} {f.dataType.simpleString()}: got {have!r}, put in {expected!r}"
        if expected is not None:
            assert type(have) is type(expected), f"{where}: {f.name}: {type(have)} vs {type(expected)}"


def test_sigkilled_capture_resumes_to_the_uninterrupted_change_log(tmp_path):
    """``ddlcore capture tidb`` killed with SIGKILL at random moments and started again ends
    with exactly the change log of one uninterrupted run (the change log is cut back to the
    checkpoint; what follows is produced again with the same seq)."""
    import copy
    import random
    import signal
    import time

    from .workload import tso

    rng = random.Random(14)
    bulk = []
    for i in range(3000):  # W's transactions, then many more inserts into orders
        m = copy.deepcopy(W.messages[-2])
        m.commit_ts = tso(1000 + i)
        for t in m.dml_data.tables:
            t.mutations[0].row.columns[0].int64_value = 10 + i
        bulk.append(m)
    path = write_file(tmp_path / "big.bin", with_redeliveries(W.messages) + bulk)
    def cmd(out):
        return [sys.executable, "-m", "ddlcore.cli", "capture", "tidb", "--from-file", str(path),
                "--out", str(out), "--no-progress", "--checkpoint-interval", "0.01"]

    # the reference: one uninterrupted run, timed, so that the later kills fall inside a run on
    # a busy machine and on an idle one alike (at random moments within its time)
    t0 = time.monotonic()
    subprocess.run(cmd(tmp_path / "ref"), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    span = time.monotonic() - t0
    kills = 0
    log = tmp_path / "killed" / "changelog.jsonl"
    for attempt in range(40):
        start = log.stat().st_size if log.exists() else 0
        proc = subprocess.Popen(cmd(tmp_path / "killed"), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if attempt == 0:
            # the first kill as soon as the run has written something: inside the run whatever
            # the machine's load (a kill at a share of the reference's time missed the run when
            # the reference was slowed down by a load spike and this run was not)
            while proc.poll() is None and (log.stat().st_size if log.exists() else 0) <= start:
                time.sleep(0.002)
        else:
            time.sleep(rng.uniform(0.3 * span, span))
        if proc.poll() is not None:
            assert proc.returncode == 0, proc.stderr.read().decode()
            break
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        kills += 1
    else:
        pytest.fail("the capture did not finish in 40 runs")
    print(f"killed {kills} times")
    assert kills >= 1, "not killed once: make the input bigger"
    assert events(tmp_path / "killed") == events(tmp_path / "ref")
