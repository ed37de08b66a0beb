"""The tag of a run's events: the table version in force at an event's ``seq``, or why it has none.

One rule, ``tag``, written once over a few operations and evaluated by two faces, as the column
rules are (``ddlcore.spark.rules``): ``PYTHON`` evaluates it on one event's values (the driver's
path, ``driver.DriverIncrement``), ``SparkFaces`` builds it as a Spark expression over the event's
columns once per run (``stage``: the JVM evaluates it, no Python per row).  The Python face keeps
SQL's nulls (an operation on null is null; a null condition does not hold), so both faces give
the same tag and reason to the same event.  Likewise ``in_force``, the version's validity range
an event's ``seq`` must fall in.

The inputs of the rule (``TagInputs``' fields) are an event's fields as Spark reads them, plus
what matching it with a table version gave: ``version`` (the index of a version of its table in
force at its ``seq``, null for none; a row event in force in several versions is tagged once per
version, as a join gives it) and ``version_reason`` (why that version's rows are quarantined: a
blocked version, columns named like the pipeline's, else null).  ``replay``: the target version
of a replayed quarantine record (``--replay-quarantine``: only Spark reads them; null otherwise).

Owns: the precedence of the tags and their reasons (``tag``).  Must not know: how events are read,
matched with versions, staged or converted.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .quarantine import CAPTURE_REASON, STMT_REASON, STMT_TEXT_CHARS, UNKNOWN_TABLE_REASON, PartKind

__all__ = ["TagInputs", "tag", "in_force", "version_reason", "PythonFaces", "PYTHON", "SparkFaces"]


class TagInputs(NamedTuple):
    """The inputs of ``tag`` (module docstring), each a value (``PYTHON``) or a Spark column
    (``SparkFaces``).  (A named tuple: the driver's path makes one per event.)"""

    valid: Any
    op: Any
    ddl: Any
    quarantine: Any
    database: Any
    schema: Any
    table: Any
    version: Any
    version_reason: Any
    replay: Any = None


def tag(e: TagInputs, f) -> tuple[Any, Any]:
    """``(part, reason)`` of one event in the faces ``f`` (``PYTHON`` or a ``SparkFaces``): the
    first that applies of a replayed record's target version, ``PartKind.INVALID`` (a malformed
    line: its reason is built from the file later), ``STATEMENT`` (statement-format DML: its
    text's start), ``CAPTURE`` (the capture quarantined it: its reason), ``UNKNOWN_TABLE`` (no
    version in force), ``BLOCKED`` (the version's reason), else the version's index (reason
    null).  A non-negative part is a version's index; a negative one a ``PartKind``.  Each
    reason is a function of no argument (the Python face builds only the one it returns)."""
    return f.first((
        (f.not_null(e.replay), e.replay, None),
        (f.not_(e.valid), PartKind.INVALID, None),
        (f.eq(e.op, "stmt"), PartKind.STATEMENT, lambda: f.concat(STMT_REASON, f.prefix(e.ddl, STMT_TEXT_CHARS))),
        (f.not_null(e.quarantine), PartKind.CAPTURE, lambda: f.concat(CAPTURE_REASON, e.quarantine)),
        (f.is_null(e.version), PartKind.UNKNOWN_TABLE, lambda: f.concat(
            UNKNOWN_TABLE_REASON[0], f.dotted(f.coalesce(e.database, "?"), e.schema, e.table), UNKNOWN_TABLE_REASON[1])),
        (f.not_null(e.version_reason), PartKind.BLOCKED, lambda: e.version_reason),
    ), e.version)


def in_force(seq: Any, valid_from: Any, valid_to: Any, f) -> Any:
    """Whether a version valid from ``valid_from`` (exclusive: the DDL's own ``seq``) to
    ``valid_to`` (exclusive; null: still in force) is the one in force at ``seq``."""
    return f.and_(f.gt(seq, valid_from), f.or_(f.is_null(valid_to), f.lt(seq, valid_to)))


def version_reason(k: int, version: Any, collisions: dict[int, str]) -> str | None:
    """The ``version_reason`` input of the rows of version ``k`` (a ``TableVersion``): its own
    reason if it is blocked, else its column-name collision's (``versions.collisions``), else
    ``None``."""
    return version.reason if version.blocked else collisions.get(k)


class PythonFaces:
    """The operations of ``tag`` on Python values, with SQL's nulls (``None``)."""

    @staticmethod
    def is_null(x: Any) -> bool:
        return x is None

    @staticmethod
    def not_null(x: Any) -> bool:
        return x is not None

    @staticmethod
    def not_(x: Any) -> bool | None:
        return None if x is None else not x

    @staticmethod
    def eq(x: Any, value: Any) -> bool | None:
        return None if x is None else x == value

    @staticmethod
    def gt(x: Any, y: Any) -> bool | None:
        return None if x is None or y is None else x > y

    @staticmethod
    def lt(x: Any, y: Any) -> bool | None:
        return None if x is None or y is None else x < y

    @staticmethod
    def and_(x: bool | None, y: bool | None) -> bool | None:
        if x is False or y is False:
            return False
        return None if x is None or y is None else True

    @staticmethod
    def or_(x: bool | None, y: bool | None) -> bool | None:
        if x is True or y is True:
            return True
        return None if x is None or y is None else False

    @staticmethod
    def coalesce(x: Any, value: Any) -> Any:
        return value if x is None else x

    @staticmethod
    def concat(*xs: Any) -> str | None:
        return None if any(x is None for x in xs) else "".join(xs)

    @staticmethod
    def prefix(x: str | None, n: int) -> str | None:
        return None if x is None else x[:n]

    @staticmethod
    def dotted(*xs: Any) -> str:
        """The non-null ``xs`` joined by dots (SQL's ``concat_ws``)."""
        return ".".join(x for x in xs if x is not None)

    @staticmethod
    def first(cases, default: Any) -> tuple[Any, Any]:
        """``(part, reason)`` of the first case ``(condition, part, reason: a function of no
        argument, or None)`` whose condition holds (``True``), else ``(default, None)``."""
        for condition, part, reason in cases:
            if condition is True:
                return part, (None if reason is None else reason())
        return default, None


PYTHON = PythonFaces()


class SparkFaces:
    """The operations of ``tag`` as Spark expressions.  ``part``: the name the caller gives the
    part's column; the reason is an expression over it (``first``), so that the conditions are
    evaluated once per row."""

    def __init__(self, part: str = "_part"):
        self.part = part

    @staticmethod
    def _c(x: Any):
        from pyspark.sql import Column
        from pyspark.sql import functions as F

        return x if isinstance(x, Column) else F.lit(x)

    def is_null(self, x):
        return x.isNull()

    def not_null(self, x):
        return x.isNotNull()

    def not_(self, x):
        return ~x

    def eq(self, x, value):
        return x == self._c(value)

    def gt(self, x, y):
        return x > y

    def lt(self, x, y):
        return x < y

    def and_(self, x, y):
        return x & y

    def or_(self, x, y):
        return x | y

    def coalesce(self, x, value):
        from pyspark.sql import functions as F

        return F.coalesce(x, self._c(value))

    def concat(self, *xs):
        from pyspark.sql import functions as F

        return F.concat(*[self._c(x) for x in xs])

    def prefix(self, x, n: int):
        from pyspark.sql import functions as F

        return F.substring(x, 1, n)

    def dotted(self, *xs):
        from pyspark.sql import functions as F

        return F.concat_ws(".", *xs)

    def first(self, cases, default: Any) -> tuple[Any, Any]:
        """``(part, reason)``: ``CASE WHEN condition THEN part ... ELSE default END``, and
        ``CASE WHEN <part column> = part THEN reason() ... END`` over the cases whose part is a
        ``PartKind`` with a reason (the others have none)."""
        from pyspark.sql import functions as F

        part = None
        for condition, value, _ in cases:
            v = F.lit(value.value) if isinstance(value, PartKind) else self._c(value)
            part = F.when(condition, v) if part is None else part.when(condition, v)
        part = part.otherwise(self._c(default))
        reason = None
        for _, value, why in cases:
            if isinstance(value, PartKind) and why is not None:
                test = F.col(self.part) == F.lit(value.value)
                reason = F.when(test, why()) if reason is None else reason.when(test, why())
        return part, reason
