"""One output, one writer: the exclusive lock a ``ddlcore run`` (and ``run --follow``) holds on
its output directory ``OUT`` for the whole run (docs/pipeline.md, "Guarantees").

Owns: ``OUT/_state/.run.lock`` and the rule deciding whether another run holds it.  Must not
know: the pipeline's files (a run takes the lock before it recovers, reads or writes anything;
``ddlcore.spark.pipeline``).

Two kinds, by the output's filesystem:

* **local** (a path or a ``file:`` URI): an exclusive ``flock(2)`` on the lock file, as the
  captures hold ``capture.lock`` (``ddlcore.capture.DirectoryLock``).  The kernel drops it when
  the process dies, however it dies, so a killed run never leaves a stale lock.  The file
  stays (removing a ``flock``'ed file would let two processes lock two different files); the
  holder writes its ``pid``, ``host``, ``user``, ``since`` and ``command`` into it, so a
  refused run names the holder.
* **any other Hadoop filesystem** (HDFS, ``viewfs://``, object stores): the lock file is
  created with Hadoop's ``create(path, overwrite=false)`` — atomic on HDFS: of two runs
  creating it, one fails — holding the same fields, and removed at the end of the run.  The
  holder renews its modification time every ``HEARTBEAT_SECONDS``; another run treats the
  lock as live unless its holder is a process of this host that no longer exists, or (another
  host's) it has not been renewed for ``STALE_SECONDS`` — then it is a killed run's, removed
  and taken.  An object store whose ``create`` is not atomic (S3A without conditional writes)
  cannot make two runs starting at the same instant exclusive: schedule one writer per output
  there.
"""

from __future__ import annotations

import getpass
import json
import os
import socket
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import PipelineError
from ..runlock import LOCK_PATH, parse_record, probe

if TYPE_CHECKING:  # pragma: no cover
    from .fs import OutputFS

__all__ = ["OutputLock", "OutputLocked", "LOCK_PATH", "holder", "HEARTBEAT_SECONDS", "STALE_SECONDS"]

#: a lock on a non-local filesystem is renewed this often (seconds) ...
HEARTBEAT_SECONDS = 10.0
#: ... and another host's lock not renewed for this long is a killed run's (seconds)
STALE_SECONDS = 120.0


class OutputLocked(PipelineError):
    """Another run holds the output's lock: ``holder`` is what it wrote (``pid``, ``host``,
    ``user``, ``since``, ``command``; empty when unreadable)."""

    def __init__(self, out: str, holder: dict[str, Any]):
        self.holder = holder
        super().__init__(f"{out} is being written by another run ({describe(holder)}): one output, "
                         f"one writer — wait for it to end or stop it, then run again")


def describe(h: dict[str, Any]) -> str:
    """``ddlcore run, pid 12, host h, user u, since 2026-01-01T00:00:00Z`` from a holder record."""
    if not h:
        return "holder not recorded yet"
    parts = [str(h.get("command") or "ddlcore run")]
    parts += [f"{k} {h[k]}" for k in ("pid", "host", "user", "since") if h.get(k) is not None]
    return ", ".join(parts)


