"""The MySQL / MariaDB type catalogue, as data.

Turns a data type as written (``INT1``, ``DOUBLE PRECISION``, ``NATIONAL VARCHAR(5)``,
``TEXT(100)``, ``SERIAL``) into the ``information_schema.COLUMNS`` fields a server reports for
it (``data_type``, ``column_type``, lengths, precisions, charset, collation), and renders
``COLUMN_DEFAULT`` as MariaDB 10.11 does.

Sources: MySQL 8.0 manual chapter 13 "Data Types" (13.1 numeric, 13.2 date and time, 13.3
string, 13.4 spatial, 13.5 JSON) and 13.9 "Using Data Types from Other Database Engines"
(synonyms); MariaDB KB "Data Types" (``INET4``, ``INET6``, ``UUID``, ``JSON`` as a ``LONGTEXT``
alias with ``utf8mb4_bin``); rendering facts read off a MariaDB 10.11.19 server (see
``tests/mysql/test_types.py`` for each).  ``flavor="mysql"`` renders as MySQL 8.0 does: no
display widths on integer types (except ``tinyint(1)``), ``json`` kept as ``json``.
"""

from __future__ import annotations

import decimal
import re
from dataclasses import dataclass, field
from typing import Any

from . import charsets

#: flavors that render ``column_type`` as MySQL 8.0 does (no integer display widths, ``year``,
#: a native ``json`` type): ``mysql``, and ``tidb`` — TiDB v8.5 deprecates integer display
#: widths by default (TiDB manual "Data Type Overview"; configuration
#: ``deprecate-integer-display-length``, default true) and has a native JSON type (TiDB manual
#: "JSON Data Type")
MYSQL8_LIKE = ("mysql", "tidb")

__all__ = ["DataTypeSpec", "DefaultValue", "TypeInfo", "TYPES", "SYNONYMS", "column_fields",
           "render_default", "convert_charset_fields", "TYPE_FAMILIES"]


@dataclass(frozen=True)
class TypeInfo:
    """One canonical type: ``family`` (``integer``, ``decimal``, ``float``, ``bit``, ``date``,
    ``time``, ``char``, ``binary``, ``text``, ``blob``, ``enum``, ``set``, ``json``,
    ``spatial``, ``year``, ``other``), default display widths (signed, unsigned) for integer
    types, ``precision`` (information_schema NUMERIC_PRECISION for integers and floats),
    ``max_bytes`` for TEXT/BLOB (their fixed maximum byte length)."""

    name: str
    family: str
    width: tuple[int, int] | None = None
    precision: int | None = None
    unsigned_precision: int | None = None
    max_bytes: int | None = None


_T = TypeInfo
#: canonical types (MySQL manual 13.1–13.5; MariaDB KB data types)
TYPES: dict[str, TypeInfo] = {t.name: t for t in (
    _T("tinyint", "integer", (4, 3), 3, 3),
    _T("smallint", "integer", (6, 5), 5, 5),
    _T("mediumint", "integer", (9, 8), 7, 8),
    _T("int", "integer", (11, 10), 10, 10),
    _T("bigint", "integer", (20, 20), 19, 20),
    _T("decimal", "decimal"),
    _T("float", "float", precision=12),
    _T("double", "float", precision=22),
    _T("bit", "bit"),
    _T("date", "date"),
    _T("datetime", "time"),
    _T("timestamp", "time"),
    _T("time", "time"),
    _T("year", "year"),
    _T("char", "char"),
    _T("varchar", "char"),
    _T("binary", "binary"),
    _T("varbinary", "binary"),
    _T("tinytext", "text", max_bytes=255),
    _T("text", "text", max_bytes=65535),
    _T("mediumtext", "text", max_bytes=16777215),
    _T("longtext", "text", max_bytes=4294967295),
    _T("tinyblob", "blob", max_bytes=255),
    _T("blob", "blob", max_bytes=65535),
    _T("mediumblob", "blob", max_bytes=16777215),
    _T("longblob", "blob", max_bytes=4294967295),
    _T("enum", "enum"),
    _T("set", "set"),
    _T("json", "json"),
    _T("geometry", "spatial"), _T("point", "spatial"), _T("linestring", "spatial"),
    _T("polygon", "spatial"), _T("multipoint", "spatial"), _T("multilinestring", "spatial"),
    _T("multipolygon", "spatial"), _T("geometrycollection", "spatial"),
    _T("inet4", "other"), _T("inet6", "other"), _T("uuid", "other"),
)}

