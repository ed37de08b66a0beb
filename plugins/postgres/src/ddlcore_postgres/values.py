"""Column rules for PostgreSQL's text output (what pgoutput sends and ``SELECT`` shows), each
with its two faces (``ddlcore.spark.rules``: a Python closure and a JVM-only Spark
expression that fail with the same reasons).

The capture writes every value as the server's text output of its type (a ``str`` raw value:
a plain JSON string, or ``{"$s": ...}`` when it looks like a number), so every rule here first
takes that text (``pg_text`` / ``text_of``) and reads it as PostgreSQL 15 writes it:

================  =============================================================================
type              text output (manual section)
================  =============================================================================
integers          ``-12`` (8.1.1)
numeric           plain notation, ``NaN``, ``Infinity``, ``-Infinity`` (8.1.2)
real / double     shortest exact text, ``NaN``, ``Infinity``, ``-Infinity`` (8.1.3)
boolean           ``t`` / ``f`` (8.6)
date              ``YYYY-MM-DD`` (DateStyle ISO), ``infinity``, ``-infinity``, ``... BC`` (8.5.2)
timestamp[tz]     ``YYYY-MM-DD HH:MM:SS[.ffffff]``, with ``+HH[:MM[:SS]]`` for timestamptz in
                  the session's TimeZone (8.5.2); ``infinity``, BC
bytea             ``\\x`` and hex digits (bytea_output hex, 8.4.1)
money             ``$1,234.56`` / ``-$1,234.56`` under lc_monetary C or en_US (8.2)
bit(1)            ``0`` / ``1`` (8.10)
arrays            ``{1,2,NULL}``, ``{"a b","c\\"d"}``, ``{{1,2},{3,4}}`` (8.15.6)
================  =============================================================================

A value that has no Spark value (``NaN`` numeric, ``infinity`` dates, BC dates, arrays with
explicit bounds, a money text in another locale) fails with a reason naming it, so the
pipeline quarantines the row instead of inventing a value.
"""

from __future__ import annotations

import datetime as _dt
import re
import struct
from decimal import Decimal, InvalidOperation
from typing import Any, Callable

from ddlcore.spark.rules import (ColumnRule, DecimalRule, Fail, IntegerRule, binary_output, checks, classify,
                                 error_case, guard, number_like, only, reason, tagged, unescaped)
from pyspark.sql import Column as SparkColumn
from pyspark.sql import functions as F
from pyspark.sql.types import (ArrayType, BooleanType, DataType, DateType, DecimalType, DoubleType, FloatType,
                               StringType, TimestampNTZType, TimestampType)

__all__ = ["pg_text", "text_of", "PgTextRule", "PgIntegerRule", "PgNumericRule", "PgFloatRule", "PgBoolRule",
           "PgDateRule", "PgTimestampRule", "PgByteaRule", "PgMoneyRule", "PgBitRule", "PgArrayRule",
           "parse_array"]

_UTC = _dt.timezone.utc


def pg_text(v: Any, invalid: str) -> str:
    """The text of a ``str`` raw value; ``Fail(invalid)`` for any other kind."""
    if type(v) is str:
        return v
    kind, c = classify(v)
    if kind != "str":
        raise Fail(invalid)
    return c


def text_of(x: SparkColumn) -> SparkColumn:
    """The text of a ``str`` raw value's text form (``{"$s": ...}`` unwrapped); null for any
    other kind (other tags; a plain number is an int or float, not text)."""
    return F.when(tagged(x, "$s"), unescaped(x, "$s")).when(~tagged(x) & ~number_like(x), x)


