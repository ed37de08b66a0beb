"""Fixtures of the capture tests: one MariaDB server per ``binlog_row_metadata`` mode.

``FULL`` reuses the session's oracle server (``tests.servers.fixtures.mariadb``, configured
FULL); ``MINIMAL`` starts its own.  ``capture_server`` is parametrised over both; every test
works in its own database (``capture_db``), so the servers can be shared.
"""

from __future__ import annotations

import uuid
from typing import Iterator

import pytest

from tests.servers.fixtures import in_ci, started_server
from tests.servers.mariadb import MariaDbServer

try:
    import pymysqlreplication  # noqa: F401  (the capture's replication client)
except ImportError as exc:  # pragma: no cover - depends on the install
    if in_ci():
        raise
    pytest.skip(f"the capture needs ddlcore-mysql[capture] (mysql-replication): {exc}",
                allow_module_level=True)


@pytest.fixture(scope="session")
def mariadb_minimal() -> Iterator[MariaDbServer]:
    server = started_server(binlog_row_metadata="MINIMAL")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(params=["FULL", "MINIMAL"])
def capture_server(request) -> MariaDbServer:
    """A running server with ``binlog_row_metadata`` FULL or MINIMAL (``.binlog_row_metadata``)."""
    if request.param == "FULL":
        return request.getfixturevalue("mariadb")
    return request.getfixturevalue("mariadb_minimal")


@pytest.fixture
def capture_db(capture_server: MariaDbServer) -> Iterator[str]:
    """A fresh database name on ``capture_server`` (created; dropped afterwards)."""
    name = f"cap_{uuid.uuid4().hex[:10]}"
    with capture_server.connect() as conn, conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE `{name}`")
    try:
        yield name
    finally:
        with capture_server.connect() as conn, conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
