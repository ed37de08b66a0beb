"""The current-state table of one lineage computed on the driver with Arrow: the Arrow face of
``ddlcore.sinks.read.current_frame`` (docs/tables.md, "The current-state table").

Owns: reading a lineage's version files (local Parquet files written by Spark or by the
driver's conversion) with pyarrow, projecting each version onto the current fields (physical
names → field names, widening casts), the values the server changed without row events
(``ddlcore.sinks.serverside``), the fold of ``read._current`` in vectorised Arrow kernels (no
Python per row), and writing the result as the Parquet file Spark's write of ``current_frame``
gives: the same column names, Spark types, list element naming, nullability and Spark footer
(``ROW_METADATA_KEY`` with the field metadata Spark's plan carries, ``SPARK_VERSION_KEY``).
Runs in a process forked from the driver: must not know Spark sessions, py4j or catalogs.

The fold (docs/tables.md, "Current state"): rows from the re-creation after the last ``DROP
TABLE``; rows after the last ``TRUNCATE``; rows ordered by ``_seq`` then ``_row`` (nulls first) and numbered;
per key the last row (``group_by`` max of the numbers) decides the key's ``_op`` (a delete
removes it), ``_seq`` and key columns; each other column takes the row of the largest number
where it is not in ``_absent`` (``group_by`` max of the numbers masked by ``_absent``), with
its ``_unknown`` flag.  The rows are ``read.row_images``' (an update that changed the primary
key also deletes the old key, ``_sub`` orders the two images of one event); a table without a
primary key is folded as a multiset (``_multiset``: ``group_by`` every column, the sum of +1/-1
per image).

Everything whose result here is not known to equal Spark's raises ``Unsure`` (the caller then
uses the Spark face), precisely: a version column whose Spark type is not the field's and not
an exact widening of it (``byte``/``short``/``integer`` → ``integer``/``long``, ``float`` →
``double``, a decimal to a larger precision with the same scale); a key column of a floating
point, map, struct or nested list type (Spark normalises ``-0.0`` and ``NaN`` in keys); a retype's old values to
convert that are not integers to text/``bigint``/decimal or decimals to decimals (decimal,
date and timestamp text forms, dates to timestamps: time zones); a default to compute whose
text is not a plain integer, decimal fitting the field's scale, number for a ``double``,
``YYYY-MM-DD`` date or text for a string (a ``CURRENT_TIMESTAMP`` default: Spark's double to
timestamp cast and the session's time zone); a duplicate (``_seq``, ``_row``), a null ``_seq``; a null
in an ``_absent`` list; a file written with Spark's legacy calendar (``LEGACY_KEYS``).
"""

from __future__ import annotations

import json
import os
import re
import uuid
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from .fields import Field
from .serverside import conversion_known, default_of

__all__ = ["Unsure", "VersionFiles", "CurrentJob", "current_table", "write_current", "output_struct_json",
           "spark_json_type", "LEGACY_KEYS", "image_rows", "group_key", "arrow_type", "write_spark_parquet"]

#: Spark's footer keys of a file written with the legacy (Julian) calendar or INT96 rebasing:
#: Spark's reader rebases its dates and timestamps, pyarrow does not
LEGACY_KEYS = (b"org.apache.spark.legacyDateTime", b"org.apache.spark.legacyINT96")
_ROW_METADATA = b"org.apache.spark.sql.parquet.row.metadata"
_SIMPLE = {"int": "integer", "long": "long", "float": "float", "double": "double", "boolean": "boolean",
           "string": "string", "binary": "binary", "date": "date", "timestamp": "timestamp_ntz",
           "timestamptz": "timestamp"}
