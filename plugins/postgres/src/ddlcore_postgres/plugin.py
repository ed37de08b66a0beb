"""Entry point of the ``ddlcore-postgres`` distribution (entry-point group ``ddlcore``)."""

from __future__ import annotations

import ddlcore


@ddlcore.hookimpl
def ddlcore_dialects():
    """The PostgreSQL 15 dialect (``dialect.PostgresDialect``)."""
    from .dialect import PostgresDialect

    return [PostgresDialect()]


@ddlcore.hookimpl
def ddlcore_capture_commands():
    """``ddlcore capture postgres``: the logical-decoding capture (``capture_cli``)."""
    from .capture_cli import postgres_capture_command

    return [postgres_capture_command]
