"""The TiDB flavor of the MySQL dialect (``flavor="tidb"``).

Each case names the TiDB manual section that describes the behaviour.  The same statements
under ``flavor="mysql"`` / ``"mariadb"`` show the guard: TiDB syntax outside an executable
comment is a ``DdlParseError`` there, and ``/*T! */`` comments stay comments.
"""

from __future__ import annotations

import pytest

import ddlcore
from ddlcore import DdlParseError
from ddlcore.splitter import SplitRules, split_statements


def parse(sql: str, flavor: str = "tidb", **options):
    parser = ddlcore.get_dialect("mysql").parser(flavor=flavor, **options)
    tables = parser.new_tables()
    results = parser.parse(sql, tables, database="shop")
    return tables, results


def table(sql: str, name: str = "shop.t", flavor: str = "tidb"):
    tables, _ = parse("CREATE DATABASE IF NOT EXISTS shop;\n" + sql, flavor)
    t = tables.get(name)
    assert t is not None, name
    return t


# ------------------------------------------------------------------ executable comments
# TiDB manual "Comment Syntax", "TiDB-specific comment syntax"

def test_tidb_comments_run_only_under_tidb():
    sql = "CREATE TABLE t (id bigint /*T![auto_rand] AUTO_RANDOM(3) */ PRIMARY KEY, a int) /*T! SHARD_ROW_ID_BITS=4 */"
    tidb = table(sql)
    assert dict(tidb.options)["AUTO_RANDOM"] == "id(3,64)"
    assert dict(tidb.options)["SHARD_ROW_ID_BITS"] == "4"
    for flavor in ("mysql", "mariadb"):
        other = table(sql, flavor=flavor)
        assert "AUTO_RANDOM" not in dict(other.options)
        assert "SHARD_ROW_ID_BITS" not in dict(other.options)
        assert [c.name for c in other.columns] == ["id", "a"]


def test_unknown_feature_id_is_not_run():
    # a feature this TiDB does not know is a comment (the manual's v3.0.0 / auto_rand example)
    t = table("CREATE TABLE t (id int PRIMARY KEY) /*T![no_such_feature] NO_SUCH_OPTION=1 */ /*T![ttl,placement] PLACEMENT POLICY=p */")
    assert dict(t.options) == {"PLACEMENT POLICY": "p"}


def test_tidb_runs_every_mysql_versioned_comment():
    # TiDB manual "Comment Syntax": "in TiDB, the MySQL version number does not work and all
    # contents in the comment are processed"
    text = "CREATE TABLE t (a int) /*!99999 COMMENT='x' */"
    tidb = [s.text for s in split_statements(text, SplitRules(tidb=True, mariadb=False, server_version=80011))]
    mysql = [s.text for s in split_statements(text, SplitRules(mariadb=False, server_version=80011))]
    assert "/*!99999" not in tidb[0] and "COMMENT='x'" in tidb[0]
    assert "/*!99999" in mysql[0]  # not run: stays a comment
    assert table(text).comment == "x"


def test_marker_blanking_keeps_offsets():
    text = "CREATE TABLE t (a int) /*T![ttl] TTL_ENABLE='OFF' */"
    [stmt] = split_statements(text, SplitRules(tidb=True, mariadb=False))
    assert stmt.text.rstrip() == stmt.text  # the closing marker became trailing blanks, trimmed
    assert stmt.text.index("TTL_ENABLE") == text.index("TTL_ENABLE")


# ------------------------------------------------------------------ AUTO_RANDOM
# TiDB manual "AUTO_RANDOM"

@pytest.mark.parametrize("attr, expected", [
    ("AUTO_RANDOM", "id(5,64)"), ("AUTO_RANDOM(3)", "id(3,64)"), ("AUTO_RANDOM(5, 54)", "id(5,54)"),
])
def test_auto_random(attr, expected):
    t = table(f"CREATE TABLE t (id bigint {attr} PRIMARY KEY, v varchar(8))")
    assert dict(t.options)["AUTO_RANDOM"] == expected
    assert t.primary_key == ("id",)
    assert t.columns[0].column_type == "bigint" and not t.columns[0].nullable
    assert not t.columns[0].auto_increment


