"""Small DataFrames the driver makes without Python on the executors, and unions of them.

Owns: ``local_frame`` (rows built in the JVM from one JSON literal: a cluster's executors need
no Python for the driver's small tables) and ``union``.  Must not know: what the rows are.
"""

from __future__ import annotations

import json

__all__ = ["local_frame", "union"]


def local_frame(spark, rows: list[tuple], schema: str):
    """A DataFrame of ``rows`` (tuples in the order of ``schema``, a DDL field list) built
    in the JVM alone: the rows are one JSON literal of the plan, read with ``from_json``.
    ``spark.createDataFrame`` on a list would pickle them and have them unpickled by Python
    workers on the executors — a cluster's executors would need Python, and the same Python
    as the driver, for a list of version spans (``tests/pipeline/test_cluster.py`` checks
    that a run starts no Python there).  For the driver's small tables (versions,
    quarantine records, replayed lines); every value a JSON scalar."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, DataType

    struct = DataType.fromDDL(schema)
    names = struct.fieldNames()
    text = json.dumps([dict(zip(names, r)) for r in rows], ensure_ascii=False)
    return spark.range(0, 1, 1, 1).select(F.inline(F.from_json(F.lit(text), ArrayType(struct))))


def union(frames: list):
    """The DataFrames ``frames`` (at least one) as one, by column name."""
    out = frames[0]
    for f in frames[1:]:
        out = out.unionByName(f)
    return out
