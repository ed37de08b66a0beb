"""Staged row images converted a column at a time with Arrow's compute kernels.

The driver-side conversion (``ddlcore.spark.driver``) reads a conversion group's staged rows as
Arrow tables of ``Tuning.chunk_rows`` rows: each image (``after``, ``before``) a ``list<string>``
column holding its values' texts as Spark read them.  ``convert_chunk`` turns such a chunk
(rows of the group's versions, which share one conversion) into their row table
(``driver.output_struct``'s Arrow schema) a column at a time, with no Python object per row
for the columns with a kernel, or declines (``None``) when some row needs the row pass: an
image with the wrong number of values, a value its column does not convert, the absent
marker.  The caller then converts the chunk row by row (``driver.convert_rows``), which gives
those rows' errors and absent names.

Each column is converted by the function ``column_converter`` builds from two faces of its
rule:

* a **kernel**, the rule's Arrow face (``ColumnRule.arrow``, beside its Python and Spark
  faces in ``ddlcore.spark.rules``; integers, decimals, ``DATETIME`` and text have one):
  Arrow's cast of the texts (for text: the texts themselves, or the rule's codec over ``$b64``
  payloads), guarded by a pattern of the texts on which it gives exactly what the rule's
  Python face (``ColumnRule.python`` after ``driver.staged_value``) gives.  A chunk with any
  text outside the pattern is left to the memo: the kernel never guesses.  Only a class that
  declares its Arrow face uses it (``vector_function``): a subclass (a user's dialect) keeps
  its own Python face.
* the **memo** (``driver.ColumnMemo``): the Python face, once per distinct text.

The columns whose values are mostly distinct (numbers, timestamps, names) are the kernels'
work; repeated values (enums, sets, dates) cost a memo lookup each."""

from __future__ import annotations

from .arrowkit import Kernel, all_true

__all__ = ["Kernel", "vector_function", "column_converter", "convert_chunk"]


def vector_function(rule, arrow_type) -> Kernel | None:
    """The kernel of ``rule`` (a ``ColumnRule``) for a column of ``arrow_type``: its Arrow face
    (``ColumnRule.arrow``) when the rule's exact class declares one — a subclass that does not
    (a dialect's or a user's, which may change the Python face) keeps its own Python face
    through the memo —, else ``None``."""
    return rule.arrow(arrow_type) if "arrow" in type(rule).__dict__ else None


def column_converter(kernel: Kernel | None, memo, arrow_type) -> Kernel:
    """One column's converter for ``convert_chunk``: ``kernel`` (``vector_function``), else
    ``memo`` (``driver.ColumnMemo``: text → converted value; its ``slow`` counts the values it
    leaves to the row pass) over the texts, as an array of ``arrow_type``; ``None`` when the
    memo left some value to the row pass.  Raises what the memo raises (``driver.Unsure``)."""
    import pyarrow as pa

    def convert(texts):
        if kernel is not None:
            out = kernel(texts)
            if out is not None:
                return out
        seen = memo.slow
        values = [memo[t] for t in texts.to_pylist()]
        if memo.slow != seen:
            return None
        return pa.array(values, type=arrow_type)
    return convert


#: the row metadata columns of a version's row table copied from the staged rows
_COPIED = (("_op", "op"), ("_seq", "seq"), ("_position", "position"), ("_ts", "ts"), ("_tx", "tx"),
           ("_row", "row"))


def convert_chunk(table, schema, names: list[str], converters: dict[str, list[Kernel]], *,
                  after: bool, before: bool):
    """A chunk of a conversion group's staged rows (``table``: Arrow, the ``driver._STAGED``
    columns but ``_part``, in ``seq`` order) as their row table, row for row (``schema``:
    ``driver.parquet_format`` of the group's ``output_struct``), or ``None`` where some row
    needs the row pass (see the module's docstring).

    ``names``: the table's columns; ``converters``: per image (``after``, ``before``) a
    ``column_converter`` per column.  ``after`` / ``before``: whether the group's plan
    converts that image (the other is still checked: its errors are the row pass's).  A row
    takes its values from the before image for op ``d``, else from the after image; ``_before``
    holds the before image (all null when the plan leaves it out) for ops ``u`` and ``d``, null
    otherwise; ``_absent`` and ``_before_absent`` are null (no value is absent here).  Raises
    what the converters raise."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n, rows = len(names), table.num_rows
    images: dict[str, list | None] = {}
    for image in ("after", "before"):
        lists = table.column(image).combine_chunks()
        if lists.null_count == rows:
            images[image] = None
            continue
        lengths = pc.list_value_length(lists)
        if n == 0 or not all_true(pc.equal(lengths, pa.scalar(n, lengths.type))):
            return None
        columns = []
        for convert in converters[image]:
            # (null where the image is; the index typed: no inference of a Python value's type)
            out = convert(pc.list_element(lists, pa.scalar(len(columns), pa.int32())))
            if out is None:
                return None
            columns.append(out)
        images[image] = columns
    fields = list(schema)
    values = [images[image] if on and images[image] is not None else [pa.nulls(rows, f.type) for f in fields[:n]]
              for image, on in (("after", after), ("before", before))]
    ops = table.column("op").combine_chunks()
    deleted = pc.equal(ops, pa.scalar("d", ops.type))  # (typed: no inference of a Python value's type)
    arrays = [pc.if_else(deleted, b, a) for a, b in zip(*values)]
    types = {f.name: f.type for f in fields[n:]}
    carries_before = pc.fill_null(pc.is_in(ops, value_set=pa.array(["u", "d"], ops.type)), pa.scalar(False, pa.bool_()))
    meta = {name: table.column(staged).combine_chunks().cast(types[name]) for name, staged in _COPIED}
    meta["_before"] = pa.StructArray.from_arrays(values[1], fields=list(types["_before"]),
                                                 mask=pc.invert(carries_before))
    for name in ("_absent", "_before_absent"):
        meta[name] = pa.nulls(rows, types[name])
    arrays += [meta[f.name] for f in fields[n:]]
    return pa.Table.from_arrays(arrays, schema=schema)