def _record(command: str) -> dict[str, Any]:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # pragma: no cover - no user name (a container without passwd)
        user = None
    return {"pid": os.getpid(), "host": socket.gethostname(), "user": user, "command": command,
            "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def _pid_alive(pid: Any) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ProcessLookupError, ValueError, TypeError):
        return False
    except PermissionError:  # another user's process
        return True
    return True


class OutputLock:
    """The exclusive lock of the output ``fs`` (``OutputFS``) for one run: ``acquire()`` (or
    ``with``) raises ``OutputLocked`` naming the holder when another run holds it; ``release()``
    gives it up (idempotent).  ``command``: what the holder record calls this process (e.g.
    ``"ddlcore run --follow"``)."""

    def __init__(self, fs: "OutputFS", command: str = "ddlcore run"):
        self.fs = fs
        self.command = command
        self._fd: int | None = None
        self._remote: dict[str, Any] | None = None
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None or self._remote is not None

    def __enter__(self) -> "OutputLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def acquire(self) -> None:
        if self.held:
            return
        local = self.fs.local(LOCK_PATH)
        if local is not None:
            self._fd = _flock(Path(local), self.fs.uri, _record(self.command))
        else:
            self._remote = self._create_remote()
            self._beat = threading.Thread(target=self._heartbeat, name="ddlcore-run-lock", daemon=True)
            self._beat.start()

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing releases the flock
            self._fd = None
        if self._remote is not None:
            self._stop.set()
            if self._beat is not None:
                self._beat.join()
            if parse_record(self.fs.read_text(LOCK_PATH)) == self._remote:  # still ours
                self.fs.delete(LOCK_PATH)
            self._remote = None

    # -- a non-local filesystem ---------------------------------------------------------------

    def _create_remote(self) -> dict[str, Any]:
        from py4j.protocol import Py4JJavaError

        record = _record(self.command)
        for _ in range(3):
            try:
                stream = self.fs.fs.create(self.fs.path(LOCK_PATH), False)  # fails when it exists
            except Py4JJavaError:
                if not self.fs.exists(LOCK_PATH):
                    raise
                found = parse_record(self.fs.read_text(LOCK_PATH))
                if self._live(found):
                    raise OutputLocked(self.fs.uri, found) from None
                self.fs.delete(LOCK_PATH)  # a killed run's lock
                continue
            try:
                stream.write(bytearray(json.dumps(record, sort_keys=True).encode("utf-8")))
                stream.hsync()
            finally:
                stream.close()
            return record
        raise OutputLocked(self.fs.uri, parse_record(self.fs.read_text(LOCK_PATH)))

    def _live(self, found: dict[str, Any]) -> bool:
        """Whether the lock file's holder ``found`` may still run (see the module docstring)."""
        if found.get("host") == socket.gethostname() and found.get("pid") is not None:
            return _pid_alive(found["pid"])
        try:
            mtime = self.fs.fs.getFileStatus(self.fs.path(LOCK_PATH)).getModificationTime() / 1000.0
        except Exception:  # removed meanwhile: its holder ended
            return False
        return time.time() - mtime < STALE_SECONDS

    def _heartbeat(self) -> None:
        while not self._stop.wait(HEARTBEAT_SECONDS):
            try:
                self.fs.fs.setTimes(self.fs.path(LOCK_PATH), int(time.time() * 1000), -1)
            except Exception:  # pragma: no cover - a filesystem without times: the pid rule stands
                pass


#: a held local lock is tried this many times, 50 ms apart, before the run is refused: a
#: ``holder`` probe holds it for an instant
_PROBE_TRIES = 4


def _flock(path: Path, out: str, record: dict[str, Any]) -> int:
    """An exclusive, non-blocking ``flock`` on ``path`` (made, with its directory), holding
    ``record``; raises ``OutputLocked`` naming the holder.  A file removed between its
    ``open`` and the ``flock`` (a failed first run removes its output) is opened again; a lock
    held for less than ``_PROBE_TRIES`` short waits (``holder``'s probe) is waited for."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    tries = 0
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            found = parse_record(os.pread(fd, 1 << 16, 0))
            os.close(fd)
            tries += 1
            if tries < _PROBE_TRIES:
                time.sleep(0.05)
                continue
            raise OutputLocked(out, found) from None
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(record, sort_keys=True).encode("utf-8"), 0)
    return fd


def holder(out: str | os.PathLike) -> dict[str, Any] | None:
    """The record of the run holding the lock of the local output ``out`` (a path), ``None``
    when no run holds it (``ddlcore.runlock.probe``: probed, not taken)."""
    seen = probe(out)
    return seen.record if seen.held else None
