"""Robustness of the PostgreSQL dialect: malformed input gives ``DdlParseError`` (never another
exception, never a hang).  The time bound only catches a hang; it is generous on purpose."""

from __future__ import annotations

import time

import pytest

import ddlcore
from ddlcore.errors import DdlParseError

CASES = {
    "truncated CREATE TABLE": "CREATE TABLE t (a int, b varchar(",
    "unbalanced quote": "CREATE TABLE t (a text DEFAULT 'abc)",
    "unbalanced dollar quote": "CREATE TABLE t (a text DEFAULT $x$abc)",
    "unbalanced quoted name": 'CREATE TABLE "t (a int)',
    "10,000 nested parentheses": "CREATE TABLE t (a int DEFAULT " + "(" * 10000 + "1" + ")" * 10000 + ")",
    "10,000 open parentheses": "CREATE TABLE t (a int CHECK " + "(" * 10000 + ")",
    "binary garbage in a table statement": "CREATE TABLE t (" + bytes(range(256)).decode("latin-1") * 4,
    "ALTER without action": "ALTER TABLE t",
}


@pytest.mark.parametrize("name", list(CASES))
def test_malformed_input_is_a_ddl_parse_error(name):
    parser = ddlcore.get_dialect("postgres").parser()
    tables = parser.new_tables()
    parser.parse("CREATE TABLE t (x int)", tables)
    start = time.monotonic()
    with pytest.raises(DdlParseError):
        parser.parse(CASES[name], tables)
    assert time.monotonic() - start < 30, "parse hung"


def test_lenient_mode_keeps_the_bad_statement_and_goes_on():
    parser = ddlcore.get_dialect("postgres").parser(lenient=True)
    result = parser.parse("CREATE TABLE a (x int);\nCREATE TABLE b (y text DEFAULT 'oops);\n")
    statuses = [r.status for r in result]
    assert statuses[0] == "applied" and "failed" in statuses
    assert result.errors and result.errors[0].line is not None
