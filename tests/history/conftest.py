"""Fixtures of the schema-history tests.

* ``mini``: the regex DDL applier of ``tests.history.minisql`` (no ANTLR; always available);
* ``mysql_parser``: the real MySQL parser, or a skip naming why it is unavailable;
* ``parser_factory``: parametrised over both, for tests that must hold for any parser;
* ``minisql_plugin``: minisql registered as the dialect ``minisql`` in this process (CLI tests).
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

import ddlcore
from ddlcore.plugins import register_plugin, unregister_plugin

from .minisql import MiniDialect, MiniParser


def mysql_available() -> str | None:
    """``None`` when the MySQL dialect can parse, else the reason it cannot."""
    try:
        ddlcore.get_dialect("mysql").parser()
    except Exception as exc:  # noqa: BLE001 - plugin missing or its parser not generated
        return f"MySQL parser unavailable: {type(exc).__name__}: {exc}"
    return None


@pytest.fixture
def mini() -> MiniParser:
    return MiniParser()


@pytest.fixture
def mysql_parser():
    reason = mysql_available()
    if reason:
        pytest.skip(reason)
    return ddlcore.get_dialect("mysql").parser()


@pytest.fixture(params=["minisql", "mysql"])
def parser_factory(request) -> Callable[..., Any]:
    """A function ``(**options) -> parser`` for minisql and for the real MySQL parser."""
    if request.param == "mysql":
        reason = mysql_available()
        if reason:
            pytest.skip(reason)
        return lambda **o: ddlcore.get_dialect("mysql").parser(**o)
    return lambda **o: MiniParser(**o)


class _MiniPlugin:
    @ddlcore.hookimpl
    def ddlcore_dialects(self):
        return [MiniDialect()]


@pytest.fixture
def minisql_plugin():
    plugin = _MiniPlugin()
    register_plugin(plugin, name="minisql-test")
    try:
        yield plugin
    finally:
        unregister_plugin(plugin)
