"""The sink interface of ``ddlcore run`` and the choice of a sink by ``--format``.

A run hands its sink the table versions it is about to write (``prepare``: typed
``ddlcore.history.TableVersion`` records; the sink may give a version's columns the physical
names it needs), then, after every file is staged, asks for the sink's
part of the commit plan (``plan``: JSON, written into ``OUT/_state/pending.json`` with the
moves); the commit carries that part out after the files are moved into place and before the
checkpoint (``commit_plan``), and a roll-forward carries it out again (it must be idempotent).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover
    from ..history import SchemaHistory, TableVersion

__all__ = ["Sink", "ParquetSink", "make_sink", "check_plan", "commit_plan", "FORMATS"]

#: the values of ``ddlcore run --format``
FORMATS = ("parquet", "iceberg")


class Sink(Protocol):
    """What ``ddlcore.spark.pipeline`` asks of an output format."""

    format: str

    def prepare(self, history: SchemaHistory, versions: list[TableVersion], *,
                dialect: str) -> list[TableVersion]:
        """``versions`` (the history's, in the run's order: ``ddlcore.spark.versions.version_list``)
        as the run writes them, one for one in the same order: only a version's ``table`` (the
        model) may differ, e.g. its columns under the physical names the format needs.  ``history``:
        the run's schema history (every version of every table, for lineages); ``dialect``: the
        run's (``ddlcore.plugins`` name)."""

    def stage(self, spark: Any, fs: Any, staging: str, run_id: str, previous_seq: int | None) -> None:
        """Write what the sink derives from the staged files (after every file is staged,
        before ``plan``)."""

    def plan(self, fs: Any, staging: str, run_id: str, last_seq: int | None,
             previous_seq: int | None) -> dict[str, Any] | None:
        """This sink's part of the commit plan (JSON), or ``None`` when it has none."""


class ParquetSink:
    """One Parquet directory per table version (docs/pipeline.md): the files are the output."""

    format = "parquet"

    def prepare(self, history: SchemaHistory, versions: list[TableVersion], *,
                dialect: str) -> list[TableVersion]:
        """``versions`` as they are: the files take the source's column names."""
        return versions

    def stage(self, spark: Any, fs: Any, staging: str, run_id: str, previous_seq: int | None) -> None:
        return None

    def plan(self, fs: Any, staging: str, run_id: str, last_seq: int | None,
             previous_seq: int | None) -> dict[str, Any] | None:
        return None


def make_sink(fmt: str, out: str, *, catalog: str | None = None, dialect: str | None = None,
              spark_options: dict[str, Any] | None = None, tuning: Any = None) -> Sink:
    """The sink of ``--format fmt`` (``tuning``: the run's ``Tuning``).  Raises ``ValueError`` for an unknown format, and for
    ``iceberg`` without ``pyiceberg`` installed (naming the extra to install)."""
    if fmt == "parquet":
        return ParquetSink()
    if fmt == "iceberg":
        from .iceberg import IcebergSink
        return IcebergSink(out, catalog=catalog, dialect=dialect, spark_options=spark_options, tuning=tuning)
    raise ValueError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")


def check_plan(part: dict[str, Any], where: str) -> None:
    """Raise ``PipelineError`` (one line naming ``where``) when this version cannot carry out
    a sink's part of a commit plan (one an earlier version wrote in another layout), before
    anything of the plan is done."""
    if part.get("format") == "iceberg":
        from .icecommit import check_plan as check_iceberg
        check_iceberg(part, where)


def commit_plan(part: dict[str, Any], fs: Any) -> None:
    """Carry out a sink's part of a commit plan (idempotent)."""
    if part.get("format") == "iceberg":
        from .icecommit import commit
        commit(part, fs)
    else:
        raise ValueError(f"a commit plan names an unknown output format {part.get('format')!r}")
