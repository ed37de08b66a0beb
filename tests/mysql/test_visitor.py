"""MySqlDdlVisitor: parse trees → the table model.

The expectations below were read off a MariaDB 10.11 server (the same statements, then
``information_schema``); ``test_scripts_equal_mariadb`` replays the multi-statement scripts on a
real server and compares the whole model."""

from __future__ import annotations

import pytest

import ddlcore
from ddlcore import Database, DdlParseError, Tables
from ddlcore_mysql.visitor import MySqlDdlVisitor


def run(sql: str, tables: Tables | None = None, **options) -> Tables:
    parser = ddlcore.get_dialect("mysql").parser(**options)
    tables = tables if tables is not None else parser.new_tables()
    parser.parse(sql, tables, database=tables.current_database or "d")
    return tables


def table(sql: str, name: str = "t", **options):
    t = run(sql, **options).get(f"d.{name}")
    assert t is not None
    return t


def col(t, name):
    c = t.column(name)
    assert c is not None, name
    return c


# --------------------------------------------------------------------------- CREATE TABLE


def test_columns_types_and_keys():
    t = table("CREATE TABLE t (id int unsigned NOT NULL AUTO_INCREMENT, name varchar(20) DEFAULT 'x' "
              "COMMENT 'nm', status enum('a','b''c') NOT NULL, PRIMARY KEY (id), KEY ix (name), UNIQUE (status)) "
              "ENGINE=InnoDB DEFAULT CHARSET=latin1 COMMENT 'tbl'")
    assert t.column_names == ["id", "name", "status"]
    assert [c.ordinal_position for c in t.columns] == [1, 2, 3]
    assert t.primary_key == ("id",)
    assert (t.default_character_set_name, t.default_collation_name, t.comment) == ("latin1", "latin1_swedish_ci", "tbl")
    assert t.option("ENGINE") == "InnoDB"
    idc = col(t, "id")
    assert (idc.column_type, idc.unsigned, idc.auto_increment, idc.nullable) == ("int(10) unsigned", True, True, False)
    name = col(t, "name")
    assert (name.column_type, name.column_default, name.comment, name.character_set_name) == \
        ("varchar(20)", "'x'", "nm", "latin1")
    assert col(t, "status").enum_values == ("a", "b'c")
    assert [(ix.name, ix.kind, ix.columns) for ix in t.indexes] == [("ix", "INDEX", ("name",)), ("status", "UNIQUE", ("status",))]


def test_nullability_rules():
    t = table("CREATE TABLE t (a int auto_increment, b int, key(a), c timestamp, e varchar(3) not null, "
              "h int null primary key, i int unique key, g int as (b+1))")
    assert {c.name: c.nullable for c in t.columns} == {"a": False, "b": True, "c": True, "e": False,
                                                       "h": False, "i": True, "g": True}
    assert col(t, "c").column_default is None  # explicit_defaults_for_timestamp


def test_serial_type_and_attribute():
    t = table("CREATE TABLE t (k serial, j int serial default value)")
    k = col(t, "k")
    assert (k.column_type, k.nullable, k.auto_increment) == ("bigint(20) unsigned", False, True)
    assert (col(t, "j").nullable, col(t, "j").auto_increment) == (False, True)
    assert [(ix.name, ix.kind) for ix in t.indexes] == [("k", "UNIQUE"), ("j", "UNIQUE")]


def test_keyword_named_columns_and_quoted_names():
    t = table("CREATE TABLE `t` (`select` int, `date` date, status int, comment text, timestamp timestamp, "
              "text text, value int, data int, engine int, `a``b` int, 1abc int, \"dq\" int)")
    assert t.column_names == ["select", "date", "status", "comment", "timestamp", "text", "value", "data",
                              "engine", "a`b", "1abc", "dq"]
    assert col(t, "date").data_type == "date" and col(t, "timestamp").data_type == "timestamp"


def test_qualified_table_name_and_current_database():
    tables = run("CREATE TABLE db2 . x (a int); CREATE TABLE y (b int); USE db3; CREATE TABLE z (c int)")
    assert {str(t.id) for t in tables} == {"db2.x", "d.y", "db3.z"}


