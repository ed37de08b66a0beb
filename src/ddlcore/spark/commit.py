"""The commit protocol of ``ddlcore run``: a run's files become visible at once, or not at all.

Owns: ``OUT/_state`` (``OutputState``: the checkpoint, the commit in progress, the staging area,
the log's identity and run options, the malformed lines already quarantined, the bytes of each
change-log file read), the staging area's layout and the names of the files written into it
(``file_names``, ``assemble``), the commit plan (``plan_moves``, ``commit``) and carrying it out
(``apply_plan``: idempotent, so a killed run is rolled forward by the next), and ``_run.json``
(``merge_run_json``).  Every file operation on ``OUT`` goes through Hadoop's FileSystem API
(``ddlcore.spark.fs``), so ``OUT`` may be any URI Spark writes to.

The protocol: a run writes into ``OUT/_state/staging/<run>/``, every file named after the run
(``file_names``; rows that cannot be converted go first to ``OUT/_state/staging/<run>.bad/``,
from which the quarantine file is written); when every write has succeeded it gives the staging
directory the output's layout (``assemble``), writes ``OUT/_state/pending.json`` (the moves — a
whole directory where its destination is new, else file by file, ``plan_moves`` — the files to
delete, the new state files, the sink's part, the new checkpoint, fsynced: the commit point),
moves them into place, deletes the replaced quarantine files, carries out the sink's part (an
Iceberg transaction), writes the checkpoint and removes ``pending.json``.  A run holds the
output's lock (``ddlcore.spark.outlock``) for its whole length, so only the lock's holder removes
staging files or rolls a commit forward; a file to move that is gone from both ends stops the
commit (``apply_moves``).  A run killed before ``pending.json`` exists leaves only staging files,
removed by the next run, which redoes the work; a run killed after it is rolled forward by the
next run before it reads anything.  So no row is lost or written twice, and readers of a table
directory only ever see files of committed runs (up to the few renames of a roll-forward in
progress).  Must not know: how rows are converted, any dialect.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..errors import PipelineError

if TYPE_CHECKING:  # pragma: no cover
    from .fs import OutputFS

__all__ = ["OutputState", "write_json", "read_json", "apply_plan", "apply_moves", "file_names", "GROUPS",
           "make_dirs", "assemble", "plan_moves", "merge_run_json", "commit"]


def write_json(fs: "OutputFS", rel: str, data: Any, *, indent: int | None = 2) -> None:
    """``data`` as JSON into ``rel``, atomically (``OutputFS.write_text``); ``indent=None``:
    compact, for the machine's files that grow with the output (the commit plan: megabytes for
    thousands of tables, and ``json`` encodes an indented document in Python, ten times
    slower than its C encoder)."""
    fs.write_text(rel, json.dumps(data, indent=indent, sort_keys=True), atomic=True)


def read_json(fs: "OutputFS", rel: str) -> Any:
    text = fs.read_text(rel)
    return None if text is None else json.loads(text)


class OutputState:
    """``OUT/_state`` (paths relative to ``OUT``, read and written through ``fs``): the
    checkpoint, the commit in progress, the staging area, the log's identity and run options
    (``log.json``) and the malformed lines already quarantined (``malformed.json``)."""

    def __init__(self, fs: "OutputFS"):
        self.fs = fs
        self.dir = "_state"
        self.checkpoint = "_state/checkpoint.json"
        self.pending = "_state/pending.json"
        self.staging = "_state/staging"
        self.log = "_state/log.json"
        self.malformed = "_state/malformed.json"
        self.inputs = "_state/inputs.json"

    def last_seq(self) -> int | None:
        data = read_json(self.fs, self.checkpoint)
        return None if data is None else data["last_seq"]

    def log_info(self) -> dict | None:
        return read_json(self.fs, self.log)

    def malformed_keys(self) -> set[str]:
        return set(read_json(self.fs, self.malformed) or ())

    def marks(self) -> dict[str, dict[str, Any]]:
        """``inputs.json``: what the committed runs consumed of each local JSON Lines
        change-log file, ``{real path: {"offset": bytes, "fingerprint": hex}}``
        (``_incremental_inputs``); empty when none was recorded or when it is not the
        checkpoint's (its ``run`` differs from the checkpoint's: a checkpoint removed or put
        back by hand)."""
        data = read_json(self.fs, self.inputs) or {}
        checkpoint = read_json(self.fs, self.checkpoint) or {}
        if data.get("run") is None or data.get("run") != checkpoint.get("run"):
            return {}
        return dict(data.get("files") or {})

    def recover(self) -> bool:
        """Roll a committed-but-unfinished run forward; drop uncommitted staging files."""
        rolled = False
        plan = read_json(self.fs, self.pending)
        if plan is not None:
            apply_plan(plan, self)
            self.fs.delete(self.pending)
            rolled = True
        self.fs.delete(self.staging, recursive=True)
        return rolled


def apply_plan(plan: dict[str, Any], state: OutputState) -> None:
    """Carry out a commit plan (idempotent: a roll-forward may repeat it).  Its paths are
    relative to the output (absolute local paths in a plan of an earlier version).  Raises
    ``PipelineError`` for a sink part this version cannot carry out (``sinks.base.check_plan``),
    before doing anything."""
    fs = state.fs
    if plan.get("sink") is not None:  # one this version can carry out: checked before any of it is done
        from ..sinks.base import check_plan
        check_plan(plan["sink"], fs.str(state.pending))
    apply_moves(plan["moves"], fs)
    for path in plan.get("deletes", ()):
        fs.delete(path)
    for name, data in (plan.get("state") or {}).items():
        write_json(fs, f"{state.dir}/{name}", data)
    if plan.get("sink") is not None:  # the sink's commit (an Iceberg transaction), before the checkpoint
        from ..sinks.base import commit_plan
        commit_plan(plan["sink"], fs)
    write_json(fs, state.checkpoint, plan["checkpoint"])
    if plan.get("run_json") is not None:
        write_json(fs, plan["run_json_path"], plan["run_json"])


def apply_moves(moves: list[list[str]], fs: "OutputFS") -> None:
    """The moves of a commit plan (``plan_moves``: ``[src, dst]`` a file, ``[src, dst, "dir"]``
    a whole directory), idempotent: a source moved already is skipped, and a directory move that
    an object store left half done (it copies file by file) is finished file by file
    (``OutputFS.move_dir``).  A source that is neither where the plan put it nor at its
    destination is an error (``PipelineError``), never skipped: the run's files were lost."""
    for move in moves:
        moved = fs.move_dir(move[0], move[1]) if len(move) > 2 and move[2] == "dir" else fs.move(move[0], move[1])
        if not moved and not fs.exists(move[1]):
            raise PipelineError(f"commit: {fs.str(move[0])} is missing and was not moved to {fs.str(move[1])}: "
                                f"a file of the run was lost (removed by another process?); the commit "
                                f"({OutputState(fs).pending}) cannot be finished")

