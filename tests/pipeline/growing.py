"""A capture's output directory that grows while runs read it, as ``ddlcore capture`` keeps it:
``changelog.jsonl`` appended to (whole lines, flushed and fsync'ed) and ``checkpoint.json``
(``seq``, ``changelog_bytes``, phase ``streaming``) replaced atomically after the lines it
covers; and what a reader of the pipeline's output sees, to compare two outputs."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq


class CaptureDir:
    """``directory`` with a table ``shop.t (id int, note varchar(20))`` created by its first
    events; ``grow(n)`` appends ``n`` inserts (with an ``ALTER TABLE`` every ``alter_every``
    events) and checkpoints them."""

    def __init__(self, directory: Path, alter_every: int = 0):
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.log = directory / "changelog.jsonl"
        self.seq = 0
        self.columns = 2
        self.alter_every = alter_every
        self.lock = threading.Lock()
        self._append([self._event(op="ddl", database="shop", ddl="CREATE DATABASE shop"),
                      self._event(op="ddl", database="shop",
                                  ddl="CREATE TABLE t (id int NOT NULL PRIMARY KEY, note varchar(20))")])

    def _event(self, **k) -> dict:
        self.seq += 1
        return {"seq": self.seq, "position": f"mariadb-bin.000001:{100 * self.seq}",
                "ts": 1_700_000_000_000 + self.seq, **k}

    def _row(self) -> dict:
        after = [self.seq + 1, f"n{self.seq + 1}"] + [self.seq + 1] * (self.columns - 2)
        return self._event(op="c", database="shop", table="t", after=after)

    def _append(self, events: list[dict]) -> None:
        data = "".join(json.dumps(e) + "\n" for e in events).encode()
        with open(self.log, "ab") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
            size = fh.tell()
        tmp = self.dir / "checkpoint.json.tmp"
        tmp.write_text(json.dumps({"seq": self.seq, "changelog_bytes": size, "phase": "streaming"}))
        os.replace(tmp, self.dir / "checkpoint.json")

    def grow(self, n: int) -> None:
        with self.lock:
            events = []
            for _ in range(n):
                if self.alter_every and self.seq % self.alter_every == 0:
                    self.columns += 1
                    events.append(self._event(op="ddl", database="shop",
                                              ddl=f"ALTER TABLE t ADD COLUMN c{self.columns} int"))
                events.append(self._row())
            self._append(events)

    def grow_for(self, seconds: float, every: float = 0.2, n: int = 5,
                 stop: threading.Event | None = None) -> threading.Thread:
        """A thread appending ``n`` events every ``every`` seconds for ``seconds`` (or until
        ``stop`` is set)."""
        stop = stop or threading.Event()

        def work() -> None:
            end = time.monotonic() + seconds
            while time.monotonic() < end and not stop.is_set():
                self.grow(n)
                stop.wait(every)
        thread = threading.Thread(target=work, daemon=True)
        thread.start()
        return thread


def rows_by_version(out: Path) -> dict[str, list[str]]:
    """Every row of every version directory of ``out`` (canonical JSON, sorted), read with pyarrow."""
    found: dict[str, list[str]] = {}
    for d in sorted(d for d in out.glob("*/*/schema_version=*") if not d.parts[-3].startswith("_")):
        rows = []
        for f in sorted(d.glob("*.parquet")):
            rows += [json.dumps(r, sort_keys=True, default=repr) for r in pq.read_table(f).to_pylist()]
        found[str(d.relative_to(out))] = sorted(rows)
    return found


def seqs(out: Path) -> list[int]:
    """The ``_seq`` of every row written to ``out``, sorted (a row written twice: twice)."""
    return sorted(json.loads(r)["_seq"] for rows in rows_by_version(out).values() for r in rows)


def checkpoint(out: Path) -> int | None:
    path = out / "_state" / "checkpoint.json"
    return json.loads(path.read_text())["last_seq"] if path.exists() else None
