"""The Iceberg modules imported in a background thread of the driver
(``ddlcore.sinks.icepreload``): a fork of the driver waits for the thread, so no child is
forked in the middle of an import; the sink starts it."""

from __future__ import annotations

import os
import sys
import threading
import time

import pytest

pytest.importorskip("pyiceberg")

from ddlcore.sinks import icepreload  # noqa: E402


def _loaded() -> bool:
    return _State.done


class _State:
    done = False


@pytest.mark.skipif(not hasattr(os, "register_at_fork"), reason="os.register_at_fork is POSIX only")
def test_a_fork_waits_for_the_preload_thread(monkeypatch):
    from ddlcore.spark.forkpool import WorkerPool

    def slow_load():
        time.sleep(0.5)
        _State.done = True

    monkeypatch.setattr(icepreload, "load", slow_load)
    monkeypatch.setattr(icepreload, "_thread", None)
    monkeypatch.setattr(_State, "done", False)
    icepreload.start()
    assert not _State.done  # (the thread is still sleeping)
    with WorkerPool(2) as submit:  # forks now: the before-fork hook waits for the thread
        assert submit(_loaded).result() is True


def test_the_sink_starts_the_preload_and_it_imports_the_commit_modules(tmp_path, monkeypatch):
    from ddlcore.sinks.iceberg import IcebergSink

    monkeypatch.setattr(icepreload, "_thread", None)
    IcebergSink(str(tmp_path / "out"), dialect="mysql")
    thread = icepreload._thread
    assert isinstance(thread, threading.Thread) and thread.daemon
    icepreload.wait()
    assert not thread.is_alive()
    assert all(name in sys.modules for name in icepreload.MODULES)
