"""Bad input gives DdlParseError (or a lenient record) quickly; never another exception,
never a hang, never a RecursionError (docs/architecture.md, "From DDL text to tables")."""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import given, settings, strategies as st

import ddlcore
from ddlcore import DdlParseError

GOOD = ("CREATE TABLE t (id int unsigned NOT NULL AUTO_INCREMENT, name varchar(20) DEFAULT 'x', "
        "status enum('a','b') NOT NULL, PRIMARY KEY (id), KEY ix (name)) ENGINE=InnoDB DEFAULT CHARSET=latin1")


@pytest.fixture(scope="module")
def parser():
    return ddlcore.get_dialect("mysql").parser()


def outcome(parser, text: str, limit: float = 15.0):
    """Parse ``text``; returns "ok" or the DdlParseError; fails on any other exception or if
    it takes longer than ``limit`` seconds (a hang guard with a generous margin for a loaded
    machine, not a speed check: speed is benchmarks/parse_corpus.py)."""
    t0 = time.perf_counter()
    try:
        parser.parse(text, parser.new_tables(), database="d")
        result = "ok"
    except DdlParseError as err:
        result = err
    took = time.perf_counter() - t0
    assert took < limit, f"took {took:.2f}s: {text[:80]!r}"
    return result


@pytest.mark.parametrize("cut", [14, 16, 30, 60, 90, len(GOOD) - 1])
def test_truncated_statement(parser, cut):
    err = outcome(parser, GOOD[:cut])
    assert isinstance(err, DdlParseError)
    assert err.line == 1 and err.column is not None and err.statement


def test_unbalanced_parentheses_and_quotes(parser):
    for text in ("CREATE TABLE t (a int", "CREATE TABLE t (a int))", "CREATE TABLE t (a varchar(3) default 'x)",
                 "CREATE TABLE `t (a int)", 'CREATE TABLE t (a int comment "x)'):
        assert isinstance(outcome(parser, text), DdlParseError), text


def test_ten_thousand_nested_parentheses(parser):
    text = "CREATE TABLE t (a int DEFAULT " + "(" * 10000 + "1" + ")" * 10000 + ")"
    assert isinstance(outcome(parser, text), DdlParseError)
    text = "CREATE TABLE t (a int CHECK " + "(" * 10000 + ")"
    assert isinstance(outcome(parser, text), DdlParseError)


def test_binary_garbage(parser):
    rng = random.Random(7)
    for _ in range(20):
        junk = bytes(rng.randrange(256) for _ in range(300)).decode("latin-1")
        outcome(parser, "CREATE TABLE " + junk)
        outcome(parser, "ALTER TABLE t " + junk)


def test_lenient_mode_records_and_continues(parser):
    lenient = ddlcore.get_dialect("mysql").parser(lenient=True)
    tables = lenient.new_tables()
    res = lenient.parse("CREATE TABLE a (x int); CREATE TABLE b (x int,; CREATE TABLE c (y int)", tables, database="d")
    assert [s.status for s in res] == ["applied", "failed", "applied"]
    assert tables.get("d.a") and tables.get("d.c") and not tables.get("d.b")


def test_error_positions_point_into_the_whole_input(parser):
    with pytest.raises(DdlParseError) as info:
        parser.parse("CREATE TABLE a (x int);\n\n  CREATE TABLE b (x int,, y int)", parser.new_tables(), database="d")
    assert info.value.line == 3
    assert info.value.statement.startswith("CREATE TABLE b")
    assert info.value.statement_index == 1


_MUTATIONS = st.lists(st.tuples(st.integers(0, len(GOOD)), st.integers(0, 4),
                                st.sampled_from(["(", ")", "'", "`", ",", " ", "x", "DEFAULT", "--", "/*", "\\", ";", "\x00"])),
                      min_size=1, max_size=6)


@settings(max_examples=150)
@given(_MUTATIONS)
def test_mutated_ddl_gives_result_or_parse_error(mutations):
    parser = ddlcore.get_dialect("mysql").parser()
    text = GOOD
    for pos, delete, insert in mutations:
        pos = min(pos, len(text))
        text = text[:pos] + insert + text[pos + delete:]
    outcome(parser, text, limit=30.0)
