"""``SparkOptions``: how native types map onto Spark types.

Owns: the options a user sets, their names and defaults (Debezium's connector option names
where Debezium has one, so its users recognise them), and their validation.
Must not know: any dialect, pyspark.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

__all__ = ["SparkOptions", "DECIMAL_HANDLING", "BIGINT_UNSIGNED_HANDLING", "BINARY_HANDLING",
           "TIME_PRECISION", "INVALID_DATE_HANDLING"]

#: ``decimal.handling.mode``: ``precise`` → ``DecimalType(p,s)`` (string beyond 38 digits),
#: ``double`` → ``DoubleType``, ``string`` → ``StringType`` (plain notation, ``s`` fraction digits)
DECIMAL_HANDLING = ("precise", "double", "string")
#: ``bigint.unsigned.handling.mode``: ``precise`` → ``DecimalType(20,0)``; ``long`` →
#: ``LongType`` holding the 64 bits as a signed value (2^64-1 reads as -1)
BIGINT_UNSIGNED_HANDLING = ("precise", "long")
#: ``binary.handling.mode``: ``bytes`` → ``BinaryType``; ``base64`` / ``hex`` → ``StringType``
#: (standard base64 with padding, no line breaks / lower-case hex)
BINARY_HANDLING = ("bytes", "base64", "hex")
#: ``time.precision.mode``: ``adaptive`` keeps each column's fractional digits (TIME →
#: ``DayTimeIntervalType``); ``adaptive_time_microseconds`` makes TIME a ``LongType`` of
#: microseconds; ``connect`` truncates every temporal value to milliseconds (Kafka Connect's
#: precision)
TIME_PRECISION = ("adaptive", "adaptive_time_microseconds", "connect")
#: what a zero or invalid date (``0000-00-00``, ``2023-02-30``) becomes: ``null`` or a
#: conversion error
INVALID_DATE_HANDLING = ("null", "error")

_CHOICES = {
    "decimal_handling": DECIMAL_HANDLING,
    "bigint_unsigned_handling": BIGINT_UNSIGNED_HANDLING,
    "binary_handling": BINARY_HANDLING,
    "time_precision": TIME_PRECISION,
    "invalid_date_handling": INVALID_DATE_HANDLING,
}


@dataclass(frozen=True)
class SparkOptions:
    """Type-mapping options (immutable).

    * ``dialect``: name of the dialect whose type rules apply (``None``: the only installed
      dialect; a ``Table`` does not know its dialect).
    * ``decimal_handling``: ``"precise"`` (default) | ``"double"`` | ``"string"``.
    * ``bigint_unsigned_handling``: ``"precise"`` (default) | ``"long"``.
    * ``binary_handling``: ``"bytes"`` (default) | ``"base64"`` | ``"hex"``; applies to every
      value that maps to binary (binary strings, blobs, spatial values, ``BIT(n)``, n > 1).
    * ``time_precision``: ``"adaptive"`` (default) | ``"adaptive_time_microseconds"`` |
      ``"connect"``.
    * ``tinyint1_as_boolean``: ``TINYINT(1)`` → ``BooleanType`` (non-zero is true); default
      ``False`` (a ``ByteType`` like any ``TINYINT``).
    * ``invalid_date_handling``: ``"null"`` (default) | ``"error"``.

    ``SparkOptions.of(options, **overrides)`` accepts ``None``, a ``SparkOptions`` or a
    mapping; unknown names raise ``TypeError``, bad values ``ValueError``."""

    dialect: str | None = None
    decimal_handling: str = "precise"
    bigint_unsigned_handling: str = "precise"
    binary_handling: str = "bytes"
    time_precision: str = "adaptive"
    tinyint1_as_boolean: bool = False
    invalid_date_handling: str = "null"

    def __post_init__(self) -> None:
        for name, choices in _CHOICES.items():
            value = getattr(self, name)
            if value not in choices:
                raise ValueError(f"{name} must be one of {', '.join(choices)}, not {value!r}")
        if not isinstance(self.tinyint1_as_boolean, bool):
            raise ValueError(f"tinyint1_as_boolean must be a bool, not {self.tinyint1_as_boolean!r}")

    @classmethod
    def of(cls, options: "SparkOptions | Mapping[str, Any] | None" = None, **overrides: Any) -> "SparkOptions":
        """Options from ``options`` (``None``, ``SparkOptions`` or a mapping) with
        ``overrides`` applied (``None`` values in ``overrides`` are ignored)."""
        names = {f.name for f in dataclasses.fields(cls)}
        if options is None:
            base: dict[str, Any] = {}
        elif isinstance(options, SparkOptions):
            base = dataclasses.asdict(options)
        else:
            base = dict(options)
        extra = {k: v for k, v in overrides.items() if v is not None}
        unknown = (set(base) | set(extra)) - names
        if unknown:
            raise TypeError(f"unknown Spark option(s): {', '.join(sorted(unknown))} "
                            f"(known: {', '.join(sorted(names))})")
        base.update(extra)
        return cls(**base)

    def replace(self, **changes: Any) -> "SparkOptions":
        return dataclasses.replace(self, **changes)