TYPE_FAMILIES = sorted({t.family for t in TYPES.values()})

#: type names as written (words upper case, one space) → canonical name and implied facts.
#: MySQL manual 13.9 and 13.1.1; MariaDB KB (``INT1``..``INT8``, ``MIDDLEINT``, ``NUMBER``,
#: ``VARCHAR2``, ``LONG``); ``NATIONAL`` / ``NCHAR`` imply utf8mb3 (manual 12.3.7).
SYNONYMS: dict[str, tuple[str, dict[str, Any]]] = {
    "TINYINT": ("tinyint", {}), "INT1": ("tinyint", {}),
    "BOOL": ("tinyint", {"length": 1}), "BOOLEAN": ("tinyint", {"length": 1}),
    "SMALLINT": ("smallint", {}), "INT2": ("smallint", {}),
    "MEDIUMINT": ("mediumint", {}), "MIDDLEINT": ("mediumint", {}), "INT3": ("mediumint", {}),
    "INT": ("int", {}), "INTEGER": ("int", {}), "INT4": ("int", {}),
    "BIGINT": ("bigint", {}), "INT8": ("bigint", {}),
    "SERIAL": ("bigint", {"unsigned": True, "serial": True}),
    "DECIMAL": ("decimal", {}), "DEC": ("decimal", {}), "NUMERIC": ("decimal", {}),
    "FIXED": ("decimal", {}), "NUMBER": ("decimal", {}),
    "FLOAT": ("float", {}), "FLOAT4": ("float", {}),
    "DOUBLE": ("double", {}), "DOUBLE PRECISION": ("double", {}), "REAL": ("double", {}),
    "FLOAT8": ("double", {}),
    "BIT": ("bit", {}),
    "DATE": ("date", {}), "DATETIME": ("datetime", {}), "TIMESTAMP": ("timestamp", {}),
    "TIME": ("time", {}), "YEAR": ("year", {}),
    "CHAR": ("char", {}), "CHARACTER": ("char", {}),
    "NCHAR": ("char", {"charset": "utf8mb3"}), "NATIONAL CHAR": ("char", {"charset": "utf8mb3"}),
    "NATIONAL CHARACTER": ("char", {"charset": "utf8mb3"}),
    "VARCHAR": ("varchar", {}), "CHARACTER VARYING": ("varchar", {}), "CHAR VARYING": ("varchar", {}),
    "VARCHAR2": ("varchar", {}), "VARCHARACTER": ("varchar", {}),
    "NVARCHAR": ("varchar", {"charset": "utf8mb3"}), "NATIONAL VARCHAR": ("varchar", {"charset": "utf8mb3"}),
    "NCHAR VARCHAR": ("varchar", {"charset": "utf8mb3"}),
    "NATIONAL CHAR VARYING": ("varchar", {"charset": "utf8mb3"}),
    "NATIONAL CHARACTER VARYING": ("varchar", {"charset": "utf8mb3"}),
    "NCHAR VARYING": ("varchar", {"charset": "utf8mb3"}),
    "BINARY": ("binary", {}), "VARBINARY": ("varbinary", {}), "CHAR BYTE": ("binary", {}),
    "RAW": ("varbinary", {}),
    "TINYTEXT": ("tinytext", {}), "TEXT": ("text", {}), "MEDIUMTEXT": ("mediumtext", {}),
    "LONGTEXT": ("longtext", {}), "LONG": ("mediumtext", {}), "LONG VARCHAR": ("mediumtext", {}),
    "LONG CHAR VARYING": ("mediumtext", {}), "LONG CHARACTER VARYING": ("mediumtext", {}),
    "CLOB": ("longtext", {}),
    "TINYBLOB": ("tinyblob", {}), "BLOB": ("blob", {}), "MEDIUMBLOB": ("mediumblob", {}),
    "LONGBLOB": ("longblob", {}), "LONG VARBINARY": ("mediumblob", {}),
    "ENUM": ("enum", {}), "SET": ("set", {}), "JSON": ("json", {}),
    "GEOMETRY": ("geometry", {}), "POINT": ("point", {}), "LINESTRING": ("linestring", {}),
    "POLYGON": ("polygon", {}), "MULTIPOINT": ("multipoint", {}),
    "MULTILINESTRING": ("multilinestring", {}), "MULTIPOLYGON": ("multipolygon", {}),
    "GEOMETRYCOLLECTION": ("geometrycollection", {}), "GEOMCOLLECTION": ("geometrycollection", {}),
    "INET4": ("inet4", {}), "INET6": ("inet6", {}), "UUID": ("uuid", {}),
}

