"""Entry point of the ``ddlcore-mysql`` distribution (entry-point group ``ddlcore``)."""

from __future__ import annotations

import ddlcore

from .dialect import MySqlDialect


@ddlcore.hookimpl
def ddlcore_dialects():
    """The MySQL / MariaDB dialect."""
    return [MySqlDialect()]


@ddlcore.hookimpl
def ddlcore_capture_commands():
    """``ddlcore capture mysql``: the binlog capture (``capture_cli``)."""
    from .capture_cli import mysql_capture_command

    return [mysql_capture_command]
