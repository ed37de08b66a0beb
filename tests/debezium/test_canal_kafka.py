"""``ddlcore capture canal`` from Kafka (the Tansu broker, tests/tidb/conftest.py): a real MariaDB
workload captured by ``ddlcore capture mysql``, re-encoded as Canal flat messages (one partition,
positions its offsets) and as TiCDC canal-json with ``_tidb.commitTs`` (two partitions, DDL and
``TIDB_WATERMARK`` messages on both) by the test-only encoder (canal_encoder.py); each captured
from Kafka while SIGKILLed mid-batch (Canal twice, TiCDC once) and started again: the change log
holds every row of the workload exactly once, in the order the uninterrupted capture of the same
messages writes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ddlcore.changelog import read_changelog

from tests.servers.fixtures import mariadb  # noqa: F401

from .canal_encoder import canal_messages, ticdc_messages
from .test_debezium_kafka import produce
from .test_debezium_mariadb import ROWS, TABLE, converted_rows
from .workload import capture_workload

#: a session the broker expires soon after a SIGKILLed consumer (which never leaves its group)
KAFKA = {"session.timeout.ms": 1000, "heartbeat.interval.ms": 200}
#: one killed run: the capture with checkpoints every 10 ms (so that the kill finds the change
#: log ahead of the batch's end and its checkpoints mid-batch)
RUNNER = """
import json, sys
from ddlcore.debezium_capture import DebeziumCapture, DebeziumCaptureOptions
from ddlcore_mysql.canal import CanalReader
a = json.loads(sys.argv[1])
DebeziumCapture(DebeziumCaptureOptions(out=a["out"], brokers=a["brokers"], topics=(a["topic"],), group=a["group"],
                until_end=True, connector_impl=CanalReader(a["flavor"]), progress=False, checkpoint_interval=0.01,
                kafka_config=a["kafka"])).run()
