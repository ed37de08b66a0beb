"""Fixtures of the end-to-end tests: the shop workload (``examples/shop/workload.py``, loaded by
path), throwaway MariaDB servers (the Spark session: ``tests/conftest.py``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from tests.servers.fixtures import started_server
from tests.servers.mariadb import MariaDbServer

pytest.importorskip("pyspark")

REPO = Path(__file__).resolve().parents[2]
SHOP = REPO / "examples" / "shop"


def load_workload():
    """``examples/shop/workload.py`` as a module (examples/ is not a package)."""
    name = "shop_workload"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, SHOP / "workload.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def start_server(metadata: str) -> MariaDbServer:
    """A started throwaway server with ``binlog_row_metadata=metadata``; skips (fails in CI)
    when MariaDB is not available."""
    return started_server(binlog_row_metadata=metadata)
