"""Typed options: the declaration of one option (its default, what it accepts, how a value is
normalised) and the check that turns given values into normalised ones or one clear error.

Owns: ``Option`` and its value kinds (``choice``, ``flag``, ``integer``, ``names``, ``text``),
``OptionError``, ``check_options``.  A dialect declares its parser options as a table of
``Option`` rows (``Dialect.options``, the way sqlglot's dialects are settings); the Spark
type-mapping options (``ddlcore.spark.options.SparkOption``) use the same kinds.  Values from a
command line arrive as text and are normalised here once; values from Python may already be
typed (``True``, ``101100``).
Must not know: any dialect.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from .errors import DdlCoreError

__all__ = ["Option", "OptionError", "UnknownOptionError", "Kind", "choice", "flag", "integer", "names",
           "text", "check_options", "parse_assignments"]


class OptionError(DdlCoreError, ValueError):
    """A value an option does not accept: ``option`` (its name), ``value`` (as given) and
    ``accepts`` (what the option takes, a phrase).  The message is one line:
    ``flavor='sqlite': expected one of mariadb, mysql, tidb``."""

    def __init__(self, option: str, value: Any, accepts: str, owner: str = ""):
        self.option, self.value, self.accepts = option, value, accepts
        where = f"{owner} option " if owner else "option "
        super().__init__(f"{where}{option}={value!r}: expected {accepts}")


class UnknownOptionError(DdlCoreError, TypeError):
    """An option name nobody declares (``TypeError``, as for an unknown keyword argument)."""


@dataclass(frozen=True)
class Kind:
    """What an option accepts: ``accepts`` (a phrase for messages and docs) and ``normalize``
    (value → normalised value; raises ``ValueError`` for a value it does not accept)."""

    accepts: str
    normalize: Callable[[Any], Any]


_TRUE = ("true", "on", "yes", "1")
_FALSE = ("false", "off", "no", "0")


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    raise ValueError(value)


#: a boolean: ``True``/``False``, or (case-insensitive) true/false, on/off, yes/no, 1/0
flag = Kind("true or false (also on/off, yes/no, 1/0)", _flag)


def choice(*values: Any) -> Kind:
    """One of ``values``; text is compared case-insensitively and normalised to the declared
    spelling (``MySQL`` → ``mysql``); a digit string matches an integer choice."""
    def normalize(value: Any) -> Any:
        for v in values:
            if value == v and type(value) is type(v):
                return v
            if isinstance(value, str) and str(v).lower() == value.strip().lower() and not isinstance(v, bool):
                return v
        raise ValueError(value)
    return Kind("one of " + ", ".join(map(str, values)), normalize)


def integer(lo: int, hi: int, *, accepts: str | None = None,
            parse: Callable[[str], int | None] | None = None) -> Kind:
    """An integer in ``[lo, hi]``; text in decimal, or as ``parse`` reads it (``None``: not
    read)."""
    def normalize(value: Any) -> int:
        if isinstance(value, bool):
            raise ValueError(value)
        if isinstance(value, str):
            s = value.strip()
            got = int(s) if re.fullmatch(r"[+-]?\d+", s) else (parse(s) if parse else None)
            if got is None:
                raise ValueError(value)
            value = got
        if not isinstance(value, int) or not lo <= value <= hi:
            raise ValueError(value)
        return value
    return Kind(accepts or f"an integer from {lo} to {hi}", normalize)


def names(accepts: str = "a comma-separated list of names") -> Kind:
    """A list of names: a sequence or a comma-separated string; normalised to a tuple of
    non-empty, stripped names (at least one)."""
    def normalize(value: Any) -> tuple[str, ...]:
        items = value.split(",") if isinstance(value, str) else list(value)
        if not all(isinstance(s, str) for s in items):
            raise ValueError(value)
        out = tuple(s.strip() for s in items if s.strip())
        if not out:
            raise ValueError(value)
        return out
    return Kind(accepts, normalize)


def text(accepts: str = "a name", check: Callable[[str], str] | None = None) -> Kind:
    """A non-empty string, normalised by ``check`` (which raises ``ValueError`` or ``KeyError``
    for a value it does not know)."""
    def normalize(value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise ValueError(value)
        try:
            return check(value.strip()) if check else value.strip()
        except KeyError:
            raise ValueError(value) from None
    return Kind(accepts, normalize)


@dataclass(frozen=True)
class Option:
    """One declared option: ``name``, ``default`` (used as is: never normalised, may be
    ``None`` meaning "derived", documented in ``doc``), ``kind`` (what a given value may be)
    and ``doc`` (one sentence for ``--help`` and the docs' options tables).  ``None`` is
    accepted as a value when the default is ``None``."""

    name: str
    default: Any
    kind: Kind
    doc: str = ""

    @property
    def accepts(self) -> str:
        return self.kind.accepts

    def check(self, value: Any, owner: str = "") -> Any:
        """``value`` normalised; ``OptionError`` (one line: name, value, what is accepted)
        if the option does not take it."""
        if value is None and self.default is None:
            return None
        try:
            return self.kind.normalize(value)
        except (ValueError, TypeError):
            raise OptionError(self.name, value, self.kind.accepts, owner) from None


def check_options(declared: Sequence[Option] | Mapping[str, Option], given: Mapping[str, Any], *,
                  owner: str = "", undeclared: Iterable[str] = ()) -> dict[str, Any]:
    """``given`` with every value normalised by its declared ``Option``.  ``undeclared``:
    further names accepted as they are (a dialect's ``default_options`` without a declaration).
    Raises ``UnknownOptionError`` (naming the known options) for any other name and
    ``OptionError`` for a value an option does not take."""
    table = declared if isinstance(declared, Mapping) else {o.name: o for o in declared}
    extra = set(undeclared)
    out: dict[str, Any] = {}
    for name, value in given.items():
        opt = table.get(name)
        if opt is not None:
            out[name] = opt.check(value, owner)
        elif name in extra:
            out[name] = value
        else:
            known = ", ".join(sorted({*table, *extra}))
            raise UnknownOptionError(f"unknown {owner + ' ' if owner else ''}option {name!r} "
                                     f"(known: {known})")
    return out


def parse_assignments(pairs: Iterable[str], flag_name: str = "-o", shape: str = "NAME=VALUE") -> dict[str, str]:
    """``NAME=VALUE`` words (as given after ``-o`` / ``-s`` / ``--conf``) → ``{NAME: VALUE}``,
    values kept as text for the options' own normalisation.  Raises ``ValueError`` naming
    ``flag_name`` and the word when a word has no ``=`` or no name."""
    out: dict[str, str] = {}
    for p in pairs:
        name, eq, value = p.partition("=")
        if not eq or not name.strip():
            raise ValueError(f"{flag_name} {p!r}: expected {shape}")
        out[name.strip()] = value
    return out
