"""Entry point of the ``ddlcore-mysql`` distribution (entry-point group ``ddlcore``)."""

from __future__ import annotations

import ddlcore

from .dialect import MySqlDialect


@ddlcore.hookimpl
def ddlcore_dialects():
    """The MySQL / MariaDB dialect."""
    return [MySqlDialect()]


@ddlcore.hookimpl
def ddlcore_spark_rules(dialect):
    """The MySQL type mapping onto Spark (``spark_types.SPARK_RULES``; imports pyspark)."""
    if dialect.name != MySqlDialect.name:
        return None
    from .spark_types import SPARK_RULES

    return SPARK_RULES


@ddlcore.hookimpl
def ddlcore_spark_options():
    """MySQL's type-mapping options (``spark_options.OPTIONS``)."""
    from .spark_options import OPTIONS

    return OPTIONS


@ddlcore.hookimpl
def ddlcore_capture_commands():
    """``ddlcore capture mysql``: the binlog capture (``capture_cli``); ``ddlcore capture
    tidb``: TiDB Binlog from Drainer's Kafka topic or a file (``tidb_capture_cli``); ``ddlcore
    capture canal``: Canal flat messages and TiCDC canal-json (``canal_cli``)."""
    from .canal_cli import canal_capture_command
    from .capture_cli import mysql_capture_command
    from .tidb_capture_cli import tidb_capture_command

    return [mysql_capture_command, tidb_capture_command, canal_capture_command]


@ddlcore.hookimpl
def ddlcore_debezium_connectors():
    """Debezium's MySQL and MariaDB connectors for ``ddlcore capture debezium`` (``debezium_mysql``)."""
    from .debezium_mysql import MySqlConnector

    return [MySqlConnector()]
