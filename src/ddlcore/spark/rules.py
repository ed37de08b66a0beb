"""Column rules: one declaration per type, two faces.

Owns: the dialect-neutral conversions a raw value can need on its way to a Spark value —
integers with unsigned wrap-around, decimals, floats, bits, text in a charset, binary,
dates/datetimes/timestamps/times as text or Python objects, enum indexes and labels, set
bitmasks and label lists — and the text codecs.  Each conversion is one class whose two
methods sit side by side and implement the same rules:

* ``python()`` → a closure ``raw value → Spark value`` (raises ``Fail(reason)``), and
* ``spark(x)`` → ``(value, classify)``: a Spark ``Column`` expression over ``x``, the raw
  value's text form (``ddlcore.raw``), using only JVM-native functions (no Python UDF), and
  a function building another: ``value`` is null wherever the Python face fails (or gives
  null), ``classify()`` is the Python face's failure reason, looked at only where ``value``
  is null.

The rules whose values are mostly distinct (integers, decimals, ``DATETIME``, text) have a
third face beside these two, ``arrow(arrow_type)``: a kernel of Arrow compute functions over a
column of staged texts, guarded by a pattern of the texts on which it gives exactly what the
Python face gives (it declines the others: ``ddlcore.spark.columnar`` then uses the Python
face through a memo).  A class has an Arrow face only if it declares one itself (a subclass
that changes the Python face does not inherit its parent's kernel: ``columnar.vector_function``).

Both faces check the same things and fail with the same reason strings, so that a property
test can compare them value for value.  A dialect plugin picks a rule and its parameters per
column (``SparkRules.rule``); the rules know nothing of any dialect.

Every Spark expression here is safe under ANSI mode (Spark 4's default): casts are
``try_cast`` and only see text of their shape (``only``), and everything that could throw
(``conv``, ``decode``, arithmetic) is only reached in a ``CASE`` branch whose guard has
checked its input.  How the expressions are shaped for Spark's code generator (``guard``,
``error_case``) is explained in docs/spark.md, "How the two faces stay one".
"""

from __future__ import annotations

import base64
import codecs
import datetime as _dt
import decimal
import re
import struct
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable, Sequence

from pyspark.sql import Column as SparkColumn
from pyspark.sql import functions as F
from pyspark.sql.types import (ArrayType, BinaryType, BooleanType, DataType, DateType,
                               DayTimeIntervalType, DecimalType, DoubleType, FloatType,
                               IntegerType, LongType, StringType, TimestampNTZType, TimestampType)

from ..raw import INT_RX, NUMBER_RX, canonical
from . import arrowkit as ak
from .arrowkit import Kernel

__all__ = [
    "Fail", "ColumnRule", "SparkRules", "MappingRow", "TextCodec", "Utf8Codec", "SingleByteCodec",
    "Utf16Codec", "Utf32Codec", "PythonOnlyCodec", "IntegerRule", "BitRule", "DecimalRule",
    "FloatRule", "DateRule", "DateTimeRule", "TimeRule", "TextRule", "BinaryRule", "EnumRule",
    "SetRule", "binary_output", "classify", "tagged", "tag_payload", "int_like",
    "number_like", "checks", "error_case", "reason", "unescaped", "spark_type_name", "guard",
    "null_like", "only",
]


class Fail(Exception):
    """A raw value a rule cannot convert; ``reason`` is the rule's reason string (the same text
    the Spark face puts in the error column)."""

    __slots__ = ("reason",)

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# --------------------------------------------------------------------------------------------
# Python helpers
# --------------------------------------------------------------------------------------------


def classify(value: Any) -> tuple[str, Any]:
    """``ddlcore.raw.canonical`` with values no kind holds classified as ``"invalid"``."""
    try:
        return canonical(value)
    except (TypeError, ValueError):
        return "invalid", None


# --------------------------------------------------------------------------------------------
# Spark helpers over a raw value's text form
#
# Code size matters: Spark generates Java for the whole projection, and a subexpression used
# in several CASE branches is generated once per use.  So the helpers below only ever look at
# ``x`` (a cheap array access) and rules reference their intermediate values a few times.
# --------------------------------------------------------------------------------------------

def _lit(value: Any) -> SparkColumn:
    return F.lit(value)


def tagged(x: SparkColumn, tag: str | None = None) -> SparkColumn:
    """``x`` is the text form of a value tagged ``tag`` (``"$b64"``, ``"$dec"``, ...), or of
    any tagged value when ``tag`` is ``None``."""
    return x.startswith('{"$') if tag is None else x.startswith('{"' + tag + '":"')


def tag_payload(x: SparkColumn, tag: str) -> SparkColumn:
    """The payload of ``{"<tag>":"<payload>"}`` as written (JSON escapes, which only ``$s``
    and ``$json`` payloads can hold, are not undone; see ``unescaped``)."""
    n = len(tag) + 5  # {"<tag>":"
    if tag in ("$s", "$json"):  # may end in an escaped quote: cut exactly the closing "}
        return x.substr(_lit(n + 1), F.length(x) - n - 2)
    # payloads without quotes: up to the closing quote (byte search, no character count)
    return F.substring_index(F.substring(x, n + 1, 2147483647), '"', 1)


def unescaped(x: SparkColumn, tag: str) -> SparkColumn:
    """The payload of a ``$s`` / ``$json`` tagged value with its JSON escapes undone."""
    payload = tag_payload(x, tag)
    return F.when(~payload.contains("\\"), payload).otherwise(F.get_json_object(x, f"$['{tag}']"))


def _first_is_number(x: SparkColumn) -> SparkColumn:
    c = x.substr(1, 1)  # the first character only: no conversion of the whole string
    return ((c >= "0") & (c <= "9")) | (c == "-")


def number_like(x: SparkColumn) -> SparkColumn:
    """``x`` is a number's text (kinds int and float); the regex only runs when the first
    character is a digit or ``-``, so long texts cost one character test."""
    return _first_is_number(x) & x.rlike(NUMBER_RX)


def int_like(x: SparkColumn) -> SparkColumn:
    """``x`` is an integer's text (kind int)."""
    return x.rlike(INT_RX)


def _payload_or_plain(x: SparkColumn, *tags: str) -> SparkColumn:
    """The payload of ``x`` if it carries one of ``tags``, else ``x`` itself."""
    out = None
    for tag in tags:
        out = (F.when(tagged(x, tag), tag_payload(x, tag)) if out is None
               else out.when(tagged(x, tag), tag_payload(x, tag)))
    return out.otherwise(x)  # type: ignore[union-attr]


def error_case(x: SparkColumn) -> SparkColumn:
    """The start of a rule's reason ``CASE``: null for a null raw value.  (The branch value is
    ``x`` itself — null there — and reasons are not constants either (``reason``): Spark's
    optimizer pushes ``IsNull``/``IsNotNull`` into a ``CASE`` whose results are constants but
    one, which copies the branches' tests into the caller's.)"""
    return F.when(x.isNull(), x)


def reason(x: SparkColumn, text: str) -> SparkColumn:
    """A reason string as a non-constant expression (see ``error_case``)."""
    return F.when(x.isNotNull(), _lit(text))


def checks(x: SparkColumn | None, *pairs: tuple[SparkColumn, str | SparkColumn]) -> SparkColumn:
    """``CASE WHEN x IS NULL THEN NULL WHEN bad1 THEN reason1 ... END``: the first failing
    check's reason (a check that is null counts as passed); ``x=None``: no null guard (for a
    nested ``CASE``)."""
    out = None if x is None else error_case(x)
    for bad, why in pairs:
        r = why if isinstance(why, SparkColumn) else (_lit(why) if x is None else reason(x, why))
        out = F.when(bad, r) if out is None else out.when(bad, r)
    return _lit(None).cast(StringType()) if out is None else out


def only(ok: SparkColumn, x: SparkColumn) -> SparkColumn:
    """``x`` where ``ok`` holds, else null: the input of a ``try_cast`` that would throw (and
    catch) an exception per row on text of another kind — Spark may evaluate such a cast ahead
    of the test that guards it (common-subexpression elimination), so it gets no such text."""
    return F.when(ok, x)


