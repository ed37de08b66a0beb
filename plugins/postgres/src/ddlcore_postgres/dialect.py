"""The PostgreSQL 15 dialect: settings and data (sqlglot style), no parsing code.

Manual references: PostgreSQL 15, 4.1 "Lexical Structure", Part VI "SQL Commands",
Appendix C "SQL Key Words", and the psql manual page ("Meta-Commands").
"""

from __future__ import annotations

from typing import Any

from ddlcore import Dialect, FilterRule, SplitRules, StatementFilter
from ddlcore.model import exact_key
from ddlcore.options import Option, names, text

__all__ = ["PostgresDialect", "OPTIONS", "STATEMENT_FILTER", "SPLIT_RULES"]

_TEMP = r"(?:(?:GLOBAL|LOCAL)\s+)?(?:TEMPORARY\s+|TEMP\s+|UNLOGGED\s+)?"

#: Which statements can change a table (parsed) and which cannot (skipped by their leading
#: words, without lexing).  Part VI "SQL Commands".
STATEMENT_FILTER = StatementFilter([
    FilterRule(r"CREATE\s+" + _TEMP + r"TABLE\b", True),
    FilterRule(r"CREATE\s+(?:UNIQUE\s+)?INDEX\b", True),
    FilterRule(r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP\s+|TEMPORARY\s+)?(?:RECURSIVE\s+)?VIEW\b", True),
    FilterRule(r"CREATE\s+MATERIALIZED\s+VIEW\b", True),
    FilterRule(r"CREATE\s+(?:SCHEMA|TYPE|DOMAIN)\b", True),
    FilterRule(r"CREATE\s+" + _TEMP + r"SEQUENCE\b", True),
    FilterRule(r"ALTER\s+(?:FOREIGN\s+)?TABLE\b", True),
    FilterRule(r"ALTER\s+(?:SCHEMA|TYPE|DOMAIN|SEQUENCE|INDEX|VIEW|MATERIALIZED\s+VIEW)\b", True),
    FilterRule(r"DROP\s+(?:FOREIGN\s+)?(?:TABLE|VIEW|MATERIALIZED\s+VIEW|INDEX|SEQUENCE|TYPE|DOMAIN|SCHEMA)\b", True),
    FilterRule(r"TRUNCATE\b", True),
    FilterRule(r"COMMENT\s+ON\s+(?:TABLE|COLUMN)\b", True),
    FilterRule(r"SET\s+(?:(?:SESSION|LOCAL)\s+)?search_path\b", True),
    FilterRule(r"RESET\s+search_path\b", True),
    FilterRule(r"SELECT\s+(?:pg_catalog\s*\.\s*)?set_config\s*\(\s*'search_path'", True),
    FilterRule(r"(?:BEGIN|START\s+TRANSACTION|COMMIT|END|ROLLBACK|ABORT|SAVEPOINT|RELEASE|PREPARE\s+TRANSACTION)\b",
               False, "transaction control"),
    FilterRule(r"(?:INSERT|UPDATE|DELETE|MERGE|SELECT|WITH|VALUES|TABLE|COPY|CALL|DO)\b", False, "data manipulation"),
    FilterRule(r"(?:GRANT|REVOKE|CREATE\s+(?:USER|ROLE|GROUP)|ALTER\s+(?:USER|ROLE|GROUP|DEFAULT\s+PRIVILEGES)|DROP\s+(?:USER|ROLE|GROUP|OWNED)|REASSIGN)\b",
               False, "privileges and roles"),
    FilterRule(r"(?:CREATE|ALTER|DROP)\s+(?:OR\s+REPLACE\s+)?(?:CONSTRAINT\s+)?(?:FUNCTION|PROCEDURE|AGGREGATE|TRIGGER|EVENT\s+TRIGGER|RULE|POLICY|OPERATOR|CAST|CONVERSION|LANGUAGE|TRANSFORM|ROUTINE)\b",
               False, "routine, trigger, rule or policy"),
    FilterRule(r"(?:CREATE|ALTER|DROP)\s+(?:EXTENSION|PUBLICATION|SUBSCRIPTION|SERVER|FOREIGN\s+DATA\s+WRAPPER|USER\s+MAPPING|TABLESPACE|DATABASE|COLLATION|STATISTICS|TEXT\s+SEARCH|ACCESS\s+METHOD|LARGE\s+OBJECT)\b",
               False, "object that holds no rows of a table"),
    FilterRule(r"COMMENT\s+ON\b", False, "comment on an object that is not a table or column"),
    FilterRule(r"SECURITY\s+LABEL\b", False, "security label"),
    FilterRule(r"(?:SET|RESET|SHOW|ANALYZE|ANALYSE|VACUUM|CLUSTER|REINDEX|REFRESH|CHECKPOINT|DISCARD|LISTEN|NOTIFY|UNLISTEN|LOAD|LOCK|EXPLAIN|FETCH|MOVE|CLOSE|DECLARE|EXECUTE|DEALLOCATE|PREPARE|IMPORT)\b",
               False, "administration or session statement"),
])

#: PostgreSQL 4.1: '' and E'' strings, "" names (no backquotes), -- and nested /* */ comments,
#: no #, dollar quoting; psql meta-commands and COPY data as pg_dump writes them
SPLIT_RULES = SplitRules(backslash_escapes=False, hash_comments=False, dash_comment_needs_space=False,
                         dollar_quotes=True, nested_block_comments=True, delimiter_command=False,
                         versioned_comments=False, backquoted_identifiers=False, escape_strings=True,
                         meta_commands=True, copy_data=True)


#: The parser options (``get_dialect("postgres").parser(**options)``, ``ddlcore parse -o NAME=VALUE``).
OPTIONS = (
    Option("search_path", ("public",), names("a comma-separated list of schema names (public,app)"),
           "the schemas unqualified names resolve through, in order; SET search_path in the DDL changes it"),
    Option("database", None, text("a database name"),
           "the database the statements run in: the database part of every table id"),
)


class PostgresDialect(Dialect):
    """PostgreSQL 15.

    Options (``get_dialect("postgres").parser(**options)``): the table ``OPTIONS`` (docs/postgres.md
    "Parser options"), checked and normalised by ``Dialect.check_options``; ``lenient`` records
    unparsable statements and goes on.

    Names (manual 4.1.1): unquoted names fold to lower case, quoted names are exact, so two
    columns may differ only in case (``column_key`` is exact).
    """

    name = "postgres"
    aliases = ("postgresql", "pg")
    description = "PostgreSQL 15 (ANTLR grammar grammars/postgres)"
    generated_package = "ddlcore_postgres._generated"
    grammar_name = "Postgres"
    entry_rule = "ddlStatement"
    visitor_class = "ddlcore_postgres.visitor:PostgresDdlVisitor"
    split_rules = SPLIT_RULES
    statement_filter = STATEMENT_FILTER
    column_key = staticmethod(exact_key)
    identifier_quotes = '"'
    fold_unquoted = "lower"
    uses_schemas = True
    options = OPTIONS

    def new_tables(self, **options: Any):
        """A registry whose ``search_path`` is the ``search_path`` option."""
        tables = super().new_tables(**options)
        sp = options.get("search_path", self.default_options["search_path"])
        if isinstance(sp, str):
            sp = [s.strip() for s in sp.split(",") if s.strip()]
        tables.search_path = tuple(sp)
        if options.get("database") is not None:
            tables.current_database = options["database"]
        return tables