#: exact widenings of Spark's cast (source Spark type → target Spark types)
_WIDENS = {"byte": ("integer", "long"), "short": ("integer", "long"), "integer": ("long",), "float": ("double",)}
#: Spark types whose equality Spark and Arrow's hash grouping agree on (a key column; lists of
#: texts or integers: ``_group_key``)
_KEY_TYPES = ("byte", "short", "integer", "long", "string", "binary", "date", "timestamp", "timestamp_ntz", "boolean")
_DECIMAL = re.compile(r"^decimal\((\d+),\s*(\d+)\)$")
_INTEGER = re.compile(r"^[-+]?\d+$")
_PLAIN_DECIMAL = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)$")
_NUMBER = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_RANGES = {"integer": (-(1 << 31), (1 << 31) - 1), "long": (-(1 << 63), (1 << 63) - 1)}


class Unsure(Exception):
    """The Arrow face cannot know that its result equals Spark's (the reason is the message):
    the lineage's current state is computed by Spark."""


@dataclass(frozen=True)
class VersionFiles:
    """One table version's local Parquet files and the physical column of each field key in
    them (``Lineage.physical`` / ``Lineage.keys`` of that version)."""

    files: tuple[str, ...]
    columns: dict[str, str]


@dataclass
class CurrentJob:
    """What ``write_current`` needs (picklable: a forked worker gets it): the versions with
    files, in order; the current fields (``read.current_fields``) and the fields they replaced
    (by key); the primary key's field names (empty: none, ``_multiset``); ``since``: only rows from this ``_seq`` on (the table was
    re-created), or ``None``; ``dest``: the local directory to write."""

    versions: list[VersionFiles]
    fields: list[Field]
    replaced: dict[str, Field]
    key: list[str]
    since: int | None
    dest: str


def spark_json_type(spec: Any) -> Any:
    """The Spark JSON type (``DataType.jsonValue()``) of the cast to an Iceberg type spec's
    Spark type (``read.spark_type``): nested values and fields nullable."""
    if isinstance(spec, str):
        return _SIMPLE[spec]
    if spec[0] == "decimal":
        return f"decimal({spec[1]},{spec[2]})"
    if spec[0] == "list":
        return {"type": "array", "elementType": spark_json_type(spec[1]), "containsNull": True}
    if spec[0] == "map":
        return {"type": "map", "keyType": spark_json_type(spec[1]), "valueType": spark_json_type(spec[2]),
                "valueContainsNull": True}
    return {"type": "struct", "fields": [{"name": n, "type": spark_json_type(s), "nullable": True, "metadata": {}}
                                         for n, s in spec[1]]}


def _decimal(t: Any) -> tuple[int, int] | None:
    m = _DECIMAL.match(t) if isinstance(t, str) else None
    return (int(m.group(1)), int(m.group(2))) if m else None


def _widening(src: Any, dst: Any) -> bool:
    """Whether Spark's cast of type ``src`` to ``dst`` (JSON types) is the identity or an
    exact widening that Arrow's cast computes alike."""
    if src == dst:
        return True
    if isinstance(src, str) and dst in _WIDENS.get(src, ()):
        return True
    a, b = _decimal(src), _decimal(dst)
    return a is not None and b is not None and a[1] == b[1] and b[0] >= a[0]


def _footer(path: str) -> dict[str, Any]:
    """The Spark schema of a Parquet file (its footer), by field name (JSON fields)."""
    import pyarrow.parquet as pq

    meta = pq.read_metadata(path).metadata or {}
    if any(k in meta for k in LEGACY_KEYS):
        raise Unsure(f"{path}: written with Spark's legacy calendar (rebased dates/timestamps)")
    text = meta.get(_ROW_METADATA)
    if text is None:
        raise Unsure(f"{path}: no Spark schema in the footer")
    return {f["name"]: f for f in json.loads(text)["fields"]}


