"""The MySQL type catalogue against facts read off a MariaDB 10.11.19 server.

Each row: the type as written, then (data_type, column_type, character_maximum_length,
numeric_precision, numeric_scale, datetime_precision, character_set_name, collation_name)
exactly as ``information_schema.COLUMNS`` reported them for a utf8mb4 table."""

from __future__ import annotations

import pytest

from ddlcore_mysql.types import DataTypeSpec, DefaultValue, column_fields, convert_charset_fields, render_default

U8 = ("utf8mb4", "utf8mb4_general_ci")
N = None

CASES = [
    (DataTypeSpec("TINYINT"), ("tinyint", "tinyint(4)", N, 3, 0, N, N, N)),
    (DataTypeSpec("TINYINT", unsigned=True), ("tinyint", "tinyint(3) unsigned", N, 3, 0, N, N, N)),
    (DataTypeSpec("BOOL"), ("tinyint", "tinyint(1)", N, 3, 0, N, N, N)),
    (DataTypeSpec("INT", zerofill=True), ("int", "int(10) unsigned zerofill", N, 10, 0, N, N, N)),
    (DataTypeSpec("INT", 3, zerofill=True), ("int", "int(3) unsigned zerofill", N, 10, 0, N, N, N)),
    (DataTypeSpec("BIGINT", unsigned=True), ("bigint", "bigint(20) unsigned", N, 20, 0, N, N, N)),
    (DataTypeSpec("INT8"), ("bigint", "bigint(20)", N, 19, 0, N, N, N)),
    (DataTypeSpec("BIGINT", 21), ("bigint", "bigint(21)", N, 19, 0, N, N, N)),
    (DataTypeSpec("SERIAL"), ("bigint", "bigint(20) unsigned", N, 20, 0, N, N, N)),
    (DataTypeSpec("MIDDLEINT"), ("mediumint", "mediumint(9)", N, 7, 0, N, N, N)),
    (DataTypeSpec("MEDIUMINT", unsigned=True), ("mediumint", "mediumint(8) unsigned", N, 8, 0, N, N, N)),
    (DataTypeSpec("INT1"), ("tinyint", "tinyint(4)", N, 3, 0, N, N, N)),
    (DataTypeSpec("SMALLINT", unsigned=True), ("smallint", "smallint(5) unsigned", N, 5, 0, N, N, N)),
    (DataTypeSpec("TINYINT", 2, unsigned=True), ("tinyint", "tinyint(2) unsigned", N, 3, 0, N, N, N)),
    (DataTypeSpec("DECIMAL"), ("decimal", "decimal(10,0)", N, 10, 0, N, N, N)),
    (DataTypeSpec("DECIMAL", 5, unsigned=True), ("decimal", "decimal(5,0) unsigned", N, 5, 0, N, N, N)),
    (DataTypeSpec("FIXED", 4), ("decimal", "decimal(4,0)", N, 4, 0, N, N, N)),
    (DataTypeSpec("NUMERIC", 7, 1), ("decimal", "decimal(7,1)", N, 7, 1, N, N, N)),
    (DataTypeSpec("DEC", 65, 30), ("decimal", "decimal(65,30)", N, 65, 30, N, N, N)),
    (DataTypeSpec("FLOAT"), ("float", "float", N, 12, N, N, N, N)),
    (DataTypeSpec("FLOAT", 24), ("float", "float", N, 12, N, N, N, N)),
    (DataTypeSpec("FLOAT", 25), ("double", "double", N, 22, N, N, N, N)),
    (DataTypeSpec("FLOAT", 7, 3), ("float", "float(7,3)", N, 7, 3, N, N, N)),
    (DataTypeSpec("DOUBLE", 10, 3), ("double", "double(10,3)", N, 10, 3, N, N, N)),
    (DataTypeSpec("DOUBLE PRECISION"), ("double", "double", N, 22, N, N, N, N)),
    (DataTypeSpec("REAL"), ("double", "double", N, 22, N, N, N, N)),
    (DataTypeSpec("BIT"), ("bit", "bit(1)", N, 1, N, N, N, N)),
    (DataTypeSpec("BIT", 3), ("bit", "bit(3)", N, 3, N, N, N, N)),
    (DataTypeSpec("DATE"), ("date", "date", N, N, N, N, N, N)),
    (DataTypeSpec("DATETIME", 3), ("datetime", "datetime(3)", N, N, N, 3, N, N)),
    (DataTypeSpec("TIME"), ("time", "time", N, N, N, 0, N, N)),
    (DataTypeSpec("TIME", 6), ("time", "time(6)", N, N, N, 6, N, N)),
    (DataTypeSpec("TIMESTAMP"), ("timestamp", "timestamp", N, N, N, 0, N, N)),
    (DataTypeSpec("YEAR"), ("year", "year(4)", N, N, N, N, N, N)),
    (DataTypeSpec("YEAR", 2), ("year", "year(2)", N, N, N, N, N, N)),
    (DataTypeSpec("CHAR"), ("char", "char(1)", 1, N, N, N, *U8)),
    (DataTypeSpec("VARCHAR", 10), ("varchar", "varchar(10)", 10, N, N, N, *U8)),
    (DataTypeSpec("BINARY"), ("binary", "binary(1)", 1, N, N, N, N, N)),
    (DataTypeSpec("CHAR BYTE", 3), ("binary", "binary(3)", 3, N, N, N, N, N)),
    (DataTypeSpec("TEXT", 100), ("text", "text", 65535, N, N, N, *U8)),
    (DataTypeSpec("TINYTEXT"), ("tinytext", "tinytext", 255, N, N, N, *U8)),
    (DataTypeSpec("BLOB", 300), ("blob", "blob", 65535, N, N, N, N, N)),
    (DataTypeSpec("BLOB", 70000), ("mediumblob", "mediumblob", 16777215, N, N, N, N, N)),
    (DataTypeSpec("TEXT", 16777216, charset="latin1"), ("longtext", "longtext", 4294967295, N, N, N, "latin1", "latin1_swedish_ci")),
    (DataTypeSpec("ENUM", values=("a", "b'c")), ("enum", "enum('a','b''c')", 3, N, N, N, *U8)),
    (DataTypeSpec("SET", values=("x", "y")), ("set", "set('x','y')", 3, N, N, N, *U8)),
    (DataTypeSpec("JSON"), ("longtext", "longtext", 4294967295, N, N, N, "utf8mb4", "utf8mb4_bin")),
    (DataTypeSpec("POINT"), ("point", "point", N, N, N, N, N, N)),
    (DataTypeSpec("NATIONAL VARCHAR", 5), ("varchar", "varchar(5)", 5, N, N, N, "utf8mb3", "utf8mb3_general_ci")),
    (DataTypeSpec("NCHAR", 3), ("char", "char(3)", 3, N, N, N, "utf8mb3", "utf8mb3_general_ci")),
    (DataTypeSpec("LONG VARCHAR"), ("mediumtext", "mediumtext", 16777215, N, N, N, *U8)),
    (DataTypeSpec("LONG VARBINARY"), ("mediumblob", "mediumblob", 16777215, N, N, N, N, N)),
    (DataTypeSpec("INET6"), ("inet6", "inet6", N, N, N, N, N, N)),
    (DataTypeSpec("UUID"), ("uuid", "uuid", N, N, N, N, N, N)),
    (DataTypeSpec("VARCHAR", 5, charset="latin1", binary=True), ("varchar", "varchar(5)", 5, N, N, N, "latin1", "latin1_bin")),
    (DataTypeSpec("VARCHAR", 10, ascii=True), ("varchar", "varchar(10)", 10, N, N, N, "latin1", "latin1_swedish_ci")),
    (DataTypeSpec("VARCHAR", 10, charset="utf8", collation="utf8_bin"), ("varchar", "varchar(10)", 10, N, N, N, "utf8mb3", "utf8mb3_bin")),
    (DataTypeSpec("VARCHAR", 5, collation="latin1_german1_ci"), ("varchar", "varchar(5)", 5, N, N, N, "latin1", "latin1_german1_ci")),
    (DataTypeSpec("VARCHAR", 8, charset="binary"), ("varbinary", "varbinary(8)", 8, N, N, N, N, N)),
]

