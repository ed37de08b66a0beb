"""The MySQL / MariaDB dialect: settings and data (sqlglot style), no parsing code.

Manual references: MariaDB 10.11 and MySQL 8.0 reference manuals; each setting names its
section.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from ddlcore import Dialect, FilterRule, SplitRules, StatementFilter
from ddlcore.model import TableId, casefold_key, lower_table_key
from ddlcore.options import Option, OptionError, choice, flag, integer, text

from . import charsets

__all__ = ["MySqlDialect", "OPTIONS", "STATEMENT_FILTER", "SET_STATEMENT_PREFIX", "strip_set_statement",
           "parse_server_version"]

_DEFINER = r"(?:(?!\b(?:TRIGGER|PROCEDURE|FUNCTION|EVENT|TABLE)\b)[^;])*?"
_SESSION = r"(?:(?:SESSION|LOCAL)\s+|@@(?:SESSION\.|LOCAL\.)?)?"

#: Which statements can change a table (parsed) and which cannot (skipped without lexing).
#: MySQL manual 15.1 "Data Definition Statements" and 15.7.6.1 "SET Syntax for Variable
#: Assignment" (charset variables: 12.4 "Connection Character Sets", 12.3.2 server charset).
STATEMENT_FILTER = StatementFilter([
    FilterRule(r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMPORARY\s+)?TABLE\b", True),
    FilterRule(r"CREATE\s+(?:DATABASE|SCHEMA)\b", True),
    FilterRule(r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:ONLINE\s+|OFFLINE\s+)?(?:UNIQUE\s+|FULLTEXT\s+|SPATIAL\s+)?INDEX\b", True),
    FilterRule(r"CREATE\s+(?:OR\s+REPLACE\s+)?" + _DEFINER + r"\bVIEW\b", True),
    FilterRule(r"ALTER\s+(?:ONLINE\s+)?(?:IGNORE\s+)?TABLE\b", True),
    # MariaDB SET STATEMENT var=value FOR <statement>: decided by the statement after FOR
    FilterRule(r"SET\s+STATEMENT\b[^;]*?\bFOR\s+(?:CREATE|ALTER|DROP|RENAME|TRUNCATE)\b", True),
    FilterRule(r"ALTER\s+(?:DATABASE|SCHEMA)\b", True),
    FilterRule(r"ALTER\s+" + _DEFINER + r"\bVIEW\b", True),
    FilterRule(r"DROP\s+(?:TEMPORARY\s+)?TABLES?\b", True),
    FilterRule(r"DROP\s+(?:DATABASE|SCHEMA)\b", True),
    FilterRule(r"DROP\s+(?:ONLINE\s+|OFFLINE\s+)?INDEX\b", True),
    FilterRule(r"DROP\s+VIEW\b", True),
    FilterRule(r"RENAME\s+TABLES?\b", True),
    FilterRule(r"TRUNCATE\b", True),
    FilterRule(r"USE\b", True),
    FilterRule(r"SET\s+(?:NAMES|CHARACTER\s+SET|CHARSET)\b", True),
    FilterRule(r"SET\s+" + _SESSION + r"(?:character_set_server|collation_server|character_set_database|collation_database)\b", True),
    FilterRule(r"SET\s+" + _SESSION + r"(?:character_set_\w+|collation_\w+)\b", True),
    FilterRule(r"(?:BEGIN|START\s+TRANSACTION|COMMIT|ROLLBACK|XA)\b", False, "transaction control"),
    FilterRule(r"(?:INSERT|REPLACE|UPDATE|DELETE|SELECT|WITH|LOAD|CALL|DO|HANDLER|VALUES|TABLE)\b", False, "data manipulation"),
    FilterRule(r"(?:GRANT|REVOKE|CREATE\s+(?:USER|ROLE)|DROP\s+(?:USER|ROLE)|ALTER\s+USER|RENAME\s+USER|SET\s+(?:PASSWORD|ROLE|DEFAULT\s+ROLE))\b", False, "account management"),
    FilterRule(r"(?:CREATE|ALTER|DROP)\s+(?:OR\s+REPLACE\s+)?" + _DEFINER + r"\b(?:TRIGGER|PROCEDURE|FUNCTION|EVENT)\b", False, "stored program"),
    FilterRule(r"(?:CREATE|ALTER|DROP)\s+(?:OR\s+REPLACE\s+)?(?:SEQUENCE|SERVER|TABLESPACE|LOGFILE|SPATIAL\s+REFERENCE|RESOURCE\s+GROUP|PACKAGE|PLACEMENT\s+POLICY)\b", False, "object that holds no rows of a table"),
    # TiDB statements that change no table definition (TiDB manual, "SQL Statement Overview":
    # ADMIN, SPLIT REGION, bindings)
    FilterRule(r"(?:ADMIN|SPLIT|(?:CREATE|DROP)\s+(?:GLOBAL\s+|SESSION\s+)?BINDING)\b", False, "TiDB administration statement"),
    FilterRule(r"(?:LOCK|UNLOCK|FLUSH|ANALYZE|OPTIMIZE|REPAIR|CHECK|CHECKSUM|SHOW|DESCRIBE|DESC|EXPLAIN|HELP|KILL|RESET|PURGE|CHANGE|INSTALL|UNINSTALL|SET|SAVEPOINT|RELEASE|PREPARE|EXECUTE|DEALLOCATE|SIGNAL|RESIGNAL|GET|SOURCE|STOP|START|BINLOG|CACHE|SHUTDOWN|RESTART|CLONE|IMPORT)\b", False, "administration or session statement"),
])


#: MariaDB ``SET STATEMENT var=value [, ...] FOR`` in front of a statement (MariaDB KB "SET STATEMENT")
SET_STATEMENT_PREFIX = re.compile(r"\s*SET\s+STATEMENT\b[^;]*?\bFOR\s+", re.IGNORECASE | re.DOTALL)


def strip_set_statement(text: str) -> str:
    """``text`` without a leading MariaDB ``SET STATEMENT var=value, ... FOR``."""
    m = SET_STATEMENT_PREFIX.match(text)
    return text[m.end():] if m else text


def parse_server_version(value: str) -> int | None:
    """``"10.11.6"``, ``"8.0.36"`` or what ``SELECT VERSION()`` returns (``"10.11.6-MariaDB-0+deb12u1"``)
    → ``MMmmpp`` (101106, 80036), the number ``/*!NNNNN */`` comments compare with (MySQL manual
    11.7 "Comments"); ``None`` for other text."""
    m = re.fullmatch(r"(\d{1,2})\.(\d{1,2})(?:\.(\d{1,2}))?(?:[-+~].*)?", value.strip())
    if m is None:
        return None
    return int(m.group(1)) * 10000 + int(m.group(2)) * 100 + int(m.group(3) or 0)


def _charset(name: str) -> str:
    cs = charsets.normalize_charset(name)
    if cs not in charsets.CHARSETS:
        raise KeyError(name)
    return cs


def _collation(name: str) -> str:
    coll = charsets.normalize_collation(name)
    if coll != "binary" and not any(coll.startswith(cs + "_") for cs in charsets.CHARSETS):
        raise KeyError(name)
    return coll


#: The parser options (``get_dialect("mysql").parser(**options)``, ``ddlcore parse -o NAME=VALUE``):
#: the server settings that change how DDL is read or what ``information_schema`` shows.
OPTIONS = (
    Option("flavor", "mariadb", choice("mariadb", "mysql", "tidb"),
           "the server: mariadb renders types as MariaDB 10.11's information_schema.COLUMNS, mysql as "
           "MySQL 8.0's (json type, no integer display widths, utf8mb4_0900_ai_ci), tidb as TiDB v8 "
           "(case-insensitive: MySQL reads as mysql)"),
    Option("character_set_server", "utf8mb4",
           text("a character set the server knows (utf8mb4, latin1, utf8, ...)", _charset),
           "server default character set, inherited by databases created without one (aliases such as "
           "utf8 are resolved)"),
    Option("collation_server", None, text("a collation of a known character set (utf8mb4_general_ci, ...)",
                                          _collation),
           "server default collation (default: character_set_server's default collation); must belong to "
           "character_set_server"),
    Option("lower_case_table_names", 0, choice(0, 1, 2),
           "0: table names case-sensitive (Linux); 1 or 2: compared in lower case (manual "
           "\"Identifier Case Sensitivity\")"),
    Option("ansi_quotes", False, flag, "sql_mode ANSI_QUOTES: \"x\" is an identifier, not a string"),
    Option("no_backslash_escapes", False, flag, "sql_mode NO_BACKSLASH_ESCAPES: \\ is an ordinary character"),
    Option("server_version", None,
           integer(10000, 999999, parse=parse_server_version,
                   accepts="a version as MMmmpp (101100, 80036) or M.m.p (10.11.6, 8.0.36-log)"),
           "which /*!NNNNN ... */ comments run (default 101100 for mariadb, 80099 for mysql and tidb)"),
)


class MySqlDialect(Dialect):
    """MySQL 8.0 and MariaDB 10.11.

    Options (``get_dialect("mysql").parser(**options)``): the table ``OPTIONS`` (name, default,
    what it accepts, meaning; docs/mysql.md "Parser options"), checked and normalised by
    ``Dialect.check_options``; ``lenient`` records unparsable statements and goes on.
    """

    name = "mysql"
    aliases = ("mariadb",)
    description = "MySQL 8.0 / MariaDB 10.11 (ANTLR grammar grammars/mysql)"
    generated_package = "ddlcore_mysql._generated"
    grammar_name = "MySql"
    entry_rule = "ddlStatement"
    visitor_class = "ddlcore_mysql.visitor:MySqlDdlVisitor"
    split_rules = SplitRules()
    statement_filter = STATEMENT_FILTER
    column_key = staticmethod(casefold_key)  # column names are case-insensitive (manual 11.2.3)
    options = OPTIONS

    def check_option_set(self, options: Mapping[str, Any]) -> None:
        """``collation_server`` must be a collation of ``character_set_server`` (the server sets
        both together: MariaDB KB "Setting Character Sets and Collations")."""
        coll = options.get("collation_server")
        if coll is not None:
            cs = charsets.normalize_charset(options.get("character_set_server") or "utf8mb4")
            if charsets.collation_charset(coll) != cs:
                raise OptionError("collation_server", coll, f"a collation of character_set_server {cs} "
                                  f"({cs}_...)", "mysql parser")

    def statement_targets(self, text: str, tables: Any) -> list[TableId] | None:
        """As ``Dialect.statement_targets``, seeing through MariaDB's ``SET STATEMENT ... FOR``."""
        return super().statement_targets(strip_set_statement(text), tables)

    def split_rules_for(self, options: Mapping[str, Any]) -> SplitRules:
        """Splitting follows ``no_backslash_escapes``, ``flavor`` and ``server_version``."""
        flavor = options.get("flavor", "mariadb")
        mariadb = flavor not in ("mysql", "tidb")
        version = options.get("server_version") or (101100 if mariadb else 80099)
        return SplitRules(backslash_escapes=not options.get("no_backslash_escapes", False),
                          server_version=version, mariadb=mariadb, tidb=flavor == "tidb")

    def table_key(self, options: Mapping[str, Any]):
        """``lower_case_table_names`` 1 or 2: table and database names compare in lower case
        (manual 11.2.3 "Identifier Case Sensitivity")."""
        if int(options.get("lower_case_table_names") or 0) in (1, 2):
            return lower_table_key
        return super().table_key(options)
