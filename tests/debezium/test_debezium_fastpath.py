"""The fast paths of ``ddlcore capture debezium`` write the bytes the plain paths write: msgspec
reading and writing (``ddlcore.jsontext``) against the standard library's ``json``, and the
MySQL connector's encoded fast decoders (``encode_row``) against ``decode_row`` then
``ddlcore.raw.encode_row`` — on Debezium's and TiCDC's published messages (fixtures) and on
rows of every common type with awkward values."""

from __future__ import annotations

import base64
import dataclasses
import json
import re
import types
from pathlib import Path

import pytest
from hypothesis import given, settings

from ddlcore import debezium_capture, jsontext, raw
from ddlcore.debezium import DebeziumSettings
from ddlcore.debezium_capture import DebeziumCapture, DebeziumCaptureOptions
from ddlcore_mysql.canal import CanalReader
from ddlcore_mysql.debezium_mysql import MySqlConnector

from .test_debezium_values import all_settings, cases, col
from .encoder import encode

FIX = Path(__file__).parent / "fixtures"


class _DecodeOnly(MySqlConnector):
    """The MySQL connector without its encoded fast path (the capture then encodes ``decode_row``)."""

    row_encoder = None
    encode_row = None


def _refuse_decode(data):
    raise ValueError("the standard library's json only")


def _refuse_encode(obj):
    raise TypeError("the standard library's json only")


def _plain_json(monkeypatch) -> None:
    """Every message read and every event written by the standard library's ``json``."""
    monkeypatch.setattr(jsontext, "_decode", _refuse_decode)
    monkeypatch.setattr(jsontext, "_encode", _refuse_encode)


def _log(out: Path, monkeypatch, *, plain: bool, files: tuple[Path, ...], **kw) -> bytes:
    if callable(kw.get("connector_impl")):
        kw = {**kw, "connector_impl": kw["connector_impl"]()}
    with monkeypatch.context() as m:
        m.setattr(debezium_capture, "uuid", types.SimpleNamespace(uuid4=lambda: "epoch"))
        if plain:
            _plain_json(m)
            if kw.get("connector") == "mysql":
                kw = {**kw, "connector": None, "connector_impl": _DecodeOnly()}
        DebeziumCapture(DebeziumCaptureOptions(out=out, from_files=files, progress=False, **kw)).run()
    return (out / "changelog.jsonl").read_bytes()


#: table ``t``: columns with fast decoders (the encoded fast plan); ``u``: the others
_TABLES = ("CREATE TABLE t (id int primary key, name varchar(40), amount decimal(30,4), at datetime(6), "
           "changed timestamp(3), state enum('new','paid'), doc json)",
           "CREATE TABLE u (id int primary key, score double, ratio float, big bigint unsigned, data varbinary(8))")


def _rows_stream(path: Path) -> Path:
    """Rows of every common type: text that reads as a number or a tag, control characters and
    astral text, floats that ``json`` and msgspec write differently, decimals, datetimes."""
    with open(path, "w") as fh:
        for n, ddl in enumerate(_TABLES):
            fh.write(json.dumps({"source": {"server": "t"}, "position": {"file": "b.000001", "pos": 4 + n},
                                 "databaseName": "shop", "tableChanges": [], "ddl": ddl}) + "\n")
    texts = ["12", "-1.5e3", '{"$dec": "1"}', "tab\tnew\nline\x01", "\u00e9\u2028\U0001F600", "", "plain"]
    floats = [1e16, 0.1, 1e-07, -0.0, 123456789.125, 5e-324, 1.7976931348623157e308]
    msgs = []
    for i in range(len(texts) * 2):
        cents = (-1) ** i * (i * 10**20 + 7)
        t = {"id": i, "name": texts[i % len(texts)],
             "amount": base64.b64encode(cents.to_bytes(16, "big", signed=True)).decode(),
             "at": 1_700_000_000_000_000 + i * 1_000_001, "changed": "2024-06-01T10:00:00.1%02dZ" % i,
             "state": ("new", "paid")[i % 2], "doc": '{"k": %d}' % i}
        u = {"id": i, "score": floats[i % len(floats)], "ratio": 0.5, "big": -1 - i,
             "data": base64.b64encode(bytes([i, 0, 255])).decode()}
        for n, (table, after) in enumerate((("t", t), ("u", u))):
            msgs.append({"op": "c" if i % 3 else "u", "ts_ms": 1_700_000_000_000 + i,
                         "before": after if i % 3 == 0 else None, "after": after,
                         "source": {"connector": "mysql", "name": "t", "db": "shop", "table": table,
                                    "file": "b.000001", "pos": 100 + i * 300 + n, "row": i % 2,
                                    "gtid": f"g-{i}" if i % 4 else None}})
    stream = path.with_name("rows.jsonl")
    stream.write_text("".join(json.dumps(m, ensure_ascii=i % 2 == 0) + "\n" for i, m in enumerate(msgs)) + "\n")
    return stream