_TEXT_BY_SIZE = ("tinytext", "text", "mediumtext", "longtext")
_BLOB_BY_SIZE = ("tinyblob", "blob", "mediumblob", "longblob")
_STRING_FAMILIES = frozenset({"char", "text", "enum", "set"})


@dataclass
class DataTypeSpec:
    """A data type as the grammar read it (what the visitor fills in).

    * ``name``: the type's words as written, upper case, single-spaced (``"DOUBLE PRECISION"``,
      ``"NATIONAL VARCHAR"``, ``"CHAR BYTE"`` for ``CHAR(n) BYTE``).
    * ``length`` / ``scale``: the numbers in ``(M)`` / ``(M,D)`` (``None`` if absent).
    * ``values``: ENUM/SET labels, unquoted, in order.
    * ``unsigned``, ``zerofill``: sign attributes (``SIGNED`` is the default).
    * ``charset`` / ``collation``: ``CHARACTER SET`` / ``COLLATE`` on the type; ``binary``:
      the ``BINARY`` attribute (the charset's ``_bin`` collation); ``ascii`` / ``unicode``:
      the ``ASCII`` (latin1) / ``UNICODE`` (ucs2) shorthands.
    """

    name: str
    length: int | None = None
    scale: int | None = None
    values: tuple[str, ...] | None = None
    unsigned: bool = False
    zerofill: bool = False
    charset: str | None = None
    collation: str | None = None
    binary: bool = False
    ascii: bool = False
    unicode: bool = False


class TypeError_(ValueError):
    """An unknown or impossible data type (the visitor reports it as ``DdlParseError``)."""


def canonical(spec: DataTypeSpec) -> tuple[TypeInfo, dict[str, Any]]:
    """The catalogue entry for ``spec.name`` and the facts its synonym implies."""
    try:
        name, implied = SYNONYMS[" ".join(spec.name.upper().split())]
    except KeyError:
        raise TypeError_(f"unknown data type {spec.name!r}") from None
    return TYPES[name], implied


def _quote_label(label: str) -> str:
    return "'" + label.replace("\\", "\\\\").replace("'", "''") + "'"


def _resolve_charset(spec: DataTypeSpec, implied: dict[str, Any], table_charset: str | None,
                     table_collation: str | None, flavor: str) -> tuple[str, str]:
    charset = spec.charset or implied.get("charset")
    if spec.ascii:
        charset = "latin1"
    if spec.unicode:
        charset = "ucs2"
    collation = spec.collation
    if charset is not None:
        charset = charsets.normalize_charset(charset)
        if collation is None:
            collation = charset + "_bin" if spec.binary and charset != "binary" else charsets.default_collation(charset, flavor)
    elif collation is not None:
        charset = charsets.collation_charset(collation)
    else:
        charset = table_charset or "utf8mb4"
        collation = table_collation or charsets.default_collation(charset, flavor)
        if spec.binary:
            collation = charset + "_bin"
    return charset, charsets.normalize_collation(collation)


