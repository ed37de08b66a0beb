"""Shared test configuration: hypothesis profiles, the shared corpora, server fixtures, and the
one Spark session of the suite."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import HealthCheck, settings

from tests.servers.fixtures import in_ci, mariadb, mariadb_db, postgres, postgres_db  # noqa: F401  (fixtures)

REPO = Path(__file__).resolve().parent.parent

# CI: fixed, derandomised, bounded.  dev: the longer profile, on demand
# (HYPOTHESIS_PROFILE=dev make test).
settings.register_profile("ci", derandomize=True, max_examples=60, deadline=None,
                          print_blob=True, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=1000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# Under CI=true a skip must not hide a failure: a test or module that skips (a missing
# server, corpus, Java, Spark or plugin) fails the run instead; skips are for developers'
# machines only.
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if in_ci() and rep.skipped and not hasattr(rep, "wasxfail"):
        rep.outcome = "failed"
        rep.longrepr = f"skipped under CI=true, which must not happen: {rep.longrepr}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    rep = outcome.get_result()
    if in_ci() and rep.skipped:
        rep.outcome = "failed"
        rep.longrepr = f"module skipped under CI=true, which must not happen: {rep.longrepr}"


#: what a test needs beyond the checkout, by the directory its module is in ...
_NEEDS_BY_DIRECTORY = {"e2e": "spark", "pipeline": "spark", "spark": "spark", "capture": "mariadb",
                       "pg_capture": "postgres"}
#: ... and by the fixtures it uses (directly or through other fixtures)
_NEEDS_BY_FIXTURE = {"spark": "spark", "mariadb": "mariadb", "mariadb_db": "mariadb", "mariadb_minimal": "mariadb",
                     "capture_server": "mariadb", "postgres": "postgres", "postgres_db": "postgres",
                     "kafka_broker": "kafka"}


def pytest_collection_modifyitems(config, items):
    """Mark every test with what it needs (``spark``, ``mariadb``, ``postgres``, ``kafka``;
    the markers in pyproject.toml), so that ``make test-fast`` (``-m "not (spark or mariadb or
    postgres or kafka)"``) runs what needs none of them.  Markers a module sets itself stay."""
    for item in items:
        needs = {_NEEDS_BY_FIXTURE[name] for name in item.fixturenames if name in _NEEDS_BY_FIXTURE}
        parts = Path(str(item.fspath)).relative_to(REPO).parts
        if len(parts) > 2 and parts[1] in _NEEDS_BY_DIRECTORY:
            needs.add(_NEEDS_BY_DIRECTORY[parts[1]])
        for need in sorted(needs):
            item.add_marker(need)
    items[:] = heavy_modules_first(items)


#: the order ``make test``'s workers take modules in (``pytest-xdist``, ``--dist loadfile``: a
#: module is one unit, handed to the next idle worker in collection order), by the costliest
#: need of any test in the module: Spark and the broker (JVMs, runs of the pipeline), then the
#: servers, then the rest — the longest units first, so that the short ones fill the end of the
#: run and both workers finish together
_SCHEDULE_RANK = {"spark": 0, "kafka": 0, "mariadb": 1, "postgres": 1}
_RANK_OF_THE_REST = 2


def heavy_modules_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """``items`` with whole modules reordered by ``_SCHEDULE_RANK`` (stable: modules of one
    rank, and the tests in a module, keep their collection order).  Every worker computes the
    same order from the same collection, as ``pytest-xdist`` requires."""
    rank: dict[Path, int] = {}
    for item in items:
        needs = [_SCHEDULE_RANK.get(mark.name, _RANK_OF_THE_REST) for mark in item.iter_markers()]
        rank[item.path] = min([rank.get(item.path, _RANK_OF_THE_REST), *needs])
    return sorted(items, key=lambda item: rank[item.path])


def corpora_dir() -> Path | None:
    """``$DDLCORE_CORPORA`` or ``../shared/corpora`` next to the checkout, if present."""
    env = os.environ.get("DDLCORE_CORPORA")
    for cand in ([Path(env)] if env else []) + [REPO.parent / "shared" / "corpora"]:
        if cand.is_dir():
            return cand
    return None


@pytest.fixture(scope="session")
def corpora() -> Path:
    """The shared real-world DDL corpora; tests skip with the reason where they are absent
    (CI always has them)."""
    found = corpora_dir()
    if found is None:
        pytest.skip("shared corpora not found: set DDLCORE_CORPORA or place them in ../shared/corpora")
    return found


@pytest.fixture(scope="module")
def spark() -> Iterator[object]:
    """The suite's SparkSession (``local[2]``): ``ddlcore.spark.pipeline.spark_session``, the
    session ``ddlcore run`` starts, with Spark's log at ERROR.  One JVM serves every module of a
    pytest process (each ``pytest-xdist`` worker of ``make test`` has its own): the first module
    that asks starts it; each later module gets the same session back with the pipeline's SQL
    settings applied again (``spark_session`` on a running session), so a setting one module
    changed does not leak into the next."""
    pytest.importorskip("pyspark")
    from ddlcore.spark.pipeline import spark_session

    session = spark_session("local[2]", app_name="ddlcore tests")
    session.sparkContext.setLogLevel("ERROR")
    yield session
