"""A throwaway PostgreSQL 15 server for the tests: ``initdb`` into a temporary directory, started
on a Unix socket in that directory and a free loopback port, stopped (and its files removed) at
the end.  Debian's ``postgresql`` package provides the binaries (``/usr/lib/postgresql/15/bin``);
as root the server runs as the ``postgres`` OS account (PostgreSQL refuses to run as root).

    server = PostgresServer(settings={"wal_level": "logical"}).start()
    with server.connect() as conn: ...          # psycopg 3, autocommit
    server.stop()

``ensure_installed()`` installs ``postgresql`` with apt-get when it is missing and we are root
(CI), else raises ``PostgresNotAvailable``.
"""

from __future__ import annotations

import atexit
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["PostgresServer", "PostgresNotAvailable", "PostgresStartError", "ensure_installed", "PG_BIN"]

PG_VERSION = "15"
PG_BIN = Path(os.environ.get("DDLCORE_PG_BIN", f"/usr/lib/postgresql/{PG_VERSION}/bin"))
USER = "ddlcore"


class PostgresNotAvailable(RuntimeError):
    """PostgreSQL is not installed and cannot be installed here."""


class PostgresStartError(RuntimeError):
    """The server did not start (the message carries the end of its log)."""


def ensure_installed() -> None:
    """Install Debian's ``postgresql`` (15) when its binaries are missing and we are root."""
    if (PG_BIN / "postgres").exists():
        return
    if os.geteuid() != 0:
        raise PostgresNotAvailable(f"{PG_BIN}/postgres not found and not root to install postgresql")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        subprocess.run(["apt-get", "update", "-q"], check=True, capture_output=True, env=env, timeout=600)
        subprocess.run(["apt-get", "install", "-y", "-q", f"postgresql-{PG_VERSION}"], check=True,
                       capture_output=True, env=env, timeout=1200)
    except (OSError, subprocess.SubprocessError) as exc:
        raise PostgresNotAvailable(f"apt-get install postgresql-{PG_VERSION} failed: {exc}") from exc
    if not (PG_BIN / "postgres").exists():
        raise PostgresNotAvailable(f"{PG_BIN}/postgres still missing after installing postgresql-{PG_VERSION}")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path: Path, n: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