def column_fields(spec: DataTypeSpec, table_charset: str | None = None,
                  table_collation: str | None = None, flavor: str = "mariadb") -> dict[str, Any]:
    """The ``Column`` fields for a data type: ``data_type``, ``column_type``,
    ``character_maximum_length``, ``character_octet_length``, ``numeric_precision``,
    ``numeric_scale``, ``datetime_precision``, ``character_set_name``, ``collation_name``,
    ``enum_values``, ``set_values``, ``unsigned``, ``zerofill``; plus ``serial: True`` for
    ``SERIAL`` (the caller adds NOT NULL AUTO_INCREMENT UNIQUE, manual 13.1.1).

    ``table_charset`` / ``table_collation``: the table's defaults, inherited by character
    columns that name neither.  Raises ``TypeError_`` for an unknown type."""
    info, implied = canonical(spec)
    length = implied.get("length", spec.length)
    unsigned = spec.unsigned or spec.zerofill or implied.get("unsigned", False)
    out: dict[str, Any] = {
        "data_type": info.name, "column_type": info.name,
        "character_maximum_length": None, "character_octet_length": None,
        "numeric_precision": None, "numeric_scale": None, "datetime_precision": None,
        "character_set_name": None, "collation_name": None,
        "enum_values": None, "set_values": None, "unsigned": False, "zerofill": False,
    }
    if implied.get("serial"):
        out["serial"] = True
    fam = info.family
    sign = (" unsigned" if unsigned else "") + (" zerofill" if spec.zerofill else "")
    if fam == "integer":
        width = length if length is not None else info.width[1 if unsigned else 0]  # type: ignore[index]
        show_width = flavor not in MYSQL8_LIKE or spec.zerofill or (info.name == "tinyint" and width == 1)
        out["column_type"] = f"{info.name}({width})" if show_width else info.name
        out["column_type"] += sign
        out["numeric_precision"] = info.unsigned_precision if unsigned else info.precision
        out["numeric_scale"] = 0
        out.update(unsigned=unsigned, zerofill=spec.zerofill)
    elif fam == "decimal":
        p = 10 if not length else length  # DECIMAL(0) / NUMERIC(0,0) are decimal(10,0) on the server
        s = 0 if spec.scale is None else spec.scale
        out["column_type"] = f"decimal({p},{s}){sign}"
        out.update(numeric_precision=p, numeric_scale=s, unsigned=unsigned, zerofill=spec.zerofill)
    elif fam == "float":
        name = info.name
        if name == "float" and length is not None and spec.scale is None:
            # FLOAT(p): p <= 24 → FLOAT, 25..53 → DOUBLE (manual 13.1.4)
            name = "double" if length > 24 else "float"
            length = None
        out["data_type"] = name
        if length is not None and spec.scale is not None:
            out["column_type"] = f"{name}({length},{spec.scale}){sign}"
            out.update(numeric_precision=length, numeric_scale=spec.scale)
        else:
            out["column_type"] = name + sign
            out["numeric_precision"] = TYPES[name].precision
        out.update(unsigned=unsigned, zerofill=spec.zerofill)
    elif fam == "bit":
        n = 1 if length is None else length
        out["column_type"] = f"bit({n})"
        out["numeric_precision"] = n
    elif fam == "time":
        fsp = 0 if length is None else length
        out["column_type"] = info.name if fsp == 0 else f"{info.name}({fsp})"
        out["datetime_precision"] = fsp
    elif fam == "year":
        out["column_type"] = f"year({2 if length == 2 else 4})" if flavor not in MYSQL8_LIKE else "year"
    elif fam in ("char", "text", "enum", "set") or (fam == "json" and flavor not in MYSQL8_LIKE):
        charset, collation = _resolve_charset(spec, implied, table_charset, table_collation, flavor)
        if fam == "json":  # MariaDB: JSON is LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin
            charset, collation = "utf8mb4", "utf8mb4_bin"
            info, fam = TYPES["longtext"], "text"
            out["data_type"] = out["column_type"] = "longtext"
        if charset == "binary":  # CHAR ... CHARACTER SET binary is BINARY (manual 13.3.3)
            to_binary = {"char": "binary", "varchar": "varbinary"}
            if info.name in to_binary:
                return column_fields(DataTypeSpec(to_binary[info.name], length), flavor=flavor)
            if fam == "text":
                return column_fields(DataTypeSpec(_BLOB_BY_SIZE[_TEXT_BY_SIZE.index(info.name)].upper(),
                                                  length), flavor=flavor)
        mb = charsets.mbmaxlen(charset)
        out.update(character_set_name=charset, collation_name=collation)
        if fam == "char":
            n = 1 if (length is None and info.name == "char") else length
            if n is None:
                raise TypeError_("VARCHAR needs a length")
            out["column_type"] = f"{info.name}({n})"
            out.update(character_maximum_length=n, character_octet_length=n * mb)
        elif fam == "text":
            name = info.name
            if length is not None and info.name == "text":
                name = _smallest(_TEXT_BY_SIZE, length * mb)
            out["data_type"] = out["column_type"] = name
            size = TYPES[name].max_bytes
            out.update(character_maximum_length=size, character_octet_length=size)
        else:  # enum / set
            # a member given as a hex or bit literal is bytes in the column's charset
            values = tuple(charsets.decode_as_server(v, charset) if isinstance(v, bytes) else v
                           for v in (spec.values or ()))
            out["column_type"] = f"{info.name}(" + ",".join(_quote_label(v) for v in values) + ")"
            if fam == "enum":
                n = max((len(v) for v in values), default=0)
                out["enum_values"] = values
            else:
                n = sum(len(v) for v in values) + max(len(values) - 1, 0)
                out["set_values"] = values
            out.update(character_maximum_length=n, character_octet_length=n * mb)
    elif fam == "binary":
        n = 1 if (length is None and info.name == "binary") else length
        if n is None:
            raise TypeError_("VARBINARY needs a length")
        out["column_type"] = f"{info.name}({n})"
        out.update(character_maximum_length=n, character_octet_length=n)
    elif fam == "blob":
        name = _smallest(_BLOB_BY_SIZE, length) if (length is not None and info.name == "blob") else info.name
        size = TYPES[name].max_bytes
        out.update(data_type=name, column_type=name, character_maximum_length=size,
                   character_octet_length=size)
    # date, json (MySQL flavor), spatial, inet4/inet6/uuid: name only
    return out