def test_auto_random_out_of_range():
    with pytest.raises(DdlParseError) as exc:
        parse("CREATE TABLE t (id bigint AUTO_RANDOM(16) PRIMARY KEY)")
    assert "shard bits" in str(exc.value)


@pytest.mark.parametrize("flavor", ["mysql", "mariadb"])
def test_tidb_syntax_rejected_by_other_flavors(flavor):
    for sql in ("CREATE TABLE t (id bigint AUTO_RANDOM PRIMARY KEY)",
                "CREATE TABLE t (id int, PRIMARY KEY (id) CLUSTERED)",
                "CREATE TABLE t (id int PRIMARY KEY NONCLUSTERED)",
                "CREATE TABLE t (id int) PLACEMENT POLICY = p1",
                "CREATE TABLE t (id int, c datetime) TTL = c + INTERVAL 1 DAY"):
        with pytest.raises(DdlParseError) as exc:
            parse(sql, flavor)
        assert "TiDB syntax" in str(exc.value)


# ------------------------------------------------------------------ clustered indexes
# TiDB manual "Clustered Indexes"

def test_clustered_and_nonclustered_primary_keys():
    t = table("CREATE TABLE t (a int, b varchar(10), PRIMARY KEY (a, b) /*T![clustered_index] CLUSTERED */)")
    assert t.primary_key == ("a", "b") and dict(t.options)["TIDB_PK_TYPE"] == "CLUSTERED"
    u = table("CREATE TABLE u (k varchar(5) PRIMARY KEY NONCLUSTERED, v int)", "shop.u")
    assert u.primary_key == ("k",) and dict(u.options)["TIDB_PK_TYPE"] == "NONCLUSTERED"
    tables, _ = parse("CREATE TABLE v (a int NOT NULL); ALTER TABLE v ADD PRIMARY KEY (a) NONCLUSTERED")
    assert dict(tables.get("shop.v").options)["TIDB_PK_TYPE"] == "NONCLUSTERED"
    # not stated: TiDB's default (tidb_enable_clustered_index) decides; the model says nothing
    assert "TIDB_PK_TYPE" not in dict(table("CREATE TABLE w (a int PRIMARY KEY)", "shop.w").options)


# ------------------------------------------------------------------ table options
# TiDB manual "SHARD_ROW_ID_BITS", "Split Region" (PRE_SPLIT_REGIONS), "AUTO_ID_CACHE",
# "Placement Rules in SQL", "Periodically Delete Data Using TTL (Time to Live)"

def test_tidb_table_options_kept():
    t = table("CREATE TABLE t (id int, created datetime) SHARD_ROW_ID_BITS=4 PRE_SPLIT_REGIONS=2 "
              "AUTO_ID_CACHE 1 PLACEMENT POLICY=`p1` TTL = `created` + INTERVAL '3' MONTH "
              "TTL_ENABLE = 'OFF' TTL_JOB_INTERVAL = '1h'")
    assert dict(t.options) == {"SHARD_ROW_ID_BITS": "4", "PRE_SPLIT_REGIONS": "2", "AUTO_ID_CACHE": "1",
                               "PLACEMENT POLICY": "p1", "TTL": "created + INTERVAL 3 MONTH",
                               "TTL_ENABLE": "OFF", "TTL_JOB_INTERVAL": "1h"}


def test_alter_ttl_placement_and_tiflash():
    tables, results = parse(
        "CREATE TABLE t (id int, c datetime) TTL = c + INTERVAL 1 DAY PLACEMENT POLICY p1;\n"
        "ALTER TABLE t TTL_ENABLE = 'OFF';\n"
        "ALTER TABLE t SET TIFLASH REPLICA 2 LOCATION LABELS 'zone', 'host';\n"
        "ALTER TABLE t PLACEMENT POLICY = DEFAULT;\n"
        "ALTER TABLE t REMOVE TTL;\n")
    assert [r.status for r in results] == ["applied"] * 5
    assert dict(tables.get("shop.t").options) == {}


def test_placement_policy_statements_and_database_option():
    tables, results = parse(
        "CREATE PLACEMENT POLICY p1 PRIMARY_REGION=\"us-east-1\" REGIONS=\"us-east-1,us-west-1\";\n"
        "ALTER DATABASE shop PLACEMENT POLICY = p1;\n"
        "CREATE TABLE t (a int);\n"
        "DROP PLACEMENT POLICY p1;\n"
        "ADMIN CHECK TABLE t;\n"
        "SPLIT TABLE t BETWEEN (0) AND (100) REGIONS 4;\n")
    assert [r.status for r in results] == ["skipped", "applied", "applied", "skipped", "skipped", "skipped"]


