"""Work run in processes forked from the driver (the driver's conversion groups, the Iceberg
sink's current-state tables and commits): ``WorkerPool``.

Owns: forking the workers and making a forked process safe to work in (no py4j, no Ctrl-C,
death with the driver).  Must not know: what the work is.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import warnings
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

__all__ = ["WorkerPool"]


class WorkerPool:
    """A context manager giving ``submit(fn, *args) -> Future``: ``fn`` run in one of
    ``workers`` processes forked from the driver, or (``workers`` 1) right away in the driver.

    Forked, not spawned: a spawned process imports the driver's main module again (the user's
    script), and the workers need nothing but this module, already loaded.  The driver has
    threads (py4j's, Spark's) when it forks, so a worker touches none of their state: it
    converts Python values and returns bytes, and it never talks to the JVM (``_worker_init``
    drops the py4j finalizers it inherits, which would otherwise send the JVM a command over
    the driver's own connection when an inherited object is freed)."""

    def __init__(self, workers: int):
        self.pool = None if workers <= 1 else ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("fork"), initializer=_worker_init,
            initargs=(os.getpid(),))

    def __enter__(self):
        return self.submit

    def submit(self, fn, *args) -> Future:
        if self.pool is None:
            done: Future = Future()
            done.set_result(fn(*args))
            return done
        with warnings.catch_warnings():  # Python 3.12+ warns of fork() with threads: see above
            warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*fork")
            return self.pool.submit(fn, *(_ipc(a) if _is_arrow(a) else a for a in args))

    def __exit__(self, *exc) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


def _worker_init(driver: int) -> None:
    """In a worker process: forget the py4j objects' finalizers inherited from the driver (see
    ``WorkerPool``), without their lock, which a driver thread may have held at the fork;
    ignore ``SIGINT`` (Ctrl-C reaches the whole process group: PySpark's handler, inherited,
    would cancel the jobs through py4j from here; the driver stops the workers itself); and die
    with the driver (``driver``: its pid), which may be killed mid-run (``prctl``'s
    ``PR_SET_PDEATHSIG``): a pool's workers would otherwise wait for work forever.  And
    every object inherited from the driver leaves the cyclic collector's reach
    (``gc.freeze``): a collection in the worker would otherwise walk the driver's whole heap
    (Spark's, py4j's and ``pyiceberg``'s modules, the history) and write to each object's
    header, copying every page of it from the driver's memory."""
    import ctypes
    import gc

    gc.freeze()

    from py4j import finalizer

    finalizer.ThreadSafeFinalizer.finalizers = {}
    finalizer.Finalizer.finalizers = {}
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # pragma: no cover - Linux has it
        pass
    if os.getppid() != driver:  # the driver died before prctl
        os._exit(1)


#: ``prctl``'s option: the signal a process gets when its parent dies (linux/prctl.h)
_PR_SET_PDEATHSIG = 1


def _is_arrow(value: Any) -> bool:
    import pyarrow as pa

    return isinstance(value, pa.Table)


def _ipc(table) -> bytes:
    """An Arrow table as the bytes of an Arrow IPC stream: only its rows (a slice pickled
    directly would carry its whole batch's buffers)."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()
