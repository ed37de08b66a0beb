"""PostgreSQL catalog descriptions → the ddlcore table model, and back to DDL text.

Owns: mapping one table description made by ``ddlcore.describe_table(oid)`` (the SQL the event
trigger and the snapshot share, ``sql/capture_install.sql``) onto ``ddlcore.model.Table``
following the PostgreSQL conventions of the model (TEAM.md, docs/postgres.md); turning a DDL
message of the event trigger into the ``catalog`` of a change-log ``ddl`` event
(docs/changelog.md, "The catalog description"); rendering a description as a ``CREATE TABLE``
statement for the snapshot's ``ddl`` events.  Must not know: the replication stream, Spark.

Column fields (PostgreSQL 15 manual 37.17 ``information_schema.columns``, 53.7
``pg_attribute``, 9.26 ``format_type``):

==========================  ==================================================================
model field                 from the description
==========================  ==================================================================
``name``                    ``pg_attribute.attname`` (exact: quoted names keep their case)
``ordinal_position``        ``attnum``: PostgreSQL never reuses a position, so a dropped
                            column leaves a gap; the columns' order is a row image's
``data_type``               ``information_schema.columns.data_type`` (``integer``, ``ARRAY``,
                            ``USER-DEFINED``; a domain column: its base type's)
``column_type``             ``format_type(atttypid, atttypmod)``
``nullable``                not (``attnotnull`` or a ``NOT NULL`` domain), as ``is_nullable``
``column_default``          ``pg_get_expr(adbin)`` of a column that is not generated
``character_maximum_length``, ``character_octet_length``, ``numeric_precision``,
``numeric_scale``, ``datetime_precision``, ``interval_type``: as ``information_schema`` computes
them (``_pg_char_max_length`` ...)
``collation_name``          ``information_schema.columns.collation_name`` (null for the
                            database default)
``generation_expression``   ``pg_get_expr(adbin)`` of a ``GENERATED ALWAYS AS (...) STORED``
                            column; ``generation_stored`` ``True``
``identity``                ``ALWAYS`` / ``BY DEFAULT`` (``attidentity``)
``array_dimensions``        ``attndims``
``enum_values``             the labels (``enumsortorder``) of the enum at the core of the type
                            (through domains and arrays)
``udt_schema``, ``udt_name``, ``domain_schema``, ``domain_name``: ``information_schema.columns``
``domain_base_type``        ``format_type`` of the innermost non-domain base type with the
                            typmod its domain gave it
``comment``                 ``col_description``
==========================  ==================================================================

The table: ``TableId(database, schema, name)``, ``primary_key`` (names in key order),
``comment``, ``replica_identity`` (``default`` / ``full`` / ``nothing`` / ``index``),
``indexes`` (the primary key, unique and plain indexes by name, key columns; ``None`` for an
expression), and the options the PostgreSQL dialect keeps: ``ATTNUM`` (the last attribute number,
dropped columns included), ``UNLOGGED``, ``PARTITION OF`` / ``INHERITS`` (the parents' ids),
``PARTITION BY`` (``pg_get_partkeydef``).  Check and foreign-key constraints are not described
(they change no row image).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ddlcore.model import Column, Table, TableId

__all__ = ["table_from_description", "table_json_from_description", "ATTNUM_OPTION", "DdlMessage", "parse_ddl_message", "render_create_table",
           "quote_ident", "MessageError"]

#: the option in which a PostgreSQL table keeps its last attribute number
#: (``ddlcore.model.TableEditor.ATTNUM_OPTION``): positions are never reused
ATTNUM_OPTION = "ATTNUM"


class MessageError(ValueError):
    """A ``ddlcore`` message whose content is not a DDL document of a known format."""


def quote_ident(name: str) -> str:
    """A name as PostgreSQL's ``quote_ident`` writes it when it must be quoted: always quoted
    here (``"Mixed Case"``, ``"a""b"``), which reads back exactly."""
    return '"' + name.replace('"', '""') + '"'


def _int(v: Any) -> int | None:
    return None if v is None else int(v)


def _column(d: Mapping[str, Any]) -> dict[str, Any]:
    generated = d.get("generated")
    labels = d.get("enum_labels")
    return Column(
        name=d["name"],
        ordinal_position=int(d["attnum"]),
        data_type=d["data_type"],
        column_type=d["format_type"],
        nullable=bool(d["nullable"]),
        column_default=d.get("default"),
        character_maximum_length=_int(d.get("character_maximum_length")),
        character_octet_length=_int(d.get("character_octet_length")),
        numeric_precision=_int(d.get("numeric_precision")),
        numeric_scale=_int(d.get("numeric_scale")),
        datetime_precision=_int(d.get("datetime_precision")),
        collation_name=d.get("collation_name"),
        generation_expression=d.get("generation_expression") if generated else None,
        generation_stored=True if generated == "s" else None,
        enum_values=tuple(labels) if labels is not None else None,
        comment=d.get("comment"),
        array_dimensions=int(d.get("attndims") or 0),
        identity=d.get("identity"),
        udt_schema=d.get("udt_schema"),
        udt_name=d.get("udt_name"),
        domain_schema=d.get("domain_schema"),
        domain_name=d.get("domain_name"),
        domain_base_type=d.get("domain_base_type"),
        interval_type=d.get("interval_type"),
    ).to_json()


def replica_identity_text(d: Mapping[str, Any]) -> str:
    """``DEFAULT``, ``FULL``, ``NOTHING`` or ``USING INDEX <name>`` (as ``ALTER TABLE ...
    REPLICA IDENTITY`` writes it; ``INDEX`` without an index behaves as ``NOTHING``)."""
    ident = d.get("replica_identity") or "DEFAULT"
    if ident == "INDEX":
        index = d.get("replica_identity_index")
        return f"USING INDEX {quote_ident(index)}" if index else "NOTHING"
    return str(ident)


def _index(ix: Mapping[str, Any]) -> dict[str, Any]:
    kind = "PRIMARY KEY" if ix.get("primary") else "UNIQUE" if ix.get("unique") else "INDEX"
    return {"name": ix["name"], "kind": kind, "columns": list(ix.get("columns") or ()), "key_parts": [],
            "comment": None}


def table_json_from_description(d: Mapping[str, Any], database: str | None) -> dict[str, Any]:
    """One ``ddlcore.describe_table`` document → the model's Table JSON (``Table.to_json``
    shape; see the module docstring).  ``database``: ``current_database()``.  Raises
    ``KeyError`` / ``ValueError`` for a document missing a field."""
    options: list[list[str]] = [[ATTNUM_OPTION, str(int(d.get("max_attnum") or 0))]]
    if d.get("persistence") == "u":
        options.append(["UNLOGGED", "YES"])
    parents = [str(TableId(database, p["schema"], p["name"])) for p in d.get("parents") or ()]
    if parents and d.get("is_partition"):
        options.append(["PARTITION OF", parents[0]])
    elif parents:
        options.append(["INHERITS", ",".join(parents)])
    if d.get("partition_key"):
        options.append(["PARTITION BY", str(d["partition_key"])])
    return {
        "database": database, "schema": d["schema"], "name": d["name"],
        "columns": [_column(c) for c in d.get("columns") or ()],
        "primary_key": list(d.get("primary_key") or ()),
        "default_character_set_name": None, "default_collation_name": None,
        "comment": d.get("comment"), "options": options,
        "indexes": [_index(ix) for ix in d.get("indexes") or ()],
        "foreign_keys": [], "checks": [],
        "replica_identity": str(d.get("replica_identity") or "DEFAULT").lower(),
    }


def table_from_description(d: Mapping[str, Any], database: str | None) -> Table:
    """``table_json_from_description`` as a ``Table``."""
    return Table.from_json(table_json_from_description(d, database))


def _table_id_json(database: str | None, schema: str, name: str) -> dict[str, Any]:
    return TableId(database, schema, name).to_json()


@dataclass(frozen=True)
class DdlMessage:
    """One DDL message of the event trigger (``event_trigger`` module docstring), read.

    ``query`` (the statement text, never empty), ``tag``, ``search_path``, ``database``,
    ``descriptions`` (the raw table documents, for the capture's own bookkeeping),
    ``catalog`` (the change log's ``catalog`` object: ``tables`` as model JSON, ``dropped``,
    ``renamed``), ``error`` (why the trigger could not describe the tables: then ``catalog``
    is ``None`` and the DDL text alone describes the change), ``commands``."""

    query: str
    tag: str
    search_path: tuple[str, ...]
    database: str | None
    descriptions: tuple[dict, ...]
    catalog: dict | None
    error: str | None = None
    commands: tuple[dict, ...] = field(default=())

    def tables(self) -> list[Table]:
        return [Table.from_json(t) for t in (self.catalog or {}).get("tables", ())]


def parse_ddl_message(content: bytes | str, *, database: str | None = None) -> DdlMessage:
    """The content of a ``ddlcore`` message → ``DdlMessage``.  ``database`` overrides the
    message's own ``database`` when given.  Raises ``MessageError`` naming what is wrong."""
    try:
        text = content.decode("utf-8") if isinstance(content, (bytes, bytearray, memoryview)) else content
        doc = json.loads(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise MessageError(f"not a JSON document: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != 1:
        raise MessageError(f"unknown ddlcore message format {doc.get('format') if isinstance(doc, dict) else doc!r} "
                           f"(this capture reads format 1)")
    db = database if database is not None else doc.get("database")
    query = doc.get("query") or ""
    tag = str(doc.get("tag") or "")
    if not query.strip():
        # a command run where no query text is kept (a background worker): name the command
        query = f"-- {tag or 'DDL'} (query text unavailable)"
    search_path = tuple(str(s) for s in (doc.get("search_path") or ()))
    error = doc.get("error")
    descriptions = tuple(doc.get("tables") or ())
    catalog = None
    if not error:
        try:
            tables = [table_json_from_description(t, db) for t in descriptions]
            dropped = [_table_id_json(db, x["schema"], x["name"]) for x in doc.get("dropped") or ()]
            renamed = [{"from": _table_id_json(db, r["from"]["schema"], r["from"]["name"]),
                        "to": _table_id_json(db, r["to"]["schema"], r["to"]["name"])}
                       for r in doc.get("renamed") or ()]
        except (KeyError, TypeError, ValueError) as exc:
            raise MessageError(f"a table description is incomplete ({type(exc).__name__}: {exc})") from None
        catalog = {"tables": tables, "dropped": dropped}
        if renamed:
            catalog["renamed"] = renamed
    return DdlMessage(query, tag, search_path, db, descriptions, catalog, error,
                      tuple(doc.get("commands") or ()))


# ---------------------------------------------------------------------------------- DDL text


def _type_sql(c: Mapping[str, Any]) -> str:
    """``format_type``, with as many ``[]`` as the column has dimensions (``format_type``
    prints one pair whatever ``attndims`` is)."""
    text = c["format_type"]
    dims = int(c.get("attndims") or 0)
    if dims > 1 and text.endswith("[]"):
        while text.endswith("[]"):
            text = text[:-2]
        text += "[]" * dims
    return text


def _column_sql(c: Mapping[str, Any]) -> str:
    parts = [quote_ident(c["name"]), _type_sql(c)]
    if c.get("collation_name"):
        coll = quote_ident(c["collation_name"])
        if c.get("collation_schema") and c["collation_schema"] != "pg_catalog":
            coll = f"{quote_ident(c['collation_schema'])}.{coll}"
        parts.append(f"COLLATE {coll}")
    if c.get("generated"):
        parts.append(f"GENERATED ALWAYS AS ({c.get('generation_expression')}) STORED")
    elif c.get("identity"):
        parts.append(f"GENERATED {c['identity']} AS IDENTITY")
    elif c.get("default") is not None:
        parts.append(f"DEFAULT {c['default']}")
    if c.get("attnotnull"):
        parts.append("NOT NULL")
    return " ".join(parts)


def render_create_table(d: Mapping[str, Any]) -> str:
    """A ``CREATE TABLE`` statement for one description (the snapshot's ``ddl`` text): the
    name schema-qualified and quoted, each column's ``format_type`` text (as the snapshot
    session's ``search_path`` prints it), collation, identity / generation / default,
    ``NOT NULL``, the primary key, ``PARTITION BY`` for a partitioned table.  The catalog
    description on the same event is what the history records; this text is for people and
    for the history's own parse of it."""
    items = [_column_sql(c) for c in d.get("columns") or ()]
    pk = d.get("primary_key") or []
    if pk:
        name = d.get("primary_key_name")
        constraint = f"CONSTRAINT {quote_ident(name)} " if name else ""
        items.append(f"{constraint}PRIMARY KEY ({', '.join(quote_ident(n) for n in pk)})")
    unlogged = "UNLOGGED " if d.get("persistence") == "u" else ""
    body = ",\n    ".join(items)
    sql = f"CREATE {unlogged}TABLE {quote_ident(d['schema'])}.{quote_ident(d['name'])} (\n    {body}\n)"
    if d.get("partition_key"):
        sql += f" PARTITION BY {d['partition_key']}"
    return sql


def render_statements(d: Mapping[str, Any]) -> Iterable[str]:
    """``render_create_table`` and, when the replica identity is not the default, the ``ALTER
    TABLE ... REPLICA IDENTITY`` that sets it."""
    yield render_create_table(d)
    ident = replica_identity_text(d)
    if ident != "DEFAULT":
        yield f"ALTER TABLE {quote_ident(d['schema'])}.{quote_ident(d['name'])} REPLICA IDENTITY {ident}"
