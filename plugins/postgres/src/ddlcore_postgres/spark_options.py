"""The type-mapping options the PostgreSQL dialect adds to the neutral ones
(``ddlcore.spark.options``), declared through the ``ddlcore_spark_options`` plugin hook.  No
pyspark import."""

from __future__ import annotations

from ddlcore.spark.options import SparkOption

__all__ = ["OPTIONS", "NUMERIC_UNCONSTRAINED", "TEMPORAL_INFINITY", "ARRAY_DIMENSIONS"]

#: an unconstrained ``numeric`` column: ``decimal`` → ``DecimalType(38,18)`` (a value with more
#: than 20 integer or 18 fraction digits fails and its row is quarantined: never rounded),
#: ``string`` → ``StringType`` (the exact text)
NUMERIC_UNCONSTRAINED = ("decimal", "string")
#: ``infinity`` / ``-infinity`` of ``date``, ``timestamp``, ``timestamptz``: ``quarantine`` → the
#: row is quarantined with the reason; ``null`` → null; ``clamp`` → Spark's last / first value
#: (``9999-12-31`` / ``0001-01-01``; ``9999-12-31 23:59:59.999999`` / ``0001-01-01 00:00:00``,
#: UTC for ``timestamptz``)
TEMPORAL_INFINITY = ("quarantine", "null", "clamp")
#: array columns: ``declared`` → nested ``ArrayType``s of the declared dimensions (a value of
#: another depth is quarantined); ``text`` → ``StringType``, the server's array text (any depth)
ARRAY_DIMENSIONS = ("declared", "text")

OPTIONS = [
    SparkOption("numeric_unconstrained", "postgres", "decimal", NUMERIC_UNCONSTRAINED,
                "numeric without precision: decimal → DecimalType(38,18), values beyond it quarantined; "
                "string → the exact text"),
    SparkOption("temporal_infinity", "postgres", "quarantine", TEMPORAL_INFINITY,
                "date/timestamp[tz] infinity and -infinity: quarantine the row; null; clamp → Spark's "
                "last/first date or timestamp (9999-12-31 23:59:59.999999 / 0001-01-01 00:00:00)"),
    SparkOption("array_dimensions", "postgres", "declared", ARRAY_DIMENSIONS,
                "array columns: declared → ArrayType of the declared dimensions, a value of another depth "
                "quarantined; text → StringType, the server's array text of any depth"),
]
