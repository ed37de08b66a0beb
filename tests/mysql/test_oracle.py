"""Oracle tests: every MySQL corpus file is replayed in a real MariaDB 10.11; the statements the
server accepted are parsed by ddlcore, and the model must equal the server's
``information_schema`` for every table, field by field (and the primary key).

Expressions (generated columns, ``DEFAULT (expr)``) are kept by ddlcore as source text while
MariaDB re-prints them with its expression printer (backquotes, spaces, ``ucase`` for
``upper``, ...).  They are compared after ``normalize_expression`` (no quotes around
identifiers, no white space, lower case, no outer parentheses); everything else is compared
exactly.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ddlcore
from ddlcore.cli import model_json
from tests.servers.catalog import catalog_model, read_script, replay
from tests.servers.mariadb import MariaDbServer
from tests.servers.replay_corpora import mysql_corpus_files, reset_server

pytestmark = pytest.mark.mariadb

COMPARED_TABLE_FIELDS = ("primary_key", "default_character_set_name", "default_collation_name", "comment")
COMPARED_COLUMN_FIELDS = ("name", "ordinal_position", "data_type", "column_type", "nullable",
                          "column_default", "character_maximum_length", "numeric_precision",
                          "numeric_scale", "datetime_precision", "character_set_name",
                          "collation_name", "auto_increment", "generation_expression",
                          "enum_values", "set_values", "unsigned", "on_update", "comment")

# MariaDB's expression printer renames some functions (sql/item_*func*.cc func_name())
_PRINTER_NAMES = {"upper": "ucase", "lower": "lcase", "substring": "substr"}


def normalize_expression(text: str | None) -> str | None:
    """Expression text compared modulo printing: no identifier quotes, no white space, lower
    case, no outer parentheses, MariaDB's function spellings."""
    if text is None:
        return None
    t = text.replace("`", "").lower()
    t = re.sub(r"\s+", "", t)
    for a, b in _PRINTER_NAMES.items():
        t = re.sub(rf"\b{a}\(", f"{b}(", t)
    while t.startswith("(") and t.endswith(")") and _balanced(t[1:-1]):
        t = t[1:-1]
    return t


def _balanced(t: str) -> bool:
    depth = 0
    for ch in t:
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            return False
    return depth == 0


def _is_expression_default(value: str | None) -> bool:
    return value is not None and not re.fullmatch(r"'.*'|-?[\d.e]+|b'[01]+'|X'[0-9a-f]*'|current_timestamp\(\d*\)", value, re.S)


def diff_models(ours: dict, server: dict) -> list[str]:
    """Readable differences between two ``{"tables": [...]}`` models."""
    problems: list[str] = []
    by_id = lambda m: {(t["database"], t["name"]): t for t in m["tables"]}  # noqa: E731
    mine, theirs = by_id(ours), by_id(server)
    for key in sorted(set(theirs) - set(mine)):
        problems.append(f"{key[0]}.{key[1]}: table missing from ddlcore's model")
    for key in sorted(set(mine) - set(theirs)):
        problems.append(f"{key[0]}.{key[1]}: table in ddlcore's model but not on the server")
    for key in sorted(set(mine) & set(theirs)):
        a, b = mine[key], theirs[key]
        name = f"{key[0]}.{key[1]}"
        for f in COMPARED_TABLE_FIELDS:
            if a[f] != b[f]:
                problems.append(f"{name}: {f}: ddlcore {a[f]!r} != server {b[f]!r}")
        ca, cb = a["columns"], b["columns"]
        if [c["name"].lower() for c in ca] != [c["name"].lower() for c in cb]:
            problems.append(f"{name}: columns ddlcore {[c['name'] for c in ca]} != server {[c['name'] for c in cb]}")
            continue
        for x, y in zip(ca, cb):
            for f in COMPARED_COLUMN_FIELDS:
                va, vb = x[f], y[f]
                if f == "generation_expression" or (f == "column_default" and _is_expression_default(vb)):
                    va, vb = normalize_expression(va), normalize_expression(vb)
                if va != vb:
                    problems.append(f"{name}.{x['name']}: {f}: ddlcore {x[f]!r} != server {y[f]!r}")
    return problems


@pytest.fixture(scope="module")
def oracle_server():
    """A server of this module's own: each file runs on a clean server (all databases
    dropped), which must not disturb the session server other tests share."""
    server = MariaDbServer()
    try:
        server.start()
    except Exception as exc:  # noqa: BLE001
        from tests.servers.fixtures import in_ci
        if in_ci():
            pytest.fail(f"MariaDB oracle unavailable in CI: {exc}", pytrace=False)
        pytest.skip(f"MariaDB oracle unavailable: {exc}")
    yield server
    server.stop()


def _corpus_files() -> list[Path]:
    from tests.conftest import corpora_dir
    root = corpora_dir()
    return mysql_corpus_files(root) if root else []


def _id(p: Path) -> str:
    return f"{p.parent.name}/{p.name}"


def replay_and_parse(server: MariaDbServer, scripts: list[Path], parser) -> tuple[dict, dict, list[str]]:
    """Replay ``scripts`` (in one database ``corpus``) on a clean server, parse the accepted
    statements with ``parser``; returns (ddlcore model, server model, statements parsed)."""
    admin = server.connect()
    try:
        reset_server(admin)
    finally:
        admin.close()
    tables = parser.new_tables()
    tables.current_database = "corpus"
    tables.databases["corpus"] = ddlcore.Database("corpus", "utf8mb4", "utf8mb4_general_ci")
    parsed: list[str] = []
    for path in scripts:
        conn = server.connect("corpus")
        try:
            results = replay(conn, read_script(path))
        finally:
            conn.close()
        tables.current_database = "corpus"  # each script runs on a new connection
        for r in results:
            if r.accepted:
                parser.apply(r.sql, tables)
                parsed.append(r.sql)
    conn = server.connect()
    try:
        theirs = catalog_model(conn)
    finally:
        conn.close()
    return model_json(tables), theirs, parsed


@pytest.mark.parametrize("path", _corpus_files(), ids=_id)
def test_model_equals_mariadb_catalog(oracle_server, corpora, path):
    parser = ddlcore.get_dialect("mysql").parser()
    ours, theirs, parsed = replay_and_parse(oracle_server, [path], parser)
    problems = diff_models(ours, theirs)
    assert not problems, f"{path.name}: {len(problems)} difference(s):\n  " + "\n  ".join(problems[:60])


def test_guacamole_migration_series_equals_mariadb(oracle_server, corpora):
    base = corpora / "guacamole" / "mysql" / "schema"
    scripts = [base / "001-create-schema.sql", *sorted((base / "upgrade").glob("*.sql"))]
    ours, theirs, parsed = replay_and_parse(oracle_server, scripts, ddlcore.get_dialect("mysql").parser())
    assert len(theirs["tables"]) >= 10
    problems = diff_models(ours, theirs)
    assert not problems, "\n  ".join(problems[:60])


def test_normalize_expression():
    assert normalize_expression("(`a` + 1)") == normalize_expression("a+1")
    assert normalize_expression("ucase(`x`)") == normalize_expression("UPPER( x )")
    assert normalize_expression("(a) + (b)") == "(a)+(b)"
