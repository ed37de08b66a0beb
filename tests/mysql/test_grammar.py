"""The MySQL grammar (grammars/mysql) on its own: what it accepts with SLL prediction, the shape
of the trees the visitor relies on, and what it must reject.

Every statement here parses with SLL prediction and a bail-out error strategy (the fast path of
``ddlcore.parsing``); the tree must equal the one full LL prediction builds."""

from __future__ import annotations

import time

import pytest
from antlr4 import CommonTokenStream, InputStream
from antlr4.atn.PredictionMode import PredictionMode
from antlr4.error.ErrorStrategy import BailErrorStrategy
from antlr4.error.Errors import ParseCancellationException
from antlr4.tree.Trees import Trees

from ddlcore_mysql._generated.MySqlLexer import MySqlLexer
from ddlcore_mysql._generated.MySqlParser import MySqlParser as P


def parse(sql: str, mode=PredictionMode.SLL):
    """The ddlStatement tree of ``sql``; raises ParseCancellationException on a syntax error."""
    lexer = MySqlLexer(InputStream(sql))
    lexer.removeErrorListeners()
    parser = P(CommonTokenStream(lexer))
    parser.removeErrorListeners()
    parser._errHandler = BailErrorStrategy()
    parser._interp.predictionMode = mode
    return parser.ddlStatement()


def tree_text(sql: str, mode=PredictionMode.SLL) -> str:
    return Trees.toStringTree(parse(sql, mode), None, P)


def find(tree, cls):
    """All descendants of ``tree`` (itself included) that are ``cls`` instances."""
    out, todo = [], [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, cls):
            out.append(node)
        todo.extend(getattr(node, "children", None) or [])
    return out


