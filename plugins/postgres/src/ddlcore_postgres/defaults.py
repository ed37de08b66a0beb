"""Column defaults as PostgreSQL 15 prints them (``pg_get_expr`` on ``pg_attrdef.adbin``, which
``information_schema.columns.column_default`` shows).

The server stores a default as a parsed expression coerced to the column's type and prints it
back in its own canonical form.  ddlcore keeps expressions as source text (no expression
grammar), so only the forms a schema uses again and again are canonicalised here, each as the
server prints it (checked against PostgreSQL 15 by tests/postgres):

=================================  ==========================================================
written                            printed
=================================  ==========================================================
``NULL``                           no default; ``NULL::<type>`` for a type with a modifier
``TRUE`` / ``false`` / ``'t'``     ``true`` / ``false`` (boolean column)
``42``, ``4.99``                   unchanged (``integer``; ``numeric`` with a point)
``-1``, ``-0.5``, ``2147483648``   ``'-1'::integer``, ``'-0.5'::numeric``, ``'2147483648'::bigint``
                                   (the constant's own type, ``number_type``)
``0::int``, ``5::numeric``         ``0`` (a cast to its own type is dropped), ``(5)::numeric``
``interval '1 day'``               ``'1 day'::interval`` (a typed literal)
``B'101'``, ``X'1F'``              ``'101'::"bit"``, ``'00011111'::"bit"``
``current_timestamp(3)``           ``CURRENT_TIMESTAMP(3)``
``now()::date``                    ``(now())::date``
``now() + interval '1 day'``       ``(now() + '1 day'::interval)`` (one arithmetic operator
                                   between self-typed operands)
``'abc'`` (string)                 ``'abc'::<type>``: ``character varying``, ``bpchar``,
                                   ``text``, an enum's name ...
``'abc'::varchar``                 the cast's type printed as the catalog names it
``nextval('s')``                   ``nextval('s'::regclass)``; a sequence in ``public``
                                   unqualified
``now()``, ``CURRENT_TIMESTAMP``   function calls as written, SQL value functions upper case
``100 + (200 - 199) * 2``          ``(100 + ((200 - 199) * 2))``: arithmetic on numeric
                                   constants (``ddlcore_postgres.constant_expr``)
``'2020-01-02T03:04:05.50+02'``    ``'2020-01-02 03:04:05.5'::timestamp without time zone``
                                   (``timestamp_out``: the offset ignored)
=================================  ==========================================================

Anything else is kept as written (white space collapsed).
"""

from __future__ import annotations

import re
from typing import Callable

from .constant_expr import print_arithmetic
from .types import ALIASES, BUILTIN, canonical_name

__all__ = ["render_default", "SQL_VALUE_FUNCTIONS", "cast_type_name", "string_value", "quote_literal"]

#: SQL-standard functions called without parentheses (manual 9.9.5), printed upper case
SQL_VALUE_FUNCTIONS = {
    "current_date": "CURRENT_DATE", "current_time": "CURRENT_TIME",
    "current_timestamp": "CURRENT_TIMESTAMP", "localtime": "LOCALTIME",
    "localtimestamp": "LOCALTIMESTAMP", "current_user": "CURRENT_USER",
    "session_user": "SESSION_USER", "current_role": "CURRENT_ROLE", "user": "CURRENT_USER",
    "current_catalog": "CURRENT_CATALOG", "current_schema": "CURRENT_SCHEMA",
}

_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_STRING = re.compile(r"'(?:''|[^'])*'")
_CAST = re.compile(r"\s*::\s*(.+?)\s*$", re.DOTALL)
_NEXTVAL = re.compile(r"nextval\s*\(\s*('(?:''|[^'])*')(?:\s*::\s*regclass)?\s*\)", re.IGNORECASE)
_NON_STANDARD_STRING = re.compile(r"[eE]'(?:\\.|''|[^'\\])*'|(\$(?:[A-Za-z_]\w*)?\$).*?\1|[uU]&'(?:''|[^'])*'", re.DOTALL)
_CALL = re.compile(r"([A-Za-z_][\w.]*)\s*\(\s*\)")