class PostgresServer:
    """One private PostgreSQL instance.

    ``settings``: extra ``postgresql.conf`` settings (``{"wal_level": "logical",
    "max_replication_slots": 4}``); ``start_timeout``: seconds to wait for connections.

    After ``start()``: ``host`` (127.0.0.1), ``port``, ``socket_dir``, ``user`` (a superuser
    with replication rights, trusted locally), ``dbname`` (``postgres``), ``base`` (the temp
    dir), ``datadir``, ``log``."""

    def __init__(self, *, settings: dict[str, Any] | None = None, start_timeout: float = 60.0):
        self.settings = dict(settings or {})
        self.start_timeout = start_timeout
        self.host = "127.0.0.1"
        self.user = USER
        self.dbname = "postgres"
        self.port: int | None = None
        self.base: Path | None = None
        self._proc: subprocess.Popen | None = None

    # -- paths ---------------------------------------------------------------------------------

    @property
    def datadir(self) -> Path:
        assert self.base is not None
        return self.base / "data"

    @property
    def socket_dir(self) -> Path:
        assert self.base is not None
        return self.base / "sock"

    @property
    def log(self) -> Path:
        assert self.base is not None
        return self.base / "server.log"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    # -- lifecycle -----------------------------------------------------------------------------

    def _as_owner(self) -> dict[str, Any]:
        """``subprocess`` arguments running a command as the ``postgres`` account when root."""
        if os.geteuid() != 0:
            return {}
        pw = pwd.getpwnam("postgres")

        def demote() -> None:
            os.setgid(pw.pw_gid)
            os.setuid(pw.pw_uid)
        return {"preexec_fn": demote}

    def start(self) -> "PostgresServer":
        """initdb and start; returns self once the server accepts connections.  Raises
        ``PostgresNotAvailable`` or ``PostgresStartError``."""
        if self.running:
            return self
        ensure_installed()
        parent = tempfile.gettempdir() if len(tempfile.gettempdir()) < 40 else "/tmp"
        self.base = Path(tempfile.mkdtemp(prefix="ddlcore-pg-", dir=parent))
        try:
            self.socket_dir.mkdir()
            if os.geteuid() == 0:
                pw = pwd.getpwnam("postgres")
                for p in (self.base, self.socket_dir):
                    os.chown(p, pw.pw_uid, pw.pw_gid)
            init = subprocess.run([str(PG_BIN / "initdb"), "-D", str(self.datadir), "-U", USER, "-A", "trust",
                                   "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"],
                                  capture_output=True, text=True, timeout=120, **self._as_owner())
            if init.returncode != 0:
                raise PostgresStartError(f"initdb failed ({init.returncode}):\n{init.stdout}\n{init.stderr}")
            for attempt in range(3):
                self.port = _free_port()
                try:
                    self._launch()
                    break
                except PostgresStartError as exc:
                    if attempt == 2 or "could not bind" not in str(exc):
                        raise
        except BaseException:
            self.stop()
            raise
        atexit.register(self.stop)
        return self

    def _launch(self) -> None:
        conf = {"listen_addresses": "'127.0.0.1'", "port": self.port,
                "unix_socket_directories": f"'{self.socket_dir}'", "fsync": "off",
                "synchronous_commit": "off", "full_page_writes": "off", "shared_buffers": "'32MB'",
                "max_connections": 40, "logging_collector": "off", **self.settings}
        with open(self.datadir / "postgresql.auto.conf", "w") as fh:
            for k, v in conf.items():
                fh.write(f"{k} = {v}\n")
        self._proc = subprocess.Popen([str(PG_BIN / "postgres"), "-D", str(self.datadir)],
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=open(self.log, "ab"), start_new_session=True, **self._as_owner())
        deadline = time.monotonic() + self.start_timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                self._proc = None
                raise PostgresStartError(f"postgres exited during start:\n{_tail(self.log)}")
            try:
                self.connect().close()
                return
            except Exception as exc:  # noqa: BLE001 - not accepting yet
                last = exc
                time.sleep(0.1)
        self.stop()
        raise PostgresStartError(f"postgres did not accept connections within {self.start_timeout:.0f} s "
                                 f"({last}):\n{_tail(self.log)}")

    def stop(self) -> None:
        """Fast shutdown (SIGINT), then SIGKILL; removes the temporary directory."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            for sig, wait in ((signal.SIGINT, 20), (signal.SIGKILL, 10)):
                try:
                    os.kill(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    proc.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        base, self.base = self.base, None
        if base is not None:
            shutil.rmtree(base, ignore_errors=True)
        try:
            atexit.unregister(self.stop)
        except Exception:  # noqa: BLE001
            pass

    def restart(self, *, immediate: bool = False) -> None:
        """Stop (fast; ``immediate``: SIGQUIT, a crash that the start recovers from the WAL)
        and start again on the same data directory and port."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            os.kill(proc.pid, signal.SIGQUIT if immediate else signal.SIGINT)
            proc.wait(timeout=30)
        self._launch()

    # -- clients -------------------------------------------------------------------------------

    def dsn(self, dbname: str | None = None, *, tcp: bool = False) -> str:
        """A libpq connection string (Unix socket unless ``tcp``)."""
        host = self.host if tcp else str(self.socket_dir)
        return f"host={host} port={self.port} user={self.user} dbname={dbname or self.dbname}"

    def connect(self, dbname: str | None = None, *, autocommit: bool = True, **kw: Any):
        """A psycopg 3 connection (autocommit by default)."""
        import psycopg

        return psycopg.connect(self.dsn(dbname), autocommit=autocommit, connect_timeout=5, **kw)

    def create_database(self, name: str) -> None:
        with self.connect() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')

    def __enter__(self) -> "PostgresServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<PostgresServer port={self.port} base={self.base}>" if self.running else "<PostgresServer stopped>"
