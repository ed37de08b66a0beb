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
from functools import lru_cache
from typing import Any

from .fields import Field
from .serverside import conversion_known, default_of

__all__ = ["Unsure", "TooLarge", "VersionFiles", "CurrentJob", "current_table", "write_current", "current_files",
           "output_struct_json", "spark_json_type", "within", "LEGACY_KEYS", "spark_fields", "image_rows", "group_key",
           "arrow_type", "write_spark_parquet"]

#: Spark's footer keys of a file written with the legacy (Julian) calendar or INT96 rebasing:
#: Spark's reader rebases its dates and timestamps, pyarrow does not
LEGACY_KEYS = (b"org.apache.spark.legacyDateTime", b"org.apache.spark.legacyINT96")
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


class TooLarge(Unsure):
    """The lineage's files hold more row events or bytes than a worker takes (``within``):
    its current state is computed by Spark."""


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
    (by key); the primary key's field names (empty: none, ``_multiset``); ``since``: only rows
    from this ``_seq`` on (the table was re-created), or ``None``; ``dest``: the local directory to write; ``max_rows``,
    ``max_bytes``: the most row events and bytes of values the worker takes (``within``); ``prefix``:
    the written file's name starts with it (the run id) and it is written beside the files
    ``dest`` holds (the table's data directory: no directory of its own), ``None``: ``dest`` is
    replaced (``write_spark_parquet``)."""

    versions: list[VersionFiles]
    fields: list[Field]
    replaced: dict[str, Field]
    key: list[str]
    since: int | None
    dest: str
    max_rows: int | None = None
    max_bytes: int = 1 << 62
    prefix: str | None = None


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


def within(max_rows: int | None, max_bytes: int, rows: int, nbytes: int) -> bool:
    """Whether a lineage whose version files hold ``rows`` row events and ``nbytes`` bytes of
    values uncompressed (their footers) is computed by this face: ``rows`` within ``max_rows``
    (``None``: no limit; negative: none) and ``nbytes`` within ``max_bytes`` (the worker holds
    every row at once: the fold needs every row of a key)."""
    if max_rows is not None and max_rows < 0:
        return False
    return (max_rows is None or rows <= max_rows) and nbytes <= max_bytes


def spark_fields(meta: dict[bytes, bytes] | None, path: str) -> dict[str, Any]:
    """The Spark schema of the Parquet file ``path`` from its footer's key-value ``meta``, by
    field name (JSON fields).  Raises ``Unsure`` for a footer without Spark's schema or with
    Spark's legacy calendar keys (``LEGACY_KEYS``)."""
    from ..spark.parquetfiles import ROW_METADATA_KEY

    meta = meta or {}
    if any(k in meta for k in LEGACY_KEYS):
        raise Unsure(f"{path}: written with Spark's legacy calendar (rebased dates/timestamps)")
    text = meta.get(ROW_METADATA_KEY.encode())
    if text is None:
        raise Unsure(f"{path}: no Spark schema in the footer")
    return _parsed_fields(text)


@lru_cache(maxsize=256)
def _parsed_fields(text: bytes) -> dict[str, Any]:
    """``spark_fields`` of a footer's Spark schema ``text`` (the versions of a shape share it;
    not to be changed: it is cached)."""
    return {f["name"]: f for f in json.loads(text)["fields"]}


@dataclass(frozen=True)
class _Version:
    """One version's rows, read once: ``files``, the ``table`` (the columns the job needs and
    the pipeline's), its files' Spark fields (``spark``, the first file's footer) and
    ``footers``: per file, its path, record count and size in bytes (``current_files``)."""

    files: VersionFiles
    table: Any
    spark: dict[str, Any]
    footers: tuple[tuple[str, int, int], ...] = ()


def _needed(v: VersionFiles, job: CurrentJob) -> list[str]:
    """The columns of ``v``'s files the job reads: its fields' and the fields they replace, and
    the pipeline's (``_before`` included)."""
    needed = {v.columns[k] for f in job.fields for k in (f.key, f.replaces) if k is not None and k in v.columns}
    return sorted(needed) + ["_op", "_seq", "_row", "_absent", "_before", "_before_absent"]


def _read(job: CurrentJob) -> list[_Version]:
    """Every version's rows, each file opened once (its footer, then its columns in this
    thread, without pre-buffering: the files are small, pyarrow's threads, its coalesced
    reads and dataset discovery cost more than they read; a quarter less per file here).
    Raises ``TooLarge`` as soon as the files' footers exceed the job's limits (``within``),
    ``Unsure`` for a footer without Spark's schema or with Spark's legacy keys."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out, rows, nbytes = [], 0, 0
    for v in job.versions:
        cols, tables, spark, footers = _needed(v, job), [], None, []
        for path in v.files:
            with pq.ParquetFile(path, pre_buffer=False) as pf:
                meta = pf.metadata
                rows += meta.num_rows
                nbytes += sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
                if not within(job.max_rows, job.max_bytes, rows, nbytes):
                    raise TooLarge(f"more than {job.max_rows} row events or {job.max_bytes} bytes of values")
                fields = spark_fields(meta.metadata, path)
                spark = fields if spark is None else spark
                tables.append(pf.read(columns=cols, use_threads=False))
                footers.append((path, meta.num_rows, os.path.getsize(path)))
        out.append(_Version(v, pa.concat_tables(tables) if len(tables) > 1 else tables[0], spark, tuple(footers)))
    return out


def _chunk(table: Any, name: str) -> Any:
    """Column ``name`` of ``table`` as one array."""
    col = table.column(name)
    return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()


def _column(table: Any, spark: dict[str, Any], phys: str | None, ftype: "_FieldType", what: str) -> Any:
    """The values of physical column ``phys`` cast to the field's type (nulls when absent;
    no cast where the file's Arrow type is the field's)."""
    import pyarrow as pa

    if phys is None:
        return pa.nulls(table.num_rows, ftype.arrow)
    src = spark[phys]["type"]
    if not _widening(src, ftype.spark):
        raise Unsure(f"{what}: Spark type {json.dumps(src)} read as {json.dumps(ftype.spark)} is not an exact widening")
    values = _chunk(table, phys)
    return values if values.type == ftype.arrow else values.cast(ftype.arrow)


@dataclass(frozen=True)
class _FieldType:
    """A field type's Spark JSON type (``spark_json_type``) and the Arrow type Spark's Parquet
    values of it are written as."""

    spark: Any
    arrow: Any


def _field_type(spec: Any) -> _FieldType:
    kind = spark_json_type(spec)
    return _FieldType(kind, _arrow_type_of(json.dumps(kind, sort_keys=True)))


def _arrow_type(spec: Any) -> Any:
    """The Arrow type Spark's Parquet values of a field of type ``spec`` are written as."""
    return _field_type(spec).arrow


