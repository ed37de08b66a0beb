"""Property: the current-state merge's Arrow face (``ddlcore.sinks.arrowmerge``, computed on the
driver) equals its Spark face (``ddlcore.sinks.current._merge``) on random runs of row events
into an existing table: inserts, updates (some changing the primary key, some leaving a column
absent: ``$absent``), deletes, several events per key, now and then a ``TRUNCATE``; a table with
a primary key or without one (identical rows, null values); a column added with a default in
the first run (stored rows hold the server's value).  The same log is run into two outputs, one
merging by each face (``Tuning.merge_on_driver``); after every run both current-state tables
hold the same rows, the same numbers of rows, position deletes and delete files (the same
delete and compaction decisions), and the new data files the same Spark schema (names, types,
nullability, field metadata) in their footers.  (Spark's write of the merge is made one file, as the Arrow
face writes: the compaction decisions depend on the files' sizes.)

Economy: small tables (a few rows, ``ddlcore.compact-deleted-fraction`` unset: 0.3, so both
delete files and compactions happen), the first run's rebuild by the Arrow face in both outputs
(its Spark face: ``test_iceberg_merge.py``), two merges, one example per kind of table, the suite's Spark session;
few examples in the CI profile (``HYPOTHESIS_PROFILE=dev``: more).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from unittest import mock

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from ddlcore.raw import encode_row
from ddlcore.runconfig import Tuning
from ddlcore.spark import pipeline as pl

from .support import event
from .test_iceberg_fold import _catalog

pytest.importorskip("pyiceberg")

EXAMPLES = 15 if os.environ.get("HYPOTHESIS_PROFILE") == "dev" else 1  # (per kind of table)
ROW_METADATA = b"org.apache.spark.sql.parquet.row.metadata"
ABSENT = {"$absent": True}


class Source:
    """The source table as the server holds it (rows as lists in column order), writing the
    events of each change."""

    def __init__(self, keyed: bool):
        self.keyed, self.seq, self.width = keyed, 1, 3
        self.rows: list[list] = []
        self.next_id = 1

    def ev(self, op: str, **k) -> str:
        self.seq += 1
        return event(self.seq, op=op, database="d", **({"table": "t"} if op != "ddl" else {}), **k)

    def image(self, key) -> list:
        """A new row image: values from the event's seq (some null), so that even the simplest
        drawn example has distinct values, nulls and (without a key) identical rows."""
        a = None if self.seq % 4 == 0 else self.seq * 10
        b = None if self.seq % 5 == 0 else f"s{self.seq}"
        return [key, a, b] + [self.seq] * (self.width - 3)

    def insert(self, draw) -> str:
        if self.keyed:
            key, self.next_id = self.next_id, self.next_id + 1
        else:  # a table without a key: identical rows and null values
            key = None if self.seq % 2 else 1
        row = self.image(key)
        if not self.keyed and self.rows and self.seq % 3 == 1:
            row = list(self.rows[self.pick(draw)])
        self.rows.append(row)
        return self.ev("c", after=encode_row(row))

    def update(self, draw, absent: bool | None = None, rekey: bool | None = None) -> str:
        """An update of a row (``absent``: its image leaves ``b`` out, the server keeps the old
        value; ``rekey``: its primary key changes; ``None``: drawn)."""
        i = self.pick(draw)
        before = self.rows[i]
        key = before[0]
        if self.keyed and (draw(st.booleans()) if rekey is None else rekey):
            key, self.next_id = self.next_id, self.next_id + 1
        after = self.image(key)
        self.rows[i] = list(after)
        written = encode_row(after)
        if draw(st.booleans()) if absent is None else absent:
            self.rows[i][2] = before[2]
            written[2] = ABSENT
        return self.ev("u", before=encode_row(before), after=written)

    def delete(self, draw) -> str:
        return self.ev("d", before=encode_row(self.rows.pop(self.pick(draw))))

    def pick(self, draw) -> int:
        """A row's index (shifted by the seq: the simplest draws pick different rows)."""
        return (draw(st.integers(0, len(self.rows) - 1)) + 3 * self.seq) % len(self.rows)

    def step(self, draw, kind: str) -> str:
        if not self.rows or kind == "c":
            return self.insert(draw)
        if kind == "t":
            self.rows.clear()
            return self.ev("t")
        if kind == "d":
            return self.delete(draw)
        return self.update(draw, *{"absent": (True, False), "rekey": (False, True), "u": (None, None)}[kind])


