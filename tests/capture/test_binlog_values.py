"""The binlog value formats, decoded without a server: DATE, DATETIME2, TIMESTAMP2, TIME2 (the
packers below follow MySQL's ``mysys/my_time.cc`` ``my_*_packed_to_binary`` byte for byte,
C integer arithmetic included), YEAR, and the row-value reader on a fake packet."""

from __future__ import annotations

import struct
import types

from hypothesis import given
from hypothesis import strategies as st

from ddlcore.changelog import encode_value
from ddlcore_mysql import binlog_values as bv
from ddlcore_mysql.binlog_values import Tagged


def _c_div(a: int, b: int) -> int:  # C integer division truncates toward zero
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _c_mod(a: int, b: int) -> int:
    return a - _c_div(a, b) * b


def _frac_bytes(frac: int, fsp: int) -> bytes:
    """The fraction bytes as ``my_*_packed_to_binary`` store them (signed truncating division,
    the result kept in 1, 2 or 3 bytes)."""
    n = bv.fsp_length(fsp)
    if n == 1:
        return bytes([_c_div(frac, 10000) & 0xFF])
    if n == 2:
        return (_c_div(frac, 100) & 0xFFFF).to_bytes(2, "big")
    if n == 3:
        return (frac & 0xFFFFFF).to_bytes(3, "big")
    return b""


def pack_time2(neg: bool, h: int, m: int, s: int, us: int, fsp: int) -> bytes:
    nr = ((((h << 12) | (m << 6) | s)) << 24) + us
    nr = -nr if neg else nr
    if bv.fsp_length(fsp) == 3:
        return (nr + 0x800000000000).to_bytes(6, "big")
    intpart = nr >> 24  # arithmetic shift, as MY_PACKED_TIME_GET_INT_PART
    frac = _c_mod(nr, 1 << 24)
    return (intpart + 0x800000).to_bytes(3, "big") + _frac_bytes(frac, fsp)


def pack_datetime2(y: int, mo: int, d: int, h: int, mi: int, s: int, us: int, fsp: int) -> bytes:
    intpart = ((((y * 13 + mo) << 5) | d) << 17) | (h << 12) | (mi << 6) | s
    return (intpart + 0x8000000000).to_bytes(5, "big") + _frac_bytes(us, fsp)


def frac(us: int) -> str:
    return f".{us:06d}" if us else ""


def micros(fsp: int):
    """Microseconds a column of precision ``fsp`` can hold (the server rounds to fsp digits)."""
    return st.integers(0, 10 ** fsp - 1).map(lambda v: v * 10 ** (6 - fsp))


@given(st.booleans(), st.integers(0, 838), st.integers(0, 59), st.integers(0, 59),
       st.integers(0, 6).flatmap(lambda fsp: st.tuples(st.just(fsp), micros(fsp))))
def test_time2_round_trips_with_mysql_packing(neg, h, m, s, fsp_us):
    fsp, us = fsp_us
    data = pack_time2(neg, h, m, s, us, fsp)
    zero = (h, m, s, us) == (0, 0, 0, 0)
    sign = "-" if neg and not zero else ""
    assert bv.time2_text(data, fsp) == f"{sign}{h:02d}:{m:02d}:{s:02d}{frac(us)}"


@given(st.integers(0, 9999), st.integers(0, 12), st.integers(0, 31), st.integers(0, 23),
       st.integers(0, 59), st.integers(0, 59),
       st.integers(0, 6).flatmap(lambda fsp: st.tuples(st.just(fsp), micros(fsp))))
def test_datetime2_round_trips_with_mysql_packing(y, mo, d, h, mi, s, fsp_us):
    fsp, us = fsp_us
    data = pack_datetime2(y, mo, d, h, mi, s, us, fsp)
    assert bv.datetime2_text(data, fsp) == f"{y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{s:02d}{frac(us)}"


def test_dates_keep_zero_and_invalid_parts():
    assert bv.date_text(0) == "0000-00-00"
    assert bv.date_text((2024 << 9) | (2 << 5) | 30) == "2024-02-30"
    assert bv.date_text((2024 << 9) | (0 << 5) | 0) == "2024-00-00"
    assert bv.datetime2_text(pack_datetime2(0, 0, 0, 0, 0, 0, 0, 0), 0) == "0000-00-00 00:00:00"


