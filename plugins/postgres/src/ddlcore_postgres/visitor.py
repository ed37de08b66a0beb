"""``PostgresDdlVisitor``: PostgreSQL 15 parse trees → the shared table model.

One ``visit*`` method per grammar rule that changes the model (rule names follow the manual's
synopses; see grammars/postgres/PostgresParser.g4).  The model follows what PostgreSQL's own
catalog says of a table (``information_schema.columns``, ``pg_attribute``, ``format_type``,
``pg_get_expr``; ``ddlcore_postgres.catalog`` reads the same fields from a live server):

* ``ordinal_position`` is ``attnum``: a dropped column leaves a gap; the table option
  ``ATTNUM`` holds the last number given out (``TableEditor.ATTNUM_OPTION``).
* user-defined types (enums, domains, composite types) and sequences are kept in
  ``Tables.types`` under ``"schema.name"``; a column of an enum carries its labels, a column of
  a domain the domain and its base type.
* names: unquoted fold to lower case, quoted are exact (manual 4.1.1); ``[database.]schema.
  table`` resolve through ``search_path`` (manual 5.9.3).
* temporary tables live in the session's ``pg_temp`` schema and hold no rows in a change log:
  they are not kept (a warning says so).

Customise by subclassing and overriding one narrow method (``column_from_def``,
``type_fields``, ``render_default``, ``index_name`` ...).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable, Iterable

from ddlcore import DdlVisitor
from ddlcore.model import (CheckConstraint, Column, ForeignKey, Index, Table, TableEditor, TableId, Tables,
                           View)

from . import defaults as _defaults
from .inheritance import InheritanceConflict, merge_local_column, merge_parent_column
from . import types as _types
from ._generated.PostgresParser import PostgresParser as P
from ._generated.PostgresParserVisitor import PostgresParserVisitor

__all__ = ["PostgresDdlVisitor", "make_object_name", "NAMEDATALEN"]

#: identifiers are truncated to NAMEDATALEN - 1 = 63 bytes (manual 4.1.1)
NAMEDATALEN = 64
ATTNUM = TableEditor.ATTNUM_OPTION


def _truncate(name: str, limit: int = NAMEDATALEN - 1) -> str:
    data = name.encode("utf-8")
    if len(data) <= limit:
        return name
    return data[:limit].decode("utf-8", errors="ignore")


def make_object_name(name1: str, name2: str | None, label: str | None) -> str:
    """A generated name as PostgreSQL's ``makeObjectName`` makes it: ``name1_name2_label``
    within 63 bytes, shortening the longer of ``name1`` / ``name2`` first."""
    n1, n2 = name1.encode(), (name2 or "").encode()
    overhead = (len(label.encode()) + 1 if label else 0) + (1 if name2 else 0)
    avail = NAMEDATALEN - 1 - overhead
    while len(n1) + len(n2) > avail:
        if len(n1) > len(n2):
            n1 = n1[:-1]
        else:
            n2 = n2[:-1]
    parts = [n1.decode(errors="ignore")]
    if name2:
        parts.append(n2.decode(errors="ignore"))
    if label:
        parts.append(label)
    return "_".join(parts)


@dataclasses.dataclass
class ColumnDraft:
    """A column definition read from the tree, before it is placed in a table."""

    name: str
    fields: dict[str, Any]
    nullable: bool = True
    not_null: bool = False
    default: str | None = None
    identity: str | None = None
    generation: str | None = None
    collation: str | None = None
    primary_key: bool = False
    unique: list[str | None] = dataclasses.field(default_factory=list)
    checks: list[CheckConstraint] = dataclasses.field(default_factory=list)
    references: list[tuple[str | None, TableId, tuple[str, ...]]] = dataclasses.field(default_factory=list)
    serial: str | None = None
    pk_name: str | None = None


class PostgresDdlVisitor(DdlVisitor, PostgresParserVisitor):
    """Maps PostgreSQL 15 DDL onto ``ddlcore.model`` (see the module docstring)."""

    # ------------------------------------------------------------------ names (4.1.1)

    def ident(self, ctx: Any) -> str:
        """The name a ``colId`` / ``name`` / ``colLabel`` / ``typeFunctionName`` node denotes:
        quoted names exact, unquoted folded to lower case (and truncated to 63 bytes)."""
        text = ctx.getText()
        if text.startswith('"'):
            return _truncate(text[1:-1].replace('""', '"'))
        if text[:3].upper() == 'U&"':
            return _truncate(_unicode_escapes(text[3:-1].replace('""', '"')))
        return _truncate(text.lower())

    def name_parts(self, ctx: Any) -> list[str]:
        """``qualifiedName`` / ``anyName`` / ``qualifiedTypeName`` → its parts."""
        return [self.ident(c) for c in ctx.getChildren() if not (hasattr(c, "symbol") and c.symbol.type == P.DOT)]

    @property
    def search_path(self) -> list[str]:
        return [s for s in self.tables.search_path if s not in ("$user", "pg_temp")]

    def database(self) -> str | None:
        return self.tables.current_database if self.tables.current_database is not None else self.options.get("database")

    #: the schema of the CREATE SCHEMA statement whose elements are being applied
    _creation_schema: str | None = None

    def creation_schema(self) -> str:
        """The schema an unqualified CREATE puts its object in: the first schema of the
        search path (manual 5.9.3), or the schema a CREATE SCHEMA element belongs to."""
        if self._creation_schema is not None:
            return self._creation_schema
        path = self.search_path
        return path[0] if path else "public"

    def table_id(self, ctx: Any, *, create: bool = False) -> TableId:
        """A ``qualifiedName`` as a ``TableId``; an unqualified name resolves through the
        search path (an existing table or view first; else the first schema)."""
        parts = self.name_parts(ctx)
        db = self.database()
        if len(parts) >= 3:
            return TableId(parts[-3], parts[-2], parts[-1])
        if len(parts) == 2:
            return TableId(db, parts[0], parts[1])
        if not create:
            if self._creation_schema is not None and self.get_table(TableId(db, self._creation_schema, parts[0])):
                return TableId(db, self._creation_schema, parts[0])
            for schema in self.search_path:
                tid = TableId(db, schema, parts[0])
                if self.get_table(tid) is not None or self.get_view(tid) is not None:
                    return tid
        return TableId(db, self.creation_schema(), parts[0])

    def type_key(self, parts: list[str], *, create: bool = False) -> str | None:
        """``schema.name`` of a user-defined type or sequence: explicit, or the first schema of
        the search path that has it (``create``: the creation schema)."""
        if len(parts) >= 2:
            return f"{parts[-2]}.{parts[-1]}"
        if create:
            return f"{self.creation_schema()}.{parts[0]}"
        for schema in self.lookup_path:
            key = f"{schema}.{parts[0]}"
            if key in self.tables.types:
                return key
        return None

    @property
    def lookup_path(self) -> list[str]:
        """The schemas names resolve through: ``pg_catalog`` first unless the search path lists
        it somewhere (manual 5.9.5, "pg_catalog is always effectively part of the search path")."""
        path = self.search_path
        return path if "pg_catalog" in path else ["pg_catalog", *path]

    def visible_name(self, schema: str, name: str, *, is_type: bool = True) -> str:
        """A type or sequence name as ``format_type`` / ``regclass`` print it: unqualified when
        the unqualified name finds it (its schema on the search path and, for a type, no
        built-in or user type of that name in a schema searched before), else ``schema.name``
        (quoted where needed)."""
        path = self.lookup_path
        if schema in path and not (is_type and any(self.has_type(s, name) for s in path[:path.index(schema)])):
            return _quote_if_needed(name)
        return f"{_quote_if_needed(schema)}.{_quote_if_needed(name)}"

    def nextval_text(self, schema: str, name: str) -> str:
        """``nextval('seq'::regclass)`` as ``pg_get_expr`` prints a call on sequence
        ``schema.name`` (``regclass`` output: unqualified when the search path finds it)."""
        return "nextval('" + self.visible_name(schema, name, is_type=False).replace("'", "''") + "'::regclass)"

    def has_type(self, schema: str, name: str) -> bool:
        """Whether ``schema`` holds a type called ``name`` (a built-in one in ``pg_catalog``)."""
        if schema == "pg_catalog" and name in _types.BUILTIN:
            return True
        info = self.tables.types.get(f"{schema}.{name}")
        return info is not None and info.get("kind") != "sequence"

    def builtin_first(self, key: str) -> bool:
        """Whether an unqualified name finds the built-in type before user type ``key``."""
        schema, path = key.partition(".")[0], self.lookup_path
        return schema not in path or path.index("pg_catalog") <= path.index(schema)

    # ------------------------------------------------------------------ statements

    def visitDdlStatement(self, ctx: P.DdlStatementContext):
        return self.visit(ctx.statement())

    def visitStatement(self, ctx: P.StatementContext):
        return self.visitChildren(ctx)

    # -- CREATE TABLE --------------------------------------------------------------------

    def visitCreateStmt(self, ctx: P.CreateStmtContext):
        self._inherited = {}  # no merging but of this statement's own INHERITS (CREATE SCHEMA has several)
        tid = self.table_id(ctx.qualifiedName(0), create=True)
        if isinstance(ctx.persistence(), P.TempPersistenceContext) or _is_temp_schema(tid.schema):
            self.warn_temporary(tid)
            return None
        if ctx.ifNotExists() is not None and self.get_table(tid) is not None:
            self.warn(f"table {tid} exists; CREATE TABLE IF NOT EXISTS changed nothing")
            return None
        editor = Table(tid, options=((ATTNUM, "0"),), replica_identity="default").edit(self.column_key)
        if isinstance(ctx.persistence(), P.UnloggedPersistenceContext):
            editor.set_option("UNLOGGED", "YES")
        if ctx.PARTITION() is not None and ctx.OF() is not None:
            parent_id = self.table_id(ctx.qualifiedName(1))
            parent = self.require_table(parent_id, ctx.qualifiedName(1))
            for col in parent.columns:
                self.append_column(editor, copied_column(col).replace(ordinal_position=0, identity=None,
                                                       column_default=None if col.identity else col.column_default))
            editor.set_option("PARTITION OF", str(parent.id))
            if ctx.typedTableElementList() is not None:
                self.apply_typed_elements(editor, ctx.typedTableElementList())
            self.inherit_keys(editor, parent)
        elif ctx.OF() is not None:
            self.apply_typed_table(editor, ctx)
        else:
            if ctx.inheritsClause() is not None:
                parents = [self.table_id(q) for q in ctx.inheritsClause().qualifiedName()]
                self.inherit_columns(editor, [self.require_table(p, ctx.inheritsClause()) for p in parents])
                editor.set_option("INHERITS", ",".join(str(p) for p in parents))
            if ctx.tableElementList() is not None:
                # columns (and LIKE) in order first: a table constraint may name a column
                # defined after it
                elements = ctx.tableElementList().tableElement()
                for el in elements:
                    if el.tableConstraint() is None:
                        self.apply_table_element(editor, el)
                for el in elements:
                    if el.tableConstraint() is not None:
                        self.apply_table_element(editor, el)
            clash = next((n for n, c in self._inherited.items() if c), None)
            if clash is not None:
                raise self.error(ctx.inheritsClause(), f"column \"{clash}\" inherits conflicting default values")
        if ctx.partitionSpec() is not None:
            editor.set_option("PARTITION BY", self.partition_key(ctx.partitionSpec()))
        self.merge_redundant_keys(editor)
        self.create_table(editor.build())
        return None

    def inherit_columns(self, editor: TableEditor, parents: list[Table]) -> None:
        """``INHERITS (p, ...)``: the parents' columns in order, one column per name (no
        identity); ``_inherited`` records each name and whether its parents' defaults conflict,
        for the table's own column definitions to merge with (``ddlcore_postgres.inheritance``)."""
        self._inherited = {}
        for parent in parents:
            for col in parent.columns:
                c = copied_column(col).replace(ordinal_position=0, identity=None)
                if col.name not in self._inherited:
                    self.append_column(editor, c)
                    self._inherited[col.name] = False
                    continue
                merged, clash = self.merged(merge_parent_column, editor.column(col.name), c)
                editor.replace_column(col.name, merged)
                self._inherited[col.name] |= clash

    def place_local_column(self, editor: TableEditor, col: Column) -> None:
        """A column the table defines itself (a column definition or one copied by ``LIKE``):
        merged with the inherited column of its name (CREATE TABLE ... INHERITS), else added."""
        if self._inherited.get(col.name) is None:
            self.append_column(editor, col)
            return
        if self._inherited[col.name] and col.column_default is None and col.generation_expression is None:
            raise self.error(None, f"column \"{col.name}\" inherits conflicting default values")
        editor.replace_column(col.name, self.merged(merge_local_column, editor.column(col.name), col))
        self._inherited[col.name] = None

    def merged(self, merge: Callable[..., Any], *cols: Column) -> Any:
        try:
            return merge(*cols)
        except InheritanceConflict as exc:
            raise self.error(None, str(exc)) from None

    def warn_temporary(self, tid: TableId) -> None:
        """A temporary table (``TEMP``, or created in ``pg_temp``) is not kept: it lives in the
        session's own schema and logical decoding never sends its rows."""
        self.warn(f"temporary table {tid.name} is not kept in the model (it lives in the session's pg_temp schema)")

    def merge_redundant_keys(self, editor: TableEditor) -> None:
        """PostgreSQL keeps one index per distinct key among a ``CREATE TABLE``'s PRIMARY KEY
        and UNIQUE constraints (``UNIQUE PRIMARY KEY``, a column ``UNIQUE`` and a table
        ``PRIMARY KEY`` on the same column): the primary key wins, then the first UNIQUE; a
        dropped constraint's explicit name goes to a kept one whose name was chosen by the
        server.  Source: ``transformIndexConstraints`` (src/backend/parser/parse_utilcmd.c),
        whose comment calls this deliberate; manual CREATE TABLE, "Adding a unique constraint
        will automatically create a unique btree index"."""
        keys = [ix for ix in editor.indexes if ix.kind in ("PRIMARY KEY", "UNIQUE") and not ix.key_parts]
        kept: list[Index] = [ix for ix in keys if ix.kind == "PRIMARY KEY"]
        renamed: dict[int, str] = {}
        dropped: list[Index] = []
        for ix in keys:
            if ix.kind == "PRIMARY KEY":
                continue
            prior = next((k for k in kept if k.columns == ix.columns), None)
            if prior is None:
                kept.append(ix)
                continue
            dropped.append(ix)
            if prior.name in self._chosen_names and ix.name not in self._chosen_names:
                renamed[id(prior)] = ix.name
        if not dropped:
            return
        out = []
        for ix in editor.indexes:
            if any(ix is d for d in dropped):
                if ix.name in self._chosen_names:
                    self._new_relations.discard((editor.id.schema, ix.name))
                continue
            out.append(dataclasses.replace(ix, name=renamed[id(ix)]) if id(ix) in renamed else ix)
        editor.indexes[:] = out

    # -- CREATE TABLE AS (manual: CREATE TABLE AS) ------------------------------------------

    def visitCreateTableAsStmt(self, ctx: P.CreateTableAsStmtContext):
        """``CREATE TABLE name [(col, ...)] AS query``: the columns are derived where the query
        is ``TABLE src`` or ``SELECT`` of plain columns / ``*`` from one known table
        (``ctas_columns``); their types and collations come from the source, not their NOT
        NULL, defaults, identity or generation (the server copies none of them).  Any other
        query gives a warning and no table."""
        tid = self.table_id(ctx.qualifiedName(), create=True)
        if isinstance(ctx.persistence(), P.TempPersistenceContext) or _is_temp_schema(tid.schema):
            self.warn_temporary(tid)
            return None
        if ctx.ifNotExists() is not None and self.get_table(tid) is not None:
            self.warn(f"table {tid} exists; CREATE TABLE IF NOT EXISTS changed nothing")
            return None
        columns = self.ctas_columns(ctx.query())
        if columns is None:
            self.warn(f"CREATE TABLE {tid} AS: the columns of the query cannot be derived without "
                      f"running it; the table is not in the model")
            return None
        names = [self.ident(c) for c in ctx.nameList().colId()] if ctx.nameList() is not None else []
        if len(names) > len(columns):
            raise self.error(ctx.nameList(), "CREATE TABLE AS specifies too many column names")
        editor = Table(tid, options=((ATTNUM, "0"),), replica_identity="default").edit(self.column_key)
        if isinstance(ctx.persistence(), P.UnloggedPersistenceContext):
            editor.set_option("UNLOGGED", "YES")
        for i, col in enumerate(columns):
            self.append_column(editor, copied_column(col).replace(
                name=names[i] if i < len(names) else col.name, ordinal_position=0, nullable=True,
                column_default=None, identity=None, generation_expression=None,
                generation_stored=None, comment=None))
        self.create_table(editor.build())
        return None

    #: what may follow the single FROM item of a derivable CREATE TABLE AS query
    CTAS_TAIL = frozenset({"where", "order", "limit", "offset", "fetch", "for", "group", "having", "window"})

    def ctas_columns(self, ctx: P.QueryContext) -> list[Column] | None:
        """The source columns of ``TABLE src`` / ``SELECT item, ... FROM src [alias] [WHERE
        ...]`` where each item is ``*``, ``alias.*``, ``col`` or ``alias.col`` with an optional
        ``[AS] name``; ``None`` for any other query (expressions, joins, set operations)."""
        words = [t for t in _terminals(ctx) if t.symbol.type != P.EOF]
        texts = [t.getText() for t in words]
        low = [x.lower() for x in texts]
        cut = 3 if low[-3:] == ["with", "no", "data"] else 2 if low[-2:] == ["with", "data"] else 0
        if cut:
            texts, low = texts[:-cut], low[:-cut]
        if low[:1] == ["table"]:
            src = self.ctas_source(texts[1:])
            return list(src.columns) if src is not None else None
        if low[:1] != ["select"] or "from" not in low:
            return None
        at = low.index("from")
        rest = texts[at + 1:]
        end = next((i for i, w in enumerate(rest) if w.lower() in self.CTAS_TAIL), len(rest))
        from_item = rest[:end]
        alias = None
        if len(from_item) >= 2 and from_item[-2] != "." and _is_name(from_item[-1]):
            alias = _token_name(from_item[-1])
            from_item = from_item[:-2] if from_item[-2].lower() == "as" else from_item[:-1]
        src = self.ctas_source(from_item)
        if src is None:
            return None
        qualifiers = {src.id.name} | ({alias} if alias else set())
        items: list[list[str]] = [[]]
        for w in texts[1:at]:
            if w == ",":
                items.append([])
            else:
                items[-1].append(w)
        out: list[Column] = []
        for item in items:
            if item and item[0].lower() in ("all", "distinct"):
                return None
            if len(item) >= 3 and item[1] == "." and _token_name(item[0]) in qualifiers:
                item = item[2:]
            if item == ["*"]:
                out.extend(src.columns)
                continue
            if not item or not _is_name(item[0]):
                return None
            name = _token_name(item[0])
            label = item[1:]
            if label and label[0].lower() == "as":
                label = label[1:]
            if len(label) > 1 or (label and not _is_name(label[0])):
                return None
            col = src.column(name, key=self.column_key)
            if col is None:
                return None
            out.append(col.replace(name=_token_name(label[0])) if label else col)
        return out

    def ctas_source(self, words: list[str]) -> Table | None:
        """The known table a dotted name (``words``: name tokens and dots) denotes."""
        if not words or len(words) % 2 == 0 or any(w != "." for w in words[1::2]) \
                or not all(_is_name(w) for w in words[0::2]):
            return None
        parts = [_token_name(w) for w in words[0::2]]
        db = self.database()
        if len(parts) == 1:
            candidates = [TableId(db, s, parts[0]) for s in self.search_path]
        else:
            candidates = [TableId(parts[-3] if len(parts) > 2 else db, parts[-2], parts[-1])]
        for tid in candidates:
            table = self.get_table(tid)
            if table is not None:
                return table
        return None

    def inherit_keys(self, editor: TableEditor, parent: Table) -> None:
        """A partition gets the partitioned table's primary key (a partitioned index,
        manual 5.11.2.3)."""
        if parent.primary_key and not editor.primary_key:
            self.set_primary_key(editor, list(parent.primary_key), None)

    def require_table(self, tid: TableId, ctx: Any) -> Table:
        table = self.get_table(tid)
        if table is None:
            raise self.error(ctx, f"relation {tid} is not known to the model")
        return table

    def partition_key(self, ctx: P.PartitionSpecContext) -> str:
        """``pg_get_partkeydef``: ``RANGE (payment_date)``."""
        return f"{ctx.partitionStrategy().getText().upper()} ({_squash(self.source_text(ctx.balancedTokens()))})"

    def apply_table_element(self, editor: TableEditor, el: P.TableElementContext) -> None:
        if el.columnDef() is not None:
            draft = self.column_draft(el.columnDef())
            self.add_column_draft(editor, draft)
        elif el.tableConstraint() is not None:
            self.apply_table_constraint(editor, el.tableConstraint())
        else:
            self.apply_like(editor, el.tableLikeClause())

    def apply_typed_elements(self, editor: TableEditor, ctx: P.TypedTableElementListContext) -> None:
        for el in ctx.typedTableElement():
            if el.tableConstraint() is not None:
                self.apply_table_constraint(editor, el.tableConstraint())
                continue
            name = self.ident(el.colId())
            draft = ColumnDraft(name, {})
            for cc in el.columnConstraint():
                self.apply_column_constraint(draft, cc)
            col = editor.column(name)
            changes: dict[str, Any] = {}
            if draft.not_null:
                changes["nullable"] = False
            if draft.default is not None:
                changes["column_default"] = self.render_default(draft.default, col)
            if changes:
                editor.update_column(name, **changes)
            if draft.primary_key:
                self.set_primary_key(editor, [name], draft.pk_name)

    def apply_typed_table(self, editor: TableEditor, ctx: P.CreateStmtContext) -> None:
        key = self.type_key(self.name_parts(ctx.qualifiedName(1)))
        info = self.tables.types.get(key or "")
        if info is None or info.get("kind") != "composite":
            raise self.error(ctx.qualifiedName(1), f"type {ctx.qualifiedName(1).getText()} is not a known composite type")
        for attr in info["attributes"]:
            self.append_column(editor, copied_column(Column.from_json({**attr, "ordinal_position": 0})))
        self.later(_put_type(key, dict(info, typed_tables=[*info.get("typed_tables", []),
                                                           [editor.id.schema, editor.id.name]])))
        if ctx.typedTableElementList() is not None:
            self.apply_typed_elements(editor, ctx.typedTableElementList())

    def apply_like(self, editor: TableEditor, ctx: P.TableLikeClauseContext) -> None:
        """LIKE source [INCLUDING | EXCLUDING ...]: the source's columns with their types and
        NOT NULL; defaults, identity, generation, comments and indexes only when included."""
        src = self.require_table(self.table_id(ctx.qualifiedName()), ctx)
        included: set[str] = set()
        for opt in ctx.tableLikeOption():
            what = opt.likeOptionName().getText().upper()
            kinds = _LIKE_ALL if what == "ALL" else {what}
            if opt.INCLUDING() is not None:
                included |= kinds
            else:
                included -= kinds
        for col in src.columns:
            c = copied_column(col).replace(ordinal_position=0)
            if "DEFAULTS" not in included:
                c = c.replace(column_default=None)
            if "IDENTITY" not in included:
                c = c.replace(identity=None)
            if "GENERATED" not in included and c.generation_expression is not None:
                c = c.replace(generation_expression=None, generation_stored=None)
            if "COMMENTS" not in included:
                c = c.replace(comment=None)
            self.place_local_column(editor, c)
        if "INDEXES" in included:
            if src.primary_key:
                self.set_primary_key(editor, list(src.primary_key), None)
            for ix in src.indexes:
                if ix.kind != "PRIMARY KEY":
                    cols = [c for c in ix.columns]
                    editor.add_index(Index(self.index_name(editor, [c or "expr" for c in cols], "key" if ix.kind == "UNIQUE" else "idx"),
                                           ix.kind, tuple(cols), ix.key_parts))

    def append_column(self, editor: TableEditor, col: Column) -> None:
        if editor.has_column(col.name):
            raise self.error(None, f"column \"{col.name}\" specified more than once")
        editor.add_column(col)
        # number it now, so a following column gets the next attnum
        last = int(editor.options.get(ATTNUM, "0")) + 1
        editor.options[ATTNUM] = str(last)
        editor.columns[-1] = editor.columns[-1].replace(ordinal_position=last)

    # -- columns -----------------------------------------------------------------------

    def column_draft(self, ctx: P.ColumnDefContext) -> ColumnDraft:
        name = self.ident(ctx.colId())
        fields, serial = self.type_fields(ctx.typeName())
        draft = ColumnDraft(name, fields, serial=serial)
        for q in ctx.columnQualifier():
            if q.columnConstraint() is not None:
                self.apply_column_constraint(draft, q.columnConstraint())
        return draft

    def apply_column_constraint(self, draft: ColumnDraft, ctx: P.ColumnConstraintContext) -> None:
        if ctx.COLLATE() is not None:
            draft.collation = self.collation_name(ctx.anyName())
            return
        el = ctx.columnConstraintElem()
        if el is None:
            return
        cname = self.ident(ctx.name()) if ctx.name() is not None else None
        if isinstance(el, P.NotNullConstraintContext):
            draft.not_null = True
        elif isinstance(el, P.NullConstraintContext):
            draft.not_null = False
        elif isinstance(el, P.DefaultConstraintContext):
            draft.default = self.source_text(el.exprTokens())
        elif isinstance(el, P.GeneratedConstraintContext):
            draft.generation = _squash(self.source_text(el.balancedTokens()))
        elif isinstance(el, P.IdentityConstraintContext):
            draft.identity = self.identity_kind(el.identityKind())
        elif isinstance(el, P.PrimaryKeyColumnConstraintContext):
            draft.primary_key = True
            draft.pk_name = cname
        elif isinstance(el, P.UniqueColumnConstraintContext):
            draft.unique.append(cname)
        elif isinstance(el, P.CheckColumnConstraintContext):
            draft.checks.append(CheckConstraint(cname, _squash(self.source_text(el.balancedTokens()))))
        elif isinstance(el, P.ReferencesColumnConstraintContext):
            ref = self.table_id(el.qualifiedName())
            cols = tuple(self.ident(c) for c in el.nameList().colId()) if el.nameList() is not None else ()
            draft.references.append((cname, ref, cols))

    @staticmethod
    def identity_kind(ctx: P.IdentityKindContext) -> str:
        return "ALWAYS" if ctx.ALWAYS() is not None else "BY DEFAULT"

    def collation_name(self, ctx: P.AnyNameContext) -> str | None:
        """``collation_name`` as information_schema shows it; ``None`` for ``default``."""
        parts = self.name_parts(ctx)
        if parts[-1] == "default":
            return None
        return parts[-1]

    def add_column_draft(self, editor: TableEditor, draft: ColumnDraft) -> Column:
        col = self.column_from_draft(editor, draft)
        self.place_local_column(editor, col)
        name = col.name
        if draft.primary_key:
            self.set_primary_key(editor, [name], draft.pk_name)
        for uname in draft.unique:
            self.add_unique(editor, [name], uname)
        for chk in draft.checks:
            editor.add_check(chk)
        for fk_name, ref, cols in draft.references:
            editor.add_foreign_key(ForeignKey(fk_name, (name,), ref, cols))
        return editor.column(name)

    def column_from_draft(self, editor: TableEditor, draft: ColumnDraft) -> Column:
        """The model column of a column definition in ``editor``'s table (serial sequences
        and defaults, identity, generation, collation, nullability)."""
        f = dict(draft.fields)
        domain_not_null = f.pop("_domain_not_null", False)
        not_null = draft.not_null or draft.primary_key or draft.identity is not None or draft.serial is not None
        default = None
        if draft.serial is not None:
            seq = self.choose_relation_name(editor, draft.name, "seq")
            schema = editor.id.schema or self.creation_schema()
            self.later(_put_type(f"{schema}.{seq}", {"kind": "sequence", "schema": schema, "name": seq,
                                                     "owned_by": [str(editor.id), draft.name]}))
            default = self.nextval_text(schema, seq)
        col = Column(name=draft.name, ordinal_position=0, nullable=not (not_null or domain_not_null),
                     collation_name=draft.collation if draft.collation is not None else f.pop("collation_name", None),
                     identity=draft.identity, **{k: v for k, v in f.items() if k != "collation_name"})
        if draft.generation is not None:
            col = col.replace(generation_expression=draft.generation, generation_stored=True)
        elif draft.default is not None and default is None:
            default = self.render_default(draft.default, col)
        return col.replace(column_default=default)

    def render_default(self, text: str, col: Column) -> str | None:
        """``pg_get_expr`` of a default (``ddlcore_postgres.defaults``)."""
        return _defaults.render_default(text, col.column_type, col.data_type,
                                        resolve_type=self.print_type_name,
                                        sequence_name=self.print_sequence_name)

    def print_type_name(self, text: str) -> str:
        """A user type named in a cast as ``format_type`` prints it (``public.st[]`` when
        ``public`` is not on the search path); an unknown name as written."""
        m = re.fullmatch(r"(.*?)((?:\s*\[\s*\d*\s*\])*)", text.strip(), re.DOTALL)
        base, dims = m.group(1), m.group(2).count("[")
        parts = [p.strip('"') if p.startswith('"') else p.lower() for p in base.split(".")]
        key = self.type_key(parts)
        if key is None:
            return text
        schema, _, name = key.partition(".")
        return self.visible_name(schema, name) + "[]" * min(dims, 1)

    def print_sequence_name(self, text: str) -> str:
        parts = [p[1:-1].replace('""', '"') if p.startswith('"') else p.lower() for p in _split_dotted(text)]
        if len(parts) >= 2:
            return self.visible_name(parts[-2], parts[-1], is_type=False)
        return parts[0] if parts else text

    # -- types (chapter 8) ---------------------------------------------------------------

    def type_fields(self, ctx: P.TypeNameContext) -> tuple[dict[str, Any], str | None]:
        """A ``typeName`` → (column fields, serial typname or ``None``).  Built-in types come
        from ``ddlcore_postgres.types``; enums, domains and composite types from
        ``Tables.types``; an unknown type is kept as ``USER-DEFINED`` with a warning."""
        if ctx.ARRAY() is not None:
            dims = 1
        else:
            dims = len(ctx.arrayBounds().LBRACKET())
        simple = ctx.simpleTypeName()
        mods = self.type_modifiers(getattr(simple, "typeModifiers", lambda: None)())
        explicit_char = False
        interval_fields = None
        if isinstance(simple, P.DoublePrecisionTypeContext):
            typname = "float8"
        elif isinstance(simple, P.CharacterTypeContext):
            varying = simple.VARYING() is not None or simple.VARCHAR() is not None
            typname = "varchar" if varying else "bpchar"
            explicit_char = not varying
        elif isinstance(simple, P.BitTypeContext):
            typname = "varbit" if simple.VARYING() is not None else "bit"
        elif isinstance(simple, P.DatetimeTypeContext):
            tz = simple.timeZone() is not None and simple.timeZone().WITH() is not None
            base = "time" if simple.TIME() is not None else "timestamp"
            typname = base + ("tz" if tz else "")
        elif isinstance(simple, P.IntervalTypeContext):
            typname = "interval"
            if simple.intervalFields() is not None:
                interval_fields = " ".join(t.getText().upper() for t in _terminals(simple.intervalFields()))
        elif simple.qualifiedTypeName().getText() == '"char"':
            typname = "char"  # the internal one-byte type (manual 8.3, Table 8.5)
        else:
            parts = self.name_parts(simple.qualifiedTypeName())
            return self.named_type_fields(parts, mods, dims, simple)
        try:
            return _types.column_fields(typname, mods, explicit_char=explicit_char,
                                        interval_fields=interval_fields, dims=dims), None
        except _types.TypeError_ as exc:
            raise self.error(ctx, str(exc)) from None

    def type_modifiers(self, ctx: Any) -> list[str]:
        if ctx is None:
            return []
        text = self.source_text(ctx.balancedTokens())
        return [m.strip() for m in text.split(",") if m.strip()]

    def named_type_fields(self, parts: list[str], mods: list[str], dims: int, ctx: Any) -> tuple[dict[str, Any], str | None]:
        name = parts[-1]
        builtin_ok = len(parts) == 1 or parts[-2] == "pg_catalog"
        if builtin_ok and len(parts) == 1 and name in _types.SERIALS:
            if dims:
                raise self.error(ctx, f"array of serial is not implemented")
            return _types.column_fields(_types.SERIALS[name], [], dims=0), _types.SERIALS[name]
        key = self.type_key(parts)
        builtin = builtin_ok and _types.canonical_name(name) is not None
        if key is not None and key in self.tables.types and not (
                builtin and (key.startswith("pg_catalog.") or (len(parts) == 1 and self.builtin_first(key)))):
            return self.user_type_fields(key, dims, ctx), None
        if builtin_ok:
            try:
                typname = _types.canonical_name(name, mods)
                if typname is not None:
                    return _types.column_fields(typname, [] if name == "float" else mods, dims=dims), None
            except _types.TypeError_ as exc:
                raise self.error(ctx, str(exc)) from None
        schema = parts[-2] if len(parts) > 1 else self.creation_schema()
        self.warn(f"type {'.'.join(parts)} is not known to the model; kept as USER-DEFINED")
        shown = self.visible_name(schema, name)
        return {"data_type": "ARRAY" if dims else "USER-DEFINED", "column_type": shown + ("[]" if dims else ""),
                "udt_schema": schema, "udt_name": ("_" if dims else "") + name, "array_dimensions": dims}, None

    def user_type_fields(self, key: str, dims: int, ctx: Any) -> dict[str, Any]:
        info = self.tables.types[key]
        schema, name = info["schema"], info["name"]
        shown = self.visible_name(schema, name)
        kind = info["kind"]
        if kind == "domain":
            base = dict(info["base"])
            if dims:
                return {"data_type": "ARRAY", "column_type": shown + "[]", "udt_schema": schema,
                        "udt_name": "_" + name, "enum_values": base.get("enum_values"), "array_dimensions": dims}
            f = {k: base.get(k) for k in ("data_type", "character_maximum_length", "character_octet_length",
                                          "numeric_precision", "numeric_scale", "datetime_precision",
                                          "interval_type", "udt_schema", "udt_name", "enum_values")}
            f.update(column_type=shown, domain_schema=schema, domain_name=name,
                     domain_base_type=base.get("domain_base_type") or base.get("column_type"),
                     collation_name=info.get("collation"))
            if info.get("not_null"):
                f["_domain_not_null"] = True
            return f
        if kind == "sequence":
            raise self.error(ctx, f"{key} is a sequence, not a type")
        f = {"data_type": "ARRAY" if dims else "USER-DEFINED", "column_type": shown + ("[]" if dims else ""),
             "udt_schema": schema, "udt_name": ("_" if dims else "") + name, "array_dimensions": dims}
        if kind == "enum":
            f["enum_values"] = tuple(info["labels"])
        return f

    # -- constraints ---------------------------------------------------------------------

    def index_name(self, editor: TableEditor, columns: list[str], label: str) -> str:
        """``ChooseRelationName``: ``table_col1_col2_label``, then with a number appended to
        the label until no relation of the schema has it."""
        return self.choose_relation_name(editor, "_".join(columns) if columns else None, label)

    def choose_relation_name(self, editor: TableEditor, name2: str | None, label: str) -> str:
        """``ChooseRelationName`` (indexes, ``serial`` sequences): ``makeObjectName(table,
        name2, label)``, then ``label1``, ``label2`` ... until no relation of the table's schema
        (``relation_names``) has the name."""
        taken = self.relation_names(editor.id.schema) | {ix.name or "" for ix in editor.indexes} | {editor.id.name}
        n = 0
        while True:
            name = make_object_name(editor.id.name, name2, label + (str(n) if n else ""))
            if name not in taken:
                self._new_relations.add((editor.id.schema, name))
                self._chosen_names.add(name)
                return name
            n += 1

    def relation_names(self, schema: str | None) -> set[str]:
        """The names ``pg_class`` holds in ``schema`` as far as the model knows: tables, views,
        their indexes, sequences and composite types (and those this statement made)."""
        names = {n for s, n in self._new_relations if s == schema}
        for t in self.tables:
            current = self.get_table(t.id)
            if current is not None and current.id.schema == schema:
                names.add(current.id.name)
                names.update(ix.name for ix in current.indexes if ix.name)
        for view in self.tables.views.values():
            if view.id.schema == schema:
                names.add(view.id.name)
        for info in self.tables.types.values():
            if info.get("schema") == schema and info.get("kind") in ("sequence", "composite"):
                names.add(info["name"])
        return names

    _new_relations: set[tuple[str | None, str]] = frozenset()  # type: ignore[assignment]
    #: index names this statement chose itself (not written in it)
    _chosen_names: set[str] = frozenset()  # type: ignore[assignment]
    #: CREATE TABLE ... INHERITS: inherited column name → its parents' defaults conflict (True),
    #: or None once the table's own definition of it was merged
    _inherited: dict[str, bool | None] = {}

    def apply(self, tree: Any, statement: Any, tables: Tables):
        """``DdlVisitor.apply`` with this statement's own new relation names reset."""
        self._new_relations = set()
        self._chosen_names = set()
        self._inherited = {}
        return super().apply(tree, statement, tables)

    def set_primary_key(self, editor: TableEditor, names: list[str], cname: str | None) -> None:
        if editor.primary_key:
            raise self.error(None, f"multiple primary keys for table \"{editor.id.name}\" are not allowed")
        editor.set_primary_key(names)
        name = cname or make_object_name(editor.id.name, None, "pkey")
        if cname is None:
            self._chosen_names.add(name)
        editor.add_index(Index(name, "PRIMARY KEY", tuple(names)))

    def add_unique(self, editor: TableEditor, names: list[str], cname: str | None) -> None:
        editor.add_index(Index(cname or self.index_name(editor, names, "key"), "UNIQUE", tuple(names)))

    def apply_table_constraint(self, editor: TableEditor, ctx: P.TableConstraintContext) -> None:
        cname = self.ident(ctx.name()) if ctx.name() is not None else None
        el = ctx.tableConstraintElem()
        if isinstance(el, P.PrimaryKeyTableConstraintContext):
            self.set_primary_key(editor, self.name_list(el.nameList(), editor), cname)
        elif isinstance(el, P.UniqueTableConstraintContext):
            self.add_unique(editor, self.name_list(el.nameList(), editor), cname)
        elif isinstance(el, (P.PrimaryKeyUsingIndexContext, P.UniqueUsingIndexContext)):
            ixname = self.ident(el.name())
            ix = next((i for i in editor.indexes if i.name == ixname), None)
            if ix is None:
                raise self.error(el, f"index \"{ixname}\" is not known to the model")
            editor.indexes.remove(ix)
            kind = "PRIMARY KEY" if isinstance(el, P.PrimaryKeyUsingIndexContext) else "UNIQUE"
            if kind == "PRIMARY KEY":
                editor.set_primary_key([c for c in ix.columns if c is not None])
            editor.add_index(dataclasses.replace(ix, name=cname or ixname, kind=kind))
        elif isinstance(el, P.CheckTableConstraintContext):
            editor.add_check(CheckConstraint(cname, _squash(self.source_text(el.balancedTokens()))))
        elif isinstance(el, P.ForeignKeyTableConstraintContext):
            cols = tuple(self.ident(c) for c in el.nameList(0).colId())
            ref = self.table_id(el.qualifiedName())
            refcols = tuple(self.ident(c) for c in el.nameList(1).colId()) if len(el.nameList()) > 1 else ()
            editor.add_foreign_key(ForeignKey(cname, cols, ref, refcols))
        elif isinstance(el, P.ExcludeTableConstraintContext):
            editor.add_index(Index(cname or self.index_name(editor, [], "excl"), "INDEX", ()))

    def name_list(self, ctx: P.NameListContext, editor: TableEditor) -> list[str]:
        names = [self.ident(c) for c in ctx.colId()]
        for n in names:
            if not editor.has_column(n):
                raise self.error(ctx, f"column \"{n}\" named in key does not exist")
        return names

    # -- ALTER TABLE ---------------------------------------------------------------------

    def visitAlterTableStmt(self, ctx: P.AlterTableStmtContext):
        tid = self.table_id(ctx.qualifiedName())
        if self.get_table(tid) is None:
            action = ctx.alterTableAction()
            if self.get_view(tid) is not None and isinstance(action, (P.RenameTableContext, P.SetSchemaContext)):
                self.move_view(tid, action.name(), schema=isinstance(action, P.SetSchemaContext))
                return None
            if self.get_view(tid) is not None or ctx.FOREIGN() is not None:
                return None  # ALTER TABLE works on views and sequences too; they hold no rows
            if ctx.ifExists() is not None:
                return None
        action = ctx.alterTableAction()
        only = ctx.ONLY() is not None
        if isinstance(action, P.RenameTableContext):
            self.rename_relation(tid, tid.with_name(self.ident(action.name())), action)
        elif isinstance(action, P.SetSchemaContext):
            new_id = TableId(tid.database, self.ident(action.name()), tid.name)
            owned = self.owned_sequences(tid)
            self.rename_table(tid, new_id, action)
            self.repoint_children(tid, new_id, action)
            for key in owned:  # owned sequences move with the table (ALTER TABLE, SET SCHEMA)
                info = self.tables.types[key]
                self.move_sequence(key, new_id.schema, info["name"], [new_id])
                self.later(_set_owner(f"{new_id.schema}.{info['name']}", str(new_id)))
        elif isinstance(action, P.RenameColumnContext):
            old, new = self.ident(action.colId(0)), self.ident(action.colId(1))
            self.alter_family(tid, lambda e: e.rename_column(old, new), only, action)
        elif isinstance(action, P.RenameConstraintContext):
            old, new = self.ident(action.name(0)), self.ident(action.name(1))
            self.alter_table(tid, lambda e: self.rename_constraint(e, old, new), action)
        elif isinstance(action, P.AttachPartitionContext):
            child = self.table_id(action.qualifiedName())
            parent = self.get_table(tid)

            def attach(e: TableEditor) -> None:
                e.set_option("PARTITION OF", str(tid))
                if parent is not None:
                    self.inherit_keys(e, parent)

            attached = self.alter_table(child, attach, action)
            if attached is not None:  # a partitioned table's partitions get the key too
                for sub in self.children_of(child):
                    self.alter_family(sub, lambda e: self.inherit_keys(e, attached), False, action)
        elif isinstance(action, P.DetachPartitionContext):
            child = self.table_id(action.qualifiedName())
            self.alter_table(child, lambda e: e.set_option("PARTITION OF", None), action)
        else:
            for cmd in sorted(action.alterTableCmd(), key=alter_pass):
                self.alter_command(tid, cmd, only)
        return None

    def rename_relation(self, tid: TableId, new_id: TableId, ctx: Any) -> None:
        """``ALTER TABLE|INDEX name RENAME TO``: the table's new name; its owned sequences keep
        theirs, its partitions and inheritance children follow it."""
        for key in self.owned_sequences(tid):
            self.later(_set_owner(key, str(new_id)))
        self.rename_table(tid, new_id, ctx)
        self.repoint_children(tid, new_id, ctx)

    def repoint_children(self, old: TableId, new: TableId, ctx: Any) -> None:
        """The ``INHERITS`` / ``PARTITION OF`` options of ``old``'s children name ``new``."""
        def repoint(e: TableEditor) -> None:
            for option in ("INHERITS", "PARTITION OF"):
                if e.options.get(option):
                    e.set_option(option, ",".join(str(new) if p == str(old) else p
                                                  for p in e.options[option].split(",")))

        for child in self.children_of(old):
            self.alter_table(child, repoint, ctx)

    def children_of(self, tid: TableId) -> list[TableId]:
        """Tables that inherit from ``tid`` or are its partitions (one level)."""
        key = str(tid)
        out = []
        for t in list(self.tables):
            current = self.get_table(t.id)
            if current is None:
                continue
            parents = (current.option("INHERITS") or "").split(",") + [current.option("PARTITION OF") or ""]
            if key in parents:
                out.append(current.id)
        return out

    def alter_family(self, tid: TableId, edit: Callable[[TableEditor], Any], only: bool, ctx: Any) -> None:
        """Apply ``edit`` to the table and, without ``ONLY``, to every descendant (manual:
        ALTER TABLE "recurses to child tables unless ONLY is given")."""
        self.alter_table(tid, edit, ctx)
        if only:
            return
        for child in self.children_of(tid):
            self.alter_family(child, edit, False, ctx)

    def alter_command(self, tid: TableId, cmd: Any, only: bool) -> None:
        handler = getattr(self, "alter_" + type(cmd).__name__[:-len("Context")], None)
        if handler is not None:
            handler(tid, cmd, only)

    def alter_AddColumn(self, tid: TableId, cmd: P.AddColumnContext, only: bool) -> None:
        draft = self.column_draft(cmd.columnDef())

        def edit(e: TableEditor) -> None:
            if e.has_column(draft.name):
                if cmd.ifNotExists() is not None:
                    self.warn(f"column \"{draft.name}\" of relation \"{e.id.name}\" already exists, skipping")
                    return
                raise self.error(cmd, f"column \"{draft.name}\" of relation \"{e.id.name}\" already exists")
            self.add_column_draft(e, draft)

        parent = self.alter_table(tid, edit, cmd)
        if not only and parent is not None:
            # the children get the parent's column as the server transformed it once: a
            # serial's default calls the parent's sequence
            serial_default = parent.column(draft.name, key=self.column_key).column_default if draft.serial else None
            child_draft = dataclasses.replace(draft, primary_key=False, unique=[], identity=None, serial=None)

            def add_to_child(e: TableEditor) -> None:
                if e.has_column(draft.name):
                    return
                col = self.column_from_draft(e, child_draft)
                if draft.serial:
                    col = col.replace(column_default=serial_default, nullable=False)
                self.append_column(e, col)

            for child in self.children_of(tid):
                self.alter_family(child, add_to_child, False, cmd)

    def alter_DropColumn(self, tid: TableId, cmd: P.DropColumnContext, only: bool) -> None:
        name = self.ident(cmd.colId())

        def edit(e: TableEditor) -> None:
            if not e.has_column(name):
                # PostgreSQL refuses it (42703), so a change log holding it means the model was
                # behind: the column is gone either way, as for an unknown table (docs/postgres.md "Limits")
                if cmd.ifExists() is None:
                    self.warn(f"column {name} of table {e.id} is not known; drop ignored")
                return
            e.drop_column(name, whole_keys=True)

        self.alter_family(tid, edit, only, cmd)

    def alter_AlterColumnType(self, tid: TableId, cmd: P.AlterColumnTypeContext, only: bool) -> None:
        name = self.ident(cmd.colId())
        fields, serial = self.type_fields(cmd.typeName())
        if serial is not None:
            raise self.error(cmd, f"type \"{cmd.typeName().getText()}\" does not exist")
        collation = self.collation_name(cmd.anyName()) if cmd.anyName() is not None else None

        def edit(e: TableEditor) -> None:
            e.replace_column(name, self.retyped_column(e.column(name), fields, collation))

        self.alter_family(tid, edit, only, cmd)

    @staticmethod
    def retyped_column(old: Column, fields: dict[str, Any], collation: str | None) -> Column:
        """``old`` with the type fields of a new type (``ALTER COLUMN ... TYPE``, ``ALTER TYPE
        ... ALTER ATTRIBUTE ... TYPE``): fields the new type lacks are cleared."""
        f = dict(fields)
        domain_not_null = f.pop("_domain_not_null", False)
        f.pop("collation_name", None)
        cleared = {k: None for k in ("character_maximum_length", "character_octet_length", "numeric_precision",
                                     "numeric_scale", "datetime_precision", "interval_type", "enum_values",
                                     "domain_schema", "domain_name", "domain_base_type", "collation_name")}
        # a type without dimensions (a domain's fields name none: a column of a domain, even one
        # over an array, has attndims 0 in pg_attribute) clears the old type's
        cleared["array_dimensions"] = 0
        new = old.replace(**{**cleared, **f, "collation_name": collation})
        return new.replace(nullable=False) if domain_not_null else new

    def alter_SetDefault(self, tid: TableId, cmd: P.SetDefaultContext, only: bool) -> None:
        name, text = self.ident(cmd.colId()), self.source_text(cmd.exprTokens())
        self.alter_family(tid, lambda e: e.update_column(name, column_default=self.render_default(text, e.column(name))),
                          only, cmd)

    def alter_DropDefault(self, tid: TableId, cmd: P.DropDefaultContext, only: bool) -> None:
        name = self.ident(cmd.colId())
        self.alter_family(tid, lambda e: e.update_column(name, column_default=None), only, cmd)

    def alter_SetNotNull(self, tid: TableId, cmd: P.SetNotNullContext, only: bool) -> None:
        name = self.ident(cmd.colId())
        self.alter_family(tid, lambda e: e.update_column(name, nullable=False), only, cmd)

    def alter_DropNotNull(self, tid: TableId, cmd: P.DropNotNullContext, only: bool) -> None:
        name = self.ident(cmd.colId())

        def edit(e: TableEditor) -> None:
            if name in e.primary_key:
                raise self.error(cmd, f"column \"{name}\" is in a primary key")
            e.update_column(name, nullable=self.domain_nullable(e.column(name)))

        self.alter_family(tid, edit, only, cmd)

    def domain_nullable(self, col: Column) -> bool:
        if col.domain_name is not None:
            info = self.tables.types.get(f"{col.domain_schema}.{col.domain_name}") or {}
            return not info.get("not_null", False)
        return True

    def alter_DropExpression(self, tid: TableId, cmd: P.DropExpressionContext, only: bool) -> None:
        name = self.ident(cmd.colId())
        self.alter_family(tid, lambda e: e.update_column(name, generation_expression=None, generation_stored=None),
                          only, cmd)

    def alter_AddIdentity(self, tid: TableId, cmd: P.AddIdentityContext, only: bool) -> None:
        # identity commands never recurse to inheritance children (ATPrepCmd, tablecmds.c)
        name, kind = self.ident(cmd.colId()), self.identity_kind(cmd.identityKind())
        self.alter_table(tid, lambda e: e.update_column(name, identity=kind, nullable=False), cmd)

    def alter_AlterIdentity(self, tid: TableId, cmd: P.AlterIdentityContext, only: bool) -> None:
        name = self.ident(cmd.colId())
        kinds = [self.identity_kind(a.identityKind()) for a in cmd.identityAlteration() if a.identityKind() is not None]
        if kinds:
            self.alter_table(tid, lambda e: e.update_column(name, identity=kinds[-1]), cmd)

    def alter_DropIdentity(self, tid: TableId, cmd: P.DropIdentityContext, only: bool) -> None:
        name = self.ident(cmd.colId())
        self.alter_table(tid, lambda e: e.update_column(name, identity=None), cmd)

    def alter_AddConstraint(self, tid: TableId, cmd: P.AddConstraintContext, only: bool) -> None:
        table = self.alter_table(tid, lambda e: self.apply_table_constraint(e, cmd.tableConstraint()), cmd)
        el = cmd.tableConstraint().tableConstraintElem()
        if table is not None and isinstance(el, (P.PrimaryKeyTableConstraintContext, P.PrimaryKeyUsingIndexContext)):
            # the key's NOT NULL is an ALTER COLUMN SET NOT NULL, which reaches the children
            # (transformIndexConstraint, parse_utilcmd.c); the key itself stays the parent's
            key = list(table.primary_key)
            for child in ([] if only else self.children_of(tid)):
                self.alter_family(child, lambda e: [e.update_column(n, nullable=False) for n in key], False, cmd)

    def alter_DropConstraint(self, tid: TableId, cmd: P.DropConstraintContext, only: bool) -> None:
        cname = self.ident(cmd.name())

        def edit(e: TableEditor) -> None:
            ix = next((i for i in e.indexes if i.name == cname and i.kind in ("PRIMARY KEY", "UNIQUE")), None)
            if ix is not None:
                e.indexes.remove(ix)
                if ix.kind == "PRIMARY KEY":
                    e.drop_primary_key()
                return
            if e.drop_check(cname) or e.drop_foreign_key(cname):
                return
            if any(i.name == cname for i in e.indexes):  # EXCLUDE
                e.indexes = [i for i in e.indexes if i.name != cname]
                return
            if cmd.ifExists() is None:
                self.warn(f"constraint \"{cname}\" of relation \"{e.id.name}\" is not known to the model")

        self.alter_table(tid, edit, cmd)

    def alter_ReplicaIdentityCmd(self, tid: TableId, cmd: P.ReplicaIdentityCmdContext, only: bool) -> None:
        r = cmd.replicaIdentity()
        kind = "index" if r.INDEX() is not None else r.getText().lower()

        def edit(e: TableEditor) -> None:
            e.replica_identity = kind

        self.alter_table(tid, edit, cmd)

    def alter_Inherit(self, tid: TableId, cmd: P.InheritContext, only: bool) -> None:
        parent = str(self.table_id(cmd.qualifiedName()))

        def edit(e: TableEditor) -> None:
            parents = [p for p in (e.options.get("INHERITS") or "").split(",") if p]
            e.set_option("INHERITS", ",".join(parents + [parent]))

        self.alter_table(tid, edit, cmd)

    def alter_NoInherit(self, tid: TableId, cmd: P.NoInheritContext, only: bool) -> None:
        parent = str(self.table_id(cmd.qualifiedName()))

        def edit(e: TableEditor) -> None:
            parents = [p for p in (e.options.get("INHERITS") or "").split(",") if p and p != parent]
            e.set_option("INHERITS", ",".join(parents) or None)

        self.alter_table(tid, edit, cmd)

    def alter_SetLogged(self, tid: TableId, cmd: P.SetLoggedContext, only: bool) -> None:
        unlogged = cmd.UNLOGGED() is not None
        self.alter_table(tid, lambda e: e.set_option("UNLOGGED", "YES" if unlogged else None), cmd)

    def rename_constraint(self, e: TableEditor, old: str, new: str) -> None:
        for i, ix in enumerate(e.indexes):
            if ix.name == old:
                e.indexes[i] = dataclasses.replace(ix, name=new)
                return
        for i, c in enumerate(e.checks):
            if c.name == old:
                e.checks[i] = dataclasses.replace(c, name=new)
                return
        for i, fk in enumerate(e.foreign_keys):
            if fk.name == old:
                e.foreign_keys[i] = dataclasses.replace(fk, name=new)
                return

    # -- DROP, TRUNCATE ------------------------------------------------------------------

    def visitDropStmt(self, ctx: P.DropStmtContext):
        kind = ctx.dropObjectType()
        if_exists = ctx.ifExists() is not None
        cascade = ctx.dropBehavior() is not None and ctx.dropBehavior().CASCADE() is not None
        for q in ctx.qualifiedName():
            if isinstance(kind, P.DropTableTypeContext):
                self.drop_table_tree(self.table_id(q), if_exists=if_exists, cascade=cascade, ctx=q)
            elif isinstance(kind, P.DropViewTypeContext):
                self.drop_view(self.table_id(q), if_exists=True)
            elif isinstance(kind, P.DropIndexTypeContext):
                self.drop_index(self.name_parts(q))
            elif isinstance(kind, (P.DropSequenceTypeContext, P.DropTypeTypeContext)):
                key = self.type_key(self.name_parts(q))
                if key is not None:
                    keys = [key]
                    if cascade and isinstance(kind, P.DropTypeTypeContext):
                        keys += self.dependent_domains(key)
                        for k in keys:
                            self.drop_columns_of_type(k)
                    for k in keys:
                        self.later(_drop_type(k))
            elif isinstance(kind, P.DropSchemaTypeContext):
                schema = self.ident(q)
                for t in list(self.tables):
                    if t.id.schema == schema:
                        self.drop_table(t.id, if_exists=True)
                for key, view in list(self.tables.views.items()):
                    if view.id.schema == schema:
                        self.drop_view(view.id, if_exists=True)
                for key in [k for k in self.tables.types if k.startswith(schema + ".")]:
                    self.later(_drop_type(key))
        return None

    def drop_table_tree(self, tid: TableId, *, if_exists: bool, cascade: bool, ctx: Any) -> None:
        """DROP TABLE: a partitioned table's partitions go with it; inheritance children only
        with CASCADE."""
        table = self.get_table(tid)
        if table is None:
            if self.get_view(tid) is None and not if_exists:
                self.warn(f"table {tid} is not known; drop ignored")
            return
        for child in self.children_of(tid):
            ct = self.get_table(child)
            if ct is not None and (ct.option("PARTITION OF") == str(tid) or cascade):
                self.drop_table_tree(child, if_exists=True, cascade=cascade, ctx=ctx)
        self.drop_table(tid, if_exists=if_exists, ctx=ctx)

    def drop_index(self, parts: list[str]) -> None:
        name = parts[-1]
        schemas = [parts[-2]] if len(parts) > 1 else self.search_path
        for t in list(self.tables):
            if t.id.schema not in schemas:
                continue
            current = self.get_table(t.id)
            if current is not None and any(ix.name == name for ix in current.indexes):
                self.alter_table(current.id, lambda e: e.drop_index(name))
                return

    def dependent_domains(self, key: str) -> list[str]:
        """The domains built on type ``key`` (directly, over an array of it, or over another
        such domain): ``DROP TYPE | DOMAIN ... CASCADE`` drops them too."""
        schema, _, name = key.partition(".")
        refs = {(schema, name), (schema, "_" + name)}
        out: list[str] = []
        for k, info in self.tables.types.items():
            base = info.get("base") or {}
            if info.get("kind") == "domain" and k != key and (
                    (base.get("domain_schema"), base.get("domain_name")) in refs
                    or (base.get("udt_schema"), base.get("udt_name")) in refs):
                out += [k, *self.dependent_domains(k)]
        return out

    def drop_columns_of_type(self, key: str) -> None:
        schema, _, name = key.partition(".")
        for t in list(self.tables):
            current = self.get_table(t.id)
            if current is None:
                continue
            victims = [c.name for c in current.columns
                       if (c.domain_schema, c.domain_name) == (schema, name)
                       or (c.udt_schema, c.udt_name) in ((schema, name), (schema, "_" + name))]
            if set(victims) & _partition_key_names(current.option("PARTITION BY")):
                # the partition key depends on the type: the table goes (with its partitions)
                self.drop_table_tree(current.id, if_exists=True, cascade=False, ctx=None)
            elif victims:
                self.alter_table(current.id, lambda e, v=victims: [e.drop_column(n, whole_keys=True) for n in v])

    def visitTruncateStmt(self, ctx: P.TruncateStmtContext):
        for target in ctx.truncateTarget():
            self.truncate_table(self.table_id(target.qualifiedName()))
        return None

    # -- schemas -------------------------------------------------------------------------

    def visitCreateSchemaStmt(self, ctx: P.CreateSchemaStmtContext):
        """A schema holds no rows; the ``CREATE TABLE`` and ``CREATE INDEX`` elements of
        ``CREATE SCHEMA s CREATE ...`` work on unqualified tables in ``s`` (manual: CREATE
        SCHEMA)."""
        if not ctx.schemaElement():
            return None
        schema = self.ident(ctx.name()) if ctx.name() is not None else self.ident(ctx.roleSpec())
        for el in ctx.schemaElement():
            stmt = el.createStmt() or el.createIndexStmt()
            if stmt is None:
                continue
            self._creation_schema = schema
            try:
                self.visit(stmt)
            finally:
                self._creation_schema = None
        return None

    def visitAlterSchemaStmt(self, ctx: P.AlterSchemaStmtContext):
        if ctx.RENAME() is None:
            return None
        old, new = self.ident(ctx.name(0)), self.ident(ctx.name(1))
        moved = [t.id for t in list(self.tables) if t.id.schema == old]
        for tid in moved:  # children first name their parents' new ids, then every table moves
            self.repoint_children(tid, TableId(tid.database, new, tid.name), ctx)
        for tid in moved:
            self.rename_table(tid, TableId(tid.database, new, tid.name), ctx)
        for key in [k for k in self.tables.types if k.startswith(old + ".")]:
            info = dict(self.tables.types[key], schema=new)
            self.later(_drop_type(key))
            self.later(_put_type(f"{new}.{info['name']}", info))
        return None

    # -- types and domains -------------------------------------------------------------

    def visitCreateEnumType(self, ctx: P.CreateEnumTypeContext):
        key = self.type_key(self.name_parts(ctx.qualifiedName()), create=True)
        schema, _, name = key.partition(".")
        labels = [_string_value(s.getText()) for s in ctx.stringConst()]
        self.later(_put_type(key, {"kind": "enum", "schema": schema, "name": name, "labels": labels}))
        return None

    def visitCreateCompositeType(self, ctx: P.CreateCompositeTypeContext):
        key = self.type_key(self.name_parts(ctx.qualifiedName()), create=True)
        schema, _, name = key.partition(".")
        attrs = [self.attribute_column(a.colId(), a.typeName(), a.anyName()).to_json()
                 for a in ctx.compositeAttribute()]
        self.later(_put_type(key, {"kind": "composite", "schema": schema, "name": name, "attributes": attrs}))
        return None

    def attribute_column(self, name_ctx: Any, type_ctx: P.TypeNameContext, collate_ctx: Any = None) -> Column:
        """A composite type's attribute as a model column (``ordinal_position`` 0)."""
        fields, _serial = self.type_fields(type_ctx)
        fields.pop("_domain_not_null", None)
        if collate_ctx is not None:
            fields["collation_name"] = self.collation_name(collate_ctx)
        return Column(name=self.ident(name_ctx), ordinal_position=0, **fields)

    # ALTER TYPE ... ADD | DROP | ALTER ATTRIBUTE, RENAME ATTRIBUTE (manual: ALTER TYPE): the
    # registry's attributes change; with CASCADE the typed tables (CREATE TABLE ... OF type)
    # change as their columns would

    def composite_info(self, ctx: Any) -> tuple[str, dict[str, Any]] | None:
        key = self.type_key(self.name_parts(ctx.qualifiedName()))
        info = self.tables.types.get(key or "")
        if info is None or info.get("kind") != "composite":
            self.warn(f"composite type {ctx.qualifiedName().getText()} is not known; statement ignored")
            return None
        return key, info

    def visitAlterTypeAttributes(self, ctx: P.AlterTypeAttributesContext):
        found = self.composite_info(ctx)
        if found is None:
            return None
        key, info = found
        attrs = [Column.from_json(a) for a in info["attributes"]]
        typed = [tid for tid in self.typed_tables(info)]
        for cmd in ctx.alterTypeCmd():
            name = self.ident(cmd.colId())
            at = next((i for i, a in enumerate(attrs) if a.name == name), None)
            cascade = cmd.dropBehavior() is not None and cmd.dropBehavior().CASCADE() is not None
            if isinstance(cmd, P.AddAttributeContext):
                if at is not None:
                    raise self.error(cmd, f"column \"{name}\" of relation \"{info['name']}\" already exists")
                col = self.attribute_column(cmd.colId(), cmd.typeName(), cmd.anyName())
                attrs.append(col)
                edit = (lambda e, col=col: self.append_column(e, col))
            elif at is None:
                if isinstance(cmd, P.DropAttributeContext) and cmd.ifExists() is not None:
                    continue
                raise self.error(cmd, f"column \"{name}\" of relation \"{info['name']}\" does not exist")
            elif isinstance(cmd, P.DropAttributeContext):
                del attrs[at]
                edit = (lambda e, name=name: e.drop_column(name, whole_keys=True))
            else:
                new = self.attribute_column(cmd.colId(), cmd.typeName(), cmd.anyName())
                attrs[at] = new
                fields = {k: getattr(new, k) for k in ("data_type", "column_type", "character_maximum_length",
                          "character_octet_length", "numeric_precision", "numeric_scale", "datetime_precision",
                          "interval_type", "enum_values", "array_dimensions", "udt_schema", "udt_name",
                          "domain_schema", "domain_name", "domain_base_type")}
                edit = (lambda e, name=name, fields=fields, coll=new.collation_name:
                        e.replace_column(name, self.retyped_column(e.column(name), fields, coll)))
            if cascade:
                for tid in typed:
                    self.alter_table(tid, edit, cmd)
        self.later(_put_type(key, dict(info, attributes=[a.to_json() for a in attrs])))
        return None

    def visitRenameTypeAttribute(self, ctx: P.RenameTypeAttributeContext):
        found = self.composite_info(ctx)
        if found is None:
            return None
        key, info = found
        old, new = self.ident(ctx.colId(0)), self.ident(ctx.colId(1))
        attrs = [dict(a, name=new) if a["name"] == old else a for a in info["attributes"]]
        if ctx.dropBehavior() is not None and ctx.dropBehavior().CASCADE() is not None:
            for tid in self.typed_tables(info):
                self.alter_table(tid, lambda e: e.rename_column(old, new), ctx)
        self.later(_put_type(key, dict(info, attributes=attrs)))
        return None

    def typed_tables(self, info: dict[str, Any]) -> list[TableId]:
        """The known tables created ``OF`` a composite type (recorded in its registry entry
        as ``[schema, name]``; a typed table renamed since is not followed)."""
        db = self.database()
        return [tid for tid in (TableId(db, s, n) for s, n in info.get("typed_tables", []))
                if self.get_table(tid) is not None]

    def visitCreateOtherType(self, ctx: P.CreateOtherTypeContext):
        key = self.type_key(self.name_parts(ctx.qualifiedName()), create=True)
        schema, _, name = key.partition(".")
        kind = "range" if ctx.RANGE() is not None else "base"
        self.later(_put_type(key, {"kind": kind, "schema": schema, "name": name}))
        return None

    def enum_info(self, ctx: Any) -> tuple[str, dict[str, Any]]:
        key = self.type_key(self.name_parts(ctx.qualifiedName()))
        info = self.tables.types.get(key or "")
        if info is None or info.get("kind") != "enum":
            raise self.error(ctx.qualifiedName(), f"type {ctx.qualifiedName().getText()} is not a known enum")
        return key, info

    def visitAddEnumValue(self, ctx: P.AddEnumValueContext):
        key, info = self.enum_info(ctx)
        labels = list(info["labels"])
        strings = [_string_value(s.getText()) for s in ctx.stringConst()]
        new = strings[0]
        if new in labels:
            if ctx.ifNotExists() is not None:
                return None
            raise self.error(ctx, f"enum label \"{new}\" already exists")
        if len(strings) > 1:
            anchor = strings[1]
            if anchor not in labels:
                raise self.error(ctx, f"\"{anchor}\" is not an existing enum label")
            i = labels.index(anchor)
            labels.insert(i if ctx.BEFORE() is not None else i + 1, new)
        else:
            labels.append(new)
        self.set_enum_labels(key, info, labels)
        return None

    def visitRenameEnumValue(self, ctx: P.RenameEnumValueContext):
        key, info = self.enum_info(ctx)
        old, new = (_string_value(s.getText()) for s in ctx.stringConst())
        labels = list(info["labels"])
        if old not in labels:
            raise self.error(ctx, f"\"{old}\" is not an existing enum label")
        labels[labels.index(old)] = new
        self.set_enum_labels(key, info, labels)
        return None

    def set_enum_labels(self, key: str, info: dict[str, Any], labels: list[str]) -> None:
        """New labels for enum ``key``: in the registry, in domains over it and in every
        column whose type is the enum, an array of it or a domain over it."""
        schema, _, name = key.partition(".")
        self.later(_put_type(key, dict(info, labels=labels)))
        for dkey, d in list(self.tables.types.items()):
            if d.get("kind") == "domain" and (d["base"].get("udt_schema"), d["base"].get("udt_name")) in ((schema, name), (schema, "_" + name)):
                self.later(_put_type(dkey, dict(d, base=dict(d["base"], enum_values=list(labels)))))
        self.update_columns_of_type(schema, name, enum_values=tuple(labels))

    def update_columns_of_type(self, schema: str, name: str, **changes: Any) -> None:
        for t in list(self.tables):
            current = self.get_table(t.id)
            if current is None:
                continue
            hits = [c.name for c in current.columns
                    if (c.udt_schema, c.udt_name) in ((schema, name), (schema, "_" + name))]
            if hits:
                self.alter_table(current.id, lambda e, h=hits: [e.update_column(n, **changes) for n in h])

    def visitRenameType(self, ctx: P.RenameTypeContext):
        key = self.type_key(self.name_parts(ctx.qualifiedName()))
        if key is None:
            self.warn(f"type {ctx.qualifiedName().getText()} is not known; rename ignored")
            return None
        self.move_type(key, key.partition(".")[0], self.ident(ctx.name()))
        return None

    def visitSetTypeSchema(self, ctx: P.SetTypeSchemaContext):
        key = self.type_key(self.name_parts(ctx.qualifiedName()))
        if key is None:
            return None
        self.move_type(key, self.ident(ctx.name()), key.partition(".")[2])
        return None

    def move_type(self, key: str, schema: str, name: str) -> None:
        info = self.tables.types[key]
        old_schema, old_name = info["schema"], info["name"]
        new = dict(info, schema=schema, name=name)
        self.later(_drop_type(key))
        self.later(_put_type(f"{schema}.{name}", new))
        old_shown, new_shown = self.visible_name(old_schema, old_name), self.visible_name(schema, name)
        for t in list(self.tables):
            current = self.get_table(t.id)
            if current is None:
                continue
            edits: dict[str, dict[str, Any]] = {}
            for c in current.columns:
                ch: dict[str, Any] = {}
                if (c.udt_schema, c.udt_name) == (old_schema, old_name):
                    ch.update(udt_schema=schema, udt_name=name)
                elif (c.udt_schema, c.udt_name) == (old_schema, "_" + old_name):
                    ch.update(udt_schema=schema, udt_name="_" + name)
                if (c.domain_schema, c.domain_name) == (old_schema, old_name):
                    ch.update(domain_schema=schema, domain_name=name)
                if ch and c.column_type in (old_shown, old_shown + "[]"):
                    ch["column_type"] = new_shown + c.column_type[len(old_shown):]
                if ch:
                    edits[c.name] = ch
            if edits:
                self.alter_table(current.id, lambda e, ed=edits: [e.update_column(n, **v) for n, v in ed.items()])

    def visitCreateDomainStmt(self, ctx: P.CreateDomainStmtContext):
        key = self.type_key(self.name_parts(ctx.qualifiedName()), create=True)
        schema, _, name = key.partition(".")
        fields, serial = self.type_fields(ctx.typeName())
        if serial is not None:
            raise self.error(ctx.typeName(), f"type \"{ctx.typeName().getText()}\" does not exist")
        base_not_null = fields.pop("_domain_not_null", False)
        not_null, collation = base_not_null, fields.pop("collation_name", None)
        for dc in ctx.domainConstraint():
            if dc.COLLATE() is not None:
                collation = self.collation_name(dc.anyName())
            elif dc.NOT() is not None and dc.NULL() is not None:
                not_null = True
            elif dc.NULL() is not None and dc.DEFAULT() is None:
                not_null = False
        if fields.get("domain_base_type") is None:
            fields["domain_base_type"] = fields.get("column_type")
        self.later(_put_type(key, {"kind": "domain", "schema": schema, "name": name, "base": _jsonable(fields),
                                   "not_null": not_null, "collation": collation}))
        return None

    def visitDomainSetNotNull(self, ctx: P.DomainSetNotNullContext):
        return self.domain_not_null(ctx, True)

    def visitDomainDropNotNull(self, ctx: P.DomainDropNotNullContext):
        return self.domain_not_null(ctx, False)

    def domain_not_null(self, ctx: Any, not_null: bool):
        key = self.type_key(self.name_parts(ctx.qualifiedName()))
        info = self.tables.types.get(key or "")
        if info is None or info.get("kind") != "domain":
            self.warn(f"domain {ctx.qualifiedName().getText()} is not known; statement ignored")
            return None
        self.later(_put_type(key, dict(info, not_null=not_null)))
        schema, name = info["schema"], info["name"]
        for t in list(self.tables):
            current = self.get_table(t.id)
            if current is None:
                continue
            hits = [c.name for c in current.columns if (c.domain_schema, c.domain_name) == (schema, name)]
            if not hits:
                continue
            if not_null:
                self.alter_table(current.id, lambda e, h=hits: [e.update_column(n, nullable=False) for n in h])
            else:
                self.alter_table(current.id, lambda e, h=hits: [e.update_column(n, nullable=n not in e.primary_key)
                                                              for n in h])
        return None

    def visitDomainRename(self, ctx: P.DomainRenameContext):
        key = self.type_key(self.name_parts(ctx.qualifiedName()))
        if key is not None:
            self.move_type(key, key.partition(".")[0], self.ident(ctx.name()))
        return None

    def visitDomainSetSchema(self, ctx: P.DomainSetSchemaContext):
        key = self.type_key(self.name_parts(ctx.qualifiedName()))
        if key is not None:
            self.move_type(key, self.ident(ctx.name()), key.partition(".")[2])
        return None

    # -- sequences -----------------------------------------------------------------------

    def visitCreateSequenceStmt(self, ctx: P.CreateSequenceStmtContext):
        if isinstance(ctx.persistence(), P.TempPersistenceContext):
            return None
        key = self.type_key(self.name_parts(ctx.qualifiedName()), create=True)
        schema, _, name = key.partition(".")
        if ctx.ifNotExists() is not None and key in self.tables.types:
            return None
        info: dict[str, Any] = {"kind": "sequence", "schema": schema, "name": name}
        owner = self.sequence_owner(ctx.objectOptions())
        if owner:
            info["owned_by"] = owner
        self.later(_put_type(key, info))
        return None

    def sequence_owner(self, ctx: Any) -> list[str] | None:
        """``OWNED BY table.column`` among sequence options: ``[str(table id), column]``;
        ``[]`` for ``OWNED BY NONE``; ``None`` when absent."""
        words = [t.getText() for t in _terminals(ctx)] if ctx is not None else []
        low = [w.lower() for w in words]
        for i in range(len(low) - 2):
            if low[i] == "owned" and low[i + 1] == "by":
                rest = words[i + 2:]
                if low[i + 2] == "none":
                    return []
                n = 1
                while n < len(rest) and rest[n] == "." and n + 1 < len(rest):
                    n += 2
                parts = [_token_name(w) for w in rest[:n][0::2]]
                if len(parts) < 2:
                    return None
                tid = self.table_id_from_parts(parts[:-1])
                return [str(tid), parts[-1]]
        return None

    def visitAlterSequenceStmt(self, ctx: P.AlterSequenceStmtContext):
        """``ALTER SEQUENCE ... RENAME TO | SET SCHEMA``: the registry entry moves and every
        ``nextval('seq'::regclass)`` default naming it is printed with its new name (the
        default holds the sequence's oid; ``pg_get_expr`` prints its current name)."""
        key = self.type_key(self.name_parts(ctx.qualifiedName()))
        if key is None:
            return None
        if ctx.RENAME() is None and ctx.SCHEMA() is None:
            owner = self.sequence_owner(ctx.objectOptions())
            if owner is not None:
                self.later(_put_type(key, dict(self.tables.types[key], owned_by=owner or None)))
            return None
        info = self.tables.types[key]
        schema = self.ident(ctx.name()) if ctx.SCHEMA() is not None else info["schema"]
        name = self.ident(ctx.name()) if ctx.RENAME() is not None else info["name"]
        self.move_sequence(key, schema, name, [t.id for t in self.tables])
        return None

    def move_sequence(self, key: str, schema: str, name: str, table_ids: Iterable[TableId]) -> None:
        """Rename / move sequence ``key`` to ``schema.name`` and re-print the defaults of the
        columns of ``table_ids`` that call ``nextval`` on it."""
        info = self.tables.types[key]
        self.later(_drop_type(key))
        self.later(_put_type(f"{schema}.{name}", dict(info, schema=schema, name=name)))
        printed = self.nextval_text(schema, name)
        for tid in table_ids:
            table = self.get_table(tid)
            if table is None:
                continue
            hits = [c.name for c in table.columns if self.nextval_key(c.column_default) == key]
            if hits:
                self.alter_table(tid, lambda e, hits=hits: [e.update_column(h, column_default=printed) for h in hits])

    _NEXTVAL = re.compile(r"nextval\('((?:[^']|'')+)'::regclass\)")

    def nextval_key(self, default: str | None) -> str | None:
        """The registry key of the sequence a ``nextval('seq'::regclass)`` default calls."""
        m = self._NEXTVAL.fullmatch(default or "")
        if m is None:
            return None
        parts = [p[1:-1].replace('""', '"') if p.startswith('"') else p
                 for p in _split_dotted(m.group(1).replace("''", "'"))]
        if len(parts) >= 2:
            return f"{parts[-2]}.{parts[-1]}"
        for schema in self.search_path:
            if f"{schema}.{parts[0]}" in self.tables.types:
                return f"{schema}.{parts[0]}"
        return None

    def owned_sequences(self, tid: TableId) -> list[str]:
        """Registry keys of the sequences owned by a column of ``tid`` (``serial``)."""
        return [k for k, v in self.tables.types.items()
                if v.get("kind") == "sequence" and (v.get("owned_by") or [None])[0] == str(tid)]

    # -- indexes -------------------------------------------------------------------------

    def visitCreateIndexStmt(self, ctx: P.CreateIndexStmtContext):
        tid = self.table_id(ctx.qualifiedName())
        if self.get_table(tid) is None:
            if self.get_view(tid) is None:
                self.warn(f"table {tid} is not known; index ignored")
            return None
        unique = ctx.UNIQUE() is not None
        columns: list[str | None] = []
        parts: list[str] = []
        for el in ctx.indexElem():
            parts.append(_squash(self.source_text(el)))
            columns.append(self.ident(el.colId()) if el.colId() is not None else None)
        explicit = None
        for child in ctx.getChildren():
            if hasattr(child, "symbol") and child.symbol.type == P.ON:
                break
            if isinstance(child, P.NameContext):
                explicit = self.ident(child)

        def edit(e: TableEditor) -> None:
            if explicit is not None and any(ix.name == explicit for ix in e.indexes):
                if ctx.ifNotExists() is not None:
                    return
            label = "idx"  # ChooseIndexName: "key" is for UNIQUE constraints, not UNIQUE indexes
            names = [c if c is not None else _expr_name(p) for c, p in zip(columns, parts)]
            name = explicit or self.index_name(e, names, label)
            e.add_index(Index(name, "UNIQUE" if unique else "INDEX", tuple(columns), tuple(parts)))

        self.alter_table(tid, edit, ctx)
        return None

    def visitAlterIndexStmt(self, ctx: P.AlterIndexStmtContext):
        if ctx.RENAME() is None:
            return None
        parts = self.name_parts(ctx.qualifiedName())
        old, new = parts[-1], self.ident(ctx.name())
        schemas = [parts[-2]] if len(parts) > 1 else self.search_path
        for t in list(self.tables):
            current = self.get_table(t.id)
            if current is not None and t.id.schema in schemas and any(ix.name == old for ix in current.indexes):
                self.alter_table(current.id, lambda e: e.rename_index(old, new))
                return None
        tid = self.table_id(ctx.qualifiedName())
        if self.get_table(tid) is not None:  # the server renames any relation named (RenameRelation)
            self.rename_relation(tid, tid.with_name(new), ctx)
        return None

    # -- views ---------------------------------------------------------------------------

    def visitCreateViewStmt(self, ctx: P.CreateViewStmtContext):
        if ctx.TEMP() is not None or ctx.TEMPORARY() is not None:
            return None
        return self.make_view(ctx)

    def visitCreateMatViewStmt(self, ctx: P.CreateMatViewStmtContext):
        return self.make_view(ctx)

    def make_view(self, ctx: Any):
        tid = self.table_id(ctx.qualifiedName(), create=True)
        cols = tuple(self.ident(c) for c in ctx.nameList().colId()) if ctx.nameList() is not None else None
        self.create_view(View(tid, _squash(self.source_text(ctx.query())), cols))
        return None

    def visitAlterViewStmt(self, ctx: P.AlterViewStmtContext):
        tid = self.table_id(ctx.qualifiedName())
        if self.get_view(tid) is None or (ctx.RENAME() is None and ctx.SCHEMA() is None):
            return None
        self.move_view(tid, ctx.name(), schema=ctx.SCHEMA() is not None)
        return None

    def move_view(self, tid: TableId, name_ctx: Any, *, schema: bool) -> None:
        """``ALTER [MATERIALIZED] VIEW | TABLE ... RENAME TO name | SET SCHEMA name`` of a view."""
        view = self.get_view(tid)
        new = TableId(tid.database, self.ident(name_ctx) if schema else tid.schema,
                      tid.name if schema else self.ident(name_ctx))
        self.drop_view(tid)
        self.create_view(View(new, view.definition, view.column_names))

    # -- COMMENT, SET --------------------------------------------------------------------

    def comment_value(self, ctx: P.CommentTextContext) -> str | None:
        return None if ctx.NULL() is not None else _string_value(ctx.getText())

    def visitCommentOnTable(self, ctx: P.CommentOnTableContext):
        tid = self.table_id(ctx.qualifiedName())
        text = self.comment_value(ctx.commentText())

        def edit(e: TableEditor) -> None:
            e.comment = text

        if self.get_table(tid) is not None:
            self.alter_table(tid, edit, ctx)
        return None

    def visitCommentOnColumn(self, ctx: P.CommentOnColumnContext):
        parts = self.name_parts(ctx.qualifiedName())
        if len(parts) < 2:
            raise self.error(ctx, "column name must be qualified")
        column = parts[-1]
        tid = self.table_id_from_parts(parts[:-1])
        text = self.comment_value(ctx.commentText())
        if self.get_table(tid) is not None:
            self.alter_table(tid, lambda e: e.update_column(column, comment=text), ctx)
        return None

    def table_id_from_parts(self, parts: list[str]) -> TableId:
        db = self.database()
        if len(parts) >= 3:
            return TableId(parts[-3], parts[-2], parts[-1])
        if len(parts) == 2:
            return TableId(db, parts[0], parts[1])
        for schema in self.search_path:
            tid = TableId(db, schema, parts[0])
            if self.get_table(tid) is not None:
                return tid
        return TableId(db, self.creation_schema(), parts[0])

    def visitVariableSetStmt(self, ctx: P.VariableSetStmtContext):
        if self.ident(ctx.identifierLike()) != "search_path" or ctx.LOCAL() is not None:
            return None
        if ctx.DEFAULT() is not None:
            self.set_search_path(self.initial_search_path())
        else:
            self.set_search_path(tuple(self.set_value(v) for v in ctx.setValue()))
        return None

    def visitVariableResetStmt(self, ctx: P.VariableResetStmtContext):
        if self.ident(ctx.identifierLike()) == "search_path":
            self.set_search_path(self.initial_search_path())
        return None

    def initial_search_path(self) -> tuple[str, ...]:
        """``SET search_path TO DEFAULT`` / ``RESET``: the parser's ``search_path`` option."""
        sp = self.options.get("search_path")
        if sp is None:
            sp = self.dialect.default_options.get("search_path", ("public",)) if self.dialect else ("public",)
        if isinstance(sp, str):
            sp = [x.strip() for x in sp.split(",") if x.strip()]
        return tuple(sp)

    def set_value(self, ctx: P.SetValueContext) -> str:
        if ctx.stringConst() is not None:
            return _string_value(ctx.getText())
        if ctx.colId() is not None:
            return self.ident(ctx.colId())
        return ctx.getText()

    def visitSetConfigCall(self, ctx: P.SetConfigCallContext):
        name, value = (_string_value(s.getText()) for s in ctx.stringConst())
        if name.lower() == "search_path":
            path = tuple(p.strip().strip('"') if p.strip().startswith('"') else p.strip().lower()
                         for p in value.split(",") if p.strip())
            self.set_search_path(path)
        return None

    def set_search_path(self, path: tuple[str, ...]) -> None:
        def _set(t: Tables) -> None:
            t.search_path = path

        self.later(_set)


