"""``ddlcore capture debezium --brokers``: Debezium's documented messages produced to a real
Kafka-protocol broker (Tansu, tests/tidb/conftest.py), read by a consumer group over two topics
and several partitions: the same change log as from the files, offsets committed after it is
durable, a second run reads only what is new."""

from __future__ import annotations

import json
from pathlib import Path

from ddlcore.debezium_capture import DebeziumCapture, DebeziumCaptureOptions

FIX = Path(__file__).parent / "fixtures"


def produce(brokers: str, topic: str, values: list, partitions: int = 1, create: bool = False) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    if create:
        admin = AdminClient({"bootstrap.servers": brokers})
        for f in admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)]).values():
            f.result(30)
    producer = Producer({"bootstrap.servers": brokers, "linger.ms": 5})
    for i, v in enumerate(values):
        producer.produce(topic, value=None if v is None else json.dumps(v).encode(), partition=i % partitions)
    assert producer.flush(30) == 0


def run(out: Path, brokers: str, **kw) -> tuple[list[dict], object]:
    # a short session: a broker that misses the first consumer's leave makes the second wait for it
    conf = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 500}
    stats = DebeziumCapture(DebeziumCaptureOptions(out=out, brokers=brokers, group="ddlcore-test", until_end=True,
                                                   history=FIX / "mysql_history.jsonl", progress=False,
                                                   kafka_config=conf, **kw)).run()
    return [json.loads(x) for x in (out / "changelog.jsonl").read_text().splitlines()], stats


def body(events: list[dict]) -> list[tuple]:
    return [(e["seq"], e["op"], e["position"], e.get("before"), e.get("after"), e.get("ddl")) for e in events
            if e["op"] != "source"]


def test_kafka_two_topics_two_partitions_equal_the_file_capture_and_resume(kafka_broker, tmp_path):
    docs = [None if x == "null" else json.loads(x) for x in (FIX / "mysql_docs_events.jsonl").read_text().splitlines()]
    alter = json.loads((FIX / "mysql_docs_schema_change.jsonl").read_text())
    produce(kafka_broker, "dbz.inventory.customers", docs, partitions=2, create=True)
    produce(kafka_broker, "dbz", [alter], create=True)
    (tmp_path / "all.jsonl").write_text("".join(json.dumps(v) + "\n" for v in docs + [alter]))
    file_events = [json.loads(x) for x in _file_capture(tmp_path).read_text().splitlines()]
    events, stats = run(tmp_path / "k", kafka_broker, topic_pattern=r"dbz(\..*)?$")
    assert body(events) == body(file_events)
    assert [e["op"] for e in events][-4:] == ["c", "u", "ddl", "d"]  # the ALTER at 570 between 484 and 805
    assert events[-1]["quarantine"].startswith("cannot decode: drift: the message has columns [id, first_name, "
                                               "last_name, email], the history [id, first_name, middle_name, ")
    assert stats.messages == len(docs) + 1 + 3  # rows, tombstone, schema change, 3 history records
    # a new row arrives; the group's committed offsets make the next run read only it
    new = dict(docs[0], source={**docs[0]["source"], "pos": 900})
    new["after"] = dict(new["after"], id=1005, middle_name="Q")
    produce(kafka_broker, "dbz.inventory.customers", [new])
    again, stats2 = run(tmp_path / "k", kafka_broker, topic_pattern=r"dbz(\..*)?$")
    assert again[:len(events)] == events and len(again) == len(events) + 1
    assert again[-1]["after"][0] == 1005 and again[-1]["after"][2] == "Q"
    assert stats2.messages == 1 + 3 and stats2.duplicates == 3  # the history's records were written before


def _file_capture(tmp_path: Path) -> Path:
    DebeziumCapture(DebeziumCaptureOptions(out=tmp_path / "f", from_files=(tmp_path / "all.jsonl",),
                                           history=FIX / "mysql_history.jsonl", progress=False)).run()
    return tmp_path / "f" / "changelog.jsonl"