def _smallest(names: tuple[str, ...], nbytes: int) -> str:
    for n in names:
        if TYPES[n].max_bytes >= nbytes:  # type: ignore[operator]
            return n
    return names[-1]


def convert_charset_fields(column_fields_: dict[str, Any], charset: str, collation: str | None,
                           flavor: str = "mariadb") -> dict[str, Any]:
    """``ALTER TABLE ... CONVERT TO CHARACTER SET``: the new fields of a character column
    (``data_type``, ``column_type``, charset, collation, lengths).  TEXT types grow so that
    they still hold as many characters (manual 15.1.9, "Changing the Character Set"):
    a TEXT in latin1 becomes MEDIUMTEXT in utf8mb4.  Non-character columns are returned
    unchanged."""
    f = dict(column_fields_)
    if f.get("character_set_name") is None:
        return f
    charset = charsets.normalize_charset(charset)
    collation = charsets.normalize_collation(collation or charsets.default_collation(charset, flavor))
    old_mb = charsets.mbmaxlen(f["character_set_name"])
    new_mb = charsets.mbmaxlen(charset)
    dt = f["data_type"]
    if dt in _TEXT_BY_SIZE:
        chars = TYPES[dt].max_bytes // old_mb  # type: ignore[operator]
        name = _smallest(_TEXT_BY_SIZE[_TEXT_BY_SIZE.index(dt):], chars * new_mb)
        size = TYPES[name].max_bytes
        f.update(data_type=name, column_type=name, character_maximum_length=size, character_octet_length=size)
    elif f.get("character_maximum_length") is not None:
        f["character_octet_length"] = f["character_maximum_length"] * new_mb
    f.update(character_set_name=charset, collation_name=collation)
    return f