def _read(v: VersionFiles, needed: list[str]) -> tuple[Any, dict[str, Any]]:
    """A version's rows (the columns ``needed`` and the pipeline's, ``_before`` included) and its
    files' Spark fields."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    spark = _footer(v.files[0])
    cols = sorted(set(needed)) + ["_op", "_seq", "_row", "_absent", "_before", "_before_absent"]
    tables = [pq.read_table(f, columns=cols) for f in v.files]
    return pa.concat_tables(tables) if len(tables) > 1 else tables[0], spark


def _column(table: Any, spark: dict[str, Any], phys: str | None, spec: Any, what: str) -> Any:
    """The values of physical column ``phys`` cast to field type ``spec`` (nulls when absent)."""
    import pyarrow as pa

    target = _arrow_type(spec)
    if phys is None:
        return pa.nulls(table.num_rows, target)
    src, dst = spark[phys]["type"], spark_json_type(spec)
    if not _widening(src, dst):
        raise Unsure(f"{what}: Spark type {json.dumps(src)} read as {json.dumps(dst)} is not an exact widening")
    return table.column(phys).combine_chunks().cast(target)


def _arrow_type(spec: Any) -> Any:
    """The Arrow type Spark's Parquet values of a field of type ``spec`` are written as."""
    from pyspark.sql.pandas.types import to_arrow_type
    from pyspark.sql.types import StructType

    one = {"type": "struct", "fields": [{"name": "v", "type": spark_json_type(spec), "nullable": True, "metadata": {}}]}
    return to_arrow_type(StructType.fromJson(one).fields[0].dataType, timezone="UTC")


def _literal(text: str, spec: Any, what: str) -> Any:
    """The value of Spark's cast of the text ``text`` to ``spec`` when exact (module docstring)."""
    import datetime

    kind = spark_json_type(spec)
    if kind == "string":
        return text
    if kind in _RANGES and _INTEGER.match(text):
        lo, hi = _RANGES[kind]
        if lo <= int(text) <= hi:
            return int(text)
    if kind == "double" and _NUMBER.match(text):
        return float(text)
    dec = _decimal(kind)
    if dec is not None and _PLAIN_DECIMAL.match(text):
        try:
            value = Decimal(text)
        except InvalidOperation:  # pragma: no cover - the pattern admits valid numbers only
            value = None
        if value is not None and -value.as_tuple().exponent <= dec[1] and \
                len(value.as_tuple().digits) + value.as_tuple().exponent <= dec[0] - dec[1]:
            return value
    if kind == "date" and _DATE.match(text):
        try:
            return datetime.date.fromisoformat(text)
        except ValueError:
            pass
    raise Unsure(f"{what}: the default {text!r} cast to {json.dumps(kind)}")


def _convert(values: Any, old: Any, new: Any, what: str) -> Any:
    """A retype's old values (type ``old``) converted to ``new`` as Spark's cast does, when
    exact here (integers to text, ``bigint`` or a decimal; decimals to decimals; text)."""
    import pyarrow as pa

    target = _arrow_type(new)
    if values.null_count == len(values):
        return pa.nulls(len(values), target)
    src, dst = spark_json_type(old), spark_json_type(new)
    ints = ("integer", "long")
    if (src in ints and (dst in ("string", "long") or _decimal(dst))) or (_decimal(src) and _decimal(dst)) \
            or src == dst == "string":
        return values.cast(target)
    raise Unsure(f"{what}: converting {json.dumps(src)} values to {json.dumps(dst)}")


