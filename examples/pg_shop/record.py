"""Maintainer script: (re)record the bundled change log ``examples/pg_shop/changelog.jsonl``.

Starts a throwaway PostgreSQL 15 (``tests/servers/postgres.py``, ``wal_level=logical``), creates
the database ``shop``, installs ddlcore's event triggers and a publication ``shop`` (FOR ALL
TABLES), runs the workload's ``setup``, captures with ``snapshot=initial, until_end`` (the
Python API of ``ddlcore capture postgres``), runs the workload's ``run``, captures again until
the end (resuming from the checkpoint), and copies the capture's change log next to this
script.  Needs root or an installed PostgreSQL 15, and ``ddlcore-postgres[capture]``.

    .venv/bin/python examples/pg_shop/record.py [--out PATH]

Every ``ts`` is then pinned (``pin_clock``): PostgreSQL stamps commits with its own clock (a
session cannot set it, unlike MariaDB's ``SET timestamp`` in examples/shop/record.py), so the
recorded times are shifted to begin at ``START_MS`` (2024-06-10 06:13:20 UTC, the workload's
day and the shop example's first moment), keeping their order and the gaps between them.
Recordings then differ only in LSNs, xids, the epoch, the server's identity and those gaps.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DATABASE = "shop"
#: ms since the epoch: the pinned ``ts`` of the first event (2024-06-10 06:13:20 UTC)
START_MS = 1_718_000_000_000
_TS = re.compile(rb'^(\{"seq":\d+,"position":"[^"]*","ts":)(\d+)(,)')


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def record_changelog(out: Path) -> dict:
    """Record the workload's change log into ``out``; return a small summary."""
    import psycopg
    import psycopg2

    from ddlcore_postgres.capture import CaptureOptions, ConnectionSettings, PostgresCapture
    from ddlcore_postgres.event_trigger import install

    servers = _load("_pg_shop_server", REPO / "tests" / "servers" / "postgres.py")
    workload = _load("_pg_shop_workload", HERE / "workload.py")
    changes: list[tuple] = []
    with servers.PostgresServer(settings={"wal_level": "logical", "max_replication_slots": 4,
                                          "max_wal_senders": 4}) as server, \
            tempfile.TemporaryDirectory(prefix="pg-shop-capture-") as tmp:
        server.create_database(DATABASE)
        with server.connect() as admin:
            # the fixture's role is named ddlcore: keep its "$user" schema out of the path
            admin.execute(f"ALTER DATABASE {DATABASE} SET search_path = public")
        dsn = server.dsn(DATABASE)
        c2 = psycopg2.connect(dsn)
        try:
            install(c2)
        finally:
            c2.close()
        conn = psycopg.connect(dsn, autocommit=True, options=workload.connect_options())
        conn.execute("CREATE PUBLICATION shop FOR ALL TABLES")
        workload.setup(conn)

        def capture():
            warnings: list[str] = []
            options = CaptureOptions(ConnectionSettings(dsn=dsn), slot="shop", publication="shop", out=Path(tmp),
                                     snapshot="initial", until_end=True, progress=False)
            stats = PostgresCapture(options, on_warning=warnings.append).run()
            if warnings:
                raise SystemExit("the capture warned:\n" + "\n".join(warnings))
            return stats

        first = capture()
        workload.run(conn, lambda *change: changes.append(change))
        second = capture()
        conn.close()
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(tmp) / "changelog.jsonl", out)
        with server.connect(DATABASE) as c:
            c.execute("SELECT pg_drop_replication_slot('shop')")
    return {"snapshot_run": first.to_json(), "stream_run": second.to_json(), "row_changes": len(changes)}


def pin_clock(path: Path, start_ms: int = START_MS) -> None:
    """Shift every event's ``ts`` in the change log at ``path`` by one amount so that the first
    is ``start_ms``; nothing else in a line changes.  Raises ``ValueError`` for a line without
    a leading ``seq`` / ``position`` / ``ts``."""
    lines = path.read_bytes().splitlines(keepends=True)
    found = [_TS.match(line) for line in lines]
    if not all(found):
        raise ValueError(f"{path}: line {found.index(None) + 1} does not begin with seq, position, ts")
    shift = start_ms - int(found[0].group(2))
    path.write_bytes(b"".join(m.group(1) + str(int(m.group(2)) + shift).encode() + line[m.end(2):]
                              for m, line in zip(found, lines)))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=HERE / "changelog.jsonl")
    args = ap.parse_args(argv)
    summary = record_changelog(args.out)
    pin_clock(args.out)
    lines = args.out.read_text(encoding="utf-8").splitlines()
    ops: dict[str, int] = {}
    for line in lines:
        op = json.loads(line)["op"]
        ops[op] = ops.get(op, 0) + 1
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes, {len(lines)} events: "
          + ", ".join(f"{k} {v}" for k, v in sorted(ops.items())) + ")")
    print(f"workload row changes: {summary['row_changes']}")


if __name__ == "__main__":
    main()
