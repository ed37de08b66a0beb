"""How a long-running ddlcore command (``ddlcore run --follow``) is stopped: SIGTERM and SIGINT
set an event the command's loop watches; a second one abandons the work in flight.

Owns: the handlers (``install_signals``) and ``FollowAbandoned``.  Imports nothing of Spark, so
that ``ddlcore run --follow`` handles the signals from the moment its command line is read,
before pyspark is imported and the JVM starts.  Must not know: what the work is
(``ddlcore.spark.follow``).
"""

from __future__ import annotations

import signal
import threading
from typing import Callable

__all__ = ["FollowAbandoned", "install_signals"]


class FollowAbandoned(BaseException):
    """Raised in the main thread by a second SIGTERM/SIGINT: the batch in flight is abandoned
    (a ``BaseException``, as ``KeyboardInterrupt``: no ``except Exception`` swallows it)."""


def install_signals(stop: threading.Event, *, abandon: bool = True) -> Callable[[], None]:
    """SIGTERM and SIGINT set ``stop``; with ``abandon`` a second one (``stop`` already set)
    raises ``FollowAbandoned`` in the main thread (without: it only sets ``stop`` again — for
    the time before any work is in flight).  Call it from the main thread.  Returns the
    function that puts the previous handlers back."""
    previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}

    def handler(signum, frame) -> None:
        if abandon and stop.is_set():
            raise FollowAbandoned(f"signal {signum}")
        stop.set()

    for s in previous:
        signal.signal(s, handler)

    def restore() -> None:
        for s, h in previous.items():
            signal.signal(s, h)

    return restore
