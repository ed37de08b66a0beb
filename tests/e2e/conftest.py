"""Fixtures of the end-to-end tests: one SparkSession for the whole test session, the shop
workload (``examples/shop/workload.py``, loaded by path), throwaway MariaDB servers.

``SparkSession.builder.getOrCreate()`` returns the running session, so these tests share one
JVM with every other test module that asks for Spark this way."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Iterator

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


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    from ddlcore.spark.pipeline import spark_session

    session = spark_session("local[2]", app_name="ddlcore e2e tests")
    session.sparkContext.setLogLevel("ERROR")
    yield session


def start_server(metadata: str) -> MariaDbServer:
    """A started throwaway server with ``binlog_row_metadata=metadata``; skips (fails in CI)
    when MariaDB is not available."""
    return started_server(binlog_row_metadata=metadata)
