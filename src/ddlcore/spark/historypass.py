"""The DDL pass of ``ddlcore run``: the change log's history events recorded in the schema history.

Owns: finding the ``ddl`` and ``source`` events of the run's input (few: collected to the
driver, in ``seq`` order), checking the log's identity (its source and capture epoch) and
dialect against the output's, recording the events past the checkpoint in the schema history
(``ddlcore.history``; a local copy for an output on another filesystem), and the table versions
the run tags rows with (``HistoryPass``).  Must not know: Spark's conversion, the commit.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..changelog import HISTORY_OPS
from ..errors import DdlParseError, PipelineError
from . import readlog
from . import versions as vs
from .quarantine import QuarantineRecord

if TYPE_CHECKING:  # pragma: no cover
    from ..history import TableVersion
    from .commit import OutputState

__all__ = ["HistoryPass", "record_history", "check_identity", "resolve_dialect"]


def check_identity(out: str, state: OutputState, sources: list, last: int | None, *,
                    continued: bool = False) -> dict | None:
    """The log's identity (from its source events) checked against the output's.
    ``continued``: part of the log was not read because the committed runs read it
    (``readlog.Inputs.continued``): its source events are those that gave the recorded identity, so a
    log with no source event among what was read has the recorded one."""
    from ..changelog import SourceInfo

    ids = []
    for ev in sources:
        ident = SourceInfo.from_json(ev.source).identity()
        if ident not in ids:
            ids.append(ident)
    if len(ids) > 1:
        raise PipelineError(f"the change log holds events of {len(ids)} different sources or capture epochs "
                            f"({'; '.join(_ident_text(i) for i in ids)}): give one log at a time")
    info = state.log_info()
    recorded = None if info is None else info.get("identity")
    ident = ids[0] if ids else (recorded if continued else None)
    if recorded is not None and ident != recorded:
        what = _ident_text(ident) if ident else "a log without a source event"
        raise PipelineError(f"{out} continues the change log of {_ident_text(recorded)}; this change log is "
                            f"{what}: a different log (a new capture or snapshot restarts seq at 1, and "
                            f"continuing would skip its rows); write it to a new output directory")
    if info is not None and recorded is None and ident is not None and last is not None \
            and sources[0].seq <= last:
        # the output consumed this log's first source event, yet recorded no identity: it was
        # written from another log (a source event appearing after the checkpoint is a capture
        # that gained one on an upgrade: the same log)
        raise PipelineError(f"{out} was written from a change log without a source event up to seq {last}; "
                            f"this change log is {_ident_text(ident)}: write it to a new output directory")
    return ident


def _ident_text(ident: dict) -> str:
    server = ", ".join(f"{k} {v}" for k, v in sorted((ident.get("server") or {}).items()) if v is not None)
    return (f"{ident.get('dialect')}/{ident.get('flavor') or '-'} server ({server or 'unnamed'}) "
            f"epoch {ident.get('epoch')}")


def resolve_dialect(given: str | None, sources: list, info: dict | None) -> str:
    """The run's dialect: the log's source event's (``sources``: its source events), else
    ``given`` (``--dialect``, ``run_pipeline(dialect=...)``), else the output's (``info``: its
    recorded log info).  Never a guess: none of the three is a ``PipelineError`` naming the
    option; so is a contradiction between them."""
    from ..errors import DialectNotFound
    from ..plugins import get_dialect

    try:
        log = get_dialect(sources[0].source["dialect"]).name if sources else None
    except DialectNotFound as exc:
        raise PipelineError(f"the change log's source event says its DDL is "
                            f"{sources[0].source['dialect']!r}: {exc}") from None
    asked = get_dialect(given).name if given else None
    if asked and log and asked != log:
        raise PipelineError(f"--dialect {given}: the change log's source event says its DDL is {log}")
    recorded = None if info is None else info.get("dialect")
    name = log or asked or recorded
    if name is None:
        raise PipelineError("--dialect: the change log has no source event naming its dialect (a capture's "
                            "header has one) and the output records none: name it, e.g. --dialect mysql "
                            "(dialect='mysql' in run_pipeline)")
    if recorded is not None and name != recorded:
        raise PipelineError(f"this output was written with dialect {recorded}, not {name}")
    return name


# --------------------------------------------------------------------------------------------
# the job
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HistoryPass:
    """What the DDL pass gives the rest of a run: the log's ``identity`` (``check_identity``),
    the ``dialect``, whether the history folds table names (``fold``), the table ``versions``
    rows can be tagged with (``ddlcore.spark.versions.version_list``, as the sink writes them),
    the quarantine ``records`` of DDL that could not be parsed and of malformed history events
    (in that order), the history's local ``path``, and ``local_copy``: the temporary directory
    of a copy of the history (an output on another filesystem: uploaded by the commit, removed
    by the run), else ``None``."""

    identity: dict | None
    dialect: str
    fold: bool
    versions: list[TableVersion]
    records: list[QuarantineRecord]
    path: Path
    local_copy: str | None


def _candidates(ctx: Any, inputs: Any, increment: Any) -> list:
    """The lines that may hold a ``ddl`` or ``source`` event: none when the run reads only tails
    without one (``inputs.no_history``), those of the driver's increment, else read by Spark
    (``read_events(history_only=True)``).  They are filtered on the driver: a Spark filter on the
    parsed fields would be merged with the text pre-filter, and the generated code would then
    parse every line (common-subexpression elimination evaluates the shared ``from_json``
    first)."""
    if inputs.no_history:
        return []
    if increment is not None:
        return increment.history_candidates()
    return (readlog.read_events(ctx.spark, inputs, history_only=True).where("_valid")
            .select("seq", "op", "_line", "_file").collect())


def _history_events(ctx: Any, candidates: list) -> tuple[list, list[QuarantineRecord]]:
    """The ``ddl`` / ``source`` events among ``candidates``, in ``seq`` order, and the records
    of those that are malformed (past the checkpoint only: the others were quarantined once)."""
    from ..changelog import validate

    events, bad = [], []
    for r in candidates:
        if r.op not in HISTORY_OPS:
            continue
        try:
            events.append(validate(readlog.line_object(r["_line"])))
        except (ValueError, TypeError) as exc:
            if ctx.last is None or r.seq > ctx.last:
                bad.append(QuarantineRecord(r.seq, None, r.op, None, None, None, f"malformed {r.op} event: {exc}",
                                            r["_line"]))
    events.sort(key=lambda e: e.seq)
    return events, bad


def _history_path(ctx: Any) -> tuple[Path, str | None]:
    """Where the run records the history: ``RunConfig.history``, else ``OUT/_history.sqlite``
    in place on a local output, else a local copy (SQLite needs a local file; the commit
    uploads it: docs/pipeline.md) in a new temporary directory, returned too."""
    fs = ctx.fs
    if ctx.config.history:
        return Path(ctx.config.history), None
    if fs.local_root is not None:
        return Path(fs.local_root) / "_history.sqlite", None
    local_tmp = tempfile.mkdtemp(prefix="ddlcore-history-")
    path = Path(local_tmp) / "_history.sqlite"
    if fs.exists("_history.sqlite"):
        fs.copy_to_local("_history.sqlite", str(path))
    return path, local_tmp


def _record(ctx: Any, hist: Any, todo: list) -> list[QuarantineRecord]:
    """Record the events ``todo`` in ``hist``; the drift warnings go to the run's result.  Returns
    the quarantine records of the DDL that could not be parsed (lenient); raises
    ``PipelineError`` (strict, or a history error) naming the event's seq."""
    from ..history import HistoryError

    failed = []
    for ev in todo:
        try:
            rec = hist.record(ev.to_json())
        except DdlParseError as exc:
            raise PipelineError(f"DDL cannot be parsed: {exc}", ev.seq) from None
        except HistoryError as exc:
            raise PipelineError(str(exc), ev.seq) from None
        ctx.result.drift.extend(f"seq {ev.seq}: {w}" for w in rec.warnings if w.startswith("drift"))
        if rec.status == "failed":
            why = (rec.error or {}).get("reason", "unparsable DDL")
            failed.append(QuarantineRecord(ev.seq, ev.position, "ddl", ev.database, ev.schema, None,
                                           "DDL could not be parsed: " + why, ev.to_line()))
    return failed