def null_like(x: SparkColumn, dtype: DataType) -> SparkColumn:
    """A null of ``dtype`` that is not a constant: ``CASE WHEN x IS NULL THEN <x as dtype> END``
    (see ``guard``)."""
    if isinstance(dtype, ArrayType):
        return F.when(x.isNull(), F.split(x, ","))
    return F.when(x.isNull(), x.try_cast(dtype))


def guard(ok: SparkColumn, value: SparkColumn, x: SparkColumn, dtype: DataType) -> SparkColumn:
    """``CASE WHEN ok THEN value ELSE null END`` with a non-constant null: Spark's optimizer
    pushes ``IsNotNull``/``Cast`` into a ``CASE`` with at most one non-constant result, which
    would split the expression and defeat its common-subexpression elimination."""
    return F.when(ok, value).otherwise(null_like(x, dtype))


def _b64(x: SparkColumn) -> SparkColumn:
    return F.try_to_binary(only(tagged(x, "$b64"), tag_payload(x, "$b64")), _lit("base64"))


def _pad_binary(fn: str, b: SparkColumn, n: int) -> SparkColumn:
    return F.call_function(fn, b, _lit(n), _lit(bytearray(b"\x00")))


# --------------------------------------------------------------------------------------------
# Binary output (binary_handling)
# --------------------------------------------------------------------------------------------


def binary_output(mode: str) -> tuple[DataType, Callable[[bytes], Any], Callable[[SparkColumn], SparkColumn]]:
    """``(spark type, python transform, spark transform)`` of bytes under ``binary_handling``:
    ``bytes`` (``BinaryType``), ``base64`` (standard alphabet, padded, no line breaks) or
    ``hex`` (lower case)."""
    if mode == "bytes":
        return BinaryType(), (lambda b: b), (lambda c: c)
    if mode == "base64":
        return (StringType(), (lambda b: base64.b64encode(b).decode("ascii")),
                (lambda c: F.translate(F.base64(c), "\r\n", "")))
    if mode == "hex":
        return StringType(), (lambda b: b.hex()), (lambda c: F.lower(F.hex(c)))
    raise ValueError(f"binary_handling {mode!r}")


# --------------------------------------------------------------------------------------------
# Text codecs
# --------------------------------------------------------------------------------------------


class TextCodec:
    """Decodes the bytes of a character set, in both faces.  ``python()`` → ``bytes → str``
    raising ``Fail(self.reason)``; ``spark(b)`` → ``(text, ok)`` over a binary column (``text``
    is only evaluated where ``ok`` holds).  ``native``: whether the Spark face can decode
    (``PythonOnlyCodec`` cannot).  ``python_codec``: the Python codec the default ``python()``
    decodes with (strict errors)."""

    native = True
    python_codec = ""

    def __init__(self, charset: str):
        self.charset = charset
        self.reason = f"bytes not valid in character set {charset}"

    def python(self) -> Callable[[bytes], str]:
        reason, codec = self.reason, self.python_codec

        def decode(b: bytes) -> str:
            try:
                return b.decode(codec)
            except UnicodeDecodeError:
                raise Fail(reason) from None
        return decode

    def spark(self, b: SparkColumn) -> tuple[SparkColumn, SparkColumn]:  # pragma: no cover
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.charset}>"


class Utf8Codec(TextCodec):
    """UTF-8 (well-formed sequences only: no surrogates, overlongs or code points above
    U+10FFFF; Unicode 15, 3.9 table 3-7)."""

    python_codec = "utf-8"

    def spark(self, b: SparkColumn) -> tuple[SparkColumn, SparkColumn]:
        s = b.cast(StringType())
        return s, F.is_valid_utf8(s)


class SingleByteCodec(TextCodec):
    """A single-byte charset given by its decoding ``table`` (256 characters, ``"\\ufffe"``
    for a byte the charset leaves undefined).  Python: ``codecs.charmap_decode``; Spark:
    ``decode(b, 'ISO-8859-1')`` then ``translate`` of every byte whose character differs."""

    UNDEFINED = "\ufffe"

    def __init__(self, charset: str, table: str):
        super().__init__(charset)
        if len(table) != 256:
            raise ValueError("a single-byte decoding table has 256 characters")
        self.table = table
        src, dst = [], []
        for code, ch in enumerate(table):
            if ch == self.UNDEFINED:
                src.append(chr(code))
                dst.append("\ufffd")
            elif ch != chr(code):
                src.append(chr(code))
                dst.append(ch)
        self._src, self._dst = "".join(src), "".join(dst)
        self._has_undefined = self.UNDEFINED in table

    def python(self) -> Callable[[bytes], str]:
        reason, table, charmap = self.reason, self.table, codecs.charmap_decode

        def decode(b: bytes) -> str:
            try:
                return charmap(b, "strict", table)[0]
            except UnicodeDecodeError:
                raise Fail(reason) from None
        return decode

    def spark(self, b: SparkColumn) -> tuple[SparkColumn, SparkColumn]:
        s = F.decode(b, "ISO-8859-1")
        if self._src:
            s = F.translate(s, self._src, self._dst)
        ok = ~s.contains("\ufffd") if self._has_undefined else _lit(True)
        return s, ok


_UTF16_BE_RX = "^(?:[0-9A-CEF][0-9A-F]{3}|D[0-7][0-9A-F]{2}|D[89AB][0-9A-F]{2}D[C-F][0-9A-F]{2})*$"
_UTF16_LE_RX = ("^(?:[0-9A-F]{2}(?:[0-9A-CEF][0-9A-F]|D[0-7])"
                "|[0-9A-F]{2}D[89AB][0-9A-F]{2}D[C-F])*$")
_UTF32_RX = "^(?:0000(?:[0-9A-CEF][0-9A-F]{3}|D[0-7][0-9A-F]{2})|000[1-9A-F][0-9A-F]{4}|0010[0-9A-F]{4})*$"


class Utf16Codec(TextCodec):
    """UTF-16 big or little endian; a surrogate must be half of a pair; no byte-order mark is
    interpreted (a leading U+FEFF is text)."""

    def __init__(self, charset: str, big_endian: bool = True):
        super().__init__(charset)
        self.big_endian = big_endian
        self.python_codec = "utf_16_be" if big_endian else "utf_16_le"

    def spark(self, b: SparkColumn) -> tuple[SparkColumn, SparkColumn]:
        rx = _UTF16_BE_RX if self.big_endian else _UTF16_LE_RX
        ok = (F.length(b) % 2 == 0) & F.hex(b).rlike(rx)
        return F.decode(b, "UTF-16BE" if self.big_endian else "UTF-16LE"), ok


class Utf32Codec(TextCodec):
    """UTF-32 big endian (code points up to U+10FFFF, no surrogates; a leading U+FEFF is
    text, not a byte-order mark)."""

    python_codec = "utf_32_be"

    def spark(self, b: SparkColumn) -> tuple[SparkColumn, SparkColumn]:
        h = F.hex(b)
        ok = (F.length(b) % 4 == 0) & h.rlike(_UTF32_RX)
        # Java's "UTF-32" decoder drops a leading byte-order mark; keep it as text
        text = (F.when(h.startswith("0000FEFF"),
                       F.concat(_lit("\ufeff"), F.decode(F.substring(b, 5, 2147483647), "UTF-32")))
                .otherwise(F.decode(b, "UTF-32")))
        return text, ok


class PythonOnlyCodec(TextCodec):
    """A charset only Python decodes (``codec``: a Python codec name).  The Spark face reports
    every value of it as an error (``spark_reason``): Spark 4 decodes only UTF-8/16/32,
    US-ASCII and ISO-8859-1 natively, so a capture should write such text as ``str``."""

    native = False

    def __init__(self, charset: str, codec: str):
        super().__init__(charset)
        self.codec = self.python_codec = codec
        self.spark_reason = (f"character set {charset} has no JVM-native decoder; "
                             f"the capture must write its text as strings")

    def spark(self, b: SparkColumn) -> tuple[SparkColumn, SparkColumn]:
        return _lit(None).cast(StringType()), _lit(False)