@lru_cache(maxsize=256)
def _arrow_type_of(kind: str) -> Any:
    """``_arrow_type`` of a Spark JSON type (as JSON text: a lineage's types recur)."""
    from pyspark.sql.pandas.types import to_arrow_type
    from pyspark.sql.types import StructType

    one = {"type": "struct", "fields": [{"name": "v", "type": json.loads(kind), "nullable": True, "metadata": {}}]}
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


@dataclass(frozen=True)
class _Plan:
    """What a job's versions share, built once: the field names, each field's type and the
    type of the field it replaces (``None``: none)."""

    names: list[str]
    types: list[_FieldType]
    old: list[_FieldType | None]


def _plan(job: CurrentJob) -> _Plan:
    types = [_field_type(f.spec) for f in job.fields]
    old = [_field_type(job.replaced[f.replaces].spec) if f.replaces is not None else None for f in job.fields]
    return _Plan([f.name for f in job.fields], types, old)


def _before(seq: Any, since: int | None) -> Any:
    """Which rows of the ``_seq`` values ``seq`` come before ``since`` (a null ``_seq``: not):
    ``None`` for none (or no ``since``), ``True`` for every row, else the boolean mask."""
    import pyarrow.compute as pc

    if since is None or len(seq) == 0:
        return None
    bounds = pc.min_max(seq)
    lo, hi = bounds["min"].as_py(), bounds["max"].as_py()
    if lo is None or lo >= since:
        return None
    if hi < since and seq.null_count == 0:
        return True
    return pc.less(seq, since).fill_null(False)