# ---------------------------------------------------------------------------------- helpers


def _put_type(key: str, info: dict[str, Any]) -> Callable[[Tables], None]:
    def put(t: Tables) -> None:
        t.types = dict(t.types)
        t.types[key] = info

    return put


#: what ``LIKE ... INCLUDING ALL`` includes (manual: CREATE TABLE, LIKE)
# ALTER TABLE runs its subcommands in passes, in written order within a pass, not in written
# order overall: every DROP first, then ALTER COLUMN TYPE, then ADD COLUMN, then column
# attributes and constraints.  ``ALTER TABLE t ADD c int, DROP c`` on a table with a column
# ``c`` replaces it.  Source: ``AlterTablePass`` and ``ATPrepCmd`` / ``ATParseTransformCmd``
# (src/backend/commands/tablecmds.c, PostgreSQL 15); the manual's ALTER TABLE only says the
# actions are applied "in a single pass over the table" where possible.
AT_PASS_DROP, AT_PASS_ALTER_TYPE, AT_PASS_ADD_COL, AT_PASS_ADD_CONSTR, AT_PASS_COL_ATTRS = 0, 1, 4, 5, 6
AT_PASS_ADD_INDEXCONSTR, AT_PASS_ADD_OTHERCONSTR, AT_PASS_MISC = 7, 9, 10