def test_known_time2_bytes():
    # '-838:59:59' and '838:59:59' in TIME (fsp 0), as MySQL's docs give the layout
    assert bv.time2_text(bytes.fromhex("4B9105"), 0) == "-838:59:59"
    assert bv.time2_text(bytes.fromhex("B46EFB"), 0) == "838:59:59"


def test_timestamps_are_utc_text_and_zero_is_kept():
    assert bv.timestamp_text(0, 0, 6) == "0000-00-00 00:00:00"
    assert bv.timestamp_text(1, 0, 0) == "1970-01-01 00:00:01"
    assert bv.timestamp_text(1717243200, 500000, 6) == "2024-06-01 12:00:00.500000"
    assert bv.timestamp_text(2147483647, 0, 0) == "2038-01-19 03:14:07"


def test_old_formats_and_year():
    assert bv.datetime_v1_text(20240102030405) == "2024-01-02 03:04:05"
    assert bv.datetime_v1_text(0) == "0000-00-00 00:00:00"
    assert bv.time_v1_text(-8385959) == "-838:59:59"
    assert bv.year_value(0) == 0 and bv.year_value(1) == 1901 and bv.year_value(255) == 2155


def test_canonical_fraction():
    assert bv.canonical_fraction("2024-01-02 03:04:05.120") == "2024-01-02 03:04:05.120000"
    assert bv.canonical_fraction("0000-00-00 00:00:00.000") == "0000-00-00 00:00:00"
    assert bv.canonical_fraction("-838:59:59.50") == "-838:59:59.500000"
    assert bv.canonical_fraction("2024-02-30") == "2024-02-30"


def test_tagged_values_encode_with_the_change_log_encoding():
    assert encode_value(Tagged("$date", "0000-00-00")) == {"$date": "0000-00-00"}
    assert encode_value(Tagged("$datetime", "2024-02-30 00:00:00")) == {"$datetime": "2024-02-30 00:00:00"}
    assert encode_value(Tagged("$time", "-838:59:59")) == {"$time": "-838:59:59"}
    assert encode_value(Tagged("$json", '{"a": 1}')) == {"$json": '{"a": 1}'}


def test_mysql_binary_json_becomes_mysql_text():
    assert bv.json_text({b"k": [1, b"x", None, True]}) == '{"k": [1, "x", null, true]}'


class _Packet:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def read(self, n):
        n = int(n)
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out


def _read(columns, data: bytes, unsigned=None) -> list:
    ev = types.SimpleNamespace(packet=_Packet(data))
    n = len(columns)
    present = b"\xff" * ((n + 7) // 8)
    nulls = b"\x00" * ((n + 7) // 8)
    return [bv.read_raw_value(ev, c, nulls, i, False, present, bool(unsigned and unsigned[i]), i)
            for i, c in enumerate(columns)]


def test_row_values_without_metadata_are_read_signed_and_undecoded():
    """Without signedness metadata an UNSIGNED column arrives signed (the converter fixes it
    from the table model); strings stay bytes; ENUM/SET stay numbers."""
    C = types.SimpleNamespace
    cols = [C(type=bv.LONG), C(type=bv.LONGLONG), C(type=bv.TINY), C(type=bv.VARCHAR, max_length=20),
            C(type=bv.ENUM, size=1), C(type=bv.SET, size=1), C(type=bv.BIT, bytes=2), C(type=bv.YEAR),
            C(type=bv.DATE), C(type=bv.BLOB, length_size=2), C(type=bv.FLOAT)]
    data = (struct.pack("<I", 4294967295) + struct.pack("<Q", 2 ** 64 - 1) + b"\xff"
            + b"\x03caf"  # VARCHAR: one length byte, the bytes
            + b"\x02" + b"\x09" + b"\x02\x01" + b"\x00" + b"\x00\x00\x00"
            + b"\x04\x00\xde\xad\xbe\xef"  # BLOB: two length bytes (little-endian), the bytes
            + struct.pack("<f", 1.1))
    assert _read(cols, data) == [-1, -1, -1, b"caf", 2, 9, b"\x02\x01", 0, Tagged("$date", "0000-00-00"),
                                 b"\xde\xad\xbe\xef", struct.unpack("<f", struct.pack("<f", 1.1))[0]]
    assert _read(cols[:3], data[:13], unsigned=[True, True, True]) == [4294967295, 2 ** 64 - 1, 255]