# ------------------------------------------------------------------ rendering
# TiDB manual "Character Set and Collation" (SHOW CHARACTER SET: binary default collations);
# "Data Type Overview" (integer display width deprecated since v8.5.0)

def test_default_collations_and_column_type():
    t = table("CREATE TABLE t (a int(11), b bigint(20) unsigned, c tinyint(1), d int(4) zerofill, y year, "
              "j json, s varchar(10), l text CHARACTER SET latin1, x char(2) CHARACTER SET ascii, "
              "e enum('a','b'), f decimal(10,2), g datetime(6))")
    cols = {c.name: c for c in t.columns}
    assert [cols[n].column_type for n in "abcdyj"] == [
        "int", "bigint unsigned", "tinyint(1)", "int(4) unsigned zerofill", "year", "json"]
    assert t.default_collation_name == "utf8mb4_bin"
    assert (cols["s"].character_set_name, cols["s"].collation_name) == ("utf8mb4", "utf8mb4_bin")
    assert cols["l"].collation_name == "latin1_bin"
    assert cols["x"].collation_name == "ascii_bin"
    assert cols["e"].collation_name == "utf8mb4_bin"
    assert cols["j"].data_type == "json" and cols["j"].collation_name is None
    assert table("CREATE TABLE t (s varchar(3)) CHARSET latin1").default_collation_name == "latin1_bin"
    # an explicit collation wins
    assert table("CREATE TABLE t (s varchar(3) COLLATE utf8mb4_general_ci)").columns[0].collation_name == "utf8mb4_general_ci"


def test_tidb_keywords_stay_identifiers():
    t = table("CREATE TABLE t (ttl int, placement int, policy int, clustered int, nonclustered int, auto_random int)")
    assert [c.name for c in t.columns] == ["ttl", "placement", "policy", "clustered", "nonclustered", "auto_random"]
    m = table("CREATE TABLE t (ttl int, clustered int)", flavor="mariadb")
    assert [c.name for c in m.columns] == ["ttl", "clustered"]


def test_show_create_table_of_tidb_round_trips():
    # what TiDB v8's SHOW CREATE TABLE prints for such a table (TiDB manual "AUTO_RANDOM",
    # "Clustered Indexes", "Placement Rules in SQL", "TTL" examples)
    ddl = ("CREATE TABLE `t` (\n"
           "  `id` bigint NOT NULL /*T![auto_rand] AUTO_RANDOM(5, 54) */,\n"
           "  `created_at` datetime DEFAULT NULL,\n"
           "  PRIMARY KEY (`id`) /*T![clustered_index] CLUSTERED */\n"
           ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin "
           "/*T![auto_rand_base] AUTO_RANDOM_BASE=30001 */ /*T![placement] PLACEMENT POLICY=`p1` */ "
           "/*T![ttl] TTL=`created_at` + INTERVAL 3 MONTH */ /*T![ttl] TTL_ENABLE='ON' */ "
           "/*T![ttl] TTL_JOB_INTERVAL='1h' */")
    t = table(ddl)
    assert dict(t.options) == {"ENGINE": "InnoDB", "AUTO_RANDOM_BASE": "30001", "PLACEMENT POLICY": "p1",
                               "TTL": "created_at + INTERVAL 3 MONTH", "TTL_ENABLE": "ON",
                               "TTL_JOB_INTERVAL": "1h", "AUTO_RANDOM": "id(5,54)", "TIDB_PK_TYPE": "CLUSTERED"}
    assert [c.column_type for c in t.columns] == ["bigint", "datetime"]


# TiDB manual "AUTO_INCREMENT" (FORCE), "Cached Tables", "Partitioned Tables" (global indexes)

