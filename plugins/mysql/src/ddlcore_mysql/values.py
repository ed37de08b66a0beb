"""MySQL / MariaDB raw-value decoders: charsets, ``YEAR``, and MariaDB's ``INET4``, ``INET6``
and ``UUID`` — each with its two faces (Python and Spark, see ``ddlcore.spark.rules``).

Sources: MySQL manual 12.9.3 "The latin1 Character Set" and ``strings/ctype-latin1.cc``
(``cs_to_uni``: MySQL's latin1 is cp1252 whose five undefined bytes 0x81, 0x8D, 0x8F, 0x90
and 0x9D map to the C1 controls U+0081...); 13.2.4 "The YEAR Type" (1901–2155 and 0000; the
binlog stores ``year - 1900`` in one byte, 0 for 0000); MariaDB KB "INET4", "INET6" (the text
form is the one ``INET6_NTOA`` writes: the longest run of zero groups — even a single one,
the first on a tie — becomes ``::``; ``::a.b.c.d`` and ``::ffff:a.b.c.d`` for IPv4-compatible
and IPv4-mapped addresses) and "UUID" (16 bytes in text order in row events of MariaDB 10.11).
"""

from __future__ import annotations

import functools
import struct
from typing import Any, Callable

from ddlcore.spark.rules import (ColumnRule, Fail, PythonOnlyCodec, SingleByteCodec, TextCodec,
                                 Utf8Codec, Utf16Codec, Utf32Codec, checks, classify, int_like,
                                 error_case, guard, null_like, number_like, only, reason,
                                 tag_payload, tagged, unescaped)
from pyspark.sql import Column as SparkColumn
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, LongType, StringType

from . import charsets

__all__ = ["text_codec", "decoding_table", "YearRule", "Inet4Rule", "Inet6Rule", "UuidRule",
           "MYSQL_LATIN1_C1", "inet6_text"]

#: bytes that MySQL's latin1 maps to C1 controls where cp1252 leaves them undefined
MYSQL_LATIN1_C1 = (0x81, 0x8D, 0x8F, 0x90, 0x9D)


def decoding_table(charset: str) -> str:
    """The 256-character decoding table of a single-byte charset (``"\\ufffe"`` where a byte is
    undefined), from its Python codec with MySQL's own differences applied."""
    codec = charsets.python_codec(charset)
    chars = []
    for b in range(256):
        try:
            ch = bytes([b]).decode(codec)
        except UnicodeDecodeError:
            ch = SingleByteCodec.UNDEFINED
        chars.append(ch if len(ch) == 1 else SingleByteCodec.UNDEFINED)
    if charsets.normalize_charset(charset) == "latin1":
        for b in MYSQL_LATIN1_C1:
            chars[b] = chr(b)
    return "".join(chars)


@functools.lru_cache(maxsize=None)
def text_codec(charset: str | None) -> TextCodec:
    """The ``TextCodec`` of a MySQL charset (``None``: utf8mb4).  UTF-8, UTF-16 (``ucs2``,
    ``utf16``, ``utf16le``), UTF-32 and every single-byte charset decode natively in Spark;
    the East Asian multi-byte charsets (``big5``, ``gbk``, ``sjis``, ...) only in Python
    (``PythonOnlyCodec``).  Raises ``ValueError`` for an unknown charset."""
    cs = charsets.normalize_charset(charset or "utf8mb4")
    if cs not in charsets.CHARSETS:
        raise ValueError(f"unknown character set {charset!r}")
    if cs in ("utf8mb4", "utf8mb3"):
        return Utf8Codec(cs)
    if cs in ("ucs2", "utf16"):
        return Utf16Codec(cs, big_endian=True)
    if cs == "utf16le":
        return Utf16Codec(cs, big_endian=False)
    if cs == "utf32":
        return Utf32Codec(cs)
    if charsets.mbmaxlen(cs) == 1:
        return SingleByteCodec(cs, decoding_table(cs))
    return PythonOnlyCodec(cs, charsets.python_codec(cs))


class YearRule(ColumnRule):
    """``YEAR``: the binlog's byte (1–255 → 1901–2155, 0 → 0000), a year 1901–2155 or 0, and
    1900 (mysql-replication reads year 0000 as ``1900 + 0``; 1900 is no ``YEAR`` value) → 0.
    ``IntegerType``."""

    spark_type = IntegerType()

    def __init__(self, label: str):
        super().__init__(label)
        self.range = f"out of range for {label}"

    def python(self) -> Callable[[Any], Any]:
        invalid, rng = self.invalid, self.range

        def convert(v: Any) -> int:
            if type(v) is not int:
                kind, v = classify(v)
                if kind != "int":
                    raise Fail(invalid)
            if v == 0 or v == 1900:
                return 0
            if 1 <= v <= 255:
                return 1900 + v
            if 1901 <= v <= 2155:
                return v
            raise Fail(rng)
        return convert

    def spark(self, x: SparkColumn) -> tuple[SparkColumn, SparkColumn]:
        is_int = int_like(x)
        n = only(is_int, x).try_cast(LongType())
        ok = ((n >= 0) & (n <= 255)) | ((n >= 1900) & (n <= 2155))
        year = F.when((n == 0) | (n == 1900), F.lit(0)).when(n <= 255, n + 1900).otherwise(n).try_cast(IntegerType())
        return (guard(is_int & ok, year, x, IntegerType()),
                lambda: checks(x, (~is_int, self.invalid), (n.isNull() | ~ok, self.range)))



