"""A test-only Debezium encoder, written from Debezium's documented encodings (MySQL connector
documentation, "Data type mappings": ``shared-mariadb-mysql.adoc`` in github.com/debezium/debezium;
Kafka Connect's ``Decimal`` / ``Date`` / ``Time`` / ``Timestamp`` logical types), *not* from
ddlcore's decoder: a raw value as ddlcore's binlog capture writes it → the value Debezium's
MySQL connector puts in a JSON message under the given settings."""

from __future__ import annotations

import base64
import datetime as dt
import decimal

EPOCH = dt.datetime(1970, 1, 1)


def _unscaled_b64(n: int) -> str:
    length = max(1, (n.bit_length() + 8) // 8)  # two's complement, big-endian, minimal
    return base64.b64encode(n.to_bytes(length, "big", signed=True)).decode()


def _binary(b: bytes, mode: str) -> str:
    if mode == "hex":
        return b.hex()
    if mode == "base64-url-safe":
        return base64.urlsafe_b64encode(b).decode()
    return base64.b64encode(b).decode()  # bytes (JsonConverter writes base64) and base64


def _parse_dt(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


def _time_us(text: str) -> int:
    sign = -1 if text.startswith("-") else 1
    h, m, s = text.lstrip("-").split(":")
    sec, _, frac = s.partition(".")
    return sign * (((int(h) * 60 + int(m)) * 60 + int(sec)) * 1_000_000 + int(frac.ljust(6, "0") or 0))


def _t(value) -> str:
    """The text of a temporal or JSON raw value (``Tagged``, ``ddlcore.raw``'s decoded forms)."""
    from ddlcore import raw as rawmod

    if hasattr(value, "text"):
        return value.text
    if isinstance(value, str):
        return str(value)
    if isinstance(value, dt.datetime):
        return rawmod.datetime_text(value)
    if isinstance(value, dt.date):
        return rawmod.date_text(value)
    return rawmod.time_text(value)


#: a context wide enough for any DECIMAL (65 digits): the default one rounds to 28
EXACT = decimal.Context(prec=200)


def encode(raw, col, settings: dict):
    """The Debezium value of ``raw`` (the binlog capture's raw value) for column ``col``."""
    if raw is None:
        return None
    t = col.data_type
    dec = settings.get("decimal.handling.mode", "precise")
    tpm = settings.get("time.precision.mode", "adaptive_time_microseconds")
    binm = settings.get("binary.handling.mode", "bytes")
    fsp = col.datetime_precision or 0
    if t == "bigint" and col.unsigned:
        if settings.get("bigint.unsigned.handling.mode", "long") == "precise":
            return _unscaled_b64(raw)
        return raw - (1 << 64) if raw >= 1 << 63 else raw
    if t in ("tinyint", "smallint", "mediumint", "int", "bigint", "year"):
        return raw
    if t == "decimal":
        if dec == "string":
            return format(raw, "f")
        if dec == "double":
            return float(raw)
        return _unscaled_b64(int(raw.scaleb(col.numeric_scale or 0, EXACT)))
    if t in ("float", "double"):
        return raw
    if t in ("varchar", "char", "text", "longtext"):
        return raw
    if t in ("varbinary", "binary", "blob"):
        return _binary(raw, binm)
    if t == "enum":
        return col.enum_values[raw - 1] if raw else ""
    if t == "set":
        return ",".join(v for i, v in enumerate(col.set_values) if raw >> i & 1)
    if t == "bit":
        if col.numeric_precision == 1:
            return raw != b"\0"
        return base64.b64encode(bytes(reversed(raw))).decode()  # little-endian, then base64 (bytes)
    if t == "date":
        if tpm == "isostring":
            return _t(raw) + "Z"
        return (dt.date.fromisoformat(_t(raw)) - EPOCH.date()).days
    if t == "datetime":
        d = _parse_dt(_t(raw))
        if tpm == "isostring":
            return d.strftime("%Y-%m-%dT%H:%M:%S.%f") + "Z"
        us = (d - EPOCH) // dt.timedelta(microseconds=1)
        return _temporal(us, fsp, tpm, "datetime")
    if t == "time":
        if tpm == "isostring":
            return _t(raw) + "Z"
        return _temporal(_time_us(_t(raw)), fsp, tpm, "time")
    if t == "timestamp":
        return _parse_dt(_t(raw)).strftime("%Y-%m-%dT%H:%M:%S.%f") + "Z"  # ZonedTimestamp, UTC
    if t == "json":
        return _t(raw)
    if t == "geometry":
        return {"wkb": base64.b64encode(raw[4:]).decode(), "srid": int.from_bytes(raw[:4], "little")}
    raise AssertionError(t)


def _temporal(us: int, fsp: int, tpm: str, kind: str) -> int:
    if tpm == "nanoseconds":
        return us * 1000
    if tpm == "microseconds" or (tpm == "adaptive_time_microseconds" and kind == "time"):
        return us
    if tpm == "connect" or fsp <= 3:
        return us // 1000 if us >= 0 else -((-us) // 1000)  # Connect keeps whole milliseconds
    return us


def decimal_of(text: str) -> decimal.Decimal:
    return decimal.Decimal(text)
