"""Schema drift: does a binlog TABLE_MAP event agree with the schema history's table?

Owns: reading a ``TABLE_MAP_EVENT`` (as ``pymysqlreplication`` parsed it) into plain
``BinlogColumn`` facts, and comparing them with a ``ddlcore.model.Table``, column by column.
Must not know: how the history is stored, the change log, the capture loop.

What the binlog carries (MySQL ``libbinlogevents`` ``Table_map_event``; the optional metadata
fields came with MySQL 8.0.1 / MariaDB 10.5, ``binlog_row_metadata``):

* always: the column count, each column's binlog type and its type metadata (VARCHAR/CHAR byte
  length, DECIMAL precision and scale, fractional-second precision, BIT length, ENUM/SET
  storage size, BLOB length bytes);
* ``MINIMAL`` and ``FULL``: SIGNEDNESS of numeric columns, the charset (collation id) of
  character, ENUM and SET columns;
* ``FULL`` only: column names, ENUM and SET labels, primary key, visibility.

Every fact present is compared; a fact the event lacks is not.  A difference is a
``DriftWarning`` naming the table, the column and both definitions: it means the history
(built from DDL text) no longer describes the rows that follow, so converting them with the
history's table would be wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ddlcore.model import Column, Table

from . import binlog_values as bt
from .charsets import normalize_charset, python_codec

__all__ = ["BinlogColumn", "DriftWarning", "binlog_columns", "compare_table", "BINLOG_TYPE_NAMES",
           "EXPECTED_BINLOG_TYPES"]

#: readable names of binlog column types (``FIELD_TYPE``)
BINLOG_TYPE_NAMES = {
    bt.DECIMAL: "DECIMAL", bt.TINY: "TINY", bt.SHORT: "SHORT", bt.LONG: "LONG", bt.FLOAT: "FLOAT",
    bt.DOUBLE: "DOUBLE", bt.NULL: "NULL", bt.TIMESTAMP: "TIMESTAMP", bt.LONGLONG: "LONGLONG",
    bt.INT24: "INT24", bt.DATE: "DATE", bt.TIME: "TIME", bt.DATETIME: "DATETIME", bt.YEAR: "YEAR",
    bt.NEWDATE: "NEWDATE", bt.VARCHAR: "VARCHAR", bt.BIT: "BIT", bt.TIMESTAMP2: "TIMESTAMP2",
    bt.DATETIME2: "DATETIME2", bt.TIME2: "TIME2", bt.JSON: "JSON", bt.NEWDECIMAL: "NEWDECIMAL",
    bt.ENUM: "ENUM", bt.SET: "SET", bt.TINY_BLOB: "TINY_BLOB", bt.MEDIUM_BLOB: "MEDIUM_BLOB",
    bt.LONG_BLOB: "LONG_BLOB", bt.BLOB: "BLOB", bt.VAR_STRING: "VAR_STRING", bt.STRING: "STRING",
    bt.GEOMETRY: "GEOMETRY",
}

_TEXT_BLOB = {"tinytext", "text", "mediumtext", "longtext", "tinyblob", "blob", "mediumblob", "longblob"}
_SPATIAL = {"geometry", "point", "linestring", "polygon", "multipoint", "multilinestring",
            "multipolygon", "geometrycollection"}
#: the binlog types a column of each ``data_type`` is logged as (MySQL ``Field::binlog_type``)
EXPECTED_BINLOG_TYPES: dict[str, frozenset[int]] = {
    "tinyint": frozenset({bt.TINY}), "smallint": frozenset({bt.SHORT}),
    "mediumint": frozenset({bt.INT24}), "int": frozenset({bt.LONG}),
    "bigint": frozenset({bt.LONGLONG}), "decimal": frozenset({bt.NEWDECIMAL, bt.DECIMAL}),
    "float": frozenset({bt.FLOAT}), "double": frozenset({bt.DOUBLE}), "bit": frozenset({bt.BIT}),
    "date": frozenset({bt.DATE, bt.NEWDATE}), "datetime": frozenset({bt.DATETIME2, bt.DATETIME}),
    "timestamp": frozenset({bt.TIMESTAMP2, bt.TIMESTAMP}), "time": frozenset({bt.TIME2, bt.TIME}),
    "year": frozenset({bt.YEAR}), "char": frozenset({bt.STRING}), "binary": frozenset({bt.STRING}),
    "varchar": frozenset({bt.VARCHAR, bt.VAR_STRING}), "varbinary": frozenset({bt.VARCHAR, bt.VAR_STRING}),
    "enum": frozenset({bt.ENUM}), "set": frozenset({bt.SET}), "json": frozenset({bt.JSON, bt.BLOB}),
    **{n: frozenset({bt.BLOB}) for n in _TEXT_BLOB},
    **{n: frozenset({bt.GEOMETRY}) for n in _SPATIAL},
}
_NUMERIC = {"tinyint", "smallint", "mediumint", "int", "bigint", "decimal", "float", "double"}
_CHARACTER = {"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set"}


@dataclass(frozen=True)
class BinlogColumn:
    """One column as a TABLE_MAP event describes it.  ``None`` marks a fact the event does
    not carry (``name``, ``labels`` without FULL metadata; ``unsigned``, ``charset`` without
    any optional metadata)."""

    ordinal: int
    type: int
    name: str | None = None
    unsigned: bool | None = None
    charset: str | None = None
    labels: tuple[str, ...] | None = None
    max_length: int | None = None
    precision: int | None = None
    scale: int | None = None
    fsp: int | None = None
    bits: int | None = None
    size: int | None = None

    @property
    def type_name(self) -> str:
        return BINLOG_TYPE_NAMES.get(self.type, str(self.type))

    def describe(self) -> str:
        """The binlog's definition as text, e.g. ``e ENUM(size=1) labels=('a','b') charset=utf8mb4``."""
        parts = [self.name or f"#{self.ordinal}", self.type_name]
        meta = [f"{k}={v}" for k, v in (("max_length", self.max_length), ("precision", self.precision),
                                         ("scale", self.scale), ("fsp", self.fsp), ("bits", self.bits),
                                         ("size", self.size)) if v is not None]
        if meta:
            parts[-1] += "(" + ", ".join(meta) + ")"
        if self.unsigned:
            parts.append("unsigned")
        if self.labels is not None:
            parts.append("labels=(" + ",".join(repr(x) for x in self.labels) + ")")
        if self.charset is not None:
            parts.append(f"charset={self.charset}")
        return " ".join(parts)


