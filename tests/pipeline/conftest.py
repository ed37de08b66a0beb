"""The Spark session of the pipeline tests (``local[2]``, the pipeline's own settings)."""

from __future__ import annotations

import os

import pytest

if os.environ.get("CI") == "true":
    import pyspark  # noqa: F401  (under CI a missing Spark fails the tests, never skips them)
else:
    pytest.importorskip("pyspark")


@pytest.fixture(scope="module")
def spark():
    from ddlcore.spark import pipeline as pl

    s = pl.spark_session("local[2]")
    s.sparkContext.setLogLevel("ERROR")
    yield s
