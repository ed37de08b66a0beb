"""Plugin hooks: the one module a dialect author reads.

Dialects are discovered with pluggy through the entry-point group ``ddlcore``: a distribution
declares, in its ``pyproject.toml``::

    [project.entry-points.ddlcore]
    mysql = "ddlcore_mysql.plugin"

and that module defines functions marked ``@ddlcore.hookimpl`` named after the hooks below.
Core never imports a dialect package by name: ``get_dialect("mysql")`` finds it through the
entry point.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import pluggy

from .errors import DialectNotFound

if TYPE_CHECKING:  # pragma: no cover
    import click

    from .dialect import Dialect
    from .debezium import DebeziumConnector

__all__ = ["hookspec", "hookimpl", "get_dialect", "available_dialects", "plugin_manager",
           "capture_commands", "DdlcoreSpecs", "PROJECT"]

#: pluggy project name and entry-point group
PROJECT = "ddlcore"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class DdlcoreSpecs:
    """Hook specifications."""

    # -- dialects ------------------------------------------------------------------------

    @hookspec
    def ddlcore_dialects(self) -> "list[Dialect]":
        """Return the dialects this plugin provides: a list of ``ddlcore.Dialect`` instances,
        each with a unique ``name`` (lower case, e.g. ``"mysql"``).  Called once per process,
        when a dialect is first looked up."""

    # -- Spark -------------------------------------------------------------------------------

    @hookspec(firstresult=True)
    def ddlcore_spark_rules(self, dialect: "Dialect") -> "SparkRules | None":
        """Return the Spark type rules (a ``ddlcore.spark.SparkRules``) of ``dialect`` when it
        is one of this plugin's dialects, else ``None``.  Called by ``Dialect.spark_rules()``
        when Spark is used; import pyspark (and the rules module) inside the hook, so that
        parsing never needs the ``spark`` extra.  The first non-``None`` answer wins."""

    @hookspec
    def ddlcore_spark_options(self) -> "list[SparkOption]":
        """Return the type-mapping options this plugin's dialects add to the neutral ones
        (``ddlcore.spark.options.SparkOption`` declarations: name, dialect, default, allowed
        values, documentation), e.g. MySQL's ``tinyint1_as_boolean``.  Users set them like any
        option (``ddlcore run -s name=value``, ``SparkOptions.of({...})``); a rule reads them
        with ``SparkOptions.get(name)``.  Must not import pyspark."""

    # -- command line ------------------------------------------------------------------------

    @hookspec
    def ddlcore_capture_commands(self) -> "list[click.Command]":
        """Return the click commands (or groups) this plugin adds under ``ddlcore capture``,
        each named after its source (``ddlcore capture mysql ...``).  Called when the
        ``capture`` group is listed or invoked (possibly more than once: return the same
        commands each time); keep heavy imports inside the commands."""

    @hookspec
    def ddlcore_debezium_connectors(self) -> "list[DebeziumConnector]":
        """Return the Debezium connectors this plugin reads (``ddlcore.debezium.DebeziumConnector``:
        positions, history statements and value decoding of one connector's messages) for
        ``ddlcore capture debezium``."""


_lock = threading.Lock()
_pm: pluggy.PluginManager | None = None
_dialects: dict[str, "Dialect"] | None = None


def plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager, with every installed ``ddlcore`` entry point loaded."""
    global _pm
    with _lock:
        if _pm is None:
            pm = pluggy.PluginManager(PROJECT)
            pm.add_hookspecs(DdlcoreSpecs)
            pm.load_setuptools_entrypoints(PROJECT)
            _pm = pm
        return _pm


def _collect() -> dict[str, "Dialect"]:
    global _dialects
    if _dialects is None:
        found: dict[str, Dialect] = {}
        for provided in plugin_manager().hook.ddlcore_dialects():
            for dialect in provided or ():
                found.setdefault(dialect.name, dialect)
        _dialects = found
    return _dialects


def available_dialects() -> "dict[str, Dialect]":
    """Every installed dialect by name (sorted)."""
    return dict(sorted(_collect().items()))


def get_dialect(name: str) -> "Dialect":
    """The installed dialect called ``name`` (case-insensitive; ``mariadb`` is an alias a
    dialect may declare).  Raises ``DialectNotFound`` naming what is installed."""
    dialects = _collect()
    key = name.lower()
    if key in dialects:
        return dialects[key]
    for d in dialects.values():
        if key in d.aliases:
            return d
    installed = ", ".join(sorted(dialects)) or "none"
    raise DialectNotFound(
        f"no dialect {name!r} is installed (installed: {installed}); "
        f"install its plugin, e.g. pip install ddlcore-{key}")


def capture_commands() -> "dict[str, click.Command]":
    """Every ``ddlcore capture`` command the installed plugins provide, by name (the first
    plugin to claim a name wins)."""
    found: dict[str, click.Command] = {}
    for provided in plugin_manager().hook.ddlcore_capture_commands():
        for cmd in provided or ():
            found.setdefault(cmd.name, cmd)
    return dict(sorted(found.items()))


def reload_plugins() -> None:
    """Forget the loaded plugins; the next lookup scans the entry points again (after a plugin
    was installed into the running process, e.g. in a notebook or a test)."""
    global _pm, _dialects
    with _lock:
        _pm = None
        _dialects = None


def register_plugin(module_or_object: object, name: str | None = None) -> None:
    """Register a plugin object in this process without an entry point (tests, notebooks)."""
    global _dialects
    plugin_manager().register(module_or_object, name=name)
    _dialects = None


def unregister_plugin(module_or_object: object) -> None:
    global _dialects
    plugin_manager().unregister(module_or_object)
    _dialects = None