def _codec_error(codec: TextCodec) -> str:
    return getattr(codec, "spark_reason", codec.reason)


# --------------------------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------------------------


class ColumnRule:
    """How one column's raw values become values of ``spark_type``.

    ``label``: the native type as reasons name it (``int unsigned``, ``decimal(10,2)``);
    ``produces_null``: the rule turns some non-null raw values into null (zero dates), so the
    Spark field is nullable even for a NOT NULL column; ``invalid``: the reason for a raw value
    of a kind the rule does not accept or text it cannot read."""

    spark_type: DataType
    produces_null = False

    def __init__(self, label: str):
        self.label = label
        self.invalid = f"not a valid raw value for {label}"

    def python(self) -> Callable[[Any], Any]:  # pragma: no cover - abstract
        """``raw → value`` for a non-null raw value; raises ``Fail``."""
        raise NotImplementedError

    def spark(self, x: SparkColumn) -> tuple[SparkColumn, SparkColumn]:  # pragma: no cover
        """``(value, classify)`` over ``x``, the raw value's text form (null for a null raw
        value).  ``value``: the converted value, null for a null ``x``, for every raw value the
        Python face rejects and where it gives null; it never throws (under ANSI mode too) and,
        when it is a ``CASE``, no more than one of its results is a constant (use ``guard``), so
        that Spark keeps it one common subexpression.  ``classify``: a function of no argument
        building the reason of the failure (built only by the callers that need it: building
        expressions costs a py4j round trip per node); only evaluated where ``value`` is null
        and ``x`` is not; null where the null value is a legitimate result (a zero date)."""
        raise NotImplementedError

    def arrow(self, arrow_type: Any) -> Kernel | None:
        """The Arrow face for a column of ``arrow_type`` (Spark's Arrow type of ``spark_type``):
        a kernel (``arrowkit.Kernel``) of a ``pa.StringArray`` of staged texts (nulls: null
        values) giving an array of ``arrow_type`` equal, element by element, to the Python face
        after ``driver.staged_value`` — or ``None`` for a chunk of texts it leaves to the Python
        face; ``None``: no kernel for this rule and type (the default).  Only consulted on the
        class that declares it (``columnar.vector_function``)."""
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.label} → {self.spark_type.simpleString()}>"


def _dec(n: int) -> SparkColumn:
    return F.lit(Decimal(n))


