"""Where each part of one ``ddlcore run`` executes: the one place the execution path is chosen.

A run takes one of three paths, and each conversion group of the middle one one of two:

* **all on the driver** (``Path.DRIVER``): a small incremental run is read, tagged, converted
  and written in the driver's Python process (``ddlcore.spark.driver.DriverIncrement``), with
  no Spark job at all;
* **Spark tags, the driver converts** (``Path.STAGED``): Spark reads, tags and stages the rows
  (``ddlcore.spark.stage``); the conversion groups ``group_path`` gives the driver are
  converted by ``RowConverter``'s Arrow kernels and Python face in processes forked from the
  driver (``ddlcore.spark.driver.convert_staged``), the others by Spark jobs;
* **all in Spark** (``Path.SPARK``): every group is a Spark job of ``RowConverter``'s Spark
  expressions: the executors run no Python (on a cluster they need neither ddlcore nor Python).

Where Python runs, then: in local mode writing to a local output every conversion group is
converted on the driver in Python and Arrow (faster there than a Spark job per group on the
same cores: docs/pipeline.md, "Performance"); on a cluster, or with an output on another
filesystem, only groups of at most ``Tuning.cluster_max_rows`` rows are, and small increments;
the executors never run Python.  ``Tuning.driver_max_rows`` overrides the group bound (``-1``:
no group on the driver, the all-Spark path).  A group the driver finds it cannot convert
exactly (a staged text that is not its raw value's text form) goes back to a Spark job
(``convert_staged``'s result), and a line of a small increment the driver cannot read as Spark
does sends the whole run to Spark (``DriverIncrement.read``): those are discoveries, not
choices.

Owns: ``ExecutionStrategy`` (the choices, from the run's ``Tuning``, its master and its output's
filesystem) and ``Path``.  Must not know: how any path does its work.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..runconfig import Tuning

__all__ = ["Path", "ExecutionStrategy"]


class Path(enum.Enum):
    """A run's execution path (module docstring)."""

    DRIVER = "driver"
    STAGED = "staged"
    SPARK = "spark"


@dataclass(frozen=True)
class ExecutionStrategy:
    """The execution choices of one run.  ``tuning``: the run's ``Tuning``; ``local``: Spark's
    master is local and the output is on the local filesystem (the driver's cores are
    Spark's, and the workers read and write the staged and output files themselves);
    ``local_output``: the output is on the local filesystem; ``replay``: the run replays the
    quarantine (never all on the driver)."""

    tuning: Tuning = Tuning()
    local: bool = False
    local_output: bool = False
    replay: bool = False

    @classmethod
    def of(cls, spark, fs, tuning: Tuning = Tuning(), *, replay: bool = False) -> "ExecutionStrategy":
        """The strategy of a run on ``spark`` (its master) writing to ``fs`` (``OutputFS``)."""
        local = spark.sparkContext.master.startswith("local") and fs.scheme == "file"
        return cls(tuning, local, fs.local() is not None, replay)

    # -- the run --------------------------------------------------------------------------------

    def may_run_on_driver(self, inputs, last: int | None) -> bool:
        """Whether the run may take ``Path.DRIVER`` (then ``DriverIncrement.read`` decides by
        its lines): an incremental run (``last``: the checkpoint) that reads only the tails of
        JSON Lines files (``readlog.Inputs``: none read whole, no Parquet), each of them one,
        of at most ``Tuning.driver_increment_max_bytes`` in all, without ``--replay-quarantine``."""
        return not (self.replay or last is None or inputs.whole or inputs[1]
                    or inputs.tail_bytes > self.tuning.driver_increment_max_bytes
                    or len(inputs[0]) != len(inputs.tails))

    def interpreted_increment(self, inputs) -> bool:
        """Whether a run on the Spark paths runs with Spark's code generation off
        (``sessionconf.INTERPRETED``): an incremental run reading tails of at most
        ``Tuning.interpreted_max_bytes`` (compiling costs more than it saves on so few rows)."""
        return not inputs.whole and inputs.tail_bytes <= self.tuning.interpreted_max_bytes

    def path(self) -> Path:
        """The path of a run that Spark tags: ``Path.SPARK`` when no group may be converted on
        the driver (``driver_max_rows`` below 1, e.g. ``-1``), else ``Path.STAGED``."""
        bound = self.driver_max_rows()
        return Path.SPARK if bound is not None and bound < 1 else Path.STAGED

    # -- a conversion group -----------------------------------------------------------------------

    def driver_max_rows(self) -> int | None:
        """The most staged rows of a conversion group converted on the driver:
        ``Tuning.driver_max_rows`` when set; else ``None`` (no limit) when ``local`` — a group
        of more than ``Tuning.part_rows`` rows then in parts —, and ``Tuning.cluster_max_rows``
        otherwise."""
        if self.tuning.driver_max_rows is not None:
            return self.tuning.driver_max_rows
        return None if self.local else self.tuning.cluster_max_rows

    def held_bytes(self, rows: int, value_bytes: int) -> float:
        """The bytes of values a driver worker holds at once for a group of ``rows`` staged rows
        whose values take ``value_bytes``: the group's (read through Spark, whole), or on a local
        output a chunk's (``Tuning.chunk_rows`` rows, on average: the worker reads the files)."""
        if not self.local_output:
            return value_bytes
        return value_bytes * min(1.0, self.tuning.chunk_rows / max(1, rows))

    def on_driver(self, rows: int) -> bool:
        """Whether a group of ``rows`` staged rows is converted on the driver by its row count
        (``driver_max_rows``)."""
        bound = self.driver_max_rows()
        return bound is None or rows <= bound

    def too_large(self, rows: int, value_bytes: int) -> bool:
        """Whether a group of ``rows`` rows whose values take ``value_bytes`` stays a Spark job
        for its values' size (``held_bytes`` over ``Tuning.group_max_bytes``: a few rows of large
        BLOBs; a worker holds a chunk as Python objects, several times their bytes)."""
        return self.held_bytes(rows, value_bytes) > self.tuning.group_max_bytes

    # -- a current-state table (``ddlcore.sinks.current``) ----------------------------------------

    def current_state_max_rows(self) -> int | None:
        """The most row events of one table whose current-state table is computed on the driver
        (``ddlcore.sinks.arrowcurrent``, in the driver's workers) instead of by Spark jobs: the
        conversion groups' ``driver_max_rows``; ``-1`` (none) when the output is not on the
        local filesystem (the workers read and write local files) or
        ``Tuning.current_on_driver`` is off."""
        if not self.tuning.current_on_driver or not self.local_output:
            return -1
        return self.driver_max_rows()

    def group_path(self, rows: int, value_bytes: int) -> Path:
        """Where a conversion group is converted: ``Path.STAGED`` (on the driver) or
        ``Path.SPARK`` (a Spark job)."""
        return Path.STAGED if self.on_driver(rows) and not self.too_large(rows, value_bytes) else Path.SPARK
