"""The PostgreSQL oracle's comparison, shared by the PostgreSQL suites (tests/postgres):
replay statements in a real PostgreSQL 15 and through ddlcore, then compare ddlcore's model
with the server's catalog read by ``tests/servers/pg_catalog.py`` (``catalog_tables``), table by
table and field by field, with readable differences.

Generation expressions are kept by ddlcore as written while the server re-prints them
(``pg_get_expr``): they are compared after ``normalize_expression``.  Everything else is
compared exactly.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ddlcore
from tests.servers.pg_catalog import catalog_tables, install_describe, replay_statements

__all__ = ["COMPARED_TABLE_FIELDS", "COMPARED_COLUMN_FIELDS", "normalize_expression", "statements_of",
           "column_diffs", "model_diffs", "run_oracle", "replay_and_compare", "catalog_tables",
           "install_describe", "replay_statements"]

COMPARED_TABLE_FIELDS = ("primary_key", "comment", "replica_identity", "options", "indexes")
COMPARED_COLUMN_FIELDS = ("name", "ordinal_position", "data_type", "column_type", "nullable",
                          "column_default", "character_maximum_length", "character_octet_length",
                          "numeric_precision", "numeric_scale", "datetime_precision", "interval_type",
                          "collation_name", "identity", "generation_expression", "generation_stored",
                          "array_dimensions", "enum_values", "udt_schema", "udt_name", "domain_schema",
                          "domain_name", "domain_base_type", "comment")

def normalize_expression(text: str | None) -> str | None:
    """An expression compared modulo printing: no quotes, no white space, lower case, no
    parentheses, no casts the server adds (``(qty)::numeric``)."""
    if text is None:
        return None
    t = re.sub(r"::[a-z_]+(?: (?:precision|varying|without time zone|with time zone))?", "", text.replace('"', "").lower())
    return re.sub(r"[\s()]+", "", t)


def statements_of(path: Path) -> list[str]:
    """The statements of a corpus file, split by ddlcore's PostgreSQL splitter."""
    parser = ddlcore.get_dialect("postgres").parser()
    return [s.text for s in parser.split(path.read_text(encoding="utf-8"))]


def column_diffs(ours: dict, theirs: dict) -> list[str]:
    out = []
    for f in COMPARED_COLUMN_FIELDS:
        a, b = ours.get(f), theirs.get(f)
        if f == "generation_expression":
            a, b = normalize_expression(a), normalize_expression(b)
        if isinstance(a, tuple):
            a = list(a)
        if isinstance(b, tuple):
            b = list(b)
        if a != b:
            out.append(f"{theirs['name']}.{f}: ddlcore {a!r} != server {b!r}")
    return out


def _index_set(indexes: list | None) -> set:
    return {(ix["name"], ix["kind"], tuple(c if c is not None else "<expr>" for c in ix["columns"]))
            for ix in indexes or ()}


def model_diffs(model: dict, server: dict) -> list[str]:
    diffs = []
    for key in sorted(set(model) | set(server)):
        if key not in model:
            diffs.append(f"{key}: only in the server")
            continue
        if key not in server:
            diffs.append(f"{key}: only in ddlcore")
            continue
        a, b = model[key].to_json(), server[key].to_json()
        for f in COMPARED_TABLE_FIELDS:
            if f == "indexes":  # by name, kind and columns (key_parts are ddlcore's source text)
                ia, ib = _index_set(a.get(f)), _index_set(b.get(f))
                if ia != ib:
                    diffs.append(f"{key}: indexes: ddlcore only {sorted(ia - ib)}, server only {sorted(ib - ia)}")
                continue
            if f == "options":  # key → value (the order options were set in is not the catalog's)
                oa, ob = sorted(map(tuple, a.get(f) or ())), sorted(map(tuple, b.get(f) or ()))
                if oa != ob:
                    diffs.append(f"{key}: options: ddlcore {oa!r} != server {ob!r}")
                continue
            if a.get(f) != b.get(f):
                diffs.append(f"{key}: {f}: ddlcore {a.get(f)!r} != server {b.get(f)!r}")
        if [c["name"] for c in a["columns"]] != [c["name"] for c in b["columns"]]:
            diffs.append(f"{key}: columns ddlcore {[c['name'] for c in a['columns']]} != server "
                         f"{[c['name'] for c in b['columns']]}")
            continue
        for ca, cb in zip(a["columns"], b["columns"]):
            diffs.extend(f"{key}: {d}" for d in column_diffs(ca, cb))
    return diffs


def run_oracle(postgres, dbname: str, corpora: Path, files: list[str]) -> tuple[list[str], list[str], int]:
    """Replay ``files`` in order into ``dbname`` and ddlcore; return (diffs, ddlcore failures,
    statements accepted)."""
    parser = ddlcore.get_dialect("postgres").parser(database=dbname)
    tables = parser.new_tables()
    failures: list[str] = []
    accepted = 0
    with postgres.connect(dbname) as conn:
        install_describe(conn)
        conn.execute("SET search_path = public")  # the installer's script leaves its own
        for rel in files:
            replay = replay_statements(conn, statements_of(corpora / rel))
            accepted += len(replay.accepted)
            for text in replay.accepted:
                r = parser.apply(text, tables, lenient=True)
                if r.status == "failed":
                    failures.append(f"{rel}: {r.error}")
        server = catalog_tables(conn, dbname)
    model = {(t.id.schema, t.id.name): t for t in tables}
    return model_diffs(model, server), failures, accepted


def replay_and_compare(postgres, dbname: str, statements: list[str], *, every: bool = True) -> list[str]:
    """Run ``statements`` in ``dbname`` and through ddlcore; the differences between the model and
    the server's catalog after each statement (``every``) or after the last, as ``"after
    <statement>: <difference>"``.  A statement the server refuses fails the test (a broken case);
    one ddlcore cannot apply is a difference and ends the replay."""
    parser = ddlcore.get_dialect("postgres").parser(database=dbname)
    tables = parser.new_tables()
    out: list[str] = []
    with postgres.connect(dbname) as conn:
        install_describe(conn)
        conn.execute("SET search_path = public")
        for i, text in enumerate(statements):
            try:
                conn.execute(text)
            except Exception as exc:  # noqa: BLE001
                pytest.fail(f"the server refused a statement of the case: {text}\n{exc}")
            try:
                parser.apply(text, tables)
            except ddlcore.DdlParseError as exc:
                out.append(f"after {text}: ddlcore failed: {exc}")
                break
            if every or i == len(statements) - 1:
                model = {(t.id.schema, t.id.name): t for t in tables}
                out.extend(f"after {text}: {d}" for d in model_diffs(model, catalog_tables(conn, dbname)))
    return out
