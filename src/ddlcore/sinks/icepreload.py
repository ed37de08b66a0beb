"""The modules an Iceberg run's stage and commit need, imported in a background thread of the
driver while Spark works, not on the run's critical path.

Owns: the preload thread and the rule that no process forks while it runs.  ``pyiceberg``'s
SQL catalog, table and manifest modules with SQLAlchemy, and the sink's own modules, take
about 0.7 s to import on this machine (``python -X importtime``); a run of ``--format
iceberg`` first needs them when it stages the current-state tables, after the conversion, and
until then the driver mostly waits on the JVM (reading the log, recording the history,
tagging: Spark jobs).  ``start`` (called when the sink is made, before the Spark session in
``ddlcore run``) imports them in a daemon thread.

A fork while the thread is inside an import would give the child a module lock held by a
thread the child does not have (the child's import of that module would wait forever), so
``start`` registers ``wait`` as a before-fork hook (``os.register_at_fork``): every fork of
the driver (``ddlcore.spark.forkpool.WorkerPool``'s workers) waits for the thread first.

A module that fails to import in the thread is left alone: the code that needs it imports it
again where it is used and raises there, with its own context.
"""

from __future__ import annotations

import os
import threading

__all__ = ["start", "wait", "load", "MODULES"]

#: imported by the thread, in order (``pyiceberg``'s first: the sink's modules import them)
MODULES = (
    "pyarrow.parquet", "sqlalchemy", "pyiceberg.catalog.sql", "pyiceberg.table", "pyiceberg.manifest",
    "pyiceberg.io.pyarrow", "pyiceberg.table.update.schema", "pyiceberg.serializers",
    "ddlcore.sinks.catalog", "ddlcore.sinks.current", "ddlcore.sinks.arrowmerge", "ddlcore.sinks.icecommit",
    "ddlcore.sinks.icecreate", "ddlcore.sinks.iceappend", "ddlcore.sinks.icesnap", "ddlcore.sinks.rowdelta",
)

_lock = threading.Lock()
_thread: threading.Thread | None = None


def start() -> None:
    """Start importing ``MODULES`` in a daemon thread (once per process; later calls do
    nothing)."""
    global _thread
    with _lock:
        if _thread is not None:
            return
        _thread = threading.Thread(target=load, name="ddlcore-iceberg-preload", daemon=True)
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(before=wait)
        _thread.start()


def wait() -> None:
    """Return once the thread (if started) has finished; the before-fork hook."""
    thread = _thread
    if thread is not None and thread is not threading.current_thread():
        thread.join()


def load() -> None:
    """Import ``MODULES`` and prepare the Avro writers (``iceavro.prepare``) in this thread:
    what the thread does, and what ``ddlcore.sinks.icepool`` makes sure of before it forks
    (nothing to do when the thread did it)."""
    import importlib

    for name in MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - imported again where it is used, and raised there
            continue
    try:
        from .iceavro import prepare

        prepare()
    except Exception:  # noqa: BLE001 - (as above: raised where the writers are used)
        pass
