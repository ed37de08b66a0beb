"""pytest fixtures for the MariaDB oracle; import them into ``tests/conftest.py``::

    from tests.servers.fixtures import mariadb, mariadb_db  # noqa: F401

``mariadb`` (session scope) yields a started :class:`MariaDbServer`. When MariaDB is not
installed and cannot be (not root) the tests that use it are skipped with the reason — except
under ``CI=true``, where that is a failure: CI must run the oracle. Any other start failure
is an error everywhere.

``mariadb_db`` (function scope) yields a :class:`MariaDbDatabase`: a fresh, uniquely named
database on that server (``.name``, ``.connect()``), dropped afterwards together with every
connection it handed out.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterator

import pytest

from .mariadb import MariaDbNotAvailable, MariaDbServer

__all__ = ["mariadb", "mariadb_db", "MariaDbDatabase", "in_ci", "started_server", "postgres", "postgres_db",
           "started_postgres"]


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def started_server(what: str = "MariaDB", **settings: Any) -> MariaDbServer:
    """A started throwaway ``MariaDbServer(**settings)`` (the caller stops it).  When MariaDB
    is not available the calling test is skipped with the reason, or fails under ``CI=true``
    (``what`` names the server in that message)."""
    server = MariaDbServer(**settings)
    try:
        server.start()
    except MariaDbNotAvailable as exc:
        if in_ci():
            pytest.fail(f"{what} unavailable in CI: {exc}", pytrace=False)
        pytest.skip(f"{what} unavailable: {exc}")
    return server


@dataclass
class MariaDbDatabase:
    """A throwaway database on the session's server."""

    server: MariaDbServer
    name: str
    _conns: list[Any] = field(default_factory=list, repr=False)

    def connect(self, **kw: Any) -> Any:
        """A new pymysql connection with this database selected (closed at teardown)."""
        conn = self.server.connect(self.name, **kw)
        self._conns.append(conn)
        return conn

    def __str__(self) -> str:
        return self.name

    def _close(self) -> None:
        for conn in self._conns:
            try:
                conn.close()
            except Exception:
                pass
        self._conns.clear()


@pytest.fixture(scope="session")
def mariadb() -> Iterator[MariaDbServer]:
    server = started_server("MariaDB oracle")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def mariadb_db(mariadb: MariaDbServer) -> Iterator[MariaDbDatabase]:
    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = mariadb.connect()
    try:
        with admin.cursor() as cur:
            cur.execute(f"CREATE DATABASE `{name}`")
        db = MariaDbDatabase(mariadb, name)
        try:
            yield db
        finally:
            db._close()
            with admin.cursor() as cur:
                cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
    finally:
        admin.close()


# -------------------------------------------------------------------------------- PostgreSQL


def started_postgres(what: str = "PostgreSQL", **settings: Any):
    """A started throwaway ``PostgresServer(settings=...)`` (the caller stops it); skipped when
    PostgreSQL is not available, a failure under ``CI=true``."""
    from .postgres import PostgresNotAvailable, PostgresServer

    server = PostgresServer(settings=settings)
    try:
        server.start()
    except PostgresNotAvailable as exc:
        if in_ci():
            pytest.fail(f"{what} unavailable in CI: {exc}", pytrace=False)
        pytest.skip(f"{what} unavailable: {exc}")
    return server


@pytest.fixture(scope="session")
def postgres():
    """A PostgreSQL 15 for the session, with ``wal_level=logical`` (the capture tests need it)
    and ``max_prepared_transactions`` (two-phase commit, tests/pg_capture/test_two_phase.py)."""
    server = started_postgres("PostgreSQL oracle", wal_level="logical", max_replication_slots=10,
                              max_wal_senders=10, max_prepared_transactions=4)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_db(postgres):
    """A fresh, uniquely named database on the session's PostgreSQL (its name); dropped after."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    postgres.create_database(name)
    try:
        yield name
    finally:
        with postgres.connect() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
