"""Arithmetic on numeric constants as ``pg_get_expr`` prints it (``get_rule_expr`` in
src/backend/utils/adt/ruleutils.c): every operation in parentheses, operands as
``get_const_expr`` prints them, and the implicit cast of an integer operand to ``numeric``
shown as ``(operand)::numeric``.  PostgreSQL folds no constants in a default but a unary minus
written before a number (``doNegate`` in gram.y: ``-1`` is one constant, ``- (1 + 2)`` is not).

========================  =====================================
written                   printed
========================  =====================================
``100 + (200 - 199) * 2`` ``(100 + ((200 - 199) * 2))``
``1 + -2``                ``(1 + '-2'::integer)``
``- (1 + 2)``, ``+1 + 2`` ``(- (1 + 2))``, ``((+ 1) + 2)``
``1.5 * (1 + 2)``         ``(1.5 * ((1 + 2))::numeric)``
``1 + 3000000000``        ``(1 + '3000000000'::bigint)`` (``int4 + int8`` needs no cast)
========================  =====================================

Checked against PostgreSQL 15 by tests/postgres/test_catalog_fidelity.py.
"""

from __future__ import annotations

import re
from typing import Callable

__all__ = ["print_arithmetic"]

_TOKEN = re.compile(r"\s*(?:((?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)|([-+*/%()]))")
_ADDITIVE, _MULTIPLICATIVE = ("+", "-"), ("*", "/", "%")

#: a parsed node: ("num", text) | ("unary", op, node) | ("bin", op, left, right)
Node = tuple


def _tokens(text: str) -> list[str] | None:
    out, at = [], 0
    while at < len(text.rstrip()):
        m = _TOKEN.match(text, at)
        if m is None:
            return None
        out.append(m.group(1) or m.group(2))
        at = m.end()
    return out


class _Parser:
    """Precedence climbing over ``+ -`` < ``* / %`` < unary ``+ -`` (manual 4.1.6, Table 4.2)."""

    def __init__(self, tokens: list[str]):
        self.tokens, self.at = tokens, 0

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> str:
        self.at += 1
        return self.tokens[self.at - 1]

    def binary(self, ops: tuple[str, ...], operand: Callable[[], Node]) -> Node:
        left = operand()
        while self.peek() in ops:
            op = self.take()
            left = ("bin", op, left, operand())
        return left

    def expr(self) -> Node:
        return self.binary(_ADDITIVE, self.term)

    def term(self) -> Node:
        return self.binary(_MULTIPLICATIVE, self.factor)

    def factor(self) -> Node:
        tok = self.take() if self.peek() is not None else None
        if tok in ("-", "+"):
            nxt = self.peek()
            if tok == "-" and nxt is not None and (nxt[0].isdigit() or nxt[0] == "."):
                return ("num", "-" + self.take())
            return ("unary", tok, self.factor())
        if tok == "(":
            node = self.expr()
            if self.peek() != ")":
                raise ValueError("unbalanced")
            self.take()
            return node
        if tok is None or not (tok[0].isdigit() or tok[0] == "."):
            raise ValueError("not a number")
        return ("num", tok)


def _type(node: Node, number_type: Callable[[str], str]) -> str:
    if node[0] == "num":
        return number_type(node[1])
    if node[0] == "unary":
        return _type(node[2], number_type)
    kinds = {_type(node[2], number_type), _type(node[3], number_type)}
    return "numeric" if "numeric" in kinds else "int8" if "int8" in kinds else "int4"


def _show(node: Node, number_type: Callable[[str], str], print_number: Callable[[str], str]) -> str:
    if node[0] == "num":
        return print_number(node[1])
    if node[0] == "unary":
        return f"({node[1]} {_show(node[2], number_type, print_number)})"
    _, op, left, right = node
    numeric = _type(node, number_type) == "numeric"
    sides = []
    for side in (left, right):
        text = _show(side, number_type, print_number)
        sides.append(f"({text})::numeric" if numeric and _type(side, number_type) != "numeric" else text)
    return f"({sides[0]} {op} {sides[1]})"


def print_arithmetic(text: str, number_type: Callable[[str], str], print_number: Callable[[str], str]) -> str | None:
    """``text`` as ``pg_get_expr`` prints it when it is arithmetic (``+ - * / %``, unary
    ``+ -``, parentheses) on numeric constants with at least one operator; else ``None``.
    ``number_type`` types a constant (``int4``, ``int8``, ``numeric``) and ``print_number``
    prints one (``ddlcore_postgres.defaults``)."""
    tokens = _tokens(text)
    if not tokens or not any(t in "+-*/%" for t in tokens):
        return None
    parser = _Parser(tokens)
    try:
        node = parser.expr()
    except (ValueError, IndexError):
        return None
    if parser.peek() is not None or node[0] == "num":
        return None
    return _show(node, number_type, print_number)