KEYS = ("data_type", "column_type", "character_maximum_length", "numeric_precision",
        "numeric_scale", "datetime_precision", "character_set_name", "collation_name")


@pytest.mark.parametrize("spec,expected", CASES, ids=[f"{c[0].name}-{i}" for i, c in enumerate(CASES)])
def test_column_fields_match_mariadb(spec, expected):
    got = column_fields(spec, "utf8mb4", "utf8mb4_general_ci")
    assert tuple(got[k] for k in KEYS) == expected


def test_mysql8_flavor_drops_integer_display_widths():
    assert column_fields(DataTypeSpec("INT", unsigned=True), flavor="mysql")["column_type"] == "int unsigned"
    assert column_fields(DataTypeSpec("BOOL"), flavor="mysql")["column_type"] == "tinyint(1)"
    assert column_fields(DataTypeSpec("JSON"), flavor="mysql")["data_type"] == "json"
    assert column_fields(DataTypeSpec("VARCHAR", 3), flavor="mysql")["collation_name"] == "utf8mb4_0900_ai_ci"


def test_unknown_type_raises():
    from ddlcore_mysql.types import TypeError_
    with pytest.raises(TypeError_, match="unknown data type"):
        column_fields(DataTypeSpec("VARCHARZ", 3))


# (type, default, COLUMN_DEFAULT as MariaDB 10.11 rendered it)
DEFAULTS = [
    (DataTypeSpec("DATE"), DefaultValue("string", "2020-01-01"), "'2020-01-01'"),
    (DataTypeSpec("DATE"), DefaultValue("string", "2020-1-2"), "'2020-01-02'"),
    (DataTypeSpec("DATETIME"), DefaultValue("string", "2020-01-01"), "'2020-01-01 00:00:00'"),
    (DataTypeSpec("TIME", 2), DefaultValue("string", "1:2:3"), "'01:02:03.00'"),
    (DataTypeSpec("TIMESTAMP"), DefaultValue("number", "0"), "'0000-00-00 00:00:00'"),
    (DataTypeSpec("DATETIME", 3), DefaultValue("function", "current_timestamp(3)"), "current_timestamp(3)"),
    (DataTypeSpec("DATETIME"), DefaultValue("function", "now()"), "current_timestamp()"),
    (DataTypeSpec("TIMESTAMP"), DefaultValue("function", "CURRENT_TIMESTAMP"), "current_timestamp()"),
    (DataTypeSpec("VARCHAR", 10), DefaultValue("string", "it's"), "'it''s'"),
    (DataTypeSpec("VARCHAR", 10), DefaultValue("string", "a\nb"), "'a\\nb'"),
    (DataTypeSpec("VARCHAR", 10), DefaultValue("string", "a\\b"), "'a\\\\b'"),
    (DataTypeSpec("VARCHAR", 10), DefaultValue("string", "tab\there"), "'tab\there'"),
    (DataTypeSpec("CHAR", 2), DefaultValue("string", ""), "''"),
    (DataTypeSpec("INT"), DefaultValue("string", "5"), "5"),
    (DataTypeSpec("INT"), DefaultValue("bool", "1"), "1"),
    (DataTypeSpec("INT"), DefaultValue("number", "1.6"), "2"),
    (DataTypeSpec("INT"), DefaultValue("number", "-0"), "0"),
    (DataTypeSpec("BIGINT"), DefaultValue("number", "-1"), "-1"),
    (DataTypeSpec("BIGINT", unsigned=True), DefaultValue("number", "18446744073709551615"), "18446744073709551615"),
    (DataTypeSpec("DECIMAL", 5, 2), DefaultValue("number", "1.5"), "1.50"),
    (DataTypeSpec("DECIMAL", 6, 2), DefaultValue("number", "-3"), "-3.00"),
    (DataTypeSpec("DOUBLE"), DefaultValue("number", "1e3"), "1000"),
    (DataTypeSpec("DOUBLE"), DefaultValue("number", "-0.5e-3"), "-0.0005"),
    (DataTypeSpec("FLOAT"), DefaultValue("string", "1.0"), "1"),
    (DataTypeSpec("FLOAT"), DefaultValue("number", "1.5"), "1.5"),
    (DataTypeSpec("BIT", 3), DefaultValue("bit", 5), "b'101'"),
    (DataTypeSpec("BIT", 8), DefaultValue("number", "5"), "b'101'"),
    (DataTypeSpec("VARBINARY", 4), DefaultValue("hex", b"AB"), "'AB'"),
    (DataTypeSpec("CHAR", 4), DefaultValue("hex", b"A"), "'A'"),
    (DataTypeSpec("YEAR"), DefaultValue("number", "99"), "1999"),
    (DataTypeSpec("VARCHAR", 10), DefaultValue("function", "uuid()"), "uuid()"),
    (DataTypeSpec("INT"), DefaultValue("expression", "1+1"), "(1+1)"),
    (DataTypeSpec("INT"), DefaultValue("null"), None),
]


