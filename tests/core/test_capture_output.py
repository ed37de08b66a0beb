"""``ddlcore.capture.ChangeLogOutput``'s checkpoint protocol, which the MySQL, PostgreSQL and
TiDB captures share: a checkpoint names only bytes that were fsync'ed before it was saved,
``on_checkpoint`` (a source's confirmation) runs only after the save, a run's end and a
rewind cut the change log back to the last checkpoint, and the run's counts."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from ddlcore import capture as core
from ddlcore.capture import CaptureError, CaptureStats, ChangeLogOutput, WarningLog, write_json_atomic
from ddlcore.changelog import read_changelog


@dataclass(frozen=True)
class Cp:
    """A capture's checkpoint as the protocol sees it: its own position field ``pos``."""

    seq: int = 0
    changelog_bytes: int = 0
    pos: str = "0"
    phase: str = "streaming"
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @property
    def position(self) -> str:
        return self.pos

    def save(self, path: Path) -> None:
        write_json_atomic(path, {"seq": self.seq, "changelog_bytes": self.changelog_bytes, "pos": self.pos,
                                 "phase": self.phase})


class Recorder:
    """Records the order of fsyncs, checkpoint saves and confirmations."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, log: Path):
        self.calls: list[tuple] = []
        real_fsync = os.fsync

        def fsync(fd: int) -> None:
            if os.path.realpath(f"/proc/self/fd/{fd}") == str(log.resolve()):
                self.calls.append(("fsync", log.stat().st_size))
            real_fsync(fd)

        monkeypatch.setattr(os, "fsync", fsync)


def _out(tmp_path: Path, **kw) -> tuple[ChangeLogOutput, CaptureStats]:
    stats = CaptureStats()
    out = ChangeLogOutput(tmp_path / core.CHANGELOG_NAME, stats=stats, **kw)
    return out, stats


def test_a_checkpoint_covers_fsynced_bytes_and_is_confirmed_only_after_it_is_saved(tmp_path, monkeypatch):
    log = tmp_path / core.CHANGELOG_NAME
    rec = Recorder(monkeypatch, log)
    cp_path = tmp_path / core.CHECKPOINT_NAME

    def confirm(cp: Cp) -> None:
        on_disk = json.loads(cp_path.read_text())
        rec.calls.append(("confirm", cp.pos, on_disk["pos"], on_disk["changelog_bytes"]))

    out, stats = _out(tmp_path, on_checkpoint=confirm, interval=3600.0)
    out.start(Cp(pos="start", phase="snapshot"))
    out.emit("c", "1", 10, "db", "t", after=[1])
    out.emit("c", "1", 10, "db", "t", after=[2])
    assert out.commit(Cp(pos="after-1")) is False  # the first commit checkpoints (none yet)
    out.emit("d", "2", 11, "db", "t", before=[1])
    out.commit(Cp(pos="after-2"))  # within the interval: pending only
    assert out.checkpointed.pos == "after-1" and out.pending.pos == "after-2"
    size_1 = out.checkpointed.changelog_bytes
    out.checkpoint()
    size_2 = log.stat().st_size
    assert rec.calls == [("fsync", size_1), ("confirm", "after-1", "after-1", size_1),
                         ("fsync", size_2), ("confirm", "after-2", "after-2", size_2)]
    assert out.checkpointed == Cp(3, size_2, "after-2")
    assert stats.checkpoints == 2 and stats.transactions == 2
    assert (stats.ops, stats.first_seq, stats.last_seq, stats.position) == ({"c": 2, "d": 1}, 1, 3, "2")
    out.finish()



@pytest.mark.parametrize("uptime", [0.5, 30.0, 10_000_000.0])
def test_the_checkpoint_clock_does_not_depend_on_the_hosts_uptime(tmp_path, monkeypatch, uptime):
    """``time.monotonic()`` counts from an arbitrary point (boot on Linux): a host up for less
    than the interval must checkpoint on the first commit all the same, and the interval then
    counts from that checkpoint."""
    clock = [uptime]
    monkeypatch.setattr(core.time, "monotonic", lambda: clock[0])
    test_a_checkpoint_covers_fsynced_bytes_and_is_confirmed_only_after_it_is_saved(tmp_path, monkeypatch)

    out, _ = _out(tmp_path / "again", interval=10.0)
    (tmp_path / "again").mkdir()
    out.start(Cp(pos="s", phase="snapshot"))
    out.emit("c", "1", 1, "db", "t", after=[1])
    out.commit(Cp(pos="1"))
    assert out.checkpointed.pos == "1" and out.pending is None
    clock[0] += 9.0
    out.emit("c", "2", 1, "db", "t", after=[2])
    out.commit(Cp(pos="2"))
    assert out.checkpointed.pos == "1" and out.pending.pos == "2"  # 9 s < 10 s: pending
    clock[0] += 1.0
    out.emit("c", "3", 1, "db", "t", after=[3])
    out.commit(Cp(pos="3"))
    assert out.checkpointed.pos == "3" and out.pending is None  # 10 s: written
    out.finish()

def test_finish_cuts_an_uncommitted_transaction_but_not_a_snapshot(tmp_path):
    out, stats = _out(tmp_path)
    out.start(Cp(pos="s", phase="snapshot"))
    out.emit("r", "0", 1, "db", "t", after=[1])
    out.finish()  # a snapshot in progress: kept as written, the next run starts over
    assert [e.seq for e in read_changelog(tmp_path / core.CHANGELOG_NAME)] == [1]

    out, stats = _out(tmp_path)
    out.start(Cp(pos="s"))
    out.emit("c", "1", 1, "db", "t", after=[1])
    out.commit(Cp(pos="1"))
    out.emit("c", "2", 1, "db", "t", after=[2])  # its transaction's end never came
    out.finish()
    assert [e.seq for e in read_changelog(tmp_path / core.CHANGELOG_NAME)] == [1]
    assert stats.last_seq == 1 and out.seq == 1


def test_resume_and_rewind_go_on_from_the_checkpoint_with_the_same_seq(tmp_path):
    out, stats = _out(tmp_path)
    out.start(Cp())
    out.emit("c", "1", 1, "db", "t", after=[1])
    out.commit(Cp(pos="1"))
    out.emit("c", "2", 1, "db", "t", after=[2])  # lost with the connection
    cp = out.rewind()
    assert cp.pos == "1" and stats.last_seq == 1
    assert out.emit("c", "2", 1, "db", "t", after=[2]) == 2
    out.commit(Cp(pos="2"))
    out.emit("c", "3", 1, "db", "t", after=[3])  # after the last checkpoint: cut by finish
    out.finish()
    saved = json.loads((tmp_path / core.CHECKPOINT_NAME).read_text())

    again, stats = _out(tmp_path)
    again.resume(Cp(saved["seq"], saved["changelog_bytes"], saved["pos"]))
    assert (stats.last_seq, stats.resumed_from) == (2, "2")
    assert again.emit("c", "3", 1, "db", "t", after=[3]) == 3
    again.finish()  # not committed: cut
    assert [e.seq for e in read_changelog(tmp_path / core.CHANGELOG_NAME)] == [1, 2]

    (tmp_path / core.CHANGELOG_NAME).write_bytes(b"")
    with pytest.raises(CaptureError, match="holds 0 bytes but the checkpoint covers"):
        _out(tmp_path)[0].resume(Cp(saved["seq"], saved["changelog_bytes"], saved["pos"]))


def test_stop_after_events_and_ddl_problems(tmp_path):
    class History:  # CaptureHistory's face: what it could not record
        def record(self, ev):
            return [f"{core.CaptureHistory.PARSE_FAILED} DDL at seq {ev.seq}: no"] if ev.ddl == "bad" else []

        def close(self):
            pass

    warned: list[str] = []
    out, stats = _out(tmp_path, stop_after_events=3, interval=3600.0,
                      warn=WarningLog(tmp_path / core.LOG_NAME, warned.append, warnings=[]))
    out.history = History()
    out.start(Cp())
    out.emit("ddl", "1", 1, "db", ddl="CREATE TABLE t (a int)")
    assert out.schema_seq == 1
    out.emit("ddl", "1", 1, "db", ddl="bad")
    assert out.commit(Cp(pos="1")) is False
    out.emit("c", "2", 1, "db", "t", after=[1])
    assert out.commit(Cp(pos="2")) is True  # three events: checkpointed, the run ends
    assert out.checkpointed.pos == "2" and out.pending is None
    assert stats.ddl_failed == 1 and warned == ["history could not parse DDL at seq 2: no"]
    assert "history could not parse DDL at seq 2" in (tmp_path / core.LOG_NAME).read_text()
    out.finish()
    assert out.history is None


def test_read_with_retry_goes_on_from_the_last_checkpoint_after_a_lost_connection(tmp_path):
    warned: list[str] = []
    out, stats = _out(tmp_path, warn=warned.append)
    out.start(Cp())
    reads: list[str] = []
    rewound: list[int] = []

    def read(cp: Cp) -> None:
        reads.append(cp.pos)
        if len(reads) == 1:
            out.emit("c", "1", 1, "db", "t", after=[1])
            out.commit(Cp(pos="1"))
            out.emit("c", "2", 1, "db", "t", after=[2])  # its transaction is cut
            raise ConnectionError("reset by peer \n")
        out.emit("c", "2", 1, "db", "t", after=[2])
        out.commit(Cp(pos="2"))

    out.read_with_retry(read, out.checkpointed, lost=lambda e: isinstance(e, ConnectionError), retry_for=30,
                        wait_max=0.01, on_rewind=lambda: rewound.append(out.seq))
    out.finish()
    assert reads == ["0", "1"] and rewound == [1]
    assert warned == ["connection to the source lost (ConnectionError: reset by peer); reconnecting "
                      "(attempt 1, from 1)"]
    assert [e.seq for e in read_changelog(tmp_path / core.CHANGELOG_NAME)] == [1, 2]

    def refused(cp: Cp) -> None:
        raise PermissionError("no")

    (tmp_path / "refused").mkdir()
    again, _ = _out(tmp_path / "refused")
    again.start(Cp())
    with pytest.raises(PermissionError):  # not a lost connection: no retry
        again.read_with_retry(refused, again.checkpointed, lost=lambda e: isinstance(e, ConnectionError),
                              retry_for=30, wait_max=0.01)
    again.finish()


def test_an_unreadable_or_foreign_checkpoint_file_is_an_error_naming_it(tmp_path):
    @dataclass(frozen=True)
    class Mine(core.CheckpointFile):
        seq: int = 0

        def to_json(self):
            return {"kind": "mine", "seq": self.seq}

        @classmethod
        def from_json(cls, d):
            if d.get("kind") != "mine":
                raise CaptureError(f"not my checkpoint (kind {d.get('kind')!r})")
            return cls(int(d["seq"]))

    path = tmp_path / core.CHECKPOINT_NAME
    assert Mine.load(path) is None
    Mine(7).save(path)
    assert Mine.load(path) == Mine(7) and "updated" in json.loads(path.read_text())
    path.write_text('{"kind": "theirs"}')
    with pytest.raises(CaptureError, match=f"{path}: not my checkpoint"):
        Mine.load(path)
    path.write_text('{"kind": "mine"}')
    with pytest.raises(CaptureError, match=f"{path}: unreadable checkpoint"):
        Mine.load(path)


def test_a_new_run_refuses_a_change_log_no_checkpoint_covers_and_a_resumed_one_keeps_its_filters(tmp_path):
    log = tmp_path / core.CHANGELOG_NAME
    log.write_text('{"seq": 1}\n')
    out, _ = _out(tmp_path)
    with pytest.raises(CaptureError, match="exists but .*checkpoint.json does not.*refusing to overwrite"):
        out.check_new()
    assert log.read_text() == '{"seq": 1}\n'
    log.write_text("")
    out.check_new()  # empty: a first run may start
    out.start(Cp(include=("db.*",)))
    out.finish()

    warned: list[str] = []
    again, _ = _out(tmp_path, warn=warned.append)
    again.check_new()  # a checkpoint is there: fine
    again.resume(Cp(include=("db.*",)), include=("db.*",))
    assert warned == []
    again.close()
    again.resume(Cp(include=("db.*",)), include=("other.*",))
    assert warned == ["resuming with the checkpoint's filters include=['db.*'] exclude=[] (the options given differ)"]
    again.finish()


def test_the_directory_lock_is_exclusive_and_leaves_no_file(tmp_path, monkeypatch):
    """``capture.lock`` exists while a run holds it, a second locker is refused, and the file
    is gone once the run ends — also when a locker opened the file just before the run that
    held it removed it: it then locks the file at the path, not the removed one (else a third
    run could lock the path's new file too, and two runs would hold the directory)."""
    path = tmp_path / core.LOCK_NAME
    with core.DirectoryLock(path):
        assert path.exists()
        with pytest.raises(CaptureError, match="another capture is running"):
            core.DirectoryLock(path).__enter__()
    assert not path.exists()

    real_open, opened = os.open, []

    def open_then_removed(p, flags, mode=0o777):
        fd = real_open(p, flags, mode)
        if not opened:  # the holder removes the file (and unlocks it) right after this open
            os.unlink(p)
        opened.append(fd)
        return fd

    monkeypatch.setattr(core.os, "open", open_then_removed)
    with core.DirectoryLock(path):
        assert len(opened) == 2 and path.exists()  # locked the path's file on the second try
        monkeypatch.undo()
        with pytest.raises(CaptureError, match="another capture is running"):
            core.DirectoryLock(path).__enter__()
    assert not path.exists()
