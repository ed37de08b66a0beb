"""Incremental runs (issue 12): a run on a grown change-log file reads only the bytes past
what the committed runs read (``_state/inputs.json``: offset and fingerprint per file), skips
the DDL pass when those bytes hold no DDL, and writes only the schema files that changed —
and its output is what a run over the whole log writes.  A file rotated, replaced or
rewritten in place, or compressed, is read whole as before; the guarantees of
docs/pipeline.md (a torn line, a line without seq, another log) hold on both paths."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark")

from ddlcore.runconfig import Tuning  # noqa: E402
from ddlcore.spark import pipeline as pl  # noqa: E402
from ddlcore.spark import readlog  # noqa: E402
from ddlcore.spark import sessionconf  # noqa: E402

from .support import Log, base, source  # noqa: E402
from .support import quarantine_by_seq as quarantine  # noqa: E402


#: these tests are about how the Spark path reads the tails (``readlog.read_events``): small increments
#: go there, not to the driver-side path (tests/pipeline/test_small_increment.py checks that
#: both write the same)
SPARK_PATH = Tuning(driver_increment_max_bytes=-1)


def run(*args, **kw):
    """``run_pipeline`` with ``SPARK_PATH``."""
    return pl.run_pipeline(*args, **{"tuning": SPARK_PATH, "dialect": "mysql", **kw})


class Reads:
    """Records what each ``readlog.read_events`` call of a run was given: ``(history_only, JSON
    Lines files, tail copies)``."""

    def __init__(self, monkeypatch):
        self.calls: list[tuple[bool, list[str], int]] = []
        self.settings: list[dict[str, str]] = []  # what the session's settings were while reading
        real = readlog.read_events

        def spy(spark, inputs, **k):
            self.calls.append((k.get("history_only", False), list(inputs[0]), len(getattr(inputs, "tails", ()))))
            self.settings.append({key: spark.conf.get(key, None) for key in sessionconf.INTERPRETED})
            return real(spark, inputs, **k)

        monkeypatch.setattr(readlog, "read_events", spy)

    def clear(self) -> None:
        self.calls.clear()
        self.settings.clear()

    @property
    def interpreted(self) -> bool:
        """Every read of the run was planned without code generation."""
        return bool(self.settings) and all(s == sessionconf.INTERPRETED for s in self.settings)

    @property
    def ddl_pass(self) -> bool:
        return any(h for h, _, _ in self.calls)

    @property
    def files(self) -> set[str]:
        return {f for _, files, _ in self.calls for f in files}

    @property
    def tails_only(self) -> bool:
        return bool(self.calls) and all(n == len(files) for _, files, n in self.calls)


def rows_of(spark, out: Path) -> list[tuple]:
    """Every output row as ``(table dir, version dir, _seq, _op, the columns as text)``."""
    got = []
    for vdir in sorted(out.rglob("schema_version=*")):
        df = spark.read.parquet(str(vdir))
        cols = [c for c in df.columns if not c.startswith("_")]
        for r in df.collect():
            got.append((vdir.parent.name, vdir.name, r["_seq"], r["_op"], tuple(str(r[c]) for c in cols)))
    return sorted(got)


def marks(out: Path) -> dict:
    return json.loads((out / "_state" / "inputs.json").read_text())


def test_a_grown_file_is_read_from_where_the_last_run_ended_and_gives_a_full_runs_output(
        spark, tmp_path, monkeypatch):
    log = base(tmp_path)                                  # a source event first, then the DDL
    for i in range(3):
        log.row("c", "t", after=[i, "a", i])
    path = log.write(["{not json"])                       # a line without seq: quarantined once
    out = tmp_path / "out"
    first = run(path, out, spark=spark)
    assert first.rows == 3 and first.quarantined == 1
    assert marks(out)["files"][os.path.realpath(path)]["offset"] == path.stat().st_size
    reads = Reads(monkeypatch)

    # new rows only: the tail is read, and no DDL pass runs (no DDL among the new lines); the
    # log's source event is not read again, yet its identity stands
    for i in range(3, 5):
        log.row("c", "t", after=[i, "b", i])
    with open(path, "a") as fh:
        for ev in log.events[-2:]:
            fh.write(json.dumps(ev) + "\n")
    before = {key: spark.conf.get(key, None) for key in sessionconf.INTERPRETED}
    second = run(path, out, spark=spark)
    assert reads.tails_only and not reads.ddl_pass
    # a small increment is run without code generation, and the session is left as it was
    assert reads.interpreted and {key: spark.conf.get(key, None) for key in sessionconf.INTERPRETED} == before
    assert second.rows == 2 and second.quarantined == 0 and second.previous_seq == first.last_seq
    assert json.loads((out / "_state" / "log.json").read_text())["identity"]["epoch"] == "epoch-1"

    # nothing new: no file read at all (an empty frame), nothing written, checkpoint kept
    reads.clear()
    idle = run(path, out, spark=spark)
    assert idle.events == 0 and idle.rows == 0 and idle.last_seq == second.last_seq
    assert reads.files == set() and not reads.ddl_pass

    # a DDL, a row of the new version, the same seq-less line again (a second occurrence: it
    # is quarantined, naming its own line) and a torn last line
    reads.clear()
    log.ddl("ALTER TABLE t ADD COLUMN note varchar(5)")
    log.row("c", "t", after=[9, "c", 9, "x"])
    with open(path, "a") as fh:
        for ev in log.events[-2:]:
            fh.write(json.dumps(ev) + "\n")
        fh.write("{not json\n")
        fh.write('{"seq": 99, "op": "c", "database": "shop", "table": "t", "after": ["1"')
    third = run(path, out, spark=spark,   # a large increment: compiled as usual
                tuning=Tuning(driver_increment_max_bytes=-1, interpreted_max_bytes=10))
    assert reads.tails_only and reads.ddl_pass and not reads.interpreted
    assert third.ddl == 1 and third.rows == 1 and third.quarantined == 1
    lines = path.read_text().splitlines()
    where = sorted(int(r["reason"][len(str(path)) + 1:].split(":", 1)[0])
                   for r in quarantine(out) if r["seq"] is None)
    assert where == [lines.index("{not json") + 1, len(lines) - 1]
    # the torn line (no end of line: still being appended) is neither quarantined nor
    # consumed: the mark ends before it, and the next run reads it again
    assert marks(out)["files"][os.path.realpath(path)]["offset"] == path.stat().st_size - len(lines[-1])
    reads.clear()
    fourth = run(path, out, spark=spark)
    assert reads.tails_only and not reads.ddl_pass
    assert fourth.rows == 0 and fourth.quarantined == 0 and fourth.last_seq == third.last_seq

    # the same log run whole into another output: the same rows and quarantine
    whole = tmp_path / "whole"
    run(path, whole, spark=spark)
    assert rows_of(spark, out) == rows_of(spark, whole)
    strip = lambda recs: sorted((r["seq"], r["reason"]) for r in recs)  # noqa: E731
    assert strip(quarantine(out)) == strip(quarantine(whole))
    schemas = lambda o: {p.name: json.loads(p.read_text()) for p in (o / "_schemas").iterdir()}  # noqa: E731
    assert schemas(out) == schemas(whole)


def test_schema_files_are_written_only_when_new_or_changed(spark, tmp_path):
    log = base(tmp_path)
    log.ddl("CREATE TABLE u (id int)")
    log.row("c", "t", after=[1, "a", 1])
    out = tmp_path / "out"
    run(log.write(), out, spark=spark)
    files = out / "_schemas"
    t1, u1 = files / "shop.t.v1.json", files / "shop.u.v1.json"
    os.utime(t1, ns=(1, 1))                                # a file not rewritten keeps this
    os.utime(u1, ns=(1, 1))
    log.ddl("ALTER TABLE t ADD COLUMN note varchar(5)")
    log.row("c", "t", after=[2, "b", 2, "x"])
    run(log.write(), out, spark=spark)
    assert u1.stat().st_mtime_ns == 1                      # unchanged version: not rewritten
    assert t1.stat().st_mtime_ns != 1                      # its valid_to_seq changed
    assert json.loads(t1.read_text())["valid_to_seq"] == len(log.events) - 1
    assert json.loads((files / "shop.t.v2.json").read_text())["valid_to_seq"] is None
    (files / "shop.u.v1.json").unlink()                    # a missing file is written again
    log.row("c", "u", after=[3])
    run(log.write(), out, spark=spark)
    assert json.loads(u1.read_text())["table"] == "u"


def test_a_rotated_replaced_or_rewritten_file_is_read_whole(spark, tmp_path, monkeypatch):
    log = base(tmp_path)
    for i in range(3):
        log.row("c", "t", after=[i, "a", i])
    path = log.write()
    out = tmp_path / "out"
    run(path, out, spark=spark)
    reads = Reads(monkeypatch)

    # rewritten in place with an edit in what was read (a row's ts) and one event more: read
    # whole — the old lines are left out by their seq, the new one is written once
    log.events[3]["ts"] += 1
    log.row("c", "t", after=[7, "x", 7])
    log.write()
    res = run(path, out, spark=spark)
    assert str(path) in reads.files and not any(n for _, _, n in reads.calls)
    assert res.rows == 1 and res.events == 1

    # rotated: a new capture epoch at the same path, longer than the old file: read whole,
    # and refused as another log (had only its tail been read, its rows would be lost)
    os.rename(path, tmp_path / "changelog.jsonl.1")
    new = Log(path)
    source(new, epoch="epoch-2")
    new.ddl("CREATE DATABASE shop")
    new.ddl("CREATE TABLE t (id int NOT NULL PRIMARY KEY, name varchar(10), qty int)")
    for i in range(20):
        new.row("r", "t", after=[i, "b", i])
    new.write()
    assert path.stat().st_size > marks(out)["files"][os.path.realpath(path)]["offset"]
    with pytest.raises(pl.PipelineError, match="epoch-2.*different log"):
        run(path, out, spark=spark)

    # replaced by a shorter log without a source event (seq from 1): read whole, refused
    path.write_text(json.dumps({"seq": 1, "position": "p", "ts": 1, "op": "ddl", "database": "shop",
                                "ddl": "CREATE DATABASE shop"}) + "\n")
    with pytest.raises(pl.PipelineError, match="this change log is a log without a source event"):
        run(path, out, spark=spark)


def test_a_gzip_file_is_read_whole_and_loses_nothing(spark, tmp_path, monkeypatch):
    log = base(tmp_path)
    log.row("c", "t", after=[1, "a", 1])
    gz = tmp_path / "changelog.jsonl.gz"
    gz.write_bytes(gzip.compress(log.write().read_bytes()))
    out = tmp_path / "out"
    run(gz, out, spark=spark)
    assert marks(out)["files"] == {}                       # nothing to continue from
    reads = Reads(monkeypatch)
    log.row("c", "t", after=[2, "b", 2])
    gz.write_bytes(gzip.compress(log.write().read_bytes()))
    res = run(gz, out, spark=spark)
    assert reads.files == {str(gz)} and reads.ddl_pass and not reads.interpreted
    assert res.rows == 1 and res.events == 1


def test_marks_of_another_checkpoint_are_not_used(spark, tmp_path, monkeypatch):
    """``inputs.json`` counts only with the checkpoint it was committed with: a checkpoint put
    back by hand (an older run's) makes the next run read the file whole."""
    log = base(tmp_path)
    log.row("c", "t", after=[1, "a", 1])
    path = log.write()
    out = tmp_path / "out"
    run(path, out, spark=spark)
    checkpoint = out / "_state" / "checkpoint.json"
    saved = checkpoint.read_text()
    log.row("c", "t", after=[2, "b", 2])
    run(log.write(), out, spark=spark)
    checkpoint.write_text(saved)                           # back to the first run's checkpoint
    reads = Reads(monkeypatch)
    log.row("c", "t", after=[3, "c", 3])
    res = run(log.write(), out, spark=spark)
    assert str(path) in reads.files and res.events == 2    # from the restored checkpoint on


def test_a_capture_file_is_continued_from_its_checkpointed_prefix_only(spark, tmp_path, monkeypatch):
    cap = tmp_path / "cap"
    cap.mkdir()
    log = base(cap)
    log.row("c", "t", after=[1, "a", 1])
    path = log.write()
    durable = path.stat().st_size
    (cap / "checkpoint.json").write_text(json.dumps({"seq": len(log.events), "changelog_bytes": durable,
                                                     "phase": "streaming"}))
    # past the checkpoint: a row and a line torn by a kill (the capture's restart rewrites them)
    log.row("c", "t", after=[2, "b", 2])
    with open(path, "a") as fh:
        fh.write(json.dumps(log.events[-1]) + "\n" + '{"seq": 6, "op": "c", "data')
    out = tmp_path / "out"
    first = run(cap, out, spark=spark)
    assert first.rows == 1 and first.quarantined == 0
    assert marks(out)["files"][os.path.realpath(path)]["offset"] == durable
    # the capture restarts: cuts back to its checkpoint, writes the events again, checkpoints
    with open(path, "r+b") as fh:
        fh.truncate(durable)
    log.row("c", "t", after=[3, "c", 3])
    with open(path, "a") as fh:
        for ev in log.events[-2:]:
            fh.write(json.dumps(ev) + "\n")
    (cap / "checkpoint.json").write_text(json.dumps({"seq": len(log.events), "changelog_bytes": path.stat().st_size,
                                                     "phase": "streaming"}))
    reads = Reads(monkeypatch)
    second = run(cap, out, spark=spark)
    assert reads.tails_only and second.rows == 2 and second.quarantined == 0
    seqs = sorted(r[2] for r in rows_of(spark, out))
    assert seqs == [4, 5, 6]