class IntegerRule(ColumnRule):
    """An integer: raw ints in ``[lo, hi]`` are accepted; a negative one is a two's-complement
    reading of an unsigned column and gets ``wrap`` (2^bits) added.  ``output``: ``"int"``
    (the value, as ``spark_type``), ``"bool"`` (non-zero → true) or ``"signed64"`` (the 64
    bits as a signed long: values from 2^63 read negative)."""

    def __init__(self, label: str, lo: int, hi: int, wrap: int | None, spark_type: DataType,
                 output: str = "int"):
        super().__init__(label)
        self.lo, self.hi, self.wrap, self.output = lo, hi, wrap, output
        self.spark_type = spark_type
        self.range = f"out of range for {label}"

    def python(self) -> Callable[[Any], Any]:
        lo, hi, wrap, invalid, rng, output = self.lo, self.hi, self.wrap or 0, self.invalid, self.range, self.output

        def to_int(v: Any) -> int:
            if type(v) is not int:
                kind, v = classify(v)
                if kind != "int":
                    raise Fail(invalid)
            if v < lo or v > hi:
                raise Fail(rng)
            return v + wrap if v < 0 else v

        if output == "bool":
            return lambda v: to_int(v) != 0
        if isinstance(self.spark_type, DecimalType):  # BIGINT UNSIGNED: DecimalType(20,0)
            return lambda v: Decimal(to_int(v))
        if output == "signed64":
            def signed(v: Any) -> int:
                n = to_int(v)
                return n - (1 << 64) if n >= (1 << 63) else n
            return signed
        return to_int

    def spark(self, x: SparkColumn) -> tuple[SparkColumn, SparkColumn]:
        big = self.hi >= (1 << 63)
        is_int = int_like(x)
        n = only(is_int, x).try_cast(DecimalType(20, 0) if big else LongType())
        lo, hi = (_dec(self.lo), _dec(self.hi)) if big else (_lit(self.lo), _lit(self.hi))
        converted = n
        if self.wrap:  # within [lo, hi], pmod(n, 2^bits) is n + 2^bits for negatives, else n
            converted = F.pmod(n, _dec(self.wrap) if big else _lit(self.wrap))
        if self.output == "bool":
            converted = converted != 0
        elif self.output == "signed64":  # the 64 bits read as a signed long
            converted = F.when(n < 0, n).otherwise(F.pmod(n + _dec(1 << 63), _dec(1 << 64)) - _dec(1 << 63))
        value = guard(is_int & (n >= lo) & (n <= hi), converted.try_cast(self.spark_type), x, self.spark_type)
        return value, lambda: checks(x, (~is_int, self.invalid), (n.isNull() | (n < lo) | (n > hi), self.range))

    def arrow(self, arrow_type: Any) -> Kernel | None:
        """The ``int`` and ``bool`` outputs up to BIGINT: texts in the integer text form
        (``arrowkit.INT_TEXT``) within ``[lo, hi]``, a negative one with ``wrap`` added (the
        unsigned reading)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if self.output not in ("int", "bool") or self.hi >= 1 << 63 or pa.types.is_decimal(arrow_type):
            return None
        # typed scalars: a Python one costs pyarrow a type inference per call (~0.1 ms)
        lo, hi, zero = (pa.scalar(x, pa.int64()) for x in (max(self.lo, -(1 << 63)), self.hi, 0))
        wrap, as_bool = pa.scalar(self.wrap, pa.int64()) if self.wrap else None, self.output == "bool"

        def convert(texts):
            if not ak.all_match(texts, f"^({ak.INT_TEXT})$"):
                return None
            n = pc.cast(texts, pa.int64())
            if not ak.all_true(pc.and_(pc.greater_equal(n, lo), pc.less_equal(n, hi))):
                return None
            if wrap is not None:
                n = pc.if_else(pc.less(n, zero), pc.add(n, wrap), n)
            return pc.not_equal(n, zero) if as_bool else pc.cast(n, arrow_type)
        return convert



class BitRule(ColumnRule):
    """``BIT(n)``: a raw int in ``[0, 2^n)``, big-endian bytes (at most ``ceil(n/8)``, value
    below 2^n) or a text of ``0``/``1`` digits (at most n; mysql-replication's form).
    ``BIT(1)`` → boolean; wider → the ``ceil(n/8)`` big-endian bytes, through
    ``binary_handling``."""

    _BITS = re.compile(r"^[01]+$")

    def __init__(self, label: str, bits: int, binary_handling: str = "bytes"):
        super().__init__(label)
        self.bits = bits
        self.nbytes = (bits + 7) // 8
        self.boolean = bits == 1
        self.range = f"out of range for {label}"
        if self.boolean:
            self.spark_type = BooleanType()
            self._py_out, self._spark_out = None, None
        else:
            self.spark_type, self._py_out, self._spark_out = binary_output(binary_handling)

    def python(self) -> Callable[[Any], Any]:
        bits, nbytes, invalid, rng, boolean, out = (self.bits, self.nbytes, self.invalid,
                                                    self.range, self.boolean, self._py_out)
        bits_rx = self._BITS

        def convert(v: Any) -> Any:
            kind, v = (("int", v) if type(v) is int else classify(v))
            if kind == "int":
                i = v
            elif kind == "bytes":
                if len(v) > nbytes:
                    raise Fail(rng)
                i = int.from_bytes(v, "big")
            elif kind == "str" and bits_rx.match(v):
                if len(v) > bits:
                    raise Fail(rng)
                i = int(v, 2)
            else:
                raise Fail(invalid)
            if i < 0 or i >> bits:
                raise Fail(rng)
            if boolean:
                return i == 1
            return out(i.to_bytes(nbytes, "big"))
        return convert

    def spark(self, x: SparkColumn) -> tuple[SparkColumn, SparkColumn]:
        # kinds: a plain int; bytes; a 0/1 text (always written as {"$s":...}: it looks like a number)
        n, nb = self.bits, self.nbytes
        is_int, is_b64, is_s = int_like(x), tagged(x, "$b64"), tagged(x, "$s")
        big = n > 62  # beyond a long's range: exact decimals
        d = only(is_int, x).try_cast(DecimalType(20, 0) if big else LongType())
        top = _dec((1 << n) - 1) if big else _lit((1 << n) - 1)
        b = _b64(x)
        padded = _pad_binary("lpad", b, nb)
        s = tag_payload(x, "$s")
        max_hex = format((1 << n) - 1, f"0{2 * nb}X")
        int_ok = is_int & (d >= 0) & (d <= top)
        b64_ok = is_b64 & (F.length(b) <= nb) & (F.hex(padded) <= max_hex)
        bits_ok = is_s & s.rlike("^[01]+$") & (F.length(s) <= n)
        raw_bytes = (F.when(int_ok, F.unhex(F.lpad(F.conv(x, 10, 16), 2 * nb, "0")))
                     .when(b64_ok, padded)
                     .when(bits_ok, F.unhex(F.lpad(F.conv(s, 2, 16), 2 * nb, "0")))
                     .otherwise(null_like(x, BinaryType())))
        def classify() -> SparkColumn:
            return (error_case(x)
                    .when(is_int, F.when(d.isNull() | (d < 0) | (d > top), self.range))
                    .when(is_b64, checks(None, (b.isNull(), self.invalid), (F.length(b) > nb, self.range),
                                         (F.hex(padded) > max_hex, self.range)))
                    .when(is_s & s.rlike("^[01]+$"), F.when(F.length(s) > n, self.range))
                    .otherwise(reason(x, self.invalid)))
        if self.boolean:  # the usual raw values 0 and 1 without the byte conversions
            value = (F.when((x == "1") | (x == "0"), x == "1")
                     .otherwise(raw_bytes == _lit(bytearray(b"\x01"))))
            return value, classify
        return self._spark_out(raw_bytes), classify



_DEC_TEXT = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")
_DEC_TEXT_RX = r"^-?[0-9]+(\.[0-9]+)?$"
_WIDE_RX = r"^(-?)0*([0-9]*?)(?:\.([0-9]+))?$"
_HALF_UP = decimal.Context(prec=400, rounding=decimal.ROUND_HALF_UP, Emax=999999, Emin=-999999)


def _decimal_text(x: SparkColumn) -> tuple[SparkColumn, SparkColumn]:
    """``(text, bad)`` of a raw decimal: a ``$dec`` payload (plain notation) or a plain int."""
    is_dec, is_int = tagged(x, "$dec"), int_like(x)
    payload = tag_payload(x, "$dec")
    bad = F.when(is_dec, ~payload.rlike(_DEC_TEXT_RX)).otherwise(~is_int)
    return F.when(is_dec, payload).when(is_int, x), bad


class DecimalRule(ColumnRule):
    """``DECIMAL(p,s)``: raw ints and decimals.  ``mode`` ``precise`` (p ≤ 38): rounded half up
    to ``s`` digits (as Spark's cast and MySQL round), ``DecimalType(p,s)``, out of range → error;
    ``double``: the nearest double; ``string`` (and ``precise`` beyond 38 digits): plain
    notation with exactly ``s`` fraction digits — for p ≤ 38 rounded as ``precise``, beyond 38
    exact (more than ``s`` fraction digits or ``p-s`` integer digits → error)."""

    def __init__(self, label: str, precision: int, scale: int, mode: str = "precise"):
        super().__init__(label)
        self.p, self.s = precision, scale
        self.wide = precision > 38
        self.mode = "string" if (self.wide and mode == "precise") else mode
        self.spark_type = {"precise": DecimalType(precision, scale) if not self.wide else StringType(),
                           "double": DoubleType(), "string": StringType()}[self.mode]
        self.range = f"out of range for {label}"
        self.scale_error = f"more than {scale} fraction digits for {label}"

    # -- Python ---------------------------------------------------------------------------

    def python(self) -> Callable[[Any], Any]:
        p, s, mode, wide, invalid, rng = self.p, self.s, self.mode, self.wide, self.invalid, self.range
        scale_error = self.scale_error
        exp = Decimal(1).scaleb(-s)
        limit = Decimal(10) ** (p - s)

        def to_decimal(v: Any) -> Decimal:
            t = type(v)
            if t is Decimal:
                d = v
            elif t is int:
                d = Decimal(v)
            else:
                kind, c = classify(v)
                if kind == "int":
                    d = Decimal(c)
                elif kind == "decimal":
                    d = c
                else:
                    raise Fail(invalid)
            if not d.is_finite():
                raise Fail(invalid)
            return d

        def rounded(d: Decimal) -> Decimal:
            try:
                q = d.quantize(exp, context=_HALF_UP)
            except decimal.InvalidOperation:
                raise Fail(rng) from None
            if q.copy_abs() >= limit:  # copy_abs: abs() would round to the context's 28 digits
                raise Fail(rng)
            return q.copy_abs() if q == 0 else q

        if mode == "double":
            def to_double(v: Any) -> float:
                x = float(to_decimal(v))
                if x - x != 0:
                    raise Fail(rng)
                return x
            return to_double
        if mode == "precise":
            return lambda v: rounded(to_decimal(v))
        if not wide:
            return lambda v: format(rounded(to_decimal(v)), "f")

        def exact_text(v: Any) -> str:
            text = format(to_decimal(v), "f")
            neg = text.startswith("-")
            ip, _, fp = text.lstrip("-").partition(".")
            ip = ip.lstrip("0")
            if len(fp) > s:
                raise Fail(scale_error)
            if len(ip) > p - s:
                raise Fail(rng)
            fp = fp.ljust(s, "0")
            zero = not ip and not fp.strip("0")
            return ("-" if neg and not zero else "") + (ip or "0") + ("." + fp if s else "")
        return exact_text

    # -- Spark ----------------------------------------------------------------------------

    def spark(self, x: SparkColumn) -> tuple[SparkColumn, SparkColumn]:
        t, bad = _decimal_text(x)
        kind_ok = tagged(x, "$dec") | int_like(x)
        dtype = self.spark_type
        if self.mode == "double":
            d = t.try_cast(DoubleType())
            return (guard(kind_ok & (F.abs(d) < float("inf")), d, x, dtype),
                    lambda: checks(x, (bad, self.invalid), (~(F.abs(d) < float("inf")), self.range)))
        if not self.wide:
            d = t.try_cast(DecimalType(self.p, self.s))
            converted = d if self.mode == "precise" else d.cast(StringType())
            return guard(kind_ok, converted, x, dtype), lambda: checks(x, (bad, self.invalid), (d.isNull(), self.range))
        # beyond 38 digits: text surgery (sign, integer digits without leading zeros, fraction)
        ip = F.regexp_extract(t, _WIDE_RX, 2)
        fp = F.regexp_extract(t, _WIDE_RX, 3)
        ok = ~bad & (F.length(fp) <= self.s) & (F.length(ip) <= self.p - self.s)
        negative = t.startswith("-") & t.rlike("[1-9]")
        sign = F.when(negative, _lit("-")).otherwise(_lit(""))
        digits = F.when(ip == "", _lit("0")).otherwise(ip)
        text = (F.concat(sign, digits, _lit("."), F.rpad(fp, self.s, "0")) if self.s
                else F.concat(sign, digits))
        return guard(ok, text, x, dtype), lambda: checks(
            x, (bad, self.invalid), (F.length(fp) > self.s, self.scale_error), (F.length(ip) > self.p - self.s, self.range))

    # -- Arrow ----------------------------------------------------------------------------

    def arrow(self, arrow_type: Any) -> Kernel | None:
        """``precise`` mode (p ≤ 38, ``DecimalType(p,s)``, s < 38): ``$dec`` payloads in plain
        notation with at most ``s`` fraction digits (no rounding to do) and at most 38 - s
        integer digits, and integers in their text form of at most that many digits; the
        value's magnitude below 10^(p-s) (the rule's range)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        p, s = self.p, self.s
        whole = 38 - s  # the integer digits ``decimal128(38, s)`` holds
        if self.mode != "precise" or self.wide or whole < 1:
            return None
        fraction = rf"(\.[0-9]{{1,{s}}})?" if s else ""
        pattern = rf'^(\{{"\$dec":"-?[0-9]{{1,{whole}}}{fraction}"\}}|{ak.int_text(min(18, whole))})$'
        wide = pa.decimal128(38, s)
        # (p 38: the pattern's 38 - s integer digits are the range)
        limit = None if p == 38 else pa.scalar(Decimal(10) ** (p - s), wide)

        def convert(texts):
            if not ak.all_match(texts, pattern):
                return None
            payload = pc.if_else(pc.starts_with(texts, '{"'), pc.utf8_slice_codeunits(texts, 9, -2), texts)
            try:
                d = pc.cast(payload, wide)
            except pa.ArrowInvalid:  # (the pattern keeps within 38 digits: not expected)
                return None
            if limit is not None and not ak.all_true(pc.less(pc.abs(d), limit)):
                return None
            return pc.cast(d, arrow_type)
        return convert





class FloatRule(ColumnRule):
    """``FLOAT`` (``single``: rounded to binary32, ``FloatType``) or ``DOUBLE``
    (``DoubleType``): raw ints, floats and decimals, converted to the nearest double (then
    to binary32); NaN, infinities and overflow → error."""

    def __init__(self, label: str, single: bool):
        super().__init__(label)
        self.single = single
        self.spark_type = FloatType() if single else DoubleType()
        self.range = f"not a finite {label} value"

    def python(self) -> Callable[[Any], Any]:
        invalid, rng, single = self.invalid, self.range, self.single
        pack, unpack = struct.pack, struct.unpack

        def convert(v: Any) -> float:
            t = type(v)
            if t is not float:
                kind, c = (("int", v) if t is int else classify(v))
                if kind == "float":
                    v = c
                elif kind == "int":
                    try:
                        v = float(c)
                    except OverflowError:
                        raise Fail(rng) from None
                elif kind == "decimal" and c.is_finite():
                    v = float(c)
                else:
                    raise Fail(invalid)
            if v - v != 0:
                raise Fail(rng)
            if single:
                try:
                    v = unpack("f", pack("f", v))[0]
                except OverflowError:
                    raise Fail(rng) from None
                if v - v != 0:
                    raise Fail(rng)
            return v
        return convert

    def spark(self, x: SparkColumn) -> tuple[SparkColumn, SparkColumn]:
        is_dec = tagged(x, "$dec")
        payload = tag_payload(x, "$dec")
        is_number = number_like(x)
        d = F.when(is_dec, payload).when(is_number, x).try_cast(DoubleType())
        converted = d.try_cast(FloatType()) if self.single else d
        # NaN < inf is false in Spark, and so is inf < inf: one test for both
        finite = F.abs(converted) < float("inf")
        value = guard((is_dec | is_number) & finite, converted, x, self.spark_type)
        def classify() -> SparkColumn:
            bad = F.when(is_dec, ~payload.rlike(_DEC_TEXT_RX)).otherwise(~is_number)
            return checks(x, (bad, self.invalid), (~finite, self.range))
        return value, classify



_DATE_RX = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
_DATE = re.compile(_DATE_RX)
_DT_RX = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}( [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?)?$"
#: ``_DATE_RX`` / ``_DT_RX`` and not year 0000, in one test (the value expressions refer to the
#: text once for both: smaller plans)
_DATE_NOT_YEAR0_RX = "^(?!0000)" + _DATE_RX[1:]
_DT_NOT_YEAR0_RX = "^(?!0000)" + _DT_RX[1:]
_DT = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2})(?: ([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,6}))?)?$")
_ZERO_TS_RX = r"^1970-01-01( 00:00:00(\.0+)?)?$"
_TIME_RX = r"^-?[0-9]+:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?$"
#: a TIME text within ±838:59:59.000000 (any number of leading zeros in the hours)
_TIME_RANGE_RX = (r"^-?0*(?:[0-9]{1,2}|[0-7][0-9]{2}|8[0-2][0-9]|83[0-7]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,6})?$"
                  r"|^-?0*838:(?:[0-4][0-9]:[0-5][0-9]|5[0-9]:[0-4][0-9]|5[0-8]:5[0-9])(?:\.[0-9]{1,6})?$"
                  r"|^-?0*838:59:59(?:\.0{1,6})?$")