# --------------------------------------------------------------------------------------------
# Defaults
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DefaultValue:
    """A ``DEFAULT`` clause as the grammar read it.

    ``kind``: ``"null"``, ``"string"`` (``value``: the decoded text), ``"number"`` (``value``:
    the literal text, sign included), ``"bool"`` (``value``: ``"1"``/``"0"``), ``"hex"``
    (``value``: bytes), ``"bit"`` (``value``: int), ``"function"`` (``value``: the call's
    source text, e.g. ``CURRENT_TIMESTAMP(3)``, ``uuid()``), ``"expression"`` (``value``:
    the source text between the parentheses of ``DEFAULT (expr)``)."""

    kind: str
    value: Any = None


_ESCAPES = str.maketrans({"\\": "\\\\", "\0": "\\0", "\n": "\\n", "\r": "\\r", "\x1a": "\\Z", "'": "''"})

_NOW_FUNCTIONS = {"current_timestamp", "now", "localtime", "localtimestamp"}
_FUNC_RX = re.compile(r"\s*([A-Za-z_][\w$]*)\s*(?:\(\s*(\d*)\s*\))?\s*$", re.DOTALL)


def quote_string(text: str) -> str:
    """A string literal as MariaDB's catalog writes it: ``'it''s'``, ``\\n`` escaped."""
    return "'" + text.translate(_ESCAPES) + "'"


#: DECIMAL(65,30) needs 65 digits (MariaDB's DECIMAL_MAX_PRECISION); the default context has 28
_DECIMAL_CONTEXT = decimal.Context(prec=100, rounding=decimal.ROUND_HALF_UP)


def _fmt_decimal(d: decimal.Decimal, scale: int) -> str:
    q = d.quantize(decimal.Decimal(1).scaleb(-scale), context=_DECIMAL_CONTEXT)
    if q == 0:
        q = abs(q)  # MariaDB has no negative zero: -0 → 0.00
    return format(q, "f")


def _fmt_float(x: float, single: bool, scale: int | None) -> str:
    """MariaDB's rendering of a FLOAT/DOUBLE default: fixed notation for moderate values
    (``1e3`` → ``1000``, ``1.0e-10`` → ``0.0000000001``), ``1e20`` style from 1e15 up;
    FLOAT keeps 6 significant digits (FLT_DIG), DOUBLE 17; ``FLOAT(M,D)`` rounds to D."""
    if scale is not None:  # FLOAT(M,D) / DOUBLE(M,D): exactly D decimals ('1.50')
        out = format(decimal.Decimal(repr(x)).quantize(decimal.Decimal(1).scaleb(-scale),
                                                       rounding=decimal.ROUND_HALF_UP), "f")
        return "0" + out[2:] if out.startswith("-0") and decimal.Decimal(out) == 0 else out
    text = f"{x:.6g}" if single else repr(x)
    d = decimal.Decimal(text)
    if x != 0 and abs(x) >= 1e15:
        mant, _, exp = f"{d:e}".partition("e")
        mant = mant.rstrip("0").rstrip(".") if "." in mant else mant
        return f"{mant}e{int(exp)}"
    out = format(d, "f")
    if "." in out:
        out = out.rstrip("0").rstrip(".")
    return "0" if out in ("-0", "") else out


