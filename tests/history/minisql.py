"""A tiny regex-driven DDL applier with the ``DdlParser`` interface, for history tests and
the history benchmark.

It understands a small MySQL-like subset (CREATE/ALTER/RENAME/DROP/TRUNCATE TABLE, CREATE/DROP
DATABASE with a default charset, USE, SET NAMES, CREATE/DROP VIEW) and applies it through the
real ``ddlcore.DdlVisitor`` operations, so the changes it reports have the same shape as a
dialect's.  It is not a grammar: it exists so the history can be tested and benchmarked
without an ANTLR parser (and at 20–50 µs per statement).  Statements it does not know are
skipped; known ones it cannot read raise ``DdlParseError``.
"""

from __future__ import annotations

import re
from typing import Any

from ddlcore import Column, Database, DdlParseError, DdlVisitor, Index, Table, TableId, Tables, View
from ddlcore.model import casefold_key, lower_table_key
from ddlcore.parsing import ParseResult, StatementResult
from ddlcore.splitter import SplitRules, Statement, split_statements

__all__ = ["MiniParser", "MiniDialect"]

_NAME = r"(?:`[^`]+`|[A-Za-z_][\w$]*)"
_QNAME = rf"{_NAME}(?:\s*\.\s*{_NAME})?"
_STRING_TYPES = {"char", "varchar", "text", "tinytext", "mediumtext", "longtext", "enum", "set"}

_WANTED = re.compile(r"\s*(?:create|alter|drop|rename|truncate|use|set\s+names)\b", re.I)


def _unq(name: str) -> str:
    name = name.strip()
    return name[1:-1] if name.startswith("`") else name


def _split_top(text: str, sep: str = ",") -> list[str]:
    out, depth, cur, quote = [], 0, [], None
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "'`\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


class MiniDialect:
    name = "minisql"
    aliases = ()
    description = "regex DDL applier for history tests"
    column_key = staticmethod(casefold_key)
    default_options = {"lower_case_table_names": 0, "character_set_server": "utf8mb4"}

    def new_tables(self, **options: Any) -> Tables:
        fold = int(options.get("lower_case_table_names") or 0) in (1, 2)
        return Tables(lower_table_key if fold else (lambda t: t))

    def parser(self, visitor_class=None, **options: Any) -> "MiniParser":
        return MiniParser(**options)


