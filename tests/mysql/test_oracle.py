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

from pathlib import Path

import pytest

import ddlcore
from ddlcore.cli import model_json
from tests.servers.catalog import catalog_model, read_script, replay
from tests.servers.model_diff import diff_models, normalize_expression
from tests.servers.mariadb import MariaDbServer
from tests.servers.replay_corpora import mysql_corpus_files, reset_server

pytestmark = pytest.mark.mariadb

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


def _corpus_files() -> list[Path | None]:
    """The corpus files, or ``[None]`` without the corpora: one test that the ``corpora``
    fixture skips with its reason (an empty parameter set would skip without it)."""
    from tests.conftest import corpora_dir
    root = corpora_dir()
    return mysql_corpus_files(root) if root else [None]


def _id(p: Path | None) -> str:
    return f"{p.parent.name}/{p.name}" if p else "no-corpora"


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