_EXPR_ESCAPES = str.maketrans({"\\": "\\\\", "\0": "\\0", "\n": "\\n", "\r": "\\r", "\x1a": "\\Z", "'": "\\'"})


def render_default(default: DefaultValue | None, fields: dict[str, Any]) -> str | None:
    """``information_schema.COLUMNS.COLUMN_DEFAULT`` for ``default`` on a column with
    ``fields`` (from ``column_fields``), as MariaDB 10.11 renders it; ``None`` for no default
    or ``DEFAULT NULL``.

    Numbers are converted to the column's type (``int DEFAULT 1.6`` → ``2``,
    ``decimal(5,2) DEFAULT 1.5`` → ``1.50``); strings are quoted (``'it''s'``); temporal
    strings are normalised (``'2020-1-2'`` → ``'2020-01-02'``); bit columns render as
    ``b'101'``; ``NOW()``/``CURRENT_TIMESTAMP`` as ``current_timestamp()`` or with its
    precision; other functions and ``(expr)`` keep their source text."""
    if default is None or default.kind == "null":
        return None
    fam = TYPES[fields["data_type"]].family if fields["data_type"] in TYPES else "other"
    kind, value = default.kind, default.value
    if kind == "function":
        m = _FUNC_RX.match(value)
        if m and m.group(1).lower() in _NOW_FUNCTIONS:
            fsp = m.group(2) or ""
            return f"current_timestamp({fsp})"
        return value
    if kind == "expression":
        return f"({value})" if not value.startswith("(") else value
    zerofill_width = fields.get("zerofill") and _display_width(fields["column_type"])
    try:
        if fam == "bit":
            n = _as_int(kind, value)
            return f"b'{n:b}'"
        if fam in ("integer", "year"):
            if kind == "string":
                value = value.strip() or "0"
            n = int(decimal.Decimal(str(value) if kind != "hex" else int.from_bytes(value, "big"))
                    .to_integral_value(rounding=decimal.ROUND_HALF_UP)) if kind != "bit" else value
            if fam == "year" and 0 < n < 70:
                n += 2000
            elif fam == "year" and 70 <= n < 100:
                n += 1900
            if zerofill_width:
                return str(n).rjust(zerofill_width, "0")
            return str(n)
        if fam == "decimal":
            d = decimal.Decimal(str(value).strip()) if kind != "hex" else decimal.Decimal(int.from_bytes(value, "big"))
            return _fmt_decimal(d, fields["numeric_scale"] or 0)
        if fam == "float":
            x = float(value) if kind != "hex" else float(int.from_bytes(value, "big"))
            return _fmt_float(x, fields["data_type"] == "float", fields.get("numeric_scale"))
    except (ValueError, decimal.InvalidOperation, ArithmeticError):
        pass
    if fam in ("blob", "text"):
        # TEXT/BLOB defaults are printed by the expression printer: X'..' for bytes, \' for quotes
        if kind == "hex":
            return "X'" + value.hex() + "'"
        return "'" + str(value).translate(_EXPR_ESCAPES) + "'"
    if kind == "hex":
        value = value.decode("latin-1")
    elif kind == "bit" and fam in ("char", "binary"):
        # a bit literal is a binary string (manual 11.1.5): its bytes, as for a hex literal
        value = value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big").decode("latin-1")
    elif kind == "bit":
        value = str(value)
    elif kind == "bool":
        value = value
    text = str(value)
    if fields["data_type"] == "char":
        text = text.rstrip(" ")  # CHAR values lose trailing spaces (manual 13.3.2)
    if fam == "date" or fam == "time":
        if kind == "number":
            text = _temporal_number(fields["data_type"], text)
        text = _normalize_temporal(fields["data_type"], text, fields.get("datetime_precision") or 0)
    return quote_string(text)


