"""The dialect-neutral table model: ``TableId``, ``Column``, ``Table``, ``Tables``.

Owns: the shape of a table as a database's catalog describes it, immutable values with
explicit editors (after Debezium's ``io.debezium.relational``), the exact JSON round trip, and
``fingerprint()``.  Must not know: any SQL dialect, any parser, Spark.

Field names follow ``information_schema.COLUMNS`` (ISO/IEC 9075-11 and the MySQL/MariaDB and
PostgreSQL manuals' "INFORMATION_SCHEMA COLUMNS" pages).  Native types are kept exactly
(``column_type`` is the full native text such as ``bigint(20) unsigned`` or
``character varying(20)[]``); there is no lossy universal type system.

Identifier case rules belong to the dialect: a dialect folds or keeps names *before* they reach
the model and passes a ``column_key`` function (how two column names compare) to the editors;
``Tables`` takes a ``table_key`` function (MySQL ``lower_case_table_names``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping

__all__ = [
    "TableId",
    "Column",
    "Index",
    "ForeignKey",
    "CheckConstraint",
    "Table",
    "TableEditor",
    "Database",
    "View",
    "Tables",
    "TableChange",
    "ModelError",
    "casefold_key",
    "exact_key",
]


class ModelError(ValueError):
    """An edit that the model cannot apply (unknown column, duplicate column, ...).

    The parser turns it into a ``DdlParseError`` naming the statement."""


def casefold_key(name: str) -> str:
    """Column-name comparison key for dialects whose column names are case-insensitive (MySQL)."""
    return name.lower()


def exact_key(name: str) -> str:
    """Comparison key for dialects that fold unquoted names at parse time (PostgreSQL)."""
    return name


def _tuple(value: Iterable[Any] | None) -> tuple | None:
    return None if value is None else tuple(value)


# --------------------------------------------------------------------------------------------
# TableId
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class TableId:
    """A table's identity: ``database`` (MySQL schema / PostgreSQL database, or ``None``),
    ``schema`` (PostgreSQL schema, ``None`` for MySQL) and ``name``.

    ``str(TableId("shop", None, "orders"))`` is ``"shop.orders"``; ``TableId.parse`` reverses it
    (two parts are ``database.name``; three are ``database.schema.name``)."""

    database: str | None
    schema: str | None
    name: str

    def __str__(self) -> str:
        return ".".join(p for p in (self.database, self.schema, self.name) if p is not None)

    @classmethod
    def parse(cls, text: str) -> "TableId":
        """``"t"`` → (None, None, t); ``"db.t"`` → (db, None, t); ``"db.s.t"`` → (db, s, t).

        Raises ``ValueError`` for an empty name or more than three parts."""
        parts = text.split(".")
        if not text or any(p == "" for p in parts) or len(parts) > 3:
            raise ValueError(f"not a table name: {text!r} (expected name, db.name or db.schema.name)")
        if len(parts) == 1:
            return cls(None, None, parts[0])
        if len(parts) == 2:
            return cls(parts[0], None, parts[1])
        return cls(parts[0], parts[1], parts[2])

    def with_name(self, name: str) -> "TableId":
        return dataclasses.replace(self, name=name)

    def to_json(self) -> dict[str, Any]:
        return {"database": self.database, "schema": self.schema, "name": self.name}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "TableId":
        return cls(data.get("database"), data.get("schema"), data["name"])


# --------------------------------------------------------------------------------------------
# Column
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """One column, named as ``information_schema.COLUMNS`` names its fields.

    * ``data_type``: the base type name in lower case as the catalog gives it (``bigint``,
      ``varchar``, ``enum``, ``character varying``).
    * ``column_type``: the full native type text (``bigint(20) unsigned``, ``enum('a','b')``).
    * ``column_default``: SQL text of the default (string literals quoted as in SQL, e.g.
      ``'abc'``; functions as the catalog renders them, e.g. ``current_timestamp()``), ``None``
      when there is no default or the default is ``NULL``.
    * lengths/precisions are ``int | None``; ``character_maximum_length`` counts characters.
    * ``generation_expression`` (text) with ``generation_stored`` (``True`` STORED/PERSISTENT,
      ``False`` VIRTUAL, ``None`` not generated).
    * ``enum_values`` / ``set_values``: the labels of an ENUM / SET in definition order.
    * ``array_dimensions``: PostgreSQL array dimensions (0 for scalars).
    * ``identity``: PostgreSQL identity generation (``"ALWAYS"`` / ``"BY DEFAULT"``) or ``None``.

    PostgreSQL only (``None`` for MySQL; named as in PostgreSQL's ``information_schema.columns``):

    * ``udt_schema`` / ``udt_name``: the type's schema and name as the catalog stores it
      (``pg_catalog`` / ``int4``; an array ``_int4``; an enum ``public`` / ``mood``; for a
      domain column, the domain's base type, as ``information_schema`` reports it).
    * ``domain_schema`` / ``domain_name``: the domain of a domain-typed column.
    * ``domain_base_type``: ``format_type()`` of that domain's (innermost non-domain) base type
      with its typmod, e.g. ``character varying(20)``; what a converter decodes a value with.
    * ``interval_type``: the fields of an ``interval`` column (``DAY TO SECOND``, ``YEAR``).

    Identity (every dialect):

    * ``column_id``: the column's identity within its table, a positive integer given where the
      DDL is applied and never reused within the table (as PostgreSQL's ``pg_attribute.attnum``
      and Iceberg's field ids): ``RENAME COLUMN``, ``CHANGE old new``, ``MODIFY`` and a retype
      keep it; ``DROP`` + ``ADD`` make a new one (``Table.next_column_id``).  ``None`` in a
      column that was never part of a built table (a draft, or a history body written before
      identities existed).  Not structural: it is left out of fingerprints.

    Since these fields are ``None`` for every MySQL column, they are left out of
    ``Table.structure()`` when ``None``: fingerprints of MySQL tables are unchanged.
    """

    name: str
    ordinal_position: int
    data_type: str
    column_type: str
    nullable: bool = True
    column_default: str | None = None
    character_maximum_length: int | None = None
    character_octet_length: int | None = None
    numeric_precision: int | None = None
    numeric_scale: int | None = None
    datetime_precision: int | None = None
    character_set_name: str | None = None
    collation_name: str | None = None
    auto_increment: bool = False
    generation_expression: str | None = None
    generation_stored: bool | None = None
    enum_values: tuple[str, ...] | None = None
    set_values: tuple[str, ...] | None = None
    unsigned: bool = False
    zerofill: bool = False
    on_update: str | None = None
    comment: str | None = None
    invisible: bool = False
    srid: int | None = None
    array_dimensions: int = 0
    identity: str | None = None
    udt_schema: str | None = None
    udt_name: str | None = None
    domain_schema: str | None = None
    domain_name: str | None = None
    domain_base_type: str | None = None
    interval_type: str | None = None
    column_id: int | None = None

    #: fields that do not change how a value is stored or read (excluded from fingerprints)
    NON_STRUCTURAL = frozenset({"comment", "column_id"})
    #: fields added after the first release: left out of ``Table.structure()`` when ``None``
    #: (so fingerprints recorded before they existed stay valid)
    LATER_FIELDS = frozenset({"udt_schema", "udt_name", "domain_schema", "domain_name",
                              "domain_base_type", "interval_type"})

    def __post_init__(self) -> None:
        # JSON gives lists; keep the value hashable and immutable.
        if isinstance(self.enum_values, list):
            object.__setattr__(self, "enum_values", tuple(self.enum_values))
        if isinstance(self.set_values, list):
            object.__setattr__(self, "set_values", tuple(self.set_values))

    def replace(self, **changes: Any) -> "Column":
        """A copy with ``changes`` applied (the column editor).  What ``dataclasses.replace``
        does, without calling ``__init__`` with all ~35 fields (this runs for every column of
        every parsed table); an unknown field name raises ``TypeError`` as it does."""
        if type(self) is not Column or not changes.keys() <= _COLUMN_FIELDS:
            return dataclasses.replace(self, **changes)
        new = object.__new__(Column)
        state = new.__dict__
        state.update(self.__dict__)
        state.update(changes)
        new.__post_init__()
        return new

    @property
    def is_generated(self) -> bool:
        return self.generation_expression is not None

    def to_json(self) -> dict[str, Any]:
        if type(self) is Column:  # every field a scalar but the label tuples: no deep copy needed
            state = self.__dict__
            data = {name: state[name] for name in _COLUMN_FIELD_ORDER}
        else:  # a subclass may add fields holding containers
            data = dataclasses.asdict(self)
        for key in ("enum_values", "set_values"):
            if data[key] is not None:
                data[key] = list(data[key])
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Column":
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise ValueError(f"unknown column field(s): {sorted(unknown)}")
        return cls(**dict(data))


# --------------------------------------------------------------------------------------------
# Constraints and indexes
# --------------------------------------------------------------------------------------------


_COLUMN_FIELD_ORDER = tuple(f.name for f in dataclasses.fields(Column))
_COLUMN_FIELDS = frozenset(_COLUMN_FIELD_ORDER)


@dataclass(frozen=True)
class Index:
    """A secondary index or unique key: ``kind`` is ``UNIQUE``, ``INDEX``, ``FULLTEXT`` or
    ``SPATIAL``; ``columns`` the key parts' column names (``None`` for a functional part) and
    ``key_parts`` their source text (``name(10) DESC``, ``(lower(x))``)."""

    name: str | None
    kind: str
    columns: tuple[str | None, ...]
    key_parts: tuple[str, ...] = ()
    comment: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "columns": list(self.columns),
                "key_parts": list(self.key_parts), "comment": self.comment}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Index":
        return cls(d["name"], d["kind"], tuple(d["columns"]), tuple(d.get("key_parts", ())), d.get("comment"))


@dataclass(frozen=True)
class ForeignKey:
    """``FOREIGN KEY (columns) REFERENCES referenced_table (referenced_columns)``."""

    name: str | None
    columns: tuple[str, ...]
    referenced_table: TableId
    referenced_columns: tuple[str, ...]
    on_delete: str | None = None
    on_update: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "columns": list(self.columns),
                "referenced_table": self.referenced_table.to_json(),
                "referenced_columns": list(self.referenced_columns),
                "on_delete": self.on_delete, "on_update": self.on_update}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "ForeignKey":
        return cls(d["name"], tuple(d["columns"]), TableId.from_json(d["referenced_table"]),
                   tuple(d["referenced_columns"]), d.get("on_delete"), d.get("on_update"))


@dataclass(frozen=True)
class CheckConstraint:
    """``[CONSTRAINT name] CHECK (expression)``; ``expression`` is source text."""

    name: str | None
    expression: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "expression": self.expression}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "CheckConstraint":
        return cls(d["name"], d["expression"])


# --------------------------------------------------------------------------------------------
# Table
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Table:
    """One table version: ``id``, ordered ``columns``, ``primary_key`` (column names in key
    order), the default charset/collation, ``comment``, ``options`` (ordered ``(name, value)``
    pairs such as ``("ENGINE", "InnoDB")``; names upper case), indexes, foreign keys, checks.

    Immutable; change it with ``edit()`` → ``TableEditor`` → ``build()``."""

    id: TableId
    columns: tuple[Column, ...] = ()
    primary_key: tuple[str, ...] = ()
    default_character_set_name: str | None = None
    default_collation_name: str | None = None
    comment: str | None = None
    options: tuple[tuple[str, str], ...] = ()
    indexes: tuple[Index, ...] = ()
    foreign_keys: tuple[ForeignKey, ...] = ()
    checks: tuple[CheckConstraint, ...] = ()
    #: PostgreSQL only (``None`` for MySQL): ``pg_class.relreplident`` as ``default`` /
    #: ``full`` / ``nothing`` / ``index`` (ALTER TABLE ... REPLICA IDENTITY): which columns
    #: an update's or delete's before image carries.  Written to JSON only when set.
    replica_identity: str | None = None
    #: the ``Column.column_id`` the next new column of this table gets (ids are never reused
    #: within a table); ``None`` for a table none of whose columns has an id.  Written to JSON
    #: only when set.
    next_column_id: int | None = None
    #: the name of the dialect whose parser made this table (``None``: made otherwise, e.g.
    #: read from JSON).  Not part of the table's value: not compared, not in ``to_json`` or the
    #: fingerprint; ``ddlcore.spark.struct_type(table)`` and ``RowConverter(table)`` use it
    #: when no dialect is named.
    dialect: str | None = field(default=None, compare=False, repr=False)

    # -- reading -------------------------------------------------------------------------

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def column(self, name: str, key: Callable[[str], str] = casefold_key) -> Column | None:
        """The column called ``name`` compared with ``key`` (default: case-insensitive, as
        MySQL compares column names), or ``None``."""
        k = key(name)
        for col in self.columns:
            if key(col.name) == k:
                return col
        return None

    def option(self, name: str) -> str | None:
        up = name.upper()
        for k, v in self.options:
            if k == up:
                return v
        return None

    def edit(self, column_key: Callable[[str], str] = casefold_key) -> "TableEditor":
        return TableEditor(self, column_key)

    # -- JSON ----------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The table as a JSON-ready dict (the ``ddlcore parse --format json`` table shape,
        plus ``options``, ``indexes``, ``foreign_keys``, ``checks``)."""
        return {
            "database": self.id.database,
            "schema": self.id.schema,
            "name": self.id.name,
            "columns": [c.to_json() for c in self.columns],
            "primary_key": list(self.primary_key),
            "default_character_set_name": self.default_character_set_name,
            "default_collation_name": self.default_collation_name,
            "comment": self.comment,
            "options": [list(kv) for kv in self.options],
            "indexes": [i.to_json() for i in self.indexes],
            "foreign_keys": [f.to_json() for f in self.foreign_keys],
            "checks": [c.to_json() for c in self.checks],
            **({"replica_identity": self.replica_identity} if self.replica_identity is not None else {}),
            **({"next_column_id": self.next_column_id} if self.next_column_id is not None else {}),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Table":
        """Inverse of ``to_json``: ``Table.from_json(t.to_json()) == t``."""
        return cls(
            id=TableId(d.get("database"), d.get("schema"), d["name"]),
            columns=tuple(Column.from_json(c) for c in d.get("columns", ())),
            primary_key=tuple(d.get("primary_key", ())),
            default_character_set_name=d.get("default_character_set_name"),
            default_collation_name=d.get("default_collation_name"),
            comment=d.get("comment"),
            options=tuple((k, v) for k, v in d.get("options", ())),
            indexes=tuple(Index.from_json(i) for i in d.get("indexes", ())),
            foreign_keys=tuple(ForeignKey.from_json(f) for f in d.get("foreign_keys", ())),
            checks=tuple(CheckConstraint.from_json(c) for c in d.get("checks", ())),
            replica_identity=d.get("replica_identity"),
            next_column_id=d.get("next_column_id"),
        )

    # -- column identity -----------------------------------------------------------------

    def column_by_id(self, column_id: int) -> Column | None:
        """The column whose ``column_id`` is ``column_id``, or ``None``."""
        for col in self.columns:
            if col.column_id == column_id:
                return col
        return None

    def identified(self) -> "Table":
        """This table with a ``column_id`` on every column (``self`` when all have one).

        A column without an id gets, in column order: its ``ordinal_position`` when the table
        keeps PostgreSQL attribute numbers (option ``ATTNUM``: the position *is* ``attnum``,
        the server's own column identity), else the next unused id (``next_column_id``, or one
        past the largest id present).  ``next_column_id`` ends one past the largest id (and,
        with ``ATTNUM``, past the last attribute number given out)."""
        return _assign_ids(self, self.columns)

    def with_ids_from(self, previous: "Table | None", key: Callable[[str], str] = casefold_key) -> "Table":
        """This table (a new description of a table that existed as ``previous``: a snapshot,
        a resync, a catalog description: none of them knows this model's identities, so ids
        ``self`` carries are replaced) with the ids of ``previous``'s columns of the same name
        (compared with ``key``); other columns get new ids from ``previous.next_column_id``.  Tables with
        option ``ATTNUM`` keep ``attnum`` identities (``identified``)."""
        if previous is None or self.option(TableEditor.ATTNUM_OPTION) is not None:
            return self.identified()
        previous = previous.identified()
        old = {key(c.name): c.column_id for c in previous.columns}
        cols = tuple(c.replace(column_id=old.get(key(c.name))) for c in self.columns)
        return _assign_ids(dataclasses.replace(self, next_column_id=previous.next_column_id), cols)

    def to_json_text(self) -> str:
        """Canonical JSON text (sorted keys, no spaces): byte-stable for equal tables."""
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    def structure(self) -> dict[str, Any]:
        """The structurally significant fields: columns (without comments) and primary key.

        Engine, comments, options, secondary indexes and the table's name are not structural:
        they do not change how a row is stored in a change log."""
        return {
            "columns": [
                {k: v for k, v in c.to_json().items()
                 if k not in Column.NON_STRUCTURAL and not (v is None and k in Column.LATER_FIELDS)}
                for c in self.columns
            ],
            "primary_key": list(self.primary_key),
        }

    def fingerprint(self) -> str:
        """SHA-256 (hex) of the canonical JSON of ``structure()``: equal schemas, equal
        fingerprints (a renamed table keeps its fingerprint)."""
        text = json.dumps(self.structure(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


class TableEditor:
    """Mutable builder over a ``Table`` (Debezium's ``TableEditor``): every method edits the
    draft and returns ``self``; ``build()`` returns a new immutable ``Table`` with ordinal
    positions renumbered 1..n.  Raises ``ModelError`` for an edit that cannot apply."""

    def __init__(self, table: Table, column_key: Callable[[str], str] = casefold_key):
        self.key = column_key
        self.id = table.id
        self.dialect = table.dialect
        self.columns: list[Column] = list(table.columns)
        self.primary_key: list[str] = list(table.primary_key)
        self.default_character_set_name = table.default_character_set_name
        self.default_collation_name = table.default_collation_name
        self.comment = table.comment
        self.options: dict[str, str] = dict(table.options)
        self.indexes: list[Index] = list(table.indexes)
        self.foreign_keys: list[ForeignKey] = list(table.foreign_keys)
        self.checks: list[CheckConstraint] = list(table.checks)
        self.replica_identity = table.replica_identity
        self.next_column_id = table.next_column_id

    #: a table option holding the last attribute number given out (PostgreSQL ``attnum``):
    #: when a table has it, ``build()`` keeps every column's ``ordinal_position`` (a dropped
    #: column leaves a gap, as in ``pg_attribute``) and numbers a new column (position 0) with
    #: the next number
    ATTNUM_OPTION = "ATTNUM"

    # -- columns -------------------------------------------------------------------------

    def index_of(self, name: str) -> int | None:
        k = self.key(name)
        for i, col in enumerate(self.columns):
            if self.key(col.name) == k:
                return i
        return None

    def has_column(self, name: str) -> bool:
        return self.index_of(name) is not None

    def column(self, name: str) -> Column:
        i = self.index_of(name)
        if i is None:
            raise ModelError(f"table {self.id}: no column {name!r}")
        return self.columns[i]

    def _insert(self, column: Column, first: bool, after: str | None) -> None:
        if first:
            self.columns.insert(0, column)
        elif after is not None:
            j = self.index_of(after)
            if j is None:
                raise ModelError(f"table {self.id}: AFTER names unknown column {after!r}")
            self.columns.insert(j + 1, column)
        else:
            self.columns.append(column)

    def add_column(self, column: Column, *, first: bool = False, after: str | None = None) -> "TableEditor":
        """Add a new column: it gets a new ``column_id`` at ``build()`` (an id ``column``
        carries, e.g. copied from another table by ``CREATE TABLE ... SELECT``, is dropped)."""
        if self.has_column(column.name):
            raise ModelError(f"table {self.id}: duplicate column {column.name!r}")
        if column.column_id is not None:
            column = column.replace(column_id=None)
        self._insert(column, first, after)
        return self

    def replace_column(self, name: str, column: Column, *, first: bool = False,
                       after: str | None = None) -> "TableEditor":
        """MODIFY / CHANGE: replace column ``name`` by ``column`` (possibly renamed), in place
        or moved (``first`` / ``after``); key references follow a rename.  The column keeps
        its identity: ``column`` takes the old column's ``column_id``."""
        i = self.index_of(name)
        if i is None:
            raise ModelError(f"table {self.id}: no column {name!r}")
        old = self.columns[i]
        if column.column_id != old.column_id:
            column = column.replace(column_id=old.column_id)
        if self.key(column.name) != self.key(old.name) and self.has_column(column.name):
            raise ModelError(f"table {self.id}: duplicate column {column.name!r}")
        if first or after is not None:
            del self.columns[i]
            self._insert(column, first, after)
        else:
            self.columns[i] = column
        if column.name != old.name:
            self._rename_references(old.name, column.name)
        return self

    def update_column(self, name: str, **changes: Any) -> "TableEditor":
        i = self.index_of(name)
        if i is None:
            raise ModelError(f"table {self.id}: no column {name!r}")
        self.columns[i] = self.columns[i].replace(**changes)
        return self

    def rename_column(self, old: str, new: str) -> "TableEditor":
        col = self.column(old)
        return self.replace_column(old, col.replace(name=new))

    def drop_column(self, name: str, *, whole_keys: bool = False) -> "TableEditor":
        """Drop a column.  As MySQL does (default), it also leaves every key that named it (a
        key left with no parts is dropped); with ``whole_keys`` (PostgreSQL: ALTER TABLE ...
        DROP COLUMN drops the indexes and constraints that use the column) a key that named it
        is dropped whole, the primary key included."""
        i = self.index_of(name)
        if i is None:
            raise ModelError(f"table {self.id}: no column {name!r}")
        del self.columns[i]
        k = self.key(name)
        if whole_keys:
            if any(self.key(c) == k for c in self.primary_key):
                self.primary_key = []
            self.indexes = [ix for ix in self.indexes
                            if not any(c is not None and self.key(c) == k for c in ix.columns)]
            self.foreign_keys = [fk for fk in self.foreign_keys if not any(self.key(c) == k for c in fk.columns)]
            return self
        self.primary_key = [c for c in self.primary_key if self.key(c) != k]
        kept = []
        for ix in self.indexes:
            parts = [(c, p) for c, p in zip(ix.columns, ix.key_parts or ix.columns) if c is None or self.key(c) != k]
            if parts:
                kept.append(dataclasses.replace(ix, columns=tuple(c for c, _ in parts),
                                                key_parts=tuple(p for _, p in parts) if ix.key_parts else ()))
        self.indexes = kept
        return self

    def _rename_references(self, old: str, new: str) -> None:
        k = self.key(old)
        self.primary_key = [new if self.key(c) == k else c for c in self.primary_key]
        self.indexes = [
            dataclasses.replace(ix, columns=tuple(new if c is not None and self.key(c) == k else c
                                                  for c in ix.columns))
            for ix in self.indexes
        ]
        self.foreign_keys = [
            dataclasses.replace(fk, columns=tuple(new if self.key(c) == k else c for c in fk.columns))
            for fk in self.foreign_keys
        ]

    # -- keys and constraints --------------------------------------------------------------

    def set_primary_key(self, names: Iterable[str]) -> "TableEditor":
        """Set the primary key (names in key order); each named column becomes NOT NULL as in
        MySQL and PostgreSQL."""
        names = list(names)
        for n in names:
            i = self.index_of(n)
            if i is None:
                raise ModelError(f"table {self.id}: primary key names unknown column {n!r}")
            self.columns[i] = self.columns[i].replace(nullable=False)
        self.primary_key = [self.columns[self.index_of(n)].name for n in names]  # type: ignore[index]
        return self

    def drop_primary_key(self) -> "TableEditor":
        self.primary_key = []
        return self

    def add_index(self, index: Index) -> "TableEditor":
        self.indexes.append(index)
        return self

    def drop_index(self, name: str) -> bool:
        """Drop the index (or unique key) called ``name`` (case-insensitive); ``False`` if none."""
        before = len(self.indexes)
        self.indexes = [ix for ix in self.indexes if (ix.name or "").lower() != name.lower()]
        return len(self.indexes) != before

    def rename_index(self, old: str, new: str) -> bool:
        for i, ix in enumerate(self.indexes):
            if (ix.name or "").lower() == old.lower():
                self.indexes[i] = dataclasses.replace(ix, name=new)
                return True
        return False

    def add_foreign_key(self, fk: ForeignKey) -> "TableEditor":
        self.foreign_keys.append(fk)
        return self

    def drop_foreign_key(self, name: str) -> bool:
        before = len(self.foreign_keys)
        self.foreign_keys = [f for f in self.foreign_keys if (f.name or "").lower() != name.lower()]
        return len(self.foreign_keys) != before

    def add_check(self, check: CheckConstraint) -> "TableEditor":
        self.checks.append(check)
        return self

    def drop_check(self, name: str) -> bool:
        before = len(self.checks)
        self.checks = [c for c in self.checks if (c.name or "").lower() != name.lower()]
        return len(self.checks) != before

    # -- table-level -----------------------------------------------------------------------

    def set_option(self, name: str, value: str | None) -> "TableEditor":
        if value is None:
            self.options.pop(name.upper(), None)
        else:
            self.options[name.upper()] = value
        return self

    def rename(self, new_id: TableId) -> "TableEditor":
        self.id = new_id
        return self

    def build(self) -> Table:
        """The edited table; every column has a ``column_id`` (``Table.identified``)."""
        return self._build().identified()

    def _build(self) -> Table:
        attnum = self.options.get(self.ATTNUM_OPTION)
        if attnum is not None:
            last = int(attnum)
            cols = []
            for c in self.columns:
                if c.ordinal_position <= 0:
                    last += 1
                    c = c.replace(ordinal_position=last)
                cols.append(c)
            self.options[self.ATTNUM_OPTION] = str(max([last] + [c.ordinal_position for c in cols]))
            columns = tuple(cols)
        else:
            columns = tuple(
                c if c.ordinal_position == i else c.replace(ordinal_position=i)
                for i, c in enumerate(self.columns, start=1)
            )
        return Table(
            id=self.id,
            columns=columns,
            primary_key=tuple(self.primary_key),
            default_character_set_name=self.default_character_set_name,
            default_collation_name=self.default_collation_name,
            comment=self.comment,
            options=tuple(self.options.items()),
            indexes=tuple(self.indexes),
            foreign_keys=tuple(self.foreign_keys),
            checks=tuple(self.checks),
            replica_identity=self.replica_identity,
            next_column_id=self.next_column_id,
            dialect=self.dialect,
        )


def _assign_ids(table: Table, columns: tuple[Column, ...]) -> Table:
    """``table`` with ``columns`` whose missing ids are given (``Table.identified``)."""
    attnum = table.option(TableEditor.ATTNUM_OPTION)
    ids = [c.column_id for c in columns if c.column_id is not None]
    nxt = max([table.next_column_id or 1] + [i + 1 for i in ids])
    if attnum is not None:
        nxt = max([nxt, int(attnum) + 1] + [c.ordinal_position + 1 for c in columns])
    if len(ids) == len(columns) and columns is table.columns and table.next_column_id == nxt:
        return table
    out = []
    for c in columns:
        if c.column_id is None:
            if attnum is not None:
                c = c.replace(column_id=c.ordinal_position)
            else:
                c = c.replace(column_id=nxt)
                nxt += 1
        out.append(c)
    return dataclasses.replace(table, columns=tuple(out), next_column_id=nxt)


# --------------------------------------------------------------------------------------------
# Databases, views, the registry
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Database:
    """A database (MySQL schema): ``information_schema.SCHEMATA`` defaults."""

    name: str
    default_character_set_name: str | None = None
    default_collation_name: str | None = None
    comment: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Database":
        return cls(**dict(d))


@dataclass(frozen=True)
class View:
    """A view: its id, the column names its statement lists (if any) and its defining query
    as source text.  Views hold no rows in a change log, so the model keeps no column types."""

    id: TableId
    definition: str
    column_names: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        return {**self.id.to_json(), "definition": self.definition,
                "column_names": None if self.column_names is None else list(self.column_names)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "View":
        cols = d.get("column_names")
        return cls(TableId(d.get("database"), d.get("schema"), d["name"]), d["definition"],
                   None if cols is None else tuple(cols))


@dataclass(frozen=True)
class TableChange:
    """What one statement did to one table.

    ``kind``: ``"create"``, ``"alter"``, ``"rename"``, ``"drop"`` or ``"truncate"``;
    ``table_id``: the table after the change (for a drop: the dropped table);
    ``previous_id``: the old id of a renamed table; ``before`` / ``after``: the table before and
    after (``None`` where it did not exist)."""

    kind: str
    table_id: TableId
    before: Table | None = None
    after: Table | None = None
    previous_id: TableId | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "table_id": self.table_id.to_json(),
            "previous_id": None if self.previous_id is None else self.previous_id.to_json(),
            "before": None if self.before is None else self.before.to_json(),
            "after": None if self.after is None else self.after.to_json(),
        }


def _identity(tid: TableId) -> TableId:
    return tid


def lower_table_key(tid: TableId) -> TableId:
    """Table key for MySQL ``lower_case_table_names`` = 1 or 2 (names compare in lower case)."""
    return TableId(None if tid.database is None else tid.database.lower(),
                   None if tid.schema is None else tid.schema.lower(), tid.name.lower())


class Tables:
    """The registry of tables (mutable, like Debezium's ``Tables``): tables by id, database
    defaults, views, and the session state a DDL stream carries (``current_database`` set by
    ``USE``; ``search_path`` for PostgreSQL; ``session`` charset variables).

    ``table_key`` maps a ``TableId`` to its lookup key (identity by default: table names are
    case-sensitive as with MySQL's ``lower_case_table_names=0`` on Linux and PostgreSQL)."""

    def __init__(self, table_key: Callable[[TableId], TableId] = _identity):
        self.table_key = table_key
        self._tables: dict[TableId, Table] = {}
        self.databases: dict[str, Database] = {}
        self.views: dict[TableId, View] = {}
        self.current_database: str | None = None
        self.search_path: tuple[str, ...] = ()
        self.session: dict[str, str] = {}
        #: user-defined types and sequences a dialect keeps (PostgreSQL: enums, domains,
        #: composite types, sequences), by the dialect's key (``"schema.name"``) → a JSON-ready
        #: description; persisted with the session state
        self.types: dict[str, Any] = {}

    @staticmethod
    def _as_id(table_id: TableId | str) -> TableId:
        return TableId.parse(table_id) if isinstance(table_id, str) else table_id

    def get(self, table_id: TableId | str) -> Table | None:
        """The table ``table_id`` (a ``TableId`` or ``"db.table"``), or ``None``."""
        return self._tables.get(self.table_key(self._as_id(table_id)))

    def __contains__(self, table_id: object) -> bool:
        if not isinstance(table_id, (TableId, str)):
            return False
        return self.get(table_id) is not None

    def put(self, table: Table) -> Table | None:
        """Store ``table`` under its id; returns the table it replaced (or ``None``)."""
        key = self.table_key(table.id)
        old = self._tables.get(key)
        self._tables[key] = table
        return old

    def remove(self, table_id: TableId | str) -> Table | None:
        return self._tables.pop(self.table_key(self._as_id(table_id)), None)

    def __iter__(self) -> Iterator[Table]:
        return iter(sorted(self._tables.values(), key=lambda t: _sort_key(t.id)))

    def __len__(self) -> int:
        return len(self._tables)

    def table_ids(self) -> list[TableId]:
        return [t.id for t in self]

    def tables_in(self, database: str) -> list[Table]:
        return [t for t in self if t.id.database == database]

    def copy(self) -> "Tables":
        new = Tables(self.table_key)
        new._tables = dict(self._tables)
        new.databases = dict(self.databases)
        new.views = dict(self.views)
        new.current_database = self.current_database
        new.search_path = self.search_path
        new.session = dict(self.session)
        new.types = dict(self.types)
        return new

    def to_json(self) -> dict[str, Any]:
        """``{"tables": [...], "databases": [...], "views": [...], "current_database": ...}``;
        ``tables`` in (database, schema, name) order."""
        return {
            "tables": [t.to_json() for t in self],
            "databases": [d.to_json() for _, d in sorted(self.databases.items())],
            "views": [v.to_json() for v in sorted(self.views.values(), key=lambda v: _sort_key(v.id))],
            "current_database": self.current_database,
            "search_path": list(self.search_path),
            "session": dict(sorted(self.session.items())),
            **({"types": dict(sorted(self.types.items()))} if self.types else {}),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any], table_key: Callable[[TableId], TableId] = _identity) -> "Tables":
        new = cls(table_key)
        for t in d.get("tables", ()):
            new.put(Table.from_json(t))
        for db in d.get("databases", ()):
            new.databases[db["name"]] = Database.from_json(db)
        for v in d.get("views", ()):
            view = View.from_json(v)
            new.views[table_key(view.id)] = view
        new.current_database = d.get("current_database")
        new.search_path = tuple(d.get("search_path", ()))
        new.session = dict(d.get("session", {}))
        new.types = dict(d.get("types", {}))
        return new


def _sort_key(tid: TableId) -> tuple[str, str, str]:
    return (tid.database or "", tid.schema or "", tid.name)
