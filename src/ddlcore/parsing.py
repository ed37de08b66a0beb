"""``DdlParser``: script text → statements → parse trees → changes on ``Tables``.

Owns: the flow of docs/architecture.md — split, filter (skip what changes no table without lexing it),
lex once, parse with SLL prediction and fall back to full LL only when SLL fails, hand the
tree to the dialect's visitor, and turn every failure into ``DdlParseError``.
Must not know: any dialect's grammar or rules (the ``Dialect`` supplies them).
"""

from __future__ import annotations

import gc
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, Mapping

from antlr4 import CommonTokenStream, InputStream
from antlr4.error.ErrorListener import ErrorListener
from antlr4.error.ErrorStrategy import BailErrorStrategy, DefaultErrorStrategy
from antlr4.error.Errors import ParseCancellationException
from antlr4.atn.PredictionMode import PredictionMode

from .antlrfast import FastLexing, FilledTokenStream, fast_parser_class
from .errors import DdlParseError
from .model import ModelError, TableChange, Tables
from .splitter import Statement, split_statements

if TYPE_CHECKING:  # pragma: no cover
    from .dialect import Dialect
    from .visitor import DdlVisitor

__all__ = ["DdlParser", "StatementResult", "ParseResult"]


@dataclass(frozen=True)
class StatementResult:
    """What one statement did.

    ``status``: ``"applied"`` (parsed; ``changes`` lists what it changed, possibly nothing),
    ``"skipped"`` (not DDL of interest; ``reason`` says what it was), or ``"failed"`` (lenient
    mode only; ``error`` is the ``DdlParseError``).  ``warnings``: sentences about things the
    statement did that the model could not follow exactly."""

    statement: Statement
    status: str
    changes: tuple[TableChange, ...] = ()
    reason: str = ""
    warnings: tuple[str, ...] = ()
    error: DdlParseError | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.statement.index, "line": self.statement.line,
            "status": self.status, "reason": self.reason,
            "changes": [{"kind": c.kind, "table": str(c.table_id),
                         "previous": None if c.previous_id is None else str(c.previous_id)}
                        for c in self.changes],
            "warnings": list(self.warnings),
            "error": None if self.error is None else self.error.to_json(),
        }