def _display_width(column_type: str) -> int | None:
    m = re.match(r"\w+\((\d+)\)", column_type)
    return int(m.group(1)) if m else None


def _as_int(kind: str, value: Any) -> int:
    if kind == "bit":
        return int(value)
    if kind == "hex":
        return int.from_bytes(value, "big")
    return int(decimal.Decimal(str(value)).to_integral_value(rounding=decimal.ROUND_HALF_UP))


# MySQL 11.1.3 Date and Time Literals: "relaxed" strings take any punctuation character as a
# delimiter ('2012^12^31 11+30+45'), and a 'T' or space between date and time
_P = r"[^0-9A-Za-z\s]"
_DATE_RX = re.compile(rf"^\s*(\d{{1,4}}){_P}(\d{{1,2}}){_P}(\d{{1,2}})(?:(?:[ T]|{_P})(\d{{1,2}}){_P}(\d{{1,2}})(?:{_P}(\d{{1,2}})(?:\.(\d{{1,6}}))?)?)?\s*$")
_TIME_RX = re.compile(r"^\s*(-)?(\d{1,3}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,6}))?)?\s*$")


def _temporal_number(data_type: str, text: str) -> str:
    """A number given for a temporal column, as the server reads it (MySQL 11.1.3): TIME
    ``[h]hmmss[.f]`` read from the right (``20`` → ``00:00:20``); DATE/DATETIME/TIMESTAMP
    ``YYYYMMDD[hhmmss][.f]`` or with a 2-digit year ``YYMMDD[hhmmss]`` (70-99 → 19xx, 00-69 →
    20xx).  Other text is returned as it is."""
    m = re.fullmatch(r"\s*(-)?(\d+)(?:\.(\d*))?\s*", text)
    if not m:
        return text
    sign, digits, frac = m.group(1) or "", m.group(2), m.group(3)
    f = f".{frac}" if frac else ""
    if data_type == "time":
        d = digits.rjust(6, "0")
        return f"{sign}{int(d[:-4])}:{d[-4:-2]}:{d[-2:]}{f}"
    if len(digits) in (6, 12):
        yy = int(digits[:2])
        digits = str(2000 + yy if yy < 70 else 1900 + yy) + digits[2:]
    elif len(digits) not in (8, 14):
        return text
    date = f"{digits[:4]}-{digits[4:6]}-{digits[6:8]}"
    if len(digits) == 8:
        return date
    return f"{date} {digits[8:10]}:{digits[10:12]}:{digits[12:14]}{f}"


def _normalize_temporal(data_type: str, text: str, fsp: int) -> str:
    """``'2020-1-2'`` → ``'2020-01-02'`` for DATE; full ``YYYY-MM-DD hh:mm:ss[.f]`` for
    DATETIME/TIMESTAMP; ``hh:mm:ss[.f]`` for TIME (MariaDB's catalog rendering)."""
    frac = lambda f: ("." + (f or "").ljust(fsp, "0")[:fsp]) if fsp else ""  # noqa: E731
    if data_type == "time":
        m = _TIME_RX.match(text)
        if not m:
            return text
        sign, h, mi, s, f = m.groups()
        return f"{sign or ''}{int(h):02d}:{int(mi):02d}:{int(s or 0):02d}{frac(f)}"
    m = _DATE_RX.match(text)
    if not m:
        if text.strip() in ("0", ""):
            m = _DATE_RX.match("0000-00-00 00:00:00")
        else:
            return text
    y, mo, d, h, mi, s, f = m.groups()
    date = f"{int(y):04d}-{int(mo):02d}-{int(d):02d}"
    if data_type == "date":
        return date
    return f"{date} {int(h or 0):02d}:{int(mi or 0):02d}:{int(s or 0):02d}{frac(f)}"