#: alterTableCmd alternative → its pass (AddConstraint: see ``alter_pass``)
ALTER_PASSES: dict[str, int] = {
    "DropColumnContext": AT_PASS_DROP, "DropDefaultContext": AT_PASS_DROP, "DropNotNullContext": AT_PASS_DROP,
    "DropExpressionContext": AT_PASS_DROP, "DropIdentityContext": AT_PASS_DROP,
    "DropConstraintContext": AT_PASS_DROP,
    "AlterColumnTypeContext": AT_PASS_ALTER_TYPE,
    "AddColumnContext": AT_PASS_ADD_COL,
    "SetNotNullContext": AT_PASS_COL_ATTRS,
    "SetDefaultContext": AT_PASS_ADD_OTHERCONSTR, "AddIdentityContext": AT_PASS_ADD_OTHERCONSTR,
}


def alter_pass(cmd: Any) -> int:
    """The ``AlterTablePass`` a subcommand runs in (``ALTER_PASSES``); ``ADD`` of a PRIMARY
    KEY / UNIQUE / EXCLUDE constraint runs with the index-based constraints, other constraints
    after them; everything else (identity options, storage, replica identity, owner, ...) last."""
    name = type(cmd).__name__
    if name == "AddConstraintContext":
        el = cmd.tableConstraint().tableConstraintElem()
        index_based = (P.UniqueTableConstraintContext, P.UniqueUsingIndexContext, P.PrimaryKeyTableConstraintContext,
                       P.PrimaryKeyUsingIndexContext, P.ExcludeTableConstraintContext)
        return AT_PASS_ADD_INDEXCONSTR if isinstance(el, index_based) else AT_PASS_ADD_OTHERCONSTR
    return ALTER_PASSES.get(name, AT_PASS_MISC)


