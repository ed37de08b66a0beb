"""ddlcore: read the DDL a database writes into its change log, keep a model of every table as
it evolves, and interpret row-change events with the schema in force at their log position.

The stable Python API (see README, "Python API")::

    import ddlcore
    mysql = ddlcore.get_dialect("mysql")          # a Dialect, found through its plugin
    parser = mysql.parser()                        # a DdlParser (visitor_class=, **options)
    tables = ddlcore.Tables()
    result = parser.parse(ddl_text, tables, database="shop")
    table = tables.get("shop.orders")              # Table | None
    table.columns, table.primary_key, table.to_json()
"""

from .dialect import Dialect, FilterRule, StatementFilter
from .errors import DdlCoreError, DdlParseError, DialectNotFound, RowConversionError
from .model import (CheckConstraint, Column, Database, ForeignKey, Index, Table, TableChange,
                    TableEditor, TableId, Tables, View)
from .parsing import DdlParser, ParseResult, StatementResult
from .plugins import available_dialects, get_dialect, hookimpl, hookspec
from .splitter import SplitRules, Statement, split_statements
from .visitor import DdlVisitor

__version__ = "0.1.0"


def read_table(spark, out, table, current=False, as_of_seq=None):
    """One source table of a ``ddlcore run`` output as a Spark DataFrame in its latest schema
    (``ddlcore.sinks.read.read_table``: arguments, shapes and errors)."""
    from .sinks.read import read_table as read

    return read(spark, out, table, current=current, as_of_seq=as_of_seq)


__all__ = [
    "CheckConstraint", "Column", "Database", "DdlCoreError", "DdlParseError", "DdlParser",
    "DdlVisitor", "Dialect", "DialectNotFound", "FilterRule", "ForeignKey", "Index",
    "ParseResult", "RowConversionError", "SplitRules", "Statement", "StatementFilter",
    "StatementResult", "Table", "TableChange", "TableEditor", "TableId", "Tables", "View",
    "available_dialects", "get_dialect", "hookimpl", "hookspec", "read_table", "split_statements",
]
