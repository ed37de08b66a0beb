"""``Dialect``: what a plugin provides for one SQL dialect.

Owns: the description of a dialect as data (sqlglot-style: settings and small overrides) —
its name, its splitter rules, the statement filter, where its generated ANTLR lexer/parser
live, its default visitor class, its identifier rules and default parser options.
Must not know: any particular dialect.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping, Sequence

from .model import TableId, Tables, casefold_key
from .options import Option, check_options, flag
from .splitter import SplitRules

if TYPE_CHECKING:  # pragma: no cover
    from .parsing import DdlParser
    from .visitor import DdlVisitor

__all__ = ["Dialect", "StatementFilter", "FilterRule", "LENIENT", "check_dialect_options"]

#: the parser option every dialect has (``DdlParser``)
LENIENT = Option("lenient", False, flag, "record unparsable statements as failed and go on")

#: the start of a table statement (``Dialect.statement_targets``); group 1 is the verb
_TABLE_STATEMENT = re.compile(
    r"(?:\s|--[^\n]*\n|/\*.*?\*/)*"
    r"(CREATE|ALTER|DROP|RENAME)\b"
    r"(?:\s+(?:OR\s+REPLACE|GLOBAL|LOCAL|TEMPORARY|TEMP|UNLOGGED|ONLINE|OFFLINE|IGNORE))*"
    r"\s+TABLE\b"
    r"(?:\s+IF\s+(?:NOT\s+)?EXISTS\b)?(?:\s+ONLY\b)?",
    re.IGNORECASE | re.DOTALL)


def check_dialect_options(dialect: Any, given: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` parser options checked by ``dialect``: ``Dialect.check_options`` for a
    ``Dialect``; for another object shaped like one (a ``default_options`` mapping only), the
    names are checked and the values kept.  Raises ``UnknownOptionError`` / ``OptionError``."""
    if hasattr(dialect, "check_options"):
        return dialect.check_options(given)
    return check_options({}, given, owner=f"{getattr(dialect, 'name', '?')} parser",
                         undeclared=[*getattr(dialect, "default_options", {}), "lenient"])


@dataclass(frozen=True)
class FilterRule:
    """One row of a statement filter: statements whose start matches ``pattern`` (a regex
    over the first words, case-insensitive) are ``parse``d or skipped with ``reason``."""

    pattern: str
    parse: bool
    reason: str = ""


class StatementFilter:
    """Decides from a statement's leading words, without lexing it, whether it can change a
    table (then it is parsed) or not (then it is skipped).

    ``rules`` are tried in order; the first match decides.  A statement no rule matches is
    skipped as ``"not DDL of interest"``.  The leading comments and white space are skipped
    with one regex; the cost is a few regex matches per statement (docs/architecture.md: skipping must
    cost about what lexing costs)."""

    _LEAD = re.compile(r"(?:\s|--[^\n]*|#[^\n]*|/\*[^*]*\*+(?:[^/*][^*]*\*+)*/)*")

    def __init__(self, rules: Sequence[FilterRule]):
        self.rules = tuple(rules)
        self._compiled = [(re.compile(r.pattern, re.IGNORECASE | re.DOTALL), r) for r in self.rules]

    def classify(self, text: str) -> tuple[bool, str]:
        """``(True, "")`` to parse ``text``, or ``(False, reason)`` to skip it."""
        start = self._LEAD.match(text).end()
        for rx, rule in self._compiled:
            if rx.match(text, start):
                return rule.parse, rule.reason
        head = " ".join(text[start:start + 40].split()[:2]).upper()
        return False, f"not DDL of interest ({head or 'empty'})"


