"""Parquet files as Spark writes them, written by pyarrow (the driver's conversion groups, the
current-state tables computed on the driver): the Arrow types of Spark's and Spark's footer.

Owns: ``parquet_format`` and the writer's options.  Must not know: rows, conversions.
"""

from __future__ import annotations

from typing import Any

__all__ = ["parquet_format", "PARQUET_WRITER", "ROW_METADATA_KEY", "SPARK_VERSION_KEY"]

#: Parquet footer keys Spark writes: its version (its reader takes a file without it for one
#: of another writer, and would then refuse dates before 1582 unless told how to rebase them)
#: and the written ``StructType`` as JSON (field metadata included: docs/pipeline.md, "Reading
#: the output without Spark")
SPARK_VERSION_KEY = "org.apache.spark.version"
ROW_METADATA_KEY = "org.apache.spark.sql.parquet.row.metadata"


def parquet_format(struct) -> tuple[Any, dict[str, str]]:
    """``(Arrow schema, footer)`` of the Parquet files of rows of ``struct`` (a
    ``StructType``), as ``_write_parquet`` writes them: Spark's Arrow types
    (``to_arrow_schema``: INT64 ``TIMESTAMP(MICROS)``, decimals, lists) and Spark's footer keys
    (``ROW_METADATA_KEY``: the struct as JSON; ``SPARK_VERSION_KEY``)."""
    from pyspark import __version__ as spark_version
    from pyspark.sql.pandas.types import to_arrow_schema

    return (to_arrow_schema(struct, timezone="UTC"),
            {ROW_METADATA_KEY: struct.json(), SPARK_VERSION_KEY: spark_version})


#: pyarrow's ``ParquetWriter`` options for files as Spark writes them (``_parquet_bytes``)
PARQUET_WRITER = {"compression": "snappy", "store_schema": False, "use_compliant_nested_type": True,
                   "store_decimal_as_integer": True}
