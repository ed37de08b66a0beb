"""``DdlVisitor``: the dialect-neutral base of every dialect's parse-tree visitor.

Owns: applying a statement's effects to ``Tables`` atomically (a statement that fails half way
changes nothing), recording ``TableChange``s and warnings, source-text and position helpers,
and the table-level operations every dialect shares (create, alter, rename, drop, truncate,
views, databases).  Must not know: any grammar — a dialect's visitor subclasses this class and
its generated ANTLR visitor::

    class MySqlDdlVisitor(ddlcore.DdlVisitor, MySqlParserVisitor): ...

and users customise a dialect by subclassing that class and overriding one narrow method.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Mapping

from .errors import DdlParseError
from .model import (Database, ModelError, Table, TableChange, TableEditor, TableId, Tables,
                    View, casefold_key)

if TYPE_CHECKING:  # pragma: no cover
    from .dialect import Dialect
    from .splitter import Statement

__all__ = ["DdlVisitor"]

_MISSING = object()


class DdlVisitor:
    """Base visitor.  Subclasses implement ``visit*`` methods for their grammar and call the
    operations below; ``apply`` runs one statement.

    Attributes available while a statement is visited: ``tables`` (the registry, read it
    through ``get_table`` so staged changes are seen), ``statement`` (``Statement``),
    ``options`` (parser options), ``dialect``, ``column_key``."""

    def __init__(self, dialect: "Dialect | None" = None, options: Mapping[str, Any] | None = None):
        self.dialect = dialect
        self.options: Mapping[str, Any] = dict(options or {})
        self.column_key: Callable[[str], str] = dialect.column_key if dialect is not None else casefold_key
        self.tables: Tables = Tables()
        self.statement: "Statement | None" = None
        self._staged: dict[TableId, Table | None] = {}
        self._staged_views: dict[TableId, View | None] = {}
        self._after_commit: list[Callable[[Tables], None]] = []
        self._changes: list[TableChange] = []
        self._warnings: list[str] = []

    # -- running a statement ---------------------------------------------------------------

    def apply(self, tree: Any, statement: "Statement", tables: Tables) -> tuple[list[TableChange], list[str]]:
        """Visit ``tree`` (one statement) and commit its effects to ``tables``.

        Returns ``(changes, warnings)``.  Raises ``DdlParseError`` if the statement cannot be
        applied (then ``tables`` is unchanged)."""
        self.tables = tables
        self.statement = statement
        self._staged = {}
        self._staged_views = {}
        self._after_commit = []
        self._changes = []
        self._warnings = []
        try:
            self.visit(tree)
        except DdlParseError:
            raise
        except ModelError as exc:
            raise self.error(None, str(exc)) from None
        except RecursionError:
            raise self.error(None, "statement nests too deeply to interpret") from None
        except Exception as exc:  # noqa: BLE001 - the contract: DdlParseError only
            raise self.error(None, f"cannot interpret statement: {type(exc).__name__}: {exc}") from exc
        self._commit()
        return self._changes, self._warnings

    def _commit(self) -> None:
        tables = self.tables
        for tid, table in self._staged.items():
            if table is None:
                tables.remove(tid)
            else:
                tables.remove(tid)
                tables.put(table)
        for tid, view in self._staged_views.items():
            key = tables.table_key(tid)
            if view is None:
                tables.views.pop(key, None)
            else:
                tables.views[key] = view
        for fn in self._after_commit:
            fn(tables)

    def later(self, fn: Callable[[Tables], None]) -> None:
        """Run ``fn(tables)`` when the statement commits (session and database state)."""
        self._after_commit.append(fn)

    # -- diagnostics -------------------------------------------------------------------------

    def warn(self, message: str) -> None:
        """Record a warning for the current statement."""
        self._warnings.append(message)

    def error(self, ctx: Any, reason: str) -> DdlParseError:
        """A ``DdlParseError`` at ``ctx`` (a parser rule context or token; ``None``: the
        statement's start) for the current statement.  The caller raises it."""
        stmt = self.statement
        line = col = None
        offending = None
        if stmt is not None:
            line, col = stmt.line, stmt.column
            token = getattr(ctx, "start", ctx) if ctx is not None else None
            if token is not None and hasattr(token, "line"):
                if token.line <= 1:
                    line, col = stmt.line, stmt.column + token.column
                else:
                    line, col = stmt.line + token.line - 1, token.column
                offending = self.source_text(ctx) if hasattr(ctx, "start") else token.text
        return DdlParseError(reason, line=line, column=col, offending=offending,
                             statement=None if stmt is None else stmt.text,
                             statement_index=None if stmt is None else stmt.index)

    # -- source text -------------------------------------------------------------------------

    @staticmethod
    def source_text(ctx: Any) -> str:
        """The original text of a rule context (comments and white space included), or a
        token's text."""
        if ctx is None:
            return ""
        start = getattr(ctx, "start", None)
        if start is None:  # a terminal node or token
            sym = getattr(ctx, "symbol", ctx)
            return sym.text
        stop = ctx.stop
        if stop is None or stop.stop < start.start:
            return ""
        return start.getInputStream().getText(start.start, stop.stop)

    # -- reading the registry ----------------------------------------------------------------

    def get_table(self, table_id: TableId) -> Table | None:
        """The table as this statement sees it (its own earlier changes included)."""
        key = self.tables.table_key(table_id)
        if key in self._staged:
            return self._staged[key]
        return self.tables.get(table_id)

    def get_view(self, table_id: TableId) -> View | None:
        key = self.tables.table_key(table_id)
        if key in self._staged_views:
            return self._staged_views[key]
        return self.tables.views.get(key)

    @property
    def current_database(self) -> str | None:
        return self.tables.current_database

    def qualify(self, database: str | None, name: str, schema: str | None = None) -> TableId:
        """A ``TableId`` for ``[database.]name``, defaulting to the current database."""
        return TableId(database if database is not None else self.current_database, schema, name)

    # -- table operations ----------------------------------------------------------------------

    def _stage(self, table_id: TableId, table: Table | None) -> None:
        if table is not None and self.dialect is not None and table.dialect != self.dialect.name:
            table = dataclasses.replace(table, dialect=self.dialect.name)  # it knows its dialect
        self._staged[self.tables.table_key(table_id)] = table

    def create_table(self, table: Table, *, if_not_exists: bool = False, or_replace: bool = False) -> None:
        """CREATE TABLE: add ``table``.  An existing table is an error unless ``if_not_exists``
        (then nothing happens, as the server does) or ``or_replace`` (the old one is dropped)."""
        old = self.get_table(table.id)
        if old is not None:
            if if_not_exists:
                self.warn(f"table {table.id} exists; CREATE TABLE IF NOT EXISTS changed nothing")
                return
            if not or_replace:
                # the server would refuse; a change log only holds statements that ran, so the
                # model was behind: take the new definition and say so
                self.warn(f"table {table.id} already existed in the model; replaced")
            self._changes.append(TableChange("drop", old.id, before=old))
        self._stage(table.id, table)
        self._changes.append(TableChange("create", table.id, after=table))

    def alter_table(self, table_id: TableId, edit: Callable[[TableEditor], TableEditor | None], ctx: Any = None) -> Table | None:
        """ALTER: apply ``edit`` to an editor over the table and store the result.

        A table the model does not know is skipped with a warning (a change log may start after
        the table was created)."""
        old = self.get_table(table_id)
        if old is None:
            self.warn(f"table {table_id} is not known; statement ignored for it")
            return None
        editor = old.edit(self.column_key)
        result = edit(editor)
        editor = result if isinstance(result, TableEditor) else editor
        new = editor.build()
        if new.id != old.id:
            if self.get_table(new.id) is not None:
                raise self.error(ctx, f"cannot rename {old.id} to {new.id}: {new.id} exists")
            self._stage(old.id, None)
            self._changes.append(TableChange("rename", new.id, before=old, after=new, previous_id=old.id))
        else:
            self._changes.append(TableChange("alter", new.id, before=old, after=new))
        self._stage(new.id, new)
        return new

    def rename_table(self, old_id: TableId, new_id: TableId, ctx: Any = None) -> None:
        """RENAME TABLE old TO new (or ALTER TABLE ... RENAME).  The target must not exist."""
        old = self.get_table(old_id)
        if old is None:
            view = self.get_view(old_id)
            if view is not None:  # RENAME TABLE also renames views (MySQL manual 15.1.36)
                self._staged_views[self.tables.table_key(old_id)] = None
                self._staged_views[self.tables.table_key(new_id)] = View(new_id, view.definition, view.column_names)
                return
            self.warn(f"table {old_id} is not known; rename to {new_id} ignored")
            return
        if self.get_table(new_id) is not None:
            raise self.error(ctx, f"cannot rename {old_id} to {new_id}: {new_id} exists")
        new = old.edit(self.column_key).rename(new_id).build()
        self._stage(old_id, None)
        self._stage(new_id, new)
        self._changes.append(TableChange("rename", new_id, before=old, after=new, previous_id=old.id))

    def drop_table(self, table_id: TableId, *, if_exists: bool = False, ctx: Any = None) -> None:
        """DROP TABLE: remove the table; an unknown one is a warning (with IF EXISTS: silent)."""
        old = self.get_table(table_id)
        if old is None:
            if not if_exists:
                self.warn(f"table {table_id} is not known; drop ignored")
            return
        self._stage(table_id, None)
        self._changes.append(TableChange("drop", old.id, before=old))

    def truncate_table(self, table_id: TableId) -> None:
        old = self.get_table(table_id)
        if old is None:
            self.warn(f"table {table_id} is not known; truncate ignored")
            return
        self._changes.append(TableChange("truncate", old.id, before=old, after=old))

    # -- views -------------------------------------------------------------------------------

    def create_view(self, view: View, *, or_replace: bool = False) -> None:
        self._staged_views[self.tables.table_key(view.id)] = view

    def drop_view(self, table_id: TableId, *, if_exists: bool = False) -> None:
        if self.get_view(table_id) is None:
            if not if_exists:
                self.warn(f"view {table_id} is not known; drop ignored")
            return
        self._staged_views[self.tables.table_key(table_id)] = None

    # -- databases and session -----------------------------------------------------------------

    def get_database(self, name: str) -> Database | None:
        return self.tables.databases.get(name)

    def put_database(self, database: Database) -> None:
        self.later(lambda t: t.databases.__setitem__(database.name, database))

    def drop_database(self, name: str) -> None:
        """DROP DATABASE: the database and every table and view in it."""
        for table in list(self.tables):
            if table.id.database == name and self.tables.table_key(table.id) not in self._staged:
                self.drop_table(table.id, if_exists=True)
        for key, view in list(self.tables.views.items()):
            if view.id.database == name:
                self._staged_views[key] = None

        def _drop(t: Tables) -> None:
            t.databases.pop(name, None)
            if t.current_database == name:
                t.current_database = None  # the server's behaviour: no database selected

        self.later(_drop)

    def use_database(self, name: str) -> None:
        def _use(t: Tables) -> None:
            t.current_database = name

        self.later(_use)

    def set_session(self, variable: str, value: str) -> None:
        def _set(t: Tables) -> None:
            t.session[variable] = value

        self.later(_set)
