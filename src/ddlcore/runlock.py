"""The lock file a ``ddlcore run`` holds on a local output, as a reader sees it: its path and a
probe saying whether a process holds it and what the holder recorded.

Owns: ``LOCK_PATH`` and the probe (``probe``).  Shared by ``ddlcore.spark.outlock`` (which takes
the lock) and ``ddlcore.status`` (which only looks), so it imports nothing of Spark: ``ddlcore
status`` runs without loading pyspark.  Must not know: how the lock is taken (``flock`` on a
local output, a created file on other filesystems: ``ddlcore.spark.outlock``).

The probe is a shared, non-blocking ``flock(2)`` on a read-only descriptor, released at once;
the file is never created.  Refused means another process holds the lock exclusively (Linux
``flock(2)``: a shared lock is refused while an exclusive one is held).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["LOCK_PATH", "LockProbe", "probe", "parse_record"]

#: the lock file, relative to the output (hidden: Spark's and Hadoop's readers skip it)
LOCK_PATH = "_state/.run.lock"
#: bytes of the lock file read for its holder record
_RECORD_BYTES = 1 << 16


@dataclass(frozen=True)
class LockProbe:
    """What ``probe`` saw: ``path`` (the lock file), ``held`` (a process holds it now),
    ``record`` (the holder record the file holds: ``pid``, ``host``, ``user``, ``since``,
    ``command``; empty when none or unreadable)."""

    path: Path
    held: bool
    record: dict[str, Any]

    @property
    def pid(self) -> int | None:
        """The pid the file names: its record's ``pid``, else ``None``."""
        pid = self.record.get("pid")
        return pid if isinstance(pid, int) and not isinstance(pid, bool) else None


def parse_record(data: str | bytes | None) -> dict[str, Any]:
    """A holder record (a JSON object) from a lock file's content; ``{}`` when it is empty or
    not a JSON object."""
    try:
        record = json.loads(data or "")
    except ValueError:
        return {}
    return record if isinstance(record, dict) else {}


def probe(out: str | os.PathLike) -> LockProbe:
    """Whether a process holds the lock of the local output directory ``out`` (a path) now,
    and the record in the file (module docstring).  Raises nothing for a missing file (not
    held, empty record)."""
    import fcntl

    path = Path(out) / LOCK_PATH
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return LockProbe(path, False, {})
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
            held = False
        except OSError:
            held = True
        return LockProbe(path, held, parse_record(os.pread(fd, _RECORD_BYTES, 0)))
    finally:
        os.close(fd)
