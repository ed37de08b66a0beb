"""Exceptions of ddlcore.

Owns: the error types users catch, and ``one_line`` (an error's message as the one line the
commands print).  Every parse failure is a ``DdlParseError``; nothing else escapes
``DdlParser.parse`` (docs/architecture.md, "From DDL text to tables")."""

from __future__ import annotations

from typing import Any, Sequence

__all__ = ["DdlCoreError", "DdlParseError", "DialectNotFound", "RowConversionError", "PipelineError", "CaptureError",
           "one_line"]


def one_line(text: str) -> str:
    """``text`` on one line: its non-blank lines, stripped, joined with ``"; "`` (``""`` for
    none).  How an error message is printed by ``ddlcore`` commands (one line per error)."""
    return "; ".join(s.strip() for s in str(text).splitlines() if s.strip())


class DdlCoreError(Exception):
    """Base class of ddlcore's errors."""


class DdlParseError(DdlCoreError):
    """A statement that could not be parsed or applied.

    Attributes: ``line`` and ``column`` (1-based line, 0-based column, in the whole input
    text, as ANTLR counts them), ``offending`` (the offending token's text, ``"<EOF>"`` at the
    end), ``expected`` (token names the grammar would have accepted there, possibly empty),
    ``statement`` (the statement's text), ``statement_index`` (0-based index of the statement in
    the input), ``reason`` (a sentence saying why)."""

    def __init__(self, reason: str, *, line: int | None = None, column: int | None = None,
                 offending: str | None = None, expected: Sequence[str] = (),
                 statement: str | None = None, statement_index: int | None = None):
        self.reason = reason
        self.line = line
        self.column = column
        self.offending = offending
        self.expected = tuple(expected)
        self.statement = statement
        self.statement_index = statement_index
        super().__init__(self._message())

    def _message(self) -> str:
        where = ""
        if self.line is not None:
            where = f"line {self.line}, column {self.column}: "
        msg = f"{where}{self.reason}"
        if self.offending is not None:
            msg += f" (at {self.offending!r})"
        if self.expected:
            shown = ", ".join(self.expected[:12]) + (", ..." if len(self.expected) > 12 else "")
            msg += f"; expected one of: {shown}"
        if self.statement is not None:
            stmt = " ".join(self.statement.split())
            if len(stmt) > 160:
                stmt = stmt[:157] + "..."
            msg += f"\n  in statement: {stmt}"
        return msg

    def to_json(self) -> dict[str, Any]:
        return {"reason": self.reason, "line": self.line, "column": self.column,
                "offending": self.offending, "expected": list(self.expected),
                "statement": self.statement, "statement_index": self.statement_index}


class DialectNotFound(DdlCoreError, LookupError):
    """``get_dialect(name)`` found no installed plugin providing ``name``."""


class RowConversionError(DdlCoreError):
    """A raw row value that cannot be converted: ``column`` (name), ``position`` (0-based
    ordinal index), ``value`` (the raw value) and ``reason``."""

    def __init__(self, reason: str, *, column: str | None = None, position: int | None = None,
                 value: Any = None):
        self.reason = reason
        self.column = column
        self.position = position
        self.value = value
        where = f"column {column!r} (position {position})" if column is not None else "row"
        super().__init__(f"{where}: {reason}; raw value {value!r}")


class PipelineError(DdlCoreError):
    """The run stopped (``--strict`` and a bad event, a DDL event that cannot be parsed in
    strict mode, a change log that is not the continuation of the output's, run options that
    differ from the output's); ``seq`` / ``reason`` name the first bad event.  Nothing was
    committed."""

    def __init__(self, reason: str, seq: int | None = None):
        self.reason = reason
        self.seq = seq
        super().__init__(f"event seq {seq}: {reason}" if seq is not None else reason)


class CaptureError(DdlCoreError):
    """A capture cannot start or go on: a source not set up for it, an output directory that
    is not a capture's, a checkpoint that does not match the files, a message it cannot read.
    (Also importable from ``ddlcore.capture``, the captures' common core.)"""
