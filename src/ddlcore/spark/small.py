"""A small incremental run on the driver: tagging, conversion and writing without Spark jobs.

Owns: deciding whether a run's new lines are few enough to be handled on the driver, and then
doing there, in Python, what the Spark path of ``ddlcore.spark.pipeline._run`` does with Spark
jobs — tagging each row event with its table version, converting it (``RowConverter``'s Python
face, property-tested to agree with the JVM face), and writing the rows, counts and quarantine
records into the run's staging area, where the commit finds them as it finds the Spark path's.
Must not know: any dialect.  docs/pipeline.md, "Incremental runs".
"""

from __future__ import annotations

from typing import Any

__all__ = ["DriverIncrement"]


class DriverIncrement:
    """The new lines of a small incremental run, read on the driver (``read``), and the work
    done on them (``run``)."""

    @classmethod
    def read(cls, spark, inputs, fs, *, last: int | None) -> "DriverIncrement | None":
        """The run's new lines when the driver-side path applies to them, else ``None`` (the
        run reads them with Spark).  Not yet enabled: always ``None``."""
        return None

    def history_candidates(self) -> list[Any]:  # pragma: no cover - not enabled yet
        raise NotImplementedError

    def run(self, result, **kwargs) -> tuple[dict[int, str], list[str], list[str]]:  # pragma: no cover
        raise NotImplementedError