def _server_value(seq: Any, f: Field, replaced: dict[str, Field], old: Any, value: Any,
                  ftype: _FieldType) -> tuple[Any, Any]:
    """``value`` (field ``f``'s column of a version whose rows have the ``_seq`` values ``seq``)
    with the rows before the DDL that added or retyped ``f`` given what the server gave them
    (``read._server_values``), and the ``unknown`` flags (``None``: none is)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    before = _before(seq, f.since_seq)
    if before is None:
        return value, None
    what, n = f"field {f.name}", len(seq)
    if f.replaces is not None:
        known = conversion_known(replaced[f.replaces].spec, f.spec) and not f.using
        olds = old if before is True else old.filter(before)
        then = _convert(olds, replaced[f.replaces].spec, f.spec, what) if known else None
        if before is True:
            full = then if then is not None else pa.nulls(n, ftype.arrow)
        else:
            full = pa.nulls(n, ftype.arrow)
            if then is not None:  # the converted rows back into their places
                full = pc.replace_with_mask(full, before, then)
    else:
        d = default_of(f.default, f.since_ts)
        known = d.known
        if d.ts is not None:
            raise Unsure(f"{what}: a CURRENT_TIMESTAMP default (Spark's double to timestamp cast)")
        lit = None if d.value is None else _literal(d.value, f.spec, what)
        full = pa.repeat(pa.scalar(lit, ftype.arrow), n) if lit is not None else pa.nulls(n, ftype.arrow)
    if before is True:
        return full, None if known else pa.repeat(pa.scalar(True), n)
    return pc.if_else(before, full, value), None if known else before


def _projected(table: Any, spark: dict[str, Any], v: VersionFiles, job: CurrentJob, plan: _Plan) -> dict[str, Any]:
    """``__v<i>`` per current field of the physical columns of ``table`` (Spark fields
    ``spark``), and ``__u<i>`` where some of its values are not known."""
    cols: dict[str, Any] = {}
    seq = _chunk(table, "_seq")
    for i, f in enumerate(job.fields):
        value = _column(table, spark, v.columns.get(f.key), plan.types[i], f"field {f.name}")
        old = None
        if f.replaces is not None:
            r = job.replaced[f.replaces]
            old = _column(table, spark, v.columns.get(r.key), plan.old[i], f"field {r.name}")
        cols[f"__v{i}"], unknown = _server_value(seq, f, job.replaced, old, value, plan.types[i])
        if unknown is not None:
            cols[f"__u{i}"] = unknown
    return cols


def _same(a: Any, b: Any, kind: Any, name: str) -> Any:
    """Whether key values ``a`` and ``b`` are equal (false where either is null)."""
    import pyarrow.compute as pc

    return pc.equal(_group_key(a, kind, name), _group_key(b, kind, name)).fill_null(False)


def _minus(ver: _Version, job: CurrentJob, plan: _Plan, plus: dict[str, Any]) -> Any:
    """The images ``read.row_images`` puts before an update's (``_sub`` 0, ``_op`` ``d``): its
    before image when it changed the primary key (the other columns absent: a delete gives no
    value), every update's for a table without a primary key; ``None`` when there are none.
    ``plus``: the after images' ``__v<i>`` columns (``_projected``) of the version's rows."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table = ver.table
    mask = pc.and_(pc.equal(table.column("_op"), "u").fill_null(False), pc.is_valid(table.column("_before")))
    if not pc.any(mask).as_py():
        return None
    updates = table.filter(mask)
    before = _chunk(updates, "_before")
    inner = {f["name"]: f for f in ver.spark["_before"]["type"]["fields"]}
    cols = _projected(pa.table({**{n: before.field(n) for n in inner}, "_seq": updates.column("_seq")}),
                      inner, ver.files, job, plan)
    n = updates.num_rows
    absent = _chunk(updates, "_before_absent")
    keep = None
    if job.key:
        known, same = pa.repeat(pa.scalar(True), n), pa.repeat(pa.scalar(True), n)
        for k in job.key:
            i = plan.names.index(k)
            known = pc.and_(known, pc.is_valid(cols[f"__v{i}"]))
            same = pc.and_(same, _same(cols[f"__v{i}"], plus[f"__v{i}"].filter(mask), plan.types[i].spark, k))
        keep = pc.and_(known, pc.invert(same))  # a known old key that differs from the new one
        others = pa.scalar([nm for nm in plan.names if nm not in job.key], pa.list_(pa.string()))
        absent = pa.repeat(others, n)
    cols.update({"_op": pa.repeat(pa.scalar("d"), n), "_seq": _chunk(updates, "_seq"),
                 "_row": _chunk(updates, "_row"), "_absent": _string_lists(absent),
                 "_sub": pa.repeat(pa.scalar(0, pa.int8()), n)})
    return pa.table(cols) if keep is None else pa.table(cols).filter(keep)


