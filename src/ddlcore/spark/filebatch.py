"""Batches of whole files: ``ddlcore run --follow --max-batch-events N`` over a directory of
change-log files that is not a capture's (a local directory or a URI of another filesystem;
docs/operations.md).

Owns: choosing the files a batch reads.  The unit is the **whole file**: a file is never split
between two batches, because a run records what it consumed per file (``OUT/_state/inputs.json``:
a JSON Lines file's consumed length, nothing for a gzip or Parquet file, which is read whole
each time) and reads a file from that mark on — a batch ending inside a file would record the
whole file as consumed and the next batch would skip the rest.  Files are taken in the order of
their seqs (docs/changelog.md: seq ranges of a log's files never overlap, ``ddlcore.spark.
seqcheck``): every file whose events are all committed, then the next files past the committed
seq, as many as keep the batch within ``N`` seqs past the committed one (the seq span: a
log's seqs may have gaps, so a batch holds at most ``N`` events) — and at least one, so a single
file larger than ``N`` is a batch of its own.  The files already committed stay in the batch
(a JSON Lines file is skipped from its mark: nothing read), so the run sees the log's first
source event as every batch run does.  Must not know: how a run reads or commits.

Seq ranges: of a local file, ``seqcheck.seq_range`` (a few KB at each end of a JSON Lines file,
a gzip file decompressed once, a Parquet file's statistics); of a file of another filesystem, a
Spark aggregate over the file, once per file length and modification time (cached).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["file_batch", "file_ranges", "choose_files"]

#: (uri, length, modification time) → (first seq, last seq) | None, for files of other filesystems
_REMOTE_RANGES: dict[tuple[str, int, int], tuple[int, int] | None] = {}

Range = tuple[int, int]


def _local_ranges(directory: Path) -> list[tuple[str, Range | None]]:
    from ..changelog import changelog_files
    from .seqcheck import seq_range

    return [(f.name, seq_range(f)) for f in changelog_files(directory)]


def _remote_range(spark, uri: str) -> Range | None:
    from pyspark.sql import functions as F

    if uri.endswith(".parquet"):
        df = spark.read.parquet(uri).select(F.col("seq").cast("long").alias("seq"))
    else:  # JSON Lines, compressed or not (Hadoop's codec by the name)
        df = spark.read.text(uri).select(F.get_json_object("value", "$.seq").cast("long").alias("seq"))
    row = df.agg(F.min("seq").alias("a"), F.max("seq").alias("b")).first()
    return None if row is None or row.a is None else (int(row.a), int(row.b))


def _remote_ranges(spark, uri: str) -> list[tuple[str, Range | None]]:
    from ..changelog import is_changelog_file
    from .fs import OutputFS

    fs = OutputFS(spark, uri)
    try:
        statuses = list(fs.fs.listStatus(fs.path()))
    finally:
        fs.close()
    found = []
    for st in statuses:
        name = st.getPath().getName()
        if st.isDirectory() or not is_changelog_file(name):
            continue
        key = (st.getPath().toString(), int(st.getLen()), int(st.getModificationTime()))
        if key not in _REMOTE_RANGES:
            _REMOTE_RANGES[key] = _remote_range(spark, key[0])
        found.append((name, _REMOTE_RANGES[key]))
    return found


def file_ranges(spark, changelog: Any) -> list[tuple[str, Range | None]]:
    """``(file name, (first seq, last seq) | None)`` of each change-log file directly in the
    directory ``changelog`` (a ``Path``, or a URI string of another filesystem)."""
    if isinstance(changelog, Path):
        return _local_ranges(changelog)
    return _remote_ranges(spark, str(changelog))


def choose_files(ranges: list[tuple[str, Range | None]], committed: int | None,
                 max_events: int) -> tuple[frozenset[str], bool]:
    """``(names, more)``: the files of the next batch (module docstring) and whether files past
    it hold events past the committed seq.  Files without a seq (empty, or nothing readable
    yet) come first: they add nothing to the span."""
    order = sorted(ranges, key=lambda nr: (-1, -1) if nr[1] is None else nr[1])
    base = 0 if committed is None else committed  # before a commit: from 0 (a first batch may be one file)
    names: list[str] = []
    span_end = None
    for name, rng in order:
        if rng is None or (committed is not None and rng[1] <= committed):
            names.append(name)
            continue
        if span_end is not None and rng[1] - base > max_events:
            return frozenset(names), True
        names.append(name)
        span_end = rng[1]
    return frozenset(names), False


def file_batch(spark, changelog: Any, committed: int | None, max_events: int) -> tuple[frozenset[str] | None, bool]:
    """``(names, more)`` of ``choose_files`` for the directory ``changelog``; ``(None, False)``
    when everything fits in one batch (read the directory as it is)."""
    names, more = choose_files(file_ranges(spark, changelog), committed, max_events)
    return (names, True) if more else (None, False)
