"""``ddlcore.read_table``: one source table's rows across all its versions, with plain Spark.

Owns: reading each table version's Parquet files (docs/pipeline.md) and projecting them onto
the table's latest schema (or its schema at ``as_of_seq``) by the fields of
``ddlcore.sinks.fields`` — renamed columns under their new name, widened ones cast, dropped and
retired ones as the Iceberg table shows them — and the current state (one row per primary key)
computed from those changes.  Needs no Iceberg jar: what a Spark user without Maven access
reads; with ``iceberg-spark-runtime`` the catalog's tables read the same (docs/tables.md).
Must not know: catalogs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from ..model import TableId
from ..spark.layout import version_dir
from .fields import Lineage, build_fields, column_order, lineages
from .icetypes import spark_type_specs
from .serverside import conversion_known, default_of

__all__ = ["read_table", "ReadError", "changes_frame", "current_frame", "current_fields", "spark_type",
           "row_images"]

#: the pipeline's scalar columns, in order (``_before`` is rebuilt, ``_before_absent`` kept)
_META = ("_op", "_seq", "_position", "_ts", "_tx", "_row", "_absent")
_SPARK = {"int": "int", "long": "bigint", "float": "float", "double": "double", "boolean": "boolean",
          "string": "string", "binary": "binary", "date": "date", "timestamp": "timestamp_ntz",
          "timestamptz": "timestamp"}


class ReadError(ValueError):
    """The table is not in the output (named), or the output has no history."""


def _spark_type(spec: Any) -> str:
    if isinstance(spec, str):
        return _SPARK[spec]
    if spec[0] == "decimal":
        return f"decimal({spec[1]},{spec[2]})"
    if spec[0] == "list":
        return f"array<{_spark_type(spec[1])}>"
    if spec[0] == "map":
        return f"map<{_spark_type(spec[1])},{_spark_type(spec[2])}>"
    return "struct<" + ",".join(f"`{n}`:{_spark_type(s)}" for n, s in spec[1]) + ">"


def _lineage(out: Path, table: str, as_of_seq: int | None) -> tuple[Lineage, dict[str, Any]]:
    from ..history import SchemaHistory

    info = json.loads((out / "_state" / "log.json").read_text()) if (out / "_state" / "log.json").exists() else {}
    if not (out / "_history.sqlite").exists():
        raise ReadError(f"{out}: no schema history (_history.sqlite): not a ddlcore run output")
    tid = TableId.parse(table)
    with SchemaHistory.open(out / "_history.sqlite") as hist:
        found = [lin for lin in lineages(hist.all_versions()) if any(str(n) == str(tid) for n in lin.names)]
    if not found:
        raise ReadError(f"{out}: no table {table} in the history")
    # the lineage that had the name last (a dropped table's name may have been taken by a rename)
    lin = max(found, key=lambda x: max(v.valid_from_seq for v in x.versions if str(v.table_id) == str(tid)))
    if as_of_seq is not None:
        lin = Lineage(versions=[v for v in lin.versions if v.valid_from_seq <= as_of_seq])
        lin.names = [v.table_id for v in lin.versions if v.table is not None]
    return build_fields(lin, lambda t: spark_type_specs(t, info.get("dialect"), info.get("spark_options"))), info


def _version_frame(spark, paths: list[str], lin: Lineage, v: Any, physical: bool, schema: Any = None) -> Any:
    """One version's rows (its Parquet files under the directories ``paths``) projected onto the
    lineage's current fields; ``schema``: the files' Spark schema (``None``: Spark infers it, a
    job)."""
    from pyspark.sql import functions as F

    df = (spark.read.schema(schema) if schema is not None else spark.read).parquet(*paths)
    vkey = (str(v.table_id), v.version)
    name_of = {key: (lin.physical[vkey][col] if physical else col) for col, key in lin.keys[vkey].items()}

    def proj(prefix: str) -> list[Any]:
        return [(F.col(f"{prefix}`{name_of[f.key]}`") if f.key in name_of else F.lit(None))
                .cast(_spark_type(f.spec)).alias(f.name) for f in column_order(lin)]

    before = F.when(F.col("_before").isNotNull(), F.struct(*proj("_before.")))
    return df.select(*proj(""), *_META, before.alias("_before"), "_before_absent")


def changes_frame(spark, lin: Lineage, dirs_of: Callable[[Any], list[str]], physical: bool,
                  schema_of: Callable[[list[str]], Any] | None = None) -> Any:
    """Every row event of the lineage ``lin`` in its latest fields (``read_table``), read from
    ``dirs_of(version)``: the directories holding that version's Parquet files (Spark paths,
    only directories that have some); ``None`` when no version has files.  ``schema_of(dirs)``:
    the Spark schema of those files when known without a job (else ``None``: Spark infers it)."""
    frames = []
    for v in lin.versions:
        paths = dirs_of(v) if v.table is not None else []
        if paths:
            schema = schema_of(paths) if schema_of is not None else None
            frames.append(_version_frame(spark, paths, lin, v, physical, schema))
    if not frames:
        return None
    df = frames[0]
    for f in frames[1:]:
        df = df.unionByName(f)
    return df


def current_fields(lin: Lineage) -> list[Any]:
    """The fields of the current state: the last version's columns, in the source's order."""
    last = [v for v in lin.versions if v.table is not None][-1]
    return [lin.fields[k] for k in lin.keys[(str(last.table_id), last.version)].values()]


def spark_type(spec: Any) -> str:
    """The Spark SQL type text of an Iceberg type spec (``ddlcore.sinks.icetypes``)."""
    return _spark_type(spec)


def _server_values(df: Any, lin: Lineage) -> tuple[Any, list[str]]:
    """``df`` (the changes) with each current field's value in events before the DDL that added
    it (or retyped its column) replaced by what the server gave the row then
    (``ddlcore.sinks.serverside``), and a flag column ``__u<i>`` per field: the value is not
    known.  Returns the frame and the current fields' names, in the source's column order."""
    from pyspark.sql import functions as F

    fields = current_fields(lin)
    cols, names = [], []
    for i, f in enumerate(fields):
        value, unknown = F.col(f"`{f.name}`"), F.lit(False)
        if f.since_seq is not None:
            before = F.col("_seq") < f.since_seq
            if f.replaces is not None:
                old = lin.fields[f.replaces]
                known = conversion_known(old.spec, f.spec) and not f.using
                then = F.col(f"`{old.name}`").cast(_spark_type(f.spec)) if known else F.lit(None)
            else:
                d = default_of(f.default, f.since_ts)
                known = d.known
                then = (F.lit(d.ts / 1000.0).cast("timestamp") if d.ts is not None
                        else F.lit(d.value)).cast(_spark_type(f.spec))
            value = F.when(before, then).otherwise(value)
            unknown = before & F.lit(not known)
        cols += [value.alias(f.name), unknown.alias(f"__u{i}")]
        names.append(f.name)
    return df.select(*cols, "_op", "_seq", "_row", "_absent", "_sub"), names


def _after_last_truncate(df: Any, truncates: bool) -> Any:
    """The row events of ``df`` after its last ``TRUNCATE`` (``truncates=False``: the caller knows
    there is none, and no job looks for one)."""
    from pyspark.sql import functions as F

    last_t = df.where(F.col("_op") == "t").agg(F.max("_seq")).first()[0] if truncates else None
    rows = df.where(F.col("_op") != "t")
    return rows if last_t is None else rows.where(F.col("_seq") > last_t)


def _unknown_names(names: list[str], flag: str) -> Any:
    """The ``_unknown`` list: the ``names`` whose flag column (``flag`` formatted with the name's
    index ``i``) is true, in field order."""
    from pyspark.sql import functions as F

    return F.filter(F.array(*[F.when(F.col(flag.format(i=i)), F.lit(n)) for i, n in enumerate(names)]),
                    lambda x: x.isNotNull())


def _current(df: Any, key: list[str], names: list[str], truncates: bool = True) -> Any:
    """The current state of the changes ``df`` (docs/tables.md, "Current state"): per key the
    last event by ``_seq`` (then ``_row``), a column absent from an image keeping the last value
    present before it (with its ``__u<i>`` flag); deletes remove the key; rows before the last
    truncate are gone; ``_unknown`` lists the columns whose value is not known.
    ``truncates=False``: the caller knows ``df`` has no ``TRUNCATE`` (no job looks for one)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    rows = _after_last_truncate(df, truncates)
    order = Window.partitionBy(*key).orderBy("_seq", "_row", "_sub")
    upto = order.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    absent = F.coalesce(F.col("_absent"), F.array())
    kept = []
    for i, n in enumerate(names):
        pair = F.struct(F.col(f"`{n}`").alias("v"), F.col(f"__u{i}").alias("u"))
        if n not in key:
            pair = F.last(F.when(~F.array_contains(absent, n), pair), ignorenulls=True).over(upto)
        kept.append(pair.alias(f"__p{i}"))
    last = F.row_number().over(Window.partitionBy(*key).orderBy(F.desc("_seq"), F.desc("_row"), F.desc("_sub")))
    merged = rows.select(*kept, "_op", "_seq", last.alias("_last"))
    merged = merged.where((F.col("_last") == 1) & (F.col("_op") != "d"))
    unknown = _unknown_names(names, "__p{i}.u")
    return merged.select(*[F.col(f"__p{i}.v").alias(n) for i, n in enumerate(names)], "_seq",
                         unknown.alias("_unknown"))