def _string_lists(values: Any) -> Any:
    """A list-of-text array as ``list<item: string>`` (one type for every version's)."""
    import pyarrow as pa

    want = pa.list_(pa.string())
    return values if values.type == want else values.cast(want)


def _version_table(ver: _Version, job: CurrentJob, plan: _Plan) -> Any:
    """One version's row images (``read.row_images``): ``__v<i>`` (and ``__u<i>``: ``_projected``)
    per current field, ``_op``, ``_seq``, ``_row``, ``_absent``, ``_sub``."""
    import pyarrow as pa

    table = ver.table
    cols = _projected(table, ver.spark, ver.files, job, plan)
    plus = dict(cols)
    for m in ("_op", "_seq", "_row"):
        cols[m] = _chunk(table, m)
    cols["_absent"] = _string_lists(_chunk(table, "_absent"))
    cols["_sub"] = pa.repeat(pa.scalar(1, pa.int8()), len(table))
    minus = _minus(ver, job, plan, plus)
    # (a ``__u<i>`` column missing from some images: null there, false where it is read)
    return pa.table(cols) if minus is None else pa.concat_tables([pa.table(cols), minus], promote_options="default")


def _rows(versions: list[_Version], job: CurrentJob, plan: _Plan) -> Any:
    """Every row event of the job's versions, the re-creation, ``TRUNCATE`` and order rules
    applied: sorted by ``_seq``, ``_row``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table = pa.concat_tables([_version_table(v, job, plan) for v in versions], promote_options="default")
    if job.since is not None:
        table = table.filter(pc.greater_equal(table.column("_seq"), job.since))
    if table.column("_seq").null_count:
        raise Unsure("a row event without _seq")
    ops = table.column("_op")
    truncate = pc.equal(ops, "t").fill_null(False)
    if pc.any(truncate).as_py():
        rows = pc.and_(pc.not_equal(ops, "t"),
                       pc.greater(table.column("_seq"), pc.max(table.column("_seq").filter(truncate))))
        table = table.filter(rows)
    elif ops.null_count:
        table = table.filter(pc.not_equal(ops, "t"))  # (null: dropped, as Spark's ``where`` drops it)
    # (Spark's ascending order puts a null ``_row`` first: an event without rows numbered)
    table = table.sort_by([("_seq", "ascending", "at_start"), ("_row", "ascending", "at_start"),
                           ("_sub", "ascending")])
    seq, row, sub = (_chunk(table, c) for c in ("_seq", "_row", "_sub"))
    same_row = pc.or_kleene(pc.equal(row[1:], row[:-1]), pc.and_(pc.is_null(row[1:]), pc.is_null(row[:-1])))
    same_row = pc.and_(same_row, pc.equal(sub[1:], sub[:-1]))
    if len(seq) > 1 and pc.any(pc.and_(pc.equal(seq[1:], seq[:-1]), same_row)).as_py():
        raise Unsure("two row events with the same _seq and _row")
    return table


def _flags(table: Any, names: list[str]) -> list[Any]:
    """Per field, which rows' values are not known (a server value not known, ``__u<i>``, or
    the column listed in the row's ``_absent``); ``None`` where none is."""
    import pyarrow.compute as pc

    out = []
    for i, mask in enumerate(_absent_masks(table, names)):
        flag = _chunk(table, f"__u{i}").fill_null(False) if f"__u{i}" in table.column_names else None
        out.append(mask if flag is None else flag if mask is None else pc.or_(flag, mask))
    return out


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
    """The ``_unknown`` lists: per row the names whose flag is true (``None``: no row's), in
    field order."""
    import numpy as np
    import pyarrow as pa

    kind = pa.list_(pa.field("element", pa.string()))
    named = [(f, nm) for f, nm in zip(flags, names) if f is not None]
    if not named:
        return pa.ListArray.from_arrays(pa.array(np.zeros(n + 1, dtype=np.int32)), pa.array([], pa.string()), type=kind)
    matrix = np.column_stack([f.fill_null(False).to_numpy(zero_copy_only=False) for f, _ in named]).astype(bool)
    rows, cols = np.nonzero(matrix)
    offsets = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))]).astype(np.int32)
    values = pa.array(np.array([nm for _, nm in named], dtype=object)[cols], pa.string())
    return pa.ListArray.from_arrays(pa.array(offsets), values, type=kind)