def test_charset_and_collation_placement():
    t = table("CREATE TABLE t (a varchar(10) CHARACTER SET latin1 COLLATE latin1_bin NOT NULL, "
              "b varchar(3) NOT NULL COLLATE utf8mb4_unicode_ci, c char(2) ASCII, d varchar(5) BINARY, "
              "e national char(3), f varchar(4) CHARSET binary, g text charset utf8) CHARSET utf8mb4")
    got = {c.name: (c.column_type, c.character_set_name, c.collation_name) for c in t.columns}
    assert got == {
        "a": ("varchar(10)", "latin1", "latin1_bin"),
        "b": ("varchar(3)", "utf8mb4", "utf8mb4_unicode_ci"),
        "c": ("char(2)", "latin1", "latin1_swedish_ci"),
        "d": ("varchar(5)", "utf8mb4", "utf8mb4_bin"),
        "e": ("char(3)", "utf8mb3", "utf8mb3_general_ci"),
        "f": ("varbinary(4)", None, None),
        "g": ("text", "utf8mb3", "utf8mb3_general_ci"),
    }


def test_table_collation_alone_sets_the_charset():
    t = table("CREATE TABLE t (x varchar(2)) COLLATE latin1_german1_ci")
    assert (t.default_character_set_name, t.default_collation_name) == ("latin1", "latin1_german1_ci")
    assert col(t, "x").collation_name == "latin1_german1_ci"


def test_database_default_charset_is_inherited():
    tables = run("CREATE DATABASE db2 CHARACTER SET latin1; CREATE TABLE db2.t (a varchar(3)); USE db2; "
                 "ALTER DATABASE db2 COLLATE latin1_german1_ci; CREATE TABLE t2 (a varchar(3)); "
                 "ALTER DATABASE CHARACTER SET utf8mb4; CREATE TABLE t3 (a varchar(3)) CHARSET DEFAULT")
    assert tables.databases["db2"] == Database("db2", "utf8mb4", "utf8mb4_general_ci")
    assert col(tables.get("db2.t"), "a").collation_name == "latin1_swedish_ci"
    assert col(tables.get("db2.t2"), "a").collation_name == "latin1_german1_ci"
    assert col(tables.get("db2.t3"), "a").collation_name == "utf8mb4_general_ci"


def test_server_charset_option_and_session_variable():
    t = table("CREATE TABLE t (a varchar(3))", character_set_server="latin1")
    assert col(t, "a").character_set_name == "latin1"
    tables = run("SET character_set_server = 'cp1251'; CREATE DATABASE e; CREATE TABLE e.t (a char(1))")
    assert tables.databases["e"].default_character_set_name == "cp1251"
    assert col(tables.get("e.t"), "a").collation_name == "cp1251_general_ci"


def test_defaults_are_rendered_as_the_catalog_does():
    t = table("CREATE TABLE t (a int unsigned default '5', b decimal(5,2) default '1.499', c char(3) default 'ab  ', "
              "e tinyint default 1.6, f year default 99, g bit(8) default 5, i varchar(5) default _utf8mb4'ab' 'cd', "
              "j varbinary(4) default 0x4142, k datetime(6) default '2020-1-2 3:4:5.5', l int default -5, "
              "m bool default true, n int default null, o int default (1+2), p varchar(36) default uuid(), "
              "q timestamp(3) not null default now(3) on update now(3), r datetime default current_timestamp "
              "on update current_timestamp, s varchar(10) default 'it''s', u decimal(3,1) default - 1, "
              "v decimal(65,30) default 1.5)")
    got = {c.name: c.column_default for c in t.columns}
    assert got == {"a": "5", "b": "1.50", "c": "'ab'", "e": "2", "f": "1999", "g": "b'101'", "i": "'abcd'",
                   "j": "'AB'", "k": "'2020-01-02 03:04:05.500000'", "l": "-5", "m": "1", "n": None,
                   "o": "(1+2)", "p": "uuid()", "q": "current_timestamp(3)", "r": "current_timestamp()",
                   "s": "'it''s'", "u": "-1.0",
                   "v": "1.5" + "0" * 29}  # DECIMAL(65,30): 30 decimals (more digits than the default context)
    assert col(t, "q").on_update == "current_timestamp(3)" and col(t, "r").on_update == "current_timestamp()"


