"""Fixtures of the Spark tests: the suite's Spark session (``tests/conftest.py``) with two shuffle
partitions, and the MySQL dialect."""

from __future__ import annotations

from typing import Iterator

import pytest

pytest.importorskip("pyspark")


@pytest.fixture(scope="module")
def spark(spark) -> Iterator[object]:
    """The suite's session with ``spark.sql.shuffle.partitions=2``: these tests' small
    DataFrames on ``local[2]`` need no more (the next module's ``spark`` sets the pipeline's
    value again)."""
    spark.conf.set("spark.sql.shuffle.partitions", "2")
    yield spark


@pytest.fixture(scope="session")
def mysql():
    """The installed MySQL dialect (skips when its plugin is not installed)."""
    import ddlcore

    try:
        return ddlcore.get_dialect("mysql")
    except ddlcore.DialectNotFound as exc:  # pragma: no cover - depends on the install
        pytest.skip(str(exc))