def _multiset(table: Any, plan: _Plan) -> Any:
    """The current state of a table without a primary key (``read._multiset``): per identical
    row (values and ``_unknown`` flags) the count of its +1 images less its -1 images
    (``_op`` ``d``); a positive count gives that many rows, with the largest ``_seq`` of its
    +1 images; a column absent from an image is not known there."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    names = plan.names
    n = table.num_rows
    minus = pc.equal(table.column("_op"), "d").fill_null(False)
    flags = _flags(table, names)
    group: dict[str, Any] = {}
    for i, nm in enumerate(names):
        group[f"__k{i}"] = _group_key(_chunk(table, f"__v{i}"), plan.types[i].spark, nm)
        if flags[i] is not None:  # (a flag false in every row does not split a group)
            group[f"__f{i}"] = flags[i]
    group["__w"] = pc.if_else(minus, pa.scalar(-1, pa.int64()), pa.scalar(1, pa.int64()))
    group["__s"] = pc.if_else(minus, pa.scalar(None, pa.int64()), _chunk(table, "_seq"))
    group["__i"] = pa.array(np.arange(n, dtype=np.int64))
    keys = [k for k in group if k.startswith(("__k", "__f"))]
    folded = pa.table(group).group_by(keys, use_threads=False).aggregate(
        [("__w", "sum"), ("__s", "max"), ("__i", "min")])
    folded = folded.filter(pc.greater(folded.column("__w_sum"), 0))
    counts = folded.column("__w_sum").to_numpy(zero_copy_only=False)
    at = pa.array(np.repeat(folded.column("__i_min").to_numpy(zero_copy_only=False), counts))
    out = {nm: table.column(f"__v{i}").take(at) for i, nm in enumerate(names)}
    out["_seq"] = pa.array(np.repeat(folded.column("__s_max").to_numpy(zero_copy_only=False), counts), pa.int64())
    out["_unknown"] = _unknown([None if f is None else f.take(at) for f in flags], names, len(at))
    return pa.table(out)


def _keyed(table: Any, job: CurrentJob, plan: _Plan) -> Any:
    """The current state of a table with a primary key (module docstring, the fold)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    names = plan.names
    index = pa.array(np.arange(table.num_rows, dtype=np.int64))
    group = {f"__k{i}": _group_key(_chunk(table, f"__v{names.index(k)}"), plan.types[names.index(k)].spark, k)
             for i, k in enumerate(job.key)}
    group["__last"] = index
    others = [i for i, nm in enumerate(names) if nm not in job.key]
    masks = _absent_masks(table, names)
    for i in others:  # (a column absent from a row: not its latest value)
        group[f"__a{i}"] = index if masks[i] is None else pc.if_else(masks[i], pa.scalar(None, pa.int64()), index)
    aggs = [("__last", "max")] + [(f"__a{i}", "max") for i in others]
    folded = pa.table(group).group_by([f"__k{i}" for i in range(len(job.key))], use_threads=False).aggregate(aggs)
    folded = folded.filter(pc.not_equal(table.column("_op").take(folded.column("__last_max")), "d").fill_null(False))
    last = folded.column("__last_max")
    out, taken = {}, []
    for i, nm in enumerate(names):
        at = last if nm in job.key else folded.column(f"__a{i}_max")
        out[nm] = table.column(f"__v{i}").take(at)
        taken.append(None if f"__u{i}" not in table.column_names else _chunk(table, f"__u{i}").take(at))
    out["_seq"] = table.column("_seq").take(last)
    out["_unknown"] = _unknown(taken, names, folded.num_rows)
    return pa.table(out)