def _multiset(df: Any, names: list[str], truncates: bool = True) -> Any:
    """The current state of a table without a primary key (docs/tables.md, "Tables without a
    primary key"): each row image counts once (``c``, ``r``, an update's after image: +1; a
    delete's or an update's before image, ``_op`` ``d``: -1) per identical row (every column
    and its ``_unknown`` flag; nulls equal); a row whose count is positive appears that many
    times, with the largest ``_seq`` of its +1 images.  A column absent from an image is not
    known there (listed in ``_unknown``)."""
    from pyspark.sql import functions as F

    rows = _after_last_truncate(df, truncates)
    absent = F.coalesce(F.col("_absent"), F.array())
    flags = [(F.col(f"__u{i}") | F.array_contains(absent, n)).alias(f"__u{i}") for i, n in enumerate(names)]
    weight = F.when(F.col("_op") == "d", F.lit(-1)).otherwise(F.lit(1))
    counted = (rows.select(*[F.col(f"`{n}`") for n in names], *flags, weight.alias("_w"), "_seq")
               .groupBy(*[F.col(f"`{n}`") for n in names], *[F.col(f"__u{i}") for i in range(len(names))])
               .agg(F.sum("_w").alias("_n"), F.max(F.when(F.col("_w") > 0, F.col("_seq"))).alias("_seq"))
               .where(F.col("_n") > 0))
    repeated = counted.withColumn("_copy", F.explode(F.sequence(F.lit(1), F.col("_n").cast("int"))))
    unknown = _unknown_names(names, "__u{i}")
    return repeated.select(*[F.col(f"`{n}`") for n in names], "_seq", unknown.alias("_unknown"))


