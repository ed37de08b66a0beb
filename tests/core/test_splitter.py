"""Statement splitting: quotes, comments, DELIMITER, versioned comments, positions."""

from __future__ import annotations

from ddlcore import SplitRules, split_statements


def texts(sql, **kw):
    return [s.text for s in split_statements(sql, SplitRules(**kw) if kw else None)]


def test_semicolons_inside_quotes_and_comments_do_not_split():
    sql = "CREATE TABLE a (x varchar(3) default ';');\n-- c;omment\nCREATE TABLE `b;c` (y int) COMMENT \"a;b\"; # x;y\n/* ; */ DROP TABLE a"
    assert texts(sql) == [
        "CREATE TABLE a (x varchar(3) default ';')",
        "-- c;omment\nCREATE TABLE `b;c` (y int) COMMENT \"a;b\"",
        "# x;y\n/* ; */ DROP TABLE a",
    ]


def test_backslash_escaped_quote_and_doubled_quote():
    sql = r"SET x = 'it\'s; ok'; SET y = 'a''b;c'; SELECT 1"
    assert texts(sql) == [r"SET x = 'it\'s; ok'", "SET y = 'a''b;c'", "SELECT 1"]
    # NO_BACKSLASH_ESCAPES: the backslash is a plain character, the quote ends the string
    assert texts(r"SELECT 'a\'; SELECT 2", backslash_escapes=False) == [r"SELECT 'a\'", "SELECT 2"]


def test_dash_comment_needs_a_space_in_mysql():
    assert texts("SELECT 1--1; SELECT 2") == ["SELECT 1--1", "SELECT 2"]
    assert texts("SELECT 1 -- ; x\n; SELECT 2") == ["SELECT 1 -- ; x", "SELECT 2"]


def test_delimiter_command():
    sql = ("DROP PROCEDURE IF EXISTS p;\nDELIMITER $$\nCREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END$$\n"
           "DELIMITER ;\nCREATE TABLE t (a int);")
    assert texts(sql) == ["DROP PROCEDURE IF EXISTS p",
                          "CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END",
                          "CREATE TABLE t (a int)"]


def test_delimiter_inside_quotes_is_not_a_boundary():
    sql = "DELIMITER //\nCREATE TRIGGER t BEFORE INSERT ON x FOR EACH ROW SET @a = '//';//\nDELIMITER ;\nSELECT 1;"
    assert texts(sql) == ["CREATE TRIGGER t BEFORE INSERT ON x FOR EACH ROW SET @a = '//';", "SELECT 1"]


def test_versioned_comments_run_by_version():
    # MariaDB 10.11 is 101100: /*!99999 (9.99.99) runs, /*!110000 does not
    sql = "/*!40101 SET NAMES utf8 */;\n/*!110000 DROP TABLE x */;\nCREATE TABLE t (a int) /*!50100 ENGINE=InnoDB */"
    out = split_statements(sql)
    assert [" ".join(s.text.split()) for s in out] == ["SET NAMES utf8", "CREATE TABLE t (a int) ENGINE=InnoDB"]
    assert [" ".join(s.text.split()) for s in split_statements(sql, SplitRules(server_version=120000))][1] == "DROP TABLE x"
    # markers are blanked with spaces of the same length: offsets still match the input
    stmt = out[1]
    assert sql[stmt.offset:stmt.offset + 22] == "CREATE TABLE t (a int)"


def test_mariadb_only_comments():
    sql = "CREATE TABLE t (a int) /*M!100100 COMMENT 'm' */"
    assert "COMMENT 'm'" in texts(sql)[0]
    assert "COMMENT" not in texts(sql, mariadb=False)[0].replace("/*M!100100 COMMENT 'm' */", "")


def test_positions_are_line_and_column_of_the_input():
    sql = "SELECT 1;\n\n   CREATE TABLE t (a int);"
    s = split_statements(sql)[1]
    assert (s.line, s.column, s.index) == (3, 3, 1)
    assert sql[s.offset:].startswith("CREATE")


def test_postgres_rules_dollar_quotes_and_nested_comments():
    rules = SplitRules(backslash_escapes=False, hash_comments=False, dollar_quotes=True,
                       nested_block_comments=True, delimiter_command=False, versioned_comments=False)
    sql = "CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql; /* a /* ; */ ; */ SELECT 2"
    out = [s.text for s in split_statements(sql, rules)]
    assert out == ["CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql",
                   "/* a /* ; */ ; */ SELECT 2"]


def test_unterminated_quote_runs_to_the_end_and_comment_only_statements_vanish():
    assert texts("SELECT 'abc; SELECT 2") == ["SELECT 'abc; SELECT 2"]
    assert texts("-- only a comment\n;  ;\n/* x */;") == []


def test_comment_detection_does_not_backtrack_on_long_statements():
    import time
    text = "CREATE TABLE t (\n" + "  a int, -- c\n  /* x */ b int,\n" * 400 + " z int)"
    t0 = time.perf_counter()
    assert len(split_statements(text)) == 1
    assert time.perf_counter() - t0 < 1.0
