"""Crash safety: a recording process killed with SIGKILL at random instants (20 times) always
leaves a store that opens, passes SQLite's integrity check and holds a prefix of the history;
resuming after each kill ends with the same store as an uninterrupted recording."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ddlcore.history import SchemaHistory, SQLiteStore

from .minisql import MiniParser
from .synthetic import synthetic_history

REPO = Path(__file__).resolve().parents[2]
EVENTS, TABLES, SEED = 2000, 60, 23
KILLS = 20


def _child(path: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, "-m", "tests.history.crash_driver", str(path), str(EVENTS),
                             str(TABLES), str(SEED)], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")
def test_sigkill_mid_write_leaves_a_prefix(tmp_path):
    path = tmp_path / "crash.db"
    stmts = synthetic_history(EVENTS, TABLES, SEED)
    rnd = random.Random(5)
    prefixes = []
    finished = False
    for _ in range(KILLS):
        proc = _child(path)
        line = proc.stdout.readline()
        if not line.startswith("ready"):
            proc.kill()
            raise AssertionError(f"driver did not start: {line!r} {proc.stderr.read()}")
        time.sleep(rnd.uniform(0.0, 0.08))
        proc.send_signal(signal.SIGKILL)
        rc = proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()
        finished = rc == 0
        store = SQLiteStore(path)
        try:
            assert store.integrity_check() == "ok"
            seqs = [e.seq for e in store.events()]
            k = len(seqs)
            assert seqs == list(range(1, k + 1)), "the recorded events are not a prefix"
            assert all(v[3] <= k for v in store.dump("versions"))
            assert all(c[0] <= k for c in store.dump("changes"))
        finally:
            store.close()
        prefixes.append(k)
        if k:
            with SchemaHistory(path) as h:
                expected = MiniParser().parse(";\n".join(stmts[:k])).tables
                got = h.tables_at(k).to_json()
                want = {**expected.to_json(), "tables": [t.to_json() for t in expected if h.filter.matches(t.id)]}
                assert got == want, f"model after seq {k} differs from the prefix's"
        if finished:
            break
    print("prefixes after each kill:", prefixes)
    assert len(set(prefixes)) > 3, f"kills did not land mid-history: {prefixes}"
    # resume to the end; compare with an uninterrupted recording
    proc = _child(path)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    clean = tmp_path / "clean.db"
    with SchemaHistory(clean, parser=MiniParser(), filters=["db0.%"]) as h:
        for i, st in enumerate(stmts, 1):
            h.record({"seq": i, "position": f"bin:{i}", "ddl": st, "ts": i})
    a, b = SQLiteStore(path), SQLiteStore(clean)
    try:
        for t in ("events", "bodies", "entities", "versions", "changes", "shadow", "meta"):
            assert a.dump(t) == b.dump(t), f"{t} differs after {len(prefixes)} kills"
    finally:
        a.close()
        b.close()