ACCEPTED = [
    # names
    "CREATE TABLE t (a INT)",
    "create table `db`.`t` (`a``b` int, 1abc int, `select` int)",
    "CREATE TABLE db . tbl (id int)",
    "CREATE TABLE db.1abc (id int)",
    'CREATE TABLE "t" ("a" INT)',
    "CREATE TABLE t (status int, date date, comment text, timestamp timestamp, key_block_size int, "
    "text text, enum enum('a','b'), action int, data int, engine int, value int, year year(4), "
    "time time(3), position int, name varchar(10), type int, level int, now int, serial serial, "
    "bit bit(1), json json, point point, uuid uuid, inet6 inet6, period int, system int, row int, "
    "generated int, virtual int, stored int, first int, after int, view int, temporary int)",
    # data types and synonyms
    "CREATE TABLE t (a BIT, b TINYINT, c INT1, d BOOL, e BOOLEAN, f SMALLINT, g INT2, h MEDIUMINT, "
    "i MIDDLEINT, j INT3, k INT, l INTEGER, m INT4, n BIGINT, o INT8, p SERIAL, q DECIMAL, r DEC(10), "
    "s NUMERIC(10,2), t FIXED(5,1), u NUMBER(5), v FLOAT, w FLOAT(20), x FLOAT(7,4), y DOUBLE, "
    "z DOUBLE PRECISION(10,2), aa REAL, ab DATE, ac TIME(6), ad DATETIME(3), ae TIMESTAMP(6), "
    "af YEAR(4), ag YEAR, ah FLOAT4, ai FLOAT8)",
    "CREATE TABLE t (a CHAR, b CHARACTER(10), c NCHAR(5), d NATIONAL CHAR(3), e VARCHAR(10), "
    "f CHARACTER VARYING(10), g CHAR VARYING(5), h NVARCHAR(10), i NATIONAL VARCHAR(10), "
    "j NATIONAL CHARACTER VARYING(10), k NCHAR VARCHAR(10), l VARCHAR2(10), m BINARY(16), "
    "n VARBINARY(255), o CHAR(10) BYTE, p TINYBLOB, q BLOB(100), r MEDIUMBLOB, s LONGBLOB, "
    "t LONG VARBINARY, u TINYTEXT, v TEXT(100), w MEDIUMTEXT, x LONGTEXT, y LONG, z LONG VARCHAR, "
    "aa ENUM('a','b'), ab SET('x','y'), ac JSON, ad GEOMETRY, ae POINT, af LINESTRING, ag POLYGON, "
    "ah MULTIPOINT, ai MULTILINESTRING, aj MULTIPOLYGON, ak GEOMETRYCOLLECTION, al GEOMCOLLECTION, "
    "am INET4, an INET6, ao UUID, ap NCHAR VARYING(3), aq LONG CHAR VARYING, ar VARCHARACTER(3), "
    "as_ CLOB, at_ RAW(3))",
    "CREATE TABLE t (a INT UNSIGNED ZEROFILL, b INT ZEROFILL UNSIGNED, c BIGINT(20) SIGNED, "
    "d DECIMAL(10,2) UNSIGNED ZEROFILL, e VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, "
    "f VARCHAR(10) CHARSET latin1, g CHAR(1) ASCII, h CHAR(1) UNICODE, i VARCHAR(3) BINARY, "
    "j TEXT CHARACTER SET utf8 BINARY, k ENUM('a') CHARACTER SET latin1 COLLATE latin1_bin, "
    "l VARCHAR(10) CHAR SET utf8, m VARCHAR(3) CHARSET 'latin1', n CHAR(3) COLLATE binary)",
    # literals and defaults
    "CREATE TABLE t (a INT NOT NULL DEFAULT 0, b INT NULL DEFAULT -1, c INT DEFAULT +1, "
    "d FLOAT DEFAULT -1.5e3, e VARCHAR(5) DEFAULT 'a' 'b', f VARCHAR(5) DEFAULT _utf8mb4'x', "
    "g VARCHAR(5) DEFAULT N'x', h BINARY(1) DEFAULT X'0F', i BINARY(1) DEFAULT 0x0F, "
    "j BIT(3) DEFAULT B'101', k BIT(3) DEFAULT 0b101, l BOOL DEFAULT TRUE, m BOOL DEFAULT FALSE, "
    "n INT DEFAULT NULL, o TIMESTAMP DEFAULT CURRENT_TIMESTAMP, "
    "p TIMESTAMP(3) DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3), "
    "q DATETIME DEFAULT NOW(), r DATETIME DEFAULT LOCALTIME, s DATETIME DEFAULT LOCALTIMESTAMP(), "
    "t VARCHAR(36) DEFAULT (uuid()), u INT DEFAULT (1 + 2), "
    "v DATE DEFAULT (CURRENT_DATE + INTERVAL 1 YEAR), w VARCHAR(36) DEFAULT uuid(), "
    "x DATE DEFAULT curdate(), y DATETIME DEFAULT current_timestamp() ON UPDATE current_timestamp(), "
    "z INT DEFAULT NEXT VALUE FOR s1, aa VARCHAR(20) DEFAULT CURRENT_USER, "
    "ab DATE DEFAULT DATE '2020-01-01', ac FLOAT DEFAULT .5, ad VARCHAR(3) DEFAULT 'it''s', "
    "ae VARCHAR(3) DEFAULT 'a\\'b\\\\', af VARCHAR(3) DEFAULT \"dq\"\"x\", "
    "ag VARCHAR(3) DEFAULT _latin1 'x', ah VARBINARY(3) DEFAULT _binary 0x00, ai DECIMAL(3,1) DEFAULT - 1)",
    # column attributes in any order
    "CREATE TABLE t (a INT AUTO_INCREMENT PRIMARY KEY, b INT UNIQUE KEY, c INT UNIQUE, d INT KEY, "
    "e INT COMMENT 'x', f INT GENERATED ALWAYS AS (a + 1) VIRTUAL, g INT AS (a * 2) STORED, "
    "h INT AS (a) PERSISTENT, i INT INVISIBLE, j INT VISIBLE, k INT CONSTRAINT ck CHECK (k > 0), "
    "l INT CHECK (l < 5) NOT ENFORCED, m INT REFERENCES o(id) ON DELETE CASCADE ON UPDATE SET NULL, "
    "n POINT NOT NULL SRID 4326, o INT COLUMN_FORMAT FIXED, p INT STORAGE DISK, "
    "q INT ENGINE_ATTRIBUTE='{}', r INT WITH SYSTEM VERSIONING, s INT WITHOUT SYSTEM VERSIONING, "
    "t BLOB COMPRESSED, u TEXT COMPRESSED=zlib, v BIGINT SERIAL DEFAULT VALUE, "
    "w VARCHAR(3) NOT NULL COLLATE utf8_bin, x VARCHAR(3) NOT NULL CHARACTER SET latin1, "
    "y INT CONSTRAINT CHECK (y > 0), z TIMESTAMP(6) GENERATED ALWAYS AS ROW START INVISIBLE, "
    "za TIMESTAMP(6) GENERATED ALWAYS AS ROW END, zb INT my_opt='x', zc INT UNIQUE KEY NOT NULL, "
    "zd INT REFERENCES p (id) ON UPDATE CASCADE ON UPDATE CURRENT_TIMESTAMP)",
    # keys and constraints
    "CREATE TABLE t (a INT, b INT, PRIMARY KEY (a), CONSTRAINT pk PRIMARY KEY USING BTREE (a, b), "
    "UNIQUE KEY uk (a), UNIQUE INDEX (b), CONSTRAINT u2 UNIQUE (a) USING HASH, "
    "CONSTRAINT fk FOREIGN KEY (a) REFERENCES p (id) MATCH FULL ON UPDATE NO ACTION ON DELETE SET DEFAULT, "
    "FOREIGN KEY fkname (b) REFERENCES db.p (x, y), CHECK (a > b), CONSTRAINT c1 CHECK (a > 0) ENFORCED, "
    "INDEX (a), KEY k1 (a(10) DESC, b ASC), KEY k2 ((a + b)), FULLTEXT (c), FULLTEXT KEY ft (c) WITH PARSER ngram, "
    "SPATIAL INDEX sp (g), INDEX i3 (a) KEY_BLOCK_SIZE = 8 COMMENT 'x' INVISIBLE, INDEX i4 (a) NOT IGNORED, "
    "PERIOD FOR SYSTEM_TIME (s, e), KEY IF NOT EXISTS k9 (a), INDEX USING BTREE (a))",
    # CREATE TABLE variants
    "CREATE TEMPORARY TABLE IF NOT EXISTS t LIKE s",
    "CREATE TABLE t (LIKE db.s)",
    "CREATE OR REPLACE TABLE t (a int)",
    "CREATE TABLE t (a int) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci COMMENT='x' "
    "AUTO_INCREMENT=10 ROW_FORMAT=DYNAMIC KEY_BLOCK_SIZE=8",
    "CREATE TABLE t (a int) ENGINE InnoDB, CHARACTER SET utf8, COLLATE utf8_bin, COMMENT 'x', MAX_ROWS 10, "
    "STATS_PERSISTENT=DEFAULT, PACK_KEYS=0, TABLESPACE ts STORAGE DISK, DATA DIRECTORY='/x', "
    "INDEX DIRECTORY = '/y', UNION=(a, b), INSERT_METHOD=LAST, CHECKSUM=1, ENCRYPTION='Y', "
    "SECONDARY_ENGINE=NULL, ENGINE_ATTRIBUTE='{}', PAGE_CHECKSUM=1, TRANSACTIONAL=1, ENCRYPTED=YES, "
    "ENCRYPTION_KEY_ID=2, SEQUENCE=1 WITH SYSTEM VERSIONING",
    "CREATE TABLE t (a int) DEFAULT CHARACTER SET = latin1 DEFAULT COLLATE = latin1_bin START TRANSACTION",
    "CREATE TABLE t (a int) TYPE=MyISAM",
    "CREATE TABLE t (a INT) ENGINE=\"InnoDB\" AUTO_INCREMENT 5",
    "CREATE TABLE t (id INT, y INT) PARTITION BY RANGE (y) (PARTITION p0 VALUES LESS THAN (1991), "
    "PARTITION p1 VALUES LESS THAN MAXVALUE ENGINE = InnoDB)",
    "CREATE TABLE t (id INT) PARTITION BY KEY ALGORITHM=2 (id) SUBPARTITION BY HASH(id) SUBPARTITIONS 2",
    "CREATE TABLE t AS SELECT * FROM s",
    "CREATE TABLE t SELECT a, b AS c, s.d, db.s.e f, COUNT(*) AS n, a + 1, t.* FROM s GROUP BY a",
    "CREATE TABLE t (x int) IGNORE SELECT DISTINCT a FROM s WHERE a > (SELECT 1)",
    "CREATE TABLE t REPLACE AS SELECT 1 AS one",
    "CREATE TABLE t (SELECT a FROM s)",
    "CREATE TABLE t (a int) SELECT 1 UNION SELECT 2",
    "CREATE TABLE t (a INT /* comment */) -- trailing",
    "CREATE TABLE t ( # comment\n a INT) ;",
    # ALTER TABLE
    "ALTER TABLE t ADD COLUMN c INT NOT NULL AFTER b",
    "ALTER TABLE t ADD c INT FIRST, ADD COLUMN IF NOT EXISTS d INT",
    "ALTER TABLE t ADD (c INT, d VARCHAR(3))",
    "ALTER TABLE t ADD INDEX i (a), ADD KEY (b), ADD UNIQUE u (c), ADD UNIQUE KEY (d), ADD PRIMARY KEY (id), "
    "ADD CONSTRAINT pk PRIMARY KEY (id), ADD CONSTRAINT fk FOREIGN KEY (a) REFERENCES p(id), "
    "ADD FOREIGN KEY (a) REFERENCES p(id), ADD FULLTEXT (t), ADD SPATIAL (g), ADD CONSTRAINT c CHECK (a > 0), "
    "ADD CHECK (a > 1), ADD INDEX IF NOT EXISTS i2 (a)",
    "ALTER TABLE t DROP COLUMN c, DROP d, DROP COLUMN IF EXISTS e, DROP f RESTRICT, DROP PRIMARY KEY, "
    "DROP INDEX i, DROP KEY k, DROP FOREIGN KEY fk, DROP CONSTRAINT c, DROP CHECK c2, "
    "DROP INDEX IF EXISTS i3, DROP FOREIGN KEY IF EXISTS fk2",
    "ALTER TABLE t MODIFY c BIGINT NOT NULL, MODIFY COLUMN IF EXISTS d INT FIRST, MODIFY e TEXT AFTER c",
    "ALTER TABLE t CHANGE a b INT, CHANGE COLUMN c d VARCHAR(10) AFTER b, CHANGE IF EXISTS e f INT FIRST",
    "ALTER TABLE t RENAME COLUMN a TO b, RENAME INDEX i TO j, RENAME KEY k TO l",
    "ALTER TABLE t ALTER c SET DEFAULT 1, ALTER COLUMN d DROP DEFAULT, ALTER COLUMN e SET DEFAULT (uuid()), "
    "ALTER f SET INVISIBLE, ALTER INDEX i VISIBLE, ALTER INDEX j NOT IGNORED, ALTER CHECK c NOT ENFORCED",
    "ALTER TABLE t RENAME TO u",
    "ALTER TABLE t RENAME AS db.u",
    "ALTER TABLE t RENAME u",
    "ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
    "ALTER TABLE t CONVERT TO CHARSET latin1",
    "ALTER TABLE t DEFAULT CHARACTER SET = utf8",
    "ALTER TABLE t CHARACTER SET utf8 COLLATE utf8_bin",
    "ALTER TABLE t ENGINE=InnoDB AUTO_INCREMENT=5, ROW_FORMAT=COMPRESSED",
    "ALTER TABLE t ORDER BY a, b DESC",
    "ALTER TABLE t ALGORITHM=INPLACE, LOCK=NONE, ADD COLUMN x INT",
    "ALTER TABLE t ALGORITHM INSTANT, LOCK DEFAULT",
    "ALTER TABLE t FORCE",
    "ALTER TABLE t ENABLE KEYS",
    "ALTER TABLE t DISCARD TABLESPACE",
    "ALTER TABLE t IMPORT TABLESPACE",
    "ALTER TABLE t ADD PARTITION (PARTITION p3 VALUES LESS THAN (2002))",
    "ALTER TABLE t DROP PARTITION p0, p1",
    "ALTER TABLE t TRUNCATE PARTITION ALL",
    "ALTER TABLE t COALESCE PARTITION 2",
    "ALTER TABLE t REORGANIZE PARTITION p0 INTO (PARTITION n0 VALUES LESS THAN (5))",
    "ALTER TABLE t EXCHANGE PARTITION p0 WITH TABLE t2 WITHOUT VALIDATION",
    "ALTER TABLE t ANALYZE PARTITION p0, p1",
    "ALTER TABLE t CHECK PARTITION ALL",
    "ALTER TABLE t OPTIMIZE PARTITION p0",
    "ALTER TABLE t REBUILD PARTITION p0",
    "ALTER TABLE t REPAIR PARTITION p0",
    "ALTER TABLE t REMOVE PARTITIONING",
    "ALTER TABLE t PARTITION BY HASH(id) PARTITIONS 8",
    "ALTER TABLE t ENGINE=InnoDB PARTITION BY KEY(id)",
    "ALTER TABLE t ALGORITHM=INPLACE, DROP PARTITION p1",
    "ALTER TABLE t CONVERT PARTITION p1 TO TABLE t1",
    "ALTER TABLE t WITH VALIDATION",
    "ALTER ONLINE IGNORE TABLE IF EXISTS t WAIT 5 ADD x INT",
    "ALTER TABLE t NOWAIT DROP x",
    "ALTER TABLE t ADD SYSTEM VERSIONING",
    "ALTER TABLE t DROP SYSTEM VERSIONING",
    "ALTER TABLE t ADD PERIOD FOR SYSTEM_TIME(s, e)",
    "ALTER TABLE t DROP PERIOD FOR SYSTEM_TIME",
    "ALTER TABLE t",
    "ALTER TABLE t ADD COLUMN `date` DATE, ADD COLUMN status INT, ADD comment TEXT",
    # other statements
    "DROP TABLE t",
    "DROP TEMPORARY TABLE IF EXISTS t1, db.t2 RESTRICT",
    "DROP TABLES t1, t2 CASCADE",
    "DROP TABLE IF EXISTS /* generated by server */ t",
    "RENAME TABLE a TO b, c TO d",
    "RENAME TABLES db.a TO db.b",
    "RENAME TABLE IF EXISTS a WAIT 1 TO b",
    "TRUNCATE TABLE t",
    "TRUNCATE t",
    "CREATE DATABASE d",
    "CREATE SCHEMA IF NOT EXISTS d DEFAULT CHARACTER SET = utf8mb4 DEFAULT COLLATE utf8mb4_bin",
    "CREATE DATABASE d CHARSET latin1 COLLATE = latin1_bin COMMENT = 'x' ENCRYPTION='N'",
    "CREATE OR REPLACE DATABASE d",
    "ALTER DATABASE d CHARACTER SET utf8",
    "ALTER SCHEMA CHARACTER SET utf8",
    "ALTER DATABASE d READ ONLY = 1",
    "ALTER DATABASE d DEFAULT ENCRYPTION = 'Y'",
    "ALTER DATABASE `#mysql50#a-b` UPGRADE DATA DIRECTORY NAME",
    "DROP DATABASE d",
    "DROP SCHEMA IF EXISTS d",
    "USE d",
    "USE `my db`",
    "CREATE INDEX i ON t (a)",
    "CREATE UNIQUE INDEX i USING BTREE ON t (a(10), b DESC) COMMENT 'x' ALGORITHM = INPLACE LOCK = NONE",
    "CREATE FULLTEXT INDEX i ON t (a) WITH PARSER ngram",
    "CREATE SPATIAL INDEX i ON t (g)",
    "CREATE OR REPLACE ONLINE UNIQUE INDEX IF NOT EXISTS i ON db.t (a) WAIT 10",
    "CREATE INDEX i ON t ((lower(a)))",
    "DROP INDEX i ON t",
    "DROP INDEX IF EXISTS i ON db.t ALGORITHM=INPLACE LOCK=NONE",
    "DROP ONLINE INDEX i ON t NOWAIT",
    "CREATE VIEW v AS SELECT 1",
    "CREATE OR REPLACE ALGORITHM=MERGE DEFINER=`root`@`localhost` SQL SECURITY INVOKER VIEW db.v (a, b) "
    "AS SELECT x, y FROM t WITH CASCADED CHECK OPTION",
    "CREATE DEFINER='root'@'%' VIEW v AS (SELECT 1) UNION (SELECT 2)",
    "CREATE DEFINER=CURRENT_USER() VIEW v AS WITH c AS (SELECT 1) SELECT * FROM c",
    "CREATE DEFINER=root@localhost VIEW IF NOT EXISTS v AS SELECT 1",
    "ALTER VIEW v AS SELECT 2",
    "ALTER ALGORITHM=UNDEFINED DEFINER=CURRENT_USER SQL SECURITY DEFINER VIEW v (c) AS SELECT 3",
    "DROP VIEW v",
    "DROP VIEW IF EXISTS v1, db.v2 CASCADE",
    "SET NAMES utf8mb4",
    "SET NAMES 'utf8' COLLATE 'utf8_general_ci'",
    "SET NAMES DEFAULT",
    "SET NAMES binary",
    "SET CHARACTER SET utf8",
    "SET CHARSET DEFAULT",
    "SET CHAR SET latin1",
    "SET character_set_client = utf8mb4",
    "SET SESSION character_set_results = NULL, collation_connection = utf8mb4_bin",
    "SET @@session.character_set_client = utf8",
    "SET @@character_set_client = @saved_cs_client",
    "SET GLOBAL character_set_server = 'latin1'",
    "SET @@global.collation_server := utf8mb4_general_ci",
    "SET PERSIST character_set_server = DEFAULT",
    "SET LOCAL collation_connection = @@collation_database",
]


