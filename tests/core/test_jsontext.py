"""``ddlcore.jsontext`` gives the standard library's values and bytes (msgspec where it agrees,
``json`` elsewhere), and ``changelog.event_line`` the bytes of ``ChangeEvent.to_line``."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings, strategies as st

from ddlcore import jsontext
from ddlcore.changelog import ChangeEvent, event_line

_std = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode

# text with every kind of character: control characters, quotes, backslashes, non-ASCII, astral
texts = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=("Cs",)), max_size=12)
big_ints = st.integers() | st.integers(-(2**70), 2**70) | st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63) - 1])
scalars = st.none() | st.booleans() | big_ints | texts
plain = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
                     max_leaves=12)
floats = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([1e16, 1e-5, 1e300, -0.0, 5e-324])
anything = st.recursive(scalars | floats, lambda inner: st.lists(inner, max_size=4)
                        | st.dictionaries(texts, inner, max_size=4), max_leaves=12)


def _outcome(f, *args, **kw):
    try:
        return ("ok", f(*args, **kw))
    except Exception as exc:  # noqa: BLE001 - the same exception is the point
        return ("error", type(exc).__name__, str(exc))


@settings(max_examples=400, deadline=None)
@given(plain)
def test_plain_values_are_written_as_the_standard_library_writes_them(value):
    assert jsontext.dumps(value, plain=True) == _std(value).encode("utf-8")


@settings(max_examples=400, deadline=None)
@given(anything)
def test_any_value_is_written_or_refused_as_the_standard_library_does(value):
    assert _outcome(jsontext.dumps, value) == _outcome(lambda v: _std(v).encode("utf-8"), value)


def test_plain_text_the_standard_library_cannot_write_is_refused_as_it_does():
    for value in ("\ud800", {"a": ["x\udfff"]}):
        assert _outcome(jsontext.dumps, value, plain=True) == _outcome(lambda v: _std(v).encode("utf-8"), value)
        assert _outcome(jsontext.dumps, value, plain=True)[1] == "UnicodeEncodeError"


def _same(a, b) -> bool:
    """Equal as JSON values, NaN equal to itself and floats told from ints."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return a == b


@settings(max_examples=400, deadline=None)
@given(anything, st.booleans())
def test_reading_gives_the_standard_librarys_values(value, ascii_only):
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert _same(jsontext.loads(text.encode("utf-8")), json.loads(text))
    assert _same(jsontext.loads(text), json.loads(text))


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(['{', '}', '[', ']', '"a"', ':', ',', '1', '-', 'e5', '.5', ' ', '\n', 'NaN',
                                 'Infinity', 'null', 'tru', 'true', '"\\ud800"', '"\\u00e9"', '\x01', '"\x01"',
                                 '1e400', '18446744073709551616', '\ufeff', '\t', 'x']), max_size=8).map("".join))
def test_malformed_text_is_refused_with_the_standard_librarys_error(text):
    """Mutated JSON: the same value, or the same ``ValueError`` with the same message."""
    assert _outcome(jsontext.loads, text.encode("utf-8")) == _outcome(json.loads, text)


def test_bytes_that_are_not_utf8_are_a_unicode_error():
    with pytest.raises(UnicodeDecodeError):
        jsontext.loads(b'"\xff"')


def test_lines_are_read_together_or_left_to_one_at_a_time():
    assert jsontext.loads_lines([b'{"a": 1}\n', b"null\n", b"[18446744073709551616]"]) == [
        {"a": 1}, None, [18446744073709551616]]
    assert jsontext.loads_lines([b'{"a": 1}\n', b"\n"]) is None  # a blank line: a tombstone, read one at a time
    assert jsontext.loads_lines([b"NaN\n"]) is None  # the standard library reads it


images = st.none() | st.lists(st.none() | st.booleans() | big_ints | texts | floats
                              | st.builds(lambda t, x: {t: x}, st.sampled_from(["$dec", "$b64", "$s"]), texts)
                              | st.just({"$absent": True}), max_size=5)
extras = st.fixed_dictionaries({}, optional={"schema": st.none() | texts, "tx": st.none() | texts,
                                             "row": st.none() | st.integers(0, 2**40),
                                             "quarantine": st.none() | texts})


@settings(max_examples=500, deadline=None)
@given(st.integers(1, 2**63 - 1), texts, st.none() | st.integers(0, 2**45), st.sampled_from(["c", "u", "d", "r", "t"]),
       st.none() | texts, texts, images, images, extras)
def test_event_line_is_the_change_events_line(seq, position, ts, op, database, table, before, after, extra):
    line = _outcome(event_line, seq, position, ts, op, database, table, None, before, after, extra)
    expected = _outcome(lambda: ChangeEvent(seq, position, ts, op, database, table, None, before, after,
                                            **extra).to_line().encode("utf-8"))
    assert line == expected


def test_event_line_refuses_an_unknown_field_as_change_event_does():
    with pytest.raises(TypeError, match="bogus"):
        event_line(1, "p", None, "c", "d", "t", None, None, [1], {"bogus": 1})
    ddl = event_line(2, "p", 5, "ddl", "d", None, "CREATE TABLE t (a int)", None, None, {"snapshot": True})
    assert ddl == ChangeEvent(2, "p", 5, "ddl", "d", None, "CREATE TABLE t (a int)", snapshot=True).to_line().encode()
