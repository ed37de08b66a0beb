"""``ddlcore run --follow`` on the command line (docs/operations.md): the stop signals from the
moment the command starts, and the progress a user sees.

Owns: what the follower prints.  On a terminal (standard error is one: ``rich``'s
``Console.is_terminal``), a live line (``rich``'s status) saying what the follower does now —
the batch number, the last batch's events per second, the committed seq and the lag behind
the capture's checkpoint in events and seconds (``ddlcore.status.output_lag``); where standard
output or standard error is not a terminal (piped, a file, a journal), one plain line per
committed batch on standard output (``batch_line``).  The end is one line on standard error.
Must not know: how a batch runs (``ddlcore.spark.follow``).

Signals: SIGTERM and SIGINT are handled from the moment ``ddlcore run`` reads its command line
(``ddlcore.stopsignals``; ``ddlcore run`` calls ``early_stop`` first), before pyspark is
imported and the JVM starts: one received while Spark starts stops the follower before its
first batch, with exit status 0, as one received between batches does.
"""

from __future__ import annotations

import sys
import threading
from typing import Any, Callable, TextIO

from rich.console import Console

__all__ = ["FollowProgress", "batch_line", "lag_text", "follow_main", "early_stop"]


def early_stop() -> tuple[threading.Event, Callable[[], None]]:
    """``(stop, restore)``: SIGTERM/SIGINT set ``stop`` from now on (nothing is in flight yet:
    a second one does not abandon anything); ``restore`` puts the previous handlers back."""
    from ..stopsignals import install_signals

    stop = threading.Event()
    return stop, install_signals(stop, abandon=False)


def lag_text(lag: dict[str, Any] | None) -> str:
    """``lag 12 events, 0.5 s`` (``ddlcore.status.output_lag``); ``lag unknown`` when it was not
    read (an output that is not local, a state file being replaced), with the reason when there
    is no capture checkpoint to compare with."""
    if not lag:
        return "lag unknown"
    if lag.get("events") is None:
        return "lag unknown (no capture checkpoint)"
    seconds = lag.get("seconds")
    return f"lag {lag['events']:,} events" + (f", {seconds:.1f} s" if seconds is not None else "")


def batch_line(n: int, result, lag: dict[str, Any] | None) -> str:
    """One line per committed batch ``n`` (from 1): ``batch 3: seq A → B, E events, R rows, Q
    quarantined, S s, V events/s; lag L events, X s``."""
    rate = result.events / result.seconds if result.seconds > 0 else 0.0
    return (f"batch {n}: seq {result.previous_seq} → {result.last_seq}, {result.events:,} events, "
            f"{result.rows:,} rows, {result.quarantined:,} quarantined, {result.seconds:.1f} s, "
            f"{rate:,.0f} events/s; {lag_text(lag)}")


class FollowProgress:
    """The follower's output (module docstring): ``phase(msg)`` for what a batch does now,
    ``batch(result)`` after each commit.  ``live``: a ``rich`` status (``None``: no live line);
    ``plain``: the stream of the per-batch lines (``None``: none); ``lag``: reads the lag of
    the output after a commit (``None`` for an output that is not local)."""

    def __init__(self, changelog, *, live=None, plain: TextIO | None = None,
                 lag: Callable[[], dict[str, Any]] | None = None):
        self.changelog = changelog
        self.live = live
        self.plain = plain
        self.lag = lag
        self.batches = 0
        self.last: str = "no batch yet"

    def _show(self, doing: str) -> None:
        if self.live is not None:
            self.live.update(f"following {self.changelog} · {self.last} · {doing}")

    def phase(self, msg: str) -> None:
        self._show(f"batch {self.batches + 1}: {msg}")

    def batch(self, result) -> None:
        self.batches += 1
        try:
            lag = self.lag() if self.lag is not None else None
        except Exception:  # noqa: BLE001 - the lag is information only; a state file being replaced
            lag = None
        rate = result.events / result.seconds if result.seconds > 0 else 0.0
        self.last = (f"batch {self.batches} · seq {result.last_seq} · {rate:,.0f} events/s · {lag_text(lag)}")
        if self.plain is not None:
            print(batch_line(self.batches, result, lag), file=self.plain, flush=True)
        self._show("waiting for the log to grow")


def _lag_reader(out: str) -> Callable[[], dict[str, Any]] | None:
    from ..spark.fs import is_uri
    from ..status import output_lag

    if is_uri(out) and not str(out).startswith("file:"):
        return None
    return lambda: output_lag(out)


def follow_main(changelog, out: str, *, stop: threading.Event, start_spark: Callable[[], Any],
                on_error: Callable[[BaseException], None], **options: Any) -> None:
    """The ``--follow`` path of ``ddlcore run``: ``start_spark()`` (returns the session), then
    ``ddlcore.spark.follow.follow`` until ``stop`` is set (``early_stop``); the end on stderr.
    ``on_error``: turns a ``DdlCoreError`` of a batch into the command's one-line error
    (raises)."""
    from ..errors import DdlCoreError
    from ..spark.follow import follow

    console = Console(stderr=True)
    plain = None if sys.stdout.isatty() and console.is_terminal else sys.stdout  # no live line: plain lines
    with console.status("starting Spark") as status:
        spark = start_spark()
        progress = FollowProgress(changelog, live=status if console.is_terminal else None, plain=plain,
                                  lag=_lag_reader(out))
        try:
            stats = follow(changelog, out, spark=spark, stop=stop, on_batch=progress.batch,
                           progress=progress.phase, handle_signals=True, **options)
        except DdlCoreError as exc:
            status.stop()
            on_error(exc)
            raise
    print(f"stopped following {changelog}: {stats.batches} batch(es), {stats.rows:,} rows, "
          f"committed seq {stats.last_seq}" + ("; the batch in flight was abandoned" if stats.abandoned else ""),
          file=sys.stderr)
