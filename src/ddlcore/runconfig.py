"""The configuration of one ``ddlcore run``: the run's options and the pipeline's tuning knobs.

Owns: ``RunConfig`` (what ``ddlcore run``'s options say: dialect, history, strictness, ``-s``
options, output format, ...) and ``Tuning`` (the sizes and limits the pipeline's execution
paths are chosen and bounded by: docs/pipeline.md, "Settings that matter").  Both are frozen
values handed down the run explicitly (``ddlcore.spark.pipeline.run_pipeline``), never module
globals: a test or a Python caller sets them per run (``dataclasses.replace``).  Must not
import pyspark (the command line reads the defaults before Spark starts).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["RunConfig", "Tuning", "DEFAULT_CONCURRENT_JOBS"]

#: table versions converted and written at the same time (Spark jobs submitted from threads)
DEFAULT_CONCURRENT_JOBS = 4


@dataclass(frozen=True)
class Tuning:
    """Sizes and limits of a run's execution paths (none changes what a run writes, only where
    and how the work is done; docs/pipeline.md, "How it works" and "Performance").

    Choosing the path (``ddlcore.spark.driver``):

    * ``driver_increment_max_bytes``: an incremental run whose new bytes (the tails of the
      change-log files) are at most this many runs on the driver without any Spark job
      (``DriverIncrement``); ``-1``: never.
    * ``driver_max_rows``: in a Spark run, the conversion groups of at most this many staged rows
      are converted on the driver (``convert_staged``); ``-1``: none; ``None``: by where the run
      is (every group in local mode writing to the local filesystem, else ``cluster_max_rows``).
    * ``cluster_max_rows``: ``driver_max_rows`` when it is ``None`` and the run is not local.
    * ``group_max_bytes``: a group whose values take more bytes than this stays a Spark job
      however few its rows (on a local output: its chunk of ``chunk_rows`` rows, on average).
    * ``current_on_driver``: the Iceberg current-state tables within ``driver_max_rows`` and
      ``group_max_bytes`` are computed on the driver (``ddlcore.sinks.arrowcurrent``);
      ``False``: always by Spark jobs.
    * ``merge_on_driver``: so are the merges of runs of row events into an existing table
      (``ddlcore.sinks.arrowmerge``); ``False``: merges by Spark jobs.

    The driver's conversion:

    * ``driver_workers``: processes forked from the driver converting groups, and committing
      the Iceberg tables of a run (``ddlcore.sinks.icepool``) (``None``: one per CPU the driver
      may use; ``1``: the driver itself).
    * ``part_rows``: a group of more staged rows than this (local output) is converted in parts
      of about this many, in several workers at once.
    * ``chunk_rows``: staged rows a worker holds as Python objects at a time.
    * ``batch_rows``, ``batch_bytes``: staged rows (and their values' bytes) the driver reads at a
      time when the output is not local.
    * ``memo_texts``, ``memo_min_texts``, ``memo_text_chars``: the converted texts a group's
      column memos keep in all, the least any column keeps, the longest text kept.

    Spark's conversion jobs (``ddlcore.spark.pipeline``):

    * ``interpreted_max_bytes``: an incremental run reading tails of at most this many bytes
      runs with Spark's code generation off (expressions interpreted).
    * ``interpreted_max_rows``: a conversion group of at most this many staged rows is converted
      with its expressions interpreted.
    * ``heap_mb_per_open_writer``: MB of a JVM's heap allowed per Parquet writer its tasks keep
      open (bounds partitioned writes without sorting)."""

    driver_increment_max_bytes: int = 4 << 20
    driver_max_rows: int | None = None
    cluster_max_rows: int = 20_000
    group_max_bytes: int = 64 << 20
    driver_workers: int | None = None
    part_rows: int = 100_000
    chunk_rows: int = 10_000
    batch_rows: int = 50_000
    batch_bytes: int = 64 << 20
    memo_texts: int = 131_072
    memo_min_texts: int = 64
    memo_text_chars: int = 64
    interpreted_max_bytes: int = 4 << 20
    interpreted_max_rows: int = 20_000
    heap_mb_per_open_writer: int = 8
    current_on_driver: bool = True
    merge_on_driver: bool = True


@dataclass(frozen=True)
class RunConfig:
    """The options of one ``ddlcore run`` (``ddlcore.spark.pipeline.run_pipeline``).

    ``dialect``: the DDL dialect (default: the one the log's source event names, else the
    output's; neither is a ``PipelineError`` naming ``--dialect``: never guessed); ``history``:
    the schema history store (default ``OUT/_history.sqlite``);
    ``strict``: stop at the first event that cannot be interpreted instead of quarantining it;
    ``spark_options``: type-mapping options (``ddlcore.spark.SparkOptions``);
    ``concurrent_jobs``: table versions converted at the same time; ``replay_quarantine``:
    also re-interpret quarantined row events whose schema is known now; ``output_format``:
    ``parquet`` or ``iceberg``; ``catalog``: the Iceberg catalog's name (``None``: the
    embedded one); ``master`` / ``spark_conf``: for the Spark session made when the caller
    gives none; ``take_lock``: hold the output's lock for the run (``False`` only for a caller
    that holds it); ``batch_end``: ``(seq, bytes)``, a capture's log read only up to there (a
    batch of ``run --follow --max-batch-events``); ``batch_files``: the names of the files of a
    change-log directory to read, the others left out (a batch of whole files:
    ``ddlcore.spark.filebatch``); ``tuning``: ``Tuning``."""

    dialect: str | None = None
    history: Any = None
    strict: bool = False
    spark_options: dict[str, Any] | None = None
    concurrent_jobs: int = DEFAULT_CONCURRENT_JOBS
    replay_quarantine: bool = False
    output_format: str = "parquet"
    catalog: str | None = None
    master: str | None = None
    spark_conf: dict[str, str] | None = None
    take_lock: bool = True
    batch_end: tuple[int, int] | None = None
    batch_files: frozenset[str] | None = None
    tuning: Tuning = field(default_factory=Tuning)

    @classmethod
    def of(cls, config: "RunConfig | None" = None, **options: Any) -> "RunConfig":
        """``config`` (default ``RunConfig()``) with ``options`` (field names) replacing its
        fields.  Raises ``TypeError`` naming an unknown option."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise TypeError(f"unknown run option(s): {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        base = config if config is not None else cls()
        return base if not options else cls(**{**{n: getattr(base, n) for n in known}, **options})