#: the staging directory of the jobs that write several table versions (``GROUPS/<first
#: version>/_part=<version>/``); the commit moves each version's files to its own directory
GROUPS = "_groups"


def file_names(run_id: str) -> dict[str, str]:
    """The session settings of a run's writes: every file Spark writes is named after the run
    (``<run>-part-NNNNN-<job uuid>-c000.snappy.parquet``: Spark 4 takes the Hadoop property
    ``mapreduce.output.basename``, SPARK-49991), and no job writes a ``_SUCCESS`` marker — so a
    staged version directory holds exactly the files its output directory gets, and the commit
    moves it whole (``plan_moves``) instead of renaming each file to add the run id."""
    return {"mapreduce.output.basename": f"{run_id}-part",
            "mapreduce.fileoutputcommitter.marksuccessfuljobs": "false"}


def make_dirs(fs: "OutputFS", dirs: set[str]) -> None:
    """Make the directories ``dirs`` of the output (relative paths; the parent of each is in
    ``dirs`` or exists): each top-most one with every one below it at once, made locally and
    moved in (``OutputFS.put_tree``) — not a Hadoop ``mkdirs`` each, which on a local output
    runs a ``chmod`` process each."""
    if not dirs:
        return
    below: dict[str, list[str]] = defaultdict(list)
    for d in dirs:
        top = d
        while top.rpartition("/")[0] in dirs:
            top = top.rpartition("/")[0]
        below[top].append(d)
    local = tempfile.mkdtemp(prefix="ddlcore-dirs-")
    try:
        for i, (top, inside) in enumerate(sorted(below.items())):
            tree = Path(local, str(i))
            tree.mkdir()
            for d in inside:
                if d != top:
                    (tree / d[len(top) + 1:]).mkdir(parents=True, exist_ok=True)
            fs.put_tree(str(tree), top)
    finally:
        shutil.rmtree(local, ignore_errors=True)


