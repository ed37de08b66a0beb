"""The job on the driver: tagging, conversion and writing in Python and Arrow, without Spark jobs.

Owns the driver's two execution paths. A small incremental run (``DriverIncrement``): deciding
whether a run's new lines can be handled on the driver, and then doing there, in Python, what
the Spark path of ``ddlcore.spark.pipeline`` does with Spark jobs — reading the lines as
Spark's JSON reader reads them, tagging each row event with the table version in force at its
``seq`` (``tag_events``: ``tagging.tag``'s Python face), converting it with ``RowConverter``'s
Python face (property-tested to agree with the JVM face: tests/spark/test_faces_agree.py), and
writing the rows (Parquet, by pyarrow, with the footer Spark writes), the quarantine records
and the counts into the run's staging area, where the commit finds them as it finds the Spark
path's.  Must not know: any dialect.  docs/pipeline.md, "Incremental runs".

The conversion groups of a Spark run (``convert_staged``): the groups of staged rows that the
run's ``ExecutionStrategy`` gives the driver (all of them in local mode writing to a local
output, those of few rows elsewhere; ``ddlcore.spark.strategy``): their rows are read from the
staging area and converted and written here, where a Spark job each would cost more than its
rows — in ``Tuning.driver_workers`` processes forked from the driver, a group (or a part of a
large one) at a time each, column by column through a memo of each column's converted values
(docs/pipeline.md, "How it works", step 3).

When it applies (``DriverIncrement.read``): ``ExecutionStrategy.may_run_on_driver`` (the run is
incremental and reads tails only, no file whole, no Parquet, of at most
``Tuning.driver_increment_max_bytes`` in all, without ``--replay-quarantine``), and every new
line is one whose reading by Spark's JSON reader is known here exactly (``spark_event``): a
JSON object whose fields have the types of ``EVENT_SCHEMA_DDL`` and whose row values are each
the text form of a raw value (``ddlcore.raw.text_form``) or a tagged value that decodes (a
``$datetime`` with three fraction digits: the payload in the source's notation, which both
faces parse), or a line Spark reads as no event at all (not JSON, a torn line). Any other line
(a field of another type, which Spark reads in part; a duplicate key; a float Java writes in
another notation; ...) leaves the whole run to the Spark path.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import re
import sys
import uuid
from collections import Counter, defaultdict, deque
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import raw
from ..changelog import AFTER_OPS, BEFORE_OPS, HISTORY_OPS, ROW_OPS
from ..errors import PipelineError
from ..runconfig import Tuning
from . import columnar, readlog
from . import versions as vs
from .forkpool import WorkerPool
from .layout import version_dir
from .parquetfiles import PARQUET_WRITER, ROW_METADATA_KEY, SPARK_VERSION_KEY, parquet_format
from .quarantine import PartKind, QuarantineRecord, conversion_reason, short_reason
from .seqcheck import first_duplicate
from .strategy import ExecutionStrategy
from .tagging import PYTHON, TagInputs, in_force, tag, version_reason
from .versions import META_COLUMNS, META_METADATA

if TYPE_CHECKING:  # pragma: no cover
    from ..history import TableVersion

__all__ = ["DriverIncrement", "convert_staged", "driver_max_rows", "SPARK_VERSION_KEY", "ROW_METADATA_KEY",
           "output_struct",
           # the seams of the driver's conversion, each tested against the Spark path's result
           "Unsure", "spark_event", "GroupJob", "group_batches", "WorkerPool", "PLAIN_TAGGED", "staged_values",
           "staged_value", "SLOW", "ColumnMemo", "conversion_memos", "column_converters", "Rows", "ROW_FIELDS",
           "convert_rows", "tag_events"]

#: the sizes and limits of the driver-side paths are ``ddlcore.runconfig.Tuning``'s fields, handed
#: down with each call (``driver_increment_max_bytes``, ``driver_max_rows``, ``cluster_max_rows``,
#: ``group_max_bytes``, ``driver_workers``, ``part_rows``, ``chunk_rows``, ``batch_rows``,
#: ``batch_bytes``, ``memo_texts``, ``memo_min_texts``, ``memo_text_chars``).  Measured reasons:
#: in local mode writing to the local filesystem, every group is converted on the driver
#: (``driver_max_rows`` ``None``: the driver's cores are Spark's; 2M events, 20 x 3, groups of
#: about 83,000 rows: ``run_pipeline`` 49.7-55.3 s with the groups on the driver, 66.7-71.7 s as
#: Spark jobs, docs/pipeline.md, "Performance"), a group of more than ``part_rows`` staged rows
#: in parts (a staging task's files each; 10M events: 88 parts); elsewhere the groups Spark would
#: run with interpreted expressions (``cluster_max_rows``): 60 tables of 5,000 rows each took 25 s
#: in Spark jobs (41 s of CPU: half of it planning them in the driver's JVM and Python) and
#: 12.7 s on the driver, in one process.  A group whose values take more than
#: ``group_max_bytes`` stays a Spark job (large BLOBs: a worker holds the group as Arrow, and a
#: chunk of it as Python objects, several times their bytes).

#: what Spark's text reader splits lines on besides ``\n`` (a ``\r`` alone ends a line there)
_CR = b"\r"
#: a ``\u`` escape of a UTF-16 surrogate (Jackson and Python read lone ones differently)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SEQ_MEMBER = re.compile(readlog.SEQ_MEMBER, re.ASCII)
_SEQ_LETTER_ESCAPE = re.compile(readlog.SEQ_LETTER_ESCAPE)
_MAYBE_HISTORY = re.compile(readlog.MAYBE_HISTORY, re.ASCII)
#: a leading word, and the JSON literals Jackson reads as a value (Spark's reader allows NaN
#: and Infinity): a line starting with another word is not JSON to either reader
_WORD = re.compile(r"[^\W\d]\w*")
_LITERALS = ("true", "false", "null", "NaN", "Infinity")
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1
#: the event fields as Spark reads them: kind of value (``long``, ``str``, ``bool``,
#: ``strings``: an array of texts, ``raw``: an array of raw values' text forms, ``json``: any
#: JSON value, kept as parsed: only whether it is null matters here)
_FIELDS = {"seq": "long", "position": "str", "ts": "long", "op": "str", "database": "str", "table": "str",
           "ddl": "str", "before": "raw", "after": "raw", "schema": "str", "tx": "str", "row": "long",
           "quarantine": "str", "snapshot": "bool", "search_path": "strings", "catalog": "json", "source": "json"}
assert set(_FIELDS) == set(readlog.EVENT_COLUMNS)


class Unsure(Exception):
    """A line whose reading by Spark is not known exactly here: the run goes to Spark."""


@dataclass
class _Event:
    """One line as Spark's reader gives it: ``fields`` (``EVENT_SCHEMA_DDL``'s, ``None`` where
    Spark reads null; row images as their values' text forms), ``values`` (the images' raw
    values as Python values, ``raw.from_text`` of the texts), the line (``line``), its file
    (``file``, the URI a quarantine reason names) and ``valid`` (``_read_events``' rule)."""

    fields: dict[str, Any]
    values: dict[str, list | None] | None
    line: str
    file: str
    valid: bool

    def __getitem__(self, name: str) -> Any:  # the mapping face ``malformed_from_rows`` reads
        if name == "_line":
            return self.line
        if name == "_file":
            return self.file
        return self.fields[name]

    @property
    def seq(self) -> int | None:
        return self.fields["seq"]

    @property
    def op(self) -> str | None:
        return self.fields["op"]


def _long(v: Any) -> int | None:
    if v is None:
        return None
    if type(v) is not int or not _LONG_MIN <= v <= _LONG_MAX:
        raise Unsure
    return v


def _text(v: Any) -> str | None:
    if v is not None and type(v) is not str:
        raise Unsure
    return v


def _jackson_text(v: Any) -> str:
    """A JSON value's text as Spark's reader gives it for a string field: compact, keys in
    their order, non-ASCII as is; floats only where Java's notation is Python's."""
    if type(v) is float:
        if not (v == 0 or 1e-3 <= abs(v) < 1e7) or v != v:
            raise Unsure
        return repr(v)
    if isinstance(v, (dict, list)):
        for x in (v.values() if isinstance(v, dict) else v):
            if type(x) is float:
                _jackson_text(x)
        text = json.dumps(v, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        if "\\u00" in text:  # a control character: Java writes its escape's hex digits upper case
            raise Unsure
        return text
    return json.dumps(v)


def _raw_texts(v: Any) -> tuple[list | None, list | None]:
    """A row image as Spark reads it (texts) and as Python values (``raw.from_text``).  Each
    text must be the text form of its value (then both faces of the converter get the same raw
    value: the property they are tested for), or a tagged value that decodes (``{"$datetime":
    "... 00:00:00.250"}``: the payload in the source's notation, which both faces parse)."""
    if v is None:
        return None, None
    if type(v) is not list:
        raise Unsure
    texts, values = [], []
    for x in v:
        t = x if (x is None or type(x) is str) else _jackson_text(x)
        try:
            value = raw.from_text(t)
            same = raw.text_form(value) == t
        except (ValueError, TypeError, KeyError, OverflowError):
            raise Unsure from None
        if not same and t is not None and not (type(x) is dict and t.startswith('{"$') and value is not t):
            raise Unsure
        texts.append(t)
        values.append(value)
    return texts, values


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    if len({k for k, _ in pairs}) != len(pairs):
        raise Unsure
    return dict(pairs)


def spark_event(line: str, file: str) -> _Event:
    """``line`` read as ``readlog.read_events`` reads it (``from_json`` with
    ``EVENT_SCHEMA_DDL``, PERMISSIVE), or ``Unsure``."""
    fields: dict[str, Any] = dict.fromkeys(_FIELDS)
    values: dict[str, list | None] = {"before": None, "after": None}
    if _SURROGATE_ESCAPE.search(line):
        raise Unsure
    try:
        obj = json.loads(line, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        body = line.rstrip(" \t\r\n")
        word = _WORD.match(body.lstrip(" \t\r\n"))
        # a torn line (the text ends inside the value) or a first token that is no JSON at
        # all: Spark's reader fails there too and gives no field
        if not (exc.pos >= len(body) or (word and not word.group().startswith(_LITERALS))):
            raise Unsure from None
        obj = None
    if obj is not None:
        if type(obj) is not dict:
            raise Unsure
        lowered = {k.lower() for k in obj}
        if any(k.lower() in _FIELDS and k not in _FIELDS for k in obj) or len(lowered) != len(obj):
            raise Unsure
        for name, kind in _FIELDS.items():
            v = obj.get(name)
            if kind == "long":
                fields[name] = _long(v)
            elif kind == "str":
                fields[name] = _text(v)
            elif kind == "bool":
                if v is not None and type(v) is not bool:
                    raise Unsure
                fields[name] = v
            elif kind == "strings":
                if v is not None and (type(v) is not list or any(x is not None and type(x) is not str for x in v)):
                    raise Unsure
                fields[name] = v
            elif kind == "json":  # only whether it is null matters (``_valid``)
                fields[name] = v
            else:
                fields[name], values[name] = _raw_texts(v)
    return _Event(fields, values, line, file, _valid(fields))


def _valid(f: dict[str, Any]) -> bool:
    """``readlog.read_events``' ``_valid``, over the fields as Spark read them."""
    op = f["op"]
    if f["seq"] is None or f["position"] is None or op not in readlog.ALL_OPS:
        return False
    if op in ("ddl", "stmt"):
        return f["ddl"] is not None
    if op == "source":
        return f["source"] is not None
    if f["table"] is None:
        return False
    need = {"c": ("after",), "r": ("after",), "u": ("after", "before"), "d": ("before",)}.get(op, ())
    return all(f[n] is not None for n in need)


def _lines(data: bytes) -> list[str]:
    """The lines of a tail's bytes as Spark's text reader gives them (``\\n`` ends a line; a
    ``\\r`` anywhere or bytes that are not UTF-8 make the caller give up), without the ones
    ``_read_events`` drops (empty, or spaces only)."""
    if _CR in data:
        raise Unsure
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Unsure from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln for ln in lines if ln.strip(" ")]


def _old(line: str, last: int) -> tuple[bool, int | None]:
    """Whether ``_read_events(after_seq=last)`` leaves ``line`` out unparsed (every ``"seq": N``
    member at or below ``last``, ...), and the largest such N (for the ``skipped`` max)."""
    found = []
    for m in _SEQ_MEMBER.finditer(line):
        n = int(m.group(1))
        found.append(n if _LONG_MIN <= n <= _LONG_MAX else None)
    old = (bool(found) and all(n is not None and n <= last for n in found)
           and not _SEQ_LETTER_ESCAPE.search(line) and line.rstrip(" ").endswith("}"))
    return old, (max(found) if old else None)


def _read_tail(tail, fs) -> bytes:
    """The bytes of a tail's copy (``readlog.Tail``): read in place on a local output, else
    from the change-log file it was copied from (local: ``_incremental_inputs`` copies only
    local files), as many bytes as the copy holds."""
    if fs.local_root is not None:
        with open(readlog.plain_path(tail.copy), "rb") as fh:
            return fh.read()
    length = int(fs.fs.getFileStatus(fs.path(tail.copy)).getLen())
    with open(readlog.plain_path(tail.origin), "rb") as fh:
        fh.seek(tail.start)
        data = fh.read(length)
    if len(data) != length:
        raise PipelineError(f"{tail.origin}: the file shrank while it was read (a change-log file must only grow)")
    return data


class DriverIncrement:
    """The new lines of a small incremental run, read on the driver (``read``), and the run's
    tagging, conversion and writing done on them (``run``).  ``events``: the lines Spark would
    parse, in file order (``_Event``); ``max_seq``: the largest ``seq`` among them and among
    the lines left out as read before (the check that the log reaches the checkpoint);
    ``inputs``: the run's ``readlog.Inputs``."""

    def __init__(self, events: list[_Event], max_seq: int | None, inputs, last: int | None,
                 old_history: list[_Event] = ()):
        self.events = events
        self.old_history = list(old_history)
        self.max_seq = max_seq
        self.inputs = inputs
        self.last = last

    @classmethod
    def read(cls, spark, inputs, fs, *, last: int | None,
             strategy: ExecutionStrategy = ExecutionStrategy()) -> "DriverIncrement | None":
        """The run's new lines when the driver-side path applies to them (module docstring),
        else ``None``.  ``inputs``: ``readlog.incremental_inputs``' result; ``fs``: the output
        (``OutputFS``); ``last``: the checkpoint; ``strategy``: the run's ``ExecutionStrategy``,
        whose ``may_run_on_driver`` decides first.  Raises ``PipelineError`` for a change-log
        file that shrank since its tail was copied."""
        if not strategy.may_run_on_driver(inputs, last):
            return None
        bound = inputs.bound
        events: list[_Event] = []
        old_history: list[_Event] = []  # lines left out as read before, that the DDL pass reads
        seqs: list[int] = []
        try:
            for tail in inputs.tails:
                for line in _lines(_read_tail(tail, fs)):
                    old, top = _old(line, last)
                    if old:
                        seqs.append(top)
                        if _MAYBE_HISTORY.search(line):
                            ev = spark_event(line, tail.origin)
                            if bound is None or ev.seq is None or ev.seq <= bound.seq:
                                old_history.append(ev)
                        continue
                    ev = spark_event(line, tail.origin)
                    if bound is not None and ev.seq is not None and ev.seq > bound.seq:
                        continue
                    if ev.seq is not None:
                        seqs.append(ev.seq)
                    events.append(ev)
        except Unsure:
            return None
        return cls(events, max(seqs, default=None), inputs, last, old_history)

    def history_candidates(self) -> list[_Event]:
        """The DDL pass's candidates (``_run``): the valid events that may be ``ddl`` or
        ``source`` events (``_MAYBE_HISTORY``), with ``seq``, ``op``, ``_line``, ``_file``; the
        DDL pass reads every line, also those before the checkpoint."""
        return [ev for ev in self.old_history + self.events if ev.valid and _MAYBE_HISTORY.search(ev.line)]

    # -- the run --------------------------------------------------------------------------------

    def run(self, result, *, versions: list[TableVersion], fold: bool, history_records: list[QuarantineRecord], state,
            staging: str, run_id: str, sopts: dict, dialect: str, strict: bool,
            say=lambda msg: None) -> tuple[dict[int, str], list[str], list[str]]:
        """Tag, convert and write this increment's row events into ``staging`` (the run's
        staging directory, relative to the output) as the Spark path of ``_run`` does: rows of
        each table version in ``staging/<version_dir>/``, the quarantine (``history_records``,
        the DDL pass's records, first) in ``staging/_quarantine/``; fills ``result`` (events,
        last_seq, counts, rows, versions_written, quarantined, quarantine_reasons).  Returns
        ``(group_dirs, new malformed keys, deletes)`` as the commit takes them.  Raises
        ``PipelineError`` for a log that ends before the checkpoint and, with ``strict``, at
        the first event that cannot be interpreted (nothing written)."""
        last = self.last
        fs = state.fs
        if self.max_seq is not None and self.max_seq < last:
            raise PipelineError(
                f"the change log ends at seq {self.max_seq}, before this output's checkpoint (seq {last}): it is "
                f"not the log this output was written from (a new capture restarts seq at 1); write it to a new "
                f"output directory")
        say(f"tagging and converting {len(self.events)} new event(s) on the driver")
        fresh = [ev for ev in self.events if ev.seq is None or ev.seq > last]
        result.events = len(fresh)
        duplicate = first_duplicate((ev.seq, ev.file) for ev in fresh)  # the seq rule inside the run
        if duplicate is not None:
            raise duplicate
        result.last_seq = max(x for x in (self.max_seq, last) if x is not None)
        tagged = tag_events(fresh, versions, fold)
        records = list(history_records)
        invalid = [ev for ev, part, _ in tagged if part == PartKind.INVALID]
        new_malformed: list[str] = []
        if invalid:
            malformed, new_malformed = readlog.malformed_from_rows(invalid, state, self.inputs,
                                                              on_held=result.held.append)
            records += malformed
        for ev, part, reason in tagged:
            if part < 0 and part != PartKind.INVALID:
                f = ev.fields
                records.append(QuarantineRecord(f["seq"], f["position"], f["op"], f["database"], f["schema"],
                                                f["table"], reason, ev.line))
        if strict and records:
            first = min(records, key=QuarantineRecord.by_seq)
            raise PipelineError(first.reason, first.seq)
        by_version: dict[int, list[_Event]] = defaultdict(list)
        for ev, part, _ in tagged:
            if part >= 0:
                by_version[part].append(ev)

        bad = _convert_versions(by_version, versions, last, sopts, dialect, result,
                                _version_opener(fs, staging, run_id))
        if strict and bad:
            ev, reason = min(bad, key=lambda b: b[0].seq)
            raise PipelineError(reason, ev.seq)
        if bad:
            lines: dict[tuple, list[str]] = defaultdict(list)
            for ev in fresh:  # the Spark path joins the bad rows with the log's lines on these
                key = (ev.seq, ev.fields["position"], ev.op)
                if None not in key:
                    lines[key].append(ev.line)
            for ev, reason in bad:
                f = ev.fields
                for line in lines.get((ev.seq, f["position"], ev.op), [None]):
                    records.append(QuarantineRecord(ev.seq, f["position"], ev.op, f["database"], f["schema"],
                                                    f["table"], reason, line))
        if records:
            records.sort(key=QuarantineRecord.by_seq)
            for r in records:
                short = short_reason(r.reason)
                result.quarantine_reasons[short] = result.quarantine_reasons.get(short, 0) + 1
            result.quarantined += len(records)
            fs.write_text(f"{staging}/_quarantine/{run_id}-part-00000-{uuid.uuid4()}-c000.json",
                          "".join(r.to_line() + "\n" for r in records))
        return {}, new_malformed, []


def _convert_versions(by_version: dict[int, list[_Event]], versions: list[TableVersion], last: int | None, sopts: dict,
                      dialect: str, result, open_file) -> list[tuple[_Event, str]]:
    """Convert each version's row events (``by_version``: version index → events, in file
    order), write its good rows into a file ``open_file(version)`` gives, and count them into
    ``result`` (``counts``, ``rows``, ``versions_written``) as the Spark path does.  Returns the
    rows the Spark path quarantines as unconvertible, ``(event, reason)`` each."""
    # the Spark path converts the versions of a conversion group with one plan, in one job
    groups = [[k for k in members if k in by_version]
              for members in vs.conversion_groups(vs.live(versions, last), [v.table for v in versions])]
    grouped = {k for members in groups for k in members}
    groups += [[k] for k in by_version if k not in grouped]  # not live (never with rows): alone
    bad = [b for members in groups if members
           for b in convert_group(members, by_version, versions, sopts, dialect, open_file)]
    todo = sorted(by_version, key=lambda k: (versions[k].table_id.database or "", versions[k].table_id.schema or "",
                                             versions[k].table_id.name, versions[k].version))
    bad_counts = Counter((part, ev.op) for ev, part, _ in bad)
    for k in todo:
        v = versions[k]
        counts = Counter(ev.op for ev in by_version[k])
        for o in ROW_OPS:
            n = counts[o] - bad_counts[(k, o)]
            if n:
                result.counts[(v.table_id.database or "", vs.label(v, db=False), v.version, o)] = n
                result.rows += n
        result.versions_written.append((v.table_id.database, vs.label(v, db=False), v.version))
    return [(ev, reason) for ev, _, reason in bad]


class GroupJob:
    """The Spark path's one job for a conversion group (``members``: version indexes of one
    ``versions.conversion_groups`` group that have rows; ``versions``: version index → its
    record), done here: ``add`` converts a chunk of the group's row events (version index →
    its events as ``Rows``, in ``seq`` order) and appends each version's good rows to its
    Parquet file (a row group per chunk: memory follows the chunk, not the group); ``finish``
    closes the files and returns the rows the job quarantines as unconvertible, ``(event,
    version, reason)`` each.
    ``ops``: the ops of all the group's events; ``open_file(version)``: a new binary file for a
    version's rows (closed by ``finish``).

    The job's rules, kept here: its plan converts the images of the group's ops (after for
    c, r, u; before for u, d); a version alone in its job writes a file even when none of its
    rows could be converted (a partitioned job writes none for such a version); and only when
    some row failed in an image the plan converts is every row with an error in an image its
    op carries quarantined.

    ``staged``: the events are staged rows (``_convert_slice``: texts only, ``values``
    ``None``), given a chunk at a time to ``add_staged`` and converted a column at a time:
    through the column's kernel (``columnar``) or a ``ColumnMemo`` per image and column that
    lasts the whole job."""

    def __init__(self, members: list[int], versions, sopts: dict, dialect: str, ops: set[str], open_file,
                 staged: bool = False, tuning: Tuning = Tuning()):
        from . import RowConverter

        self.members, self.versions, self.open_file = members, versions, open_file
        self.conv = RowConverter(versions[members[0]].table, dialect, options=sopts)
        self.memos = conversion_memos(self.conv, tuning) if staged else None
        self.schema, self.footer = parquet_format(output_struct(self.conv))
        # staged rows are converted a column at a time where they can be (``columnar``)
        self.columns = column_converters(self.conv, self.schema, self.memos) if staged else None
        self.after, self.before = not ops.isdisjoint(AFTER_OPS), not ops.isdisjoint(BEFORE_OPS)
        self.errored: list[tuple[_Event, int, str]] = []
        self.failed = False
        self.files: dict[int, tuple[Any, Any]] = {}  # version → (file, its Parquet writer)

    def add(self, by_version: dict[int, "Rows"]) -> None:
        import pyarrow as pa

        for k in self.members:
            rows = by_version.get(k)
            if not rows:
                continue
            columns, errs, failed = convert_rows(self.conv, rows, after=self.after, before=self.before,
                                             memos=self.memos)
            self.failed |= failed
            self.errored += [(ev, k, reason) for ev, reason in errs]
            if columns["_op"]:
                self._writer(k).write_table(pa.Table.from_pydict(columns, schema=self.schema))

    def add_staged(self, chunk) -> None:
        """A chunk of the group's staged rows (an Arrow table of the ``_STAGED`` columns, in
        ``seq`` order), converted a column at a time for all its versions at once (a group's
        versions share one conversion: ``columnar.convert_chunk``) and split by version; or,
        where some row needs the row pass, row by row (``add``)."""
        parts = chunk.column("_part")
        chunk = chunk.drop_columns(["_part"])
        table = columnar.convert_chunk(chunk, self.schema, self.conv.names, self.columns,
                                       after=self.after, before=self.before)
        if table is None:
            self.add({k: Rows(rows.to_pydict()) for k, rows in _by_version(chunk, parts)})
            return
        for k, rows in _by_version(table, parts):
            self._writer(k).write_table(rows)

    def _writer(self, k: int):
        import pyarrow.parquet as pq

        if k not in self.files:
            file = self.open_file(self.versions[k])
            self.files[k] = (file, pq.ParquetWriter(file, self.schema, **PARQUET_WRITER))
        return self.files[k][1]

    def finish(self) -> list[tuple[_Event, int, str]]:
        if len(self.members) == 1:
            self._writer(self.members[0])
        for file, writer in self.files.values():
            writer.add_key_value_metadata(self.footer)
            writer.close()
            file.close()
        return self.errored if self.failed else []

    def discard(self) -> None:
        """Drop the files written so far (each file's ``discard``)."""
        for file, writer in self.files.values():
            writer.close()
            file.discard()


def convert_group(members: list[int], by_version: dict[int, list[_Event]], versions, sopts: dict, dialect: str,
                  open_file) -> list[tuple[_Event, int, str]]:
    """All the row events of a conversion group (``by_version``: version index → events)
    converted and written at once by a ``GroupJob``; returns what its ``finish`` returns."""
    job = GroupJob(members, versions, sopts, dialect, {ev.op for k in members for ev in by_version[k]}, open_file)
    job.add({k: Rows.of(by_version[k]) for k in members if by_version.get(k)})
    return job.finish()


class _Bytes(io.BytesIO):
    """A file in memory whose bytes are handed to ``done`` when it is closed (not when it is
    discarded)."""

    def __init__(self, done):
        super().__init__()
        self._done = done

    def close(self) -> None:
        if not self.closed:
            self._done(self.getvalue())
        super().close()

    def discard(self) -> None:
        super().close()


class _LocalFile(io.FileIO):
    """A new local file ``path``, written under a hidden temporary name in the directory
    ``root`` (which exists) and moved to ``path`` when it is closed (its directories made
    then): a discarded file (removed) leaves no directory behind, which the commit would take
    for a staged table version."""

    def __init__(self, root: str, path: str):
        super().__init__(os.path.join(root, f".{uuid.uuid4()}.tmp"), "wb")
        self.path = path

    def close(self) -> None:
        if not self.closed:
            super().close()
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            os.replace(self.name, self.path)

    def discard(self) -> None:
        super().close()
        os.remove(self.name)


#: the staged columns a conversion reads (``stage.stage_rows``)
_STAGED = ("seq", "position", "ts", "op", "database", "schema", "table", "tx", "row", "before", "after", "_part")
#: what a row the Spark path quarantines as unconvertible is staged as (``convertpass.write_version``'s
#: second job), read back with those of the Spark jobs
_BAD_SCHEMA = ("seq LONG, position STRING, op STRING, database STRING, `schema` STRING, `table` STRING, "
               "_part INT, reason STRING")


def driver_max_rows(spark, fs, tuning: Tuning = Tuning()) -> int | None:
    """The most staged rows of a conversion group converted on the driver for a run on
    ``spark`` writing to ``fs`` (the output's ``OutputFS``): ``ExecutionStrategy.driver_max_rows``
    (``tuning.driver_max_rows`` when set; else ``None``, no limit, for a local master writing to
    the local filesystem, and ``tuning.cluster_max_rows`` otherwise)."""
    return ExecutionStrategy.of(spark, fs, tuning).driver_max_rows()


def _parts(directory: str, rows: int, part_rows: int) -> list[list[str]]:
    """A group's staged Parquet files (in ``directory``, local; not ``.``- or ``_``-prefixed,
    as pyarrow's dataset discovery skips them), in name order, split into parts of at least
    ``part_rows`` rows each by their footers (one part if the group's ``rows`` are no more)."""
    import pyarrow.parquet as pq

    files = [os.path.join(directory, n) for n in sorted(os.listdir(directory)) if not n.startswith((".", "_"))]
    if rows <= part_rows:
        return [files]
    parts: list[list[str]] = [[]]
    n = 0
    for f in files:
        if n >= part_rows:
            parts.append([])
            n = 0
        parts[-1].append(f)
        n += pq.read_metadata(f).num_rows
    return parts


@dataclass
class _PartsOf:
    """A group being converted on the driver: its parts not yet returned (``left``), and what
    those that did returned (``_convert_slice``): rows with an error, whether one failed, the
    local files written, whether one part was unsure."""

    left: int
    errored: list[dict] = field(default_factory=list)
    failed: bool = False
    written: list[str] = field(default_factory=list)
    unsure: bool = False


def _remove_files(paths: list[str], root: str) -> None:
    """Remove the local files ``paths`` and the directories they leave empty below ``root`` (the
    commit would take an empty version directory for a staged version)."""
    for path in paths:
        os.remove(path)
        d = os.path.dirname(path)
        while d != root and d.startswith(root + os.sep) and not os.listdir(d):
            os.rmdir(d)
            d = os.path.dirname(d)


class _Results:
    """What the parts of ``convert_staged``'s groups return, taken in order (``take``): the files
    a worker returned written into the staging, each group's unconvertible rows gathered (the
    job's rule: if some row of the group failed, over all its parts) and written to ``bad_dir``
    in files of about ``tuning.batch_rows`` rows (``write_bad``), a group with an unsure part
    left to Spark (``left``; its other parts' local files removed)."""

    def __init__(self, fs, parts: dict[int, list], *, staging: str, run_id: str, bad_dir: str,
                 local_out: tuple[str, str] | None, tuning: Tuning, say):
        self.fs, self.staging, self.run_id, self.bad_dir = fs, staging, run_id, bad_dir
        self.local_out, self.tuning, self.say = local_out, tuning, say
        self.running = {g: _PartsOf(len(p)) for g, p in parts.items()}
        self.total, self.step = len(parts), max(1, len(parts) // 20)  # progress every twentieth
        self.left: list[int] = []
        self.done = self.unsure = self.bad_files = 0
        self.bad: list[dict] = []

    def write_bad(self) -> None:
        """The gathered unconvertible rows as one Parquet file of ``bad_dir`` (``_BAD_SCHEMA``)."""
        from pyspark.sql.types import _parse_datatype_string

        if self.bad:
            _write_parquet(self.fs, f"{self.bad_dir}/{self.run_id}-part-{self.bad_files:05d}-{uuid.uuid4()}"
                                    f"-c000.snappy.parquet", _parse_datatype_string(_BAD_SCHEMA), self.bad)
            self.bad_files += 1
            self.bad.clear()

    def take(self, g: int, future: Future) -> None:
        """What a part of group ``g`` returned; at the group's last part, its unconvertible rows
        (if some row failed), or, if some part was unsure, its other parts' files removed and
        the group left to Spark.  Raises ``PipelineError`` if the worker died."""
        try:
            out = future.result()
        except BrokenProcessPool as exc:
            raise PipelineError(f"a process converting conversion groups on the driver died ({exc}): "
                                f"nothing was committed; run again") from None
        group = self.running[g]
        group.left -= 1
        if out is None:
            group.unsure = True
        else:
            files, errored, failed, written = out
            for directory, data in files:  # none where the worker wrote them (a local output)
                _write_bytes(self.fs, _version_file(self.staging, directory, self.run_id), data)
            group.errored += errored
            group.failed |= failed
            group.written += written
        if not group.left:
            self._group_done(g, self.running.pop(g))

    def _group_done(self, g: int, group: _PartsOf) -> None:
        if group.unsure:
            if self.local_out:
                _remove_files(group.written, self.local_out[0])
            self.left.append(g)
            self.unsure += 1
            return
        if group.failed:
            self.bad.extend(group.errored)
        if len(self.bad) >= self.tuning.batch_rows:
            self.write_bad()
        self.done += 1
        if self.done % self.step == 0 or self.done == self.total:
            self.say(f"converted {self.done} of {self.total} conversion group(s) on the driver")


def _group_parts(todo: list[int], sizes: dict[int, int], local_rows: str | None, tuning: Tuning,
                 say) -> dict[int, list]:
    """Each group's parts: on a local output (``local_rows``: the staged rows' local directory)
    its staged files, split into parts of about ``tuning.part_rows`` rows (``_parts``); else one
    part (``None``: its rows read by the driver)."""
    if local_rows is None:
        return dict.fromkeys(todo, [None])
    parts = {g: _parts(f"{local_rows}/_grp={g}", sizes.get(g, 0), tuning.part_rows) for g in todo}
    split = [g for g in todo if len(parts[g]) > 1]
    if split:
        say(f"{len(split)} of them in parts of about {tuning.part_rows:,} rows (their staged files): "
            f"{sum(len(parts[g]) for g in split)} parts")
    return parts


def convert_staged(staged, groups: dict[int, list[int]], sizes: dict[int, int], nbytes: dict[int, int],
                   versions: list[TableVersion], *,
                   sopts: dict, dialect: str, fs, rows_dir: str, staging: str, run_id: str, bad_dir: str,
                   tuning: Tuning = Tuning(), say=lambda msg: None) -> tuple[list[int], bool]:
    """Convert and write on the driver the conversion groups of a Spark run that the run's
    ``ExecutionStrategy`` gives it (``convertpass.convert_versions``), instead of a Spark job
    each: a job's fixed cost (planning, py4j, the JIT) is far more than converting a few
    thousand rows in Python, and in local mode the workers' cost per row is below a Spark job's
    on the same cores.  ``staged``: the run's staged rows (a DataFrame with the ``_grp``
    partition column), staged in ``rows_dir`` (``rows_dir/_grp=<group>/``, relative to the
    output ``fs``); ``groups``: group → its versions with rows; ``sizes``: group → staged rows;
    ``nbytes``: group → the bytes of its values (the staged ``_bytes``: the driver's read
    batches are bounded by them).  Each group is converted by ``RowConverter``'s Arrow kernels
    and Python face (``GroupJob``: the group job's rules) in one of ``tuning.driver_workers``
    processes forked from the driver (``_convert_slice``), and each version is written into
    ``staging/<version_dir>/`` (the file Spark writes); the rows the Spark path would
    quarantine as unconvertible are written to ``bad_dir`` (Parquet, ``_BAD_SCHEMA``) for the
    run to read back with the Spark jobs'.

    Where the rows come from and the files go, by the output's filesystem:

    * local: each worker reads its group's staged files itself (pyarrow, a chunk at a time)
      and writes its versions' files itself; a group of more than ``tuning.part_rows`` rows is split
      into parts (``_parts``), converted at once in several workers, under the job's rules
      over all of them (``_Results``); the driver only hands out parts and writes the bad rows
      (no Spark job, no rows through the driver);
    * any other (HDFS, object stores): the driver reads the rows at most ``tuning.batch_rows`` and
      ``tuning.batch_bytes`` at a time (a Spark job each, through Arrow, the next batch read while one
      converts) and writes the files the workers return, through Hadoop's ``FileSystem``.

    A group with a value whose text is not the text form of its raw value (``staged_values``:
    then the two faces are not known to agree) is not converted here.  Returns ``(groups left
    to the Spark jobs, whether any row was written to bad_dir)``.  Raises what Spark, Hadoop's
    ``FileSystem`` or pyarrow raise, what a worker raised, and ``PipelineError`` if a worker
    process died (the run then stops before its commit: nothing visible)."""
    local_rows = fs.local(rows_dir)  # ``None`` but on the local filesystem
    # a local output: the workers read the staged files and write the versions' files there
    local_out = None if local_rows is None else (fs.local(staging), run_id)
    todo = sorted(groups)
    parts = _group_parts(todo, sizes, local_rows, tuning, say)
    workers = _workers(sum(len(p) for p in parts.values()), tuning.driver_workers)
    if workers > 1:
        say(f"converting them in {workers} worker processes")
    results = _Results(fs, parts, staging=staging, run_id=run_id, bad_dir=bad_dir, local_out=local_out,
                       tuning=tuning, say=say)
    sources = (((g, part) for g in todo for part in parts[g]) if local_out
               else _read_groups(staged, todo, sizes, nbytes, tuning))
    #: parts submitted and not yet taken, oldest first: (group, future)
    pending: deque[tuple[int, Future]] = deque()
    with WorkerPool(workers) as submit:
        for g, rows in sources:
            pending.append((g, submit(_convert_slice, groups[g], {k: versions[k] for k in groups[g]},
                                      sopts, dialect, rows, local_out, tuning)))
            while len(pending) > 2 * workers:  # a bounded queue: the results are written as they come
                results.take(*pending.popleft())
        while pending:
            results.take(*pending.popleft())
    results.write_bad()
    if results.unsure:
        say(f"{results.unsure} conversion group(s) left to Spark jobs: a value's text is not the text form of "
            f"its raw value, on which the two faces of the converter are not known to agree")
    return results.left, results.bad_files > 0


def group_batches(todo: list[int], sizes: dict[int, int], nbytes: dict[int, int],
                  tuning: Tuning = Tuning()) -> list[list[int]]:
    """The groups of ``todo`` in batches of at most ``tuning.batch_rows`` staged rows (``sizes``)
    and ``tuning.batch_bytes`` of values (``nbytes``), in order; a group larger than that alone."""
    batches: list[list[int]] = []
    rows_in_batch = bytes_in_batch = 0
    for g in todo:
        if not batches or rows_in_batch + sizes[g] > tuning.batch_rows or bytes_in_batch + nbytes.get(g, 0) > tuning.batch_bytes:
            batches.append([])
            rows_in_batch = bytes_in_batch = 0
        batches[-1].append(g)
        rows_in_batch += sizes[g]
        bytes_in_batch += nbytes.get(g, 0)
    return batches


def _read_groups(staged, todo: list[int], sizes: dict[int, int], nbytes: dict[int, int], tuning: Tuning):
    """``(group, its staged rows as an Arrow table in seq order)`` of each group of ``todo``,
    read from ``staged`` by the driver at most ``tuning.batch_rows`` rows and ``batch_bytes`` of values
    at a time (a Spark job each; a group larger than that alone): the caller converts a batch's
    groups while the next batch is read."""
    import pyarrow.compute as pc
    from pyspark.sql import functions as F

    for batch in group_batches(todo, sizes, nbytes, tuning):
        # one SQL predicate (``isin`` makes a py4j literal per group)
        table = staged.where(F.expr(f"_grp IN ({', '.join(map(str, batch))})")).select("_grp", *_STAGED).toArrow()
        table = table.take(pc.sort_indices(table, sort_keys=[("_grp", "ascending"), ("seq", "ascending")]))
        start = 0
        for g, run in itertools.groupby(table.column("_grp").to_pylist()):
            n = sum(1 for _ in run)
            yield g, table.slice(start, n).select(list(_STAGED))
            start += n


def _workers(groups: int, n: int | None) -> int:
    """How many processes convert ``groups`` groups on the driver: ``n`` (``None``:
    the CPUs this process may use), at most one per group, and 1 (the driver itself) but on
    Linux (``WorkerPool`` forks them: macOS's system libraries do not survive a fork with
    threads, and Windows has none)."""
    if not sys.platform.startswith("linux"):
        return 1
    if n is None:
        n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(n, groups))


def _convert_slice(members: list[int], versions: dict[int, TableVersion], sopts: dict, dialect: str, rows,
                   local_out: tuple[str, str] | None = None, tuning: Tuning = Tuning()
                   ) -> tuple[list[tuple[str, bytes]], list[dict], bool, list[str]] | None:
    """One conversion group's staged rows, or a part of them, converted by a ``GroupJob``
    (``members``: the group's versions with rows; ``versions``: those versions by index),
    ``tuning.chunk_rows`` rows at a time: ``(files, errored rows, failed, written)`` — each version's
    Parquet file as ``(version_dir, bytes)`` (none on a local output), each row with an error
    as a ``_BAD_SCHEMA`` record (unconvertible if some row of the group failed: the caller's
    rule, over all the parts), whether some row failed, and the local files written — or
    ``None`` where a value's text is not its raw value's text form (``staged_values``; then
    none of this part's files is left behind).  ``rows``: an Arrow table of the ``_STAGED``
    columns in ``seq`` order, its IPC stream's bytes, or a list of the group's local staged
    Parquet files (read here a chunk at a time, in that order: a worker's memory follows
    ``tuning.chunk_rows``, not the group).  ``local_out``: ``(the run's staging directory, run id)``
    on the local filesystem: each file is written there (``staging/<version_dir>/``, named as
    ``_version_file`` names it) instead of returned.
    Runs in a worker process (``WorkerPool``) or the driver."""
    chunks, ops = _chunks(rows, tuning.chunk_rows)
    files: list[tuple[str, bytes]] = []

    def open_file(v: TableVersion):
        directory = version_dir(v.table_id.database, v.table_id.schema, v.table_id.name, v.version)
        if local_out is None:
            return _Bytes(lambda data: files.append((directory, data)))
        os.makedirs(local_out[0], exist_ok=True)
        return _LocalFile(local_out[0], _version_file(local_out[0], directory, local_out[1]))

    job = GroupJob(members, versions, sopts, dialect, ops, open_file, staged=True, tuning=tuning)
    try:
        for chunk in chunks:
            job.add_staged(chunk)
    except Unsure:
        job.discard()
        return None
    job.finish()
    written = [file.path for file, _ in job.files.values() if isinstance(file, _LocalFile)]
    return files, [{"seq": ev.seq, "position": ev.fields["position"], "op": ev.op, "database": ev.fields["database"],
                    "schema": ev.fields["schema"], "table": ev.fields["table"], "_part": k, "reason": reason}
                   for ev, k, reason in job.errored], job.failed, written


def _chunks(rows, chunk_rows: int) -> tuple[Any, set[str]]:
    """``_convert_slice``'s ``rows`` as chunks of at most ``chunk_rows`` rows of the ``_STAGED``
    columns (Arrow tables, an iterator), and the ops among all of them (the plan's images).
    Local Parquet files (a list of paths) are read a chunk at a time (pyarrow), their ops
    first from the ``op`` column alone."""
    import pyarrow as pa

    if not isinstance(rows, list):
        table = rows if isinstance(rows, pa.Table) else pa.ipc.open_stream(rows).read_all()
        return (table.slice(start, chunk_rows) for start in range(0, table.num_rows, chunk_rows)), \
            set(table.column("op").unique().to_pylist())
    import pyarrow.dataset as ds

    files = ds.dataset(rows, format="parquet")
    ops = set(files.to_table(columns=["op"]).column("op").unique().to_pylist())
    return (pa.Table.from_batches([batch]) for batch in files.to_batches(
        columns=list(_STAGED), batch_size=chunk_rows, batch_readahead=1, fragment_readahead=1)), ops


def _by_version(table, parts) -> list[tuple[int, Any]]:
    """``table``'s rows by version (``parts``: each row's version index), ``(version, its
    rows)`` in version order, each version's rows in their order in ``table`` (a stable sort)."""
    import pyarrow.compute as pc

    counts = pc.value_counts(parts)
    runs = sorted(zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist()))
    if len(runs) == 1:  # one version (the commonest chunk)
        return [(runs[0][0], table)]
    table = table.take(pc.sort_indices(parts))
    out, start = [], 0
    for k, n in runs:
        out.append((k, table.slice(start, n)))
        start += n
    return out


def _version_opener(fs, staging: str, run_id: str):
    """The ``open_file(version)`` of ``convert_group``: a new Parquet file of a version's rows in
    ``staging/<version_dir>/`` (through ``fs``, Hadoop's FileSystem, when it is closed), named
    after the run (the commit's rule)."""
    def open_file(v: TableVersion) -> _Bytes:
        rel = _version_file(staging, version_dir(v.table_id.database, v.table_id.schema, v.table_id.name, v.version), run_id)
        return _Bytes(lambda data: _write_bytes(fs, rel, data))
    return open_file


def _version_file(staging: str, directory: str, run_id: str) -> str:
    """A new row file of the version directory ``directory`` (``version_dir``) in ``staging``,
    named after the run as Spark's writers name theirs (``commit.file_names``)."""
    return f"{staging}/{directory}/{run_id}-part-00000-{uuid.uuid4()}-c000.snappy.parquet"


#: besides integers in their text form (no sign but ``-``, no leading zero, not ``-0``:
#: ``str(int(t)) == t``) and texts starting with a digit that are no number (a date's), the
#: texts ``staged_values`` takes without ``raw.from_text``: a tagged value whose payload is a
#: plain JSON string (no escape, no control character: ``json.loads`` reads it as written)
PLAIN_TAGGED = re.compile(r'\{"(\$[a-z0-9]+)":"([^"\\\x00-\x1f]*)"\}\Z')


def staged_values(texts: list | None) -> list | None:
    """A staged row image (its values' texts as Spark read them) as raw values
    (``staged_value`` of each text), or ``Unsure``."""
    return None if texts is None else [staged_value(t) for t in texts]


def staged_value(t: str | None) -> Any:
    """A staged value's text (as Spark read it) as its raw value (``raw.from_text``), or
    ``Unsure`` where the text is not the text form of its value (nor a tagged value that
    decodes, whose payload both faces parse).  The absent marker's value (``raw.ABSENT``) comes
    from ``raw.ABSENT_TEXT`` alone (what ``_image`` and ``ColumnMemo`` rely on)."""
    if t is None:
        return None
    first = t[:1]
    if first in raw.NUMBER_START:
        # what ``from_text`` and the check below give, without them: an integer in its text
        # form (ASCII digits, no leading zero, no ``-0``), or a text that is no number (a
        # date's): a plain string
        digits = t[1:] if first == "-" else t
        if digits.isdigit() and digits.isascii() and (digits[0] != "0" or t == "0"):
            try:
                return int(t)
            except ValueError:  # past Python's limit on the digits of an int
                raise Unsure from None
        if not raw.NUMBER.match(t):
            return t
    elif first == "{" and t.startswith('{"$'):
        m = PLAIN_TAGGED.match(t)
        kind = raw.TAGS.get(m[1]) if m else None
        if kind is not None:  # ``json.loads`` of it is ``{tag: payload}``, the payload as
            # written: ``raw.decode_json``'s step for a known tag (the whole of it costs a
            # fifth of this function again)
            try:
                return raw.from_payload(kind, m[2])
            except (ValueError, TypeError, KeyError, OverflowError):
                raise Unsure from None
    else:  # a plain string: ``raw.from_text`` gives it back, its own text form
        return t
    try:
        v = raw.from_text(t)
    except (ValueError, TypeError, KeyError, OverflowError):
        raise Unsure from None
    # a tagged value that decodes is taken as is (its payload, even in the source's
    # notation, is parsed by both faces: ``_raw_texts``' rule); a number must be its value's
    # text form (``1.50`` or ``007`` are not)
    tagged = v is not t and t.startswith('{"$')
    if (not tagged and raw.text_form(v) != t) or (v is raw.ABSENT and t != raw.ABSENT_TEXT):
        raise Unsure
    return v


def tag_events(events: list[_Event], versions: list[TableVersion], fold: bool
               ) -> list[tuple[_Event, int, str | None]]:
    """Each event that is not a history event, with its tag as the Spark path tags it
    (``tagging.tag`` in its Python face: a version's index, or a ``PartKind``) and its
    quarantine reason (``None`` for a version's row and a malformed line, whose reason is built
    later); a row event in force in several versions once per version, as the Spark path's join
    gives it.  Raises ``Unsure`` for names whose folding Java could do otherwise (non-ASCII,
    with folded table names)."""
    collide = vs.collisions(versions)
    index: dict[tuple, list[tuple[int, TableVersion]]] = defaultdict(list)
    for k, v in enumerate(versions):
        index[vs.fold_key(v.table_id, fold)].append((k, v))
    out = []
    for ev in events:
        f = ev.fields
        if ev.valid and ev.op in HISTORY_OPS:
            continue
        matches: list[tuple[int | None, TableVersion | None]] = []
        if ev.valid and ev.op in ROW_OPS:  # (the Spark path's join condition)
            names = (f["database"], f["schema"], f["table"])
            if fold and any(n is not None and not n.isascii() for n in names):
                raise Unsure
            key = tuple(vs.fold_name(n, fold) for n in names)
            matches = [(k, v) for k, v in index.get(key, ())
                       if in_force(ev.seq, v.valid_from_seq, v.valid_to_seq, PYTHON) is True]
        for k, v in matches or [(None, None)]:
            blocked = None if v is None else version_reason(k, v, collide)
            part, reason = tag(TagInputs(ev.valid, f["op"], f["ddl"], f["quarantine"], f["database"], f["schema"],
                                         f["table"], k, blocked), PYTHON)
            out.append((ev, part, reason))
    return out


def _image(conv, texts: list | None, values: list | None, on: bool,
           used: bool = True) -> tuple[tuple | None, list | None, list, bool]:
    """One row image converted as ``convertpass.write_version`` converts it: ``(values, absent names,
    errors, failed)``; values ``None`` for no image (or ``on`` false: the plan leaves the image
    out), absent names ``None`` when none is absent; errors ``(column, text, reason)`` each
    (computed whether or not ``on``: the Spark path's second job builds the reasons of both
    images); ``used`` false (the event's op does not carry this image): no errors, not failed."""
    if texts is None:
        return None, None, [], False
    absent = None
    if raw.ABSENT_TEXT in texts:  # (only that text is ``raw.ABSENT``: ``staged_values``, ``_raw_texts``)
        if len(texts) == len(conv.rules):
            absent = [name for name, t in zip(conv.names, texts) if t == raw.ABSENT_TEXT]
        values = [None if v is raw.ABSENT else v for v in values]
    row, errs = conv.try_convert(values)
    if not errs:
        return (row, absent, [], False) if on else (None, None, [], False)
    errors = [(e.column, str(len(texts)) if e.column is None else texts[e.position], e.reason)
              for e in errs] if used else []
    if not on:
        return None, None, errors, False
    return row, absent, errors, used


#: the texts the ``ColumnMemo`` of a group job keep at most (``Tuning.memo_texts``), over all
#: their columns and both images (a column of distinct values stops filling its memo; at most a
#: few hundred bytes each: a worker's memory stays bounded however wide the table), and the least
#: any column keeps (``memo_min_texts``); texts longer than ``memo_text_chars`` are converted
#: every time (seldom repeated)
#: a value ``ColumnMemo`` leaves to the row pass (the absent marker, a value that does not
#: convert: their rows' errors and absent names are the row pass's)
SLOW = object()


class ColumnMemo(dict):
    """One column's converted values by their staged texts: ``memo[text]`` is ``fn(value)``
    (``fn``: the column's Python converter, ``value``: ``staged_value(text)``, which raises
    ``Unsure``), ``None`` for a null, or ``SLOW`` (counted in ``slow``, never kept) for the
    absent marker and a value ``fn`` refuses.  A conversion is a function of the text alone (a
    column rule is built from the version's model and the options), so a text seen before —
    an enum, a status, a date, a foreign key — costs one lookup.  Keeps at most ``limit``
    texts, of at most ``max_chars`` characters each."""

    __slots__ = ("fn", "slow", "limit", "max_chars")

    def __init__(self, fn, limit: int, max_chars: int = Tuning.memo_text_chars):
        super().__init__()
        self[None] = None
        self.fn, self.slow, self.limit, self.max_chars = fn, 0, limit, max_chars

    def __missing__(self, text: str) -> Any:
        if text == raw.ABSENT_TEXT:
            self.slow += 1
            return SLOW
        value = staged_value(text)
        try:
            out = self.fn(value)
        except Exception:  # the row pass finds the reason (``try_convert``)
            self.slow += 1
            return SLOW
        if len(self) <= self.limit and len(text) <= self.max_chars:
            self[text] = out
        return out


def conversion_memos(conv, tuning: Tuning = Tuning()) -> dict[str, list[ColumnMemo]]:
    """A ``ColumnMemo`` per image and column of ``conv`` (a ``RowConverter``), sharing
    ``tuning.memo_texts`` between them."""
    limit = max(tuning.memo_min_texts, tuning.memo_texts // max(1, 2 * len(conv.functions)))
    return {image: [ColumnMemo(fn, limit, tuning.memo_text_chars) for fn in conv.functions]
            for image in ("after", "before")}


def column_converters(conv, schema, memos: dict[str, list[ColumnMemo]]) -> dict[str, list]:
    """Per image, a ``columnar.column_converter`` per column of ``conv`` (a ``RowConverter``):
    its rule's kernel if it has one, and its ``memos`` entry; ``schema``: the version's row
    table's Arrow schema (``parquet_format``), whose first fields are the columns'."""
    types = [f.type for f in list(schema)[:len(conv.names)]]
    kernels = [columnar.vector_function(rule, t) for rule, t in zip(conv.rules, types)]
    return {image: [columnar.column_converter(kernel, memo, t) for kernel, memo, t in zip(kernels, column_memos, types)]
            for image, column_memos in memos.items()}


def _column_pass(images: list, memos: list[ColumnMemo]) -> list:
    """The row images of one version's staged events (each a list of texts, or ``None``)
    converted column by column through ``memos`` (one per column): per image its converted
    tuple, ``None`` for no image, or ``SLOW`` where the row pass must convert it (a value
    ``SLOW``, or a wrong number of values).  Raises ``Unsure`` (``staged_value``)."""
    n = len(memos)
    out = [SLOW if t is not None else None for t in images]
    full = [j for j, t in enumerate(images) if t is not None and len(t) == n]
    if not full:
        return out
    if not n:
        for j in full:
            out[j] = ()
        return out
    slow: set[int] = set()
    columns = []
    for memo, texts in zip(memos, zip(*[images[j] for j in full])):
        seen = memo.slow
        values = [memo[t] for t in texts]
        if memo.slow != seen:
            slow.update(i for i, v in enumerate(values) if v is SLOW)
        columns.append(values)
    for i, row in enumerate(zip(*columns)):
        if i not in slow:
            out[full[i]] = row
    return out


class Rows:
    """One version's row events of a chunk, as columns: ``columns`` (``_STAGED``'s fields but
    ``_part``: name → one value per event, in ``seq`` order; the images as their values'
    texts), ``values`` (per image, each event's raw values: events read on the driver, whose
    values ``spark_event`` took; ``None`` for staged rows, whose values come from the texts)
    and ``events`` (the ``_Event`` of each, or ``None``: made by ``event`` when needed)."""

    __slots__ = ("columns", "values", "events")

    def __init__(self, columns: dict[str, list], values: dict[str, list] | None = None,
                 events: list[_Event] | None = None):
        self.columns, self.values, self.events = columns, values, events

    @classmethod
    def of(cls, events: list[_Event]) -> "Rows":
        """Events read on the driver (``spark_event``), as columns."""
        return cls({name: [ev.fields[name] for ev in events] for name in ROW_FIELDS},
                   {image: [ev.values[image] for ev in events] for image in ("after", "before")}, events)

    def __len__(self) -> int:
        return len(self.columns["op"])

    def event(self, j: int) -> _Event:
        """The ``j``-th event (its fields: what a quarantine record names)."""
        if self.events is not None:
            return self.events[j]
        return _Event({name: column[j] for name, column in self.columns.items()}, None, "", "", True)


#: the fields ``convert_rows`` reads
ROW_FIELDS = ("seq", "position", "ts", "op", "database", "schema", "table", "tx", "row", "before", "after")


def convert_rows(conv, rows: Rows, *, after: bool, before: bool, memos: dict[str, list[ColumnMemo]] | None = None
                 ) -> tuple[dict[str, list], list[tuple[_Event, str]], bool]:
    """The rows ``convertpass.write_version`` writes for one version's events (``rows``), as columns (each
    output column's name → its values, in the events' order: ``pa.Table.from_pydict``'s input),
    the rows with an error in either image ``(event, reason)``, and whether some row failed (an
    error in an image the plan converts: ``after`` / ``before``).  ``memos``: for staged rows,
    each image's ``ColumnMemo`` per column: the images are converted column by column first
    (``_column_pass``), and only those it leaves go through ``_image`` with their values
    (``staged_values``).  Raises ``Unsure`` (``staged_value``)."""
    names = conv.names
    none = (None,) * len(names)
    c = rows.columns
    ops, texts_a, texts_b = c["op"], c["after"], c["before"]
    n = len(ops)
    if memos is not None and rows.values is None:
        fast_a, fast_b = _column_pass(texts_a, memos["after"]), _column_pass(texts_b, memos["before"])
    else:
        fast_a = fast_b = [SLOW] * n
    given = rows.values
    # each image of each event: (converted values or None, absent names or None); the row
    # pass only for those the column pass left (errors, absent markers, a wrong arity)
    image_a: list = [qa if after else None for qa in fast_a]
    image_b: list = [qb if before else None for qb in fast_b]
    absent_a: list = [None] * n
    absent_b: list = [None] * n
    keep = [True] * n
    failed, errored = False, []
    for j in [j for j in range(n) if fast_a[j] is SLOW or fast_b[j] is SLOW]:
        op = ops[j]
        # only the images the event's op carries count, as in ``convertpass.converted``
        ea = eb = ()
        if fast_a[j] is SLOW:
            va = given["after"][j] if given is not None else staged_values(texts_a[j])
            image_a[j], absent_a[j], ea, fa = _image(conv, texts_a[j], va, after, op in AFTER_OPS)
            failed |= fa
            keep[j] = not fa
        if fast_b[j] is SLOW:
            vb = given["before"][j] if given is not None else staged_values(texts_b[j])
            image_b[j], absent_b[j], eb, fb = _image(conv, texts_b[j], vb, before, op in BEFORE_OPS)
            failed |= fb
            keep[j] = keep[j] and not fb
        if ea or eb:
            errored.append((rows.event(j), conversion_reason([*ea, *eb])))
    kept = range(n) if all(keep) else [j for j in range(n) if keep[j]]
    images = [none if image is None else image
              for image in ((image_b[j] if ops[j] == "d" else image_a[j]) for j in kept)]
    columns = dict(zip(names, zip(*images))) if images else {name: () for name in names}
    columns.update({f"_{name}": [c[name][j] for j in kept] for name in ("op", "seq", "position", "ts", "tx", "row")})
    columns["_absent"] = [absent_b[j] if ops[j] == "d" else absent_a[j] for j in kept]
    columns["_before"] = [dict(zip(names, none if image_b[j] is None else image_b[j])) if ops[j] in ("u", "d") else None
                          for j in kept]
    columns["_before_absent"] = [absent_b[j] if ops[j] in ("u", "d") else None for j in kept]
    return columns, errored, failed


def output_struct(conv):
    """The ``StructType`` of a version's row files, as ``convertpass.write_version`` writes it: the
    table's columns (``struct_type``, field metadata included), then ``META_COLUMNS`` with
    ``META_METADATA``."""
    from pyspark.sql.types import ArrayType, LongType, StringType, StructField, StructType

    names = ArrayType(StringType(), True)
    meta_types = {"_op": StringType(), "_seq": LongType(), "_position": StringType(), "_ts": LongType(),
                  "_tx": StringType(), "_row": LongType(), "_absent": names,
                  "_before": StructType([StructField(f.name, f.dataType, True, f.metadata)
                                         for f in conv.struct_type.fields]),
                  "_before_absent": names}
    return StructType([StructField(f.name, f.dataType, True, f.metadata) for f in conv.struct_type.fields]
                      + [StructField(n, meta_types[n], True, META_METADATA[n]) for n in META_COLUMNS])


def _parquet_bytes(struct, rows: list[dict]) -> bytes:
    """``rows`` (dicts of ``struct``'s fields) as the bytes of a Parquet file written by pyarrow
    as Spark writes it: the Arrow types of Spark's (INT64 ``TIMESTAMP(MICROS)``, decimals as
    INT32/INT64 by precision, 3-level lists), Snappy, and Spark's footer (``ROW_METADATA_KEY``,
    ``SPARK_VERSION_KEY``), no Arrow schema (``parquet_format``, ``PARQUET_WRITER``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema, footer = parquet_format(struct)
    table = pa.Table.from_pylist(rows, schema=schema)
    buf = io.BytesIO()
    with pq.ParquetWriter(buf, schema, **PARQUET_WRITER) as writer:
        writer.write_table(table)
        writer.add_key_value_metadata(footer)
    return buf.getvalue()


def _write_bytes(fs, rel: str, data: bytes) -> None:
    """``data`` as the file ``rel`` of the output, through ``fs`` (Hadoop's FileSystem)."""
    stream = fs.fs.create(fs.path(rel), True)
    try:
        stream.write(bytearray(data))
    finally:
        stream.close()


def _write_parquet(fs, rel: str, struct, rows: list[dict]) -> None:
    """``rows`` as the Parquet file ``rel`` of the output (``_parquet_bytes``, through ``fs``)."""
    _write_bytes(fs, rel, _parquet_bytes(struct, rows))
