"""Debezium's MySQL and MariaDB connectors for ``ddlcore capture debezium``
(``ddlcore.debezium.DebeziumConnector``).

Owns: the order of the connector's records and their position text, the flavor and parser
options of its DDL, and a row's values in the raw form (``debezium_values``).

**Order.** Row events carry the binlog coordinates of their row event (``source.file``,
``pos``, ``row``: the row's index in the event); schema history records their DDL's
(``position.file`` / ``pos``); snapshot records (``snapshot`` ``true`` / ``first`` / ``last``
...) all carry the snapshot's binlog position.  The key is ``(file index, pos, phase, n)``:
phase 0 the snapshot's DDL, 1 its rows (``n`` the arrival order, as the connector reads them
table by table), 2 streamed DDL, 3 streamed rows (``n`` = ``row``, then 0 for a delete, 1 else:
Debezium writes a primary-key change as a delete and a create of the same binlog row).  So a DDL at the position
where the next transaction begins is applied before that transaction's rows, and the snapshot
before anything streamed from its position.  The history's ``SET character_set_server=...``
records are statements the MySQL parser applies (the server's default charset).
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable

from ddlcore.debezium import DebeziumSettings, FieldSchema, Record
from ddlcore.model import TableId, casefold_key
from ddlcore.raw import encode_row

from .debezium_values import column_decoder, column_fast

__all__ = ["MySqlConnector", "binlog_index"]

_INDEX = re.compile(r"\.(\d+)$")


@functools.lru_cache(maxsize=1024)
def binlog_index(name: str | None) -> int:
    """The number of a binlog file (``mysql-bin.000003`` → 3; no file → -1)."""
    if not name:
        return -1
    m = _INDEX.search(name)
    return int(m[1]) if m else 0


#: ``source.snapshot`` values of streamed records (a shortcut of ``_snapshot``)
_STREAMED = frozenset({None, False, "false"})


def _snapshot(source: dict[str, Any]) -> bool:
    v = source.get("snapshot")
    return v not in (None, False, "false", "") and str(v).lower() != "false"


class MySqlConnector:
    """Debezium's ``io.debezium.connector.mysql.MySqlConnector`` and
    ``io.debezium.connector.mariadb.MariaDbConnector`` (``source.connector`` ``mysql`` /
    ``mariadb``)."""

    name = "mysql"
    source_connectors = ("mysql", "mariadb")
    dialect = "mysql"
    system_databases = ("mysql", "information_schema", "performance_schema", "sys")
    #: what to say when a run reads rows but no DDL
    no_ddl_hint = ("give the connector's schema history (--history FILE, schema.history.internal.file.filename) "
                   "or its schema change topic (include.schema.changes=true)")

    def flavor(self, source: dict[str, Any]) -> str | None:
        return "mariadb" if source.get("connector") == "mariadb" else "mysql"

    def parser_options(self, flavor: str | None) -> dict[str, Any]:
        return {"flavor": flavor or "mysql"}

    def order_key(self, record: Record, arrival: int) -> tuple:
        src = record.source
        pos = src.get("pos")
        if type(pos) is not int:
            try:
                pos = int(pos or 0)
            except (TypeError, ValueError):
                pos = 0
        snap = src.get("snapshot") not in _STREAMED and _snapshot(src)
        if record.kind == "ddl":
            return (binlog_index(src.get("file")), pos, 0 if snap else 2, arrival)
        if snap or record.op == "r":
            return (binlog_index(src.get("file")), pos, 1, arrival)
        # a primary-key change is a delete and a create of the same binlog row: the delete first
        row = src.get("row") or 0
        return (binlog_index(src.get("file")), pos, 3, row if type(row) is int else int(row),
                0 if record.op == "d" else 1)

    def position(self, record: Record) -> str:
        src = record.source
        row = src.get("row")
        text = f"{src.get('file')}:{src.get('pos')}"
        return text if record.kind == "ddl" or row in (None, 0) else f"{text}#{row}"

    def __init__(self) -> None:
        self._plans: dict[tuple, tuple] = {}
        #: ``id(table)`` → ``(table, settings, row_encoder(table, settings))`` (``encode_row``)
        self._encoders: dict[int, tuple] = {}
        self._table_ids: dict[tuple, TableId] = {}

    def _plan(self, table: Any, names: tuple[str, ...], settings: DebeziumSettings) -> tuple:
        """``(steps, quick, quick_encoded)`` for a message with these field names, cached per
        table version, field names and settings: ``steps`` ``[(field name, column, decoder)]``
        in ordinal order; ``quick`` ``[(field name, unchanged type, fast decoder)]`` when every
        column has one (``column_fast``), else ``None``; ``quick_encoded`` the same giving the
        change log's encoded values."""
        key = (id(table), names, id(settings))
        plan = self._plans.get(key)
        if plan is not None and plan[0] is table and plan[1] is settings:
            return plan[2]
        by_key = {casefold_key(k): k for k in names}
        cols = table.columns
        if len(by_key) != len(cols) or any(casefold_key(c.name) not in by_key for c in cols):
            raise ValueError(f"drift: the message has columns [{', '.join(names)}], the history "
                             f"[{', '.join(c.name for c in cols)}]")
        steps = [(by_key[casefold_key(c.name)], c, column_decoder(c, settings)) for c in cols]
        quick = _quick(steps, [column_fast(c, settings) for _, c, _ in steps])
        encoded = _quick(steps, [column_fast(c, settings, encoded=True) for _, c, _ in steps])
        if len(self._plans) > 1000:
            self._plans.clear()
        self._plans[key] = (table, settings, (steps, quick, encoded))
        return steps, quick, encoded

    def table_changes_drift(self, record: Record, table_at: Any) -> list[str]:
        """Differences between a schema change's ``tableChanges`` (Debezium's own description of
        the tables after the DDL) and the history's tables parsed from the same DDL (``table_at
        (TableId) -> Table | None`` at the event's seq): table present or dropped, column names
        in order, base types, nullability, primary key.  ``[]`` when they agree."""
        out = []
        for change in record.table_changes or ():
            parts = [p.strip('"`') for p in str(change.get("id") or "").split(".") if p]
            if not parts:
                continue
            tid = TableId(parts[0] if len(parts) > 1 else record.database, None, parts[-1])
            model = table_at(tid)
            if change.get("type") == "DROP":
                if model is not None:
                    out.append(f"{tid}: dropped in tableChanges, still in the history")
                continue
            if model is None:
                out.append(f"{tid}: in tableChanges, not in the history")
                continue
            out += [f"{tid}: {p}" for p in _compare(change.get("table") or {}, model)]
        return out

    def table_id(self, record: Record) -> TableId:
        src = record.source
        key = (src.get("db"), src.get("table") or "")
        tid = self._table_ids.get(key)
        if tid is None:
            if len(self._table_ids) > 10_000:
                self._table_ids.clear()
            tid = self._table_ids[key] = TableId(key[0], None, key[1])
        return tid

    def message_ddl(self, record: Record) -> None:
        return None  # the MySQL connectors write no logical decoding messages

    def decode_row(self, table: Any, values: dict[str, Any], fields: dict[str, FieldSchema],
                   settings: DebeziumSettings, image: str = "after") -> tuple[list[Any], list[tuple[str, Any]]]:
        """Raw values of ``values`` (field name → Debezium value) in ``table``'s ordinal order,
        and the losses.  Raises ``ValueError`` naming the column for a value that does not fit
        and for field names that are not the table's columns (drift)."""
        steps, quick, _ = self._plan(table, tuple(values), settings)
        if quick is not None and not fields:
            row = _run_quick(quick, values)
            if row is not None:
                return row, []
        return _decode_steps(steps, values, fields)

    def encode_row(self, table: Any, values: dict[str, Any], fields: dict[str, FieldSchema],
                   settings: DebeziumSettings, image: str = "after") -> tuple[list[Any], list[tuple[str, Any]]]:
        """``decode_row`` with the values encoded for the change log (``ddlcore.raw.encode_row``):
        ``row_encoder(table, settings)`` (kept per table version) applied to ``values``."""
        hit = self._encoders.get(id(table))
        if hit is None or hit[0] is not table or hit[1] is not settings:
            if len(self._encoders) > 1000:
                self._encoders.clear()
            hit = self._encoders[id(table)] = (table, settings, self.row_encoder(table, settings))
        return hit[2](values, fields, image)

    def row_encoder(self, table: Any, settings: DebeziumSettings) -> Callable[..., tuple[list, list]]:
        """``encode(values, fields, image="after") -> (encoded values, losses)`` for rows of one
        table version under ``settings`` (a capture keeps one per table until the next DDL):
        the encoded fast decoders (``column_fast``) when the message has no schemas and no
        column can be lossy, else ``decode_row``'s general decoders, then ``raw.encode_row``.
        The fast plan of the last message is tried first, whatever its field names: a message
        with as many fields, all of them the plan's, has the plan's names."""
        last: list = [None, -1]  # the fast plan of the last message without schemas, its field count

        def encode(values: dict[str, Any], fields: Any, image: str = "after") -> tuple[list, list]:
            quick = last[0]
            if quick is not None and not fields and len(values) == last[1]:
                try:  # _run_quick, inlined: it runs for every row
                    return [v if type(v := values[name]) is unchanged else f(v) for name, unchanged, f in quick], []
                except (ValueError, KeyError):
                    pass  # the plan below says which column and why
            steps, _, quick = self._plan(table, tuple(values), settings)
            if quick is not None and not fields:
                last[0], last[1] = quick, len(steps)
                row = _run_quick(quick, values)
                if row is not None:
                    return row, []
            row, losses = _decode_steps(steps, values, fields)
            return encode_row(row), losses
        return encode


