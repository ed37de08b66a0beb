"""Maintainer script: (re)record the bundled change log ``examples/shop/changelog.jsonl``.

Starts a throwaway MariaDB (``tests/servers/mariadb.py``: binlog_format=ROW, row image FULL,
``binlog_row_metadata`` FULL unless ``--metadata MINIMAL``), runs the workload's ``setup``,
captures with ``snapshot=initial, until_end`` (the Python API of ``ddlcore capture mysql``),
runs the workload's ``run``, captures again until the end (the capture resumes from its
checkpoint), and copies the capture's change log next to this script.  Needs root or an
installed MariaDB, and ``ddlcore-mysql[capture]``.

    .venv/bin/python examples/shop/record.py [--out PATH] [--metadata FULL|MINIMAL]

Every ``ts`` in the file comes from the workload's clock: the workload runs on a fixed session
clock (``SET timestamp``), which the binlog's event times carry, and the snapshot capture runs
with its own clock — the ``ts`` of the ``source`` event and of the snapshot's ``ddl`` and ``r``
events, the wall-clock time in a real capture — set to ``SNAPSHOT_CLOCK``, between the end of
``setup`` and the first statement of ``run``.  So two recordings differ only where the server
does (binlog positions, the server's uuid, the capture epoch).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import sys
import tempfile
import time
import types
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def snapshot_clock(workload) -> float:
    """The capture's clock during the snapshot (seconds since the epoch): half way between
    ``setup``'s last statement and ``run``'s first (``run`` starts 1,000 seconds of workload
    clock after ``setup``'s start)."""
    return workload.START_TIMESTAMP + 500.0


@contextmanager
def capture_clock(module, now: float) -> Iterator[None]:
    """Within the block, ``module`` (the capture's module) reads ``now`` from ``time.time()``;
    every other function of ``time`` and every other module are unchanged."""
    real = module.time
    fixed = types.SimpleNamespace(**{k: getattr(time, k) for k in dir(time) if not k.startswith("_")})
    fixed.time = lambda: now
    module.time = fixed
    try:
        yield
    finally:
        module.time = real


def record_changelog(out: Path, metadata: str = "FULL") -> dict:
    """Record the workload's change log into ``out``; return a small summary."""
    from ddlcore_mysql import capture as capture_module
    from ddlcore_mysql.capture import CaptureOptions, ConnectionSettings, MySqlCapture

    mariadb = _load("_shop_mariadb", REPO / "tests" / "servers" / "mariadb.py")
    workload = _load("_shop_workload", HERE / "workload.py")
    expected: list[tuple] = []
    with mariadb.MariaDbServer(binlog_row_metadata=metadata) as server, \
            tempfile.TemporaryDirectory(prefix="shop-capture-") as tmp:
        conn = server.connect()
        workload.setup(conn)
        settings = ConnectionSettings(socket=server.socket, user=server.user, password=server.password)

        def capture():
            warnings: list[str] = []
            options = CaptureOptions(settings, server_id=4242, out=Path(tmp), snapshot="initial",
                                     until_end=True, progress=False, include=(f"{workload.DATABASE}.*",))
            stats = MySqlCapture(options, on_warning=warnings.append).run()
            if warnings:
                raise SystemExit("the capture warned:\n" + "\n".join(warnings))
            return stats

        with capture_clock(capture_module, snapshot_clock(workload)):
            first = capture()
        workload.run(conn, lambda table, op, pk, row: expected.append((table, op, pk)))
        second = capture()
        conn.close()
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(tmp) / "changelog.jsonl", out)
    return {"snapshot_run": first.to_json(), "stream_run": second.to_json(), "row_changes": len(expected)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=HERE / "changelog.jsonl")
    ap.add_argument("--metadata", choices=["FULL", "MINIMAL"], default="FULL",
                    help="binlog_row_metadata of the throwaway server (default FULL)")
    args = ap.parse_args(argv)
    summary = record_changelog(args.out, args.metadata)
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