def record_history(ctx: Any, inputs: Any, increment: Any, out: str, sink: Any = None) -> HistoryPass:
    """The DDL pass of the run ``ctx`` (a ``RunContext``): read the history events of
    ``inputs`` (``readlog.Inputs``; ``increment``: the driver's ``DriverIncrement`` or
    ``None``), check the log's identity and dialect against the output ``out``'s, record the
    events past the checkpoint in the schema history, and list its table versions (through the
    ``sink``'s ``prepare``).  Fills the result's ``dialect``, ``ddl`` and ``drift``.  Raises
    ``PipelineError`` (another log, another dialect, an unreadable history, strict mode)."""
    from ..history import HistoryError, SchemaHistory

    ctx.say("reading the DDL events of the change log")
    events, bad = _history_events(ctx, _candidates(ctx, inputs, increment))
    sources = [e for e in events if e.op == "source"]
    identity = check_identity(out, ctx.state, sources, ctx.last, continued=inputs.continued)
    name = resolve_dialect(ctx.config.dialect, sources, ctx.state.log_info())
    ctx.result.dialect = name
    todo = [e for e in events if ctx.last is None or e.seq > ctx.last]
    ctx.say(f"recording {len(todo)} DDL event(s) in the schema history")
    path, local_tmp = _history_path(ctx)
    try:
        try:
            hist = SchemaHistory.open(path, dialect=name, lenient=not ctx.config.strict)
        except HistoryError as exc:
            raise PipelineError(f"schema history {path}: {exc}") from None
        with hist:
            failed = _record(ctx, hist, todo)
            ctx.result.ddl = sum(1 for e in todo if e.op == "ddl")
            versions = vs.version_list(hist)
            if sink is not None:  # the sink's physical column names (ddlcore.sinks.base.Sink.prepare)
                versions = sink.prepare(hist, versions, dialect=name)
            return HistoryPass(identity, name, hist.folds_table_names, versions, failed + bad, path, local_tmp)
    except BaseException:
        if local_tmp is not None:
            shutil.rmtree(local_tmp, ignore_errors=True)
        raise
