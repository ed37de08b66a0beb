"""``ddlcore capture canal``: TiCDC's own canal-json test messages, Canal flat messages as Canal's
code builds them (fixtures/README.md), drift, duplicates, and the MariaDB workload of the
Debezium tests re-encoded as Canal messages equal to ddlcore's own capture."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

from ddlcore.changelog import read_changelog
from ddlcore.debezium_capture import DebeziumCapture, DebeziumCaptureOptions
from ddlcore_mysql.canal import CanalReader

from tests.servers.fixtures import mariadb  # noqa: F401

from .canal_encoder import canal_messages, message
from .test_debezium_mariadb import converted_rows, own  # noqa: F401

FIX = Path(__file__).parent / "fixtures"


def capture(out: Path, *files: Path, flavor: str = "canal", zone=None) -> tuple[list[dict], object]:
    stats = DebeziumCapture(DebeziumCaptureOptions(out=out, from_files=files, connector_impl=CanalReader(flavor, zone),
                                                   progress=False)).run()
    return [json.loads(x) for x in (out / "changelog.jsonl").read_text().splitlines()], stats


def lines(path: Path, *values) -> Path:
    path.write_text("".join(json.dumps(v) + "\n" for v in values))
    return path


def test_ticdc_published_messages(tmp_path):
    evs, stats = capture(tmp_path / "o", FIX / "ticdc_employee.jsonl", flavor="ticdc")
    assert [e["op"] for e in evs] == ["source", "ddl", "c", "u", "d"]
    assert evs[0]["source"]["flavor"] == "tidb" and evs[0]["source"]["capture"]["tool"] == "ddlcore capture canal"
    # the DDL's column order (id, LastName, FirstName, HireDate, OfficeLocation), not the message's
    assert evs[2]["after"] == [101, "Smith", "Bob", {"$date": "2014-06-04"}, "New York"]
    assert evs[3]["before"] == evs[2]["after"]  # TiCDC's old is the whole before image
    assert evs[3]["after"] == [101, "Smith", "Bob", {"$date": "2015-10-08"}, "Los Angeles"]
    assert evs[4]["before"] == evs[3]["after"] and stats.quarantined == 0


def canal_msg(kind: str, data, old=None, mysql_type=None, sql="", ddl=False, table="t"):
    return message(kind, data, old, mysql_type, sql, ddl, table=table, pk=["id"])


TYPES = {"id": "int(11)", "e": "enum('a','b','c')", "b": "varbinary(4)", "bits": "bit(5)", "at": "timestamp",
         "price": "decimal(10,2)", "note": "varchar(10)"}
DDL = ("CREATE TABLE t (id int primary key, e enum('a','b','c'), b varbinary(4), bits bit(5), at timestamp NULL, "
       "price decimal(10,2), note varchar(10))")


def test_canal_flat_messages_old_holds_the_changed_columns(tmp_path):
    row = {"id": "1", "e": "2", "b": "\u0000\u00ff", "bits": "5", "at": "2024-06-01 12:00:00", "price": "19.90",
           "note": "x"}
    src = lines(tmp_path / "in.jsonl",
                canal_msg("CREATE", None, sql=DDL, ddl=True),
                canal_msg("INSERT", [row], mysql_type=TYPES),
                canal_msg("UPDATE", [{**row, "note": "y", "e": "3"}], old=[{"note": "x", "e": "2"}], mysql_type=TYPES),
                None,  # a tombstone
                canal_msg("DELETE", [{**row, "note": "y", "e": "3"}], mysql_type=TYPES))
    evs, stats = capture(tmp_path / "o", src, zone=dt.timezone(dt.timedelta(hours=2)))
    c, u, d = evs[2:]
    assert c["after"] == [1, 2, {"$b64": "AP8="}, 5, {"$datetime": "2024-06-01 10:00:00"}, {"$dec": "19.90"}, "x"]
    assert u["before"] == c["after"]  # data overlaid with old
    assert u["after"][1] == 3 and u["after"][6] == "y"
    assert d["before"] == u["after"] and stats.skipped == 1
    again, stats2 = capture(tmp_path / "o", src, zone=dt.timezone(dt.timedelta(hours=2)))
    assert again == evs and stats2.duplicates == 4  # the file read again: nothing written twice


def test_mysql_type_drift_quarantines_the_row(tmp_path):
    row = {"id": "1", "e": "2", "b": "", "bits": "0", "at": None, "price": "1.00", "note": "x"}
    src = lines(tmp_path / "in.jsonl", canal_msg("CREATE", None, sql=DDL, ddl=True),
                canal_msg("INSERT", [row], mysql_type={**TYPES, "price": "varchar(10)"}))
    evs, _ = capture(tmp_path / "o", src)
    assert evs[-1]["quarantine"] == ("cannot decode: drift: column price is varchar(10) in the message, "
                                     "decimal(10,2) in the history")


def test_ticdc_commit_ts_orders_and_drops_redeliveries_and_watermarks(tmp_path):
    msgs = [json.loads(x) for x in (FIX / "ticdc_employee.jsonl").read_text().splitlines()]
    for i, m in enumerate(msgs):
        m["_tidb"] = {"commitTs": 1000 + i}
    mark = {"id": 0, "database": "", "table": "", "pkNames": None, "isDdl": False, "type": "TIDB_WATERMARK",
            "es": 1, "ts": 1, "sql": "", "sqlType": None, "mysqlType": None, "data": None, "old": None,
            "_tidb": {"watermarkTs": 1003}}
    src = lines(tmp_path / "in.jsonl", msgs[0], msgs[2], msgs[1], mark, msgs[1], msgs[3])  # late, redelivered
    evs, stats = capture(tmp_path / "o", src, flavor="ticdc")
    assert [(e["op"], e["position"]) for e in evs[1:]] == [("ddl", "1000"), ("c", "1001"), ("u", "1002"),
                                                            ("d", "1003")]
    assert stats.duplicates == 1 and stats.skipped == 1


def test_cli_reads_files(tmp_path):
    cmd = [sys.executable, "-m", "ddlcore.cli", "capture", "canal", "--out", str(tmp_path / "k"), "--no-progress"]
    ok = subprocess.run(cmd + ["--from-file", str(FIX / "ticdc_employee.jsonl"), "--flavor", "ticdc", "--json"],
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["ops"] == {"source": 1, "ddl": 1, "c": 1, "u": 1, "d": 1}


# ------------------------------------------------------------------ MariaDB end to end


def canal_stream(events_, tmp: Path) -> Path:
    path = tmp / "canal.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in canal_messages(events_)))
    return path


def test_mariadb_workload_as_canal_equals_the_own_capture(own, tmp_path):  # noqa: F811
    _, _, evs, _ = own
    got, stats = capture(tmp_path / "c", canal_stream(evs, tmp_path))
    assert stats.quarantined == 0, [e.get("quarantine") for e in got]
    mine = converted_rows(list(read_changelog(tmp_path / "c" / "changelog.jsonl")))
    want = converted_rows(evs)
    assert [(op, b, a) for op, _, b, a, _ in mine] == [(op, b, a) for op, _, b, a, _ in want]
    assert len(mine) == 5


def test_ticdc_from_kafka_equals_the_file_capture(kafka_broker, tmp_path):
    from .test_debezium_kafka import produce

    msgs = [json.loads(x) for x in (FIX / "ticdc_employee.jsonl").read_text().splitlines()]
    for i, m in enumerate(msgs):
        m["_tidb"] = {"commitTs": 2000 + i}
    # two partitions: commitTs orders them (with a redelivery)
    produce(kafka_broker, "ticdc-employee", msgs + [msgs[2]], partitions=2, create=True)
    lines(tmp_path / "all.jsonl", *msgs)
    from_file, _ = capture(tmp_path / "f", tmp_path / "all.jsonl", flavor="ticdc")
    stats = DebeziumCapture(DebeziumCaptureOptions(
        out=tmp_path / "k", brokers=kafka_broker, topics=("ticdc-employee",), group="ticdc-test", until_end=True,
        connector_impl=CanalReader("ticdc"), progress=False,
        kafka_config={"session.timeout.ms": 6000, "heartbeat.interval.ms": 500})).run()
    got = [json.loads(x) for x in (tmp_path / "k" / "changelog.jsonl").read_text().splitlines()]
    strip = lambda evs: [{k: v for k, v in e.items() if k not in ("source", "ts")} for e in evs]  # noqa: E731
    assert strip(got) == strip(from_file) and stats.duplicates == 1


def test_ticdc_without_commit_ts_from_two_partitions_is_refused(kafka_broker, tmp_path):
    """Without enable-tidb-extension the messages are ordered by arrival, which two partitions do
    not give: the capture stops naming both partitions, and writes no row."""
    import pytest

    from ddlcore.debezium import DebeziumError

    from .test_debezium_kafka import produce

    msgs = [json.loads(x) for x in (FIX / "ticdc_employee.jsonl").read_text().splitlines()]
    assert all("_tidb" not in m for m in msgs)
    produce(kafka_broker, "ticdc-no-ts", msgs, partitions=2, create=True)
    capture = DebeziumCapture(DebeziumCaptureOptions(
        out=tmp_path / "k", brokers=kafka_broker, topics=("ticdc-no-ts",), group="ticdc-no-ts", until_end=True,
        connector_impl=CanalReader("ticdc"), progress=False,
        kafka_config={"session.timeout.ms": 6000, "heartbeat.interval.ms": 500}))
    with pytest.raises(DebeziumError, match=r"ticdc-no-ts\[\d\]@\d+: messages without a total order from two or "
                                            r"more partitions \(ticdc-no-ts\[0\], ticdc-no-ts\[1\]\).*"
                                            r"enable-tidb-extension"):
        capture.run()
    log = tmp_path / "k" / "changelog.jsonl"
    assert not log.exists() or all(json.loads(x)["op"] in ("source",) for x in log.read_text().splitlines())
