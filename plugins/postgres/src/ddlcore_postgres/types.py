"""PostgreSQL 15 built-in types as data: names and aliases → the catalog's view of a column.

Sources (PostgreSQL 15 manual): chapter 8 "Data Types" (Table 8.1 lists the names and
aliases), 9.26 ``format_type`` (how a type with its modifier prints), 37.17
``information_schema.columns`` (``data_type``, lengths, precisions; the functions
``_pg_char_max_length``, ``_pg_char_octet_length``, ``_pg_numeric_precision``,
``_pg_numeric_scale``, ``_pg_datetime_precision``, ``_pg_interval_type``).

A type reference is resolved to a ``TypeInfo`` row of ``BUILTIN`` (by its ``typname``) and
turned into column fields by ``column_fields``.  Nothing here parses: the visitor hands over
the name as written, the modifiers and the array dimensions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["TypeInfo", "BUILTIN", "ALIASES", "SERIALS", "canonical_name", "column_fields",
           "TypeError_", "OCTETS_PER_CHAR", "UNBOUNDED_OCTETS"]

#: ``pg_encoding_max_length`` of a UTF8 database: ``character_octet_length`` of ``varchar(n)``
#: is ``4 * n`` (the throwaway test servers are initialised with UTF8)
OCTETS_PER_CHAR = 4
#: ``character_octet_length`` of ``text`` and of unbounded ``varchar`` / ``bpchar`` (2^30)
UNBOUNDED_OCTETS = 1073741824


class TypeError_(ValueError):
    """A type reference that PostgreSQL would refuse (bad modifiers)."""


@dataclass(frozen=True)
class TypeInfo:
    """One built-in type: ``typname`` (``pg_type.typname``), ``display`` (``format_type``
    without modifiers, also ``information_schema.columns.data_type``), ``kind`` (which
    modifiers it takes and how they print), and the fixed precision of numeric types."""

    typname: str
    display: str
    kind: str = "plain"          # plain | numeric | char | bit | time | interval
    numeric_precision: int | None = None
    numeric_scale: int | None = None
    zone: str = ""               # " with time zone" / " without time zone" for time types


def _t(typname: str, display: str | None = None, kind: str = "plain", **kw: Any) -> tuple[str, TypeInfo]:
    return typname, TypeInfo(typname, display or typname, kind, **kw)


#: typname → TypeInfo (manual Table 8.1 and the pg_catalog types a table column can have)
BUILTIN: dict[str, TypeInfo] = dict([
    _t("int2", "smallint", numeric_precision=16, numeric_scale=0),
    _t("int4", "integer", numeric_precision=32, numeric_scale=0),
    _t("int8", "bigint", numeric_precision=64, numeric_scale=0),
    _t("float4", "real", numeric_precision=24),
    _t("float8", "double precision", numeric_precision=53),
    _t("numeric", "numeric", "numeric"),
    _t("money"),
    _t("varchar", "character varying", "char"),
    _t("bpchar", "character", "char"),
    _t("text"), _t("bytea"), _t("bool", "boolean"), _t("name"), _t("char", '"char"'),
    _t("date", kind="date"),
    _t("time", "time", "time", zone=" without time zone"),
    _t("timetz", "time", "time", zone=" with time zone"),
    _t("timestamp", "timestamp", "time", zone=" without time zone"),
    _t("timestamptz", "timestamp", "time", zone=" with time zone"),
    _t("interval", "interval", "interval"),
    _t("bit", "bit", "bit"), _t("varbit", "bit varying", "bit"),
    _t("uuid"), _t("json"), _t("jsonb"), _t("jsonpath"), _t("xml"),
    _t("inet"), _t("cidr"), _t("macaddr"), _t("macaddr8"),
    _t("tsvector"), _t("tsquery"),
    _t("int4range"), _t("int8range"), _t("numrange"), _t("tsrange"), _t("tstzrange"), _t("daterange"),
    _t("int4multirange"), _t("int8multirange"), _t("nummultirange"), _t("tsmultirange"),
    _t("tstzmultirange"), _t("datemultirange"),
    _t("point"), _t("line"), _t("lseg"), _t("box"), _t("path"), _t("polygon"), _t("circle"),
    _t("oid"), _t("regclass"), _t("regtype"), _t("regproc"), _t("pg_lsn"), _t("pg_snapshot"),
    _t("txid_snapshot"), _t("xid"), _t("xid8"), _t("cid"), _t("tid"), _t("int2vector"), _t("oidvector"),
])

#: names and aliases (lower case, as the manual's Table 8.1 spells them) → typname
ALIASES: dict[str, str] = {
    "smallint": "int2", "int2": "int2", "integer": "int4", "int": "int4", "int4": "int4",
    "bigint": "int8", "int8": "int8", "real": "float4", "float4": "float4",
    "double precision": "float8", "float8": "float8", "decimal": "numeric", "dec": "numeric",
    "numeric": "numeric", "boolean": "bool", "bool": "bool",
    "character varying": "varchar", "char varying": "varchar", "varchar": "varchar",
    "national character varying": "varchar", "national char varying": "varchar",
    "nchar varying": "varchar",
    "character": "bpchar", "char": "bpchar", "bpchar": "bpchar", "nchar": "bpchar",
    "national character": "bpchar", "national char": "bpchar",
    "bit varying": "varbit", "varbit": "varbit", "bit": "bit",
    "timestamptz": "timestamptz", "timetz": "timetz",
    "time with time zone": "timetz", "time without time zone": "time", "time": "time",
    "timestamp with time zone": "timestamptz", "timestamp without time zone": "timestamp",
    "timestamp": "timestamp",
    '"char"': "char",
}
ALIASES.update({k: k for k in BUILTIN if k not in ALIASES})

#: serial pseudo-types (manual 8.1.4): name → (typname of the column, sequence data type)
SERIALS: dict[str, str] = {
    "smallserial": "int2", "serial2": "int2", "serial": "int4", "serial4": "int4",
    "bigserial": "int8", "serial8": "int8",
}


def canonical_name(words: str, modifiers: list[str] | None = None) -> str | None:
    """The typname of a built-in type written as ``words`` (lower case, single spaces), or
    ``None``.  ``float(p)`` is ``float4`` for p ≤ 24, else ``float8`` (manual 8.1.3)."""
    if words == "float":
        if modifiers:
            p = int(modifiers[0])
            if not 1 <= p <= 53:
                raise TypeError_(f"precision for type float must be between 1 and 53 bits, not {p}")
            return "float4" if p <= 24 else "float8"
        return "float8"
    return ALIASES.get(words)


def _ints(modifiers: list[str], typname: str) -> list[int]:
    try:
        return [int(m) for m in modifiers]
    except ValueError:
        raise TypeError_(f"type modifiers of {typname} must be integer constants: {modifiers}") from None


def column_fields(typname: str, modifiers: list[str] | None, *, explicit_char: bool = False,
                  interval_fields: str | None = None, dims: int = 0) -> dict[str, Any]:
    """The model fields of a column of built-in type ``typname`` with ``modifiers`` (the text
    inside the parentheses), ``interval_fields`` (``DAY TO SECOND``) and ``dims`` array
    dimensions: ``data_type``, ``column_type`` (``format_type``), ``udt_schema``,
    ``udt_name`` and the ``information_schema`` lengths and precisions.

    ``explicit_char``: the type was written ``char`` / ``character`` / ``bit`` (not
    ``bpchar``), which means length 1 without modifiers.  Raises ``TypeError_``."""
    info = BUILTIN[typname]
    mods = _ints(modifiers or [], typname) if info.kind != "plain" else []
    if info.kind == "plain" and modifiers:
        raise TypeError_(f"type {info.display} does not take modifiers")
    fmt = info.display
    f: dict[str, Any] = {"character_maximum_length": None, "character_octet_length": None,
                         "numeric_precision": info.numeric_precision,
                         "numeric_scale": info.numeric_scale,
                         "datetime_precision": None, "interval_type": None}
    if info.kind == "numeric":
        if len(mods) > 2:
            raise TypeError_("NUMERIC takes at most two modifiers")
        if mods:
            p, s = mods[0], (mods[1] if len(mods) > 1 else 0)
            if not 1 <= p <= 1000:
                raise TypeError_(f"NUMERIC precision {p} must be between 1 and 1000")
            if not -1000 <= s <= 1000:
                raise TypeError_(f"NUMERIC scale {s} must be between -1000 and 1000")
            fmt = f"numeric({p},{s})"
            # the typmod keeps the scale in 11 bits; information_schema's _pg_numeric_scale
            # reads it as (typmod - 4) & 65535, so a negative scale shows as s & 0x7ff (-1 → 2047)
            f["numeric_precision"], f["numeric_scale"] = p, s & 0x7FF
    elif info.kind == "char":
        if len(mods) > 1:
            raise TypeError_(f"{info.display} takes one modifier")
        n = mods[0] if mods else (1 if explicit_char and typname == "bpchar" else None)
        if n is not None:
            if n < 1:
                raise TypeError_(f"length for type {info.display} must be at least 1")
            fmt = f"{info.display}({n})"
            f["character_maximum_length"] = n
            f["character_octet_length"] = n * OCTETS_PER_CHAR
        else:
            fmt = "bpchar" if typname == "bpchar" else info.display
            f["character_octet_length"] = UNBOUNDED_OCTETS
    elif info.kind == "bit":
        n = mods[0] if mods else (1 if typname == "bit" else None)
        if n is not None:
            fmt = f"{info.display}({n})"
            f["character_maximum_length"] = n
    elif info.kind == "date":
        f["datetime_precision"] = 0
    elif info.kind == "time":
        p = mods[0] if mods else None
        if p is not None and not 0 <= p <= 6:
            p = 6 if p > 6 else p  # the server lowers it with a warning
        fmt = info.display + (f"({p})" if p is not None else "") + info.zone
        f["datetime_precision"] = 6 if p is None else p
    elif info.kind == "interval":
        p = mods[0] if mods else None
        fields = interval_fields.upper() if interval_fields else None
        fmt = "interval" + (f" {fields.lower()}" if fields else "") + (f"({p})" if p is not None else "")
        f["datetime_precision"] = 6 if p is None else p
        # _pg_interval_type: format_type's text after "interval " in upper case
        f["interval_type"] = fmt[len("interval "):].upper() if fields else None
    if typname == "text":
        f["character_octet_length"] = UNBOUNDED_OCTETS
    if typname == "name":  # pg_type.typcollation of name is "C"
        f["collation_name"] = "C"
    f["column_type"] = fmt + ("[]" if dims else "")
    f["data_type"] = "ARRAY" if dims else (fmt if info.kind == "plain" and typname != "char" else _data_type(info))
    f["udt_schema"] = "pg_catalog"
    f["array_dimensions"] = dims
    f["udt_name"] = ("_" if dims else "") + typname
    if dims:  # information_schema reports no lengths or precisions for an array
        for k in ("character_maximum_length", "character_octet_length", "numeric_precision",
                  "numeric_scale", "datetime_precision", "interval_type"):
            f[k] = None
    return f


def _data_type(info: TypeInfo) -> str:
    """``format_type(oid, NULL)``: the name without modifiers."""
    if info.kind == "time":
        return info.display + info.zone
    return info.display