@dataclass(frozen=True)
class DriftWarning:
    """The binlog and the history disagree about one column (or the whole table, ``column``
    ``None``): ``what`` differs (``columns``, ``type``, ``length``, ``name``, ``unsigned``,
    ``enum_values``, ``set_values``, ``charset``, ``table``), ``binlog`` / ``history`` the two
    definitions as text; ``seq`` the history seq compared against, ``position`` where the
    TABLE_MAP event is."""

    table: str
    column: str | None
    what: str
    binlog: str
    history: str
    seq: int
    position: str

    @property
    def message(self) -> str:
        col = f" column {self.column}" if self.column else ""
        return (f"schema drift in {self.table}{col} ({self.what}) at {self.position}: "
                f"binlog has [{self.binlog}], history at seq {self.seq} has [{self.history}]")

    def to_json(self) -> dict[str, Any]:
        return {"table": self.table, "column": self.column, "what": self.what, "binlog": self.binlog,
                "history": self.history, "seq": self.seq, "position": self.position}


def _charset_name(collation_id: int | None, dbms: str) -> str | None:
    if collation_id is None:
        return None
    from pymysqlreplication.constants import CHARSET

    cs = CHARSET.charset_by_id(collation_id, dbms) or CHARSET.charset_by_id(collation_id, "mysql")
    return None if cs is None else normalize_charset(cs.name)


def _labels(values: Sequence[Any], charset: str | None) -> tuple[str, ...]:
    """ENUM/SET labels as text: bytes (``binlog_values.read_type_values_raw``) decoded with the
    column's charset; text (the library's own reading) kept."""
    codec = python_codec(charset)
    return tuple(v.decode(codec, errors="replace") if isinstance(v, (bytes, bytearray)) else str(v)
                 for v in values)


def binlog_columns(event: Any) -> list[BinlogColumn]:
    """The columns of a ``pymysqlreplication`` ``TableMapEvent``, with what its optional
    metadata says (signedness, charsets, names, labels)."""
    om = getattr(event, "optional_metadata", None)
    dbms = getattr(event, "dbms", None) or "mysql"
    signed = list(getattr(om, "unsigned_column_list", None) or [])
    names = list(getattr(om, "column_name_list", None) or [])
    charsets = list(getattr(om, "charset_collation_list", None) or [])
    es_charsets = list(getattr(om, "enum_and_set_collation_list", None) or [])
    enum_labels = list(getattr(om, "set_enum_str_value_list", None) or [])
    set_labels = list(getattr(om, "set_str_value_list", None) or [])
    out: list[BinlogColumn] = []
    ci = ei = ej = si = 0
    for i, col in enumerate(event.columns):
        t = col.type
        charset = labels = None
        if t in (bt.STRING, bt.VAR_STRING, bt.VARCHAR, bt.BLOB) or (t == bt.GEOMETRY and dbms == "mariadb"):
            if ci < len(charsets):
                charset = _charset_name(charsets[ci], dbms)
            ci += 1
        elif t in (bt.ENUM, bt.SET):
            if ei < len(es_charsets):
                charset = _charset_name(es_charsets[ei], dbms)
            ei += 1
            if t == bt.ENUM and ej < len(enum_labels):
                labels = _labels(enum_labels[ej], charset)
            elif t == bt.SET and si < len(set_labels):
                labels = _labels(set_labels[si], charset)
            if t == bt.ENUM:
                ej += 1
            else:
                si += 1
        unsigned = bool(signed[i]) if i < len(signed) and t in _NUMERIC_TYPES else None
        out.append(BinlogColumn(
            ordinal=i + 1, type=t, name=names[i] if i < len(names) else None, unsigned=unsigned,
            charset=charset, labels=labels, max_length=getattr(col, "max_length", None),
            precision=getattr(col, "precision", None), scale=getattr(col, "decimals", None),
            fsp=getattr(col, "fsp", None), bits=getattr(col, "bits", None),
            size=getattr(col, "size", None) if t in (bt.ENUM, bt.SET) else None))
    return out


