"""Self-checks of the oracle harness (tests/servers): the throwaway MariaDB, the script
splitter and replay, and catalog_model's reading of information_schema.

The expected values below are MariaDB 10.11's own renderings, observed on the server; the
ddlcore parser must reproduce exactly these texts (see the comments for the quirks).
Uses the ``mariadb`` / ``mariadb_db`` fixtures from tests/servers/fixtures.py.
"""

from __future__ import annotations

import json
import os

import pytest

try:
    from tests.servers.catalog import (
        catalog_model,
        normalize_statement,
        parse_enum_labels,
        replay,
        split_script,
    )
    from tests.servers import mariadb as mariadb_module
    from tests.servers import replay_corpora
    from tests.servers.mariadb import MariaDbNotAvailable, MariaDbServer
except ImportError:  # tests/ itself on sys.path (no tests/__init__.py)
    from servers.catalog import (  # type: ignore[no-redef]
        catalog_model,
        normalize_statement,
        parse_enum_labels,
        replay,
        split_script,
    )
    from servers import mariadb as mariadb_module  # type: ignore[no-redef]
    from servers import replay_corpora  # type: ignore[no-redef]
    from servers.mariadb import MariaDbNotAvailable, MariaDbServer  # type: ignore[no-redef]


# ------------------------------------------------------------------ splitter (no server)
def test_split_handles_delimiter_quotes_and_comments():
    script = """
-- leading comment; with a semicolon
CREATE TABLE a (x varchar(5) DEFAULT 'a;b', `we;ird` int /* c;omment */); # trailing
INSERT INTO a VALUES ('it''s; \\' ok', 1);
DELIMITER $$
CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END$$
DELIMITER ;
DROP TABLE a;
"""
    sts = split_script(script)
    assert [s.sql.split()[0] for s in sts] == ["CREATE", "INSERT", "CREATE", "DROP"]
    assert sts[0].sql.endswith("/* c;omment */)")
    assert sts[0].line == 3
    assert sts[2].delimiter == "$$" and sts[2].sql.endswith("END")
    assert sts[3].delimiter == ";"


def test_split_keeps_compound_body_without_delimiter_change():
    script = """CREATE DEFINER=`u`@`%` FUNCTION f(a int) RETURNS int
DETERMINISTIC
BEGIN
  DECLARE v INT DEFAULT 1;
  CASE v WHEN 1 THEN SET v = 2; ELSE BEGIN END; END CASE;
  IF v > 1 THEN SET v = 3; END IF;
  RETURN v;
END;
CREATE TABLE t (id int);
"""
    sts = split_script(script)
    assert len(sts) == 2
    assert sts[0].sql.endswith("END")
    assert sts[1].sql == "CREATE TABLE t (id int)"


def test_split_newline_separated_statements():
    script = (
        "CREATE TABLE a (id int) comment=\"x\"\n"
        "CREATE TABLE b (\n  id int\n)\n"
        "ALTER TABLE b\n    DROP COLUMN id,\n    ADD COLUMN y int\n"
        "CREATE VIEW v AS\nSELECT 1\n"
    )
    sts = [normalize_statement(s.sql) for s in split_script(script)]
    assert sts == [
        'CREATE TABLE a (id int) comment="x"',
        "CREATE TABLE b ( id int )",
        "ALTER TABLE b DROP COLUMN id, ADD COLUMN y int",
        "CREATE VIEW v AS SELECT 1",
    ]


@pytest.mark.parametrize(
    "column_type, labels",
    [
        ("enum('a','b')", ["a", "b"]),
        ("enum('b''c','d\\\\e','f,g','h\"i','')", ["b'c", "d\\e", "f,g", 'h"i', ""]),
        ("enum('nl\\nx','cr\\rx','nul\\0x','tab\tx')", ["nl\nx", "cr\rx", "nul\0x", "tab\tx"]),
        ("set('one','two three','it''s')", ["one", "two three", "it's"]),
        ("enum('(',')',', ')", ["(", ")", ", "]),
    ],
)
def test_parse_enum_labels(column_type, labels):
    assert parse_enum_labels(column_type) == labels


def test_missing_server_without_root_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(mariadb_module, "MARIADBD", "/nonexistent/mariadbd")
    monkeypatch.setattr(mariadb_module.os, "geteuid", lambda: 1000)
    with pytest.raises(MariaDbNotAvailable, match="apt-get install -y mariadb-server"):
        mariadb_module.ensure_installed()
    with pytest.raises(MariaDbNotAvailable):
        MariaDbServer().start()


# ------------------------------------------------------------------ server