class _PgRule(ColumnRule):
    """A rule over the text; subclasses implement ``parse`` (Python) and ``convert`` (Spark:
    ``(value, [(bad, reason), ...])`` over the text ``s``)."""

    def parse(self, s: str) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def convert(self, s: SparkColumn) -> tuple[SparkColumn, list[tuple[SparkColumn, str]]]:  # pragma: no cover
        raise NotImplementedError

    def python(self) -> Callable[[Any], Any]:
        invalid, parse = self.invalid, self.parse
        return lambda v: parse(pg_text(v, invalid))

    def value_of_text(self, s: SparkColumn) -> SparkColumn:
        """The Spark value of text ``s`` (an array element): null where ``parse`` fails."""
        return self.convert(s)[0]

    def text_of_null(self, s: SparkColumn) -> SparkColumn:
        """Whether text ``s`` converts to null without failing (an array element)."""
        return F.lit(False)

    def spark(self, x: SparkColumn) -> tuple[SparkColumn, SparkColumn]:
        s = text_of(x)
        value, bad = self.convert(s)
        return value, lambda: checks(x, (s.isNull(), self.invalid), *bad)


class PgTextRule(_PgRule):
    """Text kept as the server wrote it (``text``, ``varchar``, ``bpchar`` with its padding,
    enums, ``uuid``, ``json``/``jsonb``, ``inet``, ``time``, ``interval`` ...)."""

    spark_type = StringType()

    def parse(self, s: str) -> str:
        return s

    def convert(self, s: SparkColumn) -> tuple[SparkColumn, list]:
        return s, []


class _Wrapped(_PgRule):
    """A core rule fed with the text once it has the shape ``pattern``."""

    inner: ColumnRule
    pattern: str
    to_raw: Callable[[str], Any]

    def parse(self, s: str) -> Any:
        if not re.fullmatch(self.pattern, s):
            raise Fail(self.shape_reason(s))
        return self._inner(self.to_raw(s))

    def shape_reason(self, s: str) -> str:
        return self.invalid

    @property
    def _inner(self) -> Callable[[Any], Any]:
        fn = getattr(self, "_inner_fn", None)
        if fn is None:
            fn = self.inner.python()
            self._inner_fn = fn
        return fn

    #: how the shaped text is handed to the core rule: as an int's text form, or tagged
    inner_tag: str | None = None

    def spark(self, x: SparkColumn) -> tuple[SparkColumn, SparkColumn]:
        s = text_of(x)
        shaped = only(s.rlike("^(?:" + self.pattern + ")$"), s)
        fed = shaped if self.inner_tag is None else F.concat(F.lit('{"' + self.inner_tag + '":"'), shaped, F.lit('"}'))
        value, inner_classify = self.inner.spark(fed)
        return value, lambda: (error_case(x).when(s.isNull(), reason(x, self.invalid))
                               .when(shaped.isNull(), self.shape_reason_spark(s, x))
                               .otherwise(inner_classify()))

    def shape_reason_spark(self, s: SparkColumn, x: SparkColumn) -> SparkColumn:
        return reason(x, self.invalid)

    def value_of_text(self, s: SparkColumn) -> SparkColumn:
        shaped = only(s.rlike("^(?:" + self.pattern + ")$"), s)
        fed = shaped if self.inner_tag is None else F.concat(F.lit('{"' + self.inner_tag + '":"'), shaped, F.lit('"}'))
        return self.inner.spark(fed)[0]


class PgIntegerRule(_Wrapped):
    """``smallint`` / ``integer`` / ``bigint`` (manual 8.1.1)."""

    pattern = r"-?[0-9]+"

    def __init__(self, label: str, bits: int, spark_type: DataType):
        super().__init__(label)
        self.inner = IntegerRule(label, -(1 << (bits - 1)), (1 << (bits - 1)) - 1, None, spark_type)
        self.invalid = self.inner.invalid
        self.spark_type = spark_type
        self.to_raw = int


_SPECIAL_NUMERIC = ("NaN", "Infinity", "-Infinity")


