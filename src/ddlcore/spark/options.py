"""``SparkOptions``: how native types map onto Spark types.

Owns: the neutral options every dialect shares (Debezium's connector option names where
Debezium has one, so its users recognise them), the declaration of the options a dialect adds
(``SparkOption``, provided through the ``ddlcore_spark_options`` plugin hook), and validation.
Must not know: any dialect, pyspark.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from ..options import Option, choice, flag

__all__ = ["SparkOptions", "SparkOption", "DECIMAL_HANDLING", "BINARY_HANDLING", "declared_options"]

#: ``decimal.handling.mode``: ``precise`` → ``DecimalType(p,s)`` (string beyond 38 digits),
#: ``double`` → ``DoubleType``, ``string`` → ``StringType`` (plain notation, ``s`` fraction digits)
DECIMAL_HANDLING = ("precise", "double", "string")
#: ``binary.handling.mode``: ``bytes`` → ``BinaryType``; ``base64`` / ``hex`` → ``StringType``
#: (standard base64 with padding, no line breaks / lower-case hex)
BINARY_HANDLING = ("bytes", "base64", "hex")

_CORE = {"decimal_handling": ("precise", DECIMAL_HANDLING), "binary_handling": ("bytes", BINARY_HANDLING)}


@dataclass(frozen=True)
class SparkOption:
    """A type-mapping option a dialect adds: ``name``, the ``dialect`` it belongs to, its
    ``default``, ``choices`` (allowed values; ``(False, True)`` for a flag) and ``doc``."""

    name: str
    dialect: str
    default: Any
    choices: tuple[Any, ...]
    doc: str = ""

    def check(self, value: Any) -> Any:
        """``value`` normalised (``ddlcore.options``: a flag reads true/false, on/off, yes/no,
        1/0; a choice is matched case-insensitively); else ``ddlcore.options.OptionError`` (a
        ``ValueError``: one line naming the option and what it accepts)."""
        kind = flag if self.choices == (False, True) else choice(*self.choices)
        return Option(self.name, self.default, kind).check(value, "Spark")


def declared_options() -> dict[str, SparkOption]:
    """Every dialect option the installed plugins declare, by name."""
    from ..plugins import plugin_manager

    out: dict[str, SparkOption] = {}
    for provided in plugin_manager().hook.ddlcore_spark_options():
        for opt in provided or ():
            out[opt.name] = opt
    return out


class SparkOptions:
    """Type-mapping options (immutable).

    Neutral options:

    * ``dialect``: name of the dialect whose type rules apply (``None``: the table's own,
      ``Table.dialect``, else the only installed dialect with Spark rules).
    * ``decimal_handling``: ``"precise"`` (default) | ``"double"`` | ``"string"``.
    * ``binary_handling``: ``"bytes"`` (default) | ``"base64"`` | ``"hex"``; applies to every
      value that maps to binary.

    A dialect adds its own through the ``ddlcore_spark_options`` plugin hook (MySQL:
    ``tinyint1_as_boolean``, ``bigint_unsigned_handling``, ``time_precision``,
    ``invalid_date_handling``; docs/spark.md and docs/postgres.md list them).  They are set like
    the neutral ones (``SparkOptions(tinyint1_as_boolean=True)``, ``SparkOptions.of({...})``,
    ``ddlcore run -s name=value``) and read as attributes or with ``get(name)``, which gives the
    declared default when unset.

    Unknown names raise ``TypeError``, bad values ``ValueError``."""

    __slots__ = ("dialect", "decimal_handling", "binary_handling", "dialect_options")

    def __init__(self, dialect: str | None = None, decimal_handling: str = "precise",
                 binary_handling: str = "bytes", **dialect_options: Any):
        decimal_handling = Option("decimal_handling", "precise", choice(*DECIMAL_HANDLING)).check(
            decimal_handling, "Spark")
        binary_handling = Option("binary_handling", "bytes", choice(*BINARY_HANDLING)).check(binary_handling, "Spark")
        declared = declared_options() if dialect_options else {}
        checked: dict[str, Any] = {}
        for name, value in sorted(dialect_options.items()):
            opt = declared.get(name)
            if opt is None:
                raise TypeError(f"unknown Spark option: {name} (known: "
                                f"{', '.join(sorted({*_CORE, 'dialect', *declared}))})")
            checked[name] = opt.check(value)
        object.__setattr__(self, "dialect", dialect)
        object.__setattr__(self, "decimal_handling", decimal_handling)
        object.__setattr__(self, "binary_handling", binary_handling)
        object.__setattr__(self, "dialect_options", tuple(checked.items()))

    def __reduce__(self) -> tuple:
        return (SparkOptions.of, (dict(self._items()),))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("SparkOptions is immutable; use replace()")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self.get(name)

    def get(self, name: str) -> Any:
        """The value of option ``name``: set, or the declared default.  Raises
        ``AttributeError`` for a name no installed plugin declares."""
        if name in ("dialect", "decimal_handling", "binary_handling"):
            return object.__getattribute__(self, name)
        for k, v in object.__getattribute__(self, "dialect_options"):
            if k == name:
                return v
        opt = declared_options().get(name)
        if opt is None:
            raise AttributeError(f"no Spark option {name!r}")
        return opt.default

    def _items(self) -> Iterator[tuple[str, Any]]:
        yield "dialect", self.dialect
        yield "decimal_handling", self.decimal_handling
        yield "binary_handling", self.binary_handling
        yield from self.dialect_options

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SparkOptions) and self.as_dict() == other.as_dict() and self.dialect == other.dialect

    def __hash__(self) -> int:
        return hash(tuple(self._items()))

    def __repr__(self) -> str:
        return "SparkOptions(" + ", ".join(f"{k}={v!r}" for k, v in self._items() if v is not None) + ")"

    def as_dict(self, dialect: str | None = None) -> dict[str, Any]:
        """Every option's value (defaults included) but ``dialect``: the neutral ones and those
        the dialect (``dialect``, else ``self.dialect``, else every installed one) declares.
        What ``ddlcore run`` records with an output and compares on the next run."""
        name = dialect or self.dialect
        out: dict[str, Any] = {"decimal_handling": self.decimal_handling, "binary_handling": self.binary_handling}
        for opt in declared_options().values():
            if name is None or opt.dialect == name:
                out[opt.name] = opt.default
        out.update(self.dialect_options)
        return out

    @classmethod
    def of(cls, options: "SparkOptions | Mapping[str, Any] | None" = None, **overrides: Any) -> "SparkOptions":
        """Options from ``options`` (``None``, ``SparkOptions`` or a mapping) with
        ``overrides`` applied (``None`` values in ``overrides`` are ignored)."""
        if options is None:
            base: dict[str, Any] = {}
        elif isinstance(options, SparkOptions):
            base = dict(options._items())
        else:
            base = dict(options)
        base.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**base)

    def replace(self, **changes: Any) -> "SparkOptions":
        return SparkOptions.of(self, **changes)