@pytest.mark.parametrize("sql", ACCEPTED)
def test_statement_parses_with_sll_and_equals_ll(sql):
    assert tree_text(sql) == tree_text(sql, PredictionMode.LL)


REJECTED = [
    "CREATE TABLE select (a int)",          # reserved words need backquotes
    "CREATE TABLE t (key int)",
    "CREATE TABLE t (order int)",
    "CREATE TABLE t (a int",                # unbalanced
    "CREATE TABLE t (a int))",
    "CREATE TABLE t (a varchar(3) DEFAULT 'x)",
    "CREATE TABLE t (a unknowntype)",
    "ALTER TABLE t ADD",
    "DROP TABLE",
    "CREATE TABLE t (a int) ; CREATE TABLE u (b int)",  # one statement at a time
    "INSERT INTO t VALUES (1)",             # filtered upstream, not grammar
]


@pytest.mark.parametrize("sql", REJECTED)
def test_invalid_statement_is_rejected(sql):
    with pytest.raises(ParseCancellationException):
        parse(sql)
    # the LL fallback rejects it too
    lexer = MySqlLexer(InputStream(sql))
    lexer.removeErrorListeners()
    parser = P(CommonTokenStream(lexer))
    parser.removeErrorListeners()
    parser.ddlStatement()
    assert parser.getNumberOfSyntaxErrors() > 0


