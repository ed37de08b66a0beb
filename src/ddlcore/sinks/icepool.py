"""Where the Iceberg commits of a run's tables run: in processes forked from the driver, or in
threads of the driver.

Owns: the choice and the pool.  A table's commit is mostly Python (``pyiceberg``'s pydantic
models of its metadata, the manifest, manifest list and metadata file, then one catalog
update), so threads share one core; processes use every core the driver may
use.  Processes (``ddlcore.spark.forkpool.WorkerPool``: forked, so the workers need nothing but
the modules already loaded, and they touch none of the driver's py4j or Spark state) are used
when all of these hold:

* the platform forks safely (Linux; ``WorkerPool``);
* the catalog is a ``pyiceberg`` ``SqlCatalog`` on a database file or server (the embedded
  SQLite catalog ``OUT/_catalog.sqlite`` among them): each worker opens its own catalog (its
  own SQLAlchemy engine: none is shared across a fork; the driver's connections are closed
  before it forks).  An in-memory SQLite catalog (each process would see its own database) and
  every other catalog (REST, Hive, Glue, ...: network clients whose state we do not fork, and
  whose commits wait on the network, which threads overlap well) use threads;
* ``workers`` (``Tuning.driver_workers``, carried in the plan; ``None``: the CPUs the driver may
  use) and the number of tables allow at least two processes of ``TABLES_PER_PROCESS`` tables.

Otherwise the commits run in ``THREADS`` threads of the driver sharing its catalog.  Several
processes commit into one SQLite file: its writes are serialized by SQLite's lock, and a
writer waits for it up to ``ddlcore.sinks.catalog.SQLITE_BUSY_SECONDS`` (SQLite's busy
timeout, set on the embedded catalog's connections) instead of failing with "database is
locked".  Each commit is one short write transaction (``SqlCatalog.commit_table``: one
``UPDATE`` or ``INSERT``; the new tables of a task's source tables, one ``INSERT`` of their
rows, ``ddlcore.sinks.icecreate.register_all``; each the transaction's first statement), so
waiting cannot deadlock.

The work given to a worker is plain data (the plan's entries and file URIs); a worker never
touches the output through Hadoop (``ddlcore.spark.fs`` is py4j).  Errors: the first task (in
the given order) that raised, as it raised; the others are cancelled or finish.
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

__all__ = ["run_all", "fork_safe", "processes", "THREADS", "TABLES_PER_PROCESS"]

#: tables committed at the same time in the driver's threads (when not in processes)
THREADS = 4
#: a process is forked only for at least this many tables (a fork and a catalog each cost a few ms)
TABLES_PER_PROCESS = 16

_CATALOGS: dict[int, tuple[str, Any]] = {}  # pid → (catalog spec, catalog): a worker's own catalog


def fork_safe(catalog: Any) -> bool:
    """Whether worker processes may commit into ``catalog`` (module docstring)."""
    from pyiceberg.catalog.sql import SqlCatalog

    if not isinstance(catalog, SqlCatalog):
        return False
    url = catalog.engine.url
    if url.get_backend_name() != "sqlite":
        return True
    database = url.database or ""
    return database not in ("", ":memory:") and "mode=memory" not in str(url)


def processes(tables: int, workers: int | None) -> int:
    """How many processes commit ``tables`` tables (0: none, threads; module docstring)."""
    if not sys.platform.startswith("linux"):
        return 0
    if workers is None:
        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    n = min(workers, tables // TABLES_PER_PROCESS)
    return n if n >= 2 else 0


def _in_worker(fn: Callable[..., Any], spec: dict[str, Any], *args: Any) -> Any:
    """``fn(catalog, *args)`` in a worker process, with this process's own catalog of ``spec``."""
    import json

    from .catalog import open_catalog

    key = json.dumps(spec, sort_keys=True)
    have = _CATALOGS.get(os.getpid())
    if have is None or have[0] != key:
        have = _CATALOGS[os.getpid()] = (key, open_catalog(spec))
    return fn(have[1], *args)


def run_all(fn: Callable[..., Any], tasks: list[tuple[Any, ...]], *, catalog: Any, spec: dict[str, Any],
            workers: int | None, tables: int | None = None) -> None:
    """``fn(catalog, *task)`` for every task, in processes or threads (module docstring);
    ``catalog``: the driver's, opened from ``spec``; ``tables``: how many tables the tasks
    commit (default: one per task).  Raises the first failed task's error."""
    n = processes(len(tasks) if tables is None else tables, workers) if tasks and fork_safe(catalog) else 0
    n = min(n, len(tasks)) if len(tasks) >= 2 else 0
    if n:
        from ..spark.forkpool import WorkerPool
        from .icepreload import load

        load()  # what a worker's commit needs, imported and prepared once in the driver (``icepreload``)
        catalog.engine.dispose()  # no open connection of the driver's is inherited
        with WorkerPool(n) as submit:
            _wait([submit(_in_worker, fn, spec, *task) for task in tasks])
        return
    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        _wait([pool.submit(fn, catalog, *task) for task in tasks])


def _wait(futures: list[Future]) -> None:
    for done in futures:
        done.result()  # the first error, as raised