class _MiniVisitor(DdlVisitor):
    def visit(self, text: str) -> None:  # the "tree" is the statement text
        t = " ".join(text.split())
        for rx, fn in self._RULES:
            m = rx.fullmatch(t)
            if m:
                fn(self, m)
                return
        raise self.error(None, "syntax error: minisql cannot read this statement")

    # -- helpers ---------------------------------------------------------------------------

    def _id(self, qname: str) -> TableId:
        parts = [_unq(p) for p in re.split(r"\s*\.\s*", qname.strip())]
        if len(parts) == 2:
            return TableId(parts[0], None, parts[1])
        return self.qualify(None, parts[0])

    def _charset_for(self, tid: TableId) -> str:
        db = self.get_database(tid.database) if tid.database else None
        return (db.default_character_set_name if db and db.default_character_set_name
                else self.options.get("character_set_server", "utf8mb4"))

    def _column(self, text: str, charset: str | None) -> tuple[Column, bool, str | None]:
        m = re.match(rf"({_NAME})\s+([A-Za-z]+)(\s*\([^)]*\))?(.*)$", text, re.S)
        if not m:
            raise self.error(None, f"cannot read column definition {text!r}")
        name, base, args, rest = _unq(m.group(1)), m.group(2).lower(), (m.group(3) or "").replace(" ", ""), m.group(4)
        low = rest.lower()
        unsigned = " unsigned" if re.search(r"\bunsigned\b", low) else ""
        col_type = f"{base}{args.lower()}{unsigned}"
        length = int(args[1:-1]) if base in ("char", "varchar") and args[1:-1].isdigit() else None
        default = None
        dm = re.search(r"\bdefault\s+('(?:[^']|'')*'|\S+)", rest, re.I)
        if dm and dm.group(1).upper() != "NULL":
            default = dm.group(1)
        cm = re.search(r"\bcomment\s+'((?:[^']|'')*)'", rest, re.I)
        enum_values = None
        if base in ("enum", "set"):
            enum_values = tuple(v.strip()[1:-1] for v in _split_top(args[1:-1]))
        col = Column(
            name=name, ordinal_position=0, data_type=base, column_type=col_type,
            nullable=not re.search(r"\bnot\s+null\b", low), column_default=default,
            character_maximum_length=length,
            character_set_name=charset if base in _STRING_TYPES else None,
            auto_increment=bool(re.search(r"\bauto_increment\b", low)),
            unsigned=bool(unsigned), comment=cm.group(1) if cm else None,
            enum_values=enum_values if base == "enum" else None,
            set_values=enum_values if base == "set" else None)
        pos = None
        pm = re.search(rf"\b(first|after\s+({_NAME}))\s*$", rest, re.I)
        if pm:
            pos = "FIRST" if pm.group(1).lower() == "first" else _unq(pm.group(2))
        return col, bool(re.search(r"\bprimary\s+key\b", low)), pos

    @staticmethod
    def _cols(text: str) -> list[str]:
        return [_unq(c) for c in _split_top(text)]

    # -- statements ------------------------------------------------------------------------

    def _use(self, m):
        self.use_database(_unq(m.group(1)))

    def _set_names(self, m):
        self.set_session("character_set_client", m.group(1).strip("'").lower())

    def _create_db(self, m):
        name = _unq(m.group(2))
        if m.group(1) and self.get_database(name) is not None:
            return
        cs = (m.group(3) or self.options.get("character_set_server", "utf8mb4")).lower()
        self.put_database(Database(name, cs, None))

    def _drop_db(self, m):
        self.drop_database(_unq(m.group(2)))

    def _create_table(self, m):
        tid = self._id(m.group(2))
        opts = m.group(4) or ""
        cm = re.search(r"charset\s*=?\s*(\w+)", opts, re.I)
        charset = cm.group(1).lower() if cm else self._charset_for(tid)
        cols: list[Column] = []
        pk: list[str] = []
        indexes: list[Index] = []
        for part in _split_top(m.group(3)):
            pm = re.fullmatch(r"primary\s+key\s*\((.*)\)", part, re.I)
            km = re.fullmatch(rf"(unique\s+)?(?:key|index)\s+({_NAME})\s*\((.*)\)", part, re.I)
            if pm:
                pk = self._cols(pm.group(1))
            elif km:
                c = tuple(self._cols(km.group(3)))
                indexes.append(Index(_unq(km.group(2)), "UNIQUE" if km.group(1) else "INDEX", c, c))
            else:
                col, inline_pk, _ = self._column(part, charset)
                cols.append(col)
                if inline_pk:
                    pk = [col.name]
        tcm = re.search(r"comment\s*=?\s*'((?:[^']|'')*)'", opts, re.I)
        ed = Table(tid, default_character_set_name=charset, comment=tcm.group(1) if tcm else None).edit(self.column_key)
        for c in cols:
            ed.add_column(c)
        if pk:
            ed.set_primary_key(pk)
        for ix in indexes:
            ed.add_index(ix)
        self.create_table(ed.build(), if_not_exists=bool(m.group(1)))

    def _alter_table(self, m):
        tid = self._id(m.group(1))
        specs = _split_top(m.group(2))
        def edit(ed):
            for spec in specs:
                s = spec.strip()
                low = s.lower()
                cs = ed.default_character_set_name
                if mm := re.fullmatch(rf"rename\s+(?:to\s+|as\s+)?({_QNAME})", s, re.I):
                    ed.rename(self._id(mm.group(1)))
                elif mm := re.fullmatch(rf"rename\s+column\s+({_NAME})\s+to\s+({_NAME})", s, re.I):
                    ed.rename_column(_unq(mm.group(1)), _unq(mm.group(2)))
                elif re.fullmatch(r"drop\s+primary\s+key", low):
                    ed.drop_primary_key()
                elif mm := re.fullmatch(r"add\s+primary\s+key\s*\((.*)\)", s, re.I):
                    ed.set_primary_key(self._cols(mm.group(1)))
                elif mm := re.fullmatch(rf"add\s+(unique\s+)?(?:key|index)\s+({_NAME})\s*\((.*)\)", s, re.I):
                    c = tuple(self._cols(mm.group(3)))
                    ed.add_index(Index(_unq(mm.group(2)), "UNIQUE" if mm.group(1) else "INDEX", c, c))
                elif mm := re.fullmatch(rf"drop\s+(?:key|index)\s+({_NAME})", s, re.I):
                    if not ed.drop_index(_unq(mm.group(1))):
                        raise self.error(None, f"no index {mm.group(1)}")
                elif mm := re.fullmatch(rf"drop\s+(?:column\s+)?({_NAME})", s, re.I):
                    ed.drop_column(_unq(mm.group(1)))
                elif mm := re.fullmatch(r"add\s+(?:column\s+)?(.*)", s, re.I | re.S):
                    col, inline_pk, pos = self._column(mm.group(1), cs)
                    ed.add_column(col, first=pos == "FIRST", after=None if pos in (None, "FIRST") else pos)
                    if inline_pk:
                        ed.set_primary_key([col.name])
                elif mm := re.fullmatch(r"modify\s+(?:column\s+)?(.*)", s, re.I | re.S):
                    col, _, pos = self._column(mm.group(1), cs)
                    ed.replace_column(col.name, col, first=pos == "FIRST",
                                      after=None if pos in (None, "FIRST") else pos)
                elif mm := re.fullmatch(rf"change\s+(?:column\s+)?({_NAME})\s+(.*)", s, re.I | re.S):
                    col, _, pos = self._column(mm.group(2), cs)
                    ed.replace_column(_unq(mm.group(1)), col, first=pos == "FIRST",
                                      after=None if pos in (None, "FIRST") else pos)
                elif mm := re.fullmatch(r"comment\s*=?\s*'((?:[^']|'')*)'", s, re.I):
                    ed.comment = mm.group(1)
                elif mm := re.fullmatch(r"engine\s*=?\s*(\w+)", s, re.I):
                    ed.set_option("ENGINE", mm.group(1))
                elif mm := re.fullmatch(r"(?:default\s+)?(?:charset|character\s+set)\s*=?\s*(\w+)", s, re.I):
                    ed.default_character_set_name = mm.group(1).lower()
                else:
                    raise self.error(None, f"minisql cannot read ALTER specification {s!r}")
            return ed

        self.alter_table(tid, edit)

    def _rename_table(self, m):
        for pair in _split_top(m.group(1)):
            pm = re.fullmatch(rf"({_QNAME})\s+to\s+({_QNAME})", pair, re.I)
            if not pm:
                raise self.error(None, f"cannot read rename {pair!r}")
            self.rename_table(self._id(pm.group(1)), self._id(pm.group(2)))

    def _drop_table(self, m):
        for name in _split_top(m.group(2)):
            self.drop_table(self._id(name), if_exists=bool(m.group(1)))

    def _truncate(self, m):
        self.truncate_table(self._id(m.group(1)))

    def _create_view(self, m):
        self.create_view(View(self._id(m.group(2)), m.group(3)), or_replace=bool(m.group(1)))

    def _drop_view(self, m):
        for name in _split_top(m.group(2)):
            self.drop_view(self._id(name), if_exists=bool(m.group(1)))

    _RULES = [
        (re.compile(rf"use\s+({_NAME})", re.I), _use),
        (re.compile(r"set\s+names\s+(\S+)(?:\s+collate\s+\S+)?", re.I), _set_names),
        (re.compile(rf"create\s+(?:database|schema)\s+(if\s+not\s+exists\s+)?({_NAME})"
                    r"(?:\s+(?:default\s+)?(?:character\s+set|charset)\s*=?\s*(\w+))?.*", re.I), _create_db),
        (re.compile(rf"drop\s+(?:database|schema)\s+(if\s+exists\s+)?({_NAME})", re.I), _drop_db),
        (re.compile(rf"create\s+table\s+(if\s+not\s+exists\s+)?({_QNAME})\s*\((.*)\)\s*([^)]*)", re.I | re.S), _create_table),
        (re.compile(rf"alter\s+table\s+({_QNAME})\s+(.*)", re.I | re.S), _alter_table),
        (re.compile(r"rename\s+tables?\s+(.*)", re.I | re.S), _rename_table),
        (re.compile(r"drop\s+tables?\s+(if\s+exists\s+)?(.*)", re.I | re.S), _drop_table),
        (re.compile(rf"truncate\s+(?:table\s+)?({_QNAME})", re.I), _truncate),
        (re.compile(rf"create\s+(or\s+replace\s+)?view\s+({_QNAME})\s+as\s+(.*)", re.I | re.S), _create_view),
        (re.compile(r"drop\s+view\s+(if\s+exists\s+)?(.*)", re.I | re.S), _drop_view),
    ]