def test_string_options_right_after_a_type_belong_to_the_data_type():
    tree = parse("CREATE TABLE t (a VARCHAR(3) CHARACTER SET latin1 COLLATE latin1_bin NOT NULL COLLATE x)")
    dt = find(tree, P.CharacterTypeContext)[0]
    assert [o.getText() for o in dt.stringOption()] == ["CHARACTERSETlatin1", "COLLATElatin1_bin"]
    assert len(find(tree, P.CollateColumnAttributeContext)) == 1


def test_unique_key_is_one_attribute():
    tree = parse("CREATE TABLE t (a INT UNIQUE KEY NOT NULL)")
    assert len(find(tree, P.UniqueKeyColumnAttributeContext)) == 1
    assert not find(tree, P.PrimaryKeyColumnAttributeContext)


def test_on_update_after_references_is_a_column_attribute():
    tree = parse("CREATE TABLE t (a TIMESTAMP REFERENCES p (id) ON UPDATE CASCADE ON UPDATE CURRENT_TIMESTAMP)")
    assert len(find(tree, P.ReferenceActionContext)) == 1
    assert len(find(tree, P.OnUpdateColumnAttributeContext)) == 1


def test_type_name_tokens_are_collected():
    tree = parse("CREATE TABLE t (a NATIONAL CHARACTER VARYING(5), b DOUBLE PRECISION(10,2) UNSIGNED, c LONG VARBINARY)")
    names = [" ".join(t.text.upper() for t in dt.typeName) for dt in find(tree, P.DataTypeContext)]
    assert sorted(names) == ["DOUBLE PRECISION", "LONG VARBINARY", "NATIONAL CHARACTER VARYING"]
    ps = find(tree, P.PrecisionScaleContext)[0]
    assert (ps.precision.text, ps.scale.text) == ("10", "2")