class _FixedBytesText(ColumnRule):
    """A MariaDB type stored as ``size`` bytes and read as text: bytes are formatted (shorter
    ones right-padded with 0x00 first: row events drop the trailing zero bytes of fixed-size
    binary values, as for ``BINARY(n)``), a string is taken as the text already."""

    spark_type = StringType()
    size = 0

    def __init__(self, label: str):
        super().__init__(label)
        self.range = f"more than {self.size} bytes for {label}"

    def format(self, b: bytes) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def spark_format(self, b: SparkColumn) -> SparkColumn:  # pragma: no cover - abstract
        raise NotImplementedError

    def python(self) -> Callable[[Any], Any]:
        invalid, rng, size, fmt = self.invalid, self.range, self.size, self.format

        def convert(v: Any) -> str:
            kind, c = (("str", v) if type(v) is str else classify(v))
            if kind == "str":
                return c
            if kind != "bytes":
                raise Fail(invalid)
            if len(c) > size:
                raise Fail(rng)
            return fmt(c.ljust(size, b"\x00"))
        return convert

    def spark(self, x: SparkColumn) -> tuple[SparkColumn, SparkColumn]:
        plain, is_b64 = ~tagged(x), tagged(x, "$b64")
        b = F.try_to_binary(only(is_b64, tag_payload(x, "$b64")), F.lit("base64"))
        padded = F.call_function("rpad", b, F.lit(self.size), F.lit(bytearray(b"\x00")))
        value = (F.when(plain & ~number_like(x), x)
                 .when(tagged(x, "$s"), unescaped(x, "$s"))
                 .when(is_b64 & (F.length(b) <= self.size), self.spark_format(padded))
                 .otherwise(null_like(x, StringType())))
        def classify() -> SparkColumn:
            return (error_case(x)
                    .when(plain, F.when(number_like(x), self.invalid))
                    .when(is_b64, checks(None, (b.isNull(), self.invalid), (F.length(b) > self.size, self.range)))
                    .when(~tagged(x, "$s"), reason(x, self.invalid)))
        return value, classify



def _byte(b: SparkColumn, i: int) -> SparkColumn:
    """Byte ``i`` (0-based) of ``b`` as decimal text."""
    return F.conv(F.hex(F.substring(b, i + 1, 1)), 16, 10)


class Inet4Rule(_FixedBytesText):
    """``INET4``: 4 bytes → dotted quad ``a.b.c.d``."""

    size = 4

    def format(self, b: bytes) -> str:
        return ".".join(str(x) for x in b)

    def spark_format(self, b: SparkColumn) -> SparkColumn:
        return F.concat_ws(".", *[_byte(b, i) for i in range(4)])


class UuidRule(_FixedBytesText):
    """``UUID``: 16 bytes → ``xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`` (lower case)."""

    size = 16

    def format(self, b: bytes) -> str:
        h = b.hex()
        return f"{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"

    def spark_format(self, b: SparkColumn) -> SparkColumn:
        h = F.lower(F.hex(b))
        return F.concat_ws("-", h.substr(1, 8), h.substr(9, 4), h.substr(13, 4), h.substr(17, 4), h.substr(21, 12))


def inet6_text(b: bytes) -> str:
    """MariaDB's text of a 16-byte IPv6 address (``INET6_NTOA``)."""
    words = struct.unpack(">8H", b)
    best_pos, best_len, pos = -1, 0, -1
    for i, w in enumerate(words + (1,)):
        if w == 0 and i < 8:
            if pos < 0:
                pos = i
        elif pos >= 0:
            if i - pos > best_len:
                best_pos, best_len = pos, i - pos
            pos = -1
    if best_pos == 0 and (best_len == 6 or (best_len == 5 and words[5] == 0xFFFF)):
        return ("::ffff:" if best_len == 5 else "::") + ".".join(str(x) for x in b[12:])
    parts = [format(w, "x") for w in words]
    if best_len == 0:
        return ":".join(parts)
    return ":".join(parts[:best_pos]) + "::" + ":".join(parts[best_pos + best_len:])


class Inet6Rule(_FixedBytesText):
    """``INET6``: 16 bytes → MariaDB's text (``inet6_text``)."""

    size = 16

    def format(self, b: bytes) -> str:
        return inet6_text(b)

    def spark_format(self, b: SparkColumn) -> SparkColumn:
        h = F.hex(b)
        words = [F.lower(F.conv(h.substr(4 * i + 1, 4), 16, 16)) for i in range(8)]
        r = F.concat(F.lit(":"), F.concat_ws(":", *words), F.lit(":"))
        # the longest run of zero groups (the first on a tie) becomes "::": try runs from 8
        # down; a run is only replaced while no "::" exists yet (each step reads the last once)
        for run in range(8, 0, -1):
            r = F.regexp_replace(r, "^(?!.*::)(.*?):" + "0:" * run + "(.*)$", "$1::$2")
        r = F.regexp_replace(F.regexp_replace(r, "^:(?!:)", ""), "(?<!:):$", "")
        dotted = F.concat_ws(".", *[_byte(b, i) for i in range(12, 16)])
        mapped = h.startswith("0" * 20 + "FFFF")
        compat = h.startswith("0" * 24) & (h.substr(25, 4) != "0000")
        return (F.when(mapped, F.concat(F.lit("::ffff:"), dotted))
                .when(compat, F.concat(F.lit("::"), dotted))
                .otherwise(r))