_LIKE_ALL = frozenset({"COMMENTS", "COMPRESSION", "CONSTRAINTS", "DEFAULTS", "GENERATED", "IDENTITY",
                       "INDEXES", "STATISTICS", "STORAGE"})


def _partition_key_names(key: str | None) -> set[str]:
    """The names a ``PARTITION BY`` option (``RANGE (d, lower(k))``) mentions: its columns
    (and function names, which no column test needs to tell apart)."""
    if not key:
        return set()
    body = key.partition("(")[2]
    return {q.replace('""', '"') if q else w.lower()
            for q, w in re.findall(r'"((?:[^"]|"")*)"|([A-Za-z_][A-Za-z0-9_$]*)', body)}


def _is_temp_schema(schema: str | None) -> bool:
    """``pg_temp`` (the session's temporary schema, manual 5.9.3 and CREATE TABLE "TEMPORARY")
    or a backend's ``pg_temp_N``: a table created there is temporary."""
    return schema is not None and re.fullmatch(r"pg_temp(?:_[0-9]+)?", schema) is not None


def copied_column(col: Column) -> Column:
    """A column copied from another relation's column (LIKE, INHERITS, PARTITION OF, OF type,
    CREATE TABLE AS): the server builds it from the type's oid, so ``attndims`` (the model's
    ``array_dimensions``) is 0 even for an array."""
    return col.replace(array_dimensions=0) if col.array_dimensions else col