def assemble(fs: "OutputFS", staging: str, group_dirs: dict[int, str]) -> None:
    """Before the commit point, give the run's staging directory ``staging`` the output's
    layout, so that the commit can move whole directories (``plan_moves``): each version
    written by a job of several (``GROUPS/<first>/_part=<version>/``) is renamed to its own
    directory (``group_dirs``: version → its directory, relative to the output), one rename
    each, and the directories above them that the staging directory lacks are made at once
    (``make_dirs``).  Only the group directories and the parents of these destinations are
    listed (``OutputFS.names``), never every staged file.  A
    crash here leaves only staging files: the next run deletes them.  Raises
    ``PipelineError`` for staged rows of a version with no directory in ``group_dirs``."""
    groups = f"{staging}/{GROUPS}"
    parts: dict[str, str] = {}
    for first in fs.names(groups):
        for name in fs.names(f"{groups}/{first}"):
            if name.startswith("_part="):  # a partition directory of Spark's
                k = int(name.split("=", 1)[1])
                if k not in group_dirs:
                    raise PipelineError(f"{groups}/{first}/{name}: staged rows of table version {k} "
                                        f"with no output directory")
                parts[f"{groups}/{first}/{name}"] = f"{staging}/{group_dirs[k]}"
    listed: dict[str, set[str]] = {}
    found: dict[str, bool] = {staging: True}

    def exists(d: str) -> bool:  # in the staging directory, from listings of its parents
        if d not in found:
            parent, _, name = d.rpartition("/")
            if exists(parent) and parent not in listed:
                listed[parent] = set(fs.names(parent))
            found[d] = name in listed.get(parent, ())
        return found[d]

    if len(set(parts.values())) < len(parts) or any(exists(d) for d in parts.values()):
        raise PipelineError(f"{staging}: a table version staged twice")  # pragma: no cover - a bug
    missing: set[str] = set()
    for dst in parts.values():
        d = dst.rpartition("/")[0]
        while d not in missing and not exists(d):
            missing.add(d)
            d = d.rpartition("/")[0]
    make_dirs(fs, missing)
    for src, dst in parts.items():  # none of them exists: a rename each, without a check
        fs.rename_new(src, dst)


def plan_moves(fs: "OutputFS", staging: str, run_id: str) -> list[list[str]]:
    """The commit's moves (paths relative to the output): the run's staging directory
    (``assemble``d into the output's layout) merged into the output.  A staged directory whose
    destination does not exist yet is moved whole, ``[src, dst, "dir"]`` — a first run moves a
    handful of directories, not a file each —; one that exists is descended into; a file is
    moved by itself, ``[src, dst]``: rows appended to an existing version directory, a schema
    file or the history's copy replacing its namesake.  Data and quarantine files are named
    after the run (``<run>-...``; Spark's by ``file_names``, the driver's by their writers),
    so files of different runs never collide; one moved by itself without that prefix gets it.
    Names beginning with ``.`` (a local filesystem's ``.crc`` side files, moved with their
    file) or ``_SUCCESS`` and the emptied ``GROUPS`` directory are left out.  Only staged
    directories whose destination exists are listed (and their destinations, by name)."""
    moves: list[list[str]] = []

    def merge(rel: str) -> None:  # ``rel`` is a directory in the staging area and in the output
        kids = fs.list(f"{staging}/{rel}".rstrip("/"))
        there = set(fs.names(rel)) if any(is_dir for _, is_dir in kids) else set()
        for name, is_dir in kids:
            if name.startswith(".") or name == "_SUCCESS" or (not rel and name == GROUPS):
                continue
            sub = f"{rel}/{name}" if rel else name
            if is_dir:
                if name in there:
                    merge(sub)
                else:
                    moves.append([f"{staging}/{sub}", sub, "dir"])
            elif not rel or rel.split("/", 1)[0] == "_schemas" or name.startswith(f"{run_id}-"):
                moves.append([f"{staging}/{sub}", sub])
            else:
                moves.append([f"{staging}/{sub}", f"{rel}/{run_id}-{name}"])

    merge("")
    return moves


