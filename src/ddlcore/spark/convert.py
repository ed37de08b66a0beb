"""``RowConverter``: raw row arrays → values that fit the table's ``StructType``.

Owns: the two faces of one table version's conversion, built once from the column rules:

* ``convert(values)`` — Python: one generated function with every column's converter bound
  in (no per-row lookup of columns, rules or types);
* ``columns(raw)`` — Spark ``Column`` expressions over an ``array<string>`` of the raw values'
  text forms (``ddlcore.raw``), computing the same values in the JVM, plus an error column.

Must not know: any dialect (its ``SparkRules`` give the column rules), where rows come from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from pyspark.sql import Column as SparkColumn
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, IntegerType, StringType, StructField, StructType

from ..errors import RowConversionError
from ..model import Table
from ..raw import ABSENT, ABSENT_TEXT
from .options import SparkOptions
from .rules import ColumnRule, Fail
from .schema import build_fields, column_rules, resolve_for

if TYPE_CHECKING:  # pragma: no cover
    from ..dialect import Dialect

__all__ = ["RowConverter", "RAW_ARRAY_TYPE", "ERROR_TYPE", "ERRORS_TYPE"]

#: the Spark type ``RowConverter.columns`` reads: one text form per column, in ordinal order
RAW_ARRAY_TYPE = ArrayType(StringType())
#: one conversion error: column name and 0-based position (null for a wrong arity), the raw
#: value's text form (the array's size for a wrong arity) and the reason
ERROR_TYPE = StructType([
    StructField("column", StringType()),
    StructField("position", IntegerType()),
    StructField("value", StringType()),
    StructField("reason", StringType()),
])
ERRORS_TYPE = ArrayType(ERROR_TYPE)


class RowConverter:
    """Converts raw rows of one table version; build it once per version, apply it to many rows.

    ``RowConverter(table, dialect=None, *, options=None, **overrides)`` — the signature of
    ``struct_type``: ``dialect`` a name or ``Dialect`` (``None``: ``options.dialect``, else the
    dialect whose parser made ``table``, else the only installed dialect with Spark rules),
    ``options`` a ``SparkOptions`` or mapping, ``overrides`` single options
    (``schema.resolve_for``).  Raises as ``struct_type`` does.

    Attributes: ``table``, ``options``, ``dialect``, ``rules`` (one ``ColumnRule`` per
    column), ``struct_type`` (the ``StructType`` the values fit), ``names``, ``functions``
    (each rule's Python face, ``ColumnRule.python()``, built once: ``raw value → value``, raises
    ``Fail``)."""

    def __init__(self, table: Table, dialect: "str | Dialect | None" = None, *,
                 options: "SparkOptions | Mapping[str, Any] | None" = None, **overrides: Any):
        self.table = table
        self.options, self.dialect, spark_rules = resolve_for(table, dialect, options, overrides)
        self.rules: list[ColumnRule] = column_rules(table, self.options, spark_rules)
        self.struct_type = StructType(build_fields(table, self.rules, self.dialect.name))
        self.names = [c.name for c in table.columns]
        self.functions = [r.python() for r in self.rules]
        self._row = _row_function(self.functions)

    # -- Python face ---------------------------------------------------------------------------

    def convert(self, values: Sequence[Any] | None) -> tuple | None:
        """One raw row (a sequence of raw values in ordinal order, as ``ddlcore.raw``
        describes them) → a tuple of values fitting ``struct_type`` (``int``, ``Decimal``,
        ``float``, ``str``, ``bytes``, ``bool``, ``date``, naive ``datetime`` for
        ``TimestampNTZType``, UTC-aware ``datetime`` for ``TimestampType``, ``timedelta``,
        ``list`` of labels).  ``None`` (no row image) → ``None``; a null raw value → ``None``;
        the absent marker ``ddlcore.raw.ABSENT`` (a column the source left out of the image)
        stays ``ABSENT``.

        Raises ``RowConversionError`` (``column``, ``position``, ``value``, ``reason``) for the
        first value that cannot be converted, or for a row of the wrong length (``column`` and
        ``position`` ``None``, ``value`` the row)."""
        row, errors = self.try_convert(values)
        if errors:
            raise errors[0]
        return row

    def try_convert(self, values: Sequence[Any] | None) -> tuple[tuple | None, list[RowConversionError]]:
        """Like ``convert`` but never raises: ``(row, errors)`` where a value that cannot be
        converted is ``None`` in ``row`` and has one ``RowConversionError`` in ``errors`` (the
        local equivalent of ``columns``' error column).  A row of the wrong length gives a
        row of ``None`` and one error.  A row that converts takes the generated function alone
        (``_row_function``: no ``try`` per value); the per-value loop below runs only for a row
        where some value fails, and finds each failure."""
        if values is None:
            return None, []
        try:
            return self._row(values), []
        except Exception:
            pass
        n = len(self.functions)
        try:
            size = len(values)
        except TypeError:
            size = -1
        if size != n:
            error = RowConversionError(f"expected {n} raw values, got {size if size >= 0 else type(values).__name__}",
                                       value=values)
            return (None,) * n, [error]
        out: list[Any] = []
        errors: list[RowConversionError] = []
        for i, (fn, v) in enumerate(zip(self.functions, values)):
            if v is None or v is ABSENT:  # absent stays absent: never turned into a value
                out.append(v)
                continue
            try:
                out.append(fn(v))
            except Fail as exc:
                out.append(None)
                errors.append(RowConversionError(exc.reason, column=self.names[i], position=i, value=v))
            except Exception as exc:  # a bug in a rule must still name the value
                out.append(None)
                errors.append(RowConversionError(f"{type(exc).__name__}: {exc}", column=self.names[i],
                                                 position=i, value=v))
        return tuple(out), errors

    # -- Spark face ----------------------------------------------------------------------------

    def columns(self, raw: "SparkColumn | str", errors: str | None = "_errors") -> list[SparkColumn]:
        """Spark expressions computing ``convert``'s values natively in the JVM.

        ``raw``: a column (or its name) of type ``array<string>`` holding the text form of each
        raw value in ordinal order (``ddlcore.raw.text_form``; what Spark's JSON reader gives
        for a change log's ``before``/``after`` read as ``array<string>``).  Returns one
        expression per column, aliased to the column name and carrying the field metadata, typed
        as ``struct_type``'s fields; then, unless ``errors`` is ``None``, one more column of that
        name of type ``ERRORS_TYPE`` (``array<struct<column, position, value, reason>>``): empty
        when the row converted, else one entry per value that could not be converted (its field
        is null), or a single entry for a wrong arity (every field null).  A null ``raw`` (no
        image) gives nulls and no error.  No Python runs per row; executors need no ddlcore."""
        arr = F.col(raw) if isinstance(raw, str) else raw
        n = len(self.rules)
        size = F.size(arr)
        # a row of the wrong length reads as no row: every value null, one arity error
        checked = F.when(size == n, arr)
        empty = F.array().cast(ERRORS_TYPE)
        outputs: list[SparkColumn] = []
        parts: list[SparkColumn] = []
        for i, (rule, field) in enumerate(zip(self.rules, self.struct_type.fields)):
            x = F.get(checked, i)
            value, classify = rule.spark(x)
            # Evaluation plan (what keeps the projection small and each value computed once):
            # ``value`` stands whole in two always-evaluated places — the output and the test
            # that opens its error entry — so Spark's common-subexpression elimination computes
            # it once, in a method of its own.  The reason is only looked for where the value
            # came out null; it is computed inside a one-element ``zip_with`` — a function Spark
            # interprets instead of compiling — so its code does not weigh on the compiled
            # projection (a wide table's would outgrow the JVM's 64 KB method limit).
            if errors is None and i == 0:
                value = _interpreted_projection(value, x)
            outputs.append(value.cast(field.dataType).alias(field.name, metadata=field.metadata))
            if errors is None:
                continue
            parts.append(F.when(x.isNull() | value.isNotNull(), empty)
                         .otherwise(F.element_at(F.zip_with(F.array(x), F.array(x),
                                                            _entry(classify, x, field.name, i)), 1)))
        if errors is None:
            return outputs
        arity = F.when(arr.isNotNull() & (size != n), F.array(F.struct(
            F.lit(None).cast(StringType()).alias("column"), F.lit(None).cast(IntegerType()).alias("position"),
            size.cast(StringType()).alias("value"),
            F.concat(F.lit(f"expected {n} raw values, got "), size.cast(StringType())).alias("reason"))
        )).otherwise(empty)
        error_column = F.flatten(F.array(arity, *parts)).cast(ERRORS_TYPE).alias(errors)
        return outputs + [error_column]

    def absent(self, raw: "SparkColumn | str") -> SparkColumn:
        """The names of the columns whose raw value in ``raw`` (an ``array<string>``) is the
        absent marker (``ddlcore.raw.ABSENT_TEXT``: left out of the image by the source), as
        an ``array<string>`` in ordinal order; null when none is absent, for a null ``raw`` and
        for a row of the wrong length."""
        arr = F.col(raw) if isinstance(raw, str) else raw
        marker, none = F.lit(ABSENT_TEXT), F.array().cast("array<string>")
        # no higher-order function (Spark cannot compile some, ``zip_with`` among them, and a
        # projection holding one is not fused into whole-stage code): one test per column, in
        # a branch taken only where some value is absent
        picked = F.flatten(F.array(*[F.when(F.get(arr, i) == marker, F.array(F.lit(n))).otherwise(none)
                                     for i, n in enumerate(self.names)])) if self.names else none
        return F.when((F.size(arr) == len(self.rules)) & F.array_contains(arr, marker), picked)

    @staticmethod
    def present(raw: "SparkColumn | str") -> SparkColumn:
        """``raw`` with every absent marker replaced by null: what the value expressions read
        (an absent column's value is null in the output, and ``absent`` says it was absent —
        the two together never pass absent off as NULL)."""
        arr = F.col(raw) if isinstance(raw, str) else raw
        return F.transform(arr, lambda x: F.when(x != F.lit(ABSENT_TEXT), x))

    def raw_items(self, raw: "SparkColumn | str", *, absent_as_null: bool = False) -> list[SparkColumn]:
        """The text form of each column's raw value in ``raw`` (an ``array<string>``), one
        expression per column in ordinal order; all null for a row of the wrong length.
        Project them as columns and pass their names as ``items`` to ``value_struct`` and
        ``failed`` (in those calls' ``order``): each rule then refers to its raw value by one
        column reference instead of repeating the array access in every branch — smaller
        plans, less to analyse and optimise.  ``absent_as_null``: an absent marker reads as
        null (the items of ``present(raw)``, without the higher-order function that
        ``present`` is)."""
        arr = F.col(raw) if isinstance(raw, str) else raw
        checked = F.when(F.size(arr) == len(self.rules), arr)
        items = [F.get(checked, i) for i in range(len(self.rules))]
        if absent_as_null:
            marker = F.lit(ABSENT_TEXT)
            items = [F.when(x != marker, x) for x in items]
        return items

    def _items(self, raw: "SparkColumn | str", items: "Sequence[SparkColumn | str] | None") -> list[SparkColumn]:
        if items is None:
            return self.raw_items(raw)
        if len(items) != len(self.rules):
            raise ValueError(f"items: expected {len(self.rules)} columns, got {len(items)}")
        return [F.col(c) if isinstance(c, str) else c for c in items]

    def canonical_order(self) -> list[int]:
        """The columns' ordinals (0-based) sorted by their rules' descriptions (``repr``: the
        rule class, native type and Spark type), ties by ordinal: tables whose columns have the
        same rules in another order get the same sequence of rules.  Passed as ``order`` to
        ``value_struct`` and ``failed``, it makes their generated code the same for all such
        tables, so Spark compiles it once (its code cache is keyed by the generated source) and
        the JVM's compiled methods serve them all.  Any order converts the same values; this
        one only decides which plans share code."""
        return sorted(range(len(self.rules)), key=lambda i: (repr(self.rules[i]), i))

    def _ordered_items(self, raw: "SparkColumn | str", items: "Sequence[SparkColumn | str] | None",
                       order: "Sequence[int] | None") -> list[tuple[int, SparkColumn]]:
        """``(ordinal, raw item)`` of each column in ``order`` (``value_struct``'s arguments)."""
        cols = list(range(len(self.rules))) if order is None else list(order)
        if sorted(cols) != list(range(len(self.rules))):
            raise ValueError(f"order: expected a permutation of 0..{len(self.rules) - 1}, got {cols}")
        xs = self._items(raw, items)
        return list(zip(cols, xs if items is not None else [xs[c] for c in cols]))

    def value_struct(self, raw: "SparkColumn | str",
                     items: "Sequence[SparkColumn | str] | None" = None,
                     order: "Sequence[int] | None" = None) -> SparkColumn:
        """``columns(raw, errors=None)`` as one struct with positional field names ``_1`` …
        ``_n`` (column names may differ only in case, which Spark's default case-insensitive
        resolution could not tell apart).  ``items``: the columns (or names) holding
        ``raw_items(raw)`` projected earlier (``None``: computed here).  ``order``: the
        columns' ordinals in the order of the fields (``canonical_order()``; ``None``: ordinal
        order): field ``_j`` is column ``order[j - 1]``, and ``items``, when given, are in that
        order too.  The input of ``failed`` (with the same ``order``).  Raises ``ValueError``
        for ``items`` of the wrong length or an ``order`` that is not a permutation."""
        fields = []
        for j, (c, x) in enumerate(self._ordered_items(raw, items, order)):
            value = self.rules[c].spark(x)[0]
            if j == 0:  # see columns() and _interpreted_projection
                value = _interpreted_projection(value, x)
            fields.append(value.cast(self.struct_type.fields[c].dataType).alias(f"_{j + 1}"))
        return F.struct(*fields)

    def failed(self, raw: "SparkColumn | str", values: "SparkColumn | str",
               items: "Sequence[SparkColumn | str] | None" = None,
               order: "Sequence[int] | None" = None) -> SparkColumn:
        """A boolean expression, true exactly where ``columns(raw)``'s error column would be
        non-empty (a value that cannot be converted, or a wrong arity); false for a null
        ``raw``.  ``values``: a column (or its name) holding ``value_struct(raw)`` computed by
        an earlier projection — its fields are read, so the value expressions are not
        repeated: a plan of values plus this test is about a third of the size of one with
        the error column (less to analyse, optimise and compile per table version; ``ddlcore
        run`` builds the error column only for the rows this finds failed).  ``items`` and
        ``order``: as for ``value_struct`` (the same ``order`` as the struct's).

        A value failed where its raw value is not null and its converted value is; for a rule
        that turns some raw values into null on purpose (``produces_null``: zero dates), only
        where the rule also names a reason."""
        arr = F.col(raw) if isinstance(raw, str) else raw
        vals = F.col(values) if isinstance(values, str) else values
        size = F.size(arr)
        test = arr.isNotNull() & (size != len(self.rules))
        for j, (c, x) in enumerate(self._ordered_items(raw, items, order)):
            rule = self.rules[c]
            bad = x.isNotNull() & vals.getField(f"_{j + 1}").isNull()
            if rule.produces_null:
                bad = bad & rule.spark(x)[1]().isNotNull()
            test = test | bad
        return F.coalesce(test, F.lit(False))

    def __repr__(self) -> str:
        return f"<RowConverter {self.table.id} ({len(self.rules)} columns, {self.dialect.name})>"

    def __reduce__(self) -> tuple:
        """Pickled as its table, options and dialect name (rebuilt where it is unpickled, e.g.
        in a Python UDF on an executor, which then needs ddlcore and the dialect installed)."""
        return _rebuild, (self.table.to_json(), self.options, self.dialect.name)


def _interpreted_projection(value: SparkColumn, x: SparkColumn) -> SparkColumn:
    """``value`` unchanged, behind a test Spark interprets (a one-element ``zip_with`` that is
    always true: the one higher-order function of a conversion job's plan, on purpose).  A
    projection holding such an expression is not fused into whole-stage code: Spark then
    compiles each expression into methods of its own.  Fused, the value expressions of even an
    8-column table make one method past the JVM's 8 KB limit for just-in-time compilation
    (and past what C1/C2 can compile with ``-XX:-DontCompileHugeMethods``: "out of nodes"),
    which then runs in the bytecode interpreter.  Every other projection of the job holds no
    higher-order function, so that it is fused (``absent``, ``raw_items(absent_as_null=True)``,
    the ENUM/SET rules): a projection Spark cannot fuse copies each row whole into a buffer.
    Measured on one version of the benchmark's table (60,000 row events, the same JVM,
    alternating): 3.8 s of CPU for the job with higher-order functions in the other
    projections, 2.3 s without (docs/pipeline.md, Performance)."""
    always = F.element_at(F.zip_with(F.array(x), F.array(x), lambda a, b: F.lit(True)), 1)
    return F.when(always, value)


def _entry(classify: Callable[[], SparkColumn], x: SparkColumn, name: str, position: int) -> Callable[[SparkColumn, SparkColumn], SparkColumn]:
    """The error entries of the raw value ``x`` as a two-argument lambda (for a one-element
    ``zip_with``, which makes Spark interpret it; the body refers to the outer row):
    ``[{column, position, value: x, reason}]``, or ``[]`` where the rule finds no failure (a
    legitimate null).  ``classify``: the rule's reason builder; the reason is bound once, by
    a nested one-element ``transform``."""
    empty = F.array().cast(ERRORS_TYPE)

    def entries(_v: SparkColumn, _w: SparkColumn) -> SparkColumn:
        def one(reason: SparkColumn) -> SparkColumn:
            entry = F.array(F.struct(F.lit(name).alias("column"), F.lit(position).alias("position"),
                                     x.alias("value"), reason.alias("reason")))
            return F.when(reason.isNull(), empty).otherwise(entry)
        return F.element_at(F.transform(F.array(classify()), one), 1)
    return entries


def _rebuild(table: dict, options: SparkOptions, dialect: str) -> RowConverter:
    return RowConverter(Table.from_json(table), dialect, options=options)


def _row_function(functions: list[Callable[[Any], Any]]) -> Callable[[Sequence[Any]], tuple]:
    """A function ``values → tuple`` with each column's converter bound as a local name and
    inlined null checks (generated once per table version; the per-row cost is one length
    check, one unpacking and one call per non-null value)."""
    n = len(functions)
    if n == 0:
        def empty(values: Sequence[Any]) -> tuple:
            if len(values):
                raise ValueError("arity")
            return ()
        return empty
    names = [f"v{i}" for i in range(n)]
    body = ", ".join(f"v{i} if (v{i} is None or v{i} is A) else f{i}(v{i})" for i in range(n))
    src = (f"def convert(values):\n"
           f"    if len(values) != {n}:\n"
           f"        raise ValueError('arity')\n"
           f"    {', '.join(names)}, = values\n"
           f"    return ({body},)\n")
    namespace: dict[str, Any] = {f"f{i}": fn for i, fn in enumerate(functions)}
    namespace["A"] = ABSENT
    exec(compile(src, "<ddlcore RowConverter>", "exec"), namespace)  # noqa: S102 - generated above
    return namespace["convert"]