_NUMERIC_TYPES = frozenset({bt.TINY, bt.SHORT, bt.INT24, bt.LONG, bt.LONGLONG, bt.NEWDECIMAL,
                            bt.FLOAT, bt.DOUBLE})


def _model_text(c: Column) -> str:
    text = f"{c.name} {c.column_type}"
    if c.character_set_name and c.data_type in _CHARACTER:
        text += f" CHARACTER SET {c.character_set_name}"
    return text


def _set_size(n: int) -> int:
    size = (n + 7) // 8
    return 8 if size > 4 else size


def _compare_column(b: BinlogColumn, c: Column) -> list[tuple[str, str]]:
    """``(what, detail)`` for each way ``b`` and ``c`` disagree."""
    out: list[tuple[str, str]] = []
    expected = EXPECTED_BINLOG_TYPES.get(c.data_type)
    if expected is not None and b.type not in expected:
        return [("type", "")]  # the other facts cannot be compared across types
    if b.name is not None and b.name.lower() != c.name.lower():
        out.append(("name", ""))
    if b.unsigned is not None and c.data_type in _NUMERIC and b.unsigned != bool(c.unsigned):
        out.append(("unsigned", ""))
    if c.data_type == "decimal" and b.precision is not None and (
            (b.precision, b.scale) != (c.numeric_precision, c.numeric_scale)):
        out.append(("precision", ""))
    if c.data_type in ("datetime", "timestamp", "time") and b.fsp is not None and b.fsp != (c.datetime_precision or 0):
        out.append(("fsp", ""))
    if c.data_type == "bit" and b.bits is not None and b.bits != c.numeric_precision:
        out.append(("length", ""))
    if c.data_type in ("char", "varchar", "binary", "varbinary") and b.max_length is not None \
            and c.character_octet_length is not None and b.max_length != c.character_octet_length:
        out.append(("length", ""))
    if c.data_type == "enum":
        if b.labels is not None and tuple(b.labels) != tuple(c.enum_values or ()):
            out.append(("enum_values", ""))
        elif b.labels is None and b.size is not None and b.size != (1 if len(c.enum_values or ()) < 256 else 2):
            out.append(("enum_values", "storage size"))
    if c.data_type == "set":
        if b.labels is not None and tuple(b.labels) != tuple(c.set_values or ()):
            out.append(("set_values", ""))
        elif b.labels is None and b.size is not None and b.size != _set_size(len(c.set_values or ())):
            out.append(("set_values", "storage size"))
    if b.charset is not None and c.data_type in _CHARACTER:
        model_cs = normalize_charset(c.character_set_name) if c.character_set_name else None
        if model_cs is not None and model_cs != b.charset:
            out.append(("charset", ""))
    return out


def compare_table(columns: Sequence[BinlogColumn], table: Table | None, *, table_name: str,
                  seq: int, position: str) -> list[DriftWarning]:
    """Every disagreement between a TABLE_MAP event's ``columns`` and the history's ``table``
    (``None``: the history has no such table at ``seq``)."""
    def warn(column: str | None, what: str, binlog: str, history: str) -> DriftWarning:
        return DriftWarning(table_name, column, what, binlog, history, seq, position)

    if table is None:
        return [warn(None, "table", f"{len(columns)} columns", "no such table")]
    out: list[DriftWarning] = []
    model = list(table.columns)
    if len(columns) != len(model):
        out.append(warn(None, "columns",
                        "; ".join(b.describe() for b in columns),
                        "; ".join(_model_text(c) for c in model)))
        return out
    for b, c in zip(columns, model):
        for what, detail in _compare_column(b, c):
            hist = _model_text(c) + (f" ({detail})" if detail else "")
            out.append(warn(c.name, what, b.describe(), hist))
    return out
