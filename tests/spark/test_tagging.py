"""``tagging.tag`` and ``tagging.in_force``: one rule, two faces — the driver's Python face and the
Spark expression the staging pass evaluates give every event the same tag and reason (SQL's
nulls included), in one Spark job over every combination of the inputs' edges."""

from __future__ import annotations

import itertools

from ddlcore.spark.quarantine import PartKind
from ddlcore.spark.tagging import PYTHON, SparkFaces, TagInputs, in_force, tag

#: each input's edges: null, empty, a text longer than a statement's quoted start, ...
EDGES = {
    "valid": (True, False),
    "op": ("c", "stmt"),
    "ddl": (None, "UPDATE t SET a = 1 " * 30),
    "quarantine": (None, "a gap in the binlog"),
    "database": (None, "", "shop"),
    "schema": (None, "public"),
    "table": ("t",),
    "version": (None, 3),
    "version_reason": (None, "blocked"),
    "replay": (None, 5),
}
SCHEMA = ("valid BOOLEAN, op STRING, ddl STRING, quarantine STRING, database STRING, `schema` STRING, "
          "`table` STRING, version INT, version_reason STRING, replay INT")


def test_the_python_and_spark_faces_of_the_tag_agree(spark):
    from pyspark.sql import functions as F

    rows = list(itertools.product(*EDGES.values()))
    faces = SparkFaces("_part")
    part, reason = tag(TagInputs(*map(F.col, EDGES)), faces)
    got = (spark.createDataFrame(rows, SCHEMA).withColumn("_part", part)
           .select(*map(F.col, EDGES), "_part", reason.alias("_reason")).collect())
    expected = {row: tag(TagInputs(*row), PYTHON) for row in rows}
    assert len(got) == len(rows)
    for r in got:
        key = tuple(r[name] for name in EDGES)
        assert (r["_part"], r["_reason"]) == expected[key], key
    # the precedence, as the staging pass and the driver's path have it
    py = lambda *row: tag(TagInputs(*row), PYTHON)  # noqa: E731
    assert py(False, "stmt", None, "q", None, None, "t", 3, None, None) == (PartKind.INVALID, None)
    assert py(True, "stmt", None, "q", None, None, "t", 3, None, None) == (PartKind.STATEMENT, None)
    assert py(True, "c", None, None, "", None, "t", None, None, None) == (
        PartKind.UNKNOWN_TABLE, "unknown table: no schema of .t in force at this seq")
    assert py(True, "c", None, None, None, "public", "t", None, None, None)[1] == (
        "unknown table: no schema of ?.public.t in force at this seq")
    assert py(True, "c", None, None, "shop", None, "t", 0, "blocked", None) == (PartKind.BLOCKED, "blocked")
    assert py(True, "c", None, "gap", "shop", None, "t", 0, "blocked", None) == (PartKind.CAPTURE, "capture: gap")
    assert py(True, "c", None, None, "shop", None, "t", 0, None, None) == (0, None)
    assert py(False, "c", None, None, "shop", None, "t", 0, None, 5) == (5, None)


def test_the_python_and_spark_faces_of_in_force_agree(spark):
    from pyspark.sql import functions as F

    values = (None, 1, 5, 9)
    rows = list(itertools.product(values, values, values))
    got = spark.createDataFrame(rows, "seq LONG, lo LONG, hi LONG").select(
        "seq", "lo", "hi", in_force(F.col("seq"), F.col("lo"), F.col("hi"), SparkFaces()).alias("ok")).collect()
    assert {(r.seq, r.lo, r.hi): r.ok for r in got} == {row: in_force(*row, PYTHON) for row in rows}
    assert in_force(5, 1, None, PYTHON) is True and in_force(1, 1, 9, PYTHON) is False
    assert in_force(9, 1, 9, PYTHON) is False and in_force(5, None, 9, PYTHON) is None
