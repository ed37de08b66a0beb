"""pgoutput messages (PostgreSQL 15 manual 55.9, protocol version 1) decode to their fields;
malformed messages are errors naming the message and the byte offset.  The payloads are
built here from the manual's layouts, independently of the decoder."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ddlcore_postgres import pgoutput as po


def _s(text: str) -> bytes:
    return text.encode() + b"\0"


def _tuple(values) -> bytes:
    out = struct.pack("!h", len(values))
    for v in values:
        if v is None:
            out += b"n"
        elif v is po.UNCHANGED:
            out += b"u"
        else:
            data = v.encode()
            out += b"t" + struct.pack("!i", len(data)) + data
    return out


def test_begin_commit_origin():
    assert po.decode(b"B" + struct.pack("!QqI", 0x16B3748, 123456, 77)) == po.Begin(0x16B3748, 123456, 77)
    assert po.decode(b"C" + struct.pack("!bQQq", 0, 10, 20, 30)) == po.Commit(0, 10, 20, 30)
    assert po.decode(b"O" + struct.pack("!Q", 5) + _s("up")) == po.Origin(5, "up")


def test_relation_and_type():
    payload = (b"R" + struct.pack("!I", 16385) + _s("public") + _s("Orders") + b"d" + struct.pack("!h", 2)
               + struct.pack("!b", 1) + _s("id") + struct.pack("!Ii", 23, -1)
               + struct.pack("!b", 0) + _s("name é") + struct.pack("!Ii", 1043, 24))
    rel = po.decode(payload)
    assert rel == po.Relation(16385, "public", "Orders", "d", (
        po.RelationColumn(True, "id", 23, -1), po.RelationColumn(False, "name é", 1043, 24)))
    assert po.decode(b"Y" + struct.pack("!I", 16400) + _s("public") + _s("mood")) == po.Type(16400, "public", "mood")


def test_insert_update_delete_truncate_message():
    assert po.decode(b"I" + struct.pack("!I", 9) + b"N" + _tuple(["1", None, po.UNCHANGED])) == \
        po.Insert(9, ("1", None, po.UNCHANGED))
    assert po.decode(b"U" + struct.pack("!I", 9) + b"N" + _tuple(["2"])) == po.Update(9, None, None, ("2",))
    assert po.decode(b"U" + struct.pack("!I", 9) + b"K" + _tuple(["1", None]) + b"N" + _tuple(["2", "x"])) == \
        po.Update(9, "K", ("1", None), ("2", "x"))
    assert po.decode(b"U" + struct.pack("!I", 9) + b"O" + _tuple(["1", "a"]) + b"N" + _tuple(["1", "b"])) == \
        po.Update(9, "O", ("1", "a"), ("1", "b"))
    assert po.decode(b"D" + struct.pack("!I", 9) + b"K" + _tuple(["1"])) == po.Delete(9, "K", ("1",))
    assert po.decode(b"T" + struct.pack("!ib", 2, 3) + struct.pack("!II", 9, 10)) == po.Truncate((9, 10), True, True)
    assert po.decode(b"M" + struct.pack("!bQ", 1, 0x20) + _s("ddlcore") + struct.pack("!i", 2) + b"{}") == \
        po.Message(True, 0x20, "ddlcore", b"{}")


@given(st.lists(st.one_of(st.none(), st.just(po.UNCHANGED), st.text()), max_size=40))
def test_tuple_values_round_trip(values):
    assert po.decode(b"I" + struct.pack("!I", 1) + b"N" + _tuple(values)).new == tuple(values)


@pytest.mark.parametrize("payload, needle", [
    (b"", "empty"),
    (b"Z", "unknown message type 'Z'"),
    (b"B" + struct.pack("!Q", 1), "truncated"),
    (b"C" + struct.pack("!bQQq", 0, 1, 2, 3) + b"x", "trailing"),
    (b"I" + struct.pack("!I", 1) + b"X", "expected 'N'"),
    (b"I" + struct.pack("!I", 1) + b"N" + struct.pack("!h", 1) + b"q", "unknown TupleData kind"),
    (b"I" + struct.pack("!I", 1) + b"N" + struct.pack("!h", 1) + b"t" + struct.pack("!i", 10) + b"ab", "truncated"),
    (b"R" + struct.pack("!I", 1) + b"public", "unterminated String"),
    (b"D" + struct.pack("!I", 1) + b"N", "expected 'K' or 'O'"),
    (b"I" + struct.pack("!I", 1) + b"N" + struct.pack("!h", 1) + b"t" + struct.pack("!i", 1) + b"\xff", "not in utf-8"),
])
def test_malformed_messages_are_errors_with_where(payload, needle):
    with pytest.raises(po.PgOutputError) as err:
        po.decode(payload)
    assert needle in str(err.value)


@given(st.integers(min_value=0, max_value=2 ** 64 - 1))
def test_lsn_text_round_trip(n):
    text = po.format_lsn(n)
    assert po.parse_lsn(text) == n
    assert text == text.upper()


@pytest.mark.parametrize("bad", ["", "16B3748", "0/", "/1", "x/1", "0/1FFFFFFFF"])
def test_bad_lsn_text(bad):
    with pytest.raises(ValueError):
        po.parse_lsn(bad)


def test_commit_time_to_unix_ms():
    # 2000-01-01T00:00:00.001500Z
    assert po.pg_time_to_unix_ms(1500) == 946_684_800_001