@dataclass
class ParseResult:
    """The results of ``DdlParser.parse``: ``statements`` (one ``StatementResult`` each, in
    order) and the ``tables`` they were applied to."""

    tables: Tables
    statements: list[StatementResult] = field(default_factory=list)

    def __iter__(self) -> Iterator[StatementResult]:
        return iter(self.statements)

    def __len__(self) -> int:
        return len(self.statements)

    @property
    def changes(self) -> list[TableChange]:
        return [c for s in self.statements for c in s.changes]

    @property
    def errors(self) -> list[DdlParseError]:
        return [s.error for s in self.statements if s.error is not None]

    @property
    def warnings(self) -> list[str]:
        return [w for s in self.statements for w in s.warnings]


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while one statement is parsed and applied.

    A parse tree is a web of reference cycles (every context points to its parent and its
    children) that lives only while its statement is applied.  Collections during that time
    find it alive and promote it to older generations, which then cost full collections over
    the whole heap (the grammar's ATN and DFA included) to free it: a third of the parse time
    on the MySQL corpus.  Paused, the tree dies young and one young-generation collection frees
    it afterwards.  Nothing changes when the caller has disabled the collector."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        if gc.get_count()[0] > gc.get_threshold()[0]:
            gc.collect(0)


class _RaisingListener(ErrorListener):
    """Turns the first lexer or parser syntax error into ``DdlParseError``."""

    def __init__(self, statement: Statement):
        self.statement = statement

    def syntaxError(self, recognizer, offendingSymbol, line, column, msg, e):  # noqa: N802
        expected: list[str] = []
        offending = None
        if offendingSymbol is not None:
            offending = "<EOF>" if offendingSymbol.type == -1 else offendingSymbol.text
            try:
                names = recognizer.literalNames, recognizer.symbolicNames
                for t in recognizer.getExpectedTokens():
                    if t == -1:
                        expected.append("<EOF>")
                    elif t < len(names[0]) and names[0][t] != "<INVALID>":
                        expected.append(names[0][t])
                    elif t < len(names[1]):
                        expected.append(names[1][t])
            except Exception:  # noqa: BLE001 - expected tokens are a courtesy
                expected = []
        else:  # lexer error: msg is "token recognition error at: '...'"
            offending = msg.rsplit(": ", 1)[-1].strip("'") if ": " in msg else None
        line_abs, col_abs = _absolute(self.statement, line, column)
        raise DdlParseError(_reason(msg), line=line_abs, column=col_abs, offending=offending,
                            expected=expected, statement=self.statement.text,
                            statement_index=self.statement.index)


def _reason(msg: str) -> str:
    if msg.startswith("token recognition error"):
        return "unrecognised text"
    if msg.startswith("mismatched input") or msg.startswith("extraneous input"):
        return "unexpected input"
    if msg.startswith("no viable alternative"):
        return "syntax error: no rule of the grammar matches here"
    if msg.startswith("missing"):
        return msg
    return msg


def _absolute(stmt: Statement, line: int, column: int) -> tuple[int, int]:
    """Statement-relative (line 1-based, column 0-based) → input-relative."""
    if line <= 1:
        return stmt.line, stmt.column + column
    return stmt.line + line - 1, column


class DdlParser:
    """Parses DDL of one dialect and applies it to a ``Tables``.

    Made by ``Dialect.parser(visitor_class=None, **options)``.  Options are the dialect's
    ``options`` (``Dialect.check_options``: unknown names raise ``TypeError``, bad values
    ``ddlcore.options.OptionError``) plus ``lenient`` (bool, default
    ``False``): record unparsable statements as ``"failed"`` results and go on instead of
    raising."""

    def __init__(self, dialect: "Dialect", visitor_class: "type[DdlVisitor]", options: Mapping[str, Any]):
        opts = dict(dialect.default_options)
        opts.setdefault("lenient", False)
        opts.update(dialect.check_options(options))
        self.dialect = dialect
        self.options = opts
        self.lenient = bool(opts["lenient"])
        self.visitor_class = visitor_class
        self._lexer_cls, self._parser_cls, generated_visitor = dialect.generated()
        if not issubclass(visitor_class, generated_visitor):
            raise TypeError(f"visitor_class must subclass the {dialect.name} visitor "
                            f"(got {visitor_class.__name__})")
        self.visitor: DdlVisitor = visitor_class(dialect=dialect, options=opts)
        self.split_rules = dialect.split_rules_for(opts)
        self._lexer = self._lexer_cls(None)
        self._lexer.removeErrorListeners()
        self._fast_lexing = FastLexing.for_lexer(self._lexer)
        self._parser = fast_parser_class(self._parser_cls)(None)
        self._parser.removeErrorListeners()
        self._entry = getattr(self._parser_cls, dialect.entry_rule)

    # -- public ------------------------------------------------------------------------------

    def new_tables(self) -> Tables:
        return self.dialect.new_tables(**self.options)

    def split(self, text: str) -> list[Statement]:
        """The statements of ``text`` (see ``ddlcore.splitter``)."""
        return split_statements(text, self.split_rules)

    def parse(self, text: str, tables: Tables | None = None, database: str | None = None,
              *, lenient: bool | None = None) -> ParseResult:
        """Apply every statement of ``text`` to ``tables`` (a new registry if ``None``), in
        order.  ``database``: the current database before the first statement (as a session's
        default schema).  Returns a ``ParseResult``.

        Raises ``DdlParseError`` (line, column, offending text, expected tokens, statement) at
        the first statement that cannot be parsed or applied, unless lenient; statements before
        it stay applied, the failing one changes nothing."""
        tables = self.new_tables() if tables is None else tables
        if database is not None:
            tables.current_database = database
        lenient = self.lenient if lenient is None else lenient
        result = ParseResult(tables)
        for stmt in self.split(text):
            result.statements.append(self.apply(stmt, tables, lenient=lenient))
        return result

    def apply(self, stmt: Statement | str, tables: Tables, *, lenient: bool | None = None) -> StatementResult:
        """Apply one statement (a ``Statement`` or its text) to ``tables``."""
        if isinstance(stmt, str):
            stmt = Statement(stmt, 0, 1, 0, 0)
        lenient = self.lenient if lenient is None else lenient
        wanted, reason = self.dialect.statement_filter.classify(stmt.text)
        if not wanted:
            return StatementResult(stmt, "skipped", reason=reason)
        try:
            with _gc_paused():
                tree = self.parse_tree(stmt)
                changes, warnings = self.visitor.apply(tree, stmt, tables)
                del tree
        except DdlParseError as err:
            if lenient:
                return StatementResult(stmt, "failed", error=err)
            raise
        return StatementResult(stmt, "applied", tuple(changes), warnings=tuple(warnings))

    def _tokens(self, text: str, listener: ErrorListener) -> FilledTokenStream:
        """The token stream of one statement, lexed once: by ``FastLexing`` (the lexer's DFA
        walked in a tight loop) when it can, else by the generated lexer, whose first error
        ``listener`` turns into ``DdlParseError``."""
        fast = self._fast_lexing
        got = fast.tokenize(text) if fast is not None else None
        lexer = self._lexer
        if got is not None:
            return FilledTokenStream(lexer, got[1])
        lexer.inputStream = InputStream(text)
        lexer.reset()
        lexer.removeErrorListeners()
        lexer.addErrorListener(listener)
        stream = CommonTokenStream(lexer)
        stream.fill()
        return FilledTokenStream(lexer, stream.tokens)

    def parse_tree(self, stmt: Statement | str):
        """The ANTLR parse tree of one statement (entry rule of the dialect).

        SLL prediction first (fast, and where it succeeds its tree equals LL's); on failure
        the same tokens are parsed again with full LL and the default error strategy, whose
        first error becomes ``DdlParseError``.  Deep nesting that exhausts the recursion limit
        is reported as ``DdlParseError`` too."""
        if isinstance(stmt, str):
            stmt = Statement(stmt, 0, 1, 0, 0)
        listener = _RaisingListener(stmt)
        lexer = self._lexer
        parser = self._parser
        try:
            tokens = self._tokens(stmt.text, listener)
            parser.setTokenStream(tokens)
            parser.removeErrorListeners()
            parser._errHandler = BailErrorStrategy()
            parser._interp.predictionMode = PredictionMode.SLL
            try:
                return self._entry(parser)
            except ParseCancellationException:
                tokens.seek(0)
                parser.reset()
                parser.addErrorListener(listener)
                parser._errHandler = DefaultErrorStrategy()
                parser._interp.predictionMode = PredictionMode.LL
                return self._entry(parser)
        except DdlParseError:
            raise
        except RecursionError:
            raise DdlParseError("statement nests too deeply to parse", line=stmt.line,
                                column=stmt.column, statement=stmt.text,
                                statement_index=stmt.index) from None
        except Exception as exc:  # noqa: BLE001 - the contract: DdlParseError only
            raise DdlParseError(f"parser failure: {type(exc).__name__}: {exc}", line=stmt.line,
                                column=stmt.column, statement=stmt.text,
                                statement_index=stmt.index) from exc
        finally:
            lexer.removeErrorListeners()
            parser.removeErrorListeners()