@pytest.mark.mariadb
def test_server_configuration(mariadb):
    with mariadb.connect() as conn, conn.cursor() as cur:
        cur.execute(
            "SELECT VERSION(), @@binlog_format, @@binlog_row_image, @@binlog_row_metadata, "
            "@@server_id, @@log_bin, @@character_set_server, @@collation_server, @@skip_grant_tables"
        )
        version, fmt, image, meta, server_id, log_bin, cs, coll, skip = cur.fetchone()
    assert version.startswith("10.11.")
    assert (fmt, image, meta, server_id, log_bin) == ("ROW", "FULL", "FULL", 1, 1)
    assert (cs, coll) == ("utf8mb4", "utf8mb4_general_ci")
    assert skip == 0
    # reachable over TCP too
    with mariadb.connect(tcp=True) as conn, conn.cursor() as cur:
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)


SAMPLE_TABLE = r"""
CREATE TABLE sample (
  id int unsigned NOT NULL AUTO_INCREMENT,
  tenant smallint NOT NULL,
  e enum('a','b''c','d\\e','f,g') DEFAULT 'b''c',
  s set('x','y z','it''s') NOT NULL DEFAULT 'x',
  name varchar(20) CHARACTER SET latin1 COLLATE latin1_bin DEFAULT 'hello',
  n int DEFAULT NULL,
  m int,
  d decimal(10,2) DEFAULT 1.5,
  f float DEFAULT -0.5,
  z int(5) unsigned zerofill DEFAULT 7,
  b bit(4) DEFAULT b'101',
  t time(2) DEFAULT '12:00:00',
  dt datetime(3) DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  ts timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  g1 int GENERATED ALWAYS AS (n + 1) VIRTUAL,
  g2 varchar(30) AS (upper(name)) STORED,
  ex int DEFAULT (1+2),
  js json,
  c char(3) CHARACTER SET utf8 COMMENT 'a ''quoted'' comment',
  PRIMARY KEY (tenant, id),
  KEY (id)
) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci COMMENT='the sample'
"""


@pytest.mark.mariadb
def test_catalog_model_renders_columns_as_mariadb_does(mariadb_db):
    conn = mariadb_db.connect()
    with conn.cursor() as cur:
        cur.execute(SAMPLE_TABLE)
        cur.execute("CREATE TABLE other (a int)")
        cur.execute("CREATE VIEW v_sample AS SELECT id FROM sample")
    model = catalog_model(conn, [mariadb_db.name])
    json.dumps(model)  # plain JSON

    assert [t["name"] for t in model["tables"]] == ["other", "sample"]
    assert model["views"] == [{"database": mariadb_db.name, "name": "v_sample"}]
    t = model["tables"][1]
    assert set(t) == {"database", "schema", "name", "columns", "primary_key",
                      "default_character_set_name", "default_collation_name", "comment"}
    assert t["database"] == mariadb_db.name and t["schema"] is None
    assert t["primary_key"] == ["tenant", "id"]  # key order, not column order
    assert (t["default_character_set_name"], t["default_collation_name"]) == ("utf8mb4", "utf8mb4_unicode_ci")
    assert t["comment"] == "the sample"
    assert model["tables"][0]["primary_key"] == [] and model["tables"][0]["comment"] is None

    cols = {c["name"]: c for c in t["columns"]}
    assert [c["ordinal_position"] for c in t["columns"]] == list(range(1, len(cols) + 1))
    assert set(cols["id"]) == {
        "name", "ordinal_position", "data_type", "column_type", "nullable", "column_default",
        "character_maximum_length", "numeric_precision", "numeric_scale", "datetime_precision",
        "character_set_name", "collation_name", "auto_increment", "generation_expression",
        "enum_values", "set_values", "unsigned", "on_update", "comment",
    }

    def has(col, **expected):
        got = {k: cols[col][k] for k in expected}
        assert got == expected, col

    has("id", data_type="int", column_type="int(10) unsigned", nullable=False, column_default=None,
        auto_increment=True, unsigned=True, numeric_precision=10, numeric_scale=0)
    has("tenant", column_type="smallint(6)", unsigned=False, auto_increment=False)
    # enum/set: labels unescaped from COLUMN_TYPE; the default keeps MariaDB's quoting
    has("e", data_type="enum", column_type="enum('a','b''c','d\\\\e','f,g')",
        enum_values=["a", "b'c", "d\\e", "f,g"], set_values=None, column_default="'b''c'",
        character_set_name="utf8mb4", collation_name="utf8mb4_unicode_ci", unsigned=False,
        character_maximum_length=3)
    has("s", data_type="set", set_values=["x", "y z", "it's"], enum_values=None, nullable=False,
        column_default="'x'")
    has("name", character_set_name="latin1", collation_name="latin1_bin", column_default="'hello'",
        character_maximum_length=20)
    # explicit DEFAULT NULL and no DEFAULT on a nullable column both read as 'NULL' -> None
    has("n", column_default=None, nullable=True)
    has("m", column_default=None, nullable=True)
    # numbers are normalised to the column's scale/format; zerofill pads the default
    has("d", column_default="1.50", numeric_precision=10, numeric_scale=2)
    has("f", column_default="-0.5")
    has("z", column_type="int(5) unsigned zerofill", column_default="00007", unsigned=True)
    has("b", column_default="b'101'", numeric_precision=4)
    has("t", column_default="'12:00:00.00'", datetime_precision=2)
    has("dt", column_default="current_timestamp(3)", on_update="current_timestamp(3)", datetime_precision=3)
    has("ts", column_default="current_timestamp()", on_update="current_timestamp()", nullable=False)
    # generation expressions are re-printed: identifiers back-quoted, functions renamed
    has("g1", generation_expression="`n` + 1", column_default=None)
    has("g2", generation_expression="ucase(`name`)")
    has("ex", column_default="(1 + 2)", generation_expression=None)
    has("js", data_type="longtext", character_set_name="utf8mb4", collation_name="utf8mb4_bin")
    has("c", character_set_name="utf8mb3", collation_name="utf8mb3_general_ci",
        comment="a 'quoted' comment")