def test_qualified_names_with_spaces_and_digits():
    tree = parse("CREATE TABLE db . 1abc (a int)")
    name = find(tree, P.TableNameContext)[0]
    assert name.identifier().getText() == "db" and name.dottedId().identifier().getText() == "1abc"
    tree = parse("CREATE TABLE db.select (a int)")  # any word after a dot (DOT_ID)
    assert find(tree, P.TableNameContext)[0].dottedId().DOT_ID().getText() == ".select"


def test_select_list_elements():
    tree = parse("CREATE TABLE t SELECT a, b c, s.d, COUNT(*) AS n, a + 1 x, t.*, db.t2.* FROM s")
    kinds = [type(e).__name__ for e in find(tree, P.SelectElementContext)]
    assert sorted(kinds) == sorted(["SelectColumnElementContext"] * 3 + ["SelectExpressionElementContext"] * 2
                                   + ["SelectStarElementContext"] * 2)


def test_expressions_are_kept_as_tokens_not_parsed():
    tree = parse("CREATE TABLE t (a INT DEFAULT (CASE WHEN 1 THEN (2) ELSE 3 END), "
                 "b INT AS (IF(a > 0, a, -a)) STORED, CHECK (a BETWEEN 1 AND 2))")
    assert len(find(tree, P.ExpressionDefaultContext)) == 1
    assert len(find(tree, P.GeneratedColumnAttributeContext)) == 1