def _run_quick(quick: list, values: dict[str, Any]) -> list | None:
    """The values by a plan's fast decoders; ``None`` when one refuses its value or a field is
    missing (the general decoders then say which column and why)."""
    try:
        return [v if type(v := values[name]) is unchanged else f(v) for name, unchanged, f in quick]
    except (ValueError, KeyError):
        return None


def _quick(steps: list, fast: list) -> list | None:
    """``[(field name, unchanged type, fast decoder)]`` of a plan's steps, ``None`` unless every
    column has a fast decoder."""
    return None if any(f is None for f in fast) else [(name, *f) for (name, _, _), f in zip(steps, fast)]


def _decode_steps(steps: list, values: dict[str, Any], fields: dict[str, FieldSchema]) -> tuple[list, list]:
    out: list[Any] = []
    losses: list[tuple[str, Any]] = []
    get = fields.get
    for name, col, decode in steps:
        try:
            raw, loss = decode(values[name], get(name))
        except ValueError as exc:
            raise ValueError(f"column {col.name} ({col.column_type}): {exc}") from None
        out.append(raw)
        if loss is not None:
            losses.append((col.name, loss))
    return out, losses


#: Debezium ``typeName`` base words that differ from the model's ``data_type``
_TYPE_NAMES = {"integer": "int", "bool": "tinyint", "boolean": "tinyint", "numeric": "decimal", "real": "double",
               "dec": "decimal", "fixed": "decimal", "character": "char", "geomcollection": "geometrycollection"}