def _server_value(table: Any, f: Field, replaced: dict[str, Field], old: Any, value: Any) -> tuple[Any, Any]:
    """``value`` (field ``f``'s column of a version) with the rows before the DDL that added
    or retyped ``f`` given what the server gave them (``read._server_values``), and the
    ``unknown`` flags."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = table.num_rows
    if f.since_seq is None:
        return value, pa.nulls(n, pa.bool_()).fill_null(False)
    before = pc.less(table.column("_seq").combine_chunks(), f.since_seq).fill_null(False)
    if not pc.any(before).as_py():
        return value, pa.nulls(n, pa.bool_()).fill_null(False)
    what = f"field {f.name}"
    target = _arrow_type(f.spec)
    if f.replaces is not None:
        known = conversion_known(replaced[f.replaces].spec, f.spec) and not f.using
        then = _convert(old.filter(before), replaced[f.replaces].spec, f.spec, what) if known else None
        full = pa.nulls(n, target)
        if then is not None:  # the converted rows back into their places
            full = pc.replace_with_mask(full, before, then)
    else:
        d = default_of(f.default, f.since_ts)
        known = d.known
        if d.ts is not None:
            raise Unsure(f"{what}: a CURRENT_TIMESTAMP default (Spark's double to timestamp cast)")
        lit = None if d.value is None else _literal(d.value, f.spec, what)
        full = pa.repeat(pa.scalar(lit, target), n) if lit is not None else pa.nulls(n, target)
    return pc.if_else(before, full, value), pc.and_(before, pa.scalar(not known))


def _projected(table: Any, spark: dict[str, Any], v: VersionFiles, job: CurrentJob) -> dict[str, Any]:
    """``__v<i>``/``__u<i>`` per current field of the physical columns of ``table`` (Spark
    fields ``spark``)."""
    cols: dict[str, Any] = {}
    for i, f in enumerate(job.fields):
        value = _column(table, spark, v.columns.get(f.key), f.spec, f"field {f.name}")
        old = None
        if f.replaces is not None:
            r = job.replaced[f.replaces]
            old = _column(table, spark, v.columns.get(r.key), r.spec, f"field {r.name}")
        cols[f"__v{i}"], cols[f"__u{i}"] = _server_value(table, f, job.replaced, old, value)
    return cols


def _same(a: Any, b: Any, kind: Any, name: str) -> Any:
    """Whether key values ``a`` and ``b`` are equal (false where either is null)."""
    import pyarrow.compute as pc

    return pc.equal(_group_key(a, kind, name), _group_key(b, kind, name)).fill_null(False)


def _minus(table: Any, spark: dict[str, Any], v: VersionFiles, job: CurrentJob, plus: dict[str, Any]) -> Any:
    """The images ``read.row_images`` puts before an update's (``_sub`` 0, ``_op`` ``d``): its
    before image when it changed the primary key (the other columns absent: a delete gives no
    value), every update's for a table without a primary key; ``None`` when there are none.
    ``plus``: the after images' ``__v<i>`` columns (``_projected``) of ``table``'s rows."""
    import pyarrow as pa
    import pyarrow.compute as pc

    before = table.column("_before").combine_chunks()
    mask = pc.and_(pc.equal(table.column("_op"), "u").fill_null(False), pc.is_valid(before))
    if not pc.any(mask).as_py():
        return None
    updates = table.filter(mask)
    before = updates.column("_before").combine_chunks()
    inner = {f["name"]: f for f in spark["_before"]["type"]["fields"]}
    cols = _projected(pa.table({**{n: before.field(n) for n in inner}, "_seq": updates.column("_seq")}),
                      inner, v, job)
    n = updates.num_rows
    absent = updates.column("_before_absent").combine_chunks().cast(pa.list_(pa.string()))
    keep = None
    if job.key:
        names = [f.name for f in job.fields]
        known, same = pa.repeat(pa.scalar(True), n), pa.repeat(pa.scalar(True), n)
        for k in job.key:
            i = names.index(k)
            kind = spark_json_type(job.fields[i].spec)
            known = pc.and_(known, pc.is_valid(cols[f"__v{i}"]))
            same = pc.and_(same, _same(cols[f"__v{i}"], plus[f"__v{i}"].filter(mask), kind, k))
        keep = pc.and_(known, pc.invert(same))  # a known old key that differs from the new one
        others = pa.scalar([nm for nm in names if nm not in job.key], pa.list_(pa.string()))
        absent = pa.repeat(others, n)
    cols.update({"_op": pa.repeat(pa.scalar("d"), n), "_seq": updates.column("_seq").combine_chunks(),
                 "_row": updates.column("_row").combine_chunks(), "_absent": absent,
                 "_sub": pa.repeat(pa.scalar(0, pa.int8()), n)})
    return pa.table(cols) if keep is None else pa.table(cols).filter(keep)


def _version_table(v: VersionFiles, job: CurrentJob) -> Any:
    """One version's row images (``read.row_images``): ``__v<i>``/``__u<i>`` per current field,
    ``_op``, ``_seq``, ``_row``, ``_absent``, ``_sub``."""
    import pyarrow as pa

    needed = [v.columns[k] for f in job.fields for k in (f.key, f.replaces) if k is not None and k in v.columns]
    table, spark = _read(v, needed)
    cols = _projected(table, spark, v, job)
    plus = dict(cols)
    for m in ("_op", "_seq", "_row"):
        cols[m] = table.column(m).combine_chunks()
    cols["_absent"] = table.column("_absent").combine_chunks().cast(pa.list_(pa.string()))
    cols["_sub"] = pa.repeat(pa.scalar(1, pa.int8()), len(table))
    minus = _minus(table, spark, v, job, plus)
    return pa.table(cols) if minus is None else pa.concat_tables([pa.table(cols), minus])


def _rows(job: CurrentJob) -> Any:
    """Every row event of the job's versions, the re-creation, ``TRUNCATE`` and order rules
    applied: sorted by ``_seq``, ``_row``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table = pa.concat_tables([_version_table(v, job) for v in job.versions])
    if job.since is not None:
        table = table.filter(pc.greater_equal(table.column("_seq"), job.since))
    if table.column("_seq").null_count:
        raise Unsure("a row event without _seq")
    truncate = pc.equal(table.column("_op"), "t").fill_null(False)
    rows = pc.not_equal(table.column("_op"), "t")  # (null: dropped, as Spark's ``where`` drops it)
    if pc.any(truncate).as_py():
        rows = pc.and_(rows, pc.greater(table.column("_seq"), pc.max(table.column("_seq").filter(truncate))))
    table = table.filter(rows)
    # (Spark's ascending order puts a null ``_row`` first: an event without rows numbered)
    table = table.sort_by([("_seq", "ascending", "at_start"), ("_row", "ascending", "at_start"),
                           ("_sub", "ascending")])
    seq, row = table.column("_seq").combine_chunks(), table.column("_row").combine_chunks()
    sub = table.column("_sub").combine_chunks()
    same_row = pc.or_kleene(pc.equal(row[1:], row[:-1]), pc.and_(pc.is_null(row[1:]), pc.is_null(row[:-1])))
    same_row = pc.and_(same_row, pc.equal(sub[1:], sub[:-1]))
    if len(seq) > 1 and pc.any(pc.and_(pc.equal(seq[1:], seq[:-1]), same_row)).as_py():
        raise Unsure("two row events with the same _seq and _row")
    return table