@pytest.mark.parametrize("spec,default,expected", DEFAULTS, ids=[str(i) for i in range(len(DEFAULTS))])
def test_render_default_matches_mariadb(spec, default, expected):
    assert render_default(default, column_fields(spec)) == expected


def test_convert_to_charset_grows_text_types_like_mariadb():
    # MariaDB 10.11: latin1 TEXT → MEDIUMTEXT, TINYTEXT → TEXT, MEDIUMTEXT → LONGTEXT in utf8mb4
    for written, expected in (("TEXT", "mediumtext"), ("TINYTEXT", "text"), ("MEDIUMTEXT", "longtext")):
        f = column_fields(DataTypeSpec(written, charset="latin1"))
        out = convert_charset_fields(f, "utf8mb4", None)
        assert (out["data_type"], out["character_set_name"], out["collation_name"]) == (expected, "utf8mb4", "utf8mb4_general_ci")
    vc = convert_charset_fields(column_fields(DataTypeSpec("VARCHAR", 10, charset="latin1")), "utf8mb4", None)
    assert (vc["column_type"], vc["character_octet_length"]) == ("varchar(10)", 40)
    assert convert_charset_fields(column_fields(DataTypeSpec("INT")), "utf8mb4", None)["character_set_name"] is None


# more renderings observed on MariaDB 10.11 (the oracle fixture's report)
MORE_DEFAULTS = [
    (DataTypeSpec("TEXT"), DefaultValue("string", "it's"), "'it\\'s'"),
    (DataTypeSpec("BLOB"), DefaultValue("hex", bytes.fromhex("cafe")), "X'cafe'"),
    (DataTypeSpec("CHAR", 5), DefaultValue("string", "ab  "), "'ab'"),
    (DataTypeSpec("INT", 5, zerofill=True), DefaultValue("number", "7"), "00007"),
    (DataTypeSpec("DOUBLE"), DefaultValue("number", "1.0e-10"), "0.0000000001"),
    (DataTypeSpec("DOUBLE"), DefaultValue("number", "1e20"), "1e20"),
    (DataTypeSpec("FLOAT", 10, 2), DefaultValue("number", "3.14159"), "3.14"),
    (DataTypeSpec("NUMERIC", 7, 5), DefaultValue("string", "12.678"), "12.67800"),
    (DataTypeSpec("DECIMAL", 5, 2), DefaultValue("number", "-0"), "0.00"),
    (DataTypeSpec("BIT", 1), DefaultValue("bool", "1"), "b'1'"),
    (DataTypeSpec("YEAR"), DefaultValue("number", "2020"), "2020"),
]


@pytest.mark.parametrize("spec,default,expected", MORE_DEFAULTS, ids=[str(i) for i in range(len(MORE_DEFAULTS))])
def test_render_default_more_mariadb_facts(spec, default, expected):
    assert render_default(default, column_fields(spec)) == expected


def test_float_with_scale_default_is_padded_like_mariadb():
    assert render_default(DefaultValue("number", "1.5"), column_fields(DataTypeSpec("DOUBLE", 10, 2))) == "1.50"
