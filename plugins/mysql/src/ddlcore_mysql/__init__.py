"""ddlcore-mysql: the MySQL 8.0 / MariaDB 10.11 dialect of ddlcore.

Modules: ``dialect`` (settings and the statement filter), ``visitor`` (``MySqlDdlVisitor``:
parse tree → table model), ``types`` (type catalogue, default rendering), ``charsets``
(charsets and collations), ``literals`` (identifier and literal text); ``capture`` (the binlog
capture behind ``ddlcore capture mysql``, with ``binlog_values``, ``drift``, ``capture_cli``;
needs the ``capture`` extra).  The ANTLR parser in
``_generated`` is built from ``grammars/mysql`` at install time.
"""

from .dialect import MySqlDialect

__all__ = ["MySqlDialect"]