"""


@pytest.fixture(scope="module")
def workload(mariadb, tmp_path_factory):  # noqa: F811
    """ddlcore's own capture of the Debezium tests' workload (every common type, an ALTER between
    rows) and 300 inserts of 5 rows into a second table, an update and a delete of many rows."""
    def bulk(cur):
        for i in range(0, 1500, 5):
            cur.execute("INSERT INTO bulk SELECT seq, concat('v', seq), seq / 100 FROM seq_%s_to_%s", (i + 1, i + 5))

    _, events, _ = capture_workload(
        mariadb, tmp_path_factory.mktemp("canal-own") / "out",
        [TABLE, "CREATE TABLE bulk (id int PRIMARY KEY, v varchar(20), amount decimal(10,2))"],
        ROWS + [bulk, "UPDATE bulk SET v = 'seven', amount = amount * 2 WHERE id % 7 = 0",
                "DELETE FROM bulk WHERE id % 11 = 0"])
    return events


def _body(path: Path) -> list[tuple]:
    return [(e.op, e.database, e.table, e.ddl, e.before, e.after, e.quarantine)
            for e in read_changelog(path) if e.op != "source"]


def _killed(brokers: str, topic: str, flavor: str, out: Path, total: int, shares: tuple[float, ...]) -> int:
    """Capture ``topic`` into ``out``, SIGKILLed once each share of the ``total`` events is in
    the change log; then the CLI to the end.  Returns the kills."""
    args = json.dumps({"out": str(out), "brokers": brokers, "topic": topic, "group": f"g-{topic}",
                       "flavor": flavor, "kafka": KAFKA})
    kills = 0
    for share in shares:
        proc = subprocess.Popen([sys.executable, "-c", RUNNER, args], stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            cp = out / "checkpoint.json"
            try:
                if cp.exists() and json.loads(cp.read_text())["seq"] >= share * total:
                    break
            except ValueError:  # replaced while read
                pass
            time.sleep(0.002)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait(30)
        assert proc.returncode in (0, -signal.SIGKILL), proc.stderr.read().decode()
    done = subprocess.run([sys.executable, "-m", "ddlcore.cli", "capture", "canal", "--flavor", flavor,
                           "--brokers", brokers, "--topics", topic, "--group", f"g-{topic}", "--out", str(out),
                           "--until-end", "--no-progress", "--json"], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return kills


def _file_capture(tmp: Path, values: list, flavor: str) -> Path:
    from ddlcore.debezium_capture import DebeziumCapture, DebeziumCaptureOptions
    from ddlcore_mysql.canal import CanalReader

    src = tmp / f"{flavor}.jsonl"
    src.write_text("".join(json.dumps(v) + "\n" for v in values))
    DebeziumCapture(DebeziumCaptureOptions(out=tmp / f"file-{flavor}", from_files=(src,),
                                           connector_impl=CanalReader(flavor), progress=False)).run()
    return tmp / f"file-{flavor}" / "changelog.jsonl"


def _rows(events) -> list[tuple]:
    return sorted((op, repr(b), repr(a)) for op, _, b, a, _ in converted_rows(events))


def test_canal_from_one_partition_killed_and_resumed(workload, kafka_broker, tmp_path):
    msgs = canal_messages(workload)
    topic = f"canal-{uuid.uuid4().hex[:6]}"
    produce(kafka_broker, topic, msgs, create=True)
    reference = _file_capture(tmp_path, msgs, "canal")
    assert _rows(list(read_changelog(reference))) == _rows(workload)  # the encoder and the reader agree
    total = sum(1 for _ in read_changelog(reference))
    assert _killed(kafka_broker, topic, "canal", tmp_path / "k", total, (1 / 3, 2 / 3)) == 2
    got = list(read_changelog(tmp_path / "k" / "changelog.jsonl"))
    assert _body(tmp_path / "k" / "changelog.jsonl") == _body(reference)  # nothing lost, nothing twice
    assert {e.position.split("@")[0] for e in got if e.op != "source"} == {f"{topic}[0]"}
    assert [e.seq for e in got] == list(range(1, len(got) + 1))


def test_ticdc_from_two_partitions_killed_and_resumed(workload, kafka_broker, tmp_path):
    parts = ticdc_messages(workload, partitions=2)
    topic = f"ticdc-{uuid.uuid4().hex[:6]}"
    produce_partitioned(kafka_broker, topic, parts)
    once = [m for p, m in parts if p == 0 or not (m["isDdl"] or m["type"] == "TIDB_WATERMARK")]
    reference = _file_capture(tmp_path, once, "ticdc")
    assert _rows(list(read_changelog(reference))) == _rows(workload)
    total = sum(1 for _ in read_changelog(reference))
    assert _killed(kafka_broker, topic, "ticdc", tmp_path / "k", total, (1 / 2,)) == 1
    assert _body(tmp_path / "k" / "changelog.jsonl") == _body(reference)


def produce_partitioned(brokers: str, topic: str, parts: list[tuple[int, dict]]) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": brokers})
    for f in admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)]).values():
        f.result(30)
    producer = Producer({"bootstrap.servers": brokers, "linger.ms": 5})
    for p, m in parts:
        producer.produce(topic, value=json.dumps(m).encode(), partition=p)
    assert producer.flush(30) == 0


def test_canal_from_two_partitions_is_refused_in_one_line(workload, kafka_broker, tmp_path):
    """Canal sends DDL to partition 0 and may hash rows elsewhere: with no position in the
    messages, two partitions have no order: the capture stops with one line and writes no row."""
    from ddlcore.debezium import DebeziumError
    from ddlcore.debezium_capture import DebeziumCapture, DebeziumCaptureOptions
    from ddlcore_mysql.canal import CanalReader

    topic = f"canal2-{uuid.uuid4().hex[:6]}"
    produce(kafka_broker, topic, canal_messages(workload)[:20], partitions=2, create=True)
    cap = DebeziumCapture(DebeziumCaptureOptions(out=tmp_path / "k", brokers=kafka_broker, topics=(topic,),
                                                 group="g2", until_end=True, connector_impl=CanalReader("canal"),
                                                 progress=False, kafka_config=KAFKA))
    with pytest.raises(DebeziumError) as err:
        cap.run()
    assert "\n" not in str(err.value)
    assert f"messages without a total order from two or more partitions ({topic}[0], {topic}[1])" in str(err.value)
    assert "read one partition" in str(err.value)
    log = tmp_path / "k" / "changelog.jsonl"
    assert not log.exists() or all(e.op == "source" for e in read_changelog(log))


def test_ticdc_rows_wait_for_the_watermark_of_every_partition(kafka_broker, tmp_path):
    """A row of partition 0 above partition 1's watermark is held until partition 1's watermark
    passes it, so a row partition 1 sends late with a lower commitTs is written before it: the
    commitTs order, nothing out of order (without the watermarks the update was written in the
    first batch, before partition 1's row arrived)."""
    import threading
    from pathlib import Path as _P

    from ddlcore.debezium_capture import DebeziumCapture, DebeziumCaptureOptions
    from ddlcore_mysql.canal import CanalReader

    from .canal_encoder import message

    fix = [json.loads(x) for x in (_P(__file__).parent / "fixtures" / "ticdc_employee.jsonl").read_text().splitlines()]
    ddl, c, u, d = fix
    for m, ts in ((ddl, 3000), (c, 3001), (u, 3002), (d, 3003)):
        m["_tidb"] = {"commitTs": ts}

    def mark(ts):
        m = message("TIDB_WATERMARK", None, database="", table="")
        m["_tidb"] = {"watermarkTs": ts}
        return m

    topic = f"ticdc-wm-{uuid.uuid4().hex[:6]}"
    produce_partitioned(kafka_broker, topic, [(0, ddl), (0, u), (0, mark(3002)), (1, ddl), (1, mark(3000))])
    cap = DebeziumCapture(DebeziumCaptureOptions(out=tmp_path / "k", brokers=kafka_broker, topics=(topic,),
                                                 group="g-wm", connector_impl=CanalReader("ticdc"), progress=False,
                                                 poll_timeout=0.1, kafka_config=KAFKA))
    runner = threading.Thread(target=cap.run)
    runner.start()
    log = tmp_path / "k" / "changelog.jsonl"

    def ops() -> list[str]:
        return [e.op for e in read_changelog(log)] if log.exists() else []

    try:
        deadline = time.monotonic() + 60
        while "ddl" not in ops() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ops() == ["source", "ddl"]  # the update (3002) waits for partition 1's watermark
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": kafka_broker})
        for p, m in ((1, c), (1, mark(3002)), (0, d), (0, mark(3003)), (1, mark(3003))):
            producer.produce(topic, value=json.dumps(m).encode(), partition=p)
        assert producer.flush(30) == 0
        while len(ops()) < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        cap.stop()
        runner.join(60)
    evs = list(read_changelog(log))
    assert [(e.op, e.position) for e in evs[1:]] == [("ddl", "3000"), ("c", "3001"), ("u", "3002"), ("d", "3003")]
    assert not any(e.quarantine for e in evs) and cap.stats.out_of_order == 0
