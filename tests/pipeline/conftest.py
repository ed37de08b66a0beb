"""The pipeline tests need Spark (the session: ``tests/conftest.py``); ``mounted``: a viewfs mount
of a local directory, for the tests of other filesystems."""

from __future__ import annotations

import os
import uuid

import pytest

if os.environ.get("CI") == "true":
    import pyspark  # noqa: F401  (under CI a missing Spark fails the tests, never skips them)
else:
    pytest.importorskip("pyspark")


@pytest.fixture
def mounted(spark, tmp_path, monkeypatch):
    """``viewfs://ddltestXXXX/out`` → ``tmp_path/mounted`` (a mount of the session's Hadoop
    configuration); the working directory is an empty one."""
    target = tmp_path / "mounted"
    target.mkdir()
    conf = spark._jsc.hadoopConfiguration()
    table = f"ddltest{uuid.uuid4().hex[:8]}"  # Hadoop caches a filesystem per URI authority: one per test
    key = f"fs.viewfs.mounttable.{table}.link./out"
    conf.set(key, target.as_uri())
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    yield f"viewfs://{table}/out", target, cwd
    conf.unset(key)
    assert list(cwd.iterdir()) == []
