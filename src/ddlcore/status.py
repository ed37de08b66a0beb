"""What a ``ddlcore run`` output holds now, and how far it is behind its capture
(``ddlcore status OUT``).

Owns: reading, without Spark and without changing anything, a local output directory's
committed state and the capture directory it reads from:

* ``OUT/_state/checkpoint.json`` — the last committed ``seq`` and run; its modification time
  is the commit's time; ``OUT/_state/pending.json`` — a commit being applied (the next run
  rolls it forward);
* ``OUT/_state/inputs.json`` — the change-log files read and the bytes of each consumed: the
  event just before that offset is the last committed event (its ``ts``, its ``position``);
* the capture directory beside a change-log file named ``changelog.jsonl`` that has a
  ``checkpoint.json`` (``ddlcore.capture``): its checkpointed ``seq`` and ``changelog_bytes``,
  and the event just before that length (the capture's last durable event);
* ``OUT/_run.json`` (rows per table, version and op, over every run), ``OUT/_schemas/*.json``
  (each table's versions), ``OUT/_quarantine/*.json`` (records with a ``reason``);
* ``OUTPUT_LOCK_NAME``, the lock a running ``ddlcore run`` holds on ``OUT``.

Lag: ``events`` is the capture's checkpointed seq minus the output's committed seq (a
capture's seq has no gaps); ``seconds`` is the difference of the two events' commit times
(``ts``, the source's clock), so it measures how far behind the source's time the output is,
not how long ago anything ran.  Must not know: Spark, any dialect or capture by name.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from .errors import DdlCoreError
from .reasons import short_reason
from .runlock import LOCK_PATH, probe

__all__ = ["OUTPUT_LOCK_NAME", "StatusError", "OutputStatus", "TableStatus", "output_status", "output_lock",
           "output_lag", "last_event_before"]

#: the lock file a running ``ddlcore run`` holds (``flock``, exclusive) on its output, relative
#: to ``OUT`` (``ddlcore.runlock``, shared with ``ddlcore.spark.outlock``: no pyspark loaded)
OUTPUT_LOCK_NAME = LOCK_PATH
#: the capture's change-log file and checkpoint (``ddlcore.capture.CHANGELOG_NAME`` /
#: ``CHECKPOINT_NAME``; not imported, so that status loads nothing of the capture machinery)
_CAPTURE_LOG, _CAPTURE_CHECKPOINT = "changelog.jsonl", "checkpoint.json"
#: bytes read back from an offset to find the line before it (doubled while one line is longer)
_TAIL = 1 << 16


class StatusError(DdlCoreError):
    """``OUT`` is not a local ``ddlcore run`` output, or a state file cannot be read."""


@dataclass(frozen=True)
class TableStatus:
    """One table of an output (``OutputStatus.tables``): its ``database``, ``schema``
    (``None`` without one) and ``table`` name, its latest ``version`` (``_schemas``), the span
    ``valid_from_seq`` / ``valid_to_seq`` of that version (``None``: still in force) and the
    ``rows`` written to the table in all runs (``_run.json``)."""

    database: str | None
    schema: str | None
    table: str
    version: int
    valid_from_seq: int | None
    valid_to_seq: int | None
    rows: int

    @property
    def name(self) -> str:
        """``database.[schema.]table``."""
        return ".".join(str(p) for p in (self.database, self.schema, self.table) if p is not None)


@dataclass
class OutputStatus:
    """``ddlcore status``'s answer (``to_json`` is the ``--format json`` document).

    * ``committed``: ``seq`` (``None`` before the first commit), ``run``, ``time`` (UTC, ISO
      8601: when the checkpoint was written), ``age_seconds`` (now minus that), ``ts`` (the
      last committed event's commit time, ms), ``position`` (its source position),
      ``pending`` (a commit is being applied).
    * ``capture``: ``None`` unless the change log is a capture directory; else ``directory``,
      ``seq``, ``phase``, ``updated``, ``ts`` and ``position`` of its last checkpointed event.
    * ``lag``: ``events`` and ``seconds`` (module docstring; ``None`` without a capture).
    * ``tables``: a ``TableStatus`` per table (in ``to_json``: its fields), ordered by name.
    * ``quarantine``: ``total`` and ``reasons`` (reason → records, the run summary's keys).
    * ``lock``: ``path``, ``held`` (a process holds it now), ``pid`` (when the file names one).
    * ``changelog``: the change-log files the output has read, with the bytes consumed."""

    out: str
    committed: dict[str, Any]
    capture: dict[str, Any] | None
    lag: dict[str, Any]
    tables: list[TableStatus] = field(default_factory=list)
    quarantine: dict[str, Any] = field(default_factory=dict)
    lock: dict[str, Any] = field(default_factory=dict)
    changelog: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise StatusError(f"{path}: unreadable ({exc})") from None


def _utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def last_event_before(path: Path, nbytes: int) -> dict[str, Any] | None:
    """The change-log event on the last complete line that ends at or before byte ``nbytes``
    of the JSON Lines file ``path`` (``None``: no such line, a compressed or unreadable file).
    Reads backwards from ``nbytes`` in blocks, so the file's size does not matter."""
    if nbytes <= 0 or path.suffix != ".jsonl":
        return None
    window = _TAIL
    try:
        with open(path, "rb") as fh:
            while True:
                start = max(0, nbytes - window)
                fh.seek(start)
                chunk = fh.read(nbytes - start)
                lines = chunk.rstrip(b"\n").split(b"\n")
                if len(lines) > 1 or start == 0:
                    return json.loads(lines[-1]) if lines[-1].strip() else None
                window *= 2
    except (OSError, ValueError):
        return None


def output_lock(out: Path) -> dict[str, Any]:
    """Whether a process holds ``OUT/OUTPUT_LOCK_NAME`` now: ``{"path", "held", "pid"}``
    (``ddlcore.runlock.probe``: a shared non-blocking ``flock``, released at once; the file is
    never created).  ``pid``: the holder's pid as the file records it (``None`` otherwise)."""
    seen = probe(out)
    return {"path": str(seen.path), "held": seen.held, "pid": seen.pid}


def _committed(out: Path, inputs: dict[str, Any]) -> dict[str, Any]:
    state = out / "_state"
    cp = _read_json(state / "checkpoint.json") or {}
    seq = cp.get("last_seq")
    got: dict[str, Any] = {"seq": seq, "run": cp.get("run"), "time": None, "age_seconds": None, "ts": None,
                           "position": None, "pending": (state / "pending.json").exists()}
    if cp:
        mtime = (state / "checkpoint.json").stat().st_mtime
        got["time"], got["age_seconds"] = _utc(mtime), round(max(0.0, time.time() - mtime), 3)
    last = None
    for name, mark in (inputs.get("files") or {}).items():
        ev = last_event_before(Path(name), int(mark.get("offset") or 0))
        if ev is not None and isinstance(ev.get("seq"), int) and (seq is None or ev["seq"] <= seq) \
                and (last is None or ev["seq"] > last["seq"]):
            last = ev
    if last is not None:
        got["ts"], got["position"] = last.get("ts"), last.get("position")
    return got


def _capture(files: list[str]) -> dict[str, Any] | None:
    """The capture directory among the change-log files read (module docstring), or ``None``."""
    for name in files:
        log = Path(name)
        cp_path = log.parent / _CAPTURE_CHECKPOINT
        if log.name != _CAPTURE_LOG or not cp_path.is_file():
            continue
        cp = _read_json(cp_path) or {}
        try:
            seq, nbytes = int(cp["seq"]), int(cp["changelog_bytes"])
        except (KeyError, TypeError, ValueError):
            continue  # not a capture's checkpoint
        ev = last_event_before(log, nbytes) or {}
        return {"directory": str(log.parent), "seq": seq, "phase": cp.get("phase", "streaming"),
                "updated": cp.get("updated"), "ts": ev.get("ts"), "position": ev.get("position")}
    return None


def _lag(committed: dict[str, Any], capture: dict[str, Any] | None) -> dict[str, Any]:
    if capture is None:
        return {"events": None, "seconds": None}
    events = max(0, capture["seq"] - (committed["seq"] or 0))
    a, b = capture.get("ts"), committed.get("ts")
    seconds = 0.0 if events == 0 else round(max(0.0, (a - b) / 1000), 3) \
        if isinstance(a, int) and isinstance(b, int) else None
    return {"events": events, "seconds": seconds}


def _tables(out: Path) -> list[TableStatus]:
    """The latest version of each table (``_schemas``) with the rows written (``_run.json``)."""
    rows: Counter = Counter()
    for r in ((_read_json(out / "_run.json") or {}).get("total") or {}).get("counts", []):
        rows[(r["database"], r["table"])] += int(r["rows"])
    latest: dict[tuple, dict[str, Any]] = {}
    for path in sorted((out / "_schemas").glob("*.json")):
        doc = _read_json(path) or {}
        key = (doc.get("database"), doc.get("schema"), doc.get("table"))
        if "schema_version" in doc and (key not in latest or doc["schema_version"] > latest[key]["schema_version"]):
            latest[key] = doc
    tables = [TableStatus(database, schema, table, doc["schema_version"], doc.get("valid_from_seq"),
                          doc.get("valid_to_seq"), rows.get((database, f"{schema}.{table}" if schema else table), 0))
              for (database, schema, table), doc in latest.items()]
    return sorted(tables, key=lambda t: tuple("" if v is None else str(v) for v in (t.database, t.schema, t.table)))


def _quarantine(out: Path) -> dict[str, Any]:
    reasons: Counter = Counter()
    for path in sorted((out / "_quarantine").glob("*.json")):
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise StatusError(f"{path}: unreadable ({exc})") from None
        for i, line in enumerate(lines, 1):
            if line.strip():
                try:
                    reasons[short_reason(str(json.loads(line).get("reason")))] += 1
                except (ValueError, AttributeError):
                    raise StatusError(f"{path}:{i}: not a quarantine record") from None
    return {"total": sum(reasons.values()), "reasons": dict(reasons.most_common())}


def _local(out: str | Path) -> Path:
    text = str(out)
    scheme = urlparse(text).scheme
    if scheme not in ("", "file") and len(scheme) > 1:  # one letter: a Windows drive
        raise StatusError(f"{text}: status reads a local output (a path or a file: URI), not {scheme}:")
    path = Path(urlparse(text).path if scheme == "file" else text)
    if not (path / "_state").is_dir():
        raise StatusError(f"{path}: not a ddlcore run output (no _state/ directory)")
    return path


def output_lag(out: str | Path) -> dict[str, Any]:
    """The part of ``output_status`` a follower shows after each batch, cheaply (no tables, no
    quarantine): ``{"committed_seq", "capture_seq", "events", "seconds"}`` (``lag`` of the
    module docstring; ``capture_seq``, ``events`` and ``seconds`` are ``None`` without a
    capture).  Raises ``StatusError`` as ``output_status`` does."""
    path = _local(out)
    inputs = _read_json(path / "_state" / "inputs.json") or {}
    committed = _committed(path, inputs)
    capture = _capture(list((inputs.get("files") or {}).keys()))
    return {"committed_seq": committed["seq"], "capture_seq": None if capture is None else capture["seq"],
            **_lag(committed, capture)}


def output_status(out: str | Path) -> OutputStatus:
    """The status of the output ``out`` (a path or ``file:`` URI) — ``OutputStatus``.  Raises
    ``StatusError`` when it is not a local ``ddlcore run`` output or a state file is
    unreadable."""
    path = _local(out)
    inputs = _read_json(path / "_state" / "inputs.json") or {}
    files = list((inputs.get("files") or {}).keys())
    committed = _committed(path, inputs)
    capture = _capture(files)
    return OutputStatus(out=str(path), committed=committed, capture=capture, lag=_lag(committed, capture),
                        tables=_tables(path), quarantine=_quarantine(path), lock=output_lock(path),
                        changelog={f: int((inputs["files"][f] or {}).get("offset") or 0) for f in files})