def test_generated_invisible_srid_comment():
    t = table("CREATE TABLE t (a int, b int GENERATED ALWAYS AS (a + 1) VIRTUAL, c int AS (a*2) STORED, "
              "d int AS (a) PERSISTENT, e int INVISIBLE DEFAULT 1, g point NOT NULL SRID 4326, h int COMMENT '')")
    assert (col(t, "b").generation_expression, col(t, "b").generation_stored) == ("a + 1", False)
    assert col(t, "c").generation_stored is True and col(t, "d").generation_stored is True
    assert col(t, "e").invisible and col(t, "g").srid == 4326
    assert col(t, "h").comment is None


def test_constraints_and_foreign_keys():
    tables = run("CREATE TABLE p (id int primary key); "
                 "CREATE TABLE t (a int, b int references p(id), c int, d int check (d <> 0), "
                 "constraint fk foreign key (c) references p (id) on delete cascade on update set null, "
                 "check (c > 0), constraint u unique (a), unique (a), key (a, b(2)))")
    t = tables.get("d.t")
    assert [(f.name, f.columns, str(f.referenced_table), f.referenced_columns, f.on_delete, f.on_update)
            for f in t.foreign_keys] == [("t_ibfk_1", ("b",), "d.p", ("id",), None, None),
                                          ("fk", ("c",), "d.p", ("id",), "CASCADE", "SET NULL")]
    assert [(c.name, c.expression) for c in t.checks] == [("d", "d <> 0"), (None, "c > 0")]
    assert [(ix.name, ix.columns, ix.key_parts) for ix in t.indexes] == [
        ("u", ("a",), ("a",)), ("a", ("a",), ("a",)), ("a_2", ("a", "b"), ("a", "b(2)"))]


def test_mysql_flavor_ignores_inline_references():
    tables = run("CREATE TABLE t (b int references p(id))", flavor="mysql")
    assert tables.get("d.t").foreign_keys == ()


def test_create_table_like_and_or_replace_and_if_not_exists():
    tables = run("CREATE TABLE s (a int primary key, b int, foreign key (b) references s (a)) COMMENT 'c'; "
                 "CREATE TABLE t LIKE s; CREATE TABLE u (LIKE s); "
                 "CREATE TABLE IF NOT EXISTS t (z int); CREATE OR REPLACE TABLE u (q int)")
    t = tables.get("d.t")
    assert t.column_names == ["a", "b"] and t.primary_key == ("a",) and t.comment == "c"
    assert t.foreign_keys == ()
    assert tables.get("d.u").column_names == ["q"]


def test_temporary_tables_are_not_modelled():
    parser = ddlcore.get_dialect("mysql").parser()
    tables = parser.new_tables()
    res = parser.parse("CREATE TABLE x (a int); CREATE TEMPORARY TABLE x (b int); DROP TEMPORARY TABLE x", tables,
                       database="d")
    assert tables.get("d.x").column_names == ["a"]
    assert res.warnings == ["temporary table d.x is not modelled"]


def test_create_table_select_types_columns_from_known_tables():
    tables = run("CREATE TABLE s1 (id int primary key auto_increment, name varchar(20) not null default 'n', "
                 "v decimal(6,2) comment 'vv'); CREATE TABLE s2 (sid int, note text); "
                 "CREATE TABLE c1 SELECT s1.id, name AS nm, x.note FROM s1 JOIN s2 AS x ON x.sid = s1.id; "
                 "CREATE TABLE c2 (extra int, name varchar(5), PRIMARY KEY (id)) SELECT * FROM s1; "
                 "CREATE TABLE c3 AS SELECT s.* FROM d.s1 s")
    c1 = tables.get("d.c1")
    assert c1.column_names == ["id", "nm", "note"]
    assert (col(c1, "id").auto_increment, col(c1, "id").column_default, col(c1, "id").nullable) == (False, "0", False)
    assert col(c1, "nm").column_default == "'n'" and col(c1, "note").data_type == "text"
    c2 = tables.get("d.c2")
    assert c2.column_names == ["extra", "id", "name", "v"]  # a defined column takes the select's position
    assert col(c2, "name").column_type == "varchar(5)" and c2.primary_key == ("id",)
    assert tables.get("d.c3").column_names == ["id", "name", "v"]


def test_create_table_select_expression_is_left_out_with_a_warning():
    parser = ddlcore.get_dialect("mysql").parser()
    tables = parser.new_tables()
    res = parser.parse("CREATE TABLE s (a int); CREATE TABLE t SELECT a, a + 1 AS b, COUNT(*) FROM s", tables, database="d")
    assert tables.get("d.t").column_names == ["a"]
    assert len(res.warnings) == 2