def row_images(changes: Any, lin: Lineage) -> Any:
    """The row images the current state folds (``changes``: ``changes_frame`` rows of ``lin``),
    with ``_sub`` ordering the images of one event: every event as it is (``_sub`` 1; a delete's
    row is its before image), and, before it (``_sub`` 0), a delete (``_op`` ``d``) of the
    before image of an update that changed the primary key (the old key's row is gone: UPDATE
    of a key column, MySQL 8.0 manual 15.2.17; PostgreSQL 15 logs the old key then: ALTER TABLE,
    REPLICA IDENTITY DEFAULT), or, for
    a table without a primary key, of every update's before image (the row it replaced)."""
    from pyspark.sql import functions as F

    last = [v.table for v in lin.versions if v.table is not None][-1]
    key = list(last.primary_key)
    cols = [f.name for f in column_order(lin)]
    plus = changes.withColumn("_sub", F.lit(1))
    update = (F.col("_op") == "u") & F.col("_before").isNotNull()
    if key:
        known, same = F.lit(True), F.lit(True)
        for k in key:
            old = F.col(f"_before.`{k}`")
            known, same = known & old.isNotNull(), same & old.eqNullSafe(F.col(f"`{k}`"))
        changed = update & known & ~same  # a known old key that differs from the new one
        others = [f.name for f in current_fields(lin) if f.name not in key]
        absent = F.array(*[F.lit(n) for n in others]).cast("array<string>")  # (a delete gives no value)
    else:
        changed = update
        absent = F.col("_before_absent")
    minus = changes.where(changed).select(
        *[F.col(f"_before.`{c}`").alias(c) for c in cols], F.lit("d").alias("_op"), "_seq", "_position", "_ts",
        "_tx", "_row", absent.alias("_absent"), "_before", "_before_absent", F.lit(0).alias("_sub"))
    return plus.unionByName(minus.select(*plus.columns))