#: the kinds of event every merge run has (in a drawn order), and those drawn besides
EVERY_RUN = ["c", "absent", "rekey", "d"]
DRAWN = ["c", "u", "u", "d", "absent", "t"]


@st.composite
def runs(draw, keyed: bool) -> list[list[str]]:
    """The runs' events: the first creates the table (and may add a column with a default), the
    two later ones only change rows."""
    src = Source(keyed)
    key = " PRIMARY KEY" if src.keyed else ""
    first = [src.ev("ddl", ddl=f"CREATE TABLE t (id INT{key}, a INT, b VARCHAR(10))")]
    first += [src.insert(draw) for _ in range(draw(st.integers(6, 10)))]
    if draw(st.booleans()):
        first.append(src.ev("ddl", ddl="ALTER TABLE t ADD COLUMN c INT DEFAULT 5"))
        src.width = 4
        for row in src.rows:
            row.append(5)
    out = [first]
    for _ in range(2):
        kinds = draw(st.permutations(EVERY_RUN + draw(st.lists(st.sampled_from(DRAWN), max_size=6))))
        out.append([src.step(draw, kind) for kind in kinds])
    return out


def _rows(table) -> list[tuple]:
    return sorted((tuple(r.items()) for r in table.scan().to_arrow().to_pylist()), key=repr)


def _footer(path: str) -> list[tuple]:
    """A data file's Spark schema (its footer): each field's name, type, nullability and metadata."""
    import pyarrow.parquet as pq

    struct = json.loads(pq.read_metadata(path.removeprefix("file://")).metadata[ROW_METADATA])
    return [(f["name"], json.dumps(f["type"], sort_keys=True), f["nullable"], json.dumps(f["metadata"], sort_keys=True))
            for f in struct["fields"]]


def _counts(table) -> tuple:
    s = table.current_snapshot().summary
    return tuple(s.get(k) for k in ("total-records", "total-position-deletes", "total-delete-files"))


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
@pytest.mark.parametrize("keyed", [True, False], ids=["primary-key", "no-key"])
def test_arrow_merge_equals_spark_merge(spark, tmp_path_factory, monkeypatch, keyed, data):
    from ddlcore.sinks import arrowmerge, current

    case = data.draw(runs(keyed))
    merges = mock.Mock(wraps=arrowmerge.merge_current)
    monkeypatch.setattr(arrowmerge, "merge_current", merges)
    # (Spark writes the merge's rows in one file, as the Arrow face does: the files a later run
    # compacts, by their deleted fraction, are then the same; and only in the Spark output)
    write, spark_writes = current._write, []

    def one_file(fs, frame, dest):
        spark_writes.append(fs.str(dest))
        return write(fs, frame.coalesce(1), dest)

    monkeypatch.setattr(current, "_write", one_file)
    tmp = tmp_path_factory.mktemp("merge")
    log = tmp / "log.jsonl"
    faces = {"arrow": Tuning(driver_workers=1), "spark": Tuning(driver_workers=1, merge_on_driver=False)}
    seen: dict[str, set] = {face: set() for face in faces}
    written: list[str] = []
    for n, run in enumerate(case):
        written += run
        log.write_text("\n".join(written) + "\n")
        script = "\n".join(written)
        tables, new = {}, {}
        for face, tuning in faces.items():
            res = pl.run_pipeline(log, Path(tmp / face), spark=spark, output_format="iceberg", dialect="mysql",
                                  tuning=tuning)
            assert res.quarantined == 0, res.quarantine_reasons
            tables[face] = _catalog(tmp / face).load_table(("d", "t"))
            files = {t.file.file_path for t in tables[face].scan().plan_files()}
            new[face], seen[face] = files - seen[face], files
        assert merges.call_count == n, script
        # (no Arrow face fell back to Spark: ``Unsure``)
        assert len(spark_writes) == n and all("/spark/" in d for d in spark_writes), (spark_writes, script)
        assert _rows(tables["arrow"]) == _rows(tables["spark"]), (n, script)
        assert _counts(tables["arrow"]) == _counts(tables["spark"]), (n, script)
        footers = {face: {json.dumps(_footer(p)) for p in new[face]} for face in faces}
        assert footers["arrow"] == footers["spark"], (n, script)