# --------------------------------------------------------------------------- ALTER TABLE


BASE = "CREATE TABLE t (a int, b int, c int, primary key (b, a), unique key uk (c), index (a), index (a), c2 text);"


def test_alter_add_drop_modify_change_rename_columns():
    t = table(BASE + "ALTER TABLE t ADD COLUMN d int FIRST, ADD e int AFTER b, MODIFY a varchar(3) CHARACTER SET latin1, "
              "DROP INDEX a_2; ALTER TABLE t CHANGE c cc bigint not null; ALTER TABLE t RENAME COLUMN b TO bb; "
              "ALTER TABLE t DROP c2, ADD (f int, g varchar(3)), ADD COLUMN IF NOT EXISTS f int, "
              "DROP COLUMN IF EXISTS zz, MODIFY IF EXISTS yy int")
    assert t.column_names == ["d", "a", "bb", "e", "cc", "f", "g"]
    assert col(t, "a").column_type == "varchar(3)" and col(t, "a").character_set_name == "latin1"
    assert col(t, "a").nullable is False  # still a primary-key column
    assert t.primary_key == ("bb", "a")
    assert [(ix.name, ix.columns) for ix in t.indexes] == [("uk", ("cc",)), ("a", ("a",))]
    assert col(t, "cc").column_type == "bigint(20)" and not col(t, "cc").nullable


def test_alter_moves_columns_and_keys():
    t = table(BASE + "ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (c); ALTER TABLE t MODIFY c int FIRST, "
              "MODIFY b bigint AFTER c2; ALTER TABLE t RENAME INDEX uk TO uk2, DROP KEY a")
    assert t.column_names == ["c", "a", "c2", "b"]
    assert t.primary_key == ("c",)
    assert [ix.name for ix in t.indexes] == ["uk2", "a_2"]


def test_alter_column_defaults():
    t = table("CREATE TABLE t (a int default 1, b int, c varchar(3)); "
              "ALTER TABLE t ALTER COLUMN a DROP DEFAULT, ALTER b SET DEFAULT 7, ALTER c SET DEFAULT (concat('x', 'y'))")
    assert [c.column_default for c in t.columns] == [None, "7", "(concat('x', 'y'))"]


def test_alter_table_options_apply_before_new_columns():
    t = table("CREATE TABLE t (a varchar(3)) CHARSET utf8mb4; "
              "ALTER TABLE t ADD c varchar(3), CHARACTER SET latin1, COMMENT 'hello', ENGINE=MyISAM")
    assert [x.character_set_name for x in t.columns] == ["utf8mb4", "latin1"]
    assert (t.default_character_set_name, t.comment, t.option("ENGINE")) == ("latin1", "hello", "MyISAM")


def test_alter_convert_to_character_set():
    t = table("CREATE TABLE t (id int, name varchar(10), t text, tt tinytext, e enum('a')) CHARSET latin1; "
              "ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4")
    got = {c.name: (c.column_type, c.character_set_name, c.collation_name) for c in t.columns}
    assert got == {"id": ("int(11)", None, None), "name": ("varchar(10)", "utf8mb4", "utf8mb4_general_ci"),
                   "t": ("mediumtext", "utf8mb4", "utf8mb4_general_ci"),
                   "tt": ("text", "utf8mb4", "utf8mb4_general_ci"), "e": ("enum('a')", "utf8mb4", "utf8mb4_general_ci")}
    assert (t.default_character_set_name, t.default_collation_name) == ("utf8mb4", "utf8mb4_general_ci")
    t = table("CREATE TABLE t (a char(1)); ALTER TABLE t CONVERT TO CHARSET utf8 COLLATE utf8_bin")
    assert col(t, "a").collation_name == "utf8mb3_bin"


