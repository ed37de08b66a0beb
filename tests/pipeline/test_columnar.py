"""Staged rows converted a column at a time (``ddlcore.spark.columnar``) against the row pass
(``driver.convert_rows`` with each image's values from ``staged_values``): a chunk it converts is
the row pass's table, value for value; it declines every chunk the row pass would quarantine
from or mark absent; and each kernel gives, on the texts it takes, exactly the rule's Python
face, on integers, decimals and datetimes at their edges (``-0``, leading zeros, range limits,
more fraction digits than the scale, year 0000, 29 February) and on text in a charset (plain,
``$s`` and ``$b64`` values, bytes the charset does not define, texts that read as numbers,
``CHAR``'s trailing spaces)."""

from __future__ import annotations

import base64
import datetime as dt
import re
from decimal import Decimal

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")

from ddlcore.spark import RowConverter, columnar, driver  # noqa: E402
from ddlcore.spark.rules import DateTimeRule, DecimalRule, EnumRule, IntegerRule, TextRule, Fail  # noqa: E402

from .support import EVENT, GOOD, memo_table, pick  # noqa: E402

_STAGED_SCHEMA = pa.schema([("seq", pa.int64()), ("position", pa.string()), ("ts", pa.int64()),
                            ("op", pa.string()), ("database", pa.string()), ("schema", pa.string()),
                            ("table", pa.string()), ("tx", pa.string()), ("row", pa.int64()),
                            ("before", pa.list_(pa.string())), ("after", pa.list_(pa.string()))])


def _job(conv, memo_texts: int = 4096):
    schema = driver.parquet_format(driver.output_struct(conv))[0]
    memos = {image: [driver.ColumnMemo(fn, memo_texts) for fn in conv.functions] for image in ("after", "before")}
    return schema, memos, driver.column_converters(conv, schema, memos)


def _chunk(events: list[tuple]) -> tuple[dict, "pa.Table"]:
    """Events ``(op, after texts, before texts)`` as the row pass's columns and as staged rows."""
    columns = {name: [None] * len(events) for name in driver.ROW_FIELDS}
    columns.update(op=[e[0] for e in events], seq=list(range(len(events))),
                   position=[f"p:{i}" for i in range(len(events))],
                   ts=[1000 + i for i in range(len(events))], tx=["t"] * len(events), row=[0] * len(events),
                   after=[e[1] for e in events], before=[e[2] for e in events])
    return columns, pa.Table.from_pydict({f.name: columns.get(f.name) or [None] * len(events) for f in _STAGED_SCHEMA},
                                         schema=_STAGED_SCHEMA)


#: events whose images all convert (with nulls), half the chunks drawn: those are the ones
#: ``convert_chunk`` converts
_CLEAN_IMAGE = st.lists(st.sampled_from([0, *range(3, 20)]), min_size=8, max_size=8).map(
    lambda picks: [pick(i, p) for i, p in enumerate(picks)])
_CLEAN_EVENT = st.sampled_from(["c", "r", "u", "d"]).flatmap(lambda op: st.tuples(
    st.just(op), _CLEAN_IMAGE if op != "d" else st.none(), _CLEAN_IMAGE if op in ("u", "d") else st.none()))


@given(st.lists(EVENT, min_size=1, max_size=12) | st.lists(_CLEAN_EVENT, min_size=1, max_size=12),
       st.sampled_from([1, 4096]),
       st.sampled_from([(True, True), (True, False), (False, True)]))