_TIME_GROUPS_RX = r"^(-?)([0-9]+):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,6}))?$"
_TIME = re.compile(_TIME_GROUPS_RX)
_UTC = _dt.timezone.utc
_EPOCH = _dt.datetime(1970, 1, 1)
_ONE_US = _dt.timedelta(microseconds=1)
#: 9999-12-31 23:59:59.999999 UTC in microseconds since the epoch
_MAX_EPOCH_MICROS = 253402300799999999
_MICRO = Decimal("0.000001")


class DateRule(ColumnRule):
    """``DATE``: ``datetime.date`` values and date text ``YYYY-MM-DD`` (kinds date and str).
    Text that is no real date (``0000-00-00``, ``2023-02-30``, month 13, year 0) → null, or an
    error when ``invalid_dates`` is ``"error"``; text of another shape → error."""

    spark_type = DateType()

    def __init__(self, label: str, invalid_dates: str = "null"):
        super().__init__(label)
        self.null_invalid = invalid_dates == "null"
        self.produces_null = self.null_invalid
        self.zero = f"zero or invalid {label}"

    def python(self) -> Callable[[Any], Any]:
        invalid, zero, null_invalid = self.invalid, self.zero, self.null_invalid
        date = _dt.date

        def convert(v: Any) -> Any:
            if type(v) is date:
                return v
            kind, c = classify(v)
            if kind == "date" and type(c) is date:
                return c
            if kind not in ("date", "str") or not _DATE.match(c):
                raise Fail(invalid)
            try:
                return date(int(c[0:4]), int(c[5:7]), int(c[8:10]))
            except ValueError:
                if null_invalid:
                    return None
                raise Fail(zero) from None
        return convert

    def spark(self, x: SparkColumn) -> tuple[SparkColumn, SparkColumn]:
        # a str that is a date text is never written as {"$s": ...} (it does not look like a
        # number), and a wrapped one fails the pattern as its Python original does
        t = _payload_or_plain(x, "$date")
        dv = t.try_cast(DateType())
        year0 = t.startswith("0000")
        fmt = t.rlike(_DATE_RX)
        def classify() -> SparkColumn:
            pairs = [(~fmt, self.invalid)]
            if not self.null_invalid:
                pairs.append((dv.isNull() | year0, self.zero))
            return checks(x, *pairs)
        return guard(t.rlike(_DATE_NOT_YEAR0_RX), dv, x, self.spark_type), classify



