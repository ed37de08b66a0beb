"""Reading a change log with Spark (and the few bytes of it the driver reads itself).

Owns: which files a run reads (``inputs_of``: a path's change-log files, ``ddlcore.changelog.
changelog_files``; ``remote_inputs``: a URI's, through Hadoop), what of a capture's output is
final (``capture_bound``: its checkpoint, ``ddlcore.capture.read_checkpoint_bound``), reading
only what the committed runs have not read (``incremental_inputs``: the tails of grown files,
by offset and fingerprint), the event as Spark reads it (``EVENT_SCHEMA_DDL``, ``read_events``:
the event columns, ``_line``, ``_file``, ``_valid``; the cheap filters of the DDL pass and of
the lines before the checkpoint: ``MAYBE_HISTORY``, ``SEQ_MEMBER``), and what a malformed line
is quarantined as (``malformed_records``, ``malformed_from_rows``: its file and line number; a
torn last line left for a later run).  Must not know: table versions, conversion, the commit.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import tempfile
import zlib
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..changelog import HISTORY_OPS, OPS
from ..errors import PipelineError
from .frames import local_frame, union
from .quarantine import QuarantineRecord

if TYPE_CHECKING:  # pragma: no cover
    from .commit import OutputState
    from .fs import OutputFS

__all__ = ["EVENT_SCHEMA_DDL", "EVENT_COLUMNS", "ALL_OPS", "MAYBE_HISTORY", "SEQ_MEMBER", "SEQ_LETTER_ESCAPE",
           "Inputs", "Tail", "CaptureBound", "capture_bound", "remote_inputs", "inputs_of", "only_files",
           "incremental_inputs",
           "read_events", "unreadable_input", "line_object", "malformed_records", "malformed_from_rows",
           "plain_path"]

#: the change-log event as Spark reads it (row images as array<string>: ddlcore.raw text form;
#: ``catalog`` and ``source`` as their JSON text)
EVENT_SCHEMA_DDL = ("seq LONG, position STRING, ts LONG, op STRING, database STRING, "
                    "`table` STRING, ddl STRING, before ARRAY<STRING>, after ARRAY<STRING>, "
                    "`schema` STRING, tx STRING, `row` LONG, quarantine STRING, snapshot BOOLEAN, "
                    "search_path ARRAY<STRING>, catalog STRING, source STRING")
#: every op (``ddlcore.changelog``, the contract, defines them and ``ROW_OPS``, ``HISTORY_OPS``)
ALL_OPS = tuple(sorted(OPS))


def _op_regex(*ops: str) -> str:
    """A regex matching ``"op": "<one of ops>"`` in a JSON line, with any JSON whitespace and
    any letter spelt as a ``\\u`` escape (JSON has no other way to write them): exact as a
    pre-filter — a line whose parsed ``op`` is one of ``ops`` matches it."""
    def letters(word: str) -> str:
        return "".join(f"({ch}|\\\\u00{ord(ch):02x}|\\\\u00{ord(ch):02X})" for ch in word)
    return rf'"{letters("op")}"\s*:\s*"(' + "|".join(letters(o) for o in ops) + ')"'


def _op_prefilter(value, *ops: str):
    """A Spark condition on a line's text (``value``) true for every line ``_op_regex(*ops)``
    matches, and cheap: the line holds ``"<op>"`` as written or a ``\\u`` escape (one of the
    regex's letters spelt as one).  Byte searches, no regex and no conversion of the line to a
    Java string: and-ed before the regex, it leaves the regex to the few lines that pass (a
    quarter of the DDL pass's time on a log of row events)."""
    from functools import reduce

    return reduce(lambda a, b: a | b, [value.contains(f'"{o}"') for o in ops] + [value.contains("\\u")])


#: a line whose event may be recorded in the history (``ddl`` or ``source``)
MAYBE_HISTORY = _op_regex(*HISTORY_OPS)
#: the same over bytes (``\s`` ASCII whitespace only, as in Java's regular expressions)
_MAYBE_HISTORY_BYTES = re.compile(MAYBE_HISTORY.encode("ascii"))
_OPTIONAL_COLUMNS = (("schema", "STRING"), ("tx", "STRING"), ("row", "LONG"), ("quarantine", "STRING"),
                     ("snapshot", "BOOLEAN"), ("search_path", "STRING"), ("catalog", "STRING"),
                     ("source", "STRING"))


class Inputs(tuple):
    """``(JSON Lines files, Parquet files)`` of a change log, and ``bound``: what of a
    capture's output directory is final (``CaptureBound``), or ``None``; ``tails``: the JSON
    Lines files that are copies of the unread end of a change-log file (``Tail``:
    ``incremental_inputs``)."""

    bound: "CaptureBound | None" = None
    tails: "tuple[Tail, ...]" = ()
    #: some file is read from where the committed runs ended (or not at all): its part before
    #: that was read by them, so the log's identity is the one they recorded
    continued: bool = False
    #: every input is such a tail and none holds a line that may be a ``ddl``/``source`` event
    #: (``MAYBE_HISTORY``, over the bytes): the DDL pass would find nothing
    no_history: bool = False
    #: some input is read whole (not a tail); the bytes of the tails
    whole: bool = True
    tail_bytes: int = 0


@dataclass(frozen=True)
class Tail:
    """A copy (``copy``: the URI Spark reads; Spark's ``input_file_name()`` of it ends in
    ``suffix``) of a change-log file's bytes from byte ``start`` on; ``origin``: the file's
    URI as ``input_file_name()`` gives it when Spark reads the file itself, so a line read
    from the copy names its own file (``_file``)."""

    copy: str
    suffix: str
    origin: str
    start: int


@dataclass(frozen=True)
class CaptureBound:
    """A capture's output read while the capture may be running or may have been killed: only
    what its ``checkpoint.json`` covers is final.  ``seq``: the last checkpointed seq (events
    after it may be truncated and written again by the capture's restart, and a snapshot
    restarted from scratch); ``changelog``, ``durable_bytes``: the change-log file and the
    length of its checkpointed prefix — a malformed line past it is a line still being written
    (torn by a kill), never quarantined."""

    seq: int
    changelog: Path
    durable_bytes: int
    phase: str


def capture_bound(changelog: Path) -> CaptureBound | None:
    """What of a capture's output (``changelog``: its directory or its change-log file) is
    final, by the checkpoint the capture keeps beside its change log
    (``ddlcore.capture.read_checkpoint_bound``).  While the first run's snapshot is in progress
    (``phase`` ``snapshot``: a restart may start it over) nothing is final."""
    from ..capture import CHANGELOG_NAME, read_checkpoint_bound

    if not changelog.is_dir() and changelog.name != CHANGELOG_NAME:
        return None
    cp = read_checkpoint_bound(changelog if changelog.is_dir() else changelog.parent)
    if cp is None:
        return None
    seq, nbytes = (cp.seq, cp.changelog_bytes) if cp.phase == "streaming" else (0, 0)
    return CaptureBound(seq, cp.changelog.resolve(), nbytes, cp.phase)


def remote_inputs(spark, uri: str) -> tuple[list[str], list[str]]:
    """``inputs_of`` of a change log that is a URI of another filesystem, listed through
    Hadoop's FileSystem: a file, or the change-log files directly in a directory (sorted by
    name).  Raises ``FileNotFoundError`` / ``PipelineError`` as ``inputs_of`` does."""
    from ..changelog import CHANGELOG_SUFFIXES, is_changelog_file
    from .fs import OutputFS

    fs = OutputFS(spark, uri)
    try:
        if not fs.exists():
            raise FileNotFoundError(f"change log not found: {uri}")
        if not fs.is_dir():
            files = [fs.uri]
        else:
            files = [fs.str(name) for name, is_dir in fs.list() if not is_dir and is_changelog_file(name)]
            if not files:
                raise PipelineError(f"no change-log files (*{', *'.join(CHANGELOG_SUFFIXES)}) in {uri}")
    finally:
        fs.close()
    parquet = [f for f in files if f.endswith(".parquet")]
    return [f for f in files if not f.endswith(".parquet")], parquet


def only_files(inputs: tuple[list[str], list[str]], names: frozenset[str] | None) -> Inputs:
    """``inputs`` without the files whose names are not in ``names`` (``None``: all kept; a
    batch of whole files of ``run --follow --max-batch-events``: ``ddlcore.spark.filebatch``);
    the ``bound`` is kept."""
    if names is None:
        return inputs
    kept = Inputs(tuple([f for f in files if f.rstrip("/").rsplit("/", 1)[-1] in names] for files in inputs))
    kept.bound = getattr(inputs, "bound", None)
    return kept


def inputs_of(changelog: Path) -> Inputs:
    """``(JSON Lines files, Parquet files)`` of a change log (a file, or a directory read as
    its change-log files: ``ddlcore.changelog.changelog_files``), with the capture bound of a
    capture's output (``capture_bound``)."""
    from ..changelog import ChangeLogError, changelog_files

    try:
        files = changelog_files(changelog)
    except ChangeLogError as exc:
        raise PipelineError(str(exc)) from None
    parquet = [str(f) for f in files if f.suffix == ".parquet"]
    text = [str(f) for f in files if f.suffix != ".parquet"]
    inputs = Inputs((text, parquet))
    inputs.bound = capture_bound(changelog)
    return inputs


#: a change-log file's consumed prefix is recognised by SHA-256 over its length, its first
#: and its last ``_FP_EDGE`` bytes and ``_FP_SAMPLES`` blocks of ``_FP_BLOCK`` bytes spread
#: evenly between (about 0.2 MB read, whatever the file's size)
_FP_EDGE, _FP_BLOCK, _FP_SAMPLES = 1 << 16, 1 << 12, 32
#: the tail of a change-log file is copied in chunks of this many bytes
_COPY_CHUNK = 1 << 22


def _prefix_fingerprint(fh, offset: int) -> str:
    """The fingerprint (hex SHA-256) of the first ``offset`` bytes of the binary file ``fh``:
    over ``offset`` and the sampled spans of ``_FP_EDGE``/``_FP_BLOCK``/``_FP_SAMPLES``.  It
    tells the prefix a run consumed from a file rotated, replaced, truncated, rewritten or
    compressed in its place (their first bytes — the first events' seqs, positions, a source
    event's epoch — or their bytes before ``offset`` — the last consumed event's seq — differ);
    an edit inside the consumed part that leaves every sampled byte alone is not seen (a
    change-log file is expected to be appended to, never edited in place: docs/pipeline.md,
    "Incremental runs")."""
    h = hashlib.sha256(b"%d\n" % offset)
    spans = [(0, _FP_EDGE)]
    spans += [(offset * i // (_FP_SAMPLES + 1), _FP_BLOCK) for i in range(1, _FP_SAMPLES + 1)]
    spans.append((max(0, offset - _FP_EDGE), _FP_EDGE))
    for start, n in spans:
        n = max(0, min(n, offset - start))
        fh.seek(start)
        data = fh.read(n)
        if len(data) != n:  # shorter than the prefix: cannot be it
            return "short"
        h.update(data)
    return h.hexdigest()


def _line_end(fh, start: int, end: int) -> int:
    """The offset just past the last ``\n`` among bytes ``[start, end)`` of the binary file
    ``fh`` (``start`` if there is none): where the complete lines end."""
    pos = end
    while pos > start:
        n = min(1 << 16, pos - start)
        fh.seek(pos - n)
        i = fh.read(n).rfind(b"\n")
        if i >= 0:
            return pos - n + i + 1
        pos -= n
    return start


def incremental_inputs(spark, fs: "OutputFS", inputs: Inputs, marks: dict[str, dict[str, Any]],
                        run_id: str) -> tuple[Inputs, dict[str, dict[str, Any]]]:
    """The change-log files this run reads, and what it consumes of each (the new
    ``inputs.json``, committed with the run).

    A committed run records, per local uncompressed JSON Lines file, the length of the
    complete lines it read (``offset``: for a capture's file no more than the prefix its
    checkpoint covers, ``CaptureBound.durable_bytes``) and ``_prefix_fingerprint`` of them.
    The next run checks that the file still starts with those bytes (at least ``offset``
    bytes long, same fingerprint); then every line before ``offset`` was read by a committed
    run (processed, or quarantined once), so only the bytes after it are read: they are
    copied into ``OUT/_state/staging/<run>.tail/`` (deleted with the staging area) and read
    from there (``Tail``), and a file with nothing after it is not read at all.  Any other
    file — a first run, a file rotated, replaced, truncated or grown by a rewrite, a
    compressed file (Hadoop's codec by its name), a URI of another filesystem, Parquet — is
    read whole, as before (the lines before the checkpoint are still left out unparsed:
    ``read_events``' ``after_seq``).  Either way the filters on ``seq`` stay, so reading
    more than is new never writes a row twice.  ``marks``: the previous run's
    ``inputs.json`` files (``OutputState.marks``).  Returns ``(inputs, new marks)``."""
    from .fs import is_uri

    text, parquet = inputs
    bound = getattr(inputs, "bound", None)
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    codecs = jvm.org.apache.hadoop.io.compress.CompressionCodecFactory(conf)
    read: list[str] = []
    tails: list[Tail] = []
    new_marks: dict[str, dict[str, Any]] = {}
    whole = bool(parquet)  # some input is read whole
    history = False  # some tail may hold a ddl or source event
    continued = False
    tail_bytes = 0
    for i, name in enumerate(text):
        hpath = jvm.org.apache.hadoop.fs.Path(name)
        if is_uri(name) or codecs.getCodec(hpath) is not None:
            read.append(name)
            whole = True
            continue
        real = os.path.realpath(plain_path(name))
        with open(real, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            mark = marks.get(real)
            start = 0
            if (mark is not None and 0 < int(mark["offset"]) <= size
                    and _prefix_fingerprint(fh, int(mark["offset"])) == mark["fingerprint"]):
                start = int(mark["offset"])
            end = _line_end(fh, start, size)
            if bound is not None and Path(real) == bound.changelog:  # only its checkpointed prefix is final
                end = max(start, min(end, bound.durable_bytes))
            new_marks[real] = {"offset": end, "fingerprint": _prefix_fingerprint(fh, end)}
            if start == 0:
                read.append(name)
                whole = True
                continue
            continued = True
            if start == size:  # nothing new in it
                continue
            rel = f"{_tail_dir(run_id)}/{i}.jsonl"
            history = _copy_range(fh, start, size, fs, rel) or history
            tail_bytes += size - start
        origin = hpath.getFileSystem(conf).makeQualified(hpath).toUri().toString()
        read.append(fs.str(rel))
        tails.append(Tail(fs.str(rel), f"/{run_id}.tail/{i}.jsonl", origin, start))
    out = Inputs((read, parquet))
    out.bound = bound
    out.tails = tuple(tails)
    out.continued = continued
    out.no_history = not whole and not history
    out.whole, out.tail_bytes = whole, tail_bytes
    return out, new_marks


def _tail_dir(run_id: str) -> str:
    """Where a run's copies of change-log tails are staged (relative to the output)."""
    return f"_state/staging/{run_id}.tail"


def _copy_range(fh, start: int, end: int, fs: "OutputFS", rel: str) -> bool:
    """Bytes ``[start, end)`` of the binary file ``fh`` into the output's file ``rel`` (in
    place on a local output, else through a local temporary file and Hadoop's copy).  Returns
    whether some line of them matches ``MAYBE_HISTORY`` (the DDL pass's filter, which Spark
    applies per line with the same — ASCII — pattern: no match here, none there)."""
    maybe = False

    def copy(dst) -> None:
        nonlocal maybe
        fh.seek(start)
        left, carry = end - start, b""
        while left > 0:
            chunk = fh.read(min(_COPY_CHUNK, left))
            if not chunk:
                raise PipelineError(f"{fh.name}: the file shrank while it was read (a change-log file must only grow)")
            dst.write(chunk)
            left -= len(chunk)
            if not maybe:  # whole lines only (a match never spans a line)
                cut = chunk.rfind(b"\n") + 1 if left else len(chunk)
                maybe = _MAYBE_HISTORY_BYTES.search(carry + chunk[:cut]) is not None
                carry = chunk[cut:] if cut else carry + chunk

    if fs.local_root is not None:
        target = Path(fs.local_root) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "wb") as dst:
            copy(dst)
        return maybe
    with tempfile.NamedTemporaryFile(prefix="ddlcore-tail-", suffix=".jsonl") as tmp:
        copy(tmp)
        tmp.flush()
        fs.copy_from_local(tmp.name, rel)
    return maybe


#: a ``"seq": N`` member with a plain integer value in a JSON line (the value ends at ``,`` or
#: ``}``: ``1e3`` or ``12.0`` do not match)
SEQ_MEMBER = r'"seq"\s*:\s*(-?[0-9]+)\s*[,}]'
#: a ``\u`` escape of a letter of ``seq`` (a key spelt with one is not matched by SEQ_MEMBER)
SEQ_LETTER_ESCAPE = r'\\u00(73|65|71)'


def read_events(spark, inputs: Inputs, *, history_only: bool = False,
                 after_seq: int | None = None, skipped=None):
    """Events as a DataFrame: the event columns, ``_line`` (the raw text), ``_file`` and
    ``_valid``.  ``history_only``: only lines that may hold ``ddl``/``source`` events are
    parsed (a superset of them; the caller still filters on ``op``) — the cheap pass that
    collects the DDL.  A capture's output is read up to its checkpoint (``inputs.bound``:
    events with a larger seq are left for a later run).  ``after_seq``: JSON lines whose
    every ``"seq": N`` member (the event's and any nested one) has N ≤ ``after_seq`` are left
    out unparsed — an incremental run parses only the new lines; a line with no such member, a ``seq`` key spelt with ``\\u``
    escapes, a ``seq`` that is not a plain int64, or a line not ending in ``}`` (torn) is
    parsed as before, so every line the caller would keep (``seq`` null or past
    ``after_seq``) is still there.  ``skipped``: an ``Observation`` given ``max_seq``, the
    largest N of the lines left out (for the check that the log reaches the checkpoint)."""
    from pyspark.sql import functions as F

    text_files, parquet_files = inputs
    frames = []
    if text_files:
        text = spark.read.text(text_files).where(F.trim("value") != "")
        if history_only:
            text = text.where(_op_prefilter(F.col("value"), *HISTORY_OPS) & F.col("value").rlike(MAYBE_HISTORY))
        if after_seq is not None:
            found = F.transform(F.regexp_extract_all(F.col("value"), F.lit(SEQ_MEMBER), 1),
                                lambda n: n.try_cast("long"))
            old = F.coalesce((F.size(found) > 0)
                             & F.forall(found, lambda n: n.isNotNull() & (n <= F.lit(after_seq)))
                             & ~F.col("value").rlike(SEQ_LETTER_ESCAPE)
                             & F.rtrim(F.col("value")).endswith("}"), F.lit(False))
            if skipped is not None:
                text = text.observe(skipped, F.max(F.when(old, F.array_max(found))).alias("max_seq"))
            text = text.where(~old)
        file = F.input_file_name()
        for tail in getattr(inputs, "tails", ()):  # a copy's lines name the file they were copied from
            file = F.when(F.input_file_name().endswith(tail.suffix), F.lit(tail.origin)).otherwise(file)
        parsed = text.select(F.col("value").alias("_line"), file.alias("_file"),
                             F.from_json("value", EVENT_SCHEMA_DDL, {"mode": "PERMISSIVE"}).alias("e"))
        frames.append(parsed.select("_line", "_file", "e.*"))
    if parquet_files:
        df = spark.read.parquet(*parquet_files)
        for name, typ in _OPTIONAL_COLUMNS:  # a log of the first contract lacks them
            if name not in df.columns:
                df = df.withColumn(name, F.lit(None).cast(typ))
        if history_only:
            df = df.where(F.col("op").isin(*HISTORY_OPS))
        df = (df.withColumn("_line", F.to_json(F.struct(*[F.col(c) for c in df.columns])))
                .withColumn("_file", F.input_file_name())
                .withColumn("before", F.from_json("before", "ARRAY<STRING>"))
                .withColumn("after", F.from_json("after", "ARRAY<STRING>"))
                .withColumn("search_path", F.from_json("search_path", "ARRAY<STRING>")))
        frames.append(df.select("_line", "_file", *[F.col(f"`{c}`") for c in EVENT_COLUMNS]))
    if not frames:  # an incremental run on files with nothing new
        frames.append(local_frame(spark, [], "_line STRING, _file STRING, " + EVENT_SCHEMA_DDL))
    df = union(frames)
    bound = getattr(inputs, "bound", None)
    if bound is not None:
        df = df.where(F.col("seq").isNull() | (F.col("seq") <= F.lit(bound.seq)))
    ops = F.col("op")
    valid = (F.col("seq").isNotNull() & F.col("position").isNotNull() & ops.isin(*ALL_OPS)
             & F.when(ops.isin("ddl", "stmt"), F.col("ddl").isNotNull())
                .when(ops == "source", F.col("source").isNotNull())
                .otherwise(F.col("table").isNotNull()
                           & F.when(ops.isin("c", "r"), F.col("after").isNotNull())
                           .when(ops == "u", F.col("after").isNotNull() & F.col("before").isNotNull())
                           .when(ops == "d", F.col("before").isNotNull())
                           .otherwise(F.lit(True))))
    return df.withColumn("_valid", F.coalesce(valid, F.lit(False)))


EVENT_COLUMNS = [c.split(" ")[0].strip("`") for c in EVENT_SCHEMA_DDL.split(", ")]


def unreadable_input(inputs: tuple[list[str], list[str]]) -> str | None:
    """Why a change-log file cannot be read (a truncated or corrupt gzip file, a file that is
    not UTF-8), naming the file and the byte offset; ``None`` if every file reads."""
    from .fs import is_uri

    for name in inputs[0]:
        if is_uri(name):  # not read here (another filesystem): Spark's own error stands
            continue
        path = Path(plain_path(name))
        if path.suffix == ".gz":
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            offset = 0
            try:
                with open(path, "rb") as fh:
                    while chunk := fh.read(1 << 20):
                        d.decompress(chunk)
                        offset += len(chunk)
                        while d.unused_data:  # a multi-member gzip file
                            rest = d.unused_data
                            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
                            d.decompress(rest)
            except zlib.error as exc:
                return f"{path}: corrupt gzip data near byte {offset} ({exc}); nothing was written"
            if not d.eof:
                return (f"{path}: truncated gzip file (the stream ends at byte {offset} before its end "
                        f"marker); nothing was written")
    return None


def line_object(line: str) -> Any:
    obj = json.loads(line)
    if isinstance(obj, dict):  # a Parquet row's JSON: its JSON-text fields as values
        for k in ("catalog", "source", "search_path", "before", "after"):
            if isinstance(obj.get(k), str):
                try:
                    obj[k] = json.loads(obj[k])
                except ValueError:
                    pass
        for k in ("schema", "tx", "row", "quarantine", "snapshot", "catalog", "source", "search_path"):
            if k in obj and obj[k] is None:
                del obj[k]
    return obj


def malformed_records(spark, part_dir: str, state: OutputState, inputs: Inputs | tuple = ((), ()), *,
                       on_held: Callable[[str], None] | None = None) -> tuple[list[QuarantineRecord], list[str]]:
    """Quarantine records of the malformed lines staged in ``part_dir``, each reason naming
    the file and line number; a line without a ``seq`` is quarantined once (its key, made of
    its file, text and occurrence — the how-manieth line of that text in the file — is
    remembered in ``malformed.json``; a file read from an offset, ``inputs.tails``, counts
    the lines of that text before it too).  In a capture's change log (``inputs.bound``) only
    the lines of its checkpointed prefix count: a line past it is being written (or was torn
    by a kill, and the capture's restart truncates it).  Returns the records and the keys of
    the seq-less lines quarantined now."""
    rows = spark.read.parquet(str(part_dir)).select("seq", "position", "op", "database", "schema", "table",
                                                     "_line", "_file").collect()
    return malformed_from_rows(rows, state, inputs, on_held=on_held)


def malformed_from_rows(rows: list, state: OutputState, inputs: Inputs | tuple = ((), ()), *,
                        on_held: Callable[[str], None] | None = None) -> tuple[list[QuarantineRecord], list[str]]:
    """``malformed_records`` of malformed lines given as ``rows`` (mappings with ``seq``,
    ``position``, ``op``, ``database``, ``schema``, ``table`` as the Spark reader parsed them,
    ``_line`` the raw text, ``_file`` its file's URI).  The last line of a local file that has
    no end of line yet is a line being appended, not a malformed one: it is left out (``on_held``
    is given a line naming it) and a later run reads it whole (``_held_tails``)."""
    from ..changelog import validate

    rows = _held_tails(rows, on_held or (lambda msg: None))

    bound = getattr(inputs, "bound", None)
    starts = {t.origin: t.start for t in getattr(inputs, "tails", ())}
    if bound is not None:
        durable = None
        kept = []
        for r in rows:
            if r["_file"] and Path(plain_path(r["_file"])).resolve() == bound.changelog:
                if durable is None:
                    durable = _complete_lines(bound.changelog, bound.durable_bytes)
                if (r["_line"] or "") not in durable:
                    continue
            kept.append(r)
        rows = kept
    wanted: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        if r["_file"]:
            wanted[r["_file"]].add(r["_line"])
    numbers = {f: _line_numbers(f, lines) for f, lines in wanted.items()}
    known = state.malformed_keys()
    seen: dict[tuple[str, str], int] = defaultdict(int)
    records, new_keys = [], []
    for r in sorted(rows, key=lambda r: (r["_file"] or "", r["_line"] or "")):
        file, line = r["_file"] or "?", r["_line"] or ""
        found = numbers.get(file, {}).get(line, [])
        if (file, line) not in seen and file in starts:  # the lines of this text before the part read
            seen[(file, line)] = sum(1 for _, at in found if at < starts[file])
        occurrence = seen[(file, line)]
        seen[(file, line)] += 1
        nums = [no for no, _ in found]
        where = f"{plain_path(file)}:{nums[occurrence]}" if occurrence < len(nums) else plain_path(file)
        try:
            obj = json.loads(line)
            validate(obj)
            why = "malformed event"
        except ValueError as exc:
            why = f"malformed event: {exc}"
        if r["seq"] is None:
            key = hashlib.sha256(f"{file}\0{line}\0{occurrence}".encode("utf-8", "surrogatepass")).hexdigest()
            if key in known:
                continue
            new_keys.append(key)
        records.append(QuarantineRecord(r["seq"], r["position"], r["op"], r["database"], r["schema"], r["table"],
                                        f"{where}: {why}", line))
    return records, new_keys


def _held_tails(rows: list, on_held: Callable[[str], None]) -> list:
    """``rows`` without those whose ``_line`` is the unterminated last line of their local,
    uncompressed file (``_unterminated_tail``): a writer is still appending it (a torn line
    read as malformed would be quarantined, and the whole line, once written, read again)."""
    tails: dict[str, str | None] = {}
    kept = []
    for r in rows:
        file = r["_file"]
        if file and file not in tails:
            tails[file] = _unterminated_tail(Path(plain_path(file)))
        tail = tails.get(file) if file else None
        if tail is not None and (r["_line"] or "") == tail:
            on_held(f"{plain_path(file)}:{_count_lines(Path(plain_path(file)))}: the last line has no end of line "
                f"and is not a complete event (a writer still appending it?): left for a later run")
            continue
        kept.append(r)
    return kept


def _unterminated_tail(path: Path, block: int = 1 << 16) -> str | None:
    """The text after the last newline of ``path`` when the file does not end with one (a
    local, uncompressed file only), else ``None``."""
    if path.suffix in (".gz", ".parquet") or not path.is_file():
        return None
    with open(path, "rb") as fh:
        end = fh.seek(0, os.SEEK_END)
        if end == 0 or (fh.seek(end - 1) >= 0 and fh.read(1) == b"\n"):
            return None
        tail = b""
        while end > 0 and b"\n" not in tail:
            start = max(0, end - block)
            fh.seek(start)
            tail = fh.read(end - start) + tail
            end = start
    return tail.rsplit(b"\n", 1)[-1].decode("utf-8", "replace").rstrip("\r")


def _count_lines(path: Path) -> int:
    """The number of the last line of ``path`` (1-based; a last line without newline counts)."""
    with open(path, "rb") as fh:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b"")) + 1


def _complete_lines(path: Path, nbytes: int) -> set[str]:
    """The complete lines (newline-terminated) of the first ``nbytes`` bytes of ``path``."""
    with open(path, "rb") as fh:
        data = fh.read(nbytes)
    return {raw.decode("utf-8", "replace").rstrip("\r") for raw in data.split(b"\n")[:-1]}


def plain_path(uri: str) -> str:
    """A local path from Spark's ``input_file_name()`` URI (``file:///a/b%20c`` → ``/a/b c``)."""
    from urllib.parse import unquote, urlparse

    return unquote(urlparse(uri).path) if uri.startswith("file:") else uri


def _line_numbers(uri: str, lines: set[str]) -> dict[str, list[tuple[int, int]]]:
    """Where each of ``lines`` occurs in a JSON Lines file: ``(line number, 1-based; byte
    offset of the line's start, in the uncompressed text)`` each, in file order."""
    path = Path(plain_path(uri))
    found: dict[str, list[tuple[int, int]]] = defaultdict(list)
    if not path.exists() or path.suffix == ".parquet":
        return found
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as fh:
            at = 0
            for no, raw in enumerate(fh, start=1):
                text = raw.decode("utf-8", "replace").rstrip("\r\n")
                if text in lines:
                    found[text].append((no, at))
                at += len(raw)
    except (OSError, EOFError, zlib.error):
        pass
    return found