_NUMBER_CAST = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*::\s*([a-z][a-z0-9 ]*)", re.IGNORECASE)
_VALUE_FUNCTION_PRECISION = re.compile(r"(current_time|current_timestamp|localtime|localtimestamp)\s*\(\s*(\d+)\s*\)")
_BIT_STRING = re.compile(r"([bBxX])'([0-9A-Fa-f]*)'")
_TYPED_LITERAL = re.compile(r"([A-Za-z][A-Za-z0-9_ ]*?)\s*('(?:''|[^'])*')")
_CALL_CAST = re.compile(r"([A-Za-z_]\w*)\s*\((.*)\)\s*::\s*(.+)", re.DOTALL)

#: how ``get_const_expr`` (ruleutils.c) prints a constant of each numeric type: ``integer``
#: without decoration unless negative; ``numeric`` without decoration when it is positive and
#: has a point or exponent; every other one quoted with its type
_NUMBER_CONST_TYPES = {"int2": "smallint", "int4": "integer", "int8": "bigint", "numeric": "numeric",
                       "float4": "real", "float8": "double precision"}


def number_type(text: str) -> str:
    """The type the lexer gives a numeric constant (manual 4.1.2.6): ``int4`` when it fits
    32 bits, ``int8`` when it fits 64, else (or with a point or exponent) ``numeric``."""
    if text.lstrip("+-").isdigit():
        v = int(text)
        return "int4" if -2**31 <= v < 2**31 else "int8" if -2**63 <= v < 2**63 else "numeric"
    return "numeric"


def print_number(text: str, typname: str | None = None) -> str:
    """A numeric constant as ``pg_get_expr`` prints it, of type ``typname`` (default: as
    ``number_type`` types it); a negative number is a folded unary minus of the same type."""
    from decimal import Decimal

    neg = text.startswith("-")
    body = text.lstrip("+-")
    typname = typname or number_type(text)
    if typname in ("int2", "int4", "int8") and body.replace(".", "", 1).isdigit() and "." not in body:
        out = str(int(text))
    elif typname in ("float4", "float8"):
        out = repr(float(text)).removesuffix(".0") if "e" not in repr(float(text)) else text
    else:
        d = Decimal(text)
        out = f"{d:.{max(0, -d.as_tuple().exponent)}f}"
    if typname == "int4" and not neg:
        return out
    if typname == "numeric" and not neg and out[:1].isdigit() and ("." in out or "e" in out.lower()):
        return out
    return f"'{out}'::{_NUMBER_CONST_TYPES[typname]}"


def cast_type_name(column_type: str) -> str:
    """The type name a cast to a column of ``column_type`` (``format_type`` text) prints
    with: modifiers dropped, ``character`` as ``bpchar`` (``'a'::bpchar``)."""
    base = re.sub(r"\(\d+(?:,\d+)?\)", "", column_type)
    if base == "character":
        return "bpchar"
    return base


def _canonical_cast(text: str, resolve_type: Callable[[str], str] | None) -> str:
    t = " ".join(text.split()).lower() if not text.startswith('"') else text
    name = canonical_name(t.split("(")[0].strip()) if "(" not in t or t.startswith("float") else None
    if name is None and "(" in t:
        name = canonical_name(t.split("(")[0].strip())
        if name is not None:
            return BUILTIN[name].display if name != "bpchar" else "bpchar"
    if name is not None:
        info = BUILTIN[name]
        if name == "bpchar":
            return "bpchar"
        return info.display + info.zone if info.kind == "time" else info.display
    if resolve_type is not None:
        return resolve_type(text)
    return text


