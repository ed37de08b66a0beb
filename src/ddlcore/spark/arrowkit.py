"""What the Arrow faces of the column rules (``ColumnRule.arrow``) are built from: tests over
Arrow arrays and the text patterns on which Arrow's casts give what the rules' Python faces give.

Owns: the staged texts' patterns in RE2 syntax (Arrow's regular expressions: no look-ahead, ``$``
only at the end), the boolean reductions a kernel guards itself with, and the ``$b64`` decoder
``ddlcore.raw`` uses.  Must not know: any rule or dialect.  pyarrow is imported where used (the
rules module is imported where pyarrow's compute functions are not needed).
"""

from __future__ import annotations

import base64
import binascii
import sys
from functools import partial
from typing import Any, Callable

from .. import raw

__all__ = ["Kernel", "int_text", "INT_TEXT", "YEAR_TEXT", "NUMBER_TEXT", "STR_TEXT", "B64_TEXT", "UNBASE64",
           "all_true", "any_true", "all_match"]

#: an Arrow face's kernel: a ``pa.StringArray`` of staged texts → a ``pa.Array`` of the column's
#: type, or ``None`` (declined: the texts are left to the memo)
Kernel = Callable[[Any], Any]


def int_text(digits: int = 18) -> str:
    """An integer in its text form as ``driver.staged_value`` takes it (no sign but ``-``, no
    leading zero, not ``-0``), of at most ``digits`` digits (18: within int64)."""
    return rf"0|-?[1-9][0-9]{{0,{digits - 1}}}"


INT_TEXT = int_text()
#: a year of four digits but 0000 (RE2 has no look-ahead)
YEAR_TEXT = "(000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})"
#: a text ``raw.NUMBER_RX`` matches as Python's ``re`` does (its ``$`` also matches before a
#: last newline; RE2's only at the end): a number, which ``driver.staged_value`` does not read
#: as a string
NUMBER_TEXT = raw.NUMBER_RX.removesuffix("$") + r"\n?$"
#: a tagged value with a plain payload (``driver.PLAIN_TAGGED``): ``$s`` (a string) and ``$b64``
#: (bytes; its payload in the alphabet ``base64.b64decode(validate=True)`` takes)
STR_TEXT = r'^\{"\$s":"[^"\\\x00-\x1f]*"\}$'
B64_TEXT = r'^\{"\$b64":"[A-Za-z0-9+/]*={0,2}"\}$'
#: ``raw``'s reading of a ``$b64`` payload, ``base64.b64decode(p, validate=True)``: from Python
#: 3.11 that function is ``binascii.a2b_base64(p, strict_mode=True)`` after a conversion of
#: ``p`` to bytes (half its time; the kernels' payloads are ASCII, which ``a2b_base64`` takes)
UNBASE64 = (partial(binascii.a2b_base64, strict_mode=True) if sys.version_info >= (3, 11)
            else partial(base64.b64decode, validate=True))


def all_true(mask) -> bool:
    """Every non-null element of the boolean array ``mask`` is true (true for none)."""
    import pyarrow.compute as pc

    return bool(pc.all(mask, min_count=0).as_py())


def any_true(mask) -> bool:
    """Some element of the boolean array ``mask`` is true."""
    import pyarrow.compute as pc

    return bool(pc.any(mask).as_py())


def all_match(texts, pattern: str) -> bool:
    """Every non-null text of ``texts`` (a ``pa.StringArray``) matches the RE2 ``pattern``."""
    import pyarrow.compute as pc

    return all_true(pc.match_substring_regex(texts, pattern))
