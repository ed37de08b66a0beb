"""Helpers of the Spark tests: building MySQL columns/tables from type specs, running both
faces of a ``RowConverter`` over the same raw rows, and comparing them."""

from __future__ import annotations

import datetime as dt
from typing import Any, Sequence

from ddlcore import Column, Table, TableId
from ddlcore.raw import text_row
from ddlcore.spark import RowConverter
from pyspark.sql import functions as F
from ddlcore_mysql.types import DataTypeSpec, column_fields


def column(name: str, spec: DataTypeSpec, position: int = 1, *, nullable: bool = True,
           flavor: str = "mariadb", **changes: Any) -> Column:
    """A model ``Column`` for ``spec`` with the fields the MySQL catalogue gives it."""
    fields = column_fields(spec, flavor=flavor)
    fields.pop("serial", None)
    fields.update(changes)
    return Column(name=name, ordinal_position=position, nullable=nullable, **fields)


def table(*specs: DataTypeSpec | Column, name: str = "t", flavor: str = "mariadb") -> Table:
    cols = []
    for i, spec in enumerate(specs, start=1):
        c = spec if isinstance(spec, Column) else column(f"c{i}", spec, i, flavor=flavor)
        cols.append(c.replace(ordinal_position=i))
    return Table(TableId("db", None, name), tuple(cols))


def spark_rows(spark, conv: RowConverter, rows: Sequence[Sequence[Any] | None]) -> list:
    """``conv.columns`` applied in Spark to the text forms of ``rows``: a list of collected
    ``Row``s (fields, then ``_errors``)."""
    data = [(text_row(r),) for r in rows]
    df = spark.createDataFrame(data, "raw array<string>")
    return df.select(*conv.columns("raw")).collect()


def failed_flags(spark, conv: RowConverter, rows: Sequence[Sequence[Any] | None]) -> list[bool]:
    """``conv.failed`` over ``conv.value_struct`` computed by an earlier projection, one flag
    per row — both with the raw items projected as columns first (the way ``ddlcore run``
    uses it) and without; the two must agree."""
    data = [(text_row(r),) for r in rows]
    df = spark.createDataFrame(data, "raw array<string>")
    names = [f"_x{i}" for i in range(len(conv.rules))]
    items = df.select("raw", *[it.alias(n) for it, n in zip(conv.raw_items("raw"), names)])
    staged = items.select("raw", *names, conv.value_struct("raw", names).alias("_v"),
                          conv.value_struct("raw").alias("_w"))
    # the same in the canonical order (``ddlcore run``'s): field ``_j`` is column ``order[j - 1]``
    order = conv.canonical_order()
    ordered = staged.select("*", conv.value_struct("raw", [names[c] for c in order], order).alias("_c"))
    in_ordinal_order = F.struct(*[F.col("_c").getField(f"_{order.index(i) + 1}").alias(f"_{i + 1}")
                                  for i in range(len(order))])
    got = ordered.select(conv.failed("raw", "_v", names), conv.failed("raw", "_w"),
                         F.col("_v").eqNullSafe(F.col("_w")),
                         conv.failed("raw", "_c", [names[c] for c in order], order),
                         F.col("_v").eqNullSafe(in_ordinal_order)).collect()
    assert all(r[0] is r[1] for r in got), "failed() with and without projected items disagree"
    assert all(r[2] for r in got), "value_struct() with and without projected items disagree"
    assert all(r[0] is r[3] for r in got), "failed() in ordinal and canonical order disagree"
    assert all(r[4] for r in got), "value_struct() in ordinal and canonical order disagree"
    return [r[0] for r in got]


def normalize(value: Any) -> Any:
    """A value as both faces can be compared: UTC instants as POSIX microseconds, binary as
    ``bytes``."""
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return ("instant", round(value.timestamp() * 1_000_000))
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, list):
        return [normalize(v) for v in value]
    return value


def normalize_spark(value: Any, is_instant: bool) -> Any:
    if is_instant and isinstance(value, dt.datetime):
        # PySpark builds TimestampType values in the local time zone of the Python process
        return ("instant", round(value.timestamp() * 1_000_000))
    return normalize(value)


def compare_faces(spark, conv: RowConverter, rows: Sequence[Sequence[Any]]) -> list[str]:
    """Run both faces over ``rows``; return a description of every disagreement (values or
    error (position, reason) sets)."""
    from pyspark.sql.types import TimestampType

    instants = [isinstance(f.dataType, TimestampType) for f in conv.struct_type.fields]
    got = spark_rows(spark, conv, rows)
    flags = failed_flags(spark, conv, rows)
    problems = []
    for raw, srow, flag in zip(rows, got, flags):
        py_values, py_errors = conv.try_convert(raw)
        s_values = list(srow)[:-1]
        s_errors = srow[-1]
        py_err = sorted((e.position if e.position is not None else -1, e.reason) for e in py_errors)
        s_err = sorted((e["position"] if e["position"] is not None else -1, e["reason"]) for e in s_errors)
        if py_err != s_err:
            problems.append(f"errors differ for {raw!r}: python {py_err} spark {s_err}")
        if flag is not bool(s_errors):
            problems.append(f"failed() is {flag} for {raw!r} but the error column holds {s_err}")
        for i, (pv, sv) in enumerate(zip(py_values or (), s_values)):
            a, b = normalize(pv), normalize_spark(sv, instants[i])
            both_nan = isinstance(a, float) and isinstance(b, float) and a != a and b != b
            if (a != b and not both_nan) or type(a) is not type(b):
                problems.append(f"column {i} ({conv.rules[i].label}) raw {raw[i]!r}: python {pv!r} spark {sv!r}")
    return problems
