"""Fixtures of the Spark tests: the MySQL dialect (the Spark session: ``tests/conftest.py``)."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")


@pytest.fixture(scope="session")
def mysql():
    """The installed MySQL dialect (skips when its plugin is not installed)."""
    import ddlcore

    try:
        return ddlcore.get_dialect("mysql")
    except ddlcore.DialectNotFound as exc:  # pragma: no cover - depends on the install
        pytest.skip(str(exc))