class Dialect:
    """A SQL dialect as a plugin provides it.  Subclass and set the class attributes:

    * ``name`` / ``aliases`` / ``description``
    * ``generated_package``: dotted name of the package holding the generated ANTLR code,
      with modules ``<grammar_name>Lexer``, ``<grammar_name>Parser``,
      ``<grammar_name>ParserVisitor``; ``grammar_name`` e.g. ``"MySql"``; ``entry_rule``
      the parser rule that parses one statement.
    * ``visitor_class``: dotted path ``"module:Class"`` of the default visitor.
    * ``split_rules``: ``SplitRules``; ``statement_filter``: ``StatementFilter``.
    * ``options``: the parser options as a table of ``ddlcore.options.Option`` rows (name,
      default, what it accepts, doc); ``default_options`` is derived from it.  A dialect that
      only sets ``default_options`` gets its names accepted unchecked.
    * ``column_key``: how two column names compare.
    """

    name: ClassVar[str] = ""
    aliases: ClassVar[tuple[str, ...]] = ()
    description: ClassVar[str] = ""
    generated_package: ClassVar[str] = ""
    grammar_name: ClassVar[str] = ""
    entry_rule: ClassVar[str] = "ddlStatement"
    visitor_class: ClassVar[str] = ""
    split_rules: ClassVar[SplitRules] = SplitRules()
    statement_filter: ClassVar[StatementFilter] = StatementFilter(())
    options: ClassVar[tuple[Option, ...]] = ()
    default_options: ClassVar[Mapping[str, Any]] = {}
    column_key: ClassVar[Callable[[str], str]] = staticmethod(casefold_key)
    #: characters that quote identifiers (MySQL backquote, SQL double quote)
    identifier_quotes: ClassVar[str] = '`"'
    #: what happens to an unquoted identifier before it reaches the model: ``None`` (kept as
    #: written, MySQL) or ``"lower"`` (folded to lower case, PostgreSQL 4.1.1)
    fold_unquoted: ClassVar[str | None] = None
    #: table names are ``[database.]schema.name`` resolved through ``Tables.search_path``
    #: (PostgreSQL) rather than ``[database.]name`` (MySQL)
    uses_schemas: ClassVar[bool] = False

    _generated: tuple[type, type, type] | None = None

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if "options" in cls.__dict__:
            cls.default_options = {o.name: o.default for o in cls.options}

    # -- options -----------------------------------------------------------------------------

    def check_options(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """``given`` parser options with each value checked and normalised by its declared
        ``Option`` (``lenient`` included); then ``check_option_set`` on the whole set.
        Raises ``ddlcore.options.UnknownOptionError`` (a ``TypeError``) for a name the dialect
        does not have and ``ddlcore.options.OptionError`` (a ``ValueError``, one line naming
        the option and what it accepts) for a bad value."""
        declared = {LENIENT.name: LENIENT, **{o.name: o for o in self.options}}
        out = check_options(declared, given, owner=f"{self.name} parser", undeclared=self.default_options)
        self.check_option_set({**self.default_options, **out})
        return out

    def check_option_set(self, options: Mapping[str, Any]) -> None:
        """Checks between options (all set, defaults included); raises
        ``ddlcore.options.OptionError``.  Nothing by default."""

    # -- generated code ----------------------------------------------------------------------

    def generated(self) -> tuple[type, type, type]:
        """``(Lexer, Parser, ParserVisitor)`` classes generated from the dialect's grammar.

        Raises ``ImportError`` with the command that rebuilds them if they are missing."""
        if self._generated is None:
            pkg, g = self.generated_package, self.grammar_name
            try:
                lexer = importlib.import_module(f"{pkg}.{g}Lexer")
                parser = importlib.import_module(f"{pkg}.{g}Parser")
                visitor = importlib.import_module(f"{pkg}.{g}ParserVisitor")
            except ImportError as exc:  # pragma: no cover - depends on the install
                raise ImportError(
                    f"the {self.name} parser has not been generated ({exc}); it is built from "
                    f"grammars/ when the plugin is installed: reinstall it (pip install -e "
                    f"plugins/{self.name}) with Java 11+ on PATH") from exc
            type(self)._generated = (getattr(lexer, f"{g}Lexer"), getattr(parser, f"{g}Parser"),
                                     getattr(visitor, f"{g}ParserVisitor"))
        return self._generated  # type: ignore[return-value]

    def default_visitor_class(self) -> "type[DdlVisitor]":
        module, _, cls = self.visitor_class.partition(":")
        return getattr(importlib.import_module(module), cls)

    # -- API -----------------------------------------------------------------------------------

    def parser(self, visitor_class: "type[DdlVisitor] | None" = None, **options: Any) -> "DdlParser":
        """A ``DdlParser`` for this dialect using ``visitor_class`` (a subclass of the dialect's
        visitor; default: the dialect's own) and ``options`` (see ``default_options``; unknown
        options raise ``TypeError``)."""
        from .parsing import DdlParser

        return DdlParser(self, visitor_class or self.default_visitor_class(), options)

    def split_rules_for(self, options: Mapping[str, Any]) -> SplitRules:
        """The splitter rules under parser ``options`` (default: ``split_rules``)."""
        return self.split_rules

    def new_tables(self, **options: Any) -> Tables:
        """An empty ``Tables`` registry with this dialect's identifier rules."""
        return Tables(self.table_key(options))

    def table_key(self, options: Mapping[str, Any]) -> Callable[[TableId], TableId]:
        """The table-name comparison of this dialect under ``options`` (identity by default)."""
        return lambda tid: tid

    def __repr__(self) -> str:
        return f"<Dialect {self.name}>"

    # -- what a statement names, without parsing it ------------------------------------------

    def statement_targets(self, text: str, tables: Tables) -> list[TableId] | None:
        """The tables a *table statement* names, read from its words without parsing it:
        ``CREATE [...] TABLE``, ``ALTER [...] TABLE``, ``DROP [...] TABLE`` (several),
        ``RENAME TABLE a TO b, ...`` (both sides).  ``None`` when the statement is not one of
        these (``TRUNCATE`` changes no schema); an empty list when it is but its names cannot
        be read.

        Used by the schema history to *block* the tables of a statement that failed to parse or
        apply (their schema is unknown from then on).  Names are resolved as the dialect does
        (``fold_unquoted``, ``uses_schemas`` with ``tables.search_path``, the current
        database); a dialect with other statement forms overrides this."""
        m = _TABLE_STATEMENT.match(text)
        if m is None:
            return None
        verb = m.group(1).upper()
        rest = text[m.end():]
        q = re.escape(self.identifier_quotes)
        ident = (rf"(?:[{q}](?:[^{q}]|[{q}]{{2}})*[{q}]|[^\s{q}.,;()]+)")
        name_rx = re.compile(rf"\s*({ident}(?:\s*\.\s*{ident}){{0,2}})", re.DOTALL)
        names: list[str] = []
        pos = 0
        while True:
            nm = name_rx.match(rest, pos)
            if nm is None:
                break
            names.append(nm.group(1))
            pos = nm.end()
            sep = re.compile(r"\s*(,|\s+TO\s+)", re.IGNORECASE).match(rest, pos)
            if sep is None or verb not in ("DROP", "RENAME"):
                break
            pos = sep.end()
        out = []
        for n in names:
            parts = self._identifier_parts(n)
            if parts:
                out.append(self._resolve(parts, tables))
        return out

    def _identifier_parts(self, name: str) -> list[str]:
        parts: list[str] = []
        q = re.escape(self.identifier_quotes)
        for m in re.finditer(rf"[{q}]((?:[^{q}]|[{q}]{{2}})*)[{q}]|([^\s{q}.]+)", name):
            if m.group(1) is not None:
                quote = m.group(0)[0]
                parts.append(m.group(1).replace(quote * 2, quote))
            else:
                word = m.group(2)
                parts.append(word.lower() if self.fold_unquoted == "lower" else word)
        return parts

    def _resolve(self, parts: list[str], tables: Tables) -> TableId:
        db = tables.current_database
        if not self.uses_schemas:
            return TableId(parts[-2] if len(parts) >= 2 else db, None, parts[-1])
        if len(parts) == 3:
            return TableId(parts[0], parts[1], parts[2])
        if len(parts) == 2:
            return TableId(db, parts[0], parts[1])
        path = [s for s in tables.search_path if s != "$user"] or ["public"]
        for schema in path:
            tid = TableId(db, schema, parts[0])
            if tables.get(tid) is not None:
                return tid
        return TableId(db, path[0], parts[0])

    # -- Spark type rules ----------------------------------------------------------------------

    def spark_rules(self) -> Any:
        """The dialect's Spark type mapping and raw-value decoders: a
        ``ddlcore.spark.SparkRules`` answered by a plugin's ``ddlcore_spark_rules`` hook
        (``ddlcore.plugins.DdlcoreSpecs``), or ``None`` if no plugin provides any.
        ``ddlcore.spark.struct_type`` / ``RowConverter`` call it."""
        from .plugins import plugin_manager

        return plugin_manager().hook.ddlcore_spark_rules(dialect=self)
