"""Parquet files as Spark writes them, written by pyarrow (the driver's conversion groups, the
current-state tables computed on the driver): the Arrow types of Spark's and Spark's footer.

Owns: ``parquet_format`` (and ``parquet_format_json``, the same from a cache per field) and
the writer's options.  Must not know: rows, conversions.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

__all__ = ["parquet_format", "parquet_format_json", "PARQUET_WRITER", "ROW_METADATA_KEY", "SPARK_VERSION_KEY"]

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


def parquet_format_json(struct: dict[str, Any]) -> tuple[Any, dict[str, str]]:
    """``parquet_format(StructType.fromJson(struct))`` (``struct``: a ``StructType``'s JSON
    value), built field by field from a cache of each field's Arrow field and JSON value (a
    table's fields recur across its tables and runs: Spark's type objects, their Arrow types
    and their JSON cost more than the rest of a small table's file)."""
    from pyspark import __version__ as spark_version

    import pyarrow as pa

    fields = [_field_format(json.dumps(f, sort_keys=True)) for f in struct["fields"]]
    text = json.dumps({"type": "struct", "fields": [value for _, value in fields]}, separators=(",", ":"),
                      sort_keys=True)  # (``StructType.json()``)
    return pa.schema([arrow for arrow, _ in fields]), {ROW_METADATA_KEY: text, SPARK_VERSION_KEY: spark_version}


@lru_cache(maxsize=4096)
def _field_format(text: str) -> tuple[Any, dict[str, Any]]:
    """A ``StructField``'s (its JSON text) Arrow field in ``parquet_format``'s schema and its
    JSON value (``StructField.jsonValue()``; not to be changed: it is cached)."""
    from pyspark.sql.types import StructField, StructType

    field = StructField.fromJson(json.loads(text))
    return parquet_format(StructType([field]))[0].field(0), field.jsonValue()


#: pyarrow's ``ParquetWriter`` options for files as Spark writes them (``_parquet_bytes``)
PARQUET_WRITER = {"compression": "snappy", "store_schema": False, "use_compliant_nested_type": True,
                   "store_decimal_as_integer": True}