class PgNumericRule(_Wrapped):
    """``numeric(p,s)`` → ``DecimalType(p,s)`` (``decimal_handling``); unconstrained
    ``numeric`` → ``DecimalType(38,18)`` when every value has at most 20 integer and 18
    fraction digits (else the row fails: no rounding), or text.  ``NaN`` and ``±Infinity``
    have no decimal value and fail."""

    pattern = r"-?[0-9]+(?:\.[0-9]+)?"
    inner_tag = "$dec"

    def __init__(self, label: str, precision: int, scale: int, mode: str, *, limit_digits: bool = False):
        super().__init__(label)
        self.inner = DecimalRule(label, precision, scale, mode)
        self.invalid = self.inner.invalid
        self.spark_type = self.inner.spark_type
        self.to_raw = Decimal
        self.special = f"{label} value NaN or Infinity has no Spark decimal value"
        if limit_digits:
            self.pattern = r"-?[0-9]{1,20}(?:\.[0-9]{1,18})?"
            self.range = f"out of range for {label} read as decimal(38,18): more than 20 integer or 18 fraction digits"
        else:
            self.range = None

    def shape_reason(self, s: str) -> str:
        if s in _SPECIAL_NUMERIC:
            return self.special
        if self.range and re.fullmatch(r"-?[0-9]+(?:\.[0-9]+)?", s):
            return self.range
        return self.invalid

    def shape_reason_spark(self, s: SparkColumn, x: SparkColumn) -> SparkColumn:
        out = F.when(s.isin(*_SPECIAL_NUMERIC), reason(x, self.special))
        if self.range:
            out = out.when(s.rlike(r"^-?[0-9]+(?:\.[0-9]+)?$"), reason(x, self.range))
        return out.otherwise(reason(x, self.invalid))


_FLOAT_RX = r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|NaN|-?Infinity"


class PgFloatRule(_PgRule):
    """``real`` / ``double precision`` (8.1.3): ``NaN`` and ``±Infinity`` are values of
    Spark's float types too."""

    def __init__(self, label: str, single: bool):
        super().__init__(label)
        self.single = single
        self.spark_type = FloatType() if single else DoubleType()

    def parse(self, s: str) -> float:
        if not re.fullmatch(_FLOAT_RX, s):
            raise Fail(self.invalid)
        f = float(s)
        return struct.unpack("f", struct.pack("f", f))[0] if self.single else f

    def convert(self, s: SparkColumn) -> tuple[SparkColumn, list]:
        ok = s.rlike("^(?:" + _FLOAT_RX + ")$")
        return guard(ok, only(ok, s).try_cast(self.spark_type), s, self.spark_type), [(~ok, self.invalid)]


class PgBoolRule(_PgRule):
    """``boolean`` (8.6): ``t`` / ``f``."""

    spark_type = BooleanType()

    def parse(self, s: str) -> bool:
        if s not in ("t", "f"):
            raise Fail(self.invalid)
        return s == "t"

    def convert(self, s: SparkColumn) -> tuple[SparkColumn, list]:
        ok = s.isin("t", "f")
        return guard(ok, s == "t", s, BooleanType()), [(~ok, self.invalid)]


_DATE_RX = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
_TIME_RX = r"[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?"
_ZONE_RX = r"[+-][0-9]{2}(?::[0-9]{2}(?::[0-9]{2})?)?"


_INFINITIES = ("infinity", "-infinity")


