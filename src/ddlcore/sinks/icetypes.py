"""Spark types → Apache Iceberg types, and which type changes Iceberg allows in place.

Owns: the type of an Iceberg field for the Spark type ``ddlcore.spark.struct_type`` gives a
column, as plain JSON (a type spec, so a commit plan can carry it): ``"int"``, ``"long"``,
``"float"``, ``"double"``, ``"boolean"``, ``"string"``, ``"binary"``, ``"date"``,
``"timestamp"`` (Spark ``TimestampNTZType``), ``"timestamptz"`` (Spark ``TimestampType``),
``["decimal", p, s]``, ``["list", element]``, ``["map", key, value]``, ``["struct", [[name,
spec], ...]]``.  Must not know: catalogs, files.

Spark ``ByteType`` / ``ShortType`` become ``int`` (Iceberg has no narrower integer; Parquet
stores them as INT32), ``DayTimeIntervalType`` ``long`` (its Parquet form: microseconds).
Widening in place follows the Iceberg specification's "Schema Evolution" section (v2): ``int``
→ ``long``, ``float`` → ``double``, ``decimal(P, S)`` → ``decimal(P', S)`` with ``P' > P``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pragma: no cover
    from ..model import Table

__all__ = ["type_spec", "widens", "to_iceberg", "primitive", "spec_text", "spark_type_specs"]

_SIMPLE = {
    "ByteType": "int", "ShortType": "int", "IntegerType": "int", "LongType": "long", "FloatType": "float",
    "DoubleType": "double", "BooleanType": "boolean", "StringType": "string", "BinaryType": "binary",
    "DateType": "date", "TimestampNTZType": "timestamp", "TimestampType": "timestamptz",
    "DayTimeIntervalType": "long", "CharType": "string", "VarcharType": "string",
}


def type_spec(data_type: Any) -> Any:
    """The Iceberg type spec (module docstring) of a Spark ``DataType``.  Raises ``TypeError``
    for a Spark type Iceberg cannot hold (naming it)."""
    name = type(data_type).__name__
    if name in _SIMPLE:
        return _SIMPLE[name]
    if name == "DecimalType":
        return ["decimal", data_type.precision, data_type.scale]
    if name == "ArrayType":
        return ["list", type_spec(data_type.elementType)]
    if name == "MapType":
        return ["map", type_spec(data_type.keyType), type_spec(data_type.valueType)]
    if name == "StructType":
        return ["struct", [[f.name, type_spec(f.dataType)] for f in data_type.fields]]
    raise TypeError(f"no Iceberg type for Spark type {data_type.simpleString()}")


def widens(old: Any, new: Any) -> bool:
    """Whether a field of type ``old`` may hold ``new`` by an in-place update (equal types
    included)."""
    if old == new:
        return True
    if (old, new) in (("int", "long"), ("float", "double")):
        return True
    return (isinstance(old, list) and isinstance(new, list) and old[0] == new[0] == "decimal"
            and new[2] == old[2] and new[1] > old[1])


def spec_text(spec: Any) -> str:
    """A short text of a spec (``int``, ``decimal(10,2)``, ``list<string>``), for names."""
    if isinstance(spec, str):
        return spec
    if spec[0] == "decimal":
        return f"decimal{spec[1]}_{spec[2]}"
    if spec[0] == "list":
        return f"list_{spec_text(spec[1])}"
    return spec[0]


_PRIMITIVES: dict[str, Any] = {}


def primitive(spec: str) -> Any:
    """The ``pyiceberg.types`` type of a primitive spec (``"int"``, ``"string"``, ...; made once:
    a ``pyiceberg`` type's construction goes through pydantic)."""
    if not _PRIMITIVES:
        from pyiceberg import types as T

        _PRIMITIVES.update({"int": T.IntegerType(), "long": T.LongType(), "float": T.FloatType(),
                            "double": T.DoubleType(), "boolean": T.BooleanType(), "string": T.StringType(),
                            "binary": T.BinaryType(), "date": T.DateType(), "timestamp": T.TimestampType(),
                            "timestamptz": T.TimestamptzType()})
    return _PRIMITIVES[spec]


def to_iceberg(spec: Any, ids: Callable[[], int] | None = None) -> Any:
    """The ``pyiceberg.types`` type of a spec.  Its nested field ids: ``ids()`` each, in the
    pre-order ``pyiceberg.schema.assign_fresh_schema_ids`` assigns them (a list's element; a
    map's key, value; a struct's fields, then their nested fields); without ``ids``,
    placeholders (``-1``) that ``UpdateSchema.add_column`` replaces with fresh ones."""
    from pyiceberg import types as T

    if isinstance(spec, str):
        return primitive(spec)
    nid = ids or (lambda: -1)
    kind = spec[0]
    if kind == "decimal":
        return T.DecimalType(spec[1], spec[2])
    if kind == "list":
        element_id = nid()
        return T.ListType(element_id=element_id, element_type=to_iceberg(spec[1], ids), element_required=False)
    if kind == "map":
        key_id, value_id = nid(), nid()
        return T.MapType(key_id=key_id, key_type=to_iceberg(spec[1], ids), value_id=value_id,
                         value_type=to_iceberg(spec[2], ids), value_required=False)
    field_ids = [nid() for _ in spec[1]]
    return T.StructType(*[T.NestedField(field_id=i, name=n, field_type=to_iceberg(s, ids), required=False)
                          for i, (n, s) in zip(field_ids, spec[1])])


def spark_type_specs(table: Table, dialect: str | None, spark_options: dict[str, Any] | None) -> list[Any]:
    """The Iceberg type spec of each column of ``table`` (``ddlcore.spark.struct_type``)."""
    from ..spark import struct_type
    st = struct_type(table, dialect, options=spark_options)
    return [type_spec(f.dataType) for f in st.fields]