def test_force_auto_increment_cache_and_global_index():
    tables, results = parse(
        "CREATE TABLE t (id int PRIMARY KEY, a int, UNIQUE KEY ua (a) /*T![global_index] GLOBAL */) "
        "PARTITION BY HASH (id) PARTITIONS 4;\n"
        "ALTER TABLE t /*T![force_inc] FORCE */ AUTO_INCREMENT = 100;\n"
        "ALTER TABLE t CACHE;\n"
        "ALTER TABLE t NOCACHE;\n")
    assert [r.status for r in results] == ["applied"] * 4
    t = tables.get("shop.t")
    assert dict(t.options)["AUTO_INCREMENT"] == "100"
    assert [ix.name for ix in t.indexes] == ["ua"]
    with pytest.raises(DdlParseError, match="unknown ALTER TABLE specification 'frobnicate'"):
        parse("CREATE TABLE u (a int); ALTER TABLE u frobnicate")
    for sql in ("CREATE TABLE u (a int); ALTER TABLE u CACHE",
                "CREATE TABLE u (a int); ALTER TABLE u FORCE AUTO_INCREMENT = 5",
                "CREATE TABLE u (a int, KEY k (a) GLOBAL)"):
        with pytest.raises(DdlParseError, match="TiDB syntax"):
            parse(sql, "mysql")
    # MySQL's own ALTER TABLE t FORCE (a rebuild) is unchanged
    _, results = parse("CREATE TABLE u (a int); ALTER TABLE u FORCE", "mysql")
    assert [r.status for r in results] == ["applied", "applied"]


# ------------------------------------------------------------------ property: executable comments
# TiDB manual "Comment Syntax": TiDB runs /*T! */ and /*T![id] */ (known ids); MySQL ignores
# them.  A statement whose TiDB clauses are wrapped at random must give, under tidb, the model
# of the statement with the clauses written bare, and under mysql the model of the statement
# without the wrapped clauses.

from hypothesis import given, strategies as st  # noqa: E402

#: feature id → a table clause TiDB writes inside an executable comment ({n}: a number)
_TABLE_CLAUSES = {
    "pre_split": "PRE_SPLIT_REGIONS={n}",
    "placement": "PLACEMENT POLICY=`p{n}`",
    "ttl": "TTL=`c` + INTERVAL {n} DAY",
    "auto_id_cache": "AUTO_ID_CACHE={n}",
    "auto_rand_base": "AUTO_RANDOM_BASE={n}00",
    "": "SHARD_ROW_ID_BITS={n}",
}


@st.composite
def tidb_statements(draw):
    """``[(text, wrapper or None)]`` pieces of one CREATE TABLE: a wrapper is the opening of
    an executable comment (``/*T! `` or ``/*T![id] ``)."""
    n = draw(st.integers(1, 5))
    space = draw(st.sampled_from([" ", "  ", "\n  "]))

    def wrapper(feature: str):
        how = draw(st.sampled_from(["bare", "plain", "feature"]))
        if how == "bare":
            return None
        return "/*T! " if how == "plain" or not feature else f"/*T![{feature}] "

    pieces = [("CREATE TABLE `t` (" + space + "`id` bigint NOT NULL", None)]
    if draw(st.booleans()):
        pieces.append((f"AUTO_RANDOM({n})", wrapper("auto_rand")))
    pieces.append(("," + space + "`c` datetime," + space + "PRIMARY KEY (`id`)", None))
    if draw(st.booleans()):
        pieces.append((draw(st.sampled_from(["CLUSTERED", "NONCLUSTERED", "clustered"])), wrapper("clustered_index")))
    pieces.append((")" + space + "ENGINE=InnoDB", None))
    for feature in draw(st.lists(st.sampled_from(sorted(_TABLE_CLAUSES)), unique=True)):
        pieces.append((_TABLE_CLAUSES[feature].format(n=n), wrapper(feature)))
    return pieces


def _model(sql: str, flavor: str):
    tables, _ = parse(sql, flavor)
    return tables.get("shop.t").to_json()


@given(tidb_statements())
def test_wrapped_tidb_clauses_parse_as_bare_ones(pieces):
    wrapped = " ".join(text if w is None else f"{w}{text} */" for text, w in pieces)
    bare = " ".join(text for text, _ in pieces)
    assert _model(wrapped, "tidb") == _model(bare, "tidb")
    if all(w is not None for text, w in pieces[1:] if not text.startswith((",", ")"))):
        mysql_view = " ".join(text for text, w in pieces if w is None)
        assert _model(wrapped, "mysql") == _model(mysql_view, "mysql")
