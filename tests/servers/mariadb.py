"""A throwaway MariaDB server for the oracle tests.

Owns: installing (when allowed), initialising, starting and stopping one private
``mariadbd`` instance whose data directory, Unix socket, pid file, binlogs and error log all
live in one temporary directory that is removed on stop. It listens on 127.0.0.1 (a free
port chosen at start) and on the Unix socket.

Must not know: pytest (the fixtures live in ``fixtures.py``), ddlcore itself.

The server is configured as the capture side expects a production source to be:
``binlog_format=ROW``, ``binlog_row_image=FULL``, ``binlog_row_metadata=FULL`` (or MINIMAL),
``server_id=1``. Grant tables are real (no ``--skip-grant-tables``): an ``--init-file`` creates
the account ``ddlcore``/``ddlcore`` on ``localhost`` and ``127.0.0.1`` with all privileges, so
connecting never depends on which OS user runs the tests (``root@localhost`` keeps MariaDB's
default ``unix_socket`` authentication and is usable only by OS root).

Usage::

    with MariaDbServer() as server:
        conn = server.connect("test")   # pymysql connection, autocommit on

Only the process this object started is ever signalled (by its pid), never by name.
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

MARIADBD = "/usr/sbin/mariadbd"
INSTALL_DB_NAMES = ("mariadb-install-db", "mysql_install_db")

USER = "ddlcore"
PASSWORD = "ddlcore"

__all__ = [
    "MariaDbServer",
    "MariaDbNotAvailable",
    "MariaDbStartError",
    "ensure_installed",
    "find_install_db",
    "is_installed",
]


class MariaDbNotAvailable(RuntimeError):
    """MariaDB is not installed and cannot be installed from here (not root)."""


class MariaDbStartError(RuntimeError):
    """``mariadb-install-db`` or ``mariadbd`` failed; the message carries the log tail."""


def find_install_db() -> str | None:
    """Path of ``mariadb-install-db`` (or the old ``mysql_install_db``), or None."""
    for name in INSTALL_DB_NAMES:
        path = shutil.which(name) or (f"/usr/bin/{name}" if os.path.exists(f"/usr/bin/{name}") else None)
        if path:
            return path
    return None


def is_installed() -> bool:
    """True when both the server binary and the data-directory initialiser are present."""
    return os.access(MARIADBD, os.X_OK) and find_install_db() is not None


def ensure_installed(*, timeout: float = 900.0) -> str:
    """Make sure Debian's ``mariadb-server`` is installed; return the ``mariadbd`` path.

    When it is missing and we are root, run ``apt-get install -y mariadb-server`` (with an
    ``apt-get update`` first if the plain install fails, as on a fresh machine whose package
    lists are empty). When it is missing and we are not root, raise
    :class:`MariaDbNotAvailable` saying what to install.
    """
    if is_installed():
        return MARIADBD
    if os.geteuid() != 0:
        raise MariaDbNotAvailable(
            f"MariaDB server not found ({MARIADBD} or mariadb-install-db missing) and not running "
            "as root, so it cannot be installed automatically; run "
            "'sudo apt-get install -y mariadb-server' (Debian's MariaDB 10.11)"
        )
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = ["apt-get", "install", "-y", "--no-install-recommends", "mariadb-server"]
    result = subprocess.run(install, env=env, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        subprocess.run(["apt-get", "update"], env=env, capture_output=True, text=True, timeout=timeout)
        result = subprocess.run(install, env=env, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0 or not is_installed():
        raise MariaDbNotAvailable(
            "apt-get install -y mariadb-server failed (exit %s):\n%s"
            % (result.returncode, (result.stdout + result.stderr)[-3000:])
        )
    return MARIADBD


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return f"(no {path})"


class MariaDbServer:
    """One private MariaDB instance in a temporary directory.

    Parameters:
        character_set_server / collation_server: server defaults (``utf8mb4`` /
            ``utf8mb4_general_ci``), inherited by databases created without a charset.
        binlog_row_metadata: ``"FULL"`` (column names, signedness, charsets, enum/set labels
            in TABLE_MAP events) or ``"MINIMAL"``.
        port: TCP port on 127.0.0.1; None picks a free one.
        base_dir: parent of the temporary directory (default: the system temp dir, or /tmp
            when that path is too long for a Unix socket).
        options: extra ``[mariadbd]`` options, e.g. ``{"lower_case_table_names": 1}``.
        innodb_buffer_pool_size: kept small; the oracle holds only schemas.
        start_timeout: seconds to wait for the server to accept connections.

    Attributes (valid after :meth:`start`): ``socket``, ``port``, ``host`` (127.0.0.1),
    ``user`` / ``password`` (the ``ddlcore`` account), ``pid``, ``base`` (temp dir),
    ``datadir``, ``binlog_dir``, ``error_log``, ``startup_seconds``.
    """

    def __init__(
        self,
        *,
        character_set_server: str = "utf8mb4",
        collation_server: str = "utf8mb4_general_ci",
        binlog_row_metadata: str = "FULL",
        port: int | None = None,
        base_dir: str | os.PathLike[str] | None = None,
        options: dict[str, Any] | None = None,
        innodb_buffer_pool_size: str = "64M",
        start_timeout: float = 60.0,
    ) -> None:
        if binlog_row_metadata.upper() not in ("FULL", "MINIMAL", "NO_LOG"):
            raise ValueError(f"binlog_row_metadata must be FULL or MINIMAL, not {binlog_row_metadata!r}")
        self.character_set_server = character_set_server
        self.collation_server = collation_server
        self.binlog_row_metadata = binlog_row_metadata.upper()
        self._requested_port = port
        self._base_dir = base_dir
        self.options = dict(options or {})
        self.innodb_buffer_pool_size = innodb_buffer_pool_size
        self.start_timeout = start_timeout

        self.host = "127.0.0.1"
        self.user = USER
        self.password = PASSWORD
        self.port: int | None = None
        self.base: Path | None = None
        self.socket: str | None = None
        self.pid: int | None = None
        self.startup_seconds: float | None = None
        self._proc: subprocess.Popen[bytes] | None = None

    # ----------------------------------------------------------------- paths
    @property
    def datadir(self) -> Path:
        return self._need_base() / "data"

    @property
    def binlog_dir(self) -> Path:
        return self._need_base() / "binlog"

    @property
    def error_log(self) -> Path:
        return self._need_base() / "error.log"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _need_base(self) -> Path:
        if self.base is None:
            raise RuntimeError("MariaDbServer not started")
        return self.base

    # ----------------------------------------------------------------- lifecycle
    def start(self) -> "MariaDbServer":
        """Initialise a fresh data directory and start ``mariadbd``; return self when it accepts
        connections. Raises :class:`MariaDbNotAvailable` or :class:`MariaDbStartError`."""
        if self.running:
            return self
        ensure_installed()
        t0 = time.monotonic()
        parent = self._base_dir or tempfile.gettempdir()
        # sun_path holds 108 bytes: keep the socket path short
        if len(str(parent)) > 60:
            parent = "/tmp"
        self.base = Path(tempfile.mkdtemp(prefix="ddlcore-mariadb-", dir=parent))
        try:
            self._init_datadir()
            attempts = 1 if self._requested_port else 3
            for attempt in range(attempts):
                self.port = self._requested_port or _free_port()
                self._write_config()
                try:
                    self._launch()
                    break
                except MariaDbStartError as exc:
                    bind_race = "Address already in use" in str(exc) or "Do you already have another" in str(exc)
                    if attempt + 1 < attempts and bind_race:
                        continue
                    raise
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - t0
        atexit.register(self.stop)
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Shut the server down (SHUTDOWN, then SIGTERM, then SIGKILL) and remove the temp dir.
        Safe to call twice or after a failed start."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            try:
                conn = self.connect(connect_timeout=2)
                try:
                    with conn.cursor() as cur:
                        cur.execute("SHUTDOWN")
                finally:
                    conn.close()
            except Exception:
                pass
            if not self._wait(proc, timeout / 2):
                self._signal(proc, signal.SIGTERM)
                if not self._wait(proc, timeout / 2):
                    self._signal(proc, signal.SIGKILL)
                    self._wait(proc, 10)
        self.pid = None
        base, self.base = self.base, None
        if base is not None:
            shutil.rmtree(base, ignore_errors=True)
        try:
            atexit.unregister(self.stop)
        except Exception:
            pass

    def restart(self, down_seconds: float = 0.0, timeout: float = 30.0) -> None:
        """Shut the server down cleanly and start it again on the same data directory, port
        and socket (the binlog continues in a new file), staying down ``down_seconds``."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            try:
                with self.connect(connect_timeout=2) as conn, conn.cursor() as cur:
                    cur.execute("SHUTDOWN")
            except Exception:
                self._signal(proc, signal.SIGTERM)
            if not self._wait(proc, timeout):
                self._signal(proc, signal.SIGKILL)
                self._wait(proc, 10)
        time.sleep(down_seconds)
        self._launch()

    @staticmethod
    def _wait(proc: subprocess.Popen[bytes], seconds: float) -> bool:
        try:
            proc.wait(timeout=seconds)
            return True
        except subprocess.TimeoutExpired:
            return False

    @staticmethod
    def _signal(proc: subprocess.Popen[bytes], sig: int) -> None:
        try:
            os.kill(proc.pid, sig)  # only our own pid, never a name or a group
        except ProcessLookupError:
            pass

    def __enter__(self) -> "MariaDbServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = f"pid={self.pid} port={self.port} socket={self.socket}" if self.running else "stopped"
        return f"<MariaDbServer {state}>"

    # ----------------------------------------------------------------- internals
    def _run_user(self) -> str | None:
        """OS account for ``--user``: ``mysql`` when root and it exists, else root; None when
        not root (mariadbd then runs as the current user)."""
        if os.geteuid() != 0:
            return None
        try:
            pwd.getpwnam("mysql")
            return "mysql"
        except KeyError:
            return "root"

    def _write_config(self) -> None:
        base = self._need_base()
        self.socket = str(base / "mariadb.sock")
        user = self._run_user()
        opts: dict[str, Any] = {
            "datadir": self.datadir,
            "socket": self.socket,
            "port": self.port,
            "bind-address": "127.0.0.1",
            "skip-name-resolve": None,
            "pid-file": base / "mariadbd.pid",
            "log-error": self.error_log,
            "tmpdir": base / "tmp",
            "init-file": base / "init.sql",
            "character-set-server": self.character_set_server,
            "collation-server": self.collation_server,
            "log-bin": self.binlog_dir / "mariadb-bin",
            "binlog_format": "ROW",
            "binlog_row_image": "FULL",
            "binlog_row_metadata": self.binlog_row_metadata,
            "server_id": 1,
            "innodb_buffer_pool_size": self.innodb_buffer_pool_size,
            "innodb_log_file_size": "16M",
            # a test oracle needs no durability: fewer fsyncs make DDL replay several times faster
            "innodb_flush_log_at_trx_commit": 0,
            "innodb_doublewrite": 0,
            "sync_binlog": 0,
            "skip-slave-start": None,
            "max_connections": 100,
        }
        if user:
            opts["user"] = user
        opts.update(self.options)
        lines = ["[mariadbd]"]
        for key, value in opts.items():
            lines.append(key if value is None else f"{key} = {value}")
        (base / "my.cnf").write_text("\n".join(lines) + "\n")
        (base / "init.sql").write_text(
            "SET sql_log_bin = 0;\n"
            f"CREATE USER IF NOT EXISTS '{USER}'@'localhost' IDENTIFIED BY '{PASSWORD}';\n"
            f"CREATE USER IF NOT EXISTS '{USER}'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}';\n"
            f"GRANT ALL PRIVILEGES ON *.* TO '{USER}'@'localhost' WITH GRANT OPTION;\n"
            f"GRANT ALL PRIVILEGES ON *.* TO '{USER}'@'127.0.0.1' WITH GRANT OPTION;\n"
        )
        self._chown_tree()

    def _chown_tree(self) -> None:
        user = self._run_user()
        if user is None or user == "root":
            return
        pw = pwd.getpwnam(user)
        base = self._need_base()
        os.chmod(base, 0o755)
        for root, dirs, files in os.walk(base):
            os.chown(root, pw.pw_uid, pw.pw_gid)
            for name in files:
                os.chown(os.path.join(root, name), pw.pw_uid, pw.pw_gid)

    def _init_datadir(self) -> None:
        base = self._need_base()
        for sub in ("data", "binlog", "tmp"):
            (base / sub).mkdir()
        self.port = self._requested_port or _free_port()
        self._write_config()
        install_db = find_install_db()
        assert install_db is not None  # ensure_installed() checked
        cmd = [
            install_db,
            f"--defaults-file={base / 'my.cnf'}",
            f"--datadir={self.datadir}",
            "--skip-test-db",
            "--auth-root-authentication-method=socket",
            "--skip-name-resolve",
        ]
        user = self._run_user()
        if user:
            cmd.append(f"--user={user}")
        log = base / "install-db.log"
        with open(log, "wb") as out:
            result = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    timeout=300, cwd=base)
        if result.returncode != 0:
            raise MariaDbStartError(f"{' '.join(cmd)} failed (exit {result.returncode}):\n{_tail(log)}")
        self._chown_tree()

    def _launch(self) -> None:
        base = self._need_base()
        if self.error_log.exists():
            self.error_log.unlink()
        # start_new_session: the server gets its own session (setsid), so a Ctrl-C aimed at
        # pytest does not hit it half-way; stop() and the atexit hook end it by pid.
        self._proc = subprocess.Popen(
            [MARIADBD, f"--defaults-file={base / 'my.cnf'}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            cwd=base,
        )
        self.pid = self._proc.pid
        deadline = time.monotonic() + self.start_timeout
        delay = 0.05
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                code = self._proc.returncode
                self._proc = None
                raise MariaDbStartError(f"mariadbd exited with {code} during start:\n{_tail(self.error_log)}")
            if os.path.exists(self.socket or ""):
                try:
                    self.connect(connect_timeout=2).close()
                    return
                except Exception as exc:  # not accepting yet, or init-file still running
                    last_error = exc
            time.sleep(delay)
            delay = min(delay * 1.5, 0.25)
        proc, self._proc = self._proc, None
        self._signal(proc, signal.SIGKILL)
        self._wait(proc, 10)
        raise MariaDbStartError(
            f"mariadbd did not accept connections within {self.start_timeout:.0f} s "
            f"(last error: {last_error}):\n{_tail(self.error_log)}"
        )

    # ----------------------------------------------------------------- clients
    def connect(self, database: str | None = None, *, tcp: bool = False, **kw: Any):
        """A new ``pymysql`` connection as ``ddlcore`` over the Unix socket (``tcp=True``: over
        127.0.0.1:port). Autocommit is on and the connection charset is utf8mb4 unless ``kw``
        says otherwise; other keyword arguments go to ``pymysql.connect``."""
        import pymysql

        params: dict[str, Any] = dict(user=self.user, password=self.password, charset="utf8mb4",
                                      autocommit=True, connect_timeout=10)
        if tcp:
            params.update(host=self.host, port=self.port)
        else:
            params.update(unix_socket=self.socket)
        if database is not None:
            params["database"] = database
        params.update(kw)
        return pymysql.connect(**params)

    def client_args(self) -> list[str]:
        """Arguments for the ``mariadb`` command-line client to reach this server."""
        return ["--no-defaults", f"--socket={self.socket}", f"--user={self.user}", f"--password={self.password}"]


if __name__ == "__main__":  # manual smoke test: python tests/servers/mariadb.py
    with MariaDbServer() as srv:
        print(f"up in {srv.startup_seconds:.2f} s: {srv!r}")
        with srv.connect() as c, c.cursor() as cur:
            cur.execute("SELECT VERSION(), @@binlog_format, @@binlog_row_image, @@binlog_row_metadata, "
                        "@@character_set_server, @@collation_server, @@server_id, @@log_bin")
            print(cur.fetchone())