class _TemporalRule(_PgRule):
    """``date`` / ``timestamp[tz]``: BC values fail; ``infinity`` / ``-infinity`` follow the
    ``temporal_infinity`` option — ``quarantine`` (fail), ``null``, or ``clamp`` to Spark's last /
    first value (``last`` / ``first``: Spark's ``DateType`` and ``TimestampNTZType`` hold years 1 to
    9999, Spark SQL reference "Data Types"; a ``TimestampType`` instant one day inside, so that
    its wall time in every session time zone is within those years).  Subclasses give ``finite`` (Python) and
    ``finite_spark`` (Spark, null for text of another shape)."""

    first: Any
    last: Any

    def __init__(self, label: str, infinity: str = "quarantine"):
        super().__init__(label)
        if infinity not in ("quarantine", "null", "clamp"):
            raise ValueError(f"temporal_infinity must be quarantine, null or clamp, not {infinity!r}")
        self.infinity = infinity
        self.produces_null = infinity == "null"
        self.unrepresentable = f"{label} value infinity or BC has no Spark value"

    def finite(self, s: str) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def finite_spark(self, s: SparkColumn) -> SparkColumn:  # pragma: no cover - abstract
        raise NotImplementedError

    def parse(self, s: str) -> Any:
        if s in _INFINITIES and self.infinity != "quarantine":
            return None if self.infinity == "null" else (self.last if s == "infinity" else self.first)
        if s in _INFINITIES or s.endswith(" BC"):
            raise Fail(self.unrepresentable)
        return self.finite(s)

    def text_of_null(self, s: SparkColumn) -> SparkColumn:
        return s.isin(*_INFINITIES) if self.infinity == "null" else F.lit(False)

    def convert(self, s: SparkColumn) -> tuple[SparkColumn, list]:
        value = self.finite_spark(s)
        if self.infinity == "quarantine":
            return value, [(s.isin(*_INFINITIES) | s.endswith(" BC"), self.unrepresentable),
                           (value.isNull(), self.invalid)]
        if self.infinity == "clamp":
            def bound(v: Any) -> SparkColumn:  # not a constant (see ``ddlcore.spark.rules.guard``)
                return F.when(s.isNotNull(), F.lit(self.spark_text(v)).try_cast(self.spark_type))
            value = F.when(s == "infinity", bound(self.last)).when(s == "-infinity", bound(self.first)).otherwise(value)
        return value, [(s.endswith(" BC"), self.unrepresentable),
                       (value.isNull() & ~s.isin(*_INFINITIES), self.invalid)]

    def spark_text(self, v: Any) -> str:
        """The text Spark casts to the bound ``v``."""
        return v.isoformat(" ")


class PgDateRule(_TemporalRule):
    """``date`` (8.5, DateStyle ISO): ``YYYY-MM-DD``; BC dates fail, ``infinity`` follows
    ``temporal_infinity``."""

    spark_type = DateType()
    first, last = _dt.date(1, 1, 1), _dt.date(9999, 12, 31)

    def spark_text(self, v: Any) -> str:
        return v.isoformat()

    def finite(self, s: str) -> _dt.date:
        if not re.fullmatch(_DATE_RX, s):
            raise Fail(self.invalid)
        try:
            return _dt.date.fromisoformat(s)
        except ValueError:
            raise Fail(self.invalid) from None

    def finite_spark(self, s: SparkColumn) -> SparkColumn:
        return only(s.rlike("^" + _DATE_RX + "$"), s).try_cast(DateType())


class PgTimestampRule(_TemporalRule):
    """``timestamp`` → ``TimestampNTZType``; ``timestamptz`` (text in the session's TimeZone,
    with its offset) → ``TimestampType`` (UTC instant).  BC fails, ``infinity`` follows
    ``temporal_infinity``."""

    def __init__(self, label: str, tz: bool, infinity: str = "quarantine"):
        super().__init__(label, infinity)
        self.tz = tz
        self.spark_type = TimestampType() if tz else TimestampNTZType()
        self.rx = _DATE_RX + " " + _TIME_RX + (_ZONE_RX if tz else "")
        if tz:  # instants every time zone shows within years 1-9999 (PySpark's collect() reads them back)
            self.first = _dt.datetime(1, 1, 2, tzinfo=_UTC)
            self.last = _dt.datetime(9999, 12, 30, 23, 59, 59, 999999, tzinfo=_UTC)
        else:
            self.first, self.last = _dt.datetime(1, 1, 1), _dt.datetime(9999, 12, 31, 23, 59, 59, 999999)

    def spark_text(self, v: Any) -> str:
        return v.replace(tzinfo=None).isoformat(" ") + ("+00" if self.tz else "")

    def finite(self, s: str) -> _dt.datetime:
        m = re.fullmatch(f"({_DATE_RX} {_TIME_RX})({_ZONE_RX})" if self.tz else f"({_DATE_RX} {_TIME_RX})()", s)
        if m is None:
            raise Fail(self.invalid)
        body, zone = m.group(1), m.group(2) or None
        try:
            d = _dt.datetime.fromisoformat(body)
        except ValueError:
            raise Fail(self.invalid) from None
        if zone is None:
            return d
        sign = -1 if zone[0] == "-" else 1
        parts = [int(p) for p in zone[1:].split(":")] + [0, 0]
        offset = _dt.timedelta(hours=parts[0], minutes=parts[1], seconds=parts[2])
        return (d - sign * offset).replace(tzinfo=_UTC)

    def finite_spark(self, s: SparkColumn) -> SparkColumn:
        # Spark reads "+05" / "+05:30" offsets; seconds in an offset (historic zones) too
        return only(s.rlike("^" + self.rx + "$"), s).try_cast(self.spark_type)