def _set_owner(key: str, table: str) -> Callable[[Tables], None]:
    """Record that sequence ``key`` is owned by a column of ``table`` (its new id)."""
    def put(t: Tables) -> None:
        info = t.types.get(key)
        if info is not None and info.get("owned_by"):
            t.types = dict(t.types)
            t.types[key] = dict(info, owned_by=[table, info["owned_by"][1]])
    return put


def _drop_type(key: str) -> Callable[[Tables], None]:
    def drop(t: Tables) -> None:
        t.types = {k: v for k, v in t.types.items() if k != key}

    return drop


def _jsonable(fields: dict[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in fields.items()}


def _terminals(ctx: Any) -> Iterable[Any]:
    for c in ctx.getChildren():
        if hasattr(c, "symbol"):
            yield c
        else:
            yield from _terminals(c)


def _is_name(word: str) -> bool:
    """A token that can be a name in a select list: an identifier, a quoted name or a key
    word spelled like an identifier."""
    return word.startswith('"') or bool(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$]*", word)) and \
        word.lower() not in _RESERVED


def _token_name(word: str) -> str:
    """The name a token denotes (quoted exact, unquoted folded)."""
    if word.startswith('"'):
        return _truncate(word[1:-1].replace('""', '"'))
    return _truncate(word.lower())


def _squash(text: str) -> str:
    return " ".join(text.split())


_string_value = _defaults.string_value


def _unicode_escapes(body: str) -> str:
    return re.sub(r"\\(\+[0-9A-Fa-f]{6}|[0-9A-Fa-f]{4})", lambda m: chr(int(m.group(1).lstrip("+"), 16)), body)


_PLAIN_NAME = re.compile(r"[a-z_][a-z0-9_$]*")


def _quote_if_needed(name: str) -> str:
    """``quote_ident``: quoted unless a plain lower-case name (key words aside)."""
    if _PLAIN_NAME.fullmatch(name) and name not in _RESERVED:
        return name
    return '"' + name.replace('"', '""') + '"'


_RESERVED = frozenset("""all analyse analyze and any array as asc asymmetric both case cast check collate column
constraint create current_catalog current_date current_role current_time current_timestamp current_user default
deferrable desc distinct do else end except false fetch for foreign from grant group having in initially intersect
into lateral leading limit localtime localtimestamp not null offset on only or order placing primary references
returning select session_user some symmetric table then to trailing true union unique user using variadic when
where window with""".split())


def _split_dotted(text: str) -> list[str]:
    return [m.group(0) for m in re.finditer(r'"(?:[^"]|"")*"|[^.]+', text)]


def _expr_name(part: str) -> str:
    """``ChooseIndexColumnNames``: an expression column is named after its function (or
    ``expr``)."""
    m = re.match(r"\(?\s*([A-Za-z_][\w]*)\s*\(", part)
    return m.group(1).lower() if m else "expr"
