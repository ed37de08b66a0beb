"""``ddlcore capture debezium --from-file`` throughput against plain ``json.loads`` of the same
file, in one run: events per second of each and their ratio (target: at least 0.3).

    python benchmarks/debezium.py                 # 50,000 row messages
    python benchmarks/debezium.py --rows 200000

The file holds Debezium MySQL connector messages without schemas (``create`` events of one
table with an int key, a varchar, a DECIMAL(12,2) as precise base64 bytes, a DATETIME(6) as
microseconds, a TIMESTAMP as a ZonedTimestamp string, an ENUM label and a JSON document), the
history one ``CREATE TABLE``.  The capture's time includes everything it does: reading, the
order, decoding every value by the column's type, encoding the change log, writing and
fsync'ing it and the checkpoints.  The baseline is the standard library's ``json.loads`` of
every line of the same file (read once, warm), the least a Python reader of these messages
pays.  The capture reads and writes JSON with msgspec (``ddlcore.jsontext``), so the ratio
against msgspec's own decoder of the same lines is printed too: what the capture costs beyond
decoding its input with the fastest decoder it has.  The last line is the bound the
standard library alone would set: ``json.loads`` plus encoding the change log's events with
``json`` (no decoding or ordering).  Each figure is given in wall time and in this process's
CPU time (steadier on a shared machine).  Both sides are warm: a capture of a few messages
into another directory runs first, so the one-off start (loading the plugins and the DDL
parser, which takes seconds where bytecode is not cached) is not counted.
"""

from __future__ import annotations

import argparse
import base64
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from ddlcore.debezium_capture import DebeziumCapture, DebeziumCaptureOptions  # noqa: E402

DDL = ("CREATE TABLE orders (id int primary key, name varchar(40), amount decimal(12,2), "
       "at datetime(6), changed timestamp(3), state enum('new','paid','sent'), doc json)")


def write_stream(d: Path, rows: int) -> tuple[Path, Path]:
    d.mkdir(parents=True, exist_ok=True)
    history = d / "history.jsonl"
    history.write_text(json.dumps({"source": {"server": "bench"}, "position": {"file": "b.000001", "pos": 4},
                                   "databaseName": "shop", "ddl": DDL, "tableChanges": []}) + "\n")
    stream = d / "stream.jsonl"
    with open(stream, "w") as fh:
        for i in range(rows):
            cents = (i * 7919) % 10**9
            after = {"id": i, "name": f"customer {i}", "amount": base64.b64encode(cents.to_bytes(5, "big")).decode(),
                     "at": 1_700_000_000_000_000 + i * 1_000_001, "changed": "2024-06-01T10:00:00.123Z",
                     "state": ("new", "paid", "sent")[i % 3], "doc": '{"k": %d}' % i}
            fh.write(json.dumps({"op": "c", "ts_ms": 1_700_000_000_000, "before": None, "after": after,
                                 "source": {"connector": "mysql", "name": "bench", "db": "shop", "table": "orders",
                                            "file": "b.000001", "pos": 100 + i * 300, "row": 0}}) + "\n")
    return history, stream


def capture(d: Path, stream: Path, history: Path) -> Any:
    return DebeziumCapture(DebeziumCaptureOptions(out=d / "out", from_files=(stream,), history=history,
                                                  progress=False, checkpoint_interval=1.0)).run()


class Clock:
    """Wall and process CPU seconds of a block (``with Clock() as c: ...``; ``c.wall``,
    ``c.cpu``): on a shared machine the CPU time of this process is the steadier measure."""

    def __enter__(self) -> "Clock":
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall, self.cpu = time.perf_counter() - self._wall, time.process_time() - self._cpu


def encode_clock(changelog: Path) -> Clock:
    """The time to encode the change log's events as the capture writes them (compact JSON,
    UTF-8): with ``json.loads`` of the input, what any capture pays before doing anything."""
    events = [json.loads(line) for line in changelog.read_text().splitlines()]
    encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    with Clock() as c:
        for ev in events:
            encoder.encode(ev).encode("utf-8")
    return c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=50_000)
    args = ap.parse_args()
    d = Path(tempfile.mkdtemp(prefix="ddlcore-bench-debezium-"))
    try:
        history, stream = write_stream(d, args.rows)
        warm_history, warm_stream = write_stream(d / "warm", 10)
        capture(d / "warm", warm_stream, warm_history)
        with open(stream, "rb") as fh:
            data = fh.readlines()
        with Clock() as base:
            for line in data:
                json.loads(line)
        decode = msgspec.json.Decoder().decode
        with Clock() as fast:
            for line in data:
                decode(line)
        with Clock() as took:
            stats = capture(d, stream, history)
        assert stats.ops["c"] == args.rows and stats.quarantined == 0, stats.to_json()
        enc = encode_clock(d / "out" / "changelog.jsonl")
        n = args.rows
        print(f"{n:,} messages ({stream.stat().st_size / 1e6:.1f} MB)      wall        CPU")
        print(f"json.loads events/s:          {n / base.wall:>10,.0f} {n / base.cpu:>10,.0f}")
        print(f"capture debezium --from-file: {n / took.wall:>10,.0f} {n / took.cpu:>10,.0f}")
        print(f"ratio capture / json.loads:   {base.wall / took.wall:>10.3f} {base.cpu / took.cpu:>10.3f}"
              f"  (target >= 0.3)")
        print(f"msgspec decode events/s:      {n / fast.wall:>10,.0f} {n / fast.cpu:>10,.0f}")
        print(f"ratio capture / msgspec:      {fast.wall / took.wall:>10.3f} {fast.cpu / took.cpu:>10.3f}")
        print(f"bound: loads / (loads + encoding the change log): "
              f"{base.wall / (base.wall + enc.wall):.3f} {base.cpu / (base.cpu + enc.cpu):.3f}")
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
