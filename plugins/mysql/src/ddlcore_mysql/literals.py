"""MySQL identifier and literal text → Python values.

Sources: MySQL 8.0 manual 11.2 "Schema Object Names" (backquotes, doubled quote characters,
``ANSI_QUOTES``) and 11.1.1 "String Literals" (Table 11.1, special character escape
sequences; ``NO_BACKSLASH_ESCAPES``), 11.1.4 "Hexadecimal Literals", 11.1.5 "Bit-Value
Literals".
"""

from __future__ import annotations

import re

__all__ = ["unquote_identifier", "unquote_string", "hex_literal", "bit_literal", "strip_introducer"]

_ESCAPES = {"0": "\0", "'": "'", '"': '"', "b": "\b", "n": "\n", "r": "\r", "t": "\t",
            "Z": "\x1a", "\\": "\\", "%": "\\%", "_": "\\_"}
_ESCAPE_RX = re.compile(r"\\(.)", re.DOTALL)


def unquote_identifier(text: str) -> str:
    """`` `a``b` `` → ``a`b``; ``"a""b"`` → ``a"b`` (ANSI_QUOTES); bare names unchanged."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "`\"":
        q = text[0]
        return text[1:-1].replace(q + q, q)
    return text


def unquote_string(text: str, backslash_escapes: bool = True) -> str:
    """A quoted string literal (``'...'`` or ``"..."``) → its value: doubled quotes and, unless
    ``NO_BACKSLASH_ESCAPES``, the escape sequences of manual Table 11.1 (``\\%`` and ``\\_``
    keep their backslash; any other ``\\x`` is ``x``)."""
    q = text[0]
    body = text[1:-1]
    if backslash_escapes and "\\" in body:
        out = []
        pos = 0
        for m in _ESCAPE_RX.finditer(body):
            out.append(body[pos:m.start()].replace(q + q, q))
            out.append(_ESCAPES.get(m.group(1), m.group(1)))
            pos = m.end()
        out.append(body[pos:].replace(q + q, q))
        return "".join(out)
    return body.replace(q + q, q)


def strip_introducer(text: str) -> tuple[str | None, str]:
    """``_utf8mb4'x'`` → (``"utf8mb4"``, ``"'x'"``); ``N'x'`` → (``"utf8mb3"``, ``"'x'"``);
    a literal without introducer → (``None``, text)."""
    if text[:1] in ("N", "n") and text[1:2] == "'":
        return "utf8mb3", text[1:]
    if text.startswith("_"):
        m = re.match(r"_([A-Za-z0-9]+)\s*", text)
        if m:
            return m.group(1).lower(), text[m.end():]
    return None, text


def hex_literal(text: str) -> bytes:
    """``X'4142'`` or ``0x4142`` → ``b"AB"`` (an odd digit count is left-padded with 0)."""
    if text[:2].lower() == "0x":
        digits = text[2:]
    else:
        digits = text[2:-1]
    if len(digits) % 2:
        digits = "0" + digits
    return bytes.fromhex(digits)


def bit_literal(text: str) -> int:
    """``B'101'`` or ``0b101`` → 5."""
    digits = text[2:] if text[:2].lower() == "0b" else text[2:-1]
    return int(digits or "0", 2)
