"""Child process of the crash test: records a synthetic history into an SQLite store until
killed.  ``python -m tests.history.crash_driver STORE EVENTS TABLES SEED``; prints ``ready``
once the store is open, then records from a few events before the last recorded seq (the
overlap a restarted capture replays) to the end."""

from __future__ import annotations

import sys

from ddlcore.history import SchemaHistory

from .minisql import MiniParser
from .synthetic import synthetic_history


def main(argv: list[str]) -> int:
    path, events, tables, seed = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    stmts = synthetic_history(events, tables, seed)
    with SchemaHistory(path, parser=MiniParser(), filters=["db0.%"]) as h:
        start = max(1, (h.last_seq or 0) - 3)
        print("ready", start, flush=True)
        for i in range(start, events + 1):
            h.record({"seq": i, "position": f"bin:{i}", "ddl": stmts[i - 1], "ts": i})
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