def test_long_view_and_wide_table_parse_without_blow_up():
    """A long view and a wide table parse in bounded time (no expression grammar, SLL): the
    bound only catches an exponential prediction blow-up (minutes), with a generous margin for
    a loaded machine; parse speed is measured by benchmarks/parse_corpus.py, not here."""
    view = "CREATE VIEW v AS SELECT " + ", ".join(
        f"CASE WHEN a{i} > 0 THEN concat(b{i}, 'x', (SELECT max(c) FROM t WHERE d = e{i})) ELSE NULL END AS c{i}"
        for i in range(100)) + " FROM t1 JOIN t2 ON t1.a = t2.b WHERE x IN (1, 2, 3)"
    table = "CREATE TABLE t (" + ", ".join(
        f"c{i} varchar(20) CHARACTER SET utf8 COLLATE utf8_bin NOT NULL DEFAULT 'x' COMMENT 'c{i}'"
        for i in range(200)) + ", PRIMARY KEY (c0)) ENGINE=InnoDB DEFAULT CHARSET=utf8"
    for sql in (view, table):
        parse(sql)  # warm the caches
        t0 = time.perf_counter()
        parse(sql)
        took = time.perf_counter() - t0
        assert took < 20, f"{took:.3f}s for {len(sql)} characters"


