"""The commit TSOs a TiDB capture wrote last: a redelivery told apart from a late message.

Owns: the bounded memory of written ``commit_ts`` (the last ``memory`` of them in a run, the
last ``persisted`` of them in the checkpoint) and the ``floor`` below which nothing is
remembered.  A message at or below the high-water mark whose ``commit_ts`` is remembered was
written: a redelivery.  One above the floor that is not remembered was never written: a late
message (kept, quarantined).  One at or below the floor cannot be told apart and counts as a
redelivery.  Commit TSOs are unique per transaction (TiDB manual "TSO"), so the TSO names
what was written.
Must not know: the message format, the change log.
"""

from __future__ import annotations

from collections import deque
from typing import Iterable

__all__ = ["RecentCommits", "MEMORY_WINDOW", "PERSISTED_WINDOW"]

#: how many written commit_ts a run remembers (memory stays bounded on a long run)
MEMORY_WINDOW = 100_000
#: how many of them the checkpoint keeps for the next run (the checkpoint stays small: ~20 kB)
PERSISTED_WINDOW = 1024


class _Window:
    """The last ``size`` commit_ts written, in write order, and the highest one forgotten."""

    def __init__(self, size: int, floor: int, recent: Iterable[int]):
        self.order: deque[int] = deque(recent)
        self.floor = floor
        self.size = size
        while len(self.order) > size:
            self.floor = max(self.floor, self.order.popleft())

    def add(self, ts: int) -> int | None:
        """Remember ``ts``; returns the commit_ts forgotten for it, if any."""
        self.order.append(ts)
        if len(self.order) <= self.size:
            return None
        gone = self.order.popleft()
        self.floor = max(self.floor, gone)
        return gone


class RecentCommits:
    """``floor``: nothing at or below it is remembered (a first run: its start TSO; a run
    resumed from a checkpoint without this memory: the checkpoint's high-water mark);
    ``recent``: the commit_ts written last, oldest first (a checkpoint's ``recent``)."""

    def __init__(self, floor: int, recent: Iterable[int] = (), *, memory: int = MEMORY_WINDOW,
                 persisted: int = PERSISTED_WINDOW):
        recent = list(recent)
        self._memory = _Window(memory, floor, recent)
        self._persisted = _Window(persisted, floor, recent)
        self._seen = set(self._memory.order)

    def written(self, ts: int) -> None:
        """``ts`` was written (in order or late)."""
        if ts in self._seen:
            return
        self._seen.add(ts)
        gone = self._memory.add(ts)
        if gone is not None:
            self._seen.discard(gone)
        self._persisted.add(ts)

    def is_late(self, ts: int) -> bool:
        """A message at or below the high-water mark with commit_ts ``ts`` was never written
        (above the floor, not remembered); ``False``: a redelivery (or too old to tell)."""
        return ts > self._memory.floor and ts not in self._seen

    def persisted(self) -> tuple[int, tuple[int, ...]]:
        """``(floor, recent)`` for the checkpoint: the next run remembers exactly these."""
        return self._persisted.floor, tuple(self._persisted.order)