def _absent_masks(absent: Any, names: list[str]) -> dict[str, Any]:
    """Per name: which rows list it in ``_absent`` (a null list lists nothing)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    flat = pc.list_flatten(absent)
    if flat.null_count:
        raise Unsure("a null in an _absent list")
    parents = pc.list_parent_indices(absent)
    rows = pa.array(np.arange(len(absent), dtype=np.int64))
    return {n: pc.is_in(rows, value_set=parents.filter(pc.equal(flat, n))) for n in names}


def _group_key(values: Any, kind: Any, name: str) -> Any:
    """Key column ``values`` (Spark type ``kind``) as Arrow's hash grouping can take them, equal
    exactly when Spark's partitioning takes them as equal: the values themselves, or for a
    list of texts or integers an injective text (each element length-prefixed, ``N`` for a
    null element; a null list stays null).  Raises ``Unsure`` for other types."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if kind in _KEY_TYPES or _decimal(kind) is not None:
        return values
    element = kind.get("elementType") if isinstance(kind, dict) and kind.get("type") == "array" else None
    if element not in ("string", "integer", "long", "byte", "short"):
        raise Unsure(f"key column {name}: Spark type {json.dumps(kind)}")
    import numpy as np

    items = pc.list_flatten(values).cast(pa.string())
    size = pc.binary_length(items).cast(pa.string())
    coded = pc.binary_join_element_wise(size, items, ":").fill_null("N")
    counts = pc.list_value_length(values).fill_null(0).to_numpy(zero_copy_only=False)
    offsets = pa.array(np.concatenate([[0], np.cumsum(counts)]).astype(np.int32))
    lists = pa.ListArray.from_arrays(offsets, coded, mask=values.is_null())
    return pc.binary_join(lists, "")


