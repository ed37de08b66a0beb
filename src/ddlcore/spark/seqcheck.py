"""The seq rule over a change log's files (docs/pipeline.md, "Guarantees"): ``seq`` increases
strictly over all the files of a change log (docs/changelog.md), so the seq ranges of two files
never overlap.  A copy of a file beside it (``a.jsonl`` and ``a-copy.jsonl``), or a compressed
copy kept by ``gzip -k``, breaks it: read as they are, every event in both would be written
twice.  ``check_files`` refuses such a change log before anything is read, naming both files.

Owns: a change-log file's seq range, read cheaply on the driver — the first and the last event
of an uncompressed JSON Lines file (a few KB at each end, whatever its size), a gzip file's
stream decompressed once (keeping its last lines only), a Parquet file's ``seq`` column
statistics — and the overlap rule.  A capture's directory (``checkpoint.json`` beside
``changelog.jsonl``) holds one change-log file only: any other (``changelog.jsonl.gz``) is a
copy that the capture's checkpoint does not bound, refused by name.  Inside a run, a seq given
twice among its events past the checkpoint (``first_duplicate`` on the driver's path;
``span_columns`` / ``span_has_duplicate`` observed by Spark's staging pass, then the files
named by one more pass) is refused too.  Must not know: how a run reads its events (a change
log given as a URI of another filesystem gets no file-range check).
"""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

import pyarrow.parquet as pq

from ..errors import PipelineError

__all__ = ["check_files", "seq_range", "SeqRange", "duplicate_error", "first_duplicate", "span_columns",
           "span_has_duplicate"]

#: lines read at each end of a file to find its first and last seq (a malformed line is skipped)
_LINES = 64
_BLOCK = 1 << 16

SeqRange = tuple[int, int]


def _seq(line: bytes) -> int | None:
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    seq = obj.get("seq") if isinstance(obj, dict) else None
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


def _first(lines: list[bytes]) -> int | None:
    return next((s for s in map(_seq, lines[:_LINES]) if s is not None), None)


def _last(lines: list[bytes]) -> int | None:
    return next((s for s in map(_seq, reversed(lines[-_LINES:])) if s is not None), None)


def _text_range(path: Path) -> SeqRange | None:
    with open(path, "rb") as fh:
        head = fh.read(_BLOCK * 4).split(b"\n")
        fh.seek(0, 2)
        size = fh.tell()
        fh.seek(max(0, size - _BLOCK * 4))
        tail = fh.read().split(b"\n")
    first, last = _first(head), _last(tail[1:] if size > _BLOCK * 4 else tail)  # (a torn piece does not parse)
    return None if first is None or last is None else (first, last)


def _gzip_range(path: Path) -> SeqRange | None:
    first = None
    keep = b""
    try:
        with gzip.open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                if first is None:
                    keep += chunk
                    first = _first(keep.split(b"\n")[:-1])
                    keep = keep[-_BLOCK * 4:] if first is not None or len(keep) > _BLOCK * 16 else keep
                else:
                    keep = (keep + chunk)[-_BLOCK * 4:]
    except (OSError, EOFError, zlib.error):  # truncated or corrupt: the run names it (_unreadable_input)
        return None
    if first is None:
        first = _first(keep.split(b"\n"))
    last = _last(keep.split(b"\n"))
    return None if first is None or last is None else (first, last)


def _parquet_range(path: Path) -> SeqRange | None:
    meta = pq.ParquetFile(path).metadata
    names = [meta.schema.column(i).path for i in range(meta.num_columns)]
    if "seq" not in names or meta.num_rows == 0:
        return None
    col = names.index("seq")
    lo, hi = [], []
    for g in range(meta.num_row_groups):
        st = meta.row_group(g).column(col).statistics
        if st is None or not st.has_min_max:
            column = pq.read_table(path, columns=["seq"]).column("seq")
            values = [v for v in column.to_pylist() if v is not None]
            return (min(values), max(values)) if values else None
        lo.append(st.min)
        hi.append(st.max)
    return min(lo), max(hi)


_READERS = ((".parquet", _parquet_range), (".gz", _gzip_range))


def seq_range(path: str | Path) -> SeqRange | None:
    """``(first seq, last seq)`` of a local change-log file (JSON Lines, gzip or Parquet), the
    seqs of its first and last events (of at most ``_LINES`` lines at each end: malformed
    lines are passed over); ``None`` when none is found or the file cannot be read."""
    p = Path(path)
    reader = next((fn for suffix, fn in _READERS if p.name.endswith(suffix)), _text_range)
    return reader(p)


def check_files(files: list[str], capture_log: Path | None = None) -> None:
    """Refuse (``PipelineError``, one line naming both files) a change log whose local files
    ``files`` have overlapping seq ranges, or — ``capture_log``: the ``changelog.jsonl`` of a
    capture's directory — that holds another file beside the capture's."""
    if capture_log is not None:
        others = [f for f in files if Path(f).resolve() != capture_log]
        if others and len(others) < len(files):
            raise PipelineError(
                f"{capture_log.parent} is a capture's directory, yet holds {Path(others[0]).name} besides its "
                f"{capture_log.name}: a copy (such as gzip -k leaves) would be read twice and is not bounded by "
                f"the capture's checkpoint; move it out of the directory")
    if len(files) < 2:
        return
    ranges = sorted((r, f) for f in files if (r := seq_range(f)) is not None)
    widest = ranges[0] if ranges else None  # of the files before, the one reaching furthest
    for b, fb in ranges[1:]:
        a, fa = widest
        if b[1] > a[1]:
            widest = (b, fb)
        if b[0] <= a[1]:
            raise PipelineError(
                f"change-log files {fa} (seq {a[0]}..{a[1]}) and {fb} (seq {b[0]}..{b[1]}) overlap: seq must "
                f"increase over all the files of a change log, and a copy would write its events twice; "
                f"remove one of them")


# -- a seq twice among one run's events --------------------------------------------------------


def duplicate_error(seq: int, files: list[str]) -> PipelineError:
    """The one-line error of ``seq`` found in several of a run's events, naming their files."""
    return PipelineError(f"seq {seq} appears {len(files)} times in the change log ({' and '.join(files)}): seq "
                         f"must increase strictly over the log, and its events would be written twice")


def first_duplicate(events) -> PipelineError | None:
    """Among ``(seq, file)`` pairs (a run's events past the checkpoint, in any order; ``seq``
    ``None`` is passed over), the error for the smallest seq given more than once, else ``None``."""
    where: dict[int, list[str]] = {}
    for seq, file in events:
        if seq is not None:
            where.setdefault(seq, []).append(file)
    dups = sorted(s for s, files in where.items() if len(files) > 1)
    return duplicate_error(dups[0], where[dups[0]]) if dups else None


def span_columns():
    """Aggregates for a Spark ``Observation`` of a run's events past the checkpoint:
    ``seqs`` (events with a seq), ``min_seq``, ``max_seq`` — no shuffle, no extra pass."""
    from pyspark.sql import functions as F

    return [F.count("seq").alias("seqs"), F.min("seq").alias("min_seq"), F.max("seq").alias("max_seq")]


def span_has_duplicate(observed: dict) -> bool:
    """Whether the observed ``span_columns`` prove a seq given twice: more events with a seq
    than integers between the least and the greatest (pigeonhole).  Exact for a log without
    gaps (a capture's); a repeated seq in a log with gaps of its own can go unseen."""
    n, lo, hi = observed.get("seqs") or 0, observed.get("min_seq"), observed.get("max_seq")
    return bool(n) and lo is not None and n > hi - lo + 1
