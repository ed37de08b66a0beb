"""``ddlcore.stopsignals``: SIGTERM/SIGINT stop a follower; a second one abandons the batch in
flight, except before any work is in flight (``abandon=False``: the time Spark starts)."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from ddlcore.stopsignals import FollowAbandoned, install_signals


def test_a_second_signal_abandons_only_once_work_is_in_flight():
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    stop = threading.Event()
    restore = install_signals(stop, abandon=False)
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        assert stop.is_set()
        os.kill(os.getpid(), signal.SIGINT)  # while Spark starts: nothing to abandon, no exception
    finally:
        restore()
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before
    stop = threading.Event()
    restore = install_signals(stop)
    try:
        os.kill(os.getpid(), signal.SIGINT)
        assert stop.is_set()
        with pytest.raises(FollowAbandoned):
            os.kill(os.getpid(), signal.SIGTERM)
    finally:
        restore()
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before