def test_alter_constraints():
    tables = run("CREATE TABLE p (id int primary key); CREATE TABLE t (a int, b int, constraint fk foreign key (a) "
                 "references p (id), constraint ck check (b > 0), constraint uq unique (b)); "
                 "ALTER TABLE t DROP FOREIGN KEY fk, DROP CONSTRAINT ck; ALTER TABLE t DROP CONSTRAINT uq; "
                 "ALTER TABLE t ADD CONSTRAINT ck2 CHECK (a <> b), ADD FOREIGN KEY (b) REFERENCES p (id), "
                 "ADD FULLTEXT INDEX ft (a), ADD UNIQUE KEY (a)")
    t = tables.get("d.t")
    assert [c.name for c in t.checks] == ["ck2"]
    assert [f.name for f in t.foreign_keys] == ["t_ibfk_1"]
    assert [(ix.name, ix.kind) for ix in t.indexes] == [("ft", "FULLTEXT"), ("a", "UNIQUE")]


def test_alter_rename_table_and_partitioning_and_no_ops():
    tables = run("CREATE TABLE t (a int); ALTER TABLE t ALGORITHM=INPLACE, LOCK=NONE, FORCE, ORDER BY a; "
                 "ALTER TABLE t PARTITION BY HASH(a) PARTITIONS 4; ALTER TABLE t ADD PARTITION (PARTITION p9); "
                 "ALTER TABLE t RENAME TO db2.u")
    assert tables.get("d.t") is None
    assert tables.get("db2.u").column_names == ["a"]


def test_alter_unknown_table_is_a_warning_and_unknown_column_an_error():
    parser = ddlcore.get_dialect("mysql").parser()
    res = parser.parse("ALTER TABLE nope ADD c int", parser.new_tables(), database="d")
    assert res.statements[0].status == "applied" and res.warnings
    with pytest.raises(DdlParseError) as info:
        parser.parse("CREATE TABLE t (a int); ALTER TABLE t MODIFY zz int", parser.new_tables(), database="d")
    assert "zz" in str(info.value)


# --------------------------------------------------------------------------- other statements


def test_rename_swap_drop_truncate():
    parser = ddlcore.get_dialect("mysql").parser()
    tables = parser.new_tables()
    res = parser.parse("CREATE TABLE a (x int); CREATE TABLE b (y int); RENAME TABLE a TO tmp, b TO a, tmp TO b; "
                       "TRUNCATE TABLE a; DROP TABLE IF EXISTS b, nope", tables, database="d")
    assert tables.get("d.a").column_names == ["y"] and tables.get("d.b") is None
    assert [c.kind for c in res.statements[3].changes] == ["truncate"]
    assert [c.kind for c in res.statements[4].changes] == ["drop"]


def test_create_and_drop_index():
    t = table("CREATE TABLE t (a int, b varchar(9)); CREATE UNIQUE INDEX ua USING BTREE ON t (a) COMMENT 'x'; "
              "CREATE INDEX ib ON t (b(3) DESC); CREATE INDEX IF NOT EXISTS ib ON t (a); DROP INDEX ua ON t")
    assert [(ix.name, ix.kind, ix.key_parts) for ix in t.indexes] == [("ib", "INDEX", ("b(3) DESC",))]


def test_views_and_databases():
    tables = run("CREATE DATABASE IF NOT EXISTS shop DEFAULT CHARACTER SET utf8 COMMENT 'x'; USE shop; "
                 "CREATE OR REPLACE ALGORITHM=MERGE DEFINER=`root`@`%` SQL SECURITY INVOKER VIEW v (a, b) AS "
                 "SELECT 1, 2; ALTER VIEW w AS SELECT 3; DROP VIEW IF EXISTS w")
    assert tables.databases["shop"] == Database("shop", "utf8mb3", "utf8mb3_general_ci", "x")
    assert tables.current_database == "shop"
    [view] = tables.views.values()
    assert (str(view.id), view.definition, view.column_names) == ("shop.v", "SELECT 1, 2", ("a", "b"))
    tables = run("CREATE DATABASE z; CREATE TABLE z.t (a int); DROP DATABASE z")
    assert "z" not in tables.databases and tables.get("z.t") is None


def test_set_charset_statements_record_session_variables():
    tables = run("SET NAMES utf8 COLLATE utf8_bin; SET @@session.character_set_results = latin1, "
                 "collation_server := 'utf8mb4_bin'; SET character_set_client = @saved_cs_client")
    assert tables.session == {"character_set_client": "utf8mb3", "character_set_connection": "utf8mb3",
                              "character_set_results": "latin1", "collation_connection": "utf8mb3_bin",
                              "collation_server": "utf8mb4_bin"}
    tables = run("SET CHARACTER SET latin1; SET character_set_results = DEFAULT")
    assert tables.session == {"character_set_client": "latin1"}