class PgByteaRule(_PgRule):
    """``bytea`` in the hex format (8.4.1, ``bytea_output = hex``) → bytes (``binary_handling``)."""

    def __init__(self, label: str, binary_handling: str):
        super().__init__(label)
        self.spark_type, self._out_py, self._out_spark = binary_output(binary_handling)

    def parse(self, s: str) -> Any:
        if not re.fullmatch(r"\\x(?:[0-9a-fA-F]{2})*", s):
            raise Fail(self.invalid)
        return self._out_py(bytes.fromhex(s[2:]))

    def convert(self, s: SparkColumn) -> tuple[SparkColumn, list]:
        ok = s.rlike(r"^\\x(?:[0-9a-fA-F]{2})*$")
        b = F.unhex(only(ok, s).substr(F.lit(3), F.length(s)))
        return guard(ok, self._out_spark(b), s, self.spark_type), [(~ok, self.invalid)]


class PgMoneyRule(_PgRule):
    """``money`` (8.2) under ``lc_monetary`` C or en_US: ``$1,234.56`` / ``-$1,234.56`` →
    ``DecimalType(19,2)`` (an int64 of cents); another locale's text fails."""

    spark_type = DecimalType(19, 2)
    rx = r"-?\$[0-9]{1,3}(?:,[0-9]{3})*\.[0-9]{2}"

    def parse(self, s: str) -> Decimal:
        if not re.fullmatch(self.rx, s):
            raise Fail(self.invalid)
        return Decimal(s.replace("$", "").replace(",", ""))

    def convert(self, s: SparkColumn) -> tuple[SparkColumn, list]:
        ok = s.rlike("^" + self.rx + "$")
        value = F.regexp_replace(only(ok, s), r"[$,]", "").try_cast(self.spark_type)
        return guard(ok, value, s, self.spark_type), [(~ok, self.invalid)]


class PgBitRule(_PgRule):
    """``bit(1)`` → boolean (``1`` is true)."""

    spark_type = BooleanType()

    def parse(self, s: str) -> bool:
        if s not in ("0", "1"):
            raise Fail(self.invalid)
        return s == "1"

    def convert(self, s: SparkColumn) -> tuple[SparkColumn, list]:
        ok = s.isin("0", "1")
        return guard(ok, s == "1", s, BooleanType()), [(~ok, self.invalid)]


# -- arrays (8.15.6) ---------------------------------------------------------------------------

_TOKEN_RX = r'"(?:[^"\\]|\\.)*"|[^,{}"]+'
_ELEMENTS_RX = r'(?:"(?:[^"\\]|\\.)*"|[^,{}"]+)'
_LIST_RX = r"\{(?:" + _ELEMENTS_RX + r"(?:," + _ELEMENTS_RX + r")*)?\}"


def parse_array(s: str, dims: int) -> list:
    """PostgreSQL's array text of ``dims`` dimensions → nested lists of element texts
    (``None`` for ``NULL``).  Raises ``ValueError`` for text of another shape (explicit
    bounds ``[1:3]={...}``, a wrong depth)."""
    if dims == 1:
        if not re.fullmatch(_LIST_RX, s):
            raise ValueError("not a one-dimensional array")
        return [_element(t) for t in re.findall(_TOKEN_RX, s[1:-1])]
    if not (s.startswith("{") and s.endswith("}")):
        raise ValueError("not an array")
    inner = s[1:-1]
    if inner == "":
        return []
    groups = re.findall(r"\{[^{}]*\}" if dims == 2 else r"\{.*?\}(?=,\{|$)", inner)
    if ",".join(groups) != inner:
        raise ValueError("not an array of that depth")
    return [parse_array(g, dims - 1) for g in groups]


