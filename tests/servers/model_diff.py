"""The oracle's comparison: ddlcore's model against the server's catalog, both in the shape of
``ddlcore parse --format json`` (``catalog_model``), as readable differences (``diff_models``).

Expressions (generated columns, ``DEFAULT (expr)``) are kept by ddlcore as source text while
MariaDB re-prints them with its expression printer (backquotes, spaces, ``ucase`` for
``upper``, ...).  They are compared after ``normalize_expression`` (no quotes around
identifiers, no white space, lower case, no outer parentheses); everything else is compared
exactly.

Must not know: ddlcore's parser (this is the independent side of the oracle), pytest.
"""

from __future__ import annotations

import re

COMPARED_TABLE_FIELDS = ("primary_key", "default_character_set_name", "default_collation_name", "comment")
COMPARED_COLUMN_FIELDS = ("name", "ordinal_position", "data_type", "column_type", "nullable",
                          "column_default", "character_maximum_length", "numeric_precision",
                          "numeric_scale", "datetime_precision", "character_set_name",
                          "collation_name", "auto_increment", "generation_expression",
                          "enum_values", "set_values", "unsigned", "on_update", "comment")

# MariaDB's expression printer renames some functions (sql/item_*func*.cc func_name())
_PRINTER_NAMES = {"upper": "ucase", "lower": "lcase", "substring": "substr"}


def normalize_expression(text: str | None) -> str | None:
    """Expression text compared modulo printing: no identifier quotes, no white space, lower
    case, no outer parentheses, MariaDB's function spellings."""
    if text is None:
        return None
    t = text.replace("`", "").lower()
    t = re.sub(r"\s+", "", t)
    for a, b in _PRINTER_NAMES.items():
        t = re.sub(rf"\b{a}\(", f"{b}(", t)
    while t.startswith("(") and t.endswith(")") and _balanced(t[1:-1]):
        t = t[1:-1]
    return t


def _balanced(t: str) -> bool:
    depth = 0
    for ch in t:
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            return False
    return depth == 0


def _is_expression_default(value: str | None) -> bool:
    return value is not None and not re.fullmatch(r"'.*'|-?[\d.e]+|b'[01]+'|X'[0-9a-f]*'|current_timestamp\(\d*\)", value, re.S)


def diff_models(ours: dict, server: dict) -> list[str]:
    """Readable differences between two ``{"tables": [...]}`` models."""
    problems: list[str] = []
    by_id = lambda m: {(t["database"], t["name"]): t for t in m["tables"]}  # noqa: E731
    mine, theirs = by_id(ours), by_id(server)
    for key in sorted(set(theirs) - set(mine)):
        problems.append(f"{key[0]}.{key[1]}: table missing from ddlcore's model")
    for key in sorted(set(mine) - set(theirs)):
        problems.append(f"{key[0]}.{key[1]}: table in ddlcore's model but not on the server")
    for key in sorted(set(mine) & set(theirs)):
        a, b = mine[key], theirs[key]
        name = f"{key[0]}.{key[1]}"
        for f in COMPARED_TABLE_FIELDS:
            if a[f] != b[f]:
                problems.append(f"{name}: {f}: ddlcore {a[f]!r} != server {b[f]!r}")
        ca, cb = a["columns"], b["columns"]
        if [c["name"].lower() for c in ca] != [c["name"].lower() for c in cb]:
            problems.append(f"{name}: columns ddlcore {[c['name'] for c in ca]} != server {[c['name'] for c in cb]}")
            continue
        for x, y in zip(ca, cb):
            for f in COMPARED_COLUMN_FIELDS:
                va, vb = x[f], y[f]
                if f == "generation_expression" or (f == "column_default" and _is_expression_default(vb)):
                    va, vb = normalize_expression(va), normalize_expression(vb)
                if va != vb:
                    problems.append(f"{name}.{x['name']}: {f}: ddlcore {x[f]!r} != server {y[f]!r}")
    return problems