def _unknown(flags: list[Any], names: list[str], n: int) -> Any:
    """The ``_unknown`` lists: per row the names whose flag is true, in field order."""
    import numpy as np
    import pyarrow as pa

    if not names:
        return pa.array([[]] * n, pa.list_(pa.field("element", pa.string())))
    matrix = np.column_stack([f.fill_null(False).to_numpy(zero_copy_only=False) for f in flags]).astype(bool)
    rows, cols = np.nonzero(matrix)
    offsets = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))]).astype(np.int32)
    values = pa.array(np.array(names, dtype=object)[cols], pa.string())
    return pa.ListArray.from_arrays(pa.array(offsets), values, type=pa.list_(pa.field("element", pa.string())))


def _multiset(table: Any, job: CurrentJob, names: list[str], types: dict[str, Any]) -> Any:
    """The current state of a table without a primary key (``read._multiset``): per identical
    row (values and ``_unknown`` flags) the count of its +1 images less its -1 images
    (``_op`` ``d``); a positive count gives that many rows, with the largest ``_seq`` of its
    +1 images; a column absent from an image is not known there."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    masks = _absent_masks(table.column("_absent").combine_chunks(), names)
    n = table.num_rows
    minus = pc.equal(table.column("_op"), "d").fill_null(False)
    group: dict[str, Any] = {}
    flags = []
    for i, nm in enumerate(names):
        group[f"__k{i}"] = _group_key(table.column(f"__v{i}").combine_chunks(), types[nm], nm)
        flags.append(pc.or_(table.column(f"__u{i}").combine_chunks().fill_null(False), masks[nm]))
        group[f"__f{i}"] = flags[-1]
    group["__w"] = pc.if_else(minus, pa.scalar(-1, pa.int64()), pa.scalar(1, pa.int64()))
    group["__s"] = pc.if_else(minus, pa.scalar(None, pa.int64()), table.column("_seq").combine_chunks())
    group["__i"] = pa.array(np.arange(n, dtype=np.int64))
    keys = [f"__k{i}" for i in range(len(names))] + [f"__f{i}" for i in range(len(names))]
    folded = pa.table(group).group_by(keys, use_threads=False).aggregate(
        [("__w", "sum"), ("__s", "max"), ("__i", "min")])
    folded = folded.filter(pc.greater(folded.column("__w_sum"), 0))
    counts = folded.column("__w_sum").to_numpy(zero_copy_only=False)
    at = pa.array(np.repeat(folded.column("__i_min").to_numpy(zero_copy_only=False), counts))
    out = {nm: table.column(f"__v{i}").take(at) for i, nm in enumerate(names)}
    out["_seq"] = pa.array(np.repeat(folded.column("__s_max").to_numpy(zero_copy_only=False), counts), pa.int64())
    out["_unknown"] = _unknown([f.take(at) for f in flags], names, len(at))
    return pa.table(out)


def current_table(job: CurrentJob, rows: Any = None) -> Any:
    """The current state of the job's lineage (module docstring) as an Arrow table: the
    current fields, ``_seq``, ``_unknown``, a row per key in the order of their first events.
    ``rows``: the row images to fold (``image_rows``' columns, in event order) instead of the
    job's (``ddlcore.sinks.arrowmerge``: the stored rows first).  Raises ``Unsure``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    names = [f.name for f in job.fields]
    types = {f.name: spark_json_type(f.spec) for f in job.fields}
    table = _rows(job) if rows is None else rows
    if not job.key:
        return _multiset(table, job, names, types)
    n = table.num_rows
    index = pa.array(np.arange(n, dtype=np.int64))
    masks = _absent_masks(table.column("_absent").combine_chunks(), names)
    group = {f"__k{i}": _group_key(table.column(f"__v{names.index(k)}").combine_chunks(), types[k], k)
             for i, k in enumerate(job.key)}
    group["__last"] = index
    others = [i for i, nm in enumerate(names) if nm not in job.key]
    for i in others:
        group[f"__a{i}"] = pc.if_else(masks[names[i]], pa.scalar(None, pa.int64()), index)
    aggs = [("__last", "max")] + [(f"__a{i}", "max") for i in others]
    folded = pa.table(group).group_by([f"__k{i}" for i in range(len(job.key))], use_threads=False).aggregate(aggs)
    folded = folded.filter(pc.not_equal(table.column("_op").take(folded.column("__last_max")), "d").fill_null(False))
    last = folded.column("__last_max")
    out, flags = {}, []
    for i, nm in enumerate(names):
        at = last if nm in job.key else folded.column(f"__a{i}_max")
        out[nm] = table.column(f"__v{i}").take(at)
        flags.append(table.column(f"__u{i}").take(at).combine_chunks())
    out["_seq"] = table.column("_seq").take(last)
    out["_unknown"] = _unknown(flags, names, folded.num_rows)
    return pa.table(out)


def _metadata_of(job: CurrentJob, f: Field) -> dict[str, Any]:
    """The field metadata Spark's plan of ``current_frame`` carries to its output for ``f``:
    the version column's (its footer's) when one version's files are read, the field has no
    server-side value and the column's type is the field's (no cast); else none."""
    if len(job.versions) != 1 or f.since_seq is not None:
        return {}
    v = job.versions[0]
    phys = v.columns.get(f.key)
    if phys is None:
        return {}
    spark = _footer(v.files[0])
    return spark[phys]["metadata"] if spark[phys]["type"] == spark_json_type(f.spec) else {}


def output_struct_json(job: CurrentJob) -> dict[str, Any]:
    """The Spark schema (JSON) Spark's write of ``current_frame`` gives the job's lineage."""
    seq_meta = _footer(job.versions[0].files[0])["_seq"]["metadata"] if job.versions else {}
    fields = [{"name": f.name, "type": spark_json_type(f.spec), "nullable": True, "metadata": _metadata_of(job, f)}
              for f in job.fields]
    fields.append({"name": "_seq", "type": "long", "nullable": True, "metadata": seq_meta})
    fields.append({"name": "_unknown", "type": {"type": "array", "elementType": "string", "containsNull": True},
                   "nullable": False, "metadata": {}})
    return {"type": "struct", "fields": fields}


def write_current(job: CurrentJob) -> list[str]:
    """Compute the job's current state and write it into ``job.dest`` (replaced: Spark's
    ``mode("overwrite")``) as one Parquet file named as Spark names its output
    (``part-00000-<uuid>-c000.snappy.parquet``); returns the names written.  Raises
    ``Unsure`` (nothing written) and what pyarrow raises."""
    return write_spark_parquet(current_table(job), output_struct_json(job), job.dest)


def write_spark_parquet(table: Any, struct_json: dict[str, Any], dest: str) -> list[str]:
    """Write ``table`` (columns by the names of ``struct_json``, a Spark schema as JSON) into the
    local directory ``dest`` (replaced) as ``write_current`` does; returns the names written."""
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql.types import StructType

    from ..spark.parquetfiles import PARQUET_WRITER, parquet_format

    schema, footer = parquet_format(StructType.fromJson(struct_json))
    table = pa.table([table.column(f.name).cast(f.type) for f in schema], schema=schema)
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    name = f"part-00000-{uuid.uuid4()}-c000.snappy.parquet"
    with pq.ParquetWriter(os.path.join(dest, name), schema, **PARQUET_WRITER) as writer:
        writer.write_table(table)
        writer.add_key_value_metadata(footer)
    return [name]


#: for the merge's Arrow face (``ddlcore.sinks.arrowmerge``): a job's row images (every event,
#: sorted, ``TRUNCATE`` applied), the key columns as Arrow's grouping takes them, a field's
#: Arrow type
image_rows = _rows
group_key = _group_key
arrow_type = _arrow_type