@pytest.mark.parametrize("files, kw", [
    (("mysql_docs_events.jsonl",), {"history": FIX / "mysql_history.jsonl"}),
    (("mysql_docs_schema_change.jsonl", "mysql_docs_events.jsonl"), {"history": FIX / "mysql_history.jsonl"}),
    (("mysql_tutorial_with_schema.jsonl",), {"connector": "mysql", "history": FIX / "mysql_history.jsonl"}),
    (("ticdc_employee.jsonl",), {"connector_impl": lambda: CanalReader("ticdc")}),  # a reader per run
])
def test_fixtures_give_the_same_change_log_bytes_as_the_plain_paths(tmp_path, monkeypatch, files, kw):
    paths = tuple(FIX / f for f in files)
    fast = _log(tmp_path / "fast", monkeypatch, plain=False, files=paths, **kw)
    plain = _log(tmp_path / "plain", monkeypatch, plain=True, files=paths, **kw)
    assert fast == plain and fast.count(b"\n") >= 4


@pytest.mark.parametrize("setting", [{}, {"decimal.handling.mode": "string"}, {"time.precision.mode": "connect"},
                                     {"binary.handling.mode": "hex"}, {"bigint.unsigned.handling.mode": "precise"}])
def test_rows_of_every_common_type_give_the_same_bytes_as_the_plain_paths(tmp_path, monkeypatch, setting):
    history = tmp_path / "history.jsonl"
    stream = _rows_stream(history)
    kw = {"history": history, "connector": "mysql", "settings": DebeziumSettings.of(setting.items())}
    fast = _log(tmp_path / "fast", monkeypatch, plain=False, files=(stream,), **kw)
    plain = _log(tmp_path / "plain", monkeypatch, plain=True, files=(stream,), **kw)
    assert fast == plain
    events = [json.loads(x) for x in fast.splitlines()]
    assert sum(e["op"] in ("c", "u") for e in events) == 28
    assert b'{"$s":"12"}' in fast and b"1e+16" in fast  # ambiguous text tagged; floats as json writes them


@settings(max_examples=300, deadline=None)
@given(cases(), all_settings)
def test_encoded_fast_plan_is_the_encoding_of_the_decoded_row(case, s):
    """``encode_row`` (the encoded fast decoders when no value of the row can be lossy) gives
    ``raw.encode_row`` of ``decode_row``'s values, the same losses and the same errors."""
    c, value = case
    key = dataclasses.replace(col("int", "int(11)", nullable=False), name="k", ordinal_position=2)
    table = types.SimpleNamespace(columns=[c, key])
    cfg = DebeziumSettings.of(s.items())
    values = {"c": encode(value, c, s), "k": 7}
    connector = MySqlConnector()
    try:
        decoded, losses = connector.decode_row(table, values, {}, cfg)
    except ValueError as exc:
        with pytest.raises(ValueError, match=re.escape(str(exc))):
            connector.encode_row(table, values, {}, cfg)
        return
    for _ in range(2):  # the first builds the plan, the second takes the per-table shortcut
        encoded, elosses = connector.encode_row(table, values, {}, cfg)
        assert encoded == raw.encode_row(decoded)
        assert [(n, x.kind) for n, x in elosses] == [(n, x.kind) for n, x in losses]
