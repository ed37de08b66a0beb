"""The type-mapping options the PostgreSQL dialect adds to the neutral ones
(``ddlcore.spark.options``), declared through the ``ddlcore_spark_options`` plugin hook.  No
pyspark import."""

from __future__ import annotations

from ddlcore.spark.options import SparkOption

__all__ = ["OPTIONS", "NUMERIC_UNCONSTRAINED"]

#: an unconstrained ``numeric`` column: ``decimal`` → ``DecimalType(38,18)`` (a value with more
#: than 20 integer or 18 fraction digits fails and its row is quarantined: never rounded),
#: ``string`` → ``StringType`` (the exact text)
NUMERIC_UNCONSTRAINED = ("decimal", "string")

OPTIONS = [
    SparkOption("numeric_unconstrained", "postgres", "decimal", NUMERIC_UNCONSTRAINED,
                "numeric without precision: decimal → DecimalType(38,18), values beyond it quarantined; "
                "string → the exact text"),
]
