"""What ``ddlcore run --follow`` prints (``ddlcore.cli.follow_cli``): on a terminal a live line
with the batch, events/s, committed seq and lag; piped, one plain line per batch."""

from __future__ import annotations

import io
from types import SimpleNamespace

from ddlcore.cli.follow_cli import FollowProgress, batch_line


def _result(previous, last, events, seconds):
    return SimpleNamespace(previous_seq=previous, last_seq=last, events=events, rows=events - 1, quarantined=1,
                           seconds=seconds)


class _Live:
    def __init__(self):
        self.texts: list[str] = []

    def update(self, text: str) -> None:
        self.texts.append(text)


def test_piped_one_plain_line_per_batch_with_rate_and_lag():
    plain = io.StringIO()
    lags = iter([{"events": 12, "seconds": 0.5}, {"events": 0, "seconds": 0.0}])
    p = FollowProgress("cap", plain=plain, lag=lambda: next(lags))
    p.phase("converting shop.t version 1")  # nothing on a pipe but the batches
    p.batch(_result(100, 140, 40, 0.5))
    p.batch(_result(140, 152, 12, 2.0))
    assert plain.getvalue().splitlines() == [
        "batch 1: seq 100 → 140, 40 events, 39 rows, 1 quarantined, 0.5 s, 80 events/s; lag 12 events, 0.5 s",
        "batch 2: seq 140 → 152, 12 events, 11 rows, 1 quarantined, 2.0 s, 6 events/s; lag 0 events, 0.0 s"]


def test_the_live_line_shows_the_phase_the_last_batch_and_the_lag():
    live = _Live()
    p = FollowProgress("cap", live=live, lag=lambda: {"events": 7, "seconds": 1.25})
    p.phase("committing")
    assert live.texts[-1] == "following cap · no batch yet · batch 1: committing"
    p.batch(_result(None, 40, 40, 0.25))
    assert live.texts[-1] == ("following cap · batch 1 · seq 40 · 160 events/s · lag 7 events, 1.2 s · "
                              "waiting for the log to grow")
    p.phase("reading the DDL events of the change log")
    assert live.texts[-1].endswith("lag 7 events, 1.2 s · batch 2: reading the DDL events of the change log")


def test_without_a_capture_the_lag_is_unknown_and_a_failing_read_does_not_stop_the_follower():
    def broken():
        raise OSError("inputs.json being replaced")

    no_capture = {"committed_seq": 2, "capture_seq": None, "events": None, "seconds": None}
    assert batch_line(3, _result(1, 2, 1, 0.0), no_capture).endswith("0 events/s; lag unknown (no capture checkpoint)")
    plain = io.StringIO()
    FollowProgress("dir", plain=plain, lag=broken).batch(_result(1, 2, 1, 1.0))
    assert plain.getvalue().endswith("; lag unknown\n")