def render_default(text: str, column_type: str, data_type: str, *,
                   resolve_type: Callable[[str], str] | None = None,
                   sequence_name: Callable[[str], str] | None = None) -> str | None:
    """``text`` (a DEFAULT expression's source) as ``pg_get_expr`` prints it for a column of
    ``column_type`` (``format_type`` text) and ``data_type``; ``None`` for ``NULL``.

    ``resolve_type``: prints a user type name as the catalog does (search_path);
    ``sequence_name``: prints a sequence's name inside ``nextval('...'::regclass)``."""
    expr = " ".join(text.split()) if not _NON_STANDARD_STRING.match(text.strip()) else text.strip()
    m0 = _NON_STANDARD_STRING.match(expr)
    if m0:  # E'', $$ and U&'' constants print as standard strings
        expr = quote_literal(string_value(m0.group(0))) + " ".join(expr[m0.end():].split())
    while expr.startswith("(") and expr.endswith(")") and _balanced(expr[1:-1]):
        expr = expr[1:-1].strip()
    low = expr.lower()
    if low == "null":
        # a NULL needing no length coercion is a null constant, which the server does not
        # store; with a type modifier (varchar(n), numeric(p,s)) the coercion is stored
        return f"NULL::{cast_type_name(column_type)}" if re.search(r"\(\d", column_type) else None
    if re.fullmatch(r"null\s*::.*", low, re.DOTALL):
        return f"NULL::{_canonical_cast(expr.split('::', 1)[1], resolve_type)}"
    if data_type == "boolean" and low in ("true", "false", "'t'", "'f'", "'true'", "'false'", "'y'", "'n'",
                                          "'yes'", "'no'", "'on'", "'off'", "'1'", "'0'"):
        return "true" if low.strip("'") in ("true", "t", "y", "yes", "on", "1") else "false"
    if low in ("true", "false"):
        return low
    if _NUMBER.fullmatch(expr):
        return print_number(expr)
    m = _NUMBER_CAST.fullmatch(expr)
    if m and canonical_name(" ".join(m.group(2).lower().split())) in _NUMBER_CONST_TYPES:
        # a cast to the constant's own type is dropped; any other is an explicit cast call
        target, const = canonical_name(" ".join(m.group(2).lower().split())), print_number(m.group(1))
        if target == number_type(m.group(1)):
            return const
        return f"({const})::{_NUMBER_CONST_TYPES[target]}"
    if low in SQL_VALUE_FUNCTIONS:
        return SQL_VALUE_FUNCTIONS[low]
    m = _VALUE_FUNCTION_PRECISION.fullmatch(low)
    if m:  # CURRENT_TIMESTAMP(3)
        return f"{SQL_VALUE_FUNCTIONS[m.group(1)]}({int(m.group(2))})"
    m = _BIT_STRING.fullmatch(expr)
    if m:  # B'101', X'1F': bit-string constants (4.1.2.5) are bit constants
        bits = m.group(2) if m.group(1) in "bB" else "".join(f"{int(h, 16):04b}" for h in m.group(2))
        return f"'{bits}'::\"bit\""
    m = _TYPED_LITERAL.fullmatch(expr)
    if m and canonical_name(" ".join(m.group(1).lower().split())) is not None:
        # type 'string' (4.2.9): a constant of that type, printed as 'string'::type
        return f"{m.group(2)}::{_canonical_cast(m.group(1), resolve_type)}"
    m = _CALL_CAST.fullmatch(expr)
    if m and _balanced(m.group(2)) and "::" not in m.group(3):
        # a cast of a function call prints the call in parentheses: (now())::date
        return f"({m.group(1).lower()}({m.group(2)}))::{_canonical_cast(m.group(3), resolve_type)}"
    m = _NEXTVAL.fullmatch(expr)
    if m:
        seq = m.group(1)[1:-1].replace("''", "'")
        if sequence_name is not None:
            seq = sequence_name(seq)
        return "nextval('" + seq.replace("'", "''") + "'::regclass)"
    m = _STRING.match(expr)
    if m and m.end() == len(expr):
        if data_type == "timestamp without time zone":
            expr = timestamp_constant(expr)
        return f"{expr}::{cast_type_name(column_type)}"
    if m:
        cast = _CAST.fullmatch(expr, m.end())
        if cast and "::" not in cast.group(1):
            return f"{expr[:m.end()]}::{_canonical_cast(cast.group(1), resolve_type)}"
    m = _CALL.fullmatch(expr)
    if m:
        return m.group(1).lower() + "()" if "." not in m.group(1) else expr
    arithmetic = print_arithmetic(expr, number_type, print_number)
    if arithmetic is not None:
        return arithmetic
    split = _single_operator(expr)
    if split is not None:
        # one arithmetic operator between two self-typed operands: pg_get_expr parenthesises
        # the operation and prints each operand as it prints it alone: (now() + '1 day'::interval)
        left, op, right = split
        sides = [render_default(x, "", "", resolve_type=resolve_type, sequence_name=sequence_name)
                 for x in (left, right)]
        return f"({sides[0]} {op} {sides[1]})"
    return expr


#: operators whose operands' types never depend on the column (manual 9.3)
_ARITHMETIC = ("+", "-", "*", "/", "%")


