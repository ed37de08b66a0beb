"""Shared test configuration: hypothesis profiles, the shared corpora, server fixtures."""

from __future__ import annotations

import os
from pathlib import Path

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
