"""Staged row images converted a column at a time with Arrow's compute kernels.

The driver-side conversion (``ddlcore.spark.driver``) reads a conversion group's staged rows as
Arrow tables of ``CHUNK_ROWS`` rows: each image (``after``, ``before``) a ``list<string>``
column holding its values' texts as Spark read them.  ``convert_chunk`` turns such a chunk
(rows of the group's versions, which share one conversion) into their row table
(``driver.output_struct``'s Arrow schema) a column at a time, with no Python object per row
for the columns with a kernel, or declines (``None``) when some row needs the row pass: an
image with the wrong number of values, a value its column does not convert, the absent
marker.  The caller then converts the chunk row by row (``driver.convert_rows``), which gives
those rows' errors and absent names.

Each column is converted by the function ``column_converter`` builds from two faces of its
rule:

* a **kernel** (``vector_function``), for the rules in ``_KERNELS``: Arrow's cast of the
  texts (for text: the texts themselves, or the rule's codec over ``$b64`` payloads), guarded
  by a pattern of the texts on which it gives exactly what the rule's Python face
  (``ColumnRule.python`` after ``driver.staged_value``) gives.  A chunk with any text outside
  the pattern is left to the memo: the kernel never guesses.  Kernels go by the rule's exact
  class: a subclass (a user's dialect) keeps its own Python face.
* the **memo** (``driver.ColumnMemo``): the Python face, once per distinct text.

The columns whose values are mostly distinct (numbers, timestamps, names) are the kernels'
work; repeated values (enums, sets, dates) cost a memo lookup each."""

from __future__ import annotations

import base64
import binascii
import sys
from decimal import Decimal
from functools import partial
from typing import Any, Callable

from .. import raw
from .rules import DateTimeRule, DecimalRule, IntegerRule, TextRule

def _int_text(digits: int = 18) -> str:
    """An integer in its text form as ``driver.staged_value`` takes it (no sign but ``-``, no
    leading zero, not ``-0``), of at most ``digits`` digits (18: within int64)."""
    return rf"0|-?[1-9][0-9]{{0,{digits - 1}}}"


_INT_TEXT = _int_text()

#: a year of four digits but 0000 (RE2, Arrow's regular expressions, has no look-ahead)
_YEAR = "(000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})"

Kernel = Callable[[Any], Any]  # a pa.StringArray → pa.Array, or None (declined)


def _all(mask) -> bool:
    """Every non-null element of the boolean array ``mask`` is true (true for none)."""
    import pyarrow.compute as pc

    return bool(pc.all(mask, min_count=0).as_py())


def _any(mask) -> bool:
    """Some element of the boolean array ``mask`` is true."""
    import pyarrow.compute as pc

    return bool(pc.any(mask).as_py())


def _matching(texts, pattern: str) -> bool:
    import pyarrow.compute as pc

    return _all(pc.match_substring_regex(texts, pattern))


def _integer_kernel(rule: IntegerRule, arrow_type) -> Kernel | None:
    """``IntegerRule`` (its ``int`` and ``bool`` outputs, up to BIGINT): texts in the integer
    text form (``_INT_TEXT``) within ``[lo, hi]``, a negative one with ``wrap`` added (the
    unsigned reading)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if rule.output not in ("int", "bool") or rule.hi >= 1 << 63 or pa.types.is_decimal(arrow_type):
        return None
    # typed scalars: a Python one costs pyarrow a type inference per call (~0.1 ms)
    lo, hi, zero = (pa.scalar(x, pa.int64()) for x in (max(rule.lo, -(1 << 63)), rule.hi, 0))
    wrap, as_bool = pa.scalar(rule.wrap, pa.int64()) if rule.wrap else None, rule.output == "bool"

    def convert(texts):
        if not _matching(texts, f"^({_INT_TEXT})$"):
            return None
        n = pc.cast(texts, pa.int64())
        if not _all(pc.and_(pc.greater_equal(n, lo), pc.less_equal(n, hi))):
            return None
        if wrap is not None:
            n = pc.if_else(pc.less(n, zero), pc.add(n, wrap), n)
        return pc.not_equal(n, zero) if as_bool else pc.cast(n, arrow_type)
    return convert


def _decimal_kernel(rule: DecimalRule, arrow_type) -> Kernel | None:
    """``DecimalRule`` in ``precise`` mode (p ≤ 38, ``DecimalType(p,s)``, s < 38): ``$dec``
    payloads in plain notation with at most ``s`` fraction digits (no rounding to do) and at
    most 38 - s integer digits, and integers in their text form of at most that many digits;
    the value's magnitude below 10^(p-s) (the rule's range)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    p, s = rule.p, rule.s
    whole = 38 - s  # the integer digits ``decimal128(38, s)`` holds
    if rule.mode != "precise" or rule.wide or whole < 1:
        return None
    fraction = rf"(\.[0-9]{{1,{s}}})?" if s else ""
    pattern = rf'^(\{{"\$dec":"-?[0-9]{{1,{whole}}}{fraction}"\}}|{_int_text(min(18, whole))})$'
    wide = pa.decimal128(38, s)
    # (p 38: the pattern's 38 - s integer digits are the range)
    limit = None if p == 38 else pa.scalar(Decimal(10) ** (p - s), wide)

    def convert(texts):
        if not _matching(texts, pattern):
            return None
        payload = pc.if_else(pc.starts_with(texts, '{"'), pc.utf8_slice_codeunits(texts, 9, -2), texts)
        try:
            d = pc.cast(payload, wide)
        except pa.ArrowInvalid:  # (the pattern keeps within 38 digits: not expected)
            return None
        if limit is not None and not _all(pc.less(pc.abs(d), limit)):
            return None
        return pc.cast(d, arrow_type)
    return convert


