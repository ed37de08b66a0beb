"""Entry point of the ``ddlcore-postgres`` distribution (entry-point group ``ddlcore``)."""

from __future__ import annotations

import ddlcore


@ddlcore.hookimpl
def ddlcore_dialects():
    """The PostgreSQL 15 dialect (``dialect.PostgresDialect``)."""
    from .dialect import PostgresDialect

    return [PostgresDialect()]


@ddlcore.hookimpl
def ddlcore_spark_rules(dialect):
    """The PostgreSQL type mapping onto Spark (``spark_types.SPARK_RULES``; imports pyspark)."""
    if dialect.name != "postgres":
        return None
    from .spark_types import SPARK_RULES

    return SPARK_RULES


@ddlcore.hookimpl
def ddlcore_spark_options():
    """PostgreSQL's type-mapping options (``spark_options.OPTIONS``)."""
    from .spark_options import OPTIONS

    return OPTIONS


@ddlcore.hookimpl
def ddlcore_capture_commands():
    """``ddlcore capture postgres``: the logical-decoding capture (``capture_cli``)."""
    from .capture_cli import postgres_capture_command

    return [postgres_capture_command]


@ddlcore.hookimpl
def ddlcore_debezium_connectors():
    """Debezium's PostgreSQL connector for ``ddlcore capture debezium`` (``debezium_postgres``)."""
    from .debezium_postgres import PostgresConnector

    return [PostgresConnector()]