def _lexer_keywords() -> tuple[list[str], list[str]]:
    """(reserved, non-reserved) keyword token names, read from the two sections of the lexer."""
    from pathlib import Path
    import re

    text = (Path(__file__).resolve().parents[2] / "grammars" / "mysql" / "MySqlLexer.g4").read_text()
    reserved_part = text.split("// reserved\n", 1)[1].split("// non-reserved", 1)[0]
    nonreserved_part = text.split("// non-reserved", 1)[1].split("// ----", 1)[0]
    rx = re.compile(r"^([A-Z_0-9]+)\s*:\s*'([A-Z_0-9]+)';", re.M)
    return [w for _, w in rx.findall(reserved_part)], [w for _, w in rx.findall(nonreserved_part)]


RESERVED, NON_RESERVED = _lexer_keywords()


def test_keyword_sections_are_complete():
    assert len(RESERVED) > 90 and len(NON_RESERVED) > 100
    rule = P.ruleNames.index("nonReservedKeyword")
    assert rule >= 0


@pytest.mark.parametrize("word", NON_RESERVED)
def test_non_reserved_keyword_is_an_identifier(word):
    parse(f"CREATE TABLE {word} ({word} int, {word.lower()}2 int, KEY {word} ({word}))")
    parse(f"ALTER TABLE {word}.{word} ADD COLUMN {word} int AFTER {word}, DROP {word}, MODIFY {word} int")


@pytest.mark.parametrize("word", RESERVED)
def test_reserved_word_needs_backquotes(word):
    with pytest.raises(ParseCancellationException):
        parse(f"CREATE TABLE t (a int, {word} int)")
    parse(f"CREATE TABLE t (a int, `{word}` int)")
    parse(f"CREATE TABLE db.{word} (a int)")  # any word after a dot
