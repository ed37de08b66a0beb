"""``ddlcore run --follow``: the pipeline as a service — micro-batches as a capture appends to
its directory, or as new files land in a change-log directory (docs/operations.md).

Owns: the loop.  It holds the output's lock (``ddlcore.spark.outlock``, command ``ddlcore run
--follow``) for its whole life, keeps one Spark session (and the process's parsers, imported
modules and JIT-compiled code) warm between batches, and runs each batch as one ordinary run
(``run_pipeline``: one commit each, the crash protocol unchanged; the schema history is opened
from its store per batch, reading its stored versions — no DDL is parsed again).  A batch starts when the
change log changed since the last one (its files' sizes and modification times, and a
capture's ``checkpoint.json``), at most every ``interval`` seconds; with ``max_batch_events``
a capture's log is read ``max_batch_events`` events at a time (the batch's end is the end of
the line of its last seq, found by a binary search over the file's lines, and never past the
capture's checkpoint); a directory of other change-log files (local or a URI) is read in
batches of whole files, in seq order, within ``max_batch_events`` seqs
(``ddlcore.spark.filebatch``: a file is never split, the crash protocol records what was
consumed per file).  Must not know: how a batch is read, converted or committed.

Stopping: ``stop`` (an ``Event``; ``install_signals`` sets it on SIGTERM and SIGINT) ends the
loop after the batch in flight is committed; a second signal abandons that batch
(``FollowAbandoned``): its staged files are removed, nothing of it is committed, and the next
start does it again.  Either way the loop returns normally (``ddlcore run --follow`` exits 0).
A SIGKILL is a crash like any run's: the next start rolls a committed batch forward or redoes
an uncommitted one.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..stopsignals import FollowAbandoned, install_signals
from .fs import is_uri
from .pipeline import RunResult, run_pipeline, spark_session

__all__ = ["follow", "FollowStats", "FollowAbandoned", "install_signals", "batch_end", "DEFAULT_INTERVAL"]

#: seconds between two looks at the change log when nothing changed
DEFAULT_INTERVAL = 5.0


@dataclass
class FollowStats:
    """What a follower did: ``batches`` committed, their ``events``, ``rows`` and
    ``quarantined`` in all, ``last_seq`` committed, ``abandoned`` (a batch given up on a second
    signal), ``seconds`` (per batch, in order)."""

    batches: int = 0
    events: int = 0
    rows: int = 0
    quarantined: int = 0
    last_seq: int | None = None
    abandoned: bool = False
    seconds: list[float] = field(default_factory=list)

    def add(self, result: RunResult) -> None:
        self.batches += 1
        self.events += result.events
        self.rows += result.rows
        self.quarantined += result.quarantined
        self.last_seq = result.last_seq
        self.seconds.append(result.seconds)


def _capture_checkpoint(directory: Path) -> dict[str, Any] | None:
    """A capture's ``checkpoint.json`` (docs/capture.md): ``seq``, ``changelog_bytes``, ``phase``."""
    try:
        cp = json.loads((directory / "checkpoint.json").read_text(encoding="utf-8"))
        return cp if (directory / "changelog.jsonl").is_file() and "changelog_bytes" in cp else None
    except (OSError, ValueError):
        return None


def _line_seq(fh, offset: int, limit: int) -> tuple[int, int, int] | None:
    """``(seq, line start, line end)`` of the first line starting at or after byte ``offset``
    and ending by ``limit`` that holds a seq; ``None`` when there is none."""
    if offset:
        fh.seek(offset - 1)
        fh.readline()  # the rest of the line byte ``offset - 1`` is in (only its "\n" at a line start)
    else:
        fh.seek(0)
    while (start := fh.tell()) < limit:
        line = fh.readline()
        if start + len(line) > limit or not line.endswith(b"\n"):
            return None
        try:
            seq = json.loads(line).get("seq")
        except (ValueError, AttributeError):
            continue
        if isinstance(seq, int):
            return seq, start, start + len(line)
    return None