def test_unknown_data_type_is_a_parse_error():
    with pytest.raises(DdlParseError):
        run("CREATE TABLE t (a notatype)")


# --------------------------------------------------------------------------- customising


def test_subclass_overrides_one_data_type_family():
    class Widen(MySqlDdlVisitor):
        def visitIntegerType(self, ctx):
            spec = super().visitIntegerType(ctx)
            spec.name = "BIGINT"
            return spec

    parser = ddlcore.get_dialect("mysql").parser(visitor_class=Widen)
    t = parser.parse("CREATE TABLE t (a int, b varchar(3))", parser.new_tables(), database="d").tables.get("d.t")
    assert [c.data_type for c in t.columns] == ["bigint", "varchar"]


def test_subclass_overrides_visit_data_type():
    class AllUnsigned(MySqlDdlVisitor):
        def visitDataType(self, ctx):
            spec = super().visitDataType(ctx)
            if spec.name in ("INT", "BIGINT"):
                spec.unsigned = True
            return spec

    parser = ddlcore.get_dialect("mysql").parser(visitor_class=AllUnsigned)
    t = parser.parse("CREATE TABLE t (a int, b bigint(20), c char)", parser.new_tables(), database="d").tables.get("d.t")
    assert [c.column_type for c in t.columns] == ["int(10) unsigned", "bigint(20) unsigned", "char(1)"]


# --------------------------------------------------------------------------- against MariaDB