def read_table(spark, out: str | Path, table: str, current: bool = False, as_of_seq: int | None = None) -> Any:
    """The rows of source table ``table`` (``"db.table"`` or ``"db.schema.table"``, any name it
    had) in ``out`` (a local ``ddlcore run`` output), as a Spark ``DataFrame`` in the table's
    latest schema — or the schema at ``as_of_seq``, with the events up to it.  ``current=False``:
    every row event (the changes table: source columns, then ``_op``, ``_seq``, ``_position``,
    ``_ts``, ``_tx``, ``_row``, ``_absent``, ``_before``, ``_before_absent``); ``current=True``:
    one row per primary key (source columns, ``_seq`` of the last event and ``_unknown``: the
    columns whose value ddlcore cannot know, docs/tables.md), or every row
    event's after image collapsed per all columns for a table without a primary key (docs/tables.md).
    Raises ``ReadError`` for an output without a history or a table it does not know."""
    from pyspark.sql import functions as F

    out = Path(out)
    lin, info = _lineage(out, table, as_of_seq)
    physical = info.get("format") == "iceberg"

    def dirs_of(v: Any) -> list[str]:
        path = out / version_dir(v.table_id.database, v.table_id.schema, v.table_id.name, v.version)
        return [str(path)] if path.exists() and any(path.glob("*.parquet")) else []

    df = changes_frame(spark, lin, dirs_of, physical)
    if df is None:
        schema = ", ".join(f"`{f.name}` {_spark_type(f.spec)}" for f in column_order(lin))
        empty = spark.createDataFrame([], schema + ", _op string, _seq bigint, _row bigint, _absent array<string>")
        now = [f.name for f in lin.fields.values() if f.alive and f.current]
        return empty if not current else empty.select(*now, "_seq", F.array().cast("array<string>").alias("_unknown"))
    if as_of_seq is not None:
        df = df.where(F.col("_seq") <= as_of_seq)
    return current_frame(df, lin) if current else df


def current_frame(changes: Any, lin: Lineage, previous: Any = None, truncates: bool = True) -> Any:
    """The current state (docs/tables.md, "Current state") of the row events ``changes``
    (``changes_frame``) of ``lin``: its current fields in the source's order, ``_seq`` and
    ``_unknown``.  ``previous``: a current state computed before these events (same columns;
    its rows count as the first events of their keys, so absent columns keep their values).
    Key: the primary key, or every column for a table without one.  ``truncates=False``: the
    caller knows ``changes`` hold no ``TRUNCATE`` (saves the Spark job looking for the last one)."""
    from pyspark.sql import functions as F

    last = [v.table for v in lin.versions if v.table is not None][-1]
    drops = [i for i, v in enumerate(lin.versions) if v.table is None]
    if drops and drops[-1] + 1 < len(lin.versions):  # re-created after a DROP: its rows only
        changes = changes.where(F.col("_seq") >= lin.versions[drops[-1] + 1].valid_from_seq)
    df, names = _server_values(row_images(changes, lin), lin)  # the current fields only, not the retired ones
    if previous is not None:
        flags = [F.array_contains(F.coalesce(F.col("_unknown"), F.array()), n).alias(f"__u{i}")
                 for i, n in enumerate(names)]
        prev = previous.select(*[F.col(f"`{n}`") for n in names], *flags, F.lit("r").alias("_op"), "_seq",
                               F.lit(0).cast("bigint").alias("_row"),
                               F.lit(None).cast("array<string>").alias("_absent"), F.lit(1).alias("_sub"))
        df = prev.unionByName(df.select(*prev.columns))
    if not last.primary_key:
        return _multiset(df, names, truncates)
    return _current(df, list(last.primary_key), names, truncates)