def test_a_chunk_converted_by_columns_is_the_row_pass_table(events, memo_texts, images):
    """Whatever the chunk (values that do not convert, absent markers, nulls, a wrong arity),
    ``convert_chunk`` gives the row pass's table or declines; it never converts a chunk with a
    row the row pass quarantines or marks absent, and raises ``Unsure`` only where the row
    pass does."""
    conv = RowConverter(memo_table(), dialect="mysql")
    schema, memos, converters = _job(conv, memo_texts)
    after, before = images
    columns, table = _chunk(events)
    try:
        values = {image: [driver.staged_values(t) for t in columns[image]] for image in ("after", "before")}
    except driver.Unsure:
        with pytest.raises(driver.Unsure):
            columnar.convert_chunk(table, schema, conv.names, converters, after=after, before=before)
        return
    want, errored, failed = driver.convert_rows(conv, driver.Rows(columns, values), after=after, before=before)
    got = columnar.convert_chunk(table, schema, conv.names, converters, after=after, before=before)
    event("declined" if got is None else "converted by columns")
    if got is None:
        return
    assert not errored and not failed
    assert not any(want["_absent"]) and not any(want["_before_absent"])
    expected = pa.Table.from_pydict(want, schema=schema)
    assert got.schema.equals(expected.schema, check_metadata=True)
    assert got.to_pylist() == expected.to_pylist()


def test_good_rows_are_converted_by_columns_with_kernels_where_values_are_distinct():
    """A chunk of values that all convert is converted by columns (not declined), equal to the
    row pass; the integer, decimal, datetime and text columns have kernels, the enum column none."""
    conv = RowConverter(memo_table(), dialect="mysql")
    schema, _, converters = _job(conv)
    kinds = {type(rule) for rule, f in zip(conv.rules, schema) if columnar.vector_function(rule, f.type)}
    assert kinds == {IntegerRule, DecimalRule, DateTimeRule, TextRule}
    assert columnar.vector_function(conv.rules[2], schema.field(2).type) is None  # the ENUM

    def image(i: int) -> list[str]:
        return [good[i % len(good)] for good in GOOD]
    events = [("c", image(0), None), ("u", image(1), image(2)), ("d", None, image(3)), ("r", image(4), None)]
    columns, table = _chunk(events)
    values = {image: [driver.staged_values(t) for t in columns[image]] for image in ("after", "before")}
    want, errored, failed = driver.convert_rows(conv, driver.Rows(columns, values), after=True, before=True)
    got = columnar.convert_chunk(table, schema, conv.names, converters, after=True, before=True)
    assert got is not None and not errored and not failed
    assert got.to_pylist() == pa.Table.from_pydict(want, schema=schema).to_pylist()
    rows = got.to_pylist()
    assert rows[0]["_before"] is None and rows[1]["_before"][conv.names[3]] == Decimal("1.50")
    assert rows[2]["_op"] == "d" and rows[2][conv.names[0]] == int(image(3)[0])


def _rule(conv, i: int, schema):
    return conv.rules[i], conv.functions[i], schema.field(i).type


def _kernel_table():
    from ddlcore_mysql.types import DataTypeSpec as D

    from ..spark.support import table
    return table(D("INT"), D("INT", unsigned=True), D("TINYINT", 1), D("SMALLINT"), D("BIGINT"),
                 D("DECIMAL", 5, 2), D("DECIMAL", 38, 0), D("DECIMAL", 10, 10), D("DATETIME"), D("DATETIME", 3),
                 D("DATETIME", 6), D("DECIMAL", 38, 30), D("VARCHAR", 20, charset="latin1"),
                 D("CHAR", 4, charset="utf8mb4"), D("VARCHAR", 10, charset="utf8mb4"),
                 D("VARCHAR", 10, charset="ascii"))


_INT_TEXTS = st.one_of(st.integers(-(1 << 64), 1 << 64).map(str), st.integers(-40000, 70000).map(str),
                       st.sampled_from(["0", "-0", "007", "+1", "1e3", "1.0", " 1", "", "9" * 19, "-" + "9" * 18,
                                        "2147483647", "2147483648", "-2147483648", "4294967295", "-1", "١"]))
_DEC_PAYLOADS = st.one_of(
    st.builds(lambda i, f: i + ("." + f if f else ""), st.from_regex(r"-?[0-9]{1,40}", fullmatch=True),
              st.from_regex(r"[0-9]{0,12}", fullmatch=True)),
    st.sampled_from(["-0", "-0.00", "00.5", "1E+3", ".5", "5.", "NaN", "99999.995", "999.99", "1000", "0.0000000001"]))