def _datetime_kernel(rule: DateTimeRule, arrow_type) -> Kernel | None:
    """``DateTimeRule`` without a time zone (DATETIME: ``TimestampNTZType``): texts
    ``YYYY-MM-DD hh:mm:ss[.f]`` of a real date and time (Arrow's cast rejects the others, as
    Python's ``datetime`` does), not year 0000, with at most ``fsp`` fraction digits (no
    truncation to do)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if rule.utc or not pa.types.is_timestamp(arrow_type) or arrow_type.tz is not None:
        return None
    fraction = rf"(\.[0-9]{{1,{rule.fsp}}})?" if rule.fsp else ""
    pattern = rf"^{_YEAR}-[0-9]{{2}}-[0-9]{{2}} [0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}}{fraction}$"

    def convert(texts):
        if not _matching(texts, pattern):
            return None
        try:
            return pc.cast(texts, arrow_type)
        except pa.ArrowInvalid:  # no real date or time: the rule's null or error, per value
            return None
    return convert


#: a text ``raw.NUMBER_RX`` matches as Python's ``re`` does (its ``$`` also matches before a
#: last newline; RE2's only at the end): a number, which ``driver.staged_value`` does not read
#: as a string
_NUMBER_TEXT = raw.NUMBER_RX.removesuffix("$") + r"\n?$"
#: a tagged value with a plain payload (``driver.PLAIN_TAGGED``): ``$s`` (a string) and ``$b64``
#: (bytes; its payload in the alphabet ``base64.b64decode(validate=True)`` takes)
_STR_TEXT = r'^\{"\$s":"[^"\\\x00-\x1f]*"\}$'
_B64_TEXT = r'^\{"\$b64":"[A-Za-z0-9+/]*={0,2}"\}$'
#: ``raw``'s reading of a ``$b64`` payload, ``base64.b64decode(p, validate=True)``: from Python
#: 3.11 that function is ``binascii.a2b_base64(p, strict_mode=True)`` after a conversion of
#: ``p`` to bytes (half its time; the kernel's payloads are ASCII, which ``a2b_base64`` takes)
_UNBASE64 = (partial(binascii.a2b_base64, strict_mode=True) if sys.version_info >= (3, 11)
             else partial(base64.b64decode, validate=True))


def _text_kernel(rule: TextRule, arrow_type) -> Kernel:
    """``TextRule``: plain strings (no tag, not a number) as they are, ``$s`` payloads, and
    ``$b64`` payloads decoded by ``base64.b64decode(validate=True)`` then the rule's codec
    (``TextCodec.python``: per value, in Python, as the memo would, without its bookkeeping);
    trailing spaces removed for ``rstrip`` (``CHAR``).  Declines a chunk with another text (a
    number, another tag, the absent marker) or bytes its codec refuses (the row pass's error)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    decode, unbase64, rstrip, no = rule.codec.python(), _UNBASE64, rule.rstrip, pa.scalar(False, pa.bool_())

    def convert(texts):
        plain = pc.invert(pc.or_(pc.starts_with(texts, '{"$'), pc.match_substring_regex(texts, _NUMBER_TEXT)))
        out = texts
        if not _all(plain):
            strs = pc.fill_null(pc.match_substring_regex(texts, _STR_TEXT), no)
            blobs = pc.fill_null(pc.match_substring_regex(texts, _B64_TEXT), no)
            if not _all(pc.or_(plain, pc.or_(strs, blobs))):
                return None
            out = pc.if_else(strs, pc.utf8_slice_codeunits(texts, 7, -2), texts)
            if _any(blobs):
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


#: the rules with a kernel: rule class → ``(rule, the column's Arrow type) → kernel or None``
_KERNELS: dict[type, Callable[[Any, Any], Kernel | None]] = {
    IntegerRule: _integer_kernel,
    DecimalRule: _decimal_kernel,
    DateTimeRule: _datetime_kernel,
    TextRule: _text_kernel,
}


def vector_function(rule, arrow_type) -> Kernel | None:
    """The kernel of ``rule`` (a ``ColumnRule``) for a column of ``arrow_type``: a function of
    a ``pa.StringArray`` of staged texts (nulls allowed: null values) giving an array of
    ``arrow_type`` equal, element by element, to the rule's Python face — or ``None`` for
    texts it leaves to the memo; ``None`` for a rule without one."""
    make = _KERNELS.get(type(rule))
    return None if make is None else make(rule, arrow_type)


def column_converter(kernel: Kernel | None, memo, arrow_type) -> Kernel:
    """One column's converter for ``convert_chunk``: ``kernel`` (``vector_function``), else
    ``memo`` (``driver.ColumnMemo``: text → converted value; its ``slow`` counts the values it
    leaves to the row pass) over the texts, as an array of ``arrow_type``; ``None`` when the
    memo left some value to the row pass.  Raises what the memo raises (``driver.Unsure``)."""
    import pyarrow as pa

    def convert(texts):
        if kernel is not None:
            out = kernel(texts)
            if out is not None:
                return out
        seen = memo.slow
        values = [memo[t] for t in texts.to_pylist()]
        if memo.slow != seen:
            return None
        return pa.array(values, type=arrow_type)
    return convert


#: the row metadata columns of a version's row table copied from the staged rows
_COPIED = (("_op", "op"), ("_seq", "seq"), ("_position", "position"), ("_ts", "ts"), ("_tx", "tx"),
           ("_row", "row"))


def convert_chunk(table, schema, names: list[str], converters: dict[str, list[Kernel]], *,
                  after: bool, before: bool):
    """A chunk of a conversion group's staged rows (``table``: Arrow, the ``driver._STAGED``
    columns but ``_part``, in ``seq`` order) as their row table, row for row (``schema``:
    ``driver.parquet_format`` of the group's ``output_struct``), or ``None`` where some row
    needs the row pass (see the module's docstring).

    ``names``: the table's columns; ``converters``: per image (``after``, ``before``) a
    ``column_converter`` per column.  ``after`` / ``before``: whether the group's plan
    converts that image (the other is still checked: its errors are the row pass's).  A row
    takes its values from the before image for op ``d``, else from the after image; ``_before``
    holds the before image (all null when the plan leaves it out) for ops ``u`` and ``d``, null
    otherwise; ``_absent`` and ``_before_absent`` are null (no value is absent here).  Raises
    what the converters raise."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n, rows = len(names), table.num_rows
    images: dict[str, list | None] = {}
    for image in ("after", "before"):
        lists = table.column(image).combine_chunks()
        if lists.null_count == rows:
            images[image] = None
            continue
        lengths = pc.list_value_length(lists)
        if n == 0 or not _all(pc.equal(lengths, pa.scalar(n, lengths.type))):
            return None
        columns = []
        for convert in converters[image]:
            # (null where the image is; the index typed: no inference of a Python value's type)
            out = convert(pc.list_element(lists, pa.scalar(len(columns), pa.int32())))
            if out is None:
                return None
            columns.append(out)
        images[image] = columns
    fields = list(schema)
    values = [images[image] if on and images[image] is not None else [pa.nulls(rows, f.type) for f in fields[:n]]
              for image, on in (("after", after), ("before", before))]
    ops = table.column("op").combine_chunks()
    deleted = pc.equal(ops, pa.scalar("d", ops.type))  # (typed: no inference of a Python value's type)
    arrays = [pc.if_else(deleted, b, a) for a, b in zip(*values)]
    types = {f.name: f.type for f in fields[n:]}
    carries_before = pc.fill_null(pc.is_in(ops, value_set=pa.array(["u", "d"], ops.type)), pa.scalar(False, pa.bool_()))
    meta = {name: table.column(staged).combine_chunks().cast(types[name]) for name, staged in _COPIED}
    meta["_before"] = pa.StructArray.from_arrays(values[1], fields=list(types["_before"]),
                                                 mask=pc.invert(carries_before))
    for name in ("_absent", "_before_absent"):
        meta[name] = pa.nulls(rows, types[name])
    arrays += [meta[f.name] for f in fields[n:]]
    return pa.Table.from_arrays(arrays, schema=schema)