class DateTimeRule(ColumnRule):
    """``DATETIME(fsp)`` (``utc=False`` → ``TimestampNTZType``) or ``TIMESTAMP(fsp)``
    (``utc=True`` → ``TimestampType``, the raw wall time read as UTC).

    Accepts ``datetime`` values (an aware one converted to UTC), ``date`` values (midnight),
    text ``YYYY-MM-DD[ hh:mm:ss[.f{1,6}]]`` and, for ``TIMESTAMP``, seconds since the epoch
    (ints and decimals, the binlog's own form; rounded half up to microseconds).  The fraction
    is truncated to ``fsp`` digits.  Text that is no real date and time (zero dates, Feb 30,
    hour 24, a leap second — MySQL stores none of these but the zero date) → null, or an error
    when ``invalid_dates`` is ``"error"``.  For ``TIMESTAMP`` the epoch itself
    (``1970-01-01 00:00:00`` UTC, below MySQL's range, how the zero timestamp is stored and
    what mysql-replication returns for it) → null as a zero value."""

    def __init__(self, label: str, fsp: int, utc: bool, invalid_dates: str = "null"):
        super().__init__(label)
        self.fsp, self.utc = fsp, utc
        self.spark_type = TimestampType() if utc else TimestampNTZType()
        self.null_invalid = invalid_dates == "null"
        self.produces_null = self.null_invalid or utc
        self.range = f"out of range for {label}"
        self.zero = f"zero or invalid {label}"

    def python(self) -> Callable[[Any], Any]:
        invalid, rng, zero, null_invalid, utc = self.invalid, self.range, self.zero, self.null_invalid, self.utc
        k = 10 ** (6 - self.fsp)
        datetime, date = _dt.datetime, _dt.date

        def finish(dt: _dt.datetime) -> Any:
            if utc and dt == _EPOCH:
                return None
            us = dt.microsecond % k
            if us:
                dt = dt.replace(microsecond=dt.microsecond - us)
            return dt.replace(tzinfo=_UTC) if utc else dt

        def from_epoch(c: Any) -> Any:
            d = Decimal(c)
            if not d.is_finite() or not _DEC_TEXT.match(format(d, "f")):
                raise Fail(invalid)
            try:
                micros = int(d.quantize(_MICRO, context=_HALF_UP).scaleb(6))
            except decimal.InvalidOperation:
                raise Fail(rng) from None
            if micros < 0 or micros > _MAX_EPOCH_MICROS:
                raise Fail(rng)
            if micros == 0:
                return None
            return finish(_EPOCH + _dt.timedelta(microseconds=micros))

        def convert(v: Any) -> Any:
            if type(v) is datetime and v.tzinfo is None:
                return finish(v)
            kind, c = classify(v)
            if kind == "datetime" and type(c) is datetime:
                return finish(c)
            if kind == "date" and type(c) is date:
                return finish(datetime(c.year, c.month, c.day))
            if utc and kind in ("int", "decimal"):
                return from_epoch(c)
            if kind not in ("date", "datetime", "str"):
                raise Fail(invalid)
            m = _DT.match(c)
            if not m:
                raise Fail(invalid)
            try:
                dt = datetime(int(m[1]), int(m[2]), int(m[3]), int(m[4] or 0), int(m[5] or 0),
                              int(m[6] or 0), int((m[7] or "").ljust(6, "0")))
            except ValueError:
                if null_invalid:
                    return None
                raise Fail(zero) from None
            return finish(dt)
        return convert

    def spark(self, x: SparkColumn) -> tuple[SparkColumn, SparkColumn]:
        t = _payload_or_plain(x, "$datetime", "$date")
        length = 19 if self.fsp == 0 else 20 + self.fsp
        # a date alone (10 characters) gets midnight; a longer text is cut to fsp fraction
        # digits (``t`` referred to once)
        core = F.regexp_replace(t, r"^([0-9-]{10})$", "$1 00:00:00").substr(1, length)
        year0 = t.startswith("0000")
        fmt = t.rlike(_DT_RX)
        if self.utc:
            parsed = F.concat(core, _lit("Z")).try_cast(TimestampType())
            text_ok = t.rlike(_DT_NOT_YEAR0_RX) & ~t.rlike(_ZERO_TS_RX)
        else:
            parsed = core.try_cast(TimestampNTZType())
            text_ok = t.rlike(_DT_NOT_YEAR0_RX)
        def text_pairs() -> list:
            pairs = [(~fmt, self.invalid)]
            if not self.null_invalid:
                pairs.append((parsed.isNull() | year0, self.zero))
            return pairs
        if not self.utc:
            return guard(text_ok, parsed, x, self.spark_type), lambda: checks(x, *text_pairs())
        # TIMESTAMP also takes seconds since the epoch (kinds int and decimal)
        is_epoch = int_like(x) | tagged(x, "$dec")
        e_text, e_bad = _decimal_text(x)
        micros = (e_text.try_cast(DecimalType(18, 6)) * _lit(1000000)).try_cast(LongType())
        k = 10 ** (6 - self.fsp)
        e_ok = is_epoch & (micros > 0) & (micros <= _MAX_EPOCH_MICROS)
        value = (F.when(e_ok, F.timestamp_micros(micros - micros % k))
                 .when(text_ok, parsed)
                 .otherwise(null_like(x, self.spark_type)))
        def classify() -> SparkColumn:
            e_error = checks(None, (e_bad, self.invalid),
                             (micros.isNull() | (micros < 0) | (micros > _MAX_EPOCH_MICROS), self.range))
            return error_case(x).when(is_epoch, e_error).otherwise(checks(None, *text_pairs()))
        return value, classify

    def arrow(self, arrow_type: Any) -> Kernel | None:
        """Without a time zone (DATETIME: ``TimestampNTZType``): texts ``YYYY-MM-DD
        hh:mm:ss[.f]`` of a real date and time (Arrow's cast rejects the others, as Python's
        ``datetime`` does), not year 0000, with at most ``fsp`` fraction digits (no truncation
        to do)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if self.utc or not pa.types.is_timestamp(arrow_type) or arrow_type.tz is not None:
            return None
        fraction = rf"(\.[0-9]{{1,{self.fsp}}})?" if self.fsp else ""
        pattern = rf"^{ak.YEAR_TEXT}-[0-9]{{2}}-[0-9]{{2}} [0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}}{fraction}$"

        def convert(texts):
            if not ak.all_match(texts, pattern):
                return None
            try:
                return pc.cast(texts, arrow_type)
            except pa.ArrowInvalid:  # no real date or time: the rule's null or error, per value
                return None
        return convert



class TimeRule(ColumnRule):
    """``TIME(fsp)``: ``timedelta``/``time`` values and text ``[-]h:mm:ss[.f{1,6}]``, within
    MySQL's range ±838:59:59 (minute or second > 59, or beyond the range → error), the
    fraction truncated toward zero to ``fsp`` digits.  ``micros=False`` →
    ``DayTimeIntervalType(DAY, SECOND)``; ``micros=True`` → ``LongType`` microseconds."""

    MAX_MICROS = 3020399 * 1_000_000  # 838:59:59

    def __init__(self, label: str, fsp: int, micros: bool = False):
        super().__init__(label)
        self.fsp, self.micros = fsp, micros
        self.spark_type = LongType() if micros else DayTimeIntervalType(DayTimeIntervalType.DAY,
                                                                       DayTimeIntervalType.SECOND)
        self.range = f"out of range for {label}"

    def python(self) -> Callable[[Any], Any]:
        invalid, rng, micros_out, maxu = self.invalid, self.range, self.micros, self.MAX_MICROS
        k = 10 ** (6 - self.fsp)
        timedelta = _dt.timedelta

        def convert(v: Any) -> Any:
            if type(v) is timedelta:
                u = v // _ONE_US
            else:
                kind, c = classify(v)
                if kind == "time" and type(c) is timedelta:
                    u = c // _ONE_US
                elif kind in ("time", "str"):
                    m = _TIME.match(c)
                    if not m:
                        raise Fail(invalid)
                    h, mi, s = int(m[2]), int(m[3]), int(m[4])
                    if mi > 59 or s > 59 or h > 838:
                        raise Fail(rng)
                    u = ((h * 60 + mi) * 60 + s) * 1_000_000 + int((m[5] or "").ljust(6, "0"))
                    if m[1]:
                        u = -u
                else:
                    raise Fail(invalid)
            if u > maxu or u < -maxu:
                raise Fail(rng)
            u = u - u % k if u >= 0 else -((-u) - (-u) % k)
            return u if micros_out else timedelta(microseconds=u)
        return convert

    def spark(self, x: SparkColumn) -> tuple[SparkColumn, SparkColumn]:
        t = _payload_or_plain(x, "$time")
        in_range = t.rlike(_TIME_RANGE_RX)  # implies the format
        # the fraction truncated to fsp digits as text, then Spark's own [-]h:mm:ss[.f] parser
        if self.fsp == 0:
            core = F.substring_index(t, ".", 1)
        elif self.fsp < 6:
            core = F.regexp_replace(t, rf"(\.[0-9]{{{self.fsp}}})[0-9]*$", "$1")
        else:
            core = t
        interval = core.try_cast(DayTimeIntervalType(DayTimeIntervalType.HOUR, DayTimeIntervalType.SECOND))
        if self.micros:
            converted = F.unix_micros(F.timestamp_micros(_lit(0)) + interval)
        else:
            converted = interval.cast(self.spark_type)
        return (guard(in_range, converted, x, self.spark_type),
                lambda: checks(x, (~t.rlike(_TIME_RX), self.invalid), (~in_range, self.range)))


class TextRule(ColumnRule):
    """Character data: ``str`` and JSON text (kind json) pass, ``bytes`` are decoded with
    ``codec``; ``rstrip``: trailing spaces removed (``CHAR``, as MySQL reads it back without
    ``PAD_CHAR_TO_FULL_LENGTH``)."""

    spark_type = StringType()

    def __init__(self, label: str, codec: TextCodec, rstrip: bool = False):
        super().__init__(label)
        self.codec, self.rstrip = codec, rstrip

    def python(self) -> Callable[[Any], Any]:
        invalid, rstrip = self.invalid, self.rstrip
        decode = self.codec.python()

        def convert(v: Any) -> str:
            t = type(v)
            if t is str:
                s = v
            elif t is bytes:
                s = decode(v)
            else:
                kind, c = classify(v)
                if kind == "str" or kind == "json":
                    s = c
                elif kind == "bytes":
                    s = decode(c)
                else:
                    raise Fail(invalid)
            return s.rstrip(" ") if rstrip else s
        return convert

    def spark(self, x: SparkColumn) -> tuple[SparkColumn, SparkColumn]:
        plain, is_b64 = ~tagged(x), tagged(x, "$b64")
        b = _b64(x)
        decoded, ok = self.codec.spark(b)
        value = (F.when(plain & ~number_like(x), x)
                 .when(tagged(x, "$s"), unescaped(x, "$s"))
                 .when(tagged(x, "$json"), unescaped(x, "$json"))
                 .when(is_b64 & ok, decoded)
                 .otherwise(null_like(x, StringType())))
        def classify() -> SparkColumn:
            return (error_case(x)
                    .when(plain, F.when(number_like(x), self.invalid))
                    .when(is_b64, checks(None, (b.isNull(), self.invalid), (~ok, _codec_error(self.codec))))
                    .when(~(tagged(x, "$s") | tagged(x, "$json")), reason(x, self.invalid)))
        return (F.rtrim(value) if self.rstrip else value), classify

    def arrow(self, arrow_type: Any) -> Kernel | None:
        """Plain strings (no tag, not a number) as they are, ``$s`` payloads, and ``$b64``
        payloads decoded by ``base64.b64decode(validate=True)`` then the codec
        (``TextCodec.python``: per value, in Python, as the memo would, without its
        bookkeeping); trailing spaces removed for ``rstrip`` (``CHAR``).  Declines a chunk with
        another text (a number, another tag, the absent marker) or bytes its codec refuses (the
        row pass's error)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        decode, unbase64, rstrip, no = self.codec.python(), ak.UNBASE64, self.rstrip, pa.scalar(False, pa.bool_())

        def convert(texts):
            plain = pc.invert(pc.or_(pc.starts_with(texts, '{"$'), pc.match_substring_regex(texts, ak.NUMBER_TEXT)))
            out = texts
            if not ak.all_true(plain):
                strs = pc.fill_null(pc.match_substring_regex(texts, ak.STR_TEXT), no)
                blobs = pc.fill_null(pc.match_substring_regex(texts, ak.B64_TEXT), no)
                if not ak.all_true(pc.or_(plain, pc.or_(strs, blobs))):
                    return None
                out = pc.if_else(strs, pc.utf8_slice_codeunits(texts, 7, -2), texts)
                if ak.any_true(blobs):
                    payloads = pc.utf8_slice_codeunits(texts.filter(blobs), 9, -2).to_pylist()
                    try:
                        decoded = [decode(unbase64(p)) for p in payloads]
                    except Exception:  # bad padding (binascii.Error), ``Fail``: the row pass's error
                        return None
                    out = pc.replace_with_mask(out, blobs, pa.array(decoded, out.type))
            if rstrip:
                out = pc.utf8_rtrim(out, characters=" ")
            return out.cast(arrow_type)
        return convert



class BinaryRule(ColumnRule):
    """Binary data (``bytes`` only), through ``binary_handling``.  ``pad_to``: a fixed length
    (``BINARY(n)``): shorter values are right-padded with 0x00 (the binlog drops trailing
    zero bytes, MySQL reads them back), longer ones → error."""

    def __init__(self, label: str, binary_handling: str = "bytes", pad_to: int | None = None):
        super().__init__(label)
        self.pad_to = pad_to
        self.spark_type, self._py_out, self._spark_out = binary_output(binary_handling)
        self.range = f"longer than {label}"

    def python(self) -> Callable[[Any], Any]:
        invalid, rng, pad, out = self.invalid, self.range, self.pad_to, self._py_out

        def convert(v: Any) -> Any:
            if type(v) is not bytes:
                kind, v = classify(v)
                if kind != "bytes":
                    raise Fail(invalid)
            if pad is not None:
                if len(v) > pad:
                    raise Fail(rng)
                v = v.ljust(pad, b"\x00")
            return out(v)
        return convert

    def spark(self, x: SparkColumn) -> tuple[SparkColumn, SparkColumn]:
        b = _b64(x)
        ok = tagged(x, "$b64") & b.isNotNull()
        pairs = [(~tagged(x, "$b64") | b.isNull(), self.invalid)]
        if self.pad_to is not None:
            pairs.append((F.length(b) > self.pad_to, self.range))
            ok = ok & (F.length(b) <= self.pad_to)
            b = _pad_binary("rpad", b, self.pad_to)
        return guard(ok, self._spark_out(b), x, self.spark_type), lambda: checks(x, *pairs)



def _label_text(x: SparkColumn, codec: TextCodec) -> tuple[SparkColumn, SparkColumn, SparkColumn, SparkColumn]:
    """``(text, b, ok, is_b64)`` of a raw label value that is not an int: the string itself
    (plain or ``$s``) or its bytes decoded (``b`` the bytes, ``ok`` whether they decode)."""
    is_b64 = tagged(x, "$b64")
    b = _b64(x)
    decoded, ok = codec.spark(b)
    # decoding only where the bytes are valid (a malformed UTF-16/32 decode would throw)
    text = F.when(~tagged(x), x).when(tagged(x, "$s"), unescaped(x, "$s")).when(is_b64 & ok, decoded)
    return text, b, ok, is_b64


class EnumRule(ColumnRule):
    """``ENUM``: an int is the 1-based index (0 → ``''``, MySQL's error value; a negative
    index is a signed reading and gets ``wrap`` added: 256 for a 1-byte index, 65536 for
    2); a string must be a label (or ``''``); bytes are decoded with ``codec`` first."""

    spark_type = StringType()

    def __init__(self, label: str, labels: Sequence[str], codec: TextCodec):
        super().__init__(label)
        self.labels = tuple(labels)
        self.codec = codec
        self.wrap = 256 if len(self.labels) < 256 else 65536
        self.range = "enum index out of range"
        self.not_label = "not a label of the enum"

    def python(self) -> Callable[[Any], Any]:
        labels0 = ("",) + self.labels
        valid = frozenset(labels0)
        n, wrap, half = len(self.labels), self.wrap, self.wrap // 2
        invalid, rng, not_label = self.invalid, self.range, self.not_label
        decode = self.codec.python()

        def label(s: str) -> str:
            if s in valid:
                return s
            raise Fail(not_label)

        def convert(v: Any) -> str:
            t = type(v)
            if t is str:
                return label(v)
            kind, c = (("int", v) if t is int else classify(v))
            if kind == "int":
                if c < 0:
                    if c < -half:
                        raise Fail(rng)
                    c += wrap
                if c > n:
                    raise Fail(rng)
                return labels0[c]
            if kind == "str":
                return label(c)
            if kind == "bytes":
                return label(decode(c))
            raise Fail(invalid)
        return convert

    def spark(self, x: SparkColumn) -> tuple[SparkColumn, SparkColumn]:
        labels0 = [""] + list(self.labels)
        n_labels, half = len(self.labels), self.wrap // 2
        is_int = int_like(x)
        n = only(is_int, x).try_cast(LongType())
        index = F.pmod(n, _lit(self.wrap))
        text, b, ok, is_b64 = _label_text(x, self.codec)
        not_number = tagged(x) | ~number_like(x)
        int_ok = is_int & (n >= -half) & (n <= n_labels) & (index <= n_labels)
        label_array = F.array(*[_lit(v) for v in labels0])
        by_index = F.try_element_at(label_array, (index + 1).try_cast(IntegerType()))
        # a text is its own value if it is a label: ``text`` stands once in the expression, as
        # the one element intersected with the labels (text of undecodable bytes is null: no
        # label; no higher-order function, see convert._interpreted_projection)
        by_label = F.try_element_at(F.array_intersect(F.array(text), label_array), _lit(1))
        value = F.when(int_ok, by_index).when(not_number, by_label).otherwise(null_like(x, StringType()))
        def classify() -> SparkColumn:
            return (error_case(x)
                    .when(is_int, F.when(n.isNull() | (n < -half) | (n > n_labels) | (index > n_labels), self.range))
                    .when(is_b64 & b.isNull(), reason(x, self.invalid))
                    .when(is_b64 & ~ok, reason(x, _codec_error(self.codec)))
                    .when(text.isNull() | ~not_number, reason(x, self.invalid))
                    .when(~text.isin(labels0), reason(x, self.not_label)))
        return value, classify



class SetRule(ColumnRule):
    """``SET``: an int is the bitmask (bit i → the i-th label; a negative mask is a signed
    reading and gets 2^(8·``mask_bytes``) added); a string is labels joined by ``,`` (``''``
    is the empty set; each must be a member); bytes are decoded with ``codec`` first.  The
    value is the list of labels in definition order (``array<string>``)."""

    spark_type = ArrayType(StringType())
    _SENTINEL = ","  # no SET label contains a comma (MySQL manual 13.3.6)

    def __init__(self, label: str, labels: Sequence[str], codec: TextCodec, mask_bytes: int):
        super().__init__(label)
        self.labels = tuple(labels)
        self.codec = codec
        self.wrap = 1 << (8 * mask_bytes)
        self.range = "set bitmask out of range"
        self.not_member = "not a member of the set"

    def python(self) -> Callable[[Any], Any]:
        labels, n, wrap, half = self.labels, len(self.labels), self.wrap, self.wrap // 2
        members = frozenset(labels)
        invalid, rng, not_member = self.invalid, self.range, self.not_member
        decode = self.codec.python()
        bits = [(1 << i, label) for i, label in enumerate(labels)]

        def from_text(s: str) -> list[str]:
            if s == "":
                return []
            parts = set(s.split(","))
            if not parts <= members:
                raise Fail(not_member)
            return [label for label in labels if label in parts]

        def convert(v: Any) -> list[str]:
            kind, c = (("int", v) if type(v) is int else classify(v))
            if kind == "int":
                if c < 0:
                    if c < -half:
                        raise Fail(rng)
                    c += wrap
                if c >> n:
                    raise Fail(rng)
                return [label for bit, label in bits if c & bit]
            if kind == "str":
                return from_text(c)
            if kind == "bytes":
                return from_text(decode(c))
            raise Fail(invalid)
        return convert

    def spark(self, x: SparkColumn) -> tuple[SparkColumn, SparkColumn]:
        labels, n = self.labels, len(self.labels)
        empty = F.array().cast(ArrayType(StringType()))
        is_int = int_like(x)
        big = self.wrap > (1 << 32)  # an 8-byte mask: beyond a long's range, exact decimals

        def num(v: int) -> SparkColumn:
            return _dec(v) if big else _lit(v)

        d = only(is_int, x).try_cast(DecimalType(20, 0) if big else LongType())
        # within range, pmod gives the unsigned mask; as a long, bit 63 reads as the sign bit
        mask = F.pmod(d, num(self.wrap))
        text, b, ok, is_b64 = _label_text(x, self.codec)
        not_number = tagged(x) | ~number_like(x)
        parts = F.split(text, ",")
        label_array = F.array(*[_lit(v) for v in labels]) if labels else empty
        members_ok = (text == "") | (F.size(F.array_except(parts, label_array)) == 0)
        int_ok = is_int & (d >= num(-(self.wrap // 2))) & (d < num(1 << n)) & (mask < num(1 << n))
        text_ok = text.isNotNull() & not_number & (~is_b64 | ok) & members_ok
        def classify() -> SparkColumn:
            return (error_case(x)
                    .when(is_int, F.when(d.isNull() | (d < num(-(self.wrap // 2))) | (d >= num(1 << n))
                                         | (mask >= num(1 << n)), self.range))
                    .when(is_b64 & b.isNull(), reason(x, self.invalid))
                    .when(is_b64 & ~ok, reason(x, _codec_error(self.codec)))
                    .when(text.isNull() | ~not_number, reason(x, self.invalid))
                    .when(~members_ok, reason(x, self.not_member)))
        if not labels:
            return F.when(int_ok | text_ok, empty).otherwise(null_like(x, self.spark_type)), classify
        # the mask as a long (an 8-byte mask: bit 63 read as the sign bit)
        mask64 = ((F.pmod(mask + _dec(1 << 63), _dec(1 << 64)) - _dec(1 << 63)).try_cast(LongType()) if big
                  else mask)

        # the mask's labels: the labels whose bit is set, in definition order (no higher-order
        # function, see convert._interpreted_projection)
        one = _lit(1).cast(LongType())
        by_mask = F.flatten(F.array(*[F.when(mask64.bitwiseAND(F.call_function("shiftleft", one, _lit(i))) != 0,
                                             F.array(_lit(v))).otherwise(empty) for i, v in enumerate(labels)]))
        # labels of a text in definition order, each once: the labels that are among its parts,
        # when every part is a label (text of undecodable bytes is null: no value)
        by_text = F.when(text.isNotNull() & members_ok, F.array_intersect(label_array, parts))
        value = F.when(int_ok, by_mask).when(not_number, by_text).otherwise(null_like(x, self.spark_type))
        return value, classify


# --------------------------------------------------------------------------------------------
# What a dialect provides
# --------------------------------------------------------------------------------------------


def spark_type_name(dt: DataType) -> str:
    """A Spark type as the docs name it: ``LongType``, ``DecimalType(20,0)``,
    ``ArrayType(StringType)``, ``DayTimeIntervalType(DAY, SECOND)``."""
    if isinstance(dt, DecimalType):
        return f"DecimalType({dt.precision},{dt.scale})"
    if isinstance(dt, ArrayType):
        return f"ArrayType({spark_type_name(dt.elementType)})"
    if isinstance(dt, DayTimeIntervalType):
        names = DayTimeIntervalType._fields  # type: ignore[attr-defined]
        return f"DayTimeIntervalType({names[dt.startField].upper()}, {names[dt.endField].upper()})"
    return type(dt).__name__


@dataclass(frozen=True)
class MappingRow:
    """One row of a dialect's documented type mapping: ``native`` type (as written in DDL),
    ``spark`` type (``spark_type_name`` under the default options), and ``notes`` (raw forms
    accepted, options that change it)."""

    native: str
    spark: str
    notes: str = ""


class SparkRules:
    """A dialect's Spark type rules (returned by ``Dialect.spark_rules()``).  Subclass and
    implement ``rule``; list every native type in ``mapping`` (the documentation table)."""

    def rule(self, column: Any, options: Any, table: Any = None) -> ColumnRule:  # pragma: no cover
        """The ``ColumnRule`` for ``column`` (a ``ddlcore.Column``) of ``table`` under
        ``options`` (``SparkOptions``).  Raises ``ValueError`` for a type it cannot map."""
        raise NotImplementedError

    def mapping(self) -> list[MappingRow]:  # pragma: no cover
        """Every native type and its Spark type under the default options."""
        raise NotImplementedError