_DEC_TEXTS = st.one_of(_DEC_PAYLOADS.map(lambda p: '{"$dec":"' + p + '"}'), _INT_TEXTS)
_DT_TEXTS = st.one_of(
    st.builds(lambda d, f: d.strftime("%Y-%m-%d %H:%M:%S") + f,
              st.datetimes(dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59)),
              st.sampled_from(["", ".1", ".123", ".1234", ".123456", ".9999999"])),
    st.sampled_from(["0000-01-01 00:00:00", "2023-02-29 10:00:00", "2024-02-29 10:00:00", "2024-13-01 00:00:00",
                     "2024-01-01 24:00:00", "2024-01-01 23:59:60", "2024-01-01", "2024-01-01T10:00:00",
                     "1969-12-31 23:59:59.5", '{"$datetime":"2024-01-01 10:00:00"}', "0000-00-00 00:00:00"]))


#: a text Python's ``re`` reads as a number (``raw.NUMBER_RX``, its ``$`` matching before a last newline)
_NUMBER = re.compile(driver.raw.NUMBER_RX)
#: what ``driver.PLAIN_TAGGED`` takes as a plain payload
_PAYLOAD = st.text(st.characters(blacklist_characters='"\\', blacklist_categories=("Cc",)))
_PLAIN = st.text().filter(lambda t: not t.startswith('{"$') and not _NUMBER.match(t))
_TEXT_TEXTS = st.one_of(
    st.sampled_from(["12", "-3", "1.5", "1e3", "12\n", "007", "-", "-x", "12 ", "{x}", "", "  ", "a  ",
                     '{"$json":"\\"x\\""}', '{"$b64":"Y2Fm6Q="}', '{"$b64":"Y2Fm 6Q=="}', '{"$b64":"=Y2Fm"}',
                     '{"$s":"a\\"b"}', '{"$s":"a\\\\b"}', '{"$b64":""}', '{"$s":""}', '{"$dec":"1.5"}',
                     driver.raw.ABSENT_TEXT, '{"$b64":"gYGB"}', '{"$b64":"/w=="}', '{"$b64":"w6k="}']),
    _PAYLOAD.map(lambda p: '{"$s":"' + p + '"}'),
    st.binary(max_size=12).map(lambda b: '{"$b64":"' + base64.b64encode(b).decode() + '"}'))


def _texts(rule: TextRule) -> st.SearchStrategy[str]:
    """Plain strings (not read as numbers), ``$s`` payloads, and ``$b64`` payloads of bytes the
    codec decodes (with trailing spaces at times)."""
    decode = rule.codec.python()

    def decodes(b: bytes) -> bool:
        try:
            decode(b)
            return True
        except Fail:
            return False
    blobs = st.one_of(st.text(max_size=8).map(lambda t: t.encode("utf-8", "surrogatepass")),
                      st.binary(max_size=8)).map(lambda b: b + b"  " if b and b[0] % 2 else b).filter(decodes)
    return st.one_of(_PLAIN, _PAYLOAD.map(lambda p: '{"$s":"' + p + '"}'),
                     blobs.map(lambda b: '{"$b64":"' + base64.b64encode(b).decode() + '"}'))


def _integers(rule: IntegerRule) -> st.SearchStrategy[str]:
    """Integers in ``rule``'s range, in their text form."""
    return st.integers(max(rule.lo, -(1 << 63)), min(rule.hi, (1 << 63) - 1)).map(str)


