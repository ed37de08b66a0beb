"""``MySqlDdlVisitor``: MySQL / MariaDB parse trees (grammars/mysql) → changes on ``Tables``.

Owns: reading the parse tree of one statement of ``MySqlParser`` (rule ``ddlStatement``) and
calling the operations of ``ddlcore.DdlVisitor`` (create / alter / rename / drop tables, views,
databases, session variables).  What a data type or a DEFAULT *means* (``column_type``,
lengths, charsets, how MariaDB prints a default) is data in ``types`` and ``charsets``; this
module only reads the tree and puts the pieces together.

Must not know: how statements are split or filtered, how the parser is driven (``ddlcore``).

One method per grammar rule that matters, each small, so a subclass overrides a narrow piece:

* names: ``visitIdentifier`` (→ ``str``), ``visitTableName`` (→ ``TableId``),
  ``visitColumnName``, ``visitIndexName``, ``visitCharsetName``, ``visitCollationName``;
* literals: ``visitStringLiteral`` (→ the string's value), ``visitSignedNumber`` (→ text);
* data types: ``visitDataType`` (→ ``types.DataTypeSpec``) dispatches to one method per type
  family (``visitIntegerType``, ``visitCharacterType``, ``visitEnumType``, ...);
* columns: ``visitColumnDefinition`` (→ ``ColumnDraft``) asks each ``columnAttribute``
  alternative (``visitNullColumnAttribute``, ``visitDefaultColumnAttribute``, ...) for a dict
  of draft fields; ``make_column`` turns a draft into a ``ddlcore.Column``;
  ``visitDefaultValue`` (→ ``types.DefaultValue``);
* table options: each ``tableOption`` alternative returns ``(NAME, value)``;
  ``apply_table_option`` puts it on the table;
* statements: ``visitCreateTable``, ``visitAlterTable`` (each ``alterSpecification``
  alternative edits ``self.editor``), ``visitDropTable``, ``visitRenameTable``, ... .

While a CREATE TABLE, ALTER TABLE or CREATE INDEX is visited, ``self.editor`` is the
``TableEditor`` of the table being built or changed.

Server behaviour followed (MariaDB 10.11 unless ``flavor="mysql"``), each checked against a
MariaDB 10.11 server (tests/mysql/test_visitor.py, tests/mysql/test_oracle.py):

* A column is nullable unless NOT NULL, PRIMARY KEY, AUTO_INCREMENT or SERIAL
  (``explicit_defaults_for_timestamp`` is ON, the default of both servers, so TIMESTAMP
  columns get no implicit NOT NULL or default).
* Charsets are inherited server → database → table → column (MySQL manual 12.3.2–12.3.5);
  in ALTER TABLE the statement's table options apply before its column changes, so new and
  modified columns inherit the new table default.
* A column-level ``REFERENCES`` creates a foreign key in MariaDB and is ignored by MySQL;
  a column-level CHECK is named after its column in MariaDB.
* Unnamed indexes are named after their first column (``a``, ``a_2``, ...); unnamed foreign
  keys ``<table>_ibfk_<n>`` (InnoDB).
* Temporary tables are not modelled (a row-based binary log holds no row of them): CREATE /
  DROP TEMPORARY TABLE only give a warning.
* CREATE TABLE ... SELECT adds the selected columns that name a column of a table the model
  knows (``a``, ``t.a AS b``, ``*``, ``t.*``), typed as their source without AUTO_INCREMENT
  and generation (manual 15.1.20.4); other select expressions cannot be typed without
  evaluating them: they are left out with a warning.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Iterable

from ddlcore import (CheckConstraint, Column, Database, DdlVisitor, ForeignKey, Index, Table,
                     TableEditor, TableId, View)

from . import charsets, types
from ._generated.MySqlParser import MySqlParser
from ._generated.MySqlParserVisitor import MySqlParserVisitor
from .literals import bit_literal, hex_literal, strip_introducer, unquote_identifier, unquote_string
from .types import DataTypeSpec, DefaultValue

__all__ = ["MySqlDdlVisitor", "ColumnDraft"]

P = MySqlParser

# Column fields that convert_charset_fields reads and may change.
_CHARSET_FIELDS = ("data_type", "column_type", "character_maximum_length", "character_octet_length",
                   "character_set_name", "collation_name")


#: table option holding TiDB's clustered-index choice, named as TiDB's
#: ``information_schema.TABLES`` column (TiDB manual "Clustered Indexes"): ``CLUSTERED`` or
#: ``NONCLUSTERED`` when the DDL says so (absent: TiDB's default, ``tidb_enable_clustered_index``)
TIDB_PK_TYPE = "TIDB_PK_TYPE"


@dataclass
class ColumnDraft:
    """A column definition as read from the tree, before the type catalogue and the table's
    defaults make it a ``Column``.

    ``spec``: the data type; ``nullable``: ``None`` when neither NULL nor NOT NULL was
    written; ``default``: the DEFAULT clause; ``on_update``: the ON UPDATE text; ``charset`` /
    ``collation``: CHARACTER SET / COLLATE written among the attributes (they complete
    ``spec``); ``primary_key`` / ``unique``: inline keys; ``checks``: inline CHECK
    constraints; ``references``: an inline ``REFERENCES`` clause (its parse tree);
    ``serial``: ``SERIAL DEFAULT VALUE`` or the ``SERIAL`` type."""

    spec: DataTypeSpec
    nullable: bool | None = None
    default: DefaultValue | None = None
    on_update: str | None = None
    auto_increment: bool = False
    primary_key: bool = False
    unique: bool = False
    comment: str | None = None
    charset: str | None = None
    collation: str | None = None
    generation_expression: str | None = None
    generation_stored: bool | None = None
    invisible: bool = False
    srid: int | None = None
    checks: list[CheckConstraint] = field(default_factory=list)
    references: Any = None
    serial: bool = False
    auto_random: tuple[int, int] | None = None  # TiDB AUTO_RANDOM(shard_bits, range_bits)
    clustered: str | None = None  # TiDB inline PRIMARY KEY CLUSTERED | NONCLUSTERED


class MySqlDdlVisitor(DdlVisitor, MySqlParserVisitor):
    """The MySQL / MariaDB visitor (see the module docstring for its parts)."""

    #: set while a table is built or altered
    editor: TableEditor | None = None

    # ======================================================================== options

    @property
    def flavor(self) -> str:
        """``"mariadb"`` (default), ``"mysql"`` or ``"tidb"``: which server's catalog rendering
        to follow."""
        return self.options.get("flavor") or "mariadb"

    def require_tidb(self, ctx: Any, what: str) -> None:
        """Raise ``DdlParseError`` at ``ctx`` unless the flavor is ``tidb``: ``what`` is TiDB
        syntax that MySQL and MariaDB reject."""
        if self.flavor != "tidb":
            raise self.error(ctx, f"{what} is TiDB syntax (parser option flavor='tidb'); "
                                  f"{'MariaDB' if self.flavor == 'mariadb' else 'MySQL'} rejects it")

    @property
    def backslash_escapes(self) -> bool:
        return not self.options.get("no_backslash_escapes", False)

    # ======================================================================== statements

    def visitDdlStatement(self, ctx: P.DdlStatementContext):
        return self.visit(ctx.statement())

    def visitStatement(self, ctx: P.StatementContext):
        return self.visit(ctx.getChild(0))

    # ------------------------------------------------------------------ CREATE TABLE

    def visitCreateTable(self, ctx: P.CreateTableContext):
        """CREATE [OR REPLACE] [TEMPORARY] TABLE [IF NOT EXISTS] t ..."""
        table_id = self.visitTableName(ctx.tableName())
        if ctx.TEMPORARY() is not None:
            self.warn(f"temporary table {table_id} is not modelled")
            return None
        if ctx.ifNotExists() is not None and self.get_view(table_id) is not None:
            # the name is a view's: the server creates nothing (a note, not an error)
            self.warn(f"{table_id} is a view; CREATE TABLE IF NOT EXISTS changed nothing")
            return None
        if ctx.createTableLike() is not None:
            table = self.create_table_like(table_id, ctx.createTableLike())
        else:
            table = self.build_table(table_id, ctx)
        if table is not None:
            self.create_table(table, if_not_exists=ctx.ifNotExists() is not None,
                              or_replace=ctx.REPLACE() is not None)
        return table

    def build_table(self, table_id: TableId, ctx: P.CreateTableContext) -> Table:
        """The table a CREATE TABLE (not ... LIKE) defines."""
        cs, coll = self.database_defaults(table_id.database)
        editor = Table(table_id, default_character_set_name=cs, default_collation_name=coll).edit(self.column_key)
        self.editor = editor
        try:
            if ctx.tableOptions() is not None:
                self.apply_table_options(editor, [self.visit(o) for o in ctx.tableOptions().tableOption()])
            definitions = ctx.createDefinitions().createDefinition() if ctx.createDefinitions() else []
            # columns first, then the columns of a SELECT, then keys and constraints: a key may
            # name a column defined after it or one the SELECT brings
            for d in definitions:
                if isinstance(d, P.ColumnDeclarationContext):
                    self.visit(d)
            if ctx.createTableSelect() is not None:
                self.visit(ctx.createTableSelect())
            for d in definitions:
                if not isinstance(d, P.ColumnDeclarationContext):
                    self.visit(d)
            self.system_versioning(editor)
            return editor.build()
        finally:
            self.editor = None

    #: the names MariaDB gives the period columns of ``WITH SYSTEM VERSIONING`` when the table
    #: declares none (MariaDB KB "System-Versioned Tables": invisible ``row_start``/``row_end``)
    IMPLICIT_PERIOD = ("row_start", "row_end")

    def system_versioning(self, editor: TableEditor) -> None:
        """A table ``WITH SYSTEM VERSIONING`` that declares no ``AS ROW START/END`` columns has
        MariaDB's implicit ones: ``row_start`` and ``row_end``, ``TIMESTAMP(6)``, invisible,
        after every other column.  ``information_schema.COLUMNS`` does not list them, but every
        binlog row image carries them, so the model has them (``invisible``, generation
        ``ROW START`` / ``ROW END``).  Without versioning, implicit ones are removed."""
        versioned = editor.options.get("SYSTEM VERSIONING") == "YES"
        explicit = any(c.generation_expression in ("ROW START", "ROW END") and not c.invisible
                       for c in editor.columns)
        implicit = [c.name for c in editor.columns if c.invisible and c.generation_expression in ("ROW START", "ROW END")]
        if versioned and not explicit:
            ids = {name: editor.column(name).column_id for name in implicit}
            for name in implicit:  # keep them last (and keep their identity)
                editor.drop_column(name)
            for name, bound in zip(self.IMPLICIT_PERIOD, ("ROW START", "ROW END")):
                editor.add_column(Column(name, 0, "timestamp", "timestamp(6)", nullable=False,
                                         datetime_precision=6, invisible=True,
                                         generation_expression=bound, generation_stored=True))
                if ids.get(name) is not None:
                    editor.update_column(name, column_id=ids[name])
        elif not versioned:
            for name in implicit:
                editor.drop_column(name)

    def create_table_like(self, table_id: TableId, ctx: P.CreateTableLikeContext) -> Table | None:
        """CREATE TABLE t LIKE s: a copy of s's definition (foreign keys are not copied,
        manual 15.1.20.3)."""
        source_id = self.visitTableName(ctx.tableName())
        source = self.get_table(source_id)
        if source is None:
            self.warn(f"table {source_id} is not known; CREATE TABLE {table_id} LIKE it ignored")
            return None
        return dataclasses.replace(source, id=table_id, foreign_keys=())

    # create_definition alternatives: each adds to self.editor

    def visitColumnDeclaration(self, ctx: P.ColumnDeclarationContext):
        name = self.visitColumnName(ctx.columnName())
        draft = self.visitColumnDefinition(ctx.columnDefinition())
        self.add_column(name, draft)

    def visitPrimaryKeyDeclaration(self, ctx: P.PrimaryKeyDeclarationContext):
        return self.visit(ctx.primaryKeyDefinition())

    def visitUniqueKeyDeclaration(self, ctx: P.UniqueKeyDeclarationContext):
        return self.visit(ctx.uniqueKeyDefinition())

    def visitForeignKeyDeclaration(self, ctx: P.ForeignKeyDeclarationContext):
        return self.visit(ctx.foreignKeyDefinition())

    def visitCheckConstraintDeclaration(self, ctx: P.CheckConstraintDeclarationContext):
        return self.visit(ctx.checkConstraintDefinition())

    def visitIndexDeclaration(self, ctx: P.IndexDeclarationContext):
        return self.visit(ctx.indexDefinition())

    def visitPeriodDeclaration(self, ctx: P.PeriodDeclarationContext):
        return None  # MariaDB PERIOD FOR: no column of its own

    # keys and constraints (CREATE TABLE and ALTER TABLE ... ADD)

    def visitPrimaryKeyDefinition(self, ctx: P.PrimaryKeyDefinitionContext):
        columns = [c for c, _ in self.key_parts(ctx.keyPartList())]
        self.editor.set_primary_key([c for c in columns if c is not None])
        for opt in ctx.indexOption():
            if isinstance(opt, P.ClusteredIndexOptionContext):
                self.require_tidb(opt, opt.getText().upper())
                self.editor.set_option(TIDB_PK_TYPE, opt.getText().upper())
            elif isinstance(opt, P.GlobalIndexOptionContext):
                self.require_tidb(opt, opt.getText().upper())

    def visitUniqueKeyDefinition(self, ctx: P.UniqueKeyDefinitionContext):
        name = self._constraint_or_index_name(ctx.constraintName(), ctx.indexName())
        self.add_index(name, "UNIQUE", ctx.keyPartList(), ctx.indexOption())

    def visitIndexDefinition(self, ctx: P.IndexDefinitionContext):
        kind = ctx.indexKind.text.upper()
        kind = "INDEX" if kind in ("INDEX", "KEY") else kind
        name = self.visitIndexName(ctx.indexName()) if ctx.indexName() is not None else None
        self.add_index(name, kind, ctx.keyPartList(), ctx.indexOption())

    def visitForeignKeyDefinition(self, ctx: P.ForeignKeyDefinitionContext):
        name = self._constraint_or_index_name(ctx.constraintName(), ctx.indexName())
        columns = [self.visitColumnName(c) for c in ctx.columnName()]
        self.add_foreign_key(name, columns, ctx.referenceDefinition())

    def visitCheckConstraintDefinition(self, ctx: P.CheckConstraintDefinitionContext) -> CheckConstraint:
        name = None
        if ctx.constraintName() is not None and ctx.constraintName().identifier() is not None:
            name = self.visitIdentifier(ctx.constraintName().identifier())
        check = CheckConstraint(name, self.source_text(ctx.balancedTokens()))
        if self.editor is not None and not self._in_column:
            self.editor.add_check(check)
        return check

    _in_column = False

    def _constraint_or_index_name(self, constraint: Any, index_name: Any) -> str | None:
        if index_name is not None:
            return self.visitIndexName(index_name)
        if constraint is not None and constraint.identifier() is not None:
            return self.visitIdentifier(constraint.identifier())
        return None

    def key_parts(self, ctx: P.KeyPartListContext) -> list[tuple[str | None, str]]:
        """``(column name or None for a functional part, source text)`` per key part."""
        out = []
        for part in ctx.keyPart():
            column = self.visitColumnName(part.columnName()) if part.columnName() is not None else None
            out.append((column, self.source_text(part)))
        return out

    def add_index(self, name: str | None, kind: str, key_parts: P.KeyPartListContext,
                  options: Iterable[Any] = ()) -> Index:
        """Add an index of ``kind`` (``UNIQUE``, ``INDEX``, ``FULLTEXT``, ``SPATIAL``); an
        unnamed one is named after its first column as the server does."""
        parts = self.key_parts(key_parts)
        comment = None
        for opt in options:
            if isinstance(opt, P.CommentIndexOptionContext):
                comment = self.visitStringLiteral(opt.stringLiteral()) or None
            elif isinstance(opt, (P.GlobalIndexOptionContext, P.ClusteredIndexOptionContext)):
                self.require_tidb(opt, opt.getText().upper())
        if name is None:
            name = self.unique_index_name(next((c for c, _ in parts if c is not None), "functional_index"))
        index = Index(name, kind, tuple(c for c, _ in parts), tuple(p for _, p in parts), comment)
        self.editor.add_index(index)
        return index

    def unique_index_name(self, base: str) -> str:
        """``base``, or ``base_2``, ``base_3``, ... if an index of that name exists."""
        taken = {(ix.name or "").lower() for ix in self.editor.indexes}
        name, n = base, 1
        while name.lower() in taken:
            n += 1
            name = f"{base}_{n}"
        return name

    def add_foreign_key(self, name: str | None, columns: list[str], ref: P.ReferenceDefinitionContext) -> ForeignKey:
        referenced = self.visitTableName(ref.tableName())
        ref_columns: list[str] = []
        if ref.keyPartList() is not None:
            ref_columns = [c for c, _ in self.key_parts(ref.keyPartList()) if c is not None]
        actions = {a.action.text.upper(): " ".join(self.source_text(a.referenceOption()).upper().split())
                   for a in ref.referenceAction()}
        if name is None:
            prefix = f"{self.editor.id.name}_ibfk_"
            used = [int(fk.name[len(prefix):]) for fk in self.editor.foreign_keys
                    if fk.name and fk.name.startswith(prefix) and fk.name[len(prefix):].isdigit()]
            name = f"{prefix}{max(used, default=0) + 1}"
        fk = ForeignKey(name, tuple(columns), referenced, tuple(ref_columns),
                        actions.get("DELETE"), actions.get("UPDATE"))
        self.editor.add_foreign_key(fk)
        return fk

    # ------------------------------------------------------------------ columns

    def visitColumnDefinition(self, ctx: P.ColumnDefinitionContext) -> ColumnDraft:
        """A ``ColumnDraft``: the data type, then each attribute's fields in order."""
        draft = ColumnDraft(self.visitDataType(ctx.dataType()))
        self._in_column = True
        try:
            for attr in ctx.columnAttribute():
                for key, value in (self.visit(attr) or {}).items():
                    if key == "checks":
                        draft.checks.extend(value)
                    else:
                        setattr(draft, key, value)
        finally:
            self._in_column = False
        return draft

    def add_column(self, name: str, draft: ColumnDraft, *, first: bool = False, after: str | None = None,
                   replace: str | None = None) -> Column:
        """Add the column (or, with ``replace``, put it in place of that column: MODIFY /
        CHANGE) to ``self.editor``, with its inline keys and constraints."""
        editor = self.editor
        column = self.make_column(name, draft, editor.default_character_set_name, editor.default_collation_name)
        if replace is None:
            editor.add_column(column, first=first, after=after)
        else:
            editor.replace_column(replace, column, first=first, after=after)
            if any(self.column_key(c) == self.column_key(column.name) for c in editor.primary_key):
                editor.update_column(column.name, nullable=False)  # key columns stay NOT NULL
        if draft.primary_key:
            editor.set_primary_key([column.name])
        if draft.clustered is not None:
            editor.set_option(TIDB_PK_TYPE, draft.clustered)
        if draft.auto_random is not None:
            editor.set_option("AUTO_RANDOM", f"{column.name}({draft.auto_random[0]},{draft.auto_random[1]})")
        if draft.unique or draft.serial:
            editor.add_index(Index(self.unique_index_name(column.name), "UNIQUE", (column.name,), (f"`{column.name}`",)))
        for check in draft.checks:
            if check.name is None and self.flavor == "mariadb":
                check = CheckConstraint(column.name, check.expression)  # MariaDB names it after the column
            editor.add_check(check)
        if draft.references is not None and self.flavor == "mariadb":  # MySQL ignores inline REFERENCES
            self.add_foreign_key(None, [column.name], draft.references)
        return column

    def make_column(self, name: str, draft: ColumnDraft, table_charset: str | None,
                    table_collation: str | None) -> Column:
        """The ``Column`` for a draft in a table whose defaults are ``table_charset`` /
        ``table_collation`` (``ordinal_position`` is set when the table is built)."""
        spec = draft.spec
        if draft.charset is not None or draft.collation is not None:
            spec = dataclasses.replace(spec, charset=draft.charset or spec.charset,
                                       collation=draft.collation or spec.collation)
        fields = self.column_fields(spec, table_charset, table_collation)
        if fields.pop("serial", False):  # the SERIAL type: NOT NULL AUTO_INCREMENT UNIQUE
            draft.serial = True
        serial = draft.serial
        nullable = draft.nullable if draft.nullable is not None else True
        if draft.primary_key or draft.auto_increment or serial:
            nullable = False
        default = types.render_default(draft.default, fields) if draft.default is not None else None
        on_update = (types.render_default(DefaultValue("function", draft.on_update), fields)
                     if draft.on_update is not None else None)
        return Column(
            name=name, ordinal_position=0, nullable=nullable, column_default=default,
            auto_increment=draft.auto_increment or serial,
            generation_expression=draft.generation_expression,
            generation_stored=draft.generation_stored, on_update=on_update,
            comment=draft.comment or None, invisible=draft.invisible, srid=draft.srid,
            **fields,
        )

    def column_fields(self, spec: DataTypeSpec, table_charset: str | None,
                      table_collation: str | None) -> dict[str, Any]:
        """``types.column_fields`` under this parser's flavor; raises ``DdlParseError`` for
        a type the catalogue does not know."""
        try:
            return types.column_fields(spec, table_charset, table_collation, flavor=self.flavor)
        except types.TypeError_ as exc:
            raise self.error(None, str(exc)) from None

    # column_attribute alternatives: each returns the ColumnDraft fields it sets

    def visitNullColumnAttribute(self, ctx: P.NullColumnAttributeContext):
        return {"nullable": ctx.NOT() is None}

    def visitDefaultColumnAttribute(self, ctx: P.DefaultColumnAttributeContext):
        return {"default": self.visitDefaultValue(ctx.defaultValue())}

    def visitOnUpdateColumnAttribute(self, ctx: P.OnUpdateColumnAttributeContext):
        return {"on_update": self.source_text(ctx.currentTimestamp())}

    def visitAutoIncrementColumnAttribute(self, ctx: P.AutoIncrementColumnAttributeContext):
        return {"auto_increment": True}

    def visitSerialDefaultValueColumnAttribute(self, ctx: P.SerialDefaultValueColumnAttributeContext):
        return {"serial": True}  # NOT NULL AUTO_INCREMENT UNIQUE (manual 13.1.1)

    def visitPrimaryKeyColumnAttribute(self, ctx: P.PrimaryKeyColumnAttributeContext):
        return {"primary_key": True}

    def visitAutoRandomColumnAttribute(self, ctx: P.AutoRandomColumnAttributeContext):
        """TiDB ``AUTO_RANDOM[(S[, R])]`` (TiDB manual "AUTO_RANDOM"): shard bits S (default 5,
        1-15) and range bits R (default 64, 32-64) of a BIGINT primary key whose values TiDB
        generates.  Kept as the table option ``AUTO_RANDOM`` = ``"<column>(S,R)"``; the
        column itself is an ordinary ``bigint``."""
        self.require_tidb(ctx, "AUTO_RANDOM")
        nums = [int(t.getText()) for t in ctx.DECIMAL_LITERAL()]
        shard = nums[0] if nums else 5
        rng = nums[1] if len(nums) > 1 else 64
        if not 1 <= shard <= 15 or not 32 <= rng <= 64:
            raise self.error(ctx, f"AUTO_RANDOM({shard}, {rng}): shard bits must be 1-15 and range bits 32-64 "
                                  f"(TiDB manual \"AUTO_RANDOM\")")
        return {"auto_random": (shard, rng)}

    def visitClusteredColumnAttribute(self, ctx: P.ClusteredColumnAttributeContext):
        """TiDB ``PRIMARY KEY CLUSTERED | NONCLUSTERED`` written on a column (TiDB manual
        "Clustered Indexes"): the table option ``TIDB_PK_TYPE``, as TiDB's
        ``information_schema.TABLES.TIDB_PK_TYPE`` shows it."""
        self.require_tidb(ctx, ctx.getText().upper())
        return {"clustered": ctx.getText().upper()}

    def visitUniqueKeyColumnAttribute(self, ctx: P.UniqueKeyColumnAttributeContext):
        return {"unique": True}

    def visitCommentColumnAttribute(self, ctx: P.CommentColumnAttributeContext):
        return {"comment": self.visitStringLiteral(ctx.stringLiteral())}

    def visitCharsetColumnAttribute(self, ctx: P.CharsetColumnAttributeContext):
        return {"charset": self.visitCharsetName(ctx.charsetName())}

    def visitCollateColumnAttribute(self, ctx: P.CollateColumnAttributeContext):
        return {"collation": self.visitCollationName(ctx.collationName())}

    def visitGeneratedColumnAttribute(self, ctx: P.GeneratedColumnAttributeContext):
        if ctx.ROW() is not None:
            # MariaDB system-versioning period column: information_schema shows it as STORED
            # GENERATED 'ROW START' / 'ROW END', NOT NULL (MariaDB KB "System-Versioned Tables")
            return {"generation_expression": f"ROW {ctx.rowBoundary.text.upper()}",
                    "generation_stored": True, "nullable": False}
        kind = ctx.generatedColumnType.text.upper() if ctx.generatedColumnType is not None else "VIRTUAL"
        return {"generation_expression": self.source_text(ctx.balancedTokens()),
                "generation_stored": kind in ("STORED", "PERSISTENT")}

    def visitVisibilityColumnAttribute(self, ctx: P.VisibilityColumnAttributeContext):
        return {"invisible": ctx.INVISIBLE() is not None}

    def visitCheckColumnAttribute(self, ctx: P.CheckColumnAttributeContext):
        return {"checks": [self.visitCheckConstraintDefinition(ctx.checkConstraintDefinition())]}

    def visitReferenceColumnAttribute(self, ctx: P.ReferenceColumnAttributeContext):
        return {"references": ctx.referenceDefinition()}

    def visitSridColumnAttribute(self, ctx: P.SridColumnAttributeContext):
        return {"srid": int(ctx.DECIMAL_LITERAL().getText())}

    # attributes that change nothing the model holds
    def visitColumnFormatColumnAttribute(self, ctx):
        return {}

    def visitStorageColumnAttribute(self, ctx):
        return {}

    def visitEngineAttributeColumnAttribute(self, ctx):
        return {}

    def visitSystemVersioningColumnAttribute(self, ctx):
        return {}

    def visitCompressedColumnAttribute(self, ctx):
        return {}

    def visitEngineOptionColumnAttribute(self, ctx):
        return {}

    # ------------------------------------------------------------------ DEFAULT

    def visitDefaultValue(self, ctx: P.DefaultValueContext) -> DefaultValue:
        """Any ``defaultValue`` alternative → ``types.DefaultValue`` (dispatches on the label)."""
        return ctx.accept(self)

    def visitNullDefault(self, ctx: P.NullDefaultContext) -> DefaultValue:
        return DefaultValue("null")

    def visitLiteralDefault(self, ctx: P.LiteralDefaultContext) -> DefaultValue:
        return self.visitLiteral(ctx.literal())

    def visitCurrentTimestampDefault(self, ctx: P.CurrentTimestampDefaultContext) -> DefaultValue:
        return DefaultValue("function", self.source_text(ctx))

    def visitExpressionDefault(self, ctx: P.ExpressionDefaultContext) -> DefaultValue:
        return DefaultValue("expression", self.source_text(ctx.balancedTokens()).strip())

    def visitNextValueDefault(self, ctx: P.NextValueDefaultContext) -> DefaultValue:
        return DefaultValue("function", self.source_text(ctx))

    def visitFunctionCallDefault(self, ctx: P.FunctionCallDefaultContext) -> DefaultValue:
        return DefaultValue("function", self.source_text(ctx))

    def visitLiteral(self, ctx: P.LiteralContext) -> DefaultValue:
        """A literal as a ``DefaultValue`` (``string``, ``number``, ``hex``, ``bit``, ``bool``)."""
        if ctx.stringLiteral() is not None:
            raw = ctx.stringLiteral()
            first = raw.start
            if first.type == P.INTRODUCED_STRING and raw.start is raw.stop:
                _, body = strip_introducer(first.text)
                if body[:1] in ("0", "x", "X") and body[:1] != "'":  # _binary 0x.. / _binary X'..'
                    return DefaultValue("hex", hex_literal(body))
            return DefaultValue("string", self.visitStringLiteral(raw))
        if ctx.signedNumber() is not None:
            return DefaultValue("number", self.visitSignedNumber(ctx.signedNumber()))
        if ctx.HEX_LITERAL() is not None:
            return DefaultValue("hex", hex_literal(ctx.HEX_LITERAL().getText()))
        if ctx.BIT_LITERAL() is not None:
            return DefaultValue("bit", bit_literal(ctx.BIT_LITERAL().getText()))
        if ctx.TRUE() is not None or ctx.FALSE() is not None:
            return DefaultValue("bool", "1" if ctx.TRUE() is not None else "0")
        # DATE 'x' / TIME 'x' / TIMESTAMP 'x'
        return DefaultValue("string", self._string_value(ctx.STRING_LITERAL().getText()))

    # ------------------------------------------------------------------ data types

    def visitDataType(self, ctx: P.DataTypeContext) -> DataTypeSpec:
        """Any ``dataType`` alternative → ``DataTypeSpec`` (dispatches on the label:
        ``visitIntegerType``, ``visitCharacterType``, ...)."""
        return ctx.accept(self)

    def type_spec(self, ctx: Any) -> DataTypeSpec:
        """The ``DataTypeSpec`` of any dataType alternative: ``typeName`` tokens, ``(M)`` or
        ``(M,D)``, UNSIGNED/ZEROFILL, charset options, ENUM/SET labels."""
        name = " ".join(t.text.upper() for t in ctx.typeName)
        spec = DataTypeSpec(name)
        fl = getattr(ctx, "fieldLength", None)
        if fl is not None and fl() is not None:
            spec.length = int(fl().length.text)
        ps = getattr(ctx, "precisionScale", None)
        if ps is not None and ps() is not None:
            # a precision written as a fraction keeps its integer part (MariaDB: DECIMAL(19.5))
            spec.length = int(ps().precision.text.split(".")[0])
            spec.scale = int(ps().scale.text) if ps().scale is not None else None
        fo = getattr(ctx, "fieldOption", None)
        if fo is not None:
            for opt in fo():
                word = opt.start.type
                if word == P.UNSIGNED:
                    spec.unsigned = True
                elif word == P.ZEROFILL:
                    spec.zerofill = True
        so = getattr(ctx, "stringOption", None)
        if so is not None:
            for opt in so():
                self.apply_string_option(spec, opt)
        return spec

    def apply_string_option(self, spec: DataTypeSpec, ctx: P.StringOptionContext) -> None:
        """CHARACTER SET x, COLLATE x, ASCII, UNICODE, BINARY, BYTE on a string type."""
        if ctx.charsetName() is not None:
            spec.charset = self.visitCharsetName(ctx.charsetName())
        elif ctx.collationName() is not None:
            spec.collation = self.visitCollationName(ctx.collationName())
        elif ctx.ASCII() is not None:
            spec.ascii = True
        elif ctx.UNICODE() is not None:
            spec.unicode = True
        elif ctx.BINARY() is not None:
            spec.binary = True
        elif ctx.BYTE() is not None:  # CHAR(n) BYTE = BINARY(n)
            spec.name = "CHAR BYTE" if spec.name in ("CHAR", "CHARACTER") else spec.name + " BYTE"

    def visitIntegerType(self, ctx):
        return self.type_spec(ctx)

    def visitBitType(self, ctx):
        return self.type_spec(ctx)

    def visitBooleanType(self, ctx):
        return self.type_spec(ctx)

    def visitSerialType(self, ctx):
        return self.type_spec(ctx)

    def visitFixedPointType(self, ctx):
        return self.type_spec(ctx)

    def visitFloatType(self, ctx):
        return self.type_spec(ctx)

    def visitTemporalType(self, ctx):
        return self.type_spec(ctx)

    def visitCharacterType(self, ctx):
        return self.type_spec(ctx)

    def visitBinaryType(self, ctx):
        return self.type_spec(ctx)

    def visitBlobType(self, ctx):
        return self.type_spec(ctx)

    def visitTextType(self, ctx):
        return self.type_spec(ctx)

    def visitLongType(self, ctx):
        return self.type_spec(ctx)

    def visitEnumType(self, ctx):
        spec = self.type_spec(ctx)
        spec.values = tuple(self.visitEnumValue(v) for v in ctx.enumValue())
        return spec

    def visitSetType(self, ctx):
        spec = self.type_spec(ctx)
        spec.values = tuple(self.visitEnumValue(v) for v in ctx.enumValue())
        return spec

    def visitEnumValue(self, ctx: P.EnumValueContext) -> "str | bytes":
        """A member: its text, or for a hexadecimal / bit literal its bytes (decoded with the
        column's charset when the column is made)."""
        if ctx.stringLiteral() is not None:
            return self.visitStringLiteral(ctx.stringLiteral())
        if ctx.HEX_LITERAL() is not None:
            return hex_literal(ctx.HEX_LITERAL().getText())
        n = bit_literal(ctx.BIT_LITERAL().getText())
        return n.to_bytes(max(1, (n.bit_length() + 7) // 8), "big")

    def visitJsonType(self, ctx):
        return self.type_spec(ctx)

    def visitSpatialType(self, ctx):
        return self.type_spec(ctx)

    def visitInetType(self, ctx):
        return self.type_spec(ctx)

    def visitUuidType(self, ctx):
        return self.type_spec(ctx)

    # ------------------------------------------------------------------ table options

    def apply_table_options(self, editor: TableEditor, options: list[tuple[str, str]]) -> None:
        """Apply ``(NAME, value)`` options; CHARACTER SET before COLLATE, as the server
        resolves them."""
        for name, value in sorted(options, key=lambda o: o[0] != "CHARACTER SET"):
            self.apply_table_option(editor, name, value)

    def apply_table_option(self, editor: TableEditor, name: str, value: str) -> None:
        if name == "CHARACTER SET":
            cs = self.database_defaults(editor.id.database)[0] if value == "DEFAULT" else value
            editor.default_character_set_name = cs
            editor.default_collation_name = charsets.default_collation(cs, self.flavor) if cs in charsets.CHARSETS else None
        elif name == "COLLATE":
            if value == "DEFAULT":
                cs = editor.default_character_set_name or self.database_defaults(editor.id.database)[0]
                value = charsets.default_collation(cs, self.flavor)
            editor.default_collation_name = value
            editor.default_character_set_name = charsets.collation_charset(value)
        elif name == "COMMENT":
            editor.comment = value or None
        else:
            editor.set_option(name, value)

    def visitTableOptionEngine(self, ctx: P.TableOptionEngineContext):
        return ("ENGINE", self._name_text(ctx.engineName()))

    def visitTableOptionAutoIncrement(self, ctx: P.TableOptionAutoIncrementContext):
        if ctx.force is not None:  # TiDB: FORCE AUTO_INCREMENT = n (may lower the counter)
            self.require_tidb(ctx, "FORCE AUTO_INCREMENT")
        return ("AUTO_INCREMENT", ctx.DECIMAL_LITERAL().getText())

    def visitTableOptionCharset(self, ctx: P.TableOptionCharsetContext):
        return ("CHARACTER SET", self.visitCharsetName(ctx.charsetName()) if ctx.charsetName() else "DEFAULT")

    def visitTableOptionCollate(self, ctx: P.TableOptionCollateContext):
        return ("COLLATE", self.visitCollationName(ctx.collationName()) if ctx.collationName() else "DEFAULT")

    def visitTableOptionComment(self, ctx: P.TableOptionCommentContext):
        return ("COMMENT", self.visitStringLiteral(ctx.stringLiteral()))

    def visitTableOptionDirectory(self, ctx: P.TableOptionDirectoryContext):
        return (ctx.getChild(0).getText().upper() + " DIRECTORY", self.visitStringLiteral(ctx.stringLiteral()))

    def visitTableOptionUnion(self, ctx: P.TableOptionUnionContext):
        return ("UNION", ",".join(str(self.visitTableName(t)) for t in ctx.tableName()))

    def visitTableOptionSystemVersioning(self, ctx: P.TableOptionSystemVersioningContext):
        return ("SYSTEM VERSIONING", "YES" if ctx.WITH() is not None else "NO")

    def visitTableOptionPlacementPolicy(self, ctx: P.TableOptionPlacementPolicyContext):
        """TiDB ``PLACEMENT POLICY [=] name | DEFAULT`` (TiDB manual "Placement Rules in SQL"):
        the option ``PLACEMENT POLICY`` (``DEFAULT`` removes it)."""
        self.require_tidb(ctx, "PLACEMENT POLICY")
        if ctx.identifier() is None:
            return ("PLACEMENT POLICY", None)
        return ("PLACEMENT POLICY", self.visitIdentifier(ctx.identifier()))

    def visitTableOptionTtl(self, ctx: P.TableOptionTtlContext):
        """TiDB ``TTL [=] col + INTERVAL n unit`` (TiDB manual "Periodically Delete Data Using
        TTL (Time to Live)"): the option ``TTL`` = ``"col + INTERVAL n UNIT"``.  ``TTL_ENABLE``
        and ``TTL_JOB_INTERVAL`` are generic ``name = value`` options."""
        self.require_tidb(ctx, "TTL")
        if ctx.interval.text.upper() != "INTERVAL":
            raise self.error(ctx.interval, f"expected INTERVAL after '+' in the TTL option, found {ctx.interval.text!r}")
        amount = ctx.ttlAmount.text
        if ctx.ttlAmount.type == P.STRING_LITERAL:
            amount = amount[1:-1]
        column = self.visitColumnName(ctx.columnName())
        return ("TTL", f"{column} + INTERVAL {amount} {self.visitIdentifier(ctx.unit).upper()}")

    def visitTableOptionGeneric(self, ctx: P.TableOptionGenericContext):
        # a backquoted name is a MariaDB engine-defined option (`PAGE_COMPRESSED`=OFF)
        name = unquote_identifier(ctx.name.text).upper() if ctx.name.type == P.BQUOTE_ID else ctx.name.text.upper()
        return ("ENGINE" if name == "TYPE" else name, self.visitTableOptionValue(ctx.tableOptionValue()))

    def visitTableOptionValue(self, ctx: P.TableOptionValueContext) -> str:
        if ctx.literal() is not None and ctx.literal().stringLiteral() is not None:
            return self.visitStringLiteral(ctx.literal().stringLiteral())
        if ctx.identifier() is not None:
            return self.visitIdentifier(ctx.identifier())
        return ctx.getText().upper() if ctx.literal() is None else ctx.getText()

    # ------------------------------------------------------------------ CREATE ... SELECT

    def visitCreateTableSelect(self, ctx: P.CreateTableSelectContext):
        query = ctx.queryExpression()
        while query is not None and query.selectStatement() is None and query.queryExpression() is not None:
            query = query.queryExpression()
        if query is None or query.selectStatement() is None:
            self.warn("CREATE TABLE ... SELECT: the query's columns cannot be read (WITH); left out")
            return None
        self.add_select_columns(query.selectStatement())

    def add_select_columns(self, ctx: P.SelectStatementContext) -> None:
        """Append the columns a SELECT yields where they can be typed (see module docstring)."""
        sources = self.select_sources(ctx)
        elements = ctx.selectElements()
        found: list[tuple[str | None, Column]] = []
        if elements.STAR() is not None:
            for _, table in sources:
                found += [(None, c) for c in table.columns]
        for el in elements.selectElement():
            found += self.select_element_columns(el, sources)
        if ctx.UNION() is not None and found:
            self.warn("CREATE TABLE ... SELECT ... UNION: columns typed from the first SELECT only")
        editor = self.editor
        for alias, col in found:
            name = alias or col.name
            if editor.has_column(name):
                # a column the CREATE part defines keeps its definition but takes the select's
                # position (as MariaDB orders them)
                last = editor.columns[-1].name
                if self.column_key(last) != self.column_key(name):
                    editor.replace_column(name, editor.column(name), after=last)
                continue
            editor.add_column(self.selected_column(col, name))

    def selected_column(self, col: Column, name: str) -> Column:
        """A source column as CREATE TABLE ... SELECT copies it: no AUTO_INCREMENT (the server
        gives such a column DEFAULT 0), no generation expression, not invisible."""
        default = col.column_default
        if col.auto_increment:
            default = types.render_default(DefaultValue("number", "0"), col.to_json())
        return col.replace(name=name, auto_increment=False, column_default=default,
                           generation_expression=None, generation_stored=None, invisible=False)

    def select_element_columns(self, ctx: Any, sources: list[tuple[str, Table]]) -> list[tuple[str | None, Column]]:
        if isinstance(ctx, P.SelectStarElementContext):
            qualifier = self.visitTableName(ctx.tableName()).name.lower()
            return [(None, c) for alias, t in sources if alias == qualifier for c in t.columns]
        alias = self.visitAlias(ctx.alias()) if ctx.alias() is not None else None
        if isinstance(ctx, P.SelectColumnElementContext):
            parts = self.qualified_parts(ctx.columnRef())
            column_name, qualifier = parts[-1], (parts[-2].lower() if len(parts) > 1 else None)
            for src_alias, table in sources:
                if qualifier is None or qualifier == src_alias:
                    col = table.column(column_name, self.column_key)
                    if col is not None:
                        return [(alias, col)]
        self.warn(f"CREATE TABLE ... SELECT: column {self.source_text(ctx)!r} cannot be typed "
                  f"without evaluating it; left out of the model")
        return []

    def visitAlias(self, ctx: P.AliasContext) -> str:
        if ctx.identifier() is not None:
            return self.visitIdentifier(ctx.identifier())
        return self._string_value(ctx.STRING_LITERAL().getText())

    _FROM_STOP = frozenset("WHERE GROUP HAVING ORDER LIMIT WINDOW ON USING UNION FOR LOCK INTO "
                           "PROCEDURE INNER CROSS LEFT RIGHT NATURAL OUTER STRAIGHT_JOIN JOIN".split())

    def _is_name_token(self, node: Any) -> bool:
        """A token of a FROM clause that can be a table name or alias."""
        if not hasattr(node, "symbol"):
            return False
        text = node.symbol.text
        if node.symbol.type in (P.BQUOTE_ID, P.DQUOTE_STRING):
            return True
        return (text[:1].isalnum() or text[:1] in "_$") and text.upper() not in self._FROM_STOP \
            and text.upper() not in ("AS", "SELECT")

    def select_sources(self, ctx: P.SelectStatementContext) -> list[tuple[str, Table]]:
        """``(alias or table name in lower case, table)`` for each table of the FROM clause the
        model knows (tables in ``FROM a, b`` and ``... JOIN c``; subqueries are skipped)."""
        if ctx.FROM() is None or ctx.balancedTokens() is None:
            return []
        words = [c for c in ctx.balancedTokens().getChildren()]
        out: list[tuple[str, Table]] = []
        i, n = 0, len(words)
        expect_table = True
        while i < n:
            tok = words[i]
            text = tok.getText()
            if expect_table and self._is_name_token(tok):
                parts = [unquote_identifier(text)]
                i += 1
                while i < n and hasattr(words[i], "symbol") and words[i].symbol.type in (P.DOT_ID, P.DOT):
                    if words[i].symbol.type == P.DOT_ID:
                        parts.append(words[i].getText()[1:])
                        i += 1
                    elif i + 1 < n:
                        parts.append(unquote_identifier(words[i + 1].getText()))
                        i += 2
                    else:
                        break
                table_id = self.qualify(parts[-2] if len(parts) > 1 else None, parts[-1])
                alias = parts[-1]
                if i < n and words[i].getText().upper() == "AS":
                    i += 1
                if i < n and self._is_name_token(words[i]):
                    alias = unquote_identifier(words[i].getText())
                    i += 1
                table = self.get_table(table_id)
                if table is not None:
                    out.append((alias.lower(), table))
                expect_table = False
                continue
            up = text.upper()
            if up == "," or up == "JOIN" or up == "STRAIGHT_JOIN":
                expect_table = True
            elif up in self._FROM_STOP and up not in ("INNER", "CROSS", "LEFT", "RIGHT", "NATURAL", "OUTER"):
                expect_table = False
            i += 1
        return out

    # ------------------------------------------------------------------ ALTER TABLE

    def visitAlterTable(self, ctx: P.AlterTableContext):
        """ALTER TABLE t spec, ...: table options first (new columns inherit the new default
        charset), then the other specifications in order."""
        table_id = self.visitTableName(ctx.tableName())
        specs = ctx.alterSpecification()

        def edit(editor: TableEditor) -> TableEditor:
            self.editor = editor
            self._change_aliases = self.simultaneous_changes(editor, specs)
            try:
                for spec in specs:
                    if isinstance(spec, P.AlterTableOptionsContext):
                        self.visit(spec)
                for spec in specs:
                    if not isinstance(spec, P.AlterTableOptionsContext):
                        self.visit(spec)
                self.system_versioning(editor)
            finally:
                self.editor = None
                self._change_aliases = {}
            return editor

        return self.alter_table(table_id, edit, ctx)

    _change_aliases: dict[str, str] = {}

    def simultaneous_changes(self, editor: TableEditor, specs: list) -> dict[str, str]:
        """Several ``CHANGE old new`` clauses of one ALTER name the columns as they were
        before the statement and apply at once (``CHANGE a b ..., CHANGE b a ...`` swaps):
        the columns they change are first renamed to placeholders; ``CHANGE`` then finds each
        by its old name through the returned map (old name key → placeholder)."""
        changes = [s for s in specs if isinstance(s, P.AlterChangeColumnContext)]
        if len(changes) < 2:
            return {}
        olds = [self.visitColumnName(c.oldColumn) for c in changes]
        news = {self.column_key(self.visitColumnName(c.columnName(1))) for c in changes}
        if not news & {self.column_key(o) for o in olds}:
            return {}
        aliases = {}
        for i, old in enumerate(olds):
            if editor.has_column(old) and self.column_key(old) not in aliases:
                placeholder = f"\x00change{i}"
                editor.rename_column(old, placeholder)
                aliases[self.column_key(old)] = placeholder
        return aliases

    def visitAlterTableOptions(self, ctx: P.AlterTableOptionsContext):
        self.apply_table_options(self.editor, [self.visit(o) for o in ctx.tableOption()])

    def _position(self, ctx: Any) -> dict[str, Any]:
        pos = ctx.columnPosition() if ctx is not None else None
        if pos is None:
            return {}
        if pos.FIRST() is not None:
            return {"first": True}
        return {"after": self.visitColumnName(pos.columnName())}

    def visitAlterAddColumn(self, ctx: P.AlterAddColumnContext):
        name = self.visitColumnName(ctx.columnName())
        if ctx.ifNotExists() is not None and self.editor.has_column(name):
            return None
        self.add_column(name, self.visitColumnDefinition(ctx.columnDefinition()), **self._position(ctx))

    def visitAlterAddColumns(self, ctx: P.AlterAddColumnsContext):
        definitions = ctx.createDefinition()
        for d in definitions:
            if isinstance(d, P.ColumnDeclarationContext):
                if ctx.ifNotExists() is not None and self.editor.has_column(self.visitColumnName(d.columnName())):
                    continue
                self.visit(d)
        for d in definitions:
            if not isinstance(d, P.ColumnDeclarationContext):
                self.visit(d)

    def visitAlterAddIndex(self, ctx: P.AlterAddIndexContext):
        return self.visit(ctx.indexDefinition())

    def visitAlterAddPrimaryKey(self, ctx: P.AlterAddPrimaryKeyContext):
        return self.visit(ctx.primaryKeyDefinition())

    def visitAlterAddUniqueKey(self, ctx: P.AlterAddUniqueKeyContext):
        return self.visit(ctx.uniqueKeyDefinition())

    def visitAlterAddForeignKey(self, ctx: P.AlterAddForeignKeyContext):
        return self.visit(ctx.foreignKeyDefinition())

    def visitAlterAddCheck(self, ctx: P.AlterAddCheckContext):
        return self.visit(ctx.checkConstraintDefinition())

    def visitAlterColumnDefault(self, ctx: P.AlterColumnDefaultContext):
        name = self.visitColumnName(ctx.columnName())
        column = self.editor.column(name)
        default = None
        if ctx.defaultValue() is not None:
            default = types.render_default(self.visitDefaultValue(ctx.defaultValue()), column.to_json())
        self.editor.update_column(name, column_default=default)

    def visitAlterColumnVisibility(self, ctx: P.AlterColumnVisibilityContext):
        self.editor.update_column(self.visitColumnName(ctx.columnName()), invisible=ctx.INVISIBLE() is not None)

    def visitAlterChangeColumn(self, ctx: P.AlterChangeColumnContext):
        old = self.visitColumnName(ctx.oldColumn)
        old = self._change_aliases.get(self.column_key(old), old)
        if ctx.ifExists() is not None and not self.editor.has_column(old):
            return None
        new = self.visitColumnName(ctx.columnName(1))
        self.add_column(new, self.visitColumnDefinition(ctx.columnDefinition()), replace=old, **self._position(ctx))

    def visitAlterModifyColumn(self, ctx: P.AlterModifyColumnContext):
        name = self.visitColumnName(ctx.columnName())
        if ctx.ifExists() is not None and not self.editor.has_column(name):
            return None
        self.add_column(name, self.visitColumnDefinition(ctx.columnDefinition()), replace=name, **self._position(ctx))

    def visitAlterRenameColumn(self, ctx: P.AlterRenameColumnContext):
        old = self.visitColumnName(ctx.oldColumn)
        if ctx.ifExists() is not None and not self.editor.has_column(old):
            return None  # MariaDB RENAME COLUMN IF EXISTS: a note, nothing renamed
        self.editor.rename_column(old, self.visitColumnName(ctx.columnName(1)))

    def visitAlterDropColumn(self, ctx: P.AlterDropColumnContext):
        name = self.visitColumnName(ctx.columnName())
        if not self.editor.has_column(name):
            # the server refuses it (ER_CANT_DROP_FIELD_OR_KEY), so a change log holding it means
            # the model was behind: the column is gone either way, as for an unknown table
            # (docs/mysql.md "Known limits")
            if ctx.ifExists() is None:
                self.warn(f"column {name} of table {self.editor.id} is not known; drop ignored")
            return None
        self.editor.drop_column(name)

    def visitAlterDropIndex(self, ctx: P.AlterDropIndexContext):
        name = self.visitIndexName(ctx.indexName())
        if name.upper() == "PRIMARY":
            self.editor.drop_primary_key()
        elif not self.editor.drop_index(name) and ctx.ifExists() is None:
            self.warn(f"index {name} of table {self.editor.id} is not known; drop ignored")

    def visitAlterDropPrimaryKey(self, ctx: P.AlterDropPrimaryKeyContext):
        self.editor.drop_primary_key()

    def visitAlterDropForeignKey(self, ctx: P.AlterDropForeignKeyContext):
        name = self.visitIdentifier(ctx.identifier())
        if not self.editor.drop_foreign_key(name) and ctx.ifExists() is None:
            self.warn(f"foreign key {name} of table {self.editor.id} is not known; drop ignored")

    def visitAlterDropConstraint(self, ctx: P.AlterDropConstraintContext):
        """DROP CHECK / DROP CONSTRAINT name: a check, foreign key or unique key."""
        name = self.visitIdentifier(ctx.identifier())
        editor = self.editor
        if not (editor.drop_check(name) or editor.drop_foreign_key(name) or editor.drop_index(name)):
            if ctx.ifExists() is None:
                self.warn(f"constraint {name} of table {editor.id} is not known; drop ignored")

    def visitAlterRenameIndex(self, ctx: P.AlterRenameIndexContext):
        old, new = self.visitIndexName(ctx.oldIndex), self.visitIndexName(ctx.indexName(1))
        if not self.editor.rename_index(old, new):
            self.warn(f"index {old} of table {self.editor.id} is not known; rename ignored")

    def visitAlterRenameTable(self, ctx: P.AlterRenameTableContext):
        self.editor.rename(self.visitTableName(ctx.tableName()))

    def visitAlterConvertCharset(self, ctx: P.AlterConvertCharsetContext):
        """CONVERT TO CHARACTER SET: the table default and every character column change
        (TEXT types grow to hold as many characters, ``types.convert_charset_fields``)."""
        editor = self.editor
        if ctx.charsetName() is not None:
            cs = self.visitCharsetName(ctx.charsetName())
        else:
            cs = self.database_defaults(editor.id.database)[0]
        coll = self.visitCollationName(ctx.collationName()) if ctx.collationName() is not None else None
        if cs == "binary":
            self.warn("CONVERT TO CHARACTER SET binary: column types not converted")
        else:
            for col in list(editor.columns):
                if col.character_set_name is None:
                    continue
                fields = {k: getattr(col, k) for k in _CHARSET_FIELDS}
                new = types.convert_charset_fields(fields, cs, coll, flavor=self.flavor)
                editor.update_column(col.name, **{k: new[k] for k in _CHARSET_FIELDS})
        editor.default_character_set_name = cs
        editor.default_collation_name = coll or charsets.default_collation(cs, self.flavor)

    # specifications that change nothing the model holds
    def visitAlterAddPeriod(self, ctx):
        return None

    def visitAlterRemoveTtl(self, ctx):
        """TiDB ``REMOVE TTL``: drops ``TTL``, ``TTL_ENABLE`` and ``TTL_JOB_INTERVAL``."""
        self.require_tidb(ctx, "REMOVE TTL")
        for name in ("TTL", "TTL_ENABLE", "TTL_JOB_INTERVAL"):
            self.editor.set_option(name, None)

    def visitAlterTidbWord(self, ctx):
        """TiDB ``CACHE`` / ``NOCACHE`` (TiDB manual "Cached Tables"): no change to the
        definition.  Any other lone word is an error."""
        word = ctx.tidbWord.text.upper()
        if word not in ("CACHE", "NOCACHE"):
            raise self.error(ctx, f"unknown ALTER TABLE specification {ctx.tidbWord.text!r}")
        self.require_tidb(ctx, word)

    def visitAlterTiflashReplica(self, ctx):
        """TiDB ``SET TIFLASH REPLICA n [LOCATION LABELS ...]`` (TiDB manual "Create TiFlash
        Replicas"): a replica of the table, no change to its definition."""
        words = [ctx.tiflash.text, ctx.replica.text] + ([ctx.location.text, ctx.labels.text] if ctx.location else [])
        if [w.upper() for w in words] != ["TIFLASH", "REPLICA", "LOCATION", "LABELS"][:len(words)]:
            raise self.error(ctx, "expected SET TIFLASH REPLICA n [LOCATION LABELS 'label', ...]")
        self.require_tidb(ctx, "SET TIFLASH REPLICA")

    def visitAlterAddSystemVersioning(self, ctx):
        self.editor.set_option("SYSTEM VERSIONING", "YES")

    def visitAlterAlgorithm(self, ctx):
        return None

    def visitAlterIndexVisibility(self, ctx):
        return None

    def visitAlterCheck(self, ctx):
        return None

    def visitAlterKeys(self, ctx):
        return None

    def visitAlterTablespace(self, ctx):
        return None

    def visitAlterDropPeriod(self, ctx):
        return None

    def visitAlterDropSystemVersioning(self, ctx):
        self.editor.set_option("SYSTEM VERSIONING", None)

    def visitAlterForce(self, ctx):
        return None

    def visitAlterLock(self, ctx):
        return None

    def visitAlterOrderBy(self, ctx):
        return None

    def visitAlterValidation(self, ctx):
        return None

    def visitAlterPartition(self, ctx):
        return None  # partitioning does not change the columns

    # ------------------------------------------------------------------ other table statements

    def visitDropTable(self, ctx: P.DropTableContext):
        if ctx.TEMPORARY() is not None:
            return None  # temporary tables are not modelled
        for t in ctx.tableName():
            self.drop_table(self.visitTableName(t), if_exists=ctx.ifExists() is not None, ctx=t)

    def visitRenameTable(self, ctx: P.RenameTableContext):
        for clause in ctx.renameTableClause():
            self.rename_table(self.visitTableName(clause.oldName), self.visitTableName(clause.newName), clause)

    def visitTruncateTable(self, ctx: P.TruncateTableContext):
        self.truncate_table(self.visitTableName(ctx.tableName()))

    def visitCreateIndex(self, ctx: P.CreateIndexContext):
        table_id = self.visitTableName(ctx.tableName())
        kind = ctx.indexCategory.text.upper() if ctx.indexCategory is not None else "INDEX"
        name = self.visitIndexName(ctx.indexName())
        options = ctx.indexOption()

        def edit(editor: TableEditor) -> None:
            self.editor = editor
            try:
                if ctx.ifNotExists() is not None and any((ix.name or "").lower() == name.lower() for ix in editor.indexes):
                    return
                if ctx.REPLACE() is not None:
                    editor.drop_index(name)
                self.add_index(name, kind, ctx.keyPartList(), options)
            finally:
                self.editor = None

        return self.alter_table(table_id, edit, ctx)

    def visitDropIndex(self, ctx: P.DropIndexContext):
        table_id = self.visitTableName(ctx.tableName())
        name = self.visitIndexName(ctx.indexName())

        def edit(editor: TableEditor) -> None:
            if name.upper() == "PRIMARY":
                editor.drop_primary_key()
            elif not editor.drop_index(name) and ctx.ifExists() is None:
                self.warn(f"index {name} of table {table_id} is not known; drop ignored")

        return self.alter_table(table_id, edit, ctx)

    # ------------------------------------------------------------------ views

    def visitCreateView(self, ctx: P.CreateViewContext):
        self.create_view(self.view_of(ctx), or_replace=ctx.REPLACE() is not None)

    def visitAlterView(self, ctx: P.AlterViewContext):
        self.create_view(self.view_of(ctx), or_replace=True)

    def view_of(self, ctx: Any) -> View:
        columns = None
        if ctx.columnList() is not None:
            columns = tuple(self.visitColumnName(c) for c in ctx.columnList().columnName())
        return View(self.visitTableName(ctx.tableName()), self.source_text(ctx.viewBody()).strip(), columns)

    def visitDropView(self, ctx: P.DropViewContext):
        for t in ctx.tableName():
            self.drop_view(self.visitTableName(t), if_exists=ctx.ifExists() is not None)

    # ------------------------------------------------------------------ databases and session

    def visitCreateDatabase(self, ctx: P.CreateDatabaseContext):
        name = self.visitIdentifier(ctx.identifier())
        if self.get_database(name) is not None and ctx.ifNotExists() is not None:
            return None
        cs, coll = self.server_defaults()
        db = self.database_with_options(Database(name, cs, coll), ctx.databaseOption())
        if ctx.REPLACE() is not None:
            self.drop_database(name)
        self.put_database(db)

    def visitAlterDatabase(self, ctx: P.AlterDatabaseContext):
        name = self.visitIdentifier(ctx.identifier()) if ctx.identifier() is not None else self.current_database
        if name is None:
            self.warn("ALTER DATABASE without a database name and no current database; ignored")
            return None
        cs, coll = self.database_defaults(name)
        db = self.get_database(name) or Database(name, cs, coll)
        self.put_database(self.database_with_options(db, ctx.databaseOption()))

    def database_with_options(self, db: Database, options: Iterable[Any]) -> Database:
        """``db`` with CHARACTER SET / COLLATE / COMMENT options applied."""
        cs, coll, comment = db.default_character_set_name, db.default_collation_name, db.comment
        options = list(options)
        for opt in options:
            if isinstance(opt, P.DatabaseOptionCharsetContext):
                cs = self.visitCharsetName(opt.charsetName()) if opt.charsetName() else self.server_defaults()[0]
                coll = charsets.default_collation(cs, self.flavor) if cs in charsets.CHARSETS else None
        for opt in options:
            if isinstance(opt, P.DatabaseOptionCollateContext):
                if opt.collationName() is not None:
                    coll = self.visitCollationName(opt.collationName())
                    cs = charsets.collation_charset(coll)
                else:
                    coll = charsets.default_collation(cs, self.flavor)
            elif isinstance(opt, P.DatabaseOptionCommentContext):
                comment = self.visitStringLiteral(opt.stringLiteral()) or None
            elif isinstance(opt, P.DatabaseOptionPlacementPolicyContext):
                # parsed; the model's Database keeps no options (TiDB manual "Placement Rules in SQL")
                self.require_tidb(opt, "PLACEMENT POLICY")
        return Database(db.name, cs, coll, comment)

    def visitDropDatabase(self, ctx: P.DropDatabaseContext):
        self.drop_database(self.visitIdentifier(ctx.identifier()))

    def visitUseStatement(self, ctx: P.UseStatementContext):
        self.use_database(self.visitIdentifier(ctx.identifier()))

    def visitSetCharacterSet(self, ctx: P.SetCharacterSetContext):
        for opt in ctx.setOption():
            self.visit(opt)

    def visitSetNames(self, ctx: P.SetNamesContext):
        """SET NAMES x [COLLATE y] (manual 15.7.6.3): the client, connection and results charsets."""
        cs = self.visitCharsetName(ctx.charsetName()) if ctx.charsetName() is not None else None
        for var in ("character_set_client", "character_set_connection", "character_set_results"):
            self.set_session_variable(var, cs)
        coll = self.visitCollationName(ctx.collationName()) if ctx.collationName() is not None else None
        if coll is None and cs is not None and cs in charsets.CHARSETS:
            coll = charsets.default_collation(cs, self.flavor)
        self.set_session_variable("collation_connection", coll)

    def visitSetCharacterSetOption(self, ctx: P.SetCharacterSetOptionContext):
        """SET CHARACTER SET x (manual 15.7.6.2): the client and results charsets."""
        cs = self.visitCharsetName(ctx.charsetName()) if ctx.charsetName() is not None else None
        for var in ("character_set_client", "character_set_results"):
            self.set_session_variable(var, cs)

    def visitSetVariable(self, ctx: P.SetVariableContext):
        """SET [scope] character_set_* / collation_* = value; other variables are ignored, and so
        is a value the model cannot know (``@saved_cs_client``)."""
        var = ctx.variableName()
        if var.identifier() is not None:
            name = self.visitIdentifier(var.identifier())
        else:
            ref = var.variableReference()
            if ref.AT(1) is None:
                return None  # a user variable: not a server setting
            name = self.visitDottedId(ref.dottedId()) if ref.dottedId() is not None else self.visitIdentifier(ref.identifier())
        name = name.lower()
        if not (name.startswith("character_set_") or name.startswith("collation_")):
            return None
        value = ctx.variableValue()
        if value.variableReference() is not None or value.signedNumber() is not None or value.ON() is not None:
            return None
        if value.DEFAULT() is not None or value.NULL() is not None:
            self.set_session_variable(name, None)
            return None
        text = self.visitCharsetName(value.charsetName())
        self.set_session_variable(name, charsets.normalize_collation(text) if name.startswith("collation_") else text)

    def set_session_variable(self, name: str, value: str | None) -> None:
        """Record a session variable (``None``: back to the server's default)."""
        if value is None:
            self.later(lambda t: t.session.pop(name, None))
        else:
            self.set_session(name, value)

    # ------------------------------------------------------------------ charset inheritance

    def server_defaults(self) -> tuple[str, str]:
        """The server's charset and collation: the session's ``character_set_server`` /
        ``collation_server`` if a SET changed them, else the parser options."""
        session = self.tables.session
        opt_cs = charsets.normalize_charset(self.options.get("character_set_server") or "utf8mb4")
        cs = charsets.normalize_charset(session.get("character_set_server") or opt_cs)
        coll = session.get("collation_server")
        if coll is None and cs == opt_cs and self.options.get("collation_server"):
            coll = charsets.normalize_collation(self.options["collation_server"])
        if coll is None or charsets.collation_charset(coll) != cs:
            coll = charsets.default_collation(cs, self.flavor)
        return cs, coll

    def database_defaults(self, database: str | None) -> tuple[str, str]:
        """The default charset and collation of ``database`` (the server's if the model does
        not know the database)."""
        db = self.get_database(database) if database is not None else None
        if db is not None and db.default_character_set_name:
            cs = db.default_character_set_name
            return cs, db.default_collation_name or charsets.default_collation(cs, self.flavor)
        return self.server_defaults()

    # ======================================================================== names and literals

    def visitIdentifier(self, ctx: P.IdentifierContext) -> str:
        """The name: backquotes (and ANSI_QUOTES double quotes) removed, doubled quotes undone."""
        text = ctx.start.text
        if text[0] in "`\"":
            return unquote_identifier(text)
        return text

    def visitDottedId(self, ctx: P.DottedIdContext) -> str:
        if ctx.identifier() is not None:
            return self.visitIdentifier(ctx.identifier())
        return ctx.start.text[1:]

    def qualified_parts(self, ctx: Any) -> list[str]:
        """``[part, ...]`` of ``identifier dottedId*`` (tableName, columnName, columnRef, ...)."""
        return [self.visitIdentifier(ctx.identifier())] + [self.visitDottedId(d) for d in ctx.dottedId()]

    def visitTableName(self, ctx: P.TableNameContext) -> TableId:
        """``[db.]name`` → ``TableId`` (the current database when unqualified)."""
        name = self.visitIdentifier(ctx.identifier())
        dotted = ctx.dottedId()
        if dotted is not None:
            return self.qualify(name, self.visitDottedId(dotted))
        if self.current_database is None:
            # the server refuses it: ER_NO_DB_ERROR (1046) "No database selected"
            raise self.error(ctx, f"No database selected: {name} names no database (qualify it as db.{name}, "
                                  f"precede it with USE db, or set the session database: --database db, "
                                  f"database=\"db\")")
        return self.qualify(None, name)

    def visitColumnName(self, ctx: P.ColumnNameContext) -> str:
        """The column's name (the last part of ``[[db.]tbl.]col``)."""
        dotted = ctx.dottedId()
        if dotted:
            return self.visitDottedId(dotted[-1])
        return self.visitIdentifier(ctx.identifier())

    def visitIndexName(self, ctx: P.IndexNameContext) -> str:
        return self.visitIdentifier(ctx.identifier())

    def visitCharsetName(self, ctx: P.CharsetNameContext) -> str:
        """A charset name in lower case, aliases resolved (``utf8`` → ``utf8mb3``)."""
        return charsets.normalize_charset(self._name_text(ctx))

    def visitCollationName(self, ctx: P.CollationNameContext) -> str:
        return charsets.normalize_collation(self._name_text(ctx))

    def _name_text(self, ctx: Any) -> str:
        """A name that may be written as an identifier, a string or a keyword."""
        if getattr(ctx, "identifier", None) is not None and ctx.identifier() is not None:
            return self.visitIdentifier(ctx.identifier())
        text = ctx.getText()
        if text[:1] == "'":
            return self._string_value(text)
        return text

    def visitStringLiteral(self, ctx: P.StringLiteralContext) -> str:
        """The value of a (possibly concatenated, possibly introduced) string literal."""
        return "".join(self._string_value(child.getText()) for child in ctx.getChildren())

    def _string_value(self, text: str) -> str:
        if text[0] not in "'\"":
            _, text = strip_introducer(text)
            if text[:1] not in ("'", '"'):  # _binary 0x..: the bytes as latin-1 text
                return hex_literal(text).decode("latin-1")
        return unquote_string(text, self.backslash_escapes)

    def visitSignedNumber(self, ctx: P.SignedNumberContext) -> str:
        """``-1``, ``1.5e3``: the text without white space or a leading ``+``."""
        text = "".join(ctx.getText().split())
        return text[1:] if text.startswith("+") else text