def merge_run_json(fs: "OutputFS", result: Any) -> dict[str, Any]:
    """``_run.json`` after a run (``result``: its ``RunResult``): the run's counts added to the
    totals of the committed runs, ``runs`` one more, ``last_run`` the result."""
    total: dict[str, int] = defaultdict(int)
    runs = 0
    prev = read_json(fs, "_run.json")
    if prev is not None:
        runs = prev.get("runs", 0)
        for row in prev.get("total", {}).get("counts", []):
            total[json.dumps([row["database"], row["table"], row["schema_version"], row["op"]])] += row["rows"]
    for (d, t, v, o), n in result.counts.items():
        total[json.dumps([d, t, v, o])] += n
    counts = [{"database": d, "table": t, "schema_version": v, "op": o, "rows": n}
              for (d, t, v, o), n in sorted((tuple(json.loads(k)), n) for k, n in total.items())]
    return {"runs": runs + 1, "last_run": result.to_json(), "total": {"counts": counts}}


def commit(ctx: Any, *, group_dirs: dict[int, str], deletes: list[str], new_malformed: list[str],
           marks: dict[str, dict[str, Any]], log_info: dict[str, Any], sink: Any = None,
           before_moves: Callable[[], Any] | None = None) -> None:
    """Commit the run of ``ctx`` (a ``RunContext`` whose files are all staged): give the staging
    directory the output's layout (``group_dirs``: version → its directory, for the versions
    written by a job of several, ``assemble``), let the ``sink`` stage what it derives from the
    files, write the commit plan (``pending.json``: the commit point) — the moves, the quarantine
    files to ``deletes``, the state files (``log.json``: ``log_info``; ``inputs.json``: ``marks``,
    what the run consumed of each change-log file; ``malformed.json`` grown by ``new_malformed``),
    ``_run.json``, the sink's part and the checkpoint — and carry it out.  ``before_moves``:
    called after the sink's stage, before the moves are planned, to wait for what the run
    still writes into the staging directory meanwhile (the schema files, in a thread:
    ``schemafiles.start_writing``; it raises what that raised).  Raises what ``apply_plan``
    raises (the plan stays: the next run rolls it forward)."""
    fs, state, run_id, staging, result = ctx.fs, ctx.state, ctx.run_id, ctx.staging, ctx.result
    run_json = merge_run_json(fs, result)
    assemble(fs, staging, group_dirs)
    if sink is not None:  # (it writes outside the staging directory: the moves do not depend on it)
        sink.stage(ctx.spark, fs, staging, run_id, ctx.last)
    if before_moves is not None:
        before_moves()
    moves = plan_moves(fs, staging, run_id)
    plan_state: dict[str, Any] = {"log.json": log_info, "inputs.json": {"run": run_id, "files": marks}}
    if new_malformed:
        plan_state["malformed.json"] = sorted(state.malformed_keys() | set(new_malformed))
    plan = {"run": run_id, "moves": moves, "deletes": deletes, "state": plan_state,
            "checkpoint": {"last_seq": result.last_seq, "run": run_id},
            "run_json": run_json, "run_json_path": "_run.json",
            "sink": None if sink is None else sink.plan(fs, staging, run_id, result.last_seq, ctx.last)}
    write_json(fs, state.pending, plan, indent=None)  # the commit point
    apply_plan(plan, state)
    fs.delete(state.pending)
    fs.delete(state.staging, recursive=True)