def _decimals(rule: DecimalRule) -> st.SearchStrategy[str]:
    """``$dec`` texts of ``rule``'s precision and scale (leading zeros, ``-0``, fewer fraction
    digits), and integers in range."""
    whole = st.from_regex(rf"-?0{{0,2}}[0-9]{{1,{max(1, rule.p - rule.s)}}}", fullmatch=True) if rule.p > rule.s \
        else st.sampled_from(["0", "-0", "00"])
    fraction = st.from_regex(rf"(\.[0-9]{{1,{rule.s}}})?", fullmatch=True) if rule.s else st.just("")
    return st.builds(lambda w, f: '{"$dec":"' + w + f + '"}', whole, fraction)


def _datetimes(rule: DateTimeRule) -> st.SearchStrategy[str]:
    """Real datetimes with at most ``fsp`` fraction digits."""
    digits = st.integers(0, rule.fsp).map(lambda n: "." + "1234567"[:n] if n else "")
    return st.builds(lambda d, f: d.strftime("%Y-%m-%d %H:%M:%S").rjust(19, "0") + f,
                     st.datetimes(dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59)), digits)


@given(st.data())
def test_each_kernel_is_its_rules_python_face_on_the_texts_it_takes(data):
    """On texts it takes (it returns an array), a kernel's values are those of the Python face
    (``fn(staged_value(text))``), which takes every one of them; nulls stay null."""
    conv = RowConverter(_kernel_table(), dialect="mysql")
    schema = driver.parquet_format(driver.output_struct(conv))[0]
    i = data.draw(st.integers(0, len(conv.rules) - 1))
    rule, fn, arrow_type = _rule(conv, i, schema)
    kernel = columnar.vector_function(rule, arrow_type)
    assert kernel is not None
    # texts in the rule's usual notation and range (most of them taken), at times mixed with others
    kind = type(rule)
    usual = {IntegerRule: _integers, DecimalRule: _decimals, DateTimeRule: _datetimes, TextRule: _texts}[kind](rule)
    other = {IntegerRule: _INT_TEXTS, DecimalRule: _DEC_TEXTS, DateTimeRule: _DT_TEXTS, TextRule: _TEXT_TEXTS}[kind]
    texts = data.draw(st.lists(st.none() | usual | (other if data.draw(st.booleans()) else usual),
                               min_size=1, max_size=6))
    got = kernel(pa.array(texts, pa.string()))
    event(f"{type(rule).__name__}: {'taken' if got is not None else 'declined'}")
    if got is None:
        return
    want = []
    for t in texts:
        try:
            want.append(None if t is None else fn(driver.staged_value(t)))
        except (Fail, driver.Unsure) as exc:
            pytest.fail(f"the kernel took {t!r}, which the Python face does not ({exc!r})")
    assert got.type == arrow_type
    assert got.to_pylist() == pa.array(want, arrow_type).to_pylist()


@pytest.mark.parametrize("column, text", [
    (0, "-0"), (0, "007"), (0, "2147483648"), (0, "1e3"), (1, "4294967296"), (3, "32768"),
    (5, '{"$dec":"1.234"}'), (5, '{"$dec":"1000"}'), (5, '{"$dec":"1E+2"}'), (5, "1.5"), (7, "1"),
    (8, "2024-01-01 10:00:00.5"), (9, "0000-01-01 00:00:00"), (9, "2023-02-29 10:00:00"), (9, "2024-01-01"),
    (9, '{"$datetime":"2024-01-01 10:00:00"}'), (11, "123456789"), (11, '{"$dec":"123456789.5"}'),
    (12, "12"), (12, "1.5"), (12, "12\n"), (12, "007"), (12, '{"$json":"\\"x\\""}'), (12, driver.raw.ABSENT_TEXT),
    (12, '{"$b64":"Y2Fm6Q="}'), (12, '{"$b64":"Y2Fm6Q==Y2Fm"}'), (12, '{"$s":"a\\"b"}'), (12, '{"$dec":"1.5"}'),
    (15, '{"$b64":"gA=="}'), (14, '{"$b64":"/w=="}'), (14, '{"$b64":"7aCA"}')])
