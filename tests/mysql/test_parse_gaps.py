"""Issue 11's MariaDB parse gaps, one statement-level oracle test each: the statements run in
a real MariaDB 10.11 and are parsed by ddlcore; the model must equal the server's
``information_schema`` field by field (``test_oracle.diff_models``)."""

from __future__ import annotations

import pytest

import ddlcore
from ddlcore.cli import model_json
from tests.servers.catalog import catalog_model
from tests.servers.model_diff import diff_models

pytestmark = pytest.mark.mariadb

CASES = {
    "decimal precision written as a fraction": [
        "CREATE TABLE t (a DECIMAL(19.5), b DECIMAL(0.0), c NUMERIC(8.9))"],
    "decimal of precision 0": [
        "CREATE TABLE t (a DECIMAL(0), b NUMERIC(0,0), c DEC(0, 0) UNSIGNED)"],
    "backquoted table option names": [
        # a backquoted name is an engine-defined option (MariaDB); COMMENT stays the real one
        "CREATE TABLE t (a int) `PAGE_COMPRESSED`=OFF COMMENT='c' ENGINE=InnoDB"],
    "enum and set members as hex and bit literals": [
        "CREATE TABLE t (a enum(0x41, x'4243', 'c'), b set(b'01000100', 'e', X'46'), c enum(0xFFFF) CHARACTER SET latin1)"],
    "enum and set members whose bytes are no characters of the column's charset": [
        # each byte that starts no character is a '?' (MariaDB's conversion), not U+FFFD
        "CREATE TABLE t (a enum(0xFFFF), b set(0xFFFF, 'x'), c enum(0xE282, 0xE282AC, x'41ff42')) "
        "CHARACTER SET utf8mb4"],
    "ADD COLUMN then REMOVE PARTITIONING without a comma": [
        "CREATE TABLE t (a int) PARTITION BY HASH (a) PARTITIONS 2",
        "ALTER TABLE t ADD COLUMN b int REMOVE PARTITIONING"],
    "SET STATEMENT ... FOR <ddl>": [
        "SET STATEMENT max_statement_time=100 FOR CREATE TABLE t (a int, b varchar(5))",
        "SET STATEMENT sql_mode='', lock_wait_timeout=10 FOR ALTER TABLE t ADD COLUMN c int"],
    "bit-literal defaults on CHAR and BINARY": [
        "CREATE TABLE t (a char(2) DEFAULT b'01000001', b binary(1) DEFAULT b'1', c varchar(3) DEFAULT 0x4142)"],
    "temporal defaults in the server's canonical form": [
        "CREATE TABLE t (a TIME DEFAULT 20, b DATETIME DEFAULT '2/2/2', c TIMESTAMP DEFAULT 20001231235959, "
        "d DATE DEFAULT 20240229, e TIME(2) DEFAULT '1:2:3.4', f DATETIME(3) DEFAULT 20240102030405.5)"],
    "CHANGE clauses renaming in a cycle": [
        "CREATE TABLE t (a int, b varchar(5), c date)",
        "ALTER TABLE t CHANGE a b varchar(5), CHANGE b c date, CHANGE c a int"],
    "RENAME COLUMN IF EXISTS": [
        "CREATE TABLE t (a int, b int)",
        "ALTER TABLE t RENAME COLUMN IF EXISTS a TO x, RENAME COLUMN IF EXISTS nope TO y"],
    "CREATE TABLE IF NOT EXISTS over a view": [
        "CREATE TABLE base (a int)",
        "CREATE VIEW v AS SELECT a FROM base",
        "CREATE TABLE IF NOT EXISTS v (z int)"],
    "MySQL-versioned comment inside a column list": [
        "CREATE TABLE t (a int /*!50705 , b varchar(3) */ /*!99999 , c int */ /*M!100500 , d int */)"],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_model_equals_the_servers(mariadb_db, case):
    db = mariadb_db.name
    conn = mariadb_db.connect()
    with conn.cursor() as cur:
        for sql in CASES[case]:
            cur.execute(sql)
    parser = ddlcore.get_dialect("mysql").parser()
    tables = parser.new_tables()
    for sql in CASES[case]:
        parser.parse(sql, tables, database=db)
    ours = model_json(tables)
    ours["tables"] = [t for t in ours["tables"] if t["database"] == db]
    problems = diff_models(ours, catalog_model(conn, [db]))
    assert problems == [], "\n".join(problems)


def test_a_table_created_before_any_use_and_addressed_as_db_t(mariadb_db):
    db = mariadb_db.name
    script = [f"CREATE TABLE {db}.t (a int)", f"ALTER TABLE `{db}`.t ADD COLUMN b int",
              f"USE {db}", "ALTER TABLE t ADD COLUMN c int", f"ALTER TABLE {db}.t DROP COLUMN a"]
    conn = mariadb_db.connect()
    with conn.cursor() as cur:
        cur.execute("USE mysql")  # any session database: every statement but USE names its own
        for sql in script:
            cur.execute(sql)
    parser = ddlcore.get_dialect("mysql").parser()
    tables = parser.new_tables()
    for sql in script:
        parser.parse(sql, tables)  # no current database until the USE
    ours = model_json(tables)
    ours["tables"] = [t for t in ours["tables"] if t["database"] == db]
    assert diff_models(ours, catalog_model(conn, [db])) == []


def test_engine_defined_options_and_set_statement_are_read():
    parser = ddlcore.get_dialect("mysql").parser(lenient=True)
    tables = parser.new_tables()
    parser.parse("CREATE TABLE t (a int) `PAGE_COMPRESSED`=OFF; "
                 "SET STATEMENT max_statement_time=1 FOR ALTER TABLE t ADD b int; "
                 "SET STATEMENT sql_mode='' FOR ALTER TABLE t ADD COLUMN ((( bad", tables, database="d")
    t = tables.get("d.t")
    assert t.option("PAGE_COMPRESSED") == "OFF" and t.column_names == ["a", "b"]
    # the statement filter sends SET STATEMENT ... FOR <ddl> to the parser, and a failed one
    # names its table (the history blocks it)
    from ddlcore_mysql.dialect import STATEMENT_FILTER
    assert STATEMENT_FILTER.classify("SET STATEMENT a=1 FOR CREATE TABLE x (a int)")[0]
    assert not STATEMENT_FILTER.classify("SET STATEMENT a=1 FOR SELECT 1")[0]
    targets = ddlcore.get_dialect("mysql").statement_targets("SET STATEMENT x=1 FOR ALTER TABLE t ADD (((", tables)
    assert [str(t) for t in targets] == ["d.t"]


def test_a_table_named_with_no_database_selected_is_refused_as_the_server_refuses_it(mariadb, mariadb_db):
    """No ``USE`` yet and no database given: the server refuses ``CREATE TABLE t1`` (error 1046,
    "No database selected"), so the parser does too — the table is in no database, and a later
    ``USE db; DROP TABLE t1`` must not find one (docs/mysql.md, "Databases")."""
    import pymysql

    script = ["CREATE TABLE t1 (a int)", f"USE {mariadb_db.name}", "CREATE TABLE t2 (b int)", "DROP TABLE t2",
              "CREATE TABLE t1 (c int)"]
    conn = mariadb.connect()  # a session with no default database
    with conn.cursor() as cur:
        with pytest.raises(pymysql.err.OperationalError, match="No database selected"):
            cur.execute(script[0])
        for sql in script[1:]:
            cur.execute(sql)
    parser = ddlcore.get_dialect("mysql").parser()
    with pytest.raises(ddlcore.DdlParseError, match="No database selected: t1 names no database"):
        parser.parse(script[0], parser.new_tables())
    result = parser.parse(";\n".join(script), parser.new_tables(), lenient=True)
    statuses = [s.status for s in result.statements]
    assert statuses[0] == "failed" and "failed" not in statuses[1:], statuses
    ours = model_json(result.tables)
    assert diff_models(ours, catalog_model(conn, [mariadb_db.name])) == []
    conn.close()
