"""The type-mapping options the MySQL / MariaDB dialect adds to the neutral ones
(``ddlcore.spark.options``), declared through the ``ddlcore_spark_options`` plugin hook.

Names follow Debezium's MySQL connector options where it has one (``bigint.unsigned.
handling.mode``, ``time.precision.mode``).  No pyspark import: options are validated without
Spark.
"""

from __future__ import annotations

from ddlcore.spark.options import SparkOption

__all__ = ["OPTIONS", "BIGINT_UNSIGNED_HANDLING", "TIME_PRECISION", "INVALID_DATE_HANDLING"]

#: ``bigint.unsigned.handling.mode``: ``precise`` → ``DecimalType(20,0)``; ``long`` →
#: ``LongType`` holding the 64 bits as a signed value (2^64-1 reads as -1)
BIGINT_UNSIGNED_HANDLING = ("precise", "long")
#: ``time.precision.mode``: ``adaptive`` keeps each column's fractional digits (TIME →
#: ``DayTimeIntervalType``); ``adaptive_time_microseconds`` makes TIME a ``LongType`` of
#: microseconds; ``connect`` truncates every temporal value to milliseconds (Kafka Connect's
#: precision)
TIME_PRECISION = ("adaptive", "adaptive_time_microseconds", "connect")
#: what a zero or invalid date (``0000-00-00``, ``2023-02-30``) becomes: ``null`` or a
#: conversion error
INVALID_DATE_HANDLING = ("null", "error")

OPTIONS = [
    SparkOption("bigint_unsigned_handling", "mysql", "precise", BIGINT_UNSIGNED_HANDLING,
                "BIGINT UNSIGNED: precise → DecimalType(20,0); long → LongType (the 64 bits signed)"),
    SparkOption("time_precision", "mysql", "adaptive", TIME_PRECISION,
                "TIME/DATETIME/TIMESTAMP precision: adaptive, adaptive_time_microseconds (TIME as µs), "
                "connect (milliseconds)"),
    SparkOption("tinyint1_as_boolean", "mysql", False, (False, True),
                "TINYINT(1) → BooleanType (non-zero is true)"),
    SparkOption("invalid_date_handling", "mysql", "null", INVALID_DATE_HANDLING,
                "zero or invalid dates (0000-00-00, 2023-02-30): null or a conversion error"),
]