def test_kernels_leave_to_the_memo_what_needs_rounding_a_range_error_or_another_reading(column, text):
    """A kernel declines a whole column of texts when one of them is outside what it takes: a
    non-canonical integer, a value out of the column's range, a decimal to round, a fraction
    longer than the column's, a date that is not real or year 0000, another notation; for
    text, a number, a payload with escapes, bad base64, bytes the charset does not define
    (ascii's 0x80, UTF-8's 0xff and its encoded surrogate U+D800), the absent marker."""
    conv = RowConverter(_kernel_table(), dialect="mysql")
    schema = driver.parquet_format(driver.output_struct(conv))[0]
    rule, _, arrow_type = _rule(conv, column, schema)
    good = {IntegerRule: "1", DecimalRule: '{"$dec":"0.1"}', DateTimeRule: "2024-01-01 10:00:00",
            TextRule: "plain"}[type(rule)]
    kernel = columnar.vector_function(rule, arrow_type)
    assert kernel(pa.array([good, None])) is not None
    assert kernel(pa.array([good, text, None])) is None


def test_rules_without_a_kernel():
    """Rules with a kernel only where it is exact: no ``TIMESTAMP`` (UTC: epoch numbers and the
    zero timestamp), no decimal beyond 38 digits (a string), no ``BIGINT UNSIGNED``, no enum."""
    from ddlcore_mysql.types import DataTypeSpec as D

    from ..spark.support import table
    conv = RowConverter(table(D("TIMESTAMP", 3), D("DECIMAL", 50, 2), D("BIGINT", unsigned=True),
                              D("ENUM", values=("a",))), dialect="mysql")
    schema = driver.parquet_format(driver.output_struct(conv))[0]
    assert [columnar.vector_function(r, f.type) for r, f in zip(conv.rules, schema)] == [None] * 4
    assert isinstance(conv.rules[3], EnumRule)


def test_text_kernel_decodes_tagged_values_and_strips_char_padding():
    """The text kernel's values, by notation: a plain string as it is, a ``$s`` payload, a
    ``$b64`` payload decoded in the column's charset (latin1: MySQL's cp1252 reading, 0xe9
    is é), ``CHAR``'s trailing spaces removed (and no other character)."""
    conv = RowConverter(_kernel_table(), dialect="mysql")
    schema = driver.parquet_format(driver.output_struct(conv))[0]
    latin1, char = (columnar.vector_function(conv.rules[i], schema.field(i).type) for i in (12, 13))
    texts = ["caf\u00e9", '{"$s":"12"}', '{"$b64":"Y2Fm6Q=="}', '{"$b64":"gA=="}', None, '{"$b64":""}']
    assert latin1(pa.array(texts)).to_pylist() == ["caf\u00e9", "12", "caf\u00e9", "\u20ac", None, ""]
    padded = ["ab  ", '{"$b64":"' + base64.b64encode("\u00e9 \t ".encode()).decode() + '"}', '{"$s":" "}']
    assert char(pa.array(padded)).to_pylist() == ["ab", "\u00e9 \t", ""]


def test_a_subclass_of_a_rule_with_a_kernel_gets_none():
    """A user's subclass of a rule (its Python face may read values otherwise) is converted by
    its Python face: a rule's Arrow face is used only where its exact class declares one (a
    subclass that keeps its parent's Python face may declare the parent's Arrow face too)."""
    conv = RowConverter(_kernel_table(), dialect="mysql")
    schema = driver.parquet_format(driver.output_struct(conv))[0]
    rule = conv.rules[12]

    class Shouting(TextRule):
        def python(self):
            return lambda v: str(v).upper()
    assert columnar.vector_function(rule, schema.field(12).type) is not None
    assert columnar.vector_function(Shouting(rule.label, rule.codec), schema.field(12).type) is None

    class Quiet(TextRule):
        arrow = TextRule.arrow
    kernel = columnar.vector_function(Quiet(rule.label, rule.codec), schema.field(12).type)
    assert kernel is not None and kernel(pa.array(["a", "b "])).to_pylist() == ["a", "b "]