def _absent_masks(table: Any, names: list[str]) -> list[Any]:
    """Per field, which rows list it in ``_absent`` (``None``: no row does)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    absent = _chunk(table, "_absent")
    flat = pc.list_flatten(absent)
    if flat.null_count:
        raise Unsure("a null in an _absent list")
    listed = set(pc.unique(flat).to_pylist()) if len(flat) else set()
    if not listed:
        return [None] * len(names)
    parents = pc.list_parent_indices(absent)
    rows = pa.array(np.arange(len(absent), dtype=np.int64))
    return [pc.is_in(rows, value_set=parents.filter(pc.equal(flat, nm))) if nm in listed else None for nm in names]


def _current(job: CurrentJob) -> tuple[Any, list[_Version]]:
    """``current_table`` and the versions read for it."""
    versions = _read(job)
    plan = _plan(job)
    table = _rows(versions, job, plan)
    return (_keyed(table, job, plan) if job.key else _multiset(table, plan)), versions


def current_table(job: CurrentJob, rows: Any = None) -> Any:
    """The current state of the job's lineage (module docstring) as an Arrow table: the
    current fields, ``_seq``, ``_unknown``, a row per key (in the order Arrow's grouping gives,
    which it does not define).  ``rows``: the row images to fold (``image_rows``' columns, in
    event order) instead of the job's (``ddlcore.sinks.arrowmerge``: the stored rows first).
    Raises ``Unsure`` (``TooLarge`` among them)."""
    if rows is None:
        return _current(job)[0]
    plan = _plan(job)
    return _keyed(rows, job, plan) if job.key else _multiset(rows, plan)


def image_rows(job: CurrentJob) -> tuple[Any, dict[str, Any] | None, bool]:
    """For the merge's Arrow face (``ddlcore.sinks.arrowmerge``): the job's row images (every
    event, sorted, ``TRUNCATE`` applied: ``current_table``'s ``rows``), the Spark fields of its
    first version's first file (``output_struct_json``'s ``spark``; ``None``: no version) and
    whether its files hold a ``TRUNCATE`` (``_op`` ``t``).  Raises ``Unsure`` (``TooLarge``
    among them)."""
    import pyarrow.compute as pc

    versions = _read(job)
    truncated = any(pc.any(pc.equal(v.table.column("_op"), "t")).as_py() for v in versions)
    return _rows(versions, job, _plan(job)), (versions[0].spark if versions else None), truncated


def output_struct_json(job: CurrentJob, spark: dict[str, Any] | None) -> dict[str, Any]:
    """The Spark schema (JSON) Spark's write of ``current_frame`` gives the job's lineage;
    ``spark``: the Spark fields of the first version's first file (its footer; ``None``: the
    job has no version).  Field metadata as Spark's plan carries it (Spark 4.3: an ``Alias`` of
    a ``Cast`` has none, a ``Union`` takes its first side's, an aggregate's result has none):
    none for the fields (``read._version_frame`` casts every column to its field's type); the
    first version's ``_seq`` metadata for a table with a primary key (``_seq`` passes through
    unchanged), none without one (``read._multiset``'s ``max``)."""
    seq_meta = spark["_seq"]["metadata"] if spark is not None and job.key else {}
    fields = [{"name": f.name, "type": spark_json_type(f.spec), "nullable": True, "metadata": {}} for f in job.fields]
    fields.append({"name": "_seq", "type": "long", "nullable": True, "metadata": seq_meta})
    fields.append({"name": "_unknown", "type": {"type": "array", "elementType": "string", "containsNull": True},
                   "nullable": False, "metadata": {}})
    return {"type": "struct", "fields": fields}


def write_current(job: CurrentJob) -> list[str]:
    """Compute the job's current state and write it into ``job.dest`` (replaced: Spark's
    ``mode("overwrite")``) as one Parquet file named as Spark names its output
    (``part-00000-<uuid>-c000.snappy.parquet``); returns the names written.  Raises
    ``Unsure`` (``TooLarge`` among them; nothing written) and what pyarrow raises."""
    return current_files(job)["files"]


def current_files(job: CurrentJob) -> dict[str, Any]:
    """``write_current``: ``files``, the names written, and ``file_counts``: the record count
    and size in bytes of every file read (the job's version files) and written, by local path
    (``[record_count, file_size_in_bytes]``, as an Iceberg ``DataFile`` has them: the commit
    registers these files without opening their footers again, ``ddlcore.sinks.icecommit``).
    Raises what ``write_current`` raises."""
    table, versions = _current(job)
    names = write_spark_parquet(table, output_struct_json(job, versions[0].spark if versions else None), job.dest,
                                prefix=job.prefix)
    counts = {path: [n, size] for v in versions for path, n, size in v.footers}
    for name in names:  # (``write_spark_parquet`` writes the whole table into one file)
        path = os.path.join(job.dest, name)
        counts[path] = [table.num_rows, os.path.getsize(path)]
    return {"files": names, "file_counts": counts}


def write_spark_parquet(table: Any, struct_json: dict[str, Any], dest: str, prefix: str | None = None) -> list[str]:
    """Write ``table`` (columns by the names of ``struct_json``, a Spark schema as JSON) into the
    local directory ``dest`` (replaced) as ``write_current`` does; returns the names written.
    ``prefix``: the file is named ``<prefix>-part-00000-<uuid>-c000.snappy.parquet`` and ``dest``
    is kept (made when missing): no directory per run (each costs a ``mkdir``, and this
    machine's ext4 takes 0.4 ms for one after many deletions)."""
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..spark.parquetfiles import PARQUET_WRITER, parquet_format_json

    schema, footer = parquet_format_json(struct_json)
    cols = [table.column(f.name) for f in schema]
    table = pa.table([c if c.type == f.type else c.cast(f.type) for c, f in zip(cols, schema)], schema=schema)
    if prefix is None:
        shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest, exist_ok=prefix is not None)
    name = f"part-00000-{uuid.uuid4()}-c000.snappy.parquet"
    if prefix is not None:
        name = f"{prefix}-{name}"
    with pq.ParquetWriter(os.path.join(dest, name), schema, **PARQUET_WRITER) as writer:
        writer.write_table(table)
        writer.add_key_value_metadata(footer)
    return [name]


#: for the merge's Arrow face (``ddlcore.sinks.arrowmerge``): the key columns as Arrow's
#: grouping takes them, a field's Arrow type
group_key = _group_key
arrow_type = _arrow_type
