"""``SchemaHistory``: every table version by log position, persisted, recoverable without
re-parsing.

Owns: turning one DDL event into stored versions (parse, apply, diff against the stored heads,
one atomic write), restoring the parser's state after a restart, and the queries (model at a
seq, one table at a seq, a table's versions, diffs, schema change events).
Must not know: any dialect (the parser comes from a plugin), any storage engine (a
``HistoryStore`` is given).

Vocabulary.  An *event* is one DDL statement from a change log with a ``seq`` (int, strictly
increasing) and a ``position`` (the source's opaque position text).  A *version* of a table is
its definition from one event on, until its next version; version numbers count from 1 per
table id.  A version whose table is ``None`` says that nothing exists under that id any more
(drop, or rename away).  Versions are stored as the *net* effect of an event on each id: a
statement that changes nothing stored (``ALTER TABLE t ENGINE=InnoDB`` on an InnoDB table)
makes no version, and ``RENAME TABLE a TO tmp, b TO a, tmp TO b`` makes one version of ``a`` and
one of ``b``.  *Schema change events* keep every change the parser reported, in order.

Recovery reads the latest stored version of each table, view and database (``heads``), the
last session state (current database, session variables) and the *shadow* (the definitions of
tables outside the filter, kept unversioned so that a RENAME into the filter works after a
restart).  It never parses DDL; its cost grows with the number of tables, not with the
history's length.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping

from ..errors import DdlCoreError, DdlParseError
from ..model import Table, TableChange, TableId, Tables, casefold_key, lower_table_key
from ..splitter import Statement
from ..dialect import check_dialect_options
from .codec import Encoder, decode, dumps as _dumps, id_text
from .diff import TableDiff, diff_tables
from .filters import TableFilter
from .store import (ChangeRow, EventRow, HistoryStore, MemoryStore, ShadowRow, VersionRow,
                    WriteBatch)

__all__ = ["SchemaHistory", "DdlEvent", "TableVersion", "SchemaChange", "SchemaChangeEvent",
           "HistoryError"]


class HistoryError(DdlCoreError):
    """A history operation that cannot be done: events out of seq order, a seq recorded
    again with different DDL, a store opened with another dialect / options / filter, an
    unknown version."""


# --------------------------------------------------------------------------------------------
# values
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DdlEvent:
    """One DDL event of a change log (docs/changelog.md).

    ``seq``: int, strictly increasing over the log (the order); ``ddl``: the statement text
    (one statement, as a binlog query event holds; a PostgreSQL query string may hold several);
    ``position``: the source's position text (``mariadb-bin.000003:1234``, a GTID, an LSN;
    opaque); ``database``: the current database the statement ran in (``None``: keep the
    history's current database); ``ts``: commit time in milliseconds since the epoch, or
    ``None``.

    From the change-log contract: ``op`` (``"ddl"``, or ``"source"``: ``source`` holds a
    ``SourceInfo`` object whose ``parser_options`` apply from this seq on; ``ddl`` is then its
    JSON text), ``catalog`` (``{"tables": [Table JSON], "dropped": [TableId JSON], "renamed":
    [{"from": TableId JSON, "to": TableId JSON}]}``: what the source's catalog says the
    statement did — recorded as given), ``snapshot`` (the statement describes a table as it is
    now: it replaces what the history knew), ``search_path`` (PostgreSQL: the session's
    schemas in order)."""

    seq: int
    ddl: str
    position: str | None = None
    database: str | None = None
    ts: int | None = None
    op: str = "ddl"
    catalog: Mapping[str, Any] | None = None
    snapshot: bool = False
    search_path: tuple[str, ...] | None = None
    source: Mapping[str, Any] | None = None

    @classmethod
    def coerce(cls, event: "DdlEvent | Mapping[str, Any]") -> "DdlEvent":
        """A ``DdlEvent`` from itself or a mapping with keys ``seq``, ``ddl`` and optionally
        ``position``, ``database``, ``ts``, ``op``, ``catalog``, ``snapshot``, ``search_path``,
        ``source`` (a change-log event; other keys are ignored).  A ``source`` event needs
        ``source`` instead of ``ddl``.  Raises ``TypeError`` / ``ValueError`` for a missing or
        mistyped field."""
        if isinstance(event, DdlEvent):
            ev = event
        elif isinstance(event, Mapping):
            op = event.get("op") or "ddl"
            if op not in ("ddl", "source"):
                raise ValueError(f"a schema history records ddl and source events, not op={op!r}")
            if "seq" not in event or (op == "ddl" and "ddl" not in event):
                raise ValueError(f"a DDL event needs 'seq' and 'ddl' (got keys {sorted(event)})")
            source = event.get("source")
            if op == "source":
                if not isinstance(source, Mapping):
                    raise ValueError("a source event needs 'source' (an object)")
                ddl = _dumps(dict(source))
            else:
                ddl = event["ddl"]
            pos = event.get("position")
            sp = event.get("search_path")
            ev = cls(event["seq"], ddl, None if pos is None else str(pos),
                     event.get("database"), event.get("ts"), op, event.get("catalog"),
                     bool(event.get("snapshot") or False), None if sp is None else tuple(sp),
                     source)
        else:
            raise TypeError(f"expected a DdlEvent or a mapping, got {type(event).__name__}")
        if isinstance(ev.seq, bool) or not isinstance(ev.seq, int):
            raise TypeError(f"seq must be an int, got {ev.seq!r}")
        if not isinstance(ev.ddl, str):
            raise TypeError(f"ddl must be a string, got {type(ev.ddl).__name__}")
        if ev.ts is not None and (isinstance(ev.ts, bool) or not isinstance(ev.ts, int)):
            raise TypeError(f"ts must be an int (milliseconds) or None, got {ev.ts!r}")
        if ev.catalog is not None and not isinstance(ev.catalog, Mapping):
            raise TypeError("catalog must be an object")
        return ev


@dataclass(frozen=True)
class TableVersion:
    """One stored version of a table.

    ``table``: the definition (``None``: the table does not exist under ``table_id`` from
    ``valid_from_seq`` on — dropped or renamed away — or its schema is unknown: ``blocked``);
    ``kind``: ``create``, ``alter``, ``rename``, ``drop``, ``snapshot`` (a snapshot or resync
    replaced the definition) or ``blocked`` (a statement on the table failed to parse or apply:
    its schema is unknown from ``valid_from_seq`` until its next version; ``reason`` says since
    when and why, e.g. ``"schema unknown since seq 42: ..."``; rows in that span cannot be
    interpreted); ``fingerprint``: ``Table.fingerprint()`` (``None`` with no table);
    ``valid_from_seq`` / ``position`` / ``ts`` / ``ddl``: the event that made it;
    ``valid_to_seq``: the seq of the next version (``None``: still in force); ``previous_id``:
    for a rename, the id the table came from; ``renamed_to``: for a rename away, the new id."""

    table_id: TableId
    version: int
    kind: str
    table: Table | None
    fingerprint: str | None
    valid_from_seq: int
    valid_to_seq: int | None
    position: str | None
    ts: int | None
    ddl: str
    previous_id: TableId | None = None
    renamed_to: TableId | None = None
    reason: str | None = None

    @property
    def blocked(self) -> bool:
        """The table's schema is unknown in this version's span (``kind == "blocked"``)."""
        return self.kind == "blocked"

    def to_json(self) -> dict[str, Any]:
        return {
            "table_id": self.table_id.to_json(), "version": self.version, "kind": self.kind,
            "reason": self.reason,
            "fingerprint": self.fingerprint, "valid_from_seq": self.valid_from_seq,
            "valid_to_seq": self.valid_to_seq, "position": self.position, "ts": self.ts,
            "ddl": self.ddl,
            "previous_id": None if self.previous_id is None else self.previous_id.to_json(),
            "renamed_to": None if self.renamed_to is None else self.renamed_to.to_json(),
            "table": None if self.table is None else self.table.to_json(),
        }


@dataclass(frozen=True)
class SchemaChange:
    """One table change of a DDL event, for consumers (Debezium's ``tableChanges`` entry).

    ``kind``: ``create``, ``alter``, ``rename``, ``drop`` or ``truncate``; ``table_id`` (for a
    drop: the dropped table); ``previous_id`` (rename); ``before`` / ``after`` the table before
    and after (``None`` where it did not exist); ``version``: the version of ``table_id`` in
    force after the event (``None`` when the table is outside the filter); ``fingerprint`` of
    ``after``."""

    kind: str
    table_id: TableId
    previous_id: TableId | None
    before: Table | None
    after: Table | None
    version: int | None
    fingerprint: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "table_id": self.table_id.to_json(),
            "previous_id": None if self.previous_id is None else self.previous_id.to_json(),
            "version": self.version, "fingerprint": self.fingerprint,
            "before": None if self.before is None else self.before.to_json(),
            "after": None if self.after is None else self.after.to_json(),
        }


@dataclass(frozen=True)
class SchemaChangeEvent:
    """One recorded DDL event and what it changed (the schema-change record a consumer reads,
    as Debezium's schema-change topic or Maxwell's DDL JSON).

    ``status``: ``applied``, ``skipped`` (not DDL of interest; ``reason``) or ``failed``
    (lenient mode; ``error`` is ``DdlParseError.to_json()``).  ``database``: the current
    database the statement ran in.  ``changes``: the ``SchemaChange``s on tables the filter
    selects (a rename counts when either side is selected).  ``recorded``: ``False`` when
    ``record`` found the seq already recorded (the stored event is returned)."""

    seq: int
    position: str | None
    ts: int | None
    database: str | None
    ddl: str
    status: str
    changes: tuple[SchemaChange, ...] = ()
    reason: str | None = None
    error: dict[str, Any] | None = None
    warnings: tuple[str, ...] = ()
    recorded: bool = True

    def to_json(self) -> dict[str, Any]:
        """``{"seq", "position", "ts", "database", "ddl", "status", "reason", "error",
        "warnings", "changes": [SchemaChange.to_json(), ...]}``."""
        return {"seq": self.seq, "position": self.position, "ts": self.ts,
                "database": self.database, "ddl": self.ddl, "status": self.status,
                "reason": self.reason, "error": self.error, "warnings": list(self.warnings),
                "changes": [c.to_json() for c in self.changes]}


# --------------------------------------------------------------------------------------------
# ids and bodies (the encoding itself is ddlcore.history.codec)
# --------------------------------------------------------------------------------------------

def _id_text(tid: TableId | None) -> str | None:
    return id_text(tid)


def _id_from(text: str | None) -> TableId | None:
    if text is None:
        return None
    parts = json.loads(text)
    return TableId(parts[0], parts[1], parts[2])


class _Decoder:
    """Bodies by hash → model values, cached (a history repeats bodies)."""

    def __init__(self, store: HistoryStore, size: int = 4096):
        self.store = store
        self.size = size
        self._text: dict[str, str] = {}

    def prefetch(self, hashes: Iterable[str | None]) -> None:
        missing = {h for h in hashes if h is not None and h not in self._text}
        if missing:
            if len(self._text) + len(missing) > self.size:
                self._text.clear()
            self._text.update(self.store.bodies(missing))

    def __call__(self, kind: str, name: str, body: str | None) -> Any:
        if body is None:
            return None
        if body not in self._text:
            self.prefetch([body])
        return decode(kind, name, self._text[body])


@dataclass
class _Head:
    version: int
    body: str | None
    name: str
    blocked: bool = False


@dataclass
class _CatalogGroup:
    """The events of one query string that carry catalog descriptions: the text is applied
    once; ``states`` are the parsed tables after each of its statements (``None`` after a
    restart: not compared); ``pre`` the model before the text (``None`` after a restart);
    ``renamed`` the renames the catalog reported so far."""

    text: str
    states: list[tuple[TableId, Table | None]] | None
    pre: "Tables | None" = None
    renamed: dict = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# SchemaHistory
# --------------------------------------------------------------------------------------------


class SchemaHistory:
    """The schema history of one change log over a ``HistoryStore``.

    ``store``: a ``HistoryStore``, a path to an SQLite file (created if missing), or ``None``
    for an in-memory store.  ``dialect``: a dialect name or ``Dialect`` (needed to record into
    a new store); ``options``: its parser options; ``visitor_class``: a custom visitor;
    ``parser``: a ready parser instead of all three (anything with ``split``, ``apply``,
    ``new_tables``, ``dialect`` and ``options`` as ``DdlParser`` has).  ``filters``: table
    patterns (see ``ddlcore.history.filters``); only selected tables are versioned.
    ``lenient``: record unparsable DDL as failed events instead of raising.

    A store remembers its dialect, options and filters; opening it with different ones raises
    ``HistoryError``.  Reading (``tables_at``, ``versions``, ...) never builds a parser, so it
    works without the dialect's plugin.  Not thread-safe; one writer per store.
    """

    def __init__(self, store: HistoryStore | str | os.PathLike[str] | None = None, *,
                 dialect: Any = None, options: Mapping[str, Any] | None = None,
                 visitor_class: type | None = None, parser: Any = None,
                 filters: Iterable[str] | str | TableFilter | None = None, lenient: bool = False):
        if store is None:
            store = MemoryStore()
        elif not isinstance(store, HistoryStore):
            from .sqlite import SQLiteStore
            store = SQLiteStore(store)
        self.store: HistoryStore = store
        self.lenient = lenient
        self._visitor_class = visitor_class
        self._parser = parser
        self._dialect = None
        meta = store.meta()
        given_opts = {k: v for k, v in (options or {}).items() if k != "lenient"}
        if "lenient" in (options or {}):
            self.lenient = bool(options["lenient"])  # type: ignore[index]
        name: str | None = None
        opts: dict[str, Any] | None = None
        if parser is not None:
            name = parser.dialect.name
            opts = {k: v for k, v in dict(parser.options).items() if k != "lenient"}
            self._dialect = parser.dialect
        elif dialect is not None:
            if isinstance(dialect, str):
                from ..plugins import get_dialect
                dialect = get_dialect(dialect)
            self._dialect = dialect
            name = dialect.name
            given_opts = check_dialect_options(dialect, given_opts)  # TypeError / OptionError
            opts = {**dict(dialect.default_options), **given_opts}
        if isinstance(filters, TableFilter):
            filters = list(filters.patterns)
        elif isinstance(filters, str):
            filters = [filters]
        new_filters = None if filters is None else list(TableFilter(filters).patterns)

        stored = meta.get("dialect")
        if stored is not None:
            if name is not None and name != stored:
                raise HistoryError(f"this history was recorded with dialect {stored!r}, not {name!r}")
            stored_opts = json.loads(meta.get("options", "{}"))
            check = given_opts if parser is None else (opts or {})
            diff = {k: v for k, v in check.items() if stored_opts.get(k, _MISSING) != json.loads(_dumps(v))}
            if diff:
                raise HistoryError(f"this history was recorded with parser options {stored_opts}; "
                                   f"cannot record with {diff}")
            opts = stored_opts
            name = stored
            stored_filters = json.loads(meta.get("filters", "[]"))
            if new_filters is not None and new_filters != stored_filters:
                raise HistoryError(f"this history was recorded with table filters {stored_filters}; "
                                   f"cannot change them to {new_filters}")
            new_filters = stored_filters
            fold = meta.get("fold") == "1"
        else:
            fold = False
            if self._dialect is not None:
                fold = self._folds(self._dialect.new_tables(**(opts or {})).table_key) if parser is None \
                    else self._folds(parser.new_tables().table_key)
        self.dialect_name: str | None = name
        self.options: dict[str, Any] = dict(opts or {})
        self.filter = TableFilter(new_filters or (), case_sensitive=not fold)
        self._fold = fold
        self._key_fn: Callable[[TableId], TableId] = lower_table_key if fold else (lambda t: t)
        if stored is None and name is not None:
            store.set_meta({"dialect": name, "options": _dumps(self.options),
                            "filters": _dumps(list(self.filter.patterns)),
                            "fold": "1" if fold else "0"})
        self._encode = Encoder()
        self._decode = _Decoder(store)
        self._loaded = False  # writer state below is valid only when True
        self._tables: Tables | None = None
        self._heads: dict[tuple[str, str], _Head | None] = {}
        self._shadow: dict[tuple[str, str], tuple[str, str]] = {}
        self._last_seq: int | None = None
        self._state_text: str | None = None
        self._pruned: int | None = None
        self._catalog_group: _CatalogGroup | None = None
        self._loaded_group_checked = False
        self._source_options = False
        last = store.last_seq()
        if last is not None and stored is not None:
            self._restore_options(store.state_at(last))  # a source event's options are current

    # -- construction helpers --------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str], **kw: Any) -> "SchemaHistory":
        """A history in the SQLite file ``path`` (created if missing); ``kw`` as the
        constructor."""
        return cls(path, **kw)

    @classmethod
    def in_memory(cls, **kw: Any) -> "SchemaHistory":
        """A history in process memory (``MemoryStore``)."""
        return cls(MemoryStore(), **kw)

    @staticmethod
    def _folds(key: Callable[[TableId], TableId]) -> bool:
        return key(TableId("A", "B", "C")) == TableId("a", "b", "c")

    def close(self) -> None:
        """Close the store."""
        self.store.close()

    def __enter__(self) -> "SchemaHistory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<SchemaHistory {self.dialect_name} last_seq={self.last_seq}>"

    # -- keys --------------------------------------------------------------------------------

    def _key(self, tid: TableId) -> str:
        k = self._key_fn(tid)
        return _dumps([k.database, k.schema, k.name])

    @staticmethod
    def _as_id(table_id: TableId | str) -> TableId:
        return TableId.parse(table_id) if isinstance(table_id, str) else table_id

    def _new_tables(self) -> Tables:
        if self._dialect is not None:
            try:
                return self._dialect.new_tables(**self.options)
            except TypeError:  # a duck-typed parser's dialect
                pass
        return Tables(self._key_fn)

    # -- recording -----------------------------------------------------------------------------

    @property
    def parser(self) -> Any:
        """The parser used by ``record`` (built on first use)."""
        if self._parser is None:
            if self._dialect is None:
                if self.dialect_name is None:
                    raise HistoryError("a new history needs a dialect to record (dialect='mysql')")
                from ..plugins import get_dialect
                self._dialect = get_dialect(self.dialect_name)
            self._parser = self._dialect.parser(visitor_class=self._visitor_class, **self.options)
        return self._parser

    @property
    def folds_table_names(self) -> bool:
        """Table names compare in lower case (MySQL ``lower_case_table_names`` 1 or 2, from
        the options or a source event)."""
        return self._fold

    @property
    def last_seq(self) -> int | None:
        """The highest recorded seq (``None``: nothing recorded)."""
        return self.store.last_seq()

    def _load(self) -> None:
        """Restore the parser's state as it was after the last recorded event: the latest
        version of every table, view and database, the shadow and the session state.  Reads
        stored values only (no DDL is parsed)."""
        last = self.store.last_seq()
        self._restore_options(None if last is None else self.store.state_at(last))
        parser = self.parser
        tables = parser.new_tables()
        heads = self.store.heads(None)
        shadow = self.store.shadow()
        self._decode.prefetch([h.body for h in heads] + [s.body for s in shadow])
        self._heads = {}
        for h in heads:
            self._heads[(h.kind, h.key)] = _Head(h.version, h.body, h.name)
            self._put(tables, h.kind, self._decode(h.kind, h.name, h.body))
        self._shadow = {}
        for s in shadow:
            self._shadow[(s.kind, s.key)] = (s.body, s.name)
            self._put(tables, s.kind, self._decode(s.kind, s.name, s.body))
        self._last_seq = self.store.last_seq()
        self._pruned = None
        self._state_text = None if self._last_seq is None else self.store.state_at(self._last_seq)
        self._apply_state(tables, self._state_text)
        self._tables = tables
        self._loaded = True

    @staticmethod
    def _put(tables: Tables, kind: str, obj: Any) -> None:
        if kind == "table":
            tables.put(obj)
        elif kind == "view":
            tables.views[tables.table_key(obj.id)] = obj
        else:
            tables.databases[obj.name] = obj

    @staticmethod
    def _apply_state(tables: Tables, text: str | None) -> None:
        if text is None:
            return
        st = json.loads(text)
        tables.current_database = st.get("current_database")
        tables.search_path = tuple(st.get("search_path", ()))
        tables.session = dict(st.get("session", {}))
        tables.types = dict(st.get("types", {}))

    def _state_of(self, tables: Tables) -> str:
        state: dict[str, Any] = {"current_database": tables.current_database,
                                 "search_path": list(tables.search_path),
                                 "session": dict(tables.session)}
        if tables.types:
            state["types"] = tables.types
        if self._source_options:
            state["parser_options"] = self.options  # set by a source event: survives restarts
        return _dumps(state)

    def _restore_options(self, text: str | None) -> None:
        """The parser options a source event set, from the stored state (restart)."""
        if text is None:
            return
        opts = json.loads(text).get("parser_options")
        if opts is not None and opts != self.options:
            self.options = dict(opts)
            self._parser = None
        self._source_options = opts is not None

    def _invalidate(self) -> None:
        self._loaded = False
        self._tables = None
        self._catalog_group = None
        self._loaded_group_checked = False

    def current_tables(self) -> Tables:
        """The live model after the last recorded event, as the parser sees it (tables
        outside the filter included).  Do not modify it."""
        if not self._loaded:
            self._load()
        assert self._tables is not None
        return self._tables

    def _statement(self, ddl: str) -> Statement | None:
        stmts = self.parser.split(ddl)
        if not stmts:
            return None
        if len(stmts) == 1:
            return stmts[0]
        # an event is one statement (as a binlog query event): a compound statement whose body
        # holds semicolons stays whole
        lead = len(ddl) - len(ddl.lstrip())
        line = ddl.count("\n", 0, lead) + 1
        col = lead - (ddl.rfind("\n", 0, lead) + 1)
        return Statement(ddl.strip(), 0, line, col, lead)

    def record(self, event: DdlEvent | Mapping[str, Any], *, statement: Statement | None = None,
               lenient: bool | None = None) -> SchemaChangeEvent:
        """Parse and apply one DDL event and store what it changed, atomically.

        ``event``: a ``DdlEvent`` or a mapping (a change-log ``ddl`` or ``source`` event:
        ``seq``, ``ddl``, ``position``, ``database``, ``ts``, and optionally ``op``,
        ``catalog``, ``snapshot``, ``search_path``, ``source``).  ``statement``: the event's
        statement as a script splitter already produced it (default: ``event.ddl`` is split;
        one event is one statement).  ``lenient``: this call's mode (default: the history's).

        * A ``source`` event switches the parser options to its ``parser_options`` from this
          seq on (status ``"source"``).
        * A ``catalog`` is recorded as given (the source's catalog is the truth); the DDL text
          is parsed too and every disagreement is a warning starting ``drift: ``.
        * ``snapshot``: the statement's tables replace what the history knew (kind
          ``snapshot``; a blocked table is unblocked).
        * In lenient mode, a statement that fails to parse or apply (status ``"failed"``)
          *blocks* the tables it names (``Dialect.statement_targets``; every table of the
          current database when the names cannot be read): a version of kind ``blocked``
          whose ``reason`` is ``"schema unknown since seq N: <error>"``.  A blocked table is
          out of the live model, so later ALTERs cannot give it a guessed schema; a snapshot
          (resync) or a CREATE gives it a schema again.

        Returns the ``SchemaChangeEvent``.  An event whose seq is already recorded changes
        nothing: the stored event is returned with ``recorded=False``.

        Raises ``DdlParseError`` (strict mode) for DDL that cannot be parsed or applied — the
        event stays unrecorded; ``HistoryError`` for a seq not after the last recorded one, a
        recorded seq given with different DDL, or a source event of another dialect;
        ``StoreConflict`` when another process wrote to the store."""
        ev = DdlEvent.coerce(event)
        row = self.store.event(ev.seq)
        if row is None and ev.seq < self.pruned_before:
            return SchemaChangeEvent(ev.seq, ev.position, ev.ts, ev.database, ev.ddl, "pruned",
                                     reason=f"seq {ev.seq} is before the pruned part of the history "
                                            f"(< {self.pruned_before})", recorded=False)
        if row is not None:
            if row.ddl != ev.ddl:
                raise HistoryError(f"seq {ev.seq} is already recorded with different DDL "
                                   f"({_short(row.ddl)!r}, now {_short(ev.ddl)!r})")
            return self._event_from_row(row, recorded=False)
        tables = self.current_tables()
        if self._last_seq is not None and ev.seq <= self._last_seq:
            raise HistoryError(f"seq {ev.seq} arrives after seq {self._last_seq}: events must be "
                               f"recorded in increasing seq order")
        if ev.op == "source":
            return self._record_source(ev)
        lenient = self.lenient if lenient is None else lenient
        parser = self.parser
        stmt = statement if statement is not None else self._statement(ev.ddl)
        saved_db, saved_path = tables.current_database, tables.search_path
        views_before = dict(tables.views)
        dbs_before = dict(tables.databases)
        if ev.database is not None:
            tables.current_database = ev.database
        if ev.search_path is not None:
            tables.search_path = tuple(ev.search_path)
        ran_in = tables.current_database
        blocked: list[tuple[TableId, str]] = []
        try:
            if ev.catalog is not None:
                result = self._apply_catalog(ev, tables)
            else:
                result = None if stmt is None else parser.apply(stmt, tables, lenient=lenient)
                if result is not None and result.status == "failed":
                    blocked = self._blocked_targets(ev, stmt, result, tables)
                elif result is not None and ev.snapshot:
                    result = self._keep_identities(result, tables)
        except DdlParseError:
            tables.current_database, tables.search_path = saved_db, saved_path  # nothing changed
            raise
        except BaseException:
            self._invalidate()
            raise
        if ev.catalog is None:
            self._catalog_group = None
        try:
            batch, out, heads, shadow = self._build(ev, ran_in, result, views_before, dbs_before, blocked)
            self.store.write(batch)
        except BaseException:
            self._invalidate()
            raise
        self._commit_heads(heads, shadow, ev.seq, batch)
        return out

    def _commit_heads(self, heads: dict, shadow: dict, seq: int, batch: WriteBatch) -> None:
        self._heads.update(heads)
        for k, v in shadow.items():
            if v is None:
                self._shadow.pop(k, None)
            else:
                self._shadow[k] = v
        self._last_seq = seq
        if batch.event.state is not None:
            self._state_text = batch.event.state

    # -- source events -------------------------------------------------------------------------

    def _record_source(self, ev: DdlEvent) -> SchemaChangeEvent:
        """A ``source`` event: check its dialect, switch the parser options."""
        from ..changelog import SourceInfo

        try:
            src = SourceInfo.from_json(dict(ev.source or {}))
        except ValueError as exc:
            raise HistoryError(f"seq {ev.seq}: {exc}") from None
        if self._dialect is None and self.dialect_name is None:
            raise HistoryError("a new history needs a dialect to record (dialect='mysql')")
        dialect = self._dialect
        if dialect is None:
            from ..plugins import get_dialect
            dialect = self._dialect = get_dialect(self.dialect_name)  # type: ignore[arg-type]
        if src.dialect.lower() != dialect.name and src.dialect.lower() not in dialect.aliases:
            raise HistoryError(f"seq {ev.seq}: the change log's source is dialect {src.dialect!r}; "
                               f"this history records {dialect.name!r}")
        given = dict(src.parser_options)
        if src.flavor is not None and "flavor" in dialect.default_options:
            given.setdefault("flavor", src.flavor)
        try:
            given = check_dialect_options(dialect, given)
        except (TypeError, ValueError) as exc:
            raise HistoryError(f"seq {ev.seq}: the source event's parser options: {exc}") from None
        new_opts = {**dict(dialect.default_options), **given}
        new_opts.pop("lenient", None)
        tables = self.current_tables()
        changed = {k: v for k, v in new_opts.items()
                   if json.loads(_dumps(self.options.get(k))) != json.loads(_dumps(v)) or k not in self.options}
        if changed:
            fold = self._folds(dialect.new_tables(**new_opts).table_key)
            if fold != self._fold:
                if len(tables) or tables.views:
                    raise HistoryError(
                        f"seq {ev.seq}: the source's table-name rules changed ({changed}) after tables "
                        f"were recorded; a change log cannot change lower_case_table_names midway")
                self._fold = fold
                self._key_fn = lower_table_key if fold else (lambda t: t)
                self.filter = TableFilter(self.filter.patterns, case_sensitive=not fold)
                self.store.set_meta({"fold": "1" if fold else "0"})
            self.options = new_opts
            self._source_options = True
            self._parser = None
            fresh = self.parser.new_tables()
            fresh.databases, fresh.views = tables.databases, tables.views
            fresh.current_database, fresh.search_path = tables.current_database, tables.search_path
            fresh.session = tables.session
            fresh.types = tables.types
            for t in tables:
                fresh.put(t)
            self._tables = tables = fresh
        reason = (f"source: dialect {src.dialect}" + (f", flavor {src.flavor}" if src.flavor else "")
                  + (f"; parser options changed: {_dumps(changed)}" if changed else "; parser options unchanged"))
        state = self._state_of(tables)
        row = EventRow(ev.seq, ev.position, ev.ts, None, ev.ddl, "source", reason, None, None,
                       state if state != self._state_text else None)
        batch = WriteBatch(row, self._last_seq)
        try:
            self.store.write(batch)
        except BaseException:
            self._invalidate()
            raise
        self._commit_heads({}, {}, ev.seq, batch)
        return SchemaChangeEvent(ev.seq, ev.position, ev.ts, None, ev.ddl, "source", (), reason)

    def _keep_identities(self, result: Any, tables: Tables) -> Any:
        """A snapshot's ``CREATE TABLE`` replaces a table the history knew (a drop and a create
        in ``result``): its columns keep the identities of the replaced table's columns of the
        same name (``Table.with_ids_from``), so a snapshot is not a drop and re-add of every
        column."""
        replaced = {tables.table_key(c.table_id): c.before for c in result.changes
                    if c.kind == "drop" and c.before is not None}
        if not replaced:
            return result
        key = getattr(self._dialect, "column_key", None) or casefold_key
        changes = []
        for c in result.changes:
            old = replaced.get(tables.table_key(c.table_id))
            if c.kind == "create" and c.after is not None and old is not None:
                new = c.after.with_ids_from(old, key)
                tables.put(new)
                c = dataclasses.replace(c, after=new)
            changes.append(c)
        return dataclasses.replace(result, changes=tuple(changes))

    # -- catalog descriptions -----------------------------------------------------------------

    def _apply_catalog(self, ev: DdlEvent, tables: Tables) -> Any:
        """Apply a ddl event that carries the source's catalog description: the text is parsed
        (once per query string: a PostgreSQL query string with several commands arrives as one
        event per command, each with the whole text) and applied, then the catalog's tables
        overwrite what the parse made; disagreements are ``drift: `` warnings."""
        from ..parsing import StatementResult
        from ..model import Table as _Table

        catalog = ev.catalog or {}
        warnings: list[str] = []
        text_changes: list[TableChange] = []
        group = self._catalog_group
        if group is None and self._last_seq is not None and not self._loaded_group_checked:
            self._loaded_group_checked = True
            last = self.store.event(self._last_seq)
            if last is not None and last.ddl == ev.ddl and last.status == "applied":
                group = _CatalogGroup(ev.ddl, None)  # continuing a query string across a restart
        self._loaded_group_checked = True
        if group is None or group.text != ev.ddl:
            pre = tables.copy()
            states: list[tuple[TableId, Table | None]] = []
            failures: list[str] = []
            for st in self.parser.split(ev.ddl):
                r = self.parser.apply(st, tables, lenient=True)
                if r.status == "failed" and r.error is not None:
                    failures.append(str(r.error))
                text_changes.extend(r.changes)
                warnings.extend(r.warnings)
                for c in r.changes:
                    states.append((c.table_id, c.after))
                    if c.previous_id is not None:
                        states.append((c.previous_id, None))
            group = _CatalogGroup(ev.ddl, states, pre)
            for f in failures:
                warnings.append(f"drift: the DDL text could not be parsed or applied ({f}); "
                                f"the catalog description was recorded")
        self._catalog_group = group
        cat_changes: list[TableChange] = []
        def before_of(tid: TableId) -> Table | None:
            return group.pre.get(tid) if group.pre is not None else tables.get(tid)

        for item in catalog.get("renamed", ()) or ():
            src_id, dst_id = TableId.from_json(item["from"]), TableId.from_json(item["to"])
            if tables.table_key(src_id) == tables.table_key(dst_id):
                continue
            old = before_of(src_id) or tables.get(src_id)
            tables.remove(src_id)
            group.renamed[tables.table_key(dst_id)] = (src_id, old)
        for tj in catalog.get("tables", ()) or ():
            key = tables.table_key(TableId.from_json(tj))
            renamed = group.renamed.get(key)
            table = _Table.from_json(tj).with_ids_from(before_of(TableId.from_json(tj))
                                                       or (renamed[1] if renamed else None),
                                                       getattr(self._dialect, "column_key", None) or casefold_key)
            if group.states is not None:
                parsed = [t for tid, t in group.states if tables.table_key(tid) == key]
                drift = _drift(parsed, table, self._dialect)
                if drift:
                    warnings.append(f"drift: {table.id}: {drift}")
            before = before_of(table.id)
            tables.put(table)
            renamed = group.renamed.get(key)
            if renamed is not None:
                cat_changes.append(TableChange("rename", table.id, before=renamed[1], after=table,
                                               previous_id=renamed[0]))
            else:
                cat_changes.append(TableChange("alter" if before is not None else "create", table.id,
                                               before=before, after=table))
        for dj in catalog.get("dropped", ()) or ():
            tid = TableId.from_json(dj)
            old = tables.remove(tid)
            cat_changes.append(TableChange("drop", tid, before=old or before_of(tid)))
        in_catalog = set()
        for c in cat_changes:
            in_catalog.add(tables.table_key(c.table_id))
            if c.previous_id is not None:
                in_catalog.add(tables.table_key(c.previous_id))
        changes = [c for c in text_changes
                   if tables.table_key(c.table_id) not in in_catalog
                   and (c.previous_id is None or tables.table_key(c.previous_id) not in in_catalog)] + cat_changes
        status = "applied"
        stmt = Statement(ev.ddl, 0, 1, 0, 0)
        return StatementResult(stmt, status, tuple(changes), warnings=tuple(warnings))

    # -- blocked tables ------------------------------------------------------------------------

    def _blocked_targets(self, ev: DdlEvent, stmt: Statement, result: Any,
                         tables: Tables) -> list[tuple[TableId, str]]:
        """The tables a failed statement blocks, each with the reason; removed from the live
        model (their schema is unknown from here on)."""
        find = getattr(self._dialect, "statement_targets", None)  # a duck-typed dialect may lack it
        targets = None if find is None else find(stmt.text, tables)
        if targets is None:
            return []
        err = result.error
        why = str(err) if err is not None else (result.reason or "failed")
        reason = f"schema unknown since seq {ev.seq}: {why}"
        if not targets:  # a table statement whose names cannot be read: everything it may touch
            db = tables.current_database
            targets = [t.id for t in tables if t.id.database == db]
            reason += " (the statement's table names could not be read: every table of the current database is blocked)"
        out = []
        for tid in targets:
            tables.remove(tid)
            out.append((tid, reason))
        return out

    def record_many(self, events: Iterable[DdlEvent | Mapping[str, Any]], *,
                    lenient: bool | None = None) -> list[SchemaChangeEvent]:
        """``record`` each event in order (each in its own transaction)."""
        return [self.record(e, lenient=lenient) for e in events]

    def _build(self, ev: DdlEvent, ran_in: str | None, result: Any, views_before: dict,
               dbs_before: dict, blocked: list[tuple[TableId, str]] = ()) -> tuple[WriteBatch, SchemaChangeEvent, dict, dict]:
        tables = self._tables
        assert tables is not None
        if result is None:
            status, reason, error, warnings, changes = "skipped", "empty statement (comments only)", None, (), ()
        else:
            status, reason = result.status, (result.reason or None)
            error = None if result.error is None else result.error.to_json()
            warnings, changes = tuple(result.warnings), tuple(result.changes)
        if ev.snapshot:  # replacing the definition is what a snapshot is for: no warning
            warnings = tuple(w for w in warnings if not w.endswith("already existed in the model; replaced"))
        if blocked:
            warnings = warnings + tuple(f"{tid}: {why}" for tid, why in blocked)
        state = self._state_of(tables)
        row = EventRow(ev.seq, ev.position, ev.ts, ran_in, ev.ddl, status, reason,
                       None if error is None else _dumps(error),
                       _dumps(list(warnings)) if warnings else None,
                       state if state != self._state_text else None)
        batch = WriteBatch(row, self._last_seq)
        heads: dict[tuple[str, str], _Head] = {}
        shadow: dict[tuple[str, str], tuple[str, str] | None] = {}

        # tables: the net effect on every id the changes touched, in order of first mention
        # (a rename chain inside one event, a → tmp → b, is followed to its ends: b's version
        # says it came from a, a's that it went to b)
        touched: dict[str, TableId] = {}
        cause: dict[str, tuple[str, str | None]] = {}
        origin: dict[str, TableId] = {}
        for c in changes:
            k = self._key(c.table_id)
            if c.kind == "rename" and c.previous_id is not None:
                kp = self._key(c.previous_id)
                touched.setdefault(kp, c.previous_id)
                touched.setdefault(k, c.table_id)
                src = origin.pop(kp, c.previous_id)
                cause[kp] = ("rename", _id_text(c.table_id))
                cause[self._key(src)] = ("rename", _id_text(c.table_id))
                origin[k] = src
                cause[k] = ("rename", _id_text(src))
            else:
                touched.setdefault(k, c.table_id)
                origin.pop(k, None)
                cause[k] = ("alter" if c.kind == "truncate" else c.kind, None)
        for k, tid in touched.items():
            current = tables.get(tid)
            why = cause[k]
            if ev.snapshot and current is not None and why[0] != "rename":
                why = ("snapshot", None)
            self._version("table", k, current, tid, why, self.filter.matches(tid),
                          ev.seq, batch, heads, shadow)
        for tid, why in blocked:
            k = self._key(tid)
            if k in touched:
                continue
            self._block(k, tid, why, self.filter.matches(tid), ev.seq, batch, heads, shadow)
        # views and databases: compare the registries (small) before and after
        for kind, before, after in (("view", views_before, tables.views),
                                    ("database", dbs_before, tables.databases)):
            if before is after:
                continue
            for dk in sorted(set(before) | set(after), key=_sort_key):
                old, new = before.get(dk), after.get(dk)
                if old is new or old == new:
                    continue
                if kind == "view":
                    vid = (new or old).id
                    k, matching = self._key(vid), self.filter.matches(vid)
                else:
                    vid, k, matching = dk, _dumps([dk]), True
                change = "create" if old is None else "drop" if new is None else "alter"
                self._version(kind, k, new, vid, (change, None), matching, ev.seq, batch, heads, shadow)

        # schema change events: every change on a selected table, in the parser's order
        out_changes: list[SchemaChange] = []
        for c in changes:
            sel = self.filter.matches(c.table_id)
            if not (sel or (c.previous_id is not None and self.filter.matches(c.previous_id))):
                continue
            bh, bt = self._encode(c.before)
            ah, at = self._encode(c.after)
            for h, t in ((bh, bt), (ah, at)):
                if h is not None:
                    batch.bodies[h] = t  # type: ignore[assignment]
            head = heads.get(("table", self._key(c.table_id))) or self._head_of("table", self._key(c.table_id))
            version = head.version if (sel and head is not None) else None
            batch.changes.append(ChangeRow(ev.seq, len(batch.changes), c.kind, _id_text(c.table_id),  # type: ignore[arg-type]
                                           _id_text(c.previous_id), bh, ah, version))
            out_changes.append(SchemaChange(c.kind, c.table_id, c.previous_id, c.before, c.after,
                                            version, self._encode.fingerprint(c.after)))
        out = SchemaChangeEvent(ev.seq, ev.position, ev.ts, ran_in, ev.ddl, status, tuple(out_changes),
                                reason, error, warnings, True)
        return batch, out, heads, shadow

    def _block(self, k: str, tid: TableId, reason: str, matching: bool, seq: int, batch: WriteBatch,
               heads: dict, shadow: dict) -> None:
        """Stage a ``blocked`` version of table key ``k`` (unless it is blocked already: the
        reason keeps the seq where the schema was lost)."""
        if not matching:
            if self._shadow.get(("table", k)) is not None:
                batch.shadow_delete.append(("table", k))
                shadow[("table", k)] = None
            return
        head = heads.get(("table", k)) or self._head_of("table", k)
        if head is not None and head.body is None and head.blocked:
            return
        version = 1 if head is None else head.version + 1
        batch.versions.append(VersionRow("table", k, version, seq, "blocked", _id_text(tid),  # type: ignore[arg-type]
                                         None, None, reason))
        heads[("table", k)] = _Head(version, None, _id_text(tid), blocked=True)  # type: ignore[arg-type]

    def _head_of(self, kind: str, k: str) -> _Head | None:
        """The stored head of a key: live heads are loaded at start; a key that is dead (or
        unknown) is looked up once and remembered."""
        head = self._heads.get((kind, k), _MISSING)
        if head is _MISSING:
            row = self.store.head(kind, k)
            head = None if row is None else _Head(row.version, row.body, row.name, row.change == "blocked")
            self._heads[(kind, k)] = head  # type: ignore[assignment]
        return head  # type: ignore[return-value]

    def _version(self, kind: str, k: str, obj: Any, tid: Any, cause: tuple[str, str | None],
                 matching: bool, seq: int, batch: WriteBatch, heads: dict, shadow: dict) -> None:
        """Stage the version (or shadow update) of one key after an event."""
        body, text = self._encode(obj)
        if kind == "database":
            name = _dumps([obj.name if obj is not None else tid])
        else:
            name = _id_text(obj.id if obj is not None else tid)  # type: ignore[assignment]
        if not matching:
            old = self._shadow.get((kind, k))
            if obj is None:
                if old is not None:
                    batch.shadow_delete.append((kind, k))
                    shadow[(kind, k)] = None
            elif old != (body, name):
                batch.bodies[body] = text  # type: ignore[index]
                batch.shadow_put.append(ShadowRow(kind, k, name, body))  # type: ignore[arg-type]
                shadow[(kind, k)] = (body, name)
            return
        head = heads.get((kind, k)) or self._head_of(kind, k)
        if obj is None:
            if head is None or head.body is None:
                return  # nothing before, nothing now (e.g. the tmp of a rename swap)
        elif head is not None and head.body == body and head.name == name:
            return  # unchanged
        change, other = cause
        if obj is None and change not in ("drop", "rename"):
            change, other = "drop", None
        elif obj is not None and change == "drop":
            change = "create"
        version = 1 if head is None else head.version + 1
        fingerprint = self._encode.fingerprint(obj) if kind == "table" else None
        if body is not None:
            batch.bodies[body] = text  # type: ignore[assignment]
        batch.versions.append(VersionRow(kind, k, version, seq, change, name, body, fingerprint,  # type: ignore[arg-type]
                                         other if change == "rename" else None))
        heads[(kind, k)] = _Head(version, body, name)  # type: ignore[arg-type]

    # -- retention -----------------------------------------------------------------------------

    @property
    def pruned_before(self) -> int:
        """Seqs below this were pruned (0: nothing pruned)."""
        if self._pruned is None:
            self._pruned = int(self.store.meta().get("pruned_before", "0"))
        return self._pruned

    def prune(self, before: int) -> dict[str, int]:
        """Forget the history before seq ``before``: afterwards queries at seqs >= ``before``
        answer as before, queries at earlier seqs raise ``HistoryError``, and re-recording a
        pruned seq is a no-op.  Keeps, for every table, the version in force at ``before``.
        Returns the number of rows deleted per kind (``versions``, ``events``, ``changes``,
        ``bodies``).  Raises ``HistoryError`` if ``before`` is after the last recorded seq.
        SQLite: the file keeps its size until ``store.vacuum()``."""
        last = self.store.last_seq()
        if last is None or before <= self.pruned_before:
            return {"versions": 0, "events": 0, "changes": 0, "bodies": 0}
        if before > last:
            raise HistoryError(f"cannot prune before seq {before}: the last recorded seq is {last}")
        deleted = self.store.prune(before)
        self._pruned = None
        self._invalidate()
        return deleted

    def _check_seq(self, seq: int | None) -> None:
        if seq is not None and seq < self.pruned_before:
            raise HistoryError(f"the history before seq {self.pruned_before} was pruned; "
                               f"cannot answer for seq {seq}")

    # -- queries -------------------------------------------------------------------------------

    def tables_at(self, seq: int | None = None) -> Tables:
        """The whole model in force just after event ``seq`` (default: the last recorded):
        tables (those the filter selects), views, database defaults, the current database and
        session variables.  Before the first event: an empty ``Tables``.

        Reads the latest stored version of each table (no DDL is parsed); the cost grows with
        the number of tables, not with the number of events."""
        self._check_seq(seq)
        tables = self._new_tables()
        if seq is None:
            seq = self.store.last_seq()
            if seq is None:
                return tables
        heads = self.store.heads(seq)
        self._decode.prefetch(h.body for h in heads)
        for h in heads:
            self._put(tables, h.kind, self._decode(h.kind, h.name, h.body))
        self._apply_state(tables, self.store.state_at(seq))
        return tables

    def table_at(self, table_id: TableId | str, seq: int | None = None) -> Table | None:
        """The table ``table_id`` (a ``TableId`` or ``"db.table"``) in force just after event
        ``seq`` (default: the last), or ``None`` where it did not exist."""
        self._check_seq(seq)
        v = self.store.head("table", self._key(self._as_id(table_id)), seq)
        return None if v is None else self._decode("table", v.name, v.body)

    def version_at(self, table_id: TableId | str, seq: int | None = None) -> TableVersion | None:
        """The ``TableVersion`` of ``table_id`` in force just after event ``seq`` (default: the
        last), or ``None`` before its first version.  A dropped table gives its drop version
        (``table is None``)."""
        self._check_seq(seq)
        v = self.store.head("table", self._key(self._as_id(table_id)), seq)
        if v is None:
            return None
        nxt = [x for x in self.store.versions("table", v.key) if x.version == v.version + 1]
        return self._table_versions([v], nxt[0].seq if nxt else None)[0]

    def versions(self, table_id: TableId | str) -> list[TableVersion]:
        """Every version of ``table_id`` in order (empty if the history never had it)."""
        rows = self.store.versions("table", self._key(self._as_id(table_id)))
        return self._table_versions(rows, None)

    def _table_versions(self, rows: list[VersionRow], last_to: int | None,
                        known: Mapping[tuple[TableId, int], Any] | None = None) -> list[TableVersion]:
        events = {e.seq: e for e in self.store.events(seqs=[r.seq for r in rows])}
        ids = [_id_from(r.name) for r in rows]
        if known:
            self._decode.prefetch(r.body for r, tid in zip(rows, ids) if (tid, r.version) not in known)
        else:
            self._decode.prefetch(r.body for r in rows)
        out = []
        for i, r in enumerate(rows):
            e = events.get(r.seq)
            other = None if r.change == "blocked" else _id_from(r.other)
            table = known.get((ids[i], r.version)) if known and r.body is not None else None
            out.append(TableVersion(
                table_id=ids[i], version=r.version, kind=r.change,  # type: ignore[arg-type]
                table=table if table is not None else self._decode("table", r.name, r.body),
                fingerprint=r.fingerprint,
                valid_from_seq=r.seq, valid_to_seq=rows[i + 1].seq if i + 1 < len(rows) else last_to,
                position=e.position if e else None, ts=e.ts if e else None, ddl=e.ddl if e else "",
                previous_id=other if (r.change == "rename" and r.body is not None) else None,
                renamed_to=other if (r.change == "rename" and r.body is None) else None,
                reason=r.other if r.change == "blocked" else None))
        return out

    def all_table_ids(self) -> list[TableId]:
        """Every table id the history has versions of (dropped and renamed-away ones
        included), sorted."""
        return sorted((_id_from(name) for _, name in self.store.keys("table")),  # type: ignore[misc]
                      key=lambda t: (t.database or "", t.schema or "", t.name))

    def all_versions(self, known: Mapping[tuple[TableId, int], Any] | None = None) -> Iterator[TableVersion]:
        """Every stored version of every table, by table id then version (what a pipeline
        needs to give each row event the version in force at its seq).  ``known``: models of
        versions read from this history before, by ``(table_id, version)``, given as they
        are instead of decoded again (a run's sink reads every version after the run listed
        them; ``ddlcore.sinks.iceberg``)."""
        for key, _ in self.store.keys("table"):
            rows = self.store.versions("table", key)
            yield from self._table_versions(rows, None, known)

    def table_ids(self, seq: int | None = None) -> list[TableId]:
        """Ids of the tables in force just after ``seq`` (default: the last), sorted."""
        self._check_seq(seq)
        return sorted((_id_from(h.name) for h in self.store.heads(seq, "table")),  # type: ignore[arg-type]
                      key=lambda t: (t.database or "", t.schema or "", t.name))

    def diff(self, table_id: TableId | str, v1: int, v2: int) -> TableDiff:
        """What changed in ``table_id`` from version ``v1`` to version ``v2`` (either order):
        columns added, dropped, renamed, retyped, altered, moved; primary key, index and
        foreign key changes; table-level changes.  Raises ``HistoryError`` for an unknown
        table or version."""
        tid = self._as_id(table_id)
        rows = self.store.versions("table", self._key(tid))
        by_v = {r.version: r for r in rows}
        for v in (v1, v2):
            if v not in by_v:
                known = f"1..{rows[-1].version}" if rows else "none"
                raise HistoryError(f"{tid} has no version {v} (versions: {known})")
        lo, hi = min(v1, v2), max(v1, v2)
        span = [by_v[v] for v in range(lo, hi + 1)]
        self._decode.prefetch(r.body for r in span)
        chain = [self._decode("table", r.name, r.body) for r in span]
        if v1 > v2:
            chain.reverse()
        key = getattr(self._dialect, "column_key", None) or (lambda s: s.lower())
        return diff_tables(chain, _id_from(by_v[v2].name) or tid, v1, v2, key)  # type: ignore[arg-type]

    def schema_changes(self, start: int | None = None, stop: int | None = None, *,
                       status: str | None = None, include_skipped: bool = False) -> Iterator[SchemaChangeEvent]:
        """The recorded events with ``start <= seq <= stop`` in seq order, each with its table
        changes: the schema-change stream for consumers.  Skipped events (not DDL of interest)
        are left out unless ``include_skipped``; ``status`` keeps only one status."""
        changes = self.store.changes(start, stop)
        pending: ChangeRow | None = next(changes, None)
        for row in self.store.events(start, stop, status=status):
            mine: list[ChangeRow] = []
            while pending is not None and pending.seq <= row.seq:
                if pending.seq == row.seq:
                    mine.append(pending)
                pending = next(changes, None)
            if row.status == "skipped" and not include_skipped and status != "skipped":
                continue
            yield self._event_from_row(row, rows=mine)

    def failed(self) -> list[SchemaChangeEvent]:
        """The events recorded as failed (lenient mode), in seq order."""
        return list(self.schema_changes(status="failed"))

    def event(self, seq: int) -> SchemaChangeEvent | None:
        """The recorded event ``seq`` with its changes, or ``None``."""
        row = self.store.event(seq)
        return None if row is None else self._event_from_row(row)

    def _event_from_row(self, row: EventRow, *, rows: list[ChangeRow] | None = None,
                        recorded: bool = True) -> SchemaChangeEvent:
        if rows is None:
            rows = list(self.store.changes(row.seq, row.seq))
        self._decode.prefetch([r.before for r in rows] + [r.after for r in rows])
        changes = []
        for r in rows:
            tid = _id_from(r.table_id)
            prev = _id_from(r.previous_id)
            before = self._decode("table", _id_text(prev if (r.kind == "rename" and prev) else tid), r.before)  # type: ignore[arg-type]
            after = self._decode("table", r.table_id, r.after)
            changes.append(SchemaChange(r.kind, tid, prev, before, after, r.version,  # type: ignore[arg-type]
                                        self._encode.fingerprint(after)))
        return SchemaChangeEvent(row.seq, row.position, row.ts, row.database, row.ddl, row.status,
                                 tuple(changes), row.reason,
                                 None if row.error is None else json.loads(row.error),
                                 tuple(json.loads(row.warnings)) if row.warnings else (), recorded)

    def info(self) -> dict[str, Any]:
        """``{"dialect", "options", "filters", "events", "last_seq", "tables"}`` (``tables``:
        how many are in force at the end)."""
        return {"dialect": self.dialect_name, "options": self.options,
                "filters": list(self.filter.patterns), "events": self.store.event_count(),
                "last_seq": self.store.last_seq(),
                "tables": len(self.store.heads(None, "table"))}


_MISSING = object()

#: column fields not compared for drift: expression texts (the catalog re-prints them) and
#: what does not change how a value is read
_DRIFT_IGNORED = frozenset({"column_default", "generation_expression", "comment", "ordinal_position",
                            "on_update"})


def _drift(parsed: list[Table | None], catalog: Table, dialect: Any) -> str:
    """Why the parsed versions of a table disagree with the catalog's (``""``: one of them
    agrees).  Columns are compared field by field (``_DRIFT_IGNORED`` aside), then the
    primary key."""
    if not parsed:
        return "the DDL text does not change this table"
    key = getattr(dialect, "column_key", None) or (lambda n: n)
    best = None
    for p in parsed:
        if p is None:
            why = "the DDL text removes this table"
        else:
            why = _table_drift(p, catalog, key)
        if not why:
            return ""
        best = best or why
    return best or ""


def _table_drift(parsed: Table, catalog: Table, key: Callable[[str], str]) -> str:
    pc = [key(c.name) for c in parsed.columns]
    cc = [key(c.name) for c in catalog.columns]
    if pc != cc:
        return f"columns parsed {[c.name for c in parsed.columns]}, catalog {[c.name for c in catalog.columns]}"
    for a, b in zip(parsed.columns, catalog.columns):
        da, db = a.to_json(), b.to_json()
        for f in da:
            if f in _DRIFT_IGNORED or da[f] == db.get(f):
                continue
            return f"column {b.name}: {f} parsed {da[f]!r}, catalog {db.get(f)!r}"
    if [key(n) for n in parsed.primary_key] != [key(n) for n in catalog.primary_key]:
        return f"primary key parsed {list(parsed.primary_key)}, catalog {list(catalog.primary_key)}"
    return ""


def _sort_key(k: Any) -> tuple:
    if isinstance(k, TableId):
        return (k.database or "", k.schema or "", k.name)
    return (str(k), "", "")


def _short(text: str, n: int = 60) -> str:
    t = " ".join(text.split())
    return t if len(t) <= n else t[: n - 3] + "..."