def batch_end(changelog: Path, durable_bytes: int, seq: int) -> int | None:
    """The byte just past the line holding ``seq`` in the capture's ``changelog`` (seq
    increasing along the file), among its first ``durable_bytes``: a binary search over byte
    offsets (the line is known to start in ``[lo, hi)``), then a scan of at most 64 KB.
    ``None`` when no such line is found."""
    lo, hi = 0, durable_bytes
    with open(changelog, "rb") as fh:
        while hi - lo > 1 << 16:
            found = _line_seq(fh, (lo + hi) // 2, durable_bytes)
            if found is None or found[0] > seq:
                hi = (lo + hi) // 2
            elif found[0] < seq:
                lo = found[2]
            else:
                return found[2]
        while (found := _line_seq(fh, lo, durable_bytes)) is not None and found[0] < seq:
            lo = found[2]
    return found[2] if found is not None and found[0] == seq else None


def _signature(changelog: str | os.PathLike) -> Any:
    """What changes when the change log grows: each change-log file's and a checkpoint's name,
    size and modification time (``None`` for a URI of another filesystem: always look)."""
    from ..changelog import is_changelog_file

    if is_uri(changelog):
        return None
    p = Path(changelog)
    entries = sorted(p.iterdir()) if p.is_dir() else [p]
    sig = []
    for f in entries:
        if f.name == "checkpoint.json" or is_changelog_file(f):
            try:
                st = f.stat()
            except FileNotFoundError:
                continue
            sig.append((f.name, st.st_size, st.st_mtime_ns))
    return tuple(sig)


def _committed_seq(spark, out: str) -> int | None:
    from .fs import OutputFS

    fs = OutputFS(spark, out)
    try:
        text = fs.read_text("_state/checkpoint.json")
    finally:
        fs.close()
    return None if text is None else json.loads(text).get("last_seq")


def _batch_limit(spark, changelog: Path, out: str,
                 max_events: int | None) -> tuple[tuple[int, int] | None, bool]:
    """``(batch_end, more)``: the ``(seq, bytes)`` a batch of at most ``max_events`` events of a
    capture's directory ends at (``None``: no limit), and whether events past it are final."""
    if not max_events or not changelog.is_dir():
        return None, False
    cp = _capture_checkpoint(changelog)
    if cp is None or cp.get("phase", "streaming") != "streaming":
        return None, False
    last = _committed_seq(spark, out) or 0
    target = last + max_events
    if target >= int(cp["seq"]):
        return None, False
    end = batch_end(changelog / "changelog.jsonl", int(cp["changelog_bytes"]), target)
    return ((target, end), True) if end is not None else (None, False)


def _next_batch(spark, changelog: str | os.PathLike, out: str, max_events: int | None) -> tuple[dict[str, Any], bool]:
    """``(run_pipeline's bounds, more)`` of the next batch: ``batch_end`` for a capture's
    directory (``_batch_limit``), ``batch_files`` for another directory of change-log files
    (whole files: ``ddlcore.spark.filebatch``), nothing without ``max_events`` or for a file;
    ``more``: events past the batch are there to read at once."""
    from .filebatch import file_batch

    if not max_events:
        return {}, False
    local = None if is_uri(changelog) else Path(changelog)
    if local is not None and not local.is_dir():
        return {}, False
    if local is not None and _capture_checkpoint(local) is not None:
        limit, more = _batch_limit(spark, local, out, max_events)
        return {"batch_end": limit}, more
    names, more = file_batch(spark, local if local is not None else str(changelog), _committed_seq(spark, out),
                             max_events)
    return {"batch_files": names}, more


def follow(changelog: str | os.PathLike, out: str | os.PathLike, *, interval: float = DEFAULT_INTERVAL,
           max_batch_events: int | None = None, stop: threading.Event | None = None, spark=None,
           master: str | None = None, spark_conf: dict[str, str] | None = None,
           on_batch: Callable[[RunResult], None] | None = None, progress: Callable[[str], None] | None = None,
           handle_signals: bool = False, **run_options: Any) -> FollowStats:
    """Follow ``changelog`` into ``out`` until ``stop`` is set (module docstring): a batch
    (``run_pipeline`` with ``run_options``: ``dialect``, ``history``, ``strict``,
    ``spark_options``, ``concurrent_jobs``) whenever the log changed, looking every
    ``interval`` seconds; ``max_batch_events``: the bound of a batch (``_next_batch``: events of
    a capture's directory, whole files of another directory; none for a single file);
    ``on_batch`` is given each committed batch's ``RunResult``;
    ``handle_signals``: SIGTERM/SIGINT stop the loop (``install_signals``, once the Spark
    session is made: PySpark's context installs its own SIGINT handler).  Raises
    what ``run_pipeline`` raises (``OutputLocked`` when another run holds ``out``; a batch that
    fails stops the follower: nothing of it is committed)."""
    from .fs import OutputFS
    from .outlock import OutputLock

    stop = stop or threading.Event()
    spark = spark or spark_session(master, conf=spark_conf)
    out = str(out)
    stats = FollowStats()
    restore = install_signals(stop) if handle_signals else (lambda: None)
    fs = OutputFS(spark, out)
    fs.mkdirs()
    try:
        with OutputLock(fs, command="ddlcore run --follow"):
            seen: Any = ()
            more = False
            while not stop.is_set():
                sig = _signature(changelog)
                if sig is None or sig != seen or more:
                    bounds, more = _next_batch(spark, changelog, out, max_batch_events)
                    try:
                        result = run_pipeline(changelog, out, spark=spark, take_lock=False, progress=progress,
                                              **bounds, **run_options)
                    except FollowAbandoned:
                        stats.abandoned = True
                        break
                    seen = sig
                    if result.events or result.ddl or result.previous_seq != result.last_seq:
                        stats.add(result)
                        if on_batch is not None:
                            on_batch(result)
                    if more:
                        continue
                stop.wait(interval)
    except FollowAbandoned:  # between batches: nothing in flight
        stats.abandoned = True
    finally:
        restore()
        fs.close()
    return stats
