"""The context one ``ddlcore run`` hands its stages (``stage``, ``convertpass``, ``quarantinepass``,
``commit``, ...).

Owns: ``RunContext``, what every stage of a run reads and nothing else: the Spark session, the
output (``OutputFS`` and its ``OutputState``), the run's configuration, its id and staging paths,
the checkpoint it started from, the ``RunResult`` it fills, the progress callback, and where its
parts execute (``strategy``).  Must not know: what a stage does.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable

from .strategy import ExecutionStrategy

__all__ = ["RunContext"]


@dataclass(frozen=True)
class RunContext:
    """One run's shared facts.  ``state``: the output's ``commit.OutputState`` (``fs``: its
    ``OutputFS``); ``config``: the run's ``RunConfig``; ``run_id``: names every file the run
    writes; ``last``: the checkpoint the run started from (``None``: a first run); ``result``:
    the run's ``RunResult``, filled by the stages; ``say``: the progress callback.  Paths are
    relative to the output."""

    spark: Any
    state: Any
    config: Any
    run_id: str
    last: int | None
    result: Any
    say: Callable[[str], None]

    @property
    def fs(self) -> Any:
        return self.state.fs

    @cached_property
    def strategy(self) -> ExecutionStrategy:
        """Where the run's parts execute (``ExecutionStrategy``: the driver or Spark), from its
        ``Tuning``, master and output."""
        return ExecutionStrategy.of(self.spark, self.fs, self.config.tuning, replay=self.config.replay_quarantine)

    @property
    def staging(self) -> str:
        """The run's staging directory: it becomes the output's layout before the commit."""
        return f"{self.state.staging}/{self.run_id}"

    @property
    def rows_dir(self) -> str:
        """Where the tagged row events are staged, by conversion group (``_grp=<group>``)."""
        return f"{self.state.staging}/{self.run_id}.rows"

    @property
    def bad_dir(self) -> str:
        """Where the rows that cannot be converted are staged before the quarantine is written."""
        return f"{self.state.staging}/{self.run_id}.bad"
