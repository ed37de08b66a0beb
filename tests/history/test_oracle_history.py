"""Oracle: replaying a real migration series through the schema history gives, at the end of
every script, the model a real MariaDB 10.11 holds after running the same statements.

The events recorded are the statements the server accepted, in order (what its binlog would
hold), each with the database it ran in.  The history is closed and reopened between scripts,
so each comparison also covers recovery.  Models are compared with the dialect oracle's
normalisation (``tests.mysql.test_oracle.diff_models``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ddlcore.cli import model_json
from ddlcore.history import SchemaHistory
from tests.servers.catalog import catalog_model, read_script, replay
from tests.servers.model_diff import diff_models

from .conftest import mysql_available

pytestmark = pytest.mark.mariadb


@pytest.fixture(autouse=True)
def _needs_mysql():
    reason = mysql_available()
    if reason:
        pytest.skip(reason)


def _record_series(tmp_path: Path, conn, db: str, scripts: list[Path], databases: list[str]):
    """Replay each script on the server and record its accepted statements; returns
    ``[(script, last seq, server model after it, history model after it)]``."""
    path = tmp_path / "history.db"
    seq = 0
    checkpoints = []
    with SchemaHistory(path, dialect="mysql") as h:
        seq += 1
        h.record({"seq": seq, "position": "setup:1", "ddl": f"CREATE DATABASE `{db}`", "database": None})
    for script in scripts:
        results = replay(conn, read_script(script))
        with SchemaHistory(path) as h:  # reopened: recovery from the store, no re-parsing
            first = True
            for r in results:
                if not r.accepted:
                    continue
                seq += 1
                h.record({"seq": seq, "position": f"{script.name}:{r.line}", "ddl": r.sql,
                          "database": db if first and script == scripts[0] else None})
                first = False
        checkpoints.append((script.name, seq, catalog_model(conn, databases)))
    with SchemaHistory(path) as h:
        out = []
        for name, s, theirs in checkpoints:
            tables = h.tables_at(s)
            ours = model_json([t for t in tables if t.id.database in databases])
            ours_views = sorted((v.id.database, v.id.name) for v in tables.views.values()
                                if v.id.database in databases)
            out.append((name, s, theirs, ours, ours_views))
    return out


def _check(checkpoints):
    for name, seq, theirs, ours, ours_views in checkpoints:
        problems = diff_models(ours, theirs)
        assert not problems, f"after {name} (seq {seq}):\n  " + "\n  ".join(problems[:40])
        assert ours_views == [(v["database"], v["name"]) for v in theirs["views"]], f"views after {name}"


def test_guacamole_migration_series_equals_mariadb(tmp_path, mariadb_db, corpora):
    base = corpora / "guacamole" / "mysql" / "schema"
    scripts = [base / "001-create-schema.sql", *sorted((base / "upgrade").glob("*.sql"))]
    assert len(scripts) >= 3
    conn = mariadb_db.connect()
    checkpoints = _record_series(tmp_path, conn, mariadb_db.name, scripts, [mariadb_db.name])
    assert len(checkpoints[-1][2]["tables"]) >= 10
    _check(checkpoints)


@pytest.mark.parametrize("script, database", [
    ("test_db/employees.sql", "employees"),
    ("sakila-jooq/mysql-sakila-schema.sql", "sakila"),
])
def test_one_step_history_equals_mariadb(tmp_path, mariadb_db, corpora, script, database):
    path = corpora / script
    if not path.exists():
        pytest.skip(f"{script} is not in the corpora")
    conn = mariadb_db.connect()
    try:
        with conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{database}`")
        checkpoints = _record_series(tmp_path, conn, mariadb_db.name, [path], [database])
        assert checkpoints[-1][2]["tables"], f"the server holds no tables of {database}"
        _check(checkpoints)
    finally:
        with conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{database}`")
