"""Helpers of the capture tests: raw-value builders, running a capture in process or as the
CLI, reading a change log back."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from ddlcore.changelog import ChangeEvent, read_changelog
from ddlcore_mysql.capture import CaptureOptions, CaptureStats, ConnectionSettings, MySqlCapture

from tests.servers.mariadb import MariaDbServer

REPO = Path(__file__).resolve().parents[2]


def B(data: bytes) -> dict[str, str]:
    """The change-log encoding of bytes."""
    return {"$b64": base64.b64encode(data).decode("ascii")}


def DATE(text: str) -> dict[str, str]:
    return {"$date": text}


def DT(text: str) -> dict[str, str]:
    return {"$datetime": text}


def TIME(text: str) -> dict[str, str]:
    return {"$time": text}


def DEC(text: str) -> dict[str, str]:
    return {"$dec": text}


def BIG(n: int) -> Any:
    """Integers of any size are plain JSON numbers (``ddlcore.raw``)."""
    return n


def connection(server: MariaDbServer) -> ConnectionSettings:
    return ConnectionSettings(socket=server.socket, user=server.user, password=server.password)


def run_capture(server: MariaDbServer, out: Path, **kw: Any) -> CaptureStats:
    """One in-process capture into ``out`` (``until_end`` by default, no progress)."""
    kw.setdefault("until_end", True)
    kw.setdefault("progress", False)
    kw.setdefault("server_id", 4242)
    warnings: list[str] = []
    cap = MySqlCapture(CaptureOptions(connection(server), out=out, **kw), on_warning=warnings.append)
    return cap.run()


def cli_args(server: MariaDbServer, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "ddlcore.cli", "capture", "mysql", "--socket", server.socket,
            "--user", server.user, "--password-env", "DDLCORE_TEST_PW", "--server-id", "4243",
            "--out", str(out), "--no-progress", *extra]


def cli_env(server: MariaDbServer) -> dict[str, str]:
    return {**os.environ, "DDLCORE_TEST_PW": server.password}


def run_cli(server: MariaDbServer, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(cli_args(server, out, *extra), env=cli_env(server), capture_output=True,
                          text=True, timeout=120, cwd=REPO)


def events(out: Path) -> list[ChangeEvent]:
    return list(read_changelog(out / "changelog.jsonl"))


def checkpoint(out: Path) -> dict[str, Any]:
    return json.loads((out / "checkpoint.json").read_text())


def master_position(server: MariaDbServer) -> str:
    with server.connect() as conn, conn.cursor() as cur:
        cur.execute("SHOW MASTER STATUS")
        f, p = cur.fetchone()[:2]
    return f"{f}:{p}"


def log_bytes(out: Path) -> bytes:
    """The change log's bytes with what is each capture's own written as placeholders: the
    epoch (a uuid each new log makes) and the time of its source event.  Two captures of the
    same binlog give equal bytes."""
    import re

    data = re.sub(rb'"epoch":"[0-9a-f-]+"', b'"epoch":"EPOCH"', (out / "changelog.jsonl").read_bytes())
    return re.sub(rb'"ts":\d+,"op":"source"', b'"ts":0,"op":"source"', data)


def end_xa(cur, statement: str, wait: float = 10.0) -> None:
    """Run ``XA COMMIT 'x'`` / ``XA ROLLBACK 'x'`` for a prepared transaction whose session was
    just closed: the server detaches it from the closing session a moment later (until then
    ``XAER_NOTA``, 1397), so retry for up to ``wait`` seconds."""
    import time

    import pymysql

    deadline = time.monotonic() + wait
    while True:
        try:
            cur.execute(statement)
            return
        except pymysql.err.OperationalError as exc:
            if exc.args[0] != 1397 or time.monotonic() > deadline:
                raise
            time.sleep(0.05)