def _element(token: str) -> str | None:
    if token.startswith('"'):
        return re.sub(r"\\(.)", r"\1", token[1:-1])
    return None if token == "NULL" else token


class PgArrayRule(ColumnRule):
    """An array of ``element`` values (one or two dimensions; an array column of more
    dimensions is kept as text by ``spark_types``): ``{1,2,NULL}`` → ``[1, 2, None]``.  An
    element the element rule rejects fails the whole value, naming the element's rule."""

    def __init__(self, label: str, element: "_PgRule", dims: int):
        super().__init__(label)
        if dims not in (1, 2):
            raise ValueError("PgArrayRule handles one or two dimensions")
        self.element, self.dims = element, dims
        t: DataType = element.spark_type
        for _ in range(dims):
            t = ArrayType(t, True)
        self.spark_type = t
        self.bad_element = f"an element is not a valid {element.label}"

    def python(self) -> Callable[[Any], Any]:
        invalid, bad, dims = self.invalid, self.bad_element, self.dims
        convert = self.element.python()

        def one(e: str | None) -> Any:
            if e is None:
                return None
            try:
                return convert(e)
            except Fail:
                raise Fail(bad) from None

        def walk(v: Any, d: int) -> list:
            return [one(e) for e in v] if d == 1 else [walk(g, d - 1) for g in v]

        def run(v: Any) -> list:
            s = pg_text(v, invalid)
            try:
                parsed = parse_array(s, dims)
            except ValueError:
                raise Fail(invalid) from None
            return walk(parsed, dims)
        return run

    def _one_dim(self, s: SparkColumn) -> tuple[SparkColumn, SparkColumn]:
        """``(values, all elements converted)`` of a one-dimensional array text ``s``."""
        tokens = F.regexp_extract_all(F.substring(s, 2, 2147483647), F.lit(_TOKEN_RX), 0)
        el = self.element

        def item(t: SparkColumn) -> SparkColumn:
            text = (F.when(t.startswith('"'), F.regexp_replace(t.substr(F.lit(2), F.length(t) - 2), r"\\(.)", "$1"))
                    .when(t != "NULL", t))
            value = el.value_of_text(text)
            return F.struct((text.isNull() | el.text_of_null(text)).alias("n"), value.alias("v"))

        pairs = F.transform(tokens, item)
        ok = ~F.exists(pairs, lambda p: p["v"].isNull() & ~p["n"])
        return F.transform(pairs, lambda p: p["v"]), ok

    def spark(self, x: SparkColumn) -> tuple[SparkColumn, SparkColumn]:
        s = text_of(x)
        if self.dims == 1:
            shaped = s.rlike("^" + _LIST_RX + "$")
            values, ok = self._one_dim(only(shaped, s))
        else:
            inner = F.substring(s, 2, 2147483647)
            inner = inner.substr(F.lit(1), F.length(inner) - 1)
            groups = F.regexp_extract_all(inner, F.lit(r"\{[^{}]*\}"), 0)
            shaped = (s.startswith("{") & s.endswith("}")
                      & (F.array_join(groups, ",") == inner)
                      & F.forall(groups, lambda g: g.rlike("^" + _LIST_RX + "$")))
            conv = F.transform(groups, lambda g: F.struct(*[c.alias(n) for c, n in zip(self._one_dim(g), ("v", "ok"))]))
            values = F.transform(conv, lambda c: c["v"])
            ok = F.forall(conv, lambda c: c["ok"])
        value = F.when(shaped & ok, values)
        return value, lambda: checks(x, (s.isNull() | ~shaped, self.invalid), (~ok, self.bad_element))
