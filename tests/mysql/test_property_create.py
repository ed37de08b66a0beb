"""Property test: generated CREATE TABLE models, rendered with random keyword case, identifier
quoting, comments, synonyms and optional clauses, parse back to the same model.

The expected model of each column comes from the type catalogue (``column_fields``) — the part
checked against a real MariaDB in test_types.py and the oracle tests — so this test checks
the grammar and the visitor: that every rendering of the same table reads the same."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

import ddlcore
from ddlcore_mysql.types import SYNONYMS, DataTypeSpec, DefaultValue, column_fields, render_default

# type name → how its arguments may be written
INTEGERS = ["TINYINT", "INT1", "SMALLINT", "INT2", "MEDIUMINT", "MIDDLEINT", "INT3", "INT", "INTEGER",
            "INT4", "BIGINT", "INT8"]
DECIMALS = ["DECIMAL", "DEC", "NUMERIC", "FIXED"]
FLOATS = ["FLOAT", "DOUBLE", "DOUBLE PRECISION", "REAL"]
STRINGS = ["CHAR", "CHARACTER", "VARCHAR", "CHARACTER VARYING", "NATIONAL VARCHAR", "NCHAR",
           "NVARCHAR", "NATIONAL CHAR"]
BINARIES = ["BINARY", "VARBINARY"]
PLAIN = ["DATE", "TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT", "TINYBLOB", "BLOB", "MEDIUMBLOB",
         "LONGBLOB", "JSON", "POINT", "GEOMETRY", "LONG VARCHAR", "LONG VARBINARY", "BOOL",
         "BOOLEAN", "YEAR", "INET6", "UUID", "INET4"]
TEMPORAL = ["DATETIME", "TIMESTAMP", "TIME"]
CHARSETS = [None, "latin1", "utf8mb4", "utf8mb3", "ascii"]
KEYWORD_NAMES = ["status", "date", "comment", "timestamp", "key_block_size", "text", "name", "value",
                 "type", "level", "data", "action", "position", "year", "engine"]

assert all(n in SYNONYMS for n in INTEGERS + DECIMALS + FLOATS + STRINGS + BINARIES + PLAIN + TEMPORAL)

ident_chars = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8)
names = st.one_of(ident_chars.map(lambda s: "c_" + s), st.sampled_from(KEYWORD_NAMES))


@st.composite
def data_types(draw) -> DataTypeSpec:
    kind = draw(st.sampled_from(["int", "dec", "float", "str", "bin", "plain", "temporal", "enum", "set", "bit"]))
    if kind == "int":
        return DataTypeSpec(draw(st.sampled_from(INTEGERS)), draw(st.none() | st.integers(1, 20)),
                            unsigned=draw(st.booleans()), zerofill=draw(st.booleans()))
    if kind == "dec":
        p = draw(st.none() | st.integers(1, 65))
        s = None if p is None else draw(st.none() | st.integers(0, min(p, 30)))
        return DataTypeSpec(draw(st.sampled_from(DECIMALS)), p, s, unsigned=draw(st.booleans()))
    if kind == "float":
        name = draw(st.sampled_from(FLOATS))
        if draw(st.booleans()):
            p = draw(st.integers(1, 30))
            return DataTypeSpec(name, p, draw(st.integers(0, min(p, 10))))
        return DataTypeSpec(name)
    if kind == "str":
        name = draw(st.sampled_from(STRINGS))
        length = draw(st.integers(1, 200)) if "VAR" in name or draw(st.booleans()) else None
        cs = None if name.startswith("N") else draw(st.sampled_from(CHARSETS))
        return DataTypeSpec(name, length, charset=cs, binary=draw(st.booleans()) and cs is not None)
    if kind == "bin":
        name = draw(st.sampled_from(BINARIES))
        return DataTypeSpec(name, draw(st.integers(1, 200)) if name == "VARBINARY" or draw(st.booleans()) else None)
    if kind == "temporal":
        return DataTypeSpec(draw(st.sampled_from(TEMPORAL)), draw(st.none() | st.integers(0, 6)))
    if kind in ("enum", "set"):
        labels = draw(st.lists(st.text(alphabet="abcxyz' \\", min_size=0, max_size=5).map(str.rstrip),
                               min_size=1, max_size=5, unique=True))
        if kind == "set":
            labels = [l for l in labels if l] or ["a"]
        return DataTypeSpec(kind.upper(), values=tuple(labels))
    if kind == "bit":
        return DataTypeSpec("BIT", draw(st.none() | st.integers(1, 64)))
    return DataTypeSpec(draw(st.sampled_from(PLAIN)))


def quote_label(label: str) -> str:
    return "'" + label.replace("\\", "\\\\").replace("'", "''") + "'"


def render_type(spec: DataTypeSpec, draw) -> str:
    kw = lambda s: draw(st.sampled_from([s.upper(), s.lower(), s.title()]))  # noqa: E731
    out = " ".join(kw(w) for w in spec.name.split())
    if spec.values is not None:
        out += "(" + ",".join(quote_label(v) for v in spec.values) + ")"
    elif spec.length is not None and spec.scale is not None:
        out += f"({spec.length},{draw(st.sampled_from(['', ' ']))}{spec.scale})"
    elif spec.length is not None:
        out += f"({spec.length})"
    if spec.unsigned:
        out += " " + kw("unsigned")
    if spec.zerofill:
        out += " " + kw("zerofill")
    if spec.charset:
        out += " " + draw(st.sampled_from([kw("character set"), kw("charset")])) + " " + spec.charset
    if spec.binary:
        out += " " + kw("binary")
    return out


def quote_ident(name: str, draw) -> str:
    if name in KEYWORD_NAMES or draw(st.booleans()):
        return draw(st.sampled_from(["`" + name + "`", name if name in KEYWORD_NAMES else "`" + name + "`"]))
    return name


def gap(draw) -> str:
    return draw(st.sampled_from([" ", "  ", "\n  ", " /* c */ ", " -- note\n ", "\t"]))


@st.composite
def tables(draw):
    cols = draw(st.lists(st.tuples(names, data_types(), st.booleans(), st.booleans()), min_size=1, max_size=6,
                         unique_by=lambda c: c[0].lower()))
    table_cs = draw(st.sampled_from(CHARSETS))
    parts = []
    expected = []
    for name, spec, not_null, with_comment in cols:
        text = quote_ident(name, draw) + gap(draw) + render_type(spec, draw)
        if not_null:
            text += gap(draw) + draw(st.sampled_from(["NOT NULL", "not null"]))
        if with_comment:
            text += gap(draw) + "COMMENT 'c of " + name + "'"
        parts.append(text)
        expected.append((name, spec, not_null, with_comment))
    pk = draw(st.sampled_from([None] + [c[0] for c in cols if c[1].name not in ("JSON", "POINT", "GEOMETRY") and "TEXT" not in c[1].name and "BLOB" not in c[1].name and c[1].name not in ("LONG VARCHAR", "LONG VARBINARY")]))
    if pk is not None:
        parts.append("PRIMARY KEY (" + quote_ident(pk, draw) + ")")
    ddl = draw(st.sampled_from(["CREATE TABLE", "create table", "Create Table"])) + " " + quote_ident("tbl", draw) + " (" + \
          ("," + gap(draw)).join(parts) + ")"
    if table_cs:
        ddl += gap(draw) + draw(st.sampled_from(["DEFAULT CHARSET=", "CHARACTER SET ", "charset = "])) + table_cs
    if draw(st.booleans()):
        ddl += gap(draw) + "ENGINE=InnoDB"
    return ddl, expected, table_cs, pk


@settings(max_examples=120)
@given(tables())
def test_generated_create_table_parses_back_to_the_model(case):
    ddl, expected, table_cs, pk = case
    parser = ddlcore.get_dialect("mysql").parser()
    t = parser.parse(ddl, parser.new_tables(), database="d").tables.get("d.tbl")
    assert t is not None, ddl
    from ddlcore_mysql.charsets import default_collation, normalize_charset
    tcs = normalize_charset(table_cs) if table_cs else "utf8mb4"
    tcoll = default_collation(tcs)
    assert (t.default_character_set_name, t.default_collation_name) == (tcs, tcoll)
    assert [c.name for c in t.columns] == [e[0] for e in expected], ddl
    for col, (name, spec, not_null, with_comment) in zip(t.columns, expected):
        want = column_fields(spec, tcs, tcoll)
        for k in ("data_type", "column_type", "character_maximum_length", "numeric_precision",
                  "numeric_scale", "datetime_precision", "character_set_name", "collation_name",
                  "enum_values", "set_values", "unsigned", "zerofill"):
            assert getattr(col, k) == (tuple(want[k]) if isinstance(want[k], list) else want[k]), (k, ddl)
        assert col.nullable == (not not_null and name != pk), ddl
        assert col.comment == (f"c of {name}" if with_comment else None)
    assert list(t.primary_key) == ([pk] if pk else [])