@pytest.mark.mariadb
def test_replay_records_accepted_and_failing_statements(mariadb_db):
    conn = mariadb_db.connect()
    script = """
CREATE TABLE t1 (id int PRIMARY KEY);
CREATE TABLE t1 (id int);           -- duplicate: 1050
INSERT INTO t1 VALUES (1), (2);
DELIMITER //
CREATE TRIGGER t1_bi BEFORE INSERT ON t1 FOR EACH ROW
BEGIN
  SET NEW.id = NEW.id + 100;
END//
CREATE PROCEDURE broken() BEGIN SELEC 1; END//
DELIMITER ;
SELECT * FROM t1;
ALTER TABLE t1 ADD COLUMN note varchar(10) DEFAULT 'x;y';
ALTER TABLE nope ADD COLUMN z int;
"""
    results = replay(conn, script)
    assert [r.accepted for r in results] == [True, False, True, True, False, True, True, False]
    assert results[1].error_code == 1050 and "t1" in results[1].error_message
    assert results[3].delimiter == "//" and results[3].sql.endswith("END")
    assert results[4].error_code == 1064
    assert results[7].error_code == 1146 and results[7].line == 14
    model = catalog_model(conn, [mariadb_db.name])
    (t1,) = model["tables"]
    assert [c["name"] for c in t1["columns"]] == ["id", "note"]
    assert t1["columns"][1]["column_default"] == "'x;y'"


@pytest.mark.mariadb
def test_mariadb_db_is_fresh_and_dropped(mariadb, mariadb_db):
    conn = mariadb_db.connect()
    with conn.cursor() as cur:
        cur.execute("SELECT DATABASE(), COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()")
        assert cur.fetchone() == (mariadb_db.name, 0)
        cur.execute("SELECT DEFAULT_CHARACTER_SET_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = %s",
                    (mariadb_db.name,))
        assert cur.fetchone() == ("utf8mb4",)


@pytest.mark.mariadb
def test_second_server_with_other_options_starts_and_cleans_up(mariadb):
    server = MariaDbServer(character_set_server="latin1", collation_server="latin1_swedish_ci",
                           binlog_row_metadata="MINIMAL")
    with server:
        base, pid = server.base, server.pid
        assert server.port != mariadb.port and server.socket != mariadb.socket
        with server.connect() as conn, conn.cursor() as cur:
            cur.execute("SELECT @@binlog_row_metadata, @@character_set_server")
            assert cur.fetchone() == ("MINIMAL", "latin1")
            cur.execute("CREATE DATABASE d")
        assert server.startup_seconds is not None and server.startup_seconds < 30
    assert not base.exists()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    server.stop()  # idempotent


@pytest.mark.mariadb
def test_corpus_replay_agrees_with_recorded_verdicts(mariadb, corpora):
    """Every MySQL corpus file, each on a clean server, gives the recorded accept/reject
    verdicts (apart from the privilege-dependent KNOWN_DIFFERENCES). A server of its own:
    the replay drops every database between files."""
    with MariaDbServer() as server:
        results = replay_corpora.run(server, corpora)
    assert len(results) == 40
    assert sum(r.statements for r in results) > 900
    unexplained = [f"{r.path}: {d}" for r in results for d in r.unexplained]
    assert unexplained == []
