"""Fixtures of the Spark tests: one SparkSession for the whole test session (``local[2]``,
two shuffle partitions, no UI, UTC) and the MySQL dialect's type rules.

``SparkSession.builder.getOrCreate()`` returns the running session, so every test module that
asks for Spark this way shares this one JVM."""

from __future__ import annotations

from typing import Iterator

import pytest

pytest.importorskip("pyspark")


@pytest.fixture(scope="session")
def spark() -> Iterator["object"]:
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("ddlcore tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.driver.memory", "1g")
               # as ``ddlcore.spark.pipeline.spark_session`` sets it (read once per process: the
               # first session decides): with PySpark's call-site capture on, building the
               # converters' expressions costs several times more, and these tests' times would
               # depend on which module ran first (the wide table's rows: 39 s on, 26 s off)
               .config("spark.python.sql.dataFrameDebugging.enabled", "false")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session


@pytest.fixture(scope="session")
def mysql():
    """The installed MySQL dialect (skips when its plugin is not installed)."""
    import ddlcore

    try:
        return ddlcore.get_dialect("mysql")
    except ddlcore.DialectNotFound as exc:  # pragma: no cover - depends on the install
        pytest.skip(str(exc))
