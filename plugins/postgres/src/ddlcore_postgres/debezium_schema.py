"""Tables of Debezium's PostgreSQL connector typed by the messages' own Connect schemas, for a
stream without ddlcore's event trigger (``ddlcore capture debezium``).

Owns: the column type a Debezium field schema stands for, the DDL that describes a table by the
field schemas of its messages (a ``CREATE TABLE`` the first time, ``ALTER TABLE`` when a later
message's fields differ), and the marker that says so.

**What is known, what is not.** Debezium's PostgreSQL connector carries no DDL. A message with
its schema (``{"schema", "payload"}``: ``value.converter.schemas.enable=true``) describes each
field: its Connect type, its logical type (``io.debezium.time.MicroTimestamp``,
``org.apache.kafka.connect.data.Decimal`` with ``scale``, ...), whether it is optional, and with
``column.propagate.source.type`` (or ``datatype.propagate.source.type``) the column's own type
name, length and scale (parameters ``__debezium.source.column.type``, ``...length``,
``...scale``). From these the table is described as exactly as they allow:

* with the source type: the PostgreSQL type (``varchar(20)``, ``numeric(10,2)``, ``int4``,
  ``_text`` → ``text[]``, ``timestamptz``; an enum or another user-defined type → ``text``, its
  definition is not in the message);
* without it: the type Debezium's documentation maps to the field ("Data type mappings"):
  ``int16`` → ``smallint``, ``Decimal`` → ``numeric(p,s)`` with ``connect.decimal.precision``
  (else unconstrained), ``MicroTimestamp`` → ``timestamp``, ``ZonedTimestamp`` →
  ``timestamptz``, ``string`` → ``text`` (a ``varchar(n)``'s length is lost), ...

What cannot be known: **where** a table changed (the DDL between two rows: the first row with
the new fields carries the change, at its own position), a rename (it reads as a column dropped
and one added), defaults, constraints, the primary key, the precision of a ``time`` /
``timestamp`` (only its unit), an enum's type. Each table so described is marked: its
``COMMENT`` is ``MARKER`` (a ``ddl`` event ``COMMENT ON TABLE``, so the history, the pipeline's
``_schemas`` and ``ddlcore tables`` show it), and the capture warns once per table.  A message
without a schema is not typed by a guess: its row is quarantined with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ddlcore.debezium import FieldSchema, Record

from .catalog import quote_ident
from .types import canonical_name, column_fields

__all__ = ["MARKER", "SchemaDdl", "field_type", "schema_ddl"]

#: the table comment of a table described by Debezium's field schemas
MARKER = "ddlcore: typed by Debezium's field schemas (no DDL in the stream)"
_SOURCE = "__debezium.source.column."
#: Debezium logical type → the PostgreSQL type (Debezium PostgreSQL connector, "Data type mappings")
_LOGICAL = {
    "io.debezium.time.Date": "date", "org.apache.kafka.connect.data.Date": "date",
    "io.debezium.time.Time": "time(3)", "io.debezium.time.MicroTime": "time", "io.debezium.time.NanoTime": "time",
    "org.apache.kafka.connect.data.Time": "time(3)",
    "io.debezium.time.Timestamp": "timestamp(3)", "io.debezium.time.MicroTimestamp": "timestamp",
    "io.debezium.time.NanoTimestamp": "timestamp", "org.apache.kafka.connect.data.Timestamp": "timestamp(3)",
    "io.debezium.time.ZonedTimestamp": "timestamptz", "io.debezium.time.ZonedTime": "timetz",
    "io.debezium.time.MicroDuration": "interval", "io.debezium.time.Interval": "interval",
    "io.debezium.data.VariableScaleDecimal": "numeric", "io.debezium.data.Json": "jsonb",
    "io.debezium.data.Uuid": "uuid", "io.debezium.data.Xml": "xml", "io.debezium.data.Enum": "text",
    "io.debezium.data.Bits": "bit varying",
}
#: Connect type → the PostgreSQL type, when there is no logical type
_CONNECT = {"boolean": "boolean", "int8": "smallint", "int16": "smallint", "int32": "integer", "int64": "bigint",
            "float32": "real", "float64": "double precision", "string": "text", "bytes": "bytea",
            "array": "text[]"}  # an array's element schema is not kept: its elements are read as text
#: source type names whose length / scale are the type's parameters
_SIZED = {"varchar": 1, "bpchar": 1, "char": 1, "bit": 1, "varbit": 1, "numeric": 2}
#: source type names that are PostgreSQL's own (anything else is user-defined: an enum, a domain)
_BUILTIN = frozenset({"bool", "int2", "int4", "int8", "float4", "float8", "numeric", "text", "varchar", "bpchar",
                      "char", "bytea", "date", "time", "timetz", "timestamp", "timestamptz", "interval", "json",
                      "jsonb", "uuid", "xml", "bit", "varbit", "money", "inet", "cidr", "macaddr", "hstore",
                      "oid", "name", "tsvector", "point"})


def _source_type(params: dict[str, Any]) -> str | None:
    name = params.get(_SOURCE + "type")
    if not name:
        return None
    name = str(name).lower()
    array = name.startswith("_")
    base = name.lstrip("_")
    if base not in _BUILTIN:
        base = "text"  # an enum or another user-defined type: its definition is not in the message
    sizes = [params.get(_SOURCE + "length"), params.get(_SOURCE + "scale")][:_SIZED.get(base, 0)]
    sizes = [str(s) for s in sizes if s not in (None, "", "0") or base == "numeric" and s == "0"]
    if sizes and int(sizes[0]) > (1000 if base == "numeric" else 10_485_760):
        sizes = []  # Debezium's length of an unconstrained numeric / varchar
    return base + (f"({','.join(sizes)})" if sizes else "") + ("[]" if array else "")


def field_type(field: FieldSchema) -> str:
    """The PostgreSQL column type a Connect field schema stands for (module docstring)."""
    params = field.parameters or {}
    source = _source_type(params)
    if source is not None:
        return source
    if field.name == "org.apache.kafka.connect.data.Decimal":
        p = params.get("connect.decimal.precision")
        return f"numeric({p},{params.get('scale', 0)})" if p else "numeric"
    if field.name in _LOGICAL:
        return _LOGICAL[field.name]
    return _CONNECT.get(field.type, "text")


@dataclass(frozen=True)
class SchemaDdl:
    """What to do with a row of a table the history does not describe (or describes by
    Debezium's schema, differently): ``statements`` (DDL to record at the row's position,
    in order), ``warning`` (once per table), ``reason`` (a quarantine reason: nothing can be
    described)."""

    statements: tuple[str, ...] = ()
    warning: str | None = None
    reason: str | None = None


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _name(record: Record) -> str:
    s = record.source
    return f"{quote_ident(s.get('schema') or 'public')}.{quote_ident(s.get('table') or '')}"


def schema_ddl(record: Record, table: Any) -> SchemaDdl | None:
    """The DDL that describes ``record``'s table by its field schemas: ``CREATE TABLE`` and the
    ``COMMENT`` marker when ``table`` (the history's, at the row) is ``None``; ``ALTER TABLE``
    (columns dropped, added, retyped) when ``table`` carries the marker and the fields differ;
    ``None`` when there is nothing to do (a table of real DDL is never touched).  Without
    field schemas: a ``SchemaDdl`` with the quarantine ``reason``."""
    if table is not None and table.comment != MARKER:
        return None
    if not record.fields:
        if table is not None:
            return None
        return SchemaDdl(reason="no DDL describes it and the message has no schema to type it by "
                                "(value.converter.schemas.enable=true, or ddlcore's event trigger)")
    wanted = [(name, field_type(f)) for name, f in record.fields.items()]
    name = _name(record)
    if table is None:
        cols = ", ".join(f"{quote_ident(n)} {t}" for n, t in wanted)
        return SchemaDdl((f"CREATE TABLE {name} ({cols})", f"COMMENT ON TABLE {name} IS {_literal(MARKER)}"),
                         warning=f"{record.source.get('schema')}.{record.source.get('table')}: no DDL describes it; "
                                 f"its rows are typed by Debezium's field schemas alone (types as the schemas tell "
                                 f"them; where the table changed between rows cannot be known): install ddlcore's "
                                 f"event trigger for exact DDL")
    have = {c.name: c for c in table.columns}
    alter = [f"DROP COLUMN {quote_ident(c)}" for c in have if c not in dict(wanted)]
    for n, t in wanted:
        if n not in have:
            alter.append(f"ADD COLUMN {quote_ident(n)} {t}")
        elif _differs(have[n], t):
            alter.append(f"ALTER COLUMN {quote_ident(n)} TYPE {t}")
    return SchemaDdl((f"ALTER TABLE {name} " + ", ".join(alter),)) if alter else None


def _format_type(text: str) -> str:
    """``format_type``'s text of a type written as ``field_type`` writes it (``int4`` →
    ``integer``, ``varchar(20)`` → ``character varying(20)``, ``text[]`` → ``text[]``)."""
    dims = text.count("[]")
    words, _, mods = text.replace("[]", "").partition("(")
    modifiers = [m.strip() for m in mods.rstrip(")").split(",")] if mods else None
    typname = canonical_name(words.strip(), modifiers)
    if typname is None:
        return text
    return column_fields(typname, modifiers, dims=dims)["column_type"]


def _differs(col: Any, wanted: str) -> bool:
    return col.column_type != _format_type(wanted)