def _single_operator(expr: str) -> tuple[str, str, str] | None:
    """``(left, op, right)`` when ``expr`` is one arithmetic operator (written with spaces
    around it) between two operands that each type themselves (a number, a call, a typed
    literal, a cast; not a bare string, whose type the operator would decide); else ``None``."""
    hits = []
    depth, quoted = 0, False
    for i, ch in enumerate(expr):
        if ch == "'":
            quoted = not quoted
        elif not quoted:
            depth += (ch == "(") - (ch == ")")
            if depth == 0 and ch in _ARITHMETIC and expr[i - 1:i] == " " and expr[i + 1:i + 2] == " ":
                hits.append(i)
    if len(hits) != 1:
        return None
    i = hits[0]
    left, right = expr[:i].strip(), expr[i + 1:].strip()
    for side in (left, right):
        if not side or side.startswith("'") and "::" not in side or side.lower() == "null":
            return None
        if not (_NUMBER.fullmatch(side) or _CALL.fullmatch(side) or side.lower() in SQL_VALUE_FUNCTIONS
                or _TYPED_LITERAL.fullmatch(side) or _CALL_CAST.fullmatch(side)
                or (_STRING.match(side) and _CAST.fullmatch(side, _STRING.match(side).end()))):
            return None
        if _TYPED_LITERAL.fullmatch(side) and canonical_name(" ".join(side.split("'")[0].lower().split())) is None:
            return None
    return left, expr[i], right


_TIMESTAMP_TEXT = re.compile(r"'(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d+))?"
                             r"\s*(?:Z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)?'", re.IGNORECASE)


def timestamp_constant(literal: str) -> str:
    """A quoted ISO timestamp for a ``timestamp without time zone`` column as ``timestamp_out``
    prints the constant (DateStyle ISO, manual 8.5.1.3): a time zone in the text is ignored
    (8.5.1.3: "PostgreSQL silently ignores any time zone indication"), the fraction is rounded
    to microseconds and printed without trailing zeros.  The column's precision is a separate
    coercion ``pg_get_expr`` does not show: ``'03:04:05.6'`` stays for ``timestamp(0)``.  Any
    other literal is returned unchanged."""
    import datetime as dt

    m = _TIMESTAMP_TEXT.fullmatch(literal)
    if m is None:
        return literal
    try:
        value = dt.datetime.fromisoformat(f"{m.group(1)} {m.group(2)}")
    except ValueError:
        return literal
    digits = m.group(3) or ""
    micros = int(digits[:6].ljust(6, "0")) + (len(digits) > 6 and digits[6] >= "5")
    text = (value + dt.timedelta(microseconds=micros)).isoformat(" ")
    return "'" + (text.rstrip("0") if "." in text else text) + "'"


def string_value(text: str) -> str:
    """The value of a string constant (manual 4.1.2): ``'...'`` with ``''``, ``E'...'`` with
    backslash escapes (4.1.2.2), ``U&'...'`` (4.1.2.3), ``$tag$...$tag$`` (4.1.2.4), ``N'...'``."""
    if text.startswith("$"):
        tag_end = text.index("$", 1) + 1
        return text[tag_end:len(text) - tag_end]
    if text[:1] in "eE" and text[1:2] == "'":
        return _c_escapes(text[2:-1])
    if text[:2].upper() == "U&":
        body = text[3:-1].replace("''", "'")
        return re.sub(r"\\(\+[0-9A-Fa-f]{6}|[0-9A-Fa-f]{4})", lambda m: chr(int(m.group(1).lstrip("+"), 16)), body)
    if text[:1] in "nN" and text[1:2] == "'":
        text = text[1:]
    return text[1:-1].replace("''", "'")


_C_ESCAPE = re.compile(r"\\(?:([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))|''", re.DOTALL)
_C_SIMPLE = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _c_escapes(body: str) -> str:
    def one(m: re.Match) -> str:
        if m.group(0) == "''":
            return "'"
        octal, hx, u4, u8, ch = m.groups()
        if octal:
            return chr(int(octal, 8))
        if hx:
            return chr(int(hx, 16))
        if u4 or u8:
            return chr(int(u4 or u8, 16))
        return _C_SIMPLE.get(ch, ch)

    return _C_ESCAPE.sub(one, body)


def quote_literal(value: str) -> str:
    """``quote_literal``: ``'it''s'`` (a backslash makes it an ``E''`` string)."""
    if "\\" in value:
        return "E'" + value.replace("\\", "\\\\").replace("'", "''") + "'"
    return "'" + value.replace("'", "''") + "'"


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0