def _compare(described: dict[str, Any], model: Any) -> list[str]:
    cols = sorted(described.get("columns") or (), key=lambda c: c.get("position") or 0)
    names = [c.get("name") for c in cols]
    if [casefold_key(n) for n in names] != [casefold_key(c.name) for c in model.columns]:
        return [f"columns [{', '.join(map(str, names))}] in tableChanges, "
                f"[{', '.join(c.name for c in model.columns)}] in the history"]
    out = []
    for d, c in zip(cols, model.columns):
        base = str(d.get("typeName") or "").lower().split()[0] if d.get("typeName") else ""
        if base and _TYPE_NAMES.get(base, base) != c.data_type.lower():
            out.append(f"column {c.name}: {d.get('typeName')} in tableChanges, {c.column_type} in the history")
        if d.get("optional") is not None and bool(d["optional"]) != c.nullable:
            out.append(f"column {c.name}: {'' if d['optional'] else 'NOT '}NULL in tableChanges, "
                       f"{'' if c.nullable else 'NOT '}NULL in the history")
    pk = described.get("primaryKeyColumnNames")
    if pk is not None and [casefold_key(x) for x in pk] != [casefold_key(x) for x in model.primary_key]:
        out.append(f"primary key ({', '.join(pk)}) in tableChanges, ({', '.join(model.primary_key)}) in the history")
    return out