class MiniParser:
    """``DdlParser``-compatible: ``split``, ``apply``, ``parse``, ``new_tables``, ``dialect``,
    ``options``, ``lenient``."""

    def __init__(self, lenient: bool = False, **options: Any):
        self.dialect = MiniDialect()
        unknown = set(options) - set(MiniDialect.default_options)
        if unknown:
            raise TypeError(f"unknown minisql option(s): {sorted(unknown)}")
        self.options = {**MiniDialect.default_options, **options, "lenient": lenient}
        self.lenient = lenient
        self.visitor = _MiniVisitor(options=self.options)
        self.split_rules = SplitRules()

    def new_tables(self) -> Tables:
        return self.dialect.new_tables(**self.options)

    def split(self, text: str) -> list[Statement]:
        return split_statements(text, self.split_rules)

    def apply(self, stmt: Statement | str, tables: Tables, *, lenient: bool | None = None) -> StatementResult:
        if isinstance(stmt, str):
            stmt = Statement(stmt, 0, 1, 0, 0)
        lenient = self.lenient if lenient is None else lenient
        if not _WANTED.match(stmt.text):
            head = " ".join(stmt.text.split()[:2]).upper()
            return StatementResult(stmt, "skipped", reason=f"not DDL of interest ({head})")
        try:
            changes, warnings = self.visitor.apply(stmt.text, stmt, tables)
        except DdlParseError as err:
            if lenient:
                return StatementResult(stmt, "failed", error=err)
            raise
        return StatementResult(stmt, "applied", tuple(changes), warnings=tuple(warnings))

    def parse(self, text: str, tables: Tables | None = None, database: str | None = None,
              *, lenient: bool | None = None) -> ParseResult:
        tables = self.new_tables() if tables is None else tables
        if database is not None:
            tables.current_database = database
        result = ParseResult(tables)
        for stmt in self.split(text):
            result.statements.append(self.apply(stmt, tables, lenient=lenient))
        return result
