"""The Spark session settings one ``ddlcore run`` makes, and the driver-thread pool of its jobs.

Owns: the code-generation settings (``INTERPRETED``, ``COMPILED``), setting and putting back
session settings (``session_settings``, ``settings``), reading the run's own Parquet
directories (``read_own``), the bound on open Parquet writers per task
(``open_writers_per_task``, ``partitioned_writers``) and running jobs concurrently on driver
threads (``map_concurrently``).  Must not know: what a stage reads or writes.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Callable

from ..runconfig import Tuning

if TYPE_CHECKING:  # pragma: no cover
    from .fs import OutputFS

__all__ = ["INTERPRETED", "COMPILED", "PARALLEL_LISTING", "CONCURRENT_WRITERS", "session_settings", "settings",
           "read_own", "map_concurrently", "open_writers_per_task", "partitioned_writers"]

#: the session settings of an incremental run that reads tails of at most
#: ``Tuning.interpreted_max_bytes`` bytes in all (about 16,000 events of the benchmark's):
#: expressions are interpreted, not compiled.  Generating
#: and compiling the code of the conversion plans (thousands of expression nodes each) costs
#: seconds per job, more than interpreting them over a few thousand rows; from a few tens of
#: thousands of rows on, compiled code is faster (docs/pipeline.md, Performance)
INTERPRETED = {"spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}
#: the session settings of the compiled conversion jobs: a whole stage whose generated method
#: outgrows HotSpot's limit for just-in-time compilation (8,000 bytes of bytecode) is not fused
#: (Spark's ``hugeMethodLimit``, which its documentation suggests at 8,000 on HotSpot): its
#: operators' code is then split into methods the JIT compiles.  Fused, a group job's output
#: projection feeding the sort of a sorted partitioned write (``partitioned_writers``) ran in
#: the bytecode interpreter (docs/pipeline.md, Performance)
COMPILED = {"spark.sql.codegen.hugeMethodLimit": "8000"}


#: a conversion group of at most ``Tuning.interpreted_max_rows`` staged rows is converted with
#: its expressions interpreted (``INTERPRETED``), also in a full run: generating and compiling a
#: new plan's code (Janino, then the JIT on the new classes) costs about 0.27 s of CPU more per
#: group, interpreting about 11 us more per row (2M, 500 x 4, ``--distinct``: 200 groups of
#: ~9,000 rows; docs/pipeline.md, Performance)


def session_settings(spark, settings: dict[str, str]) -> Callable[[], None]:
    """Set the session's SQL ``settings``; returns the function that puts the previous values
    back (unset where there was none)."""
    saved = {k: spark.conf.get(k, None) for k in settings}
    for k, v in settings.items():
        spark.conf.set(k, v)

    def restore() -> None:
        for k, v in saved.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)
    return restore


@contextlib.contextmanager
def settings(spark, settings: dict[str, str]):
    """The session's SQL ``settings`` inside the block, then put back (``session_settings``)."""
    put_back = session_settings(spark, settings)
    try:
        yield
    finally:
        put_back()


#: Spark lists the files of a read of more paths (or partition directories) than this with a
#: Spark job of one task per path ("parallel partition discovery"; default 32)
PARALLEL_LISTING = "spark.sql.sources.parallelPartitionDiscovery.threshold"


def read_own(spark, fs: "OutputFS", *paths: str):
    """``spark.read.parquet(*paths)`` of directories the run wrote under the output (``fs``):
    staged rows, rows that could not be converted.  On the local filesystem the driver lists
    them whatever their number.  Spark's default lists more than 32 directories with a Spark
    job of a task per directory.  A staged log of 2,000 conversion groups took 7 s of a 2M-event
    run that way; listed on the driver, under a second (docs/pipeline.md, Performance).  On
    other filesystems (HDFS, object stores), each listing is a round trip, so Spark's parallel
    listing is kept.  Raises what Spark raises for a missing path."""
    if fs.scheme != "file":
        return spark.read.parquet(*paths)
    with settings(spark, {PARALLEL_LISTING: str(2 ** 31 - 1)}):  # Spark lists when the read is made
        return spark.read.parquet(*paths)



def map_concurrently(fn: Callable[[int, int], Any], items: list[int], workers: int,
                      on_abort: Callable[[], None] = lambda: None):
    """``fn(i, item)`` for each item, ``workers`` at a time on driver threads (each thread
    submits its own Spark jobs); yields results in completion order.  The first exception —
    or an interruption of the caller (Ctrl-C), or the caller abandoning the generator —
    cancels the items not started and calls ``on_abort`` (``ddlcore run`` cancels its running
    Spark jobs there, so the threads end promptly); the exception is raised once the running
    items have ended."""
    from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

    if workers <= 1 or len(items) <= 1:
        for i, item in enumerate(items):
            yield fn(i, item)
        return
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ddlcore-version") as pool:
        pending = {pool.submit(fn, i, item) for i, item in enumerate(items)}
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_EXCEPTION)
                for fut in done:
                    if fut.exception() is not None:
                        raise fut.exception()
                    yield fut.result()
        except BaseException:
            for other in pending:
                other.cancel()
            on_abort()
            wait(pending)
            raise


#: Spark's setting for writing a partitioned output without sorting each task's rows by
#: partition first (up to this many files open per task)
CONCURRENT_WRITERS = "spark.sql.maxConcurrentOutputFileWriters"
#: ``Tuning.heap_mb_per_open_writer``: MB of a JVM's heap per Parquet writer its tasks keep open
#: at once.  Each open writer holds its columns' buffers until it closes: one task writing 1,200
#: partitions at once (1,200 tables of one shape, or of 1,200 shapes in the staging pass)
#: exhausted a 1 GB heap with 584 files open; 8 MB each keeps a 1 GB heap to 128 open writers


def open_writers_per_task(spark, jobs: int, mb_per_writer: int = Tuning.heap_mb_per_open_writer) -> int:
    """How many files one task may keep open (one per partition it writes to) so that the
    writers of all the tasks one JVM runs at once stay within ``mb_per_writer`` MB of
    heap each: the heap (in local mode the driver's, which runs the tasks; else
    ``spark.executor.memory``) over ``jobs`` concurrent jobs times the JVM's task slots (in
    local mode the master's threads; else ``spark.executor.cores``, or all the cluster's
    cores when that is not set: fewer open files than the memory allows, never more).  At
    least 1."""
    sc = spark.sparkContext
    local = sc.master.startswith("local")
    if local:
        heap_mb = int(spark._jvm.java.lang.Runtime.getRuntime().maxMemory()) >> 20
        slots = sc.defaultParallelism
    else:
        heap_mb = int(sc._jsc.sc().executorMemory())
        slots = int(sc.getConf().get("spark.executor.cores", str(sc.defaultParallelism)))
    return max(1, heap_mb // max(1, mb_per_writer) // (max(1, jobs) * max(1, slots)))


def partitioned_writers(partitions: int, open_per_task: int) -> str:
    """The ``spark.sql.maxConcurrentOutputFileWriters`` setting for partitioned writes of at
    most ``partitions`` partition values each: one more than ``partitions`` when each task may
    keep a file open per partition (fewer than ``open_per_task``, ``open_writers_per_task``'s
    bound) — its rows are then written as they come — else ``"0"``: Spark sorts each task's
    rows by partition and keeps one file open at a time.  Never a value in between: a task
    that outgrows the setting falls back to sorting mid-task, which fails on a file name it
    has already used (the files are named after the run, ``commit.file_names``)."""
    return str(partitions + 1) if partitions < open_per_task else "0"