SCRIPTS = {
    "keys_and_nullability": """
        CREATE TABLE a1 (id int auto_increment, b int, key(id), c timestamp, d int unique,
          e varchar(3) default 'x' not null collate utf8mb4_bin, f int, g int as (f+1), h int null primary key,
          i int unique key);
        CREATE TABLE a1c (k serial, v int);
        CREATE TABLE a17 (a int not null, b varchar(5) not null, unique key (b), key (a, b(2)));
        ALTER TABLE a17 ADD PRIMARY KEY (a, b);
        ALTER TABLE a17 DROP PRIMARY KEY;
        ALTER TABLE a17 MODIFY a int NULL;
        CREATE TABLE a19 (a int primary key);
        ALTER TABLE a19 MODIFY a bigint;
        ALTER TABLE a19 DROP PRIMARY KEY, ADD b int;
    """,
    "alter_sequence": """
        CREATE TABLE a4 (a int, b int, c int, primary key (b, a), unique key uk (c), index (a), index (a),
          fulltext (c2), c2 text) ENGINE=MyISAM;
        ALTER TABLE a4 DROP PRIMARY KEY, ADD PRIMARY KEY (c), DROP INDEX a_2, ADD COLUMN d int FIRST,
          ADD e int AFTER b, MODIFY a varchar(3) CHARACTER SET latin1;
        ALTER TABLE a4 CHANGE c cc bigint not null;
        ALTER TABLE a4 RENAME COLUMN b TO bb;
        ALTER TABLE a4 ALTER COLUMN bb SET DEFAULT 7, ALTER d SET DEFAULT (1+1), ALTER e DROP DEFAULT;
        ALTER TABLE a4 CHARACTER SET latin1, ADD f varchar(3), COMMENT 'hello';
        ALTER TABLE a4 CONVERT TO CHARACTER SET utf8 COLLATE utf8_bin;
        ALTER TABLE a4 MODIFY cc int FIRST, MODIFY bb bigint AFTER f;
        CREATE TABLE a20 (id int, name varchar(10)) ENGINE=InnoDB DEFAULT CHARSET=latin1;
        ALTER TABLE a20 CONVERT TO CHARACTER SET utf8mb4, ADD COLUMN x text;
        ALTER TABLE a20 DEFAULT CHARSET utf8mb3, ADD y tinytext, MODIFY name varchar(10);
        CREATE TABLE a21 (t text, tt tinytext, e enum('a'), s set('b')) CHARSET latin1;
        ALTER TABLE a21 CONVERT TO CHARSET utf8mb4;
        CREATE TABLE a22 (a int) COMMENT='x';
        ALTER TABLE a22 COMMENT '';
        CREATE TABLE a15 (a int invisible default 1, b int, c char(0), d varchar(0), e timestamp null,
          f timestamp not null default '2020-01-01 00:00:00');
        ALTER TABLE a15 ADD (g int, h varchar(3)), ADD COLUMN IF NOT EXISTS b int, DROP COLUMN IF EXISTS zz,
          MODIFY IF EXISTS yy int;
        CREATE OR REPLACE TABLE a16 (q int);
        CREATE OR REPLACE TABLE a16 (r int);
    """,
    "types_and_defaults": """
        CREATE TABLE a23 (a varchar(5) binary, b char(3) charset latin1 collate latin1_bin,
          c varchar(3) collate utf8mb4_unicode_ci, d national char(3), e nvarchar(4), f varchar(5) CHARSET binary,
          g text(100), h blob(70000), i long, j long varbinary, k enum('x','y''z') default 'x',
          l set('a','b') default 'a,b', m bit(3) default b'101', n year, o json, p float(30));
        CREATE TABLE a24 (a int unsigned default '5', b decimal(5,2) default '1.499', c char(3) default 'ab  ',
          d float(7,3) default 3.14159, e tinyint default 1.6, f year default 99, g bit(8) default 5,
          h double default 1e20, i float default 0.1, j datetime(6) default '2020-1-2 3:4:5.5',
          k time default '1:2', l date default '2020-01-02', m int zerofill default 5,
          n varchar(20) default _utf8mb4'ab' 'cd', o varbinary(4) default 0x4142, p binary(2) default X'4142',
          q decimal(65,30) default 1.5, r decimal(65,0) default -123);
        CREATE TABLE a25 (a int default (1+2), b varchar(36) default (uuid()),
          c datetime default current_timestamp on update current_timestamp,
          d timestamp(3) not null default now(3) on update now(3), e date default curdate(),
          f varchar(10) default 'it''s', g varchar(10) default 'a\\nb', h text default 'zz', i int default -5,
          j float default 1e3, k double default -0.0);
        CREATE TABLE a26 (a varchar(10) NOT NULL DEFAULT '' COLLATE latin1_bin, b varchar(3) CHARACTER SET ascii
          COMMENT 'c', c tinytext NOT NULL, e inet6 default '::1', f uuid, g point not null, h geometry);
    """,
    "create_select_and_renames": """
        CREATE TABLE s1 (id int primary key auto_increment, name varchar(20) not null default 'n',
          v decimal(6,2) comment 'vv');
        CREATE TABLE s2 (sid int, note text);
        CREATE TABLE c1 SELECT s1.id, name AS nm, x.note FROM s1 JOIN s2 AS x ON x.sid = s1.id WHERE 1=0;
        CREATE TABLE c2 (extra int, name varchar(5)) SELECT * FROM s1;
        CREATE TABLE c3 AS SELECT s.* FROM s1 s;
        CREATE TABLE c5 (PRIMARY KEY (sid), KEY (note(10))) SELECT sid, note FROM s2;
        CREATE TABLE c6 (note varchar(300), KEY kn (note)) SELECT note, sid FROM s2;
        RENAME TABLE s1 TO tmp, s2 TO s1, tmp TO s2;
        CREATE TABLE l1 LIKE s2;
        CREATE TABLE x1 (a int);
        DROP TABLE IF EXISTS x1, nonexistent;
        TRUNCATE TABLE l1;
    """,
}


@pytest.mark.mariadb
@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_scripts_equal_mariadb(mariadb_db, name):
    from ddlcore.cli import model_json
    from tests.servers.model_diff import diff_models
    from tests.servers.catalog import catalog_model, split_script

    parser = ddlcore.get_dialect("mysql").parser()
    tables = parser.new_tables()
    tables.current_database = mariadb_db.name
    tables.databases[mariadb_db.name] = Database(mariadb_db.name, "utf8mb4", "utf8mb4_general_ci")
    conn = mariadb_db.connect()
    with conn.cursor() as cur:
        cur.execute(f"ALTER DATABASE `{mariadb_db.name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci")
        for st in split_script(SCRIPTS[name]):
            cur.execute(st.sql)  # every statement of a script must be one the server accepts
            parser.apply(st.sql, tables)
    theirs = catalog_model(mariadb_db.connect(), [mariadb_db.name])
    problems = diff_models(model_json(tables), theirs)
    assert not problems, "\n".join(problems)
