"""Bodies: the stored form of a table, view or database version.

Owns: the canonical body text (compact JSON, content-addressed by SHA-256), its decoding, and
fast structural fingerprints.  Must not know: stores, parsers.

A body is the model value's JSON (``Table.to_json()`` …) without its id (``database``,
``schema``, ``name``: the version row holds the id, so a renamed table and identical shards
share one body), with every column field equal to its ``Column`` default left out, serialised
with sorted keys and no spaces.  ``decode(encode(x)) == x``.

Speed: a history encodes a table on every change, and ``dataclasses.asdict`` (behind
``Column.to_json``) is slow, so columns are serialised here field by field and cached per
``Column`` object (values are immutable and shared between versions).  On its first table the
encoder checks its output against ``Table.to_json()`` and ``Table.fingerprint()``; if the model
ever serialises differently, it falls back to the model's own methods for good.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

from ..model import Column, Database, Table, TableId, View

__all__ = ["Encoder", "decode", "dumps", "table_json", "fingerprint"]

_ID_FIELDS = ("database", "schema", "name")
_COLUMN_FIELDS = tuple(f.name for f in dataclasses.fields(Column))
_COLUMN_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Column)
                    if f.default is not dataclasses.MISSING}
_REQUIRED = ("name", "ordinal_position", "data_type", "column_type")
_NON_STRUCTURAL = Column.NON_STRUCTURAL
_LATER = Column.LATER_FIELDS


def dumps(obj: Any) -> str:
    """Canonical JSON text: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _column_json(c: Column) -> dict[str, Any]:
    """``c.to_json()`` without ``dataclasses.asdict``'s deep copy."""
    d = {f: getattr(c, f) for f in _COLUMN_FIELDS}
    for k in ("enum_values", "set_values"):
        if d[k] is not None:
            d[k] = list(d[k])
    return d


def _compact(d: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in d.items():
        if k not in _REQUIRED and k in _COLUMN_DEFAULTS:
            default = _COLUMN_DEFAULTS[k]
            if type(v) is type(default) and v == default:
                continue
        out[k] = v
    return out


def table_json(t: Table, columns: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """``t.to_json()``, from already serialised ``columns`` when given."""
    return {
        "database": t.id.database, "schema": t.id.schema, "name": t.id.name,
        "columns": columns if columns is not None else [_column_json(c) for c in t.columns],
        "primary_key": list(t.primary_key),
        "default_character_set_name": t.default_character_set_name,
        "default_collation_name": t.default_collation_name,
        "comment": t.comment,
        "options": [list(kv) for kv in t.options],
        "indexes": [i.to_json() for i in t.indexes],
        "foreign_keys": [f.to_json() for f in t.foreign_keys],
        "checks": [c.to_json() for c in t.checks],
        **({"replica_identity": t.replica_identity} if t.replica_identity is not None else {}),
        **({"next_column_id": t.next_column_id} if t.next_column_id is not None else {}),
    }


def fingerprint(columns: list[dict[str, Any]], primary_key: tuple[str, ...]) -> str:
    """``Table.fingerprint()`` from serialised columns."""
    structure = {"columns": [{k: v for k, v in c.items()
                              if k not in _NON_STRUCTURAL and not (v is None and k in _LATER)}
                             for c in columns],
                 "primary_key": list(primary_key)}
    return hashlib.sha256(dumps(structure).encode("utf-8")).hexdigest()


class Encoder:
    """``encode(obj) -> (hash, text)`` and ``fingerprint(table)``, cached per object."""

    def __init__(self, size: int = 16384):
        self.size = size
        self._objs: dict[int, tuple[Any, str, str]] = {}
        self._cols: dict[int, tuple[Column, dict[str, Any], dict[str, Any]]] = {}
        self._fps: dict[int, tuple[Table, str]] = {}
        self._fast: bool | None = None  # None: not verified yet

    def _columns(self, t: Table) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        full, compact = [], []
        cache = self._cols
        for c in t.columns:
            hit = cache.get(id(c))
            if hit is None or hit[0] is not c:
                d = _column_json(c)
                hit = (c, d, _compact(d))
                if len(cache) >= self.size * 4:
                    cache.clear()
                cache[id(c)] = hit
            full.append(hit[1])
            compact.append(hit[2])
        return full, compact

    def _verify(self, t: Table) -> bool:
        if self._fast is None:
            full, _ = self._columns(t)
            self._fast = (table_json(t, full) == t.to_json()
                          and fingerprint(full, t.primary_key) == t.fingerprint())
        return self._fast

    def body(self, obj: Table | View | Database) -> dict[str, Any]:
        """The body (JSON-ready dict) of ``obj``."""
        if isinstance(obj, Table):
            if self._verify(obj):
                _, compact = self._columns(obj)
                d = table_json(obj, compact)
            else:  # pragma: no cover - only if the model's JSON changed
                d = obj.to_json()
                d["columns"] = [_compact(c) for c in d["columns"]]
        else:
            d = obj.to_json()
        for f in _ID_FIELDS:
            d.pop(f, None)
        return d

    def __call__(self, obj: Table | View | Database | None) -> tuple[str | None, str | None]:
        """``(sha256 hex, canonical text)`` of ``obj``'s body, or ``(None, None)``."""
        if obj is None:
            return None, None
        hit = self._objs.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1], hit[2]
        text = dumps(self.body(obj))
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if len(self._objs) >= self.size:
            self._objs.clear()
        self._objs[id(obj)] = (obj, digest, text)
        return digest, text

    def fingerprint(self, t: Table | None) -> str | None:
        """``t.fingerprint()`` (cached, fast)."""
        if t is None:
            return None
        hit = self._fps.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        if self._verify(t):
            full, _ = self._columns(t)
            fp = fingerprint(full, t.primary_key)
        else:  # pragma: no cover
            fp = t.fingerprint()
        if len(self._fps) >= self.size:
            self._fps.clear()
        self._fps[id(t)] = (t, fp)
        return fp


def decode(kind: str, name: str, body: str) -> Table | View | Database:
    """The model value of a stored body; ``name`` is the id as JSON text (``["db", null,
    "t"]`` for tables and views, ``["db"]`` for databases)."""
    d = json.loads(body)
    parts = json.loads(name)
    if kind == "database":
        return Database.from_json({**d, "name": parts[0]})
    d.update(database=parts[0], schema=parts[1], name=parts[2])
    if kind == "view":
        return View.from_json(d)
    columns = tuple(Column(**c) for c in d.pop("columns", ()))
    t = Table.from_json(d)
    return dataclasses.replace(t, columns=columns) if columns else t


def id_text(tid: TableId | None) -> str | None:
    """A table id as JSON text (``'["db",null,"t"]'``)."""
    return None if tid is None else dumps([tid.database, tid.schema, tid.name])
