"""PostgreSQL's Spark rules (ddlcore_postgres.spark_types / values): the Python and JVM faces
agree on the edges of every type (valid and malformed text), and the text a real PostgreSQL 15
writes for every type converts to what psycopg reads for the same values."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ddlcore
from ddlcore import Table, TableId
from ddlcore.spark import RowConverter, SparkOptions

from .support import compare_faces

pytest.importorskip("ddlcore_postgres")


def pg_table(ddl: str) -> Table:
    """The model of one ``CREATE TABLE t (...)`` parsed by the postgres dialect."""
    parser = ddlcore.get_dialect("postgres").parser()
    tables = parser.new_tables()
    parser.parse(ddl, tables)
    return next(iter(tables))


COLUMNS = ("i2 int2, i4 int4, i8 int8, n numeric(10,2), nu numeric, r real, d double precision, b boolean, "
           "dt date, ts timestamp(6), tz timestamptz, by bytea, m money, b1 bit(1), bn bit(4), "
           "ia int[], ta text[], i2d int[][], e text, u uuid, j jsonb, iv interval, tm time")

#: per column: texts the server writes and malformed ones
EDGES: dict[str, list] = {
    "i2": ["-32768", "32767", "0", "32768", "x", "1.5"],
    "i4": ["-2147483648", "2147483647", "2147483648"],
    "i8": ["-9223372036854775808", "9223372036854775807", "9223372036854775808"],
    "n": ["12345678.90", "-0.01", "NaN", "Infinity", "123456789.00", "1e5"],
    "nu": ["1.5", "-12345678901234567890.123456789012345678", "123456789012345678901", "0.1234567890123456789",
           "NaN", "-Infinity"],
    "r": ["3.4028235e+38", "-1.5", "NaN", "Infinity", "-Infinity", "1e-45", "abc"],
    "d": ["1.7976931348623157e+308", "-0", "NaN", "5e-324", "1.2.3"],
    "b": ["t", "f", "true", "1"],
    "dt": ["2024-02-29", "0001-01-01", "9999-12-31", "infinity", "-infinity", "0044-03-15 BC", "2023-02-30"],
    "ts": ["2024-02-29 13:14:15.123456", "2024-02-29 13:14:15", "infinity", "2024-02-29T13:14:15"],
    "tz": ["2024-02-29 13:14:15.5+05:30", "2024-02-29 13:14:15+00", "1999-12-31 23:59:59-08",
           "1900-01-01 00:00:00+00:09:21", "-infinity", "2024-02-29 13:14:15"],
    "by": ["\\x", "\\x00ff10", "\\xzz", "\\x0"],
    "m": ["$1,234.56", "-$0.99", "$92,233,720,368,547,758.07", "1234.56", "EUR 1,00"],
    "b1": ["0", "1", "2"],
    "bn": ["0101"],
    "ia": ["{1,2,NULL}", "{}", "{-5}", "{1,x}", "[0:1]={1,2}", "{{1,2}}"],
    "ta": ['{a,"b c","d\\"e",NULL,"NULL","x\\\\y"}', "{}", '{"a,b"}'],
    "i2d": ["{{1,2},{3,4}}", "{}", "{{1,NULL},{3,4}}", "{1,2}", "{{1,x}}"],
    "e": ["hello", "", "12", '{"$s":"x"}'],
    "u": ["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"],
    "j": ['{"a": [1, 2]}'],
    "iv": ["1 year 2 mons 3 days 04:05:06.7"],
    "tm": ["13:14:15.5"],
}


@pytest.fixture(scope="module")
def pg_conv():
    t = pg_table(f"CREATE TABLE t ({COLUMNS})")
    return RowConverter(t, "postgres", options=SparkOptions(dialect="postgres"))


def test_pg_types_map_to_the_documented_spark_types(pg_conv):
    got = {f.name: f.dataType.simpleString() for f in pg_conv.struct_type.fields}
    assert got == {
        "i2": "smallint", "i4": "int", "i8": "bigint", "n": "decimal(10,2)", "nu": "decimal(38,18)",
        "r": "float", "d": "double", "b": "boolean", "dt": "date", "ts": "timestamp_ntz", "tz": "timestamp",
        "by": "binary", "m": "decimal(19,2)", "b1": "boolean", "bn": "string", "ia": "array<int>",
        "ta": "array<string>", "i2d": "array<array<int>>", "e": "string", "u": "string", "j": "string",
        "iv": "string", "tm": "string"}


def test_faces_agree_on_the_edges_of_every_type(spark, pg_conv):
    names = [c.name for c in pg_conv.table.columns]
    depth = max(len(v) for v in EDGES.values())
    rows = [[EDGES[n][r] if r < len(EDGES[n]) else None for n in names] for r in range(depth)]
    rows.append([None] * len(names))
    rows.append([5] * len(names))  # a raw int is no PostgreSQL text: invalid for every rule
    problems = compare_faces(spark, pg_conv, rows)
    assert not problems, "\n".join(problems[:40])


def test_python_face_values(pg_conv):
    names = [c.name for c in pg_conv.table.columns]

    def one(col: str, text: str):
        row = [None] * len(names)
        row[names.index(col)] = text
        values, errors = pg_conv.try_convert(row)
        return (values[names.index(col)] if values else None), [e.reason for e in errors]

    assert one("n", "12345678.90") == (Decimal("12345678.90"), [])
    assert one("n", "NaN")[1] == ["numeric(10,2) value NaN or Infinity has no Spark decimal value"]
    assert "more than 20 integer or 18 fraction digits" in one("nu", "0.1234567890123456789")[1][0]
    assert math.isnan(one("d", "NaN")[0]) and one("r", "-Infinity")[0] == -math.inf
    assert one("tz", "2024-02-29 13:14:15.5+05:30")[0] == dt.datetime(2024, 2, 29, 7, 44, 15, 500000, tzinfo=dt.timezone.utc)
    assert one("dt", "0044-03-15 BC")[1] == ["date value infinity or BC has no Spark value"]
    assert one("by", "\\x00ff10")[0] == b"\x00\xff\x10"
    assert one("m", "-$1,234.56")[0] == Decimal("-1234.56")
    assert one("ta", '{a,"b c","d\\"e",NULL,"NULL","x\\\\y"}')[0] == ["a", "b c", 'd"e', None, "NULL", "x\\y"]
    assert one("i2d", "{{1,NULL},{3,4}}")[0] == [[1, None], [3, 4]]
    assert one("ia", "{1,x}")[1] == ["an element is not a valid integer"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"),
                                             max_size=6)), max_size=5))
def test_text_arrays_round_trip(pg_conv, items):
    """Any text[] PostgreSQL would print (quoting as array_out does) reads back item by item
    (Python face; the JVM face is compared with it on the quoting edges above)."""
    def quote(s):
        if s is None:
            return "NULL"
        if s == "" or s.upper() == "NULL" or any(c in s for c in ' ,{}"\\') or s != s.strip():
            return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
        return s
    text = "{" + ",".join(quote(s) for s in items) + "}"
    names = [c.name for c in pg_conv.table.columns]
    row = [None] * len(names)
    row[names.index("ta")] = text
    values, errors = pg_conv.try_convert(row)
    assert not errors and values[names.index("ta")] == items


@pytest.mark.postgres
def test_server_text_of_every_type_converts_to_what_psycopg_reads(spark, postgres, postgres_db):
    """Values inserted in a real PostgreSQL 15, read back as text (what pgoutput sends) and as
    psycopg's Python objects: the converter's values equal psycopg's."""
    ddl = ("CREATE TABLE t (i2 int2, i4 int4, i8 int8, n numeric(10,2), nu numeric, r real, d double precision, "
           "b boolean, dt date, ts timestamp(6), tz timestamptz, by bytea, m money, b1 bit(1), ia int[], "
           "ta text[], i2d int[][], e text, u uuid)")
    rows = ["(-32768, 2147483647, -9223372036854775808, 12345678.90, 1.5, 1.5, -2.25e10, true, '2024-02-29', "
            "'2024-02-29 13:14:15.123456', '2024-02-29 13:14:15.5+05:30', '\\x00ff'::bytea, 1234.56, B'1', "
            "'{1,2,NULL}', ARRAY['a', 'b c', 'd\"e', NULL, 'x\\y'], '{{1,2},{3,4}}', 'hé', "
            "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')",
            "(0, 0, 0, -0.01, 0.000000000000000001, 0, 0, false, '0001-01-01', '1999-12-31 23:59:59', "
            "'1970-01-01 00:00:00+00', '\\x'::bytea, -0.99, B'0', '{}', '{}', '{}', '', NULL)"]
    with postgres.connect(postgres_db) as conn:
        conn.execute("SET TimeZone = 'America/New_York'")
        conn.execute(ddl)
        for r in rows:
            conn.execute(f"INSERT INTO t VALUES {r}")
        cols = [c.name for c in conn.execute("SELECT * FROM t LIMIT 0").description]
        # each value's text output (typoutput: what pgoutput sends), as the server wrote it
        cur = conn.execute("SELECT * FROM t ORDER BY i2")
        res = cur.pgresult
        texts = [tuple(None if res.get_value(r, c) is None else res.get_value(r, c).decode()
                       for c in range(res.nfields)) for r in range(res.ntuples)]
        objects = conn.execute("SELECT * FROM t ORDER BY i2").fetchall()
    conv = RowConverter(pg_table(ddl), "postgres", options=SparkOptions(dialect="postgres"))
    for text_row, obj_row in zip(texts, objects):
        values, errors = conv.try_convert(list(text_row))
        assert not errors, errors
        for name, got, want in zip(cols, values, obj_row):
            if name == "m":  # psycopg reads money as its text: compare with the number
                want = None if want is None else Decimal(str(want).replace("$", "").replace(",", ""))
            if name == "b1":
                want = None if want is None else want == "1"
            if name == "u":
                want = None if want is None else str(want)
            if isinstance(want, float) and name == "r":
                got = float(got)
            assert got == want, f"{name}: {got!r} != {want!r} (text {text_row[cols.index(name)]!r})"
    problems = compare_faces(spark, conv, [list(r) for r in texts])
    assert not problems, "\n".join(problems)


#: ``temporal_infinity`` / ``array_dimensions`` (docs/postgres.md): the temporal columns and arrays
#: of them, with infinities, BC values and malformed text
INFINITY_COLUMNS = "dt date, ts timestamp, tz timestamptz, da date[], ta text[]"
INFINITY_EDGES = [
    ["infinity", "infinity", "infinity", "{infinity,2024-02-29}", "{{a,b},{c,d}}"],
    ["-infinity", "-infinity", "-infinity", "{-infinity,NULL}", "{a}"],
    ["0044-03-15 BC", "0044-03-15 12:00:00 BC", "0044-03-15 12:00:00+00 BC", "{0044-03-15 BC}", "{{{a}}}"],
    ["2024-02-30", "Infinity", "infinity+00", "{x}", "[0:0]={a}"],
    ["2024-02-29", "2024-02-29 13:14:15", "2024-02-29 13:14:15+01", "{}", "{}"],
]


def _infinity_conv(**opts) -> RowConverter:
    return RowConverter(pg_table(f"CREATE TABLE t ({INFINITY_COLUMNS})"), "postgres",
                        options=SparkOptions(dialect="postgres", **opts))


@pytest.mark.parametrize("opts", [{"temporal_infinity": "null"},
                                  {"temporal_infinity": "clamp", "array_dimensions": "text"}],
                         ids=["null", "clamp-text"])
def test_faces_agree_on_temporal_infinity_and_array_text(spark, opts):
    problems = compare_faces(spark, _infinity_conv(**opts), INFINITY_EDGES)
    assert not problems, "\n".join(problems[:40])


def test_temporal_infinity_and_array_dimensions_python_values():
    utc = dt.timezone.utc

    def values(**opts):
        conv = _infinity_conv(**opts)
        return [conv.try_convert(r) for r in INFINITY_EDGES[:2]]
    (v, e), (w, f) = values()  # quarantine (default): the reason names the value
    assert not any(v) and [x.reason for x in e][:3] == [f"{t} value infinity or BC has no Spark value"
                                                       for t in ("date", "timestamp without time zone",
                                                                 "timestamp with time zone")]
    (v, e), (w, f) = values(temporal_infinity="null", array_dimensions="text")
    assert not e and not f
    assert list(v) == [None, None, None, "{infinity,2024-02-29}", "{{a,b},{c,d}}"]
    assert list(w) == [None, None, None, "{-infinity,NULL}", "{a}"]
    (v, e), (w, f) = values(temporal_infinity="null")
    assert list(w) == [None, None, None, [None, None], ["a"]] and not f
    (v, e), (w, f) = values(temporal_infinity="clamp")
    assert [x.reason for x in e] == ["not a valid raw value for text[]"]  # 2-D in text[]: declared dimensions
    assert list(w) == [dt.date(1, 1, 1), dt.datetime(1, 1, 1), dt.datetime(1, 1, 2, tzinfo=utc),
                       [dt.date(1, 1, 1), None], ["a"]]
    conv = _infinity_conv(temporal_infinity="clamp")
    assert list(conv.try_convert(INFINITY_EDGES[0][:4] + ["{a}"])[0][:3]) == [
        dt.date(9999, 12, 31), dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
        dt.datetime(9999, 12, 30, 23, 59, 59, 999999, tzinfo=utc)]
    assert {f.name: f.dataType.simpleString() for f in _infinity_conv(array_dimensions="text").struct_type.fields} \
        == {"dt": "date", "ts": "timestamp_ntz", "tz": "timestamp", "da": "string", "ta": "string"}
    with pytest.raises(ValueError, match="temporal_infinity='max': expected one of quarantine, null, clamp"):
        SparkOptions(dialect="postgres", temporal_infinity="max")


@pytest.mark.postgres
def test_server_infinities_and_deeper_arrays_are_kept_by_the_options(postgres, postgres_db):
    """A real PostgreSQL 15's text for ``±infinity`` dates and timestamps and for a 2-D value in a
    ``text[]`` column (the server does not enforce declared dimensions): quarantined by default,
    kept under ``temporal_infinity`` / ``array_dimensions=text``."""
    ddl = f"CREATE TABLE t ({INFINITY_COLUMNS})"
    with postgres.connect(postgres_db) as conn:
        conn.execute("SET TimeZone = 'Asia/Kolkata'")
        conn.execute(ddl)
        conn.execute("INSERT INTO t VALUES ('infinity', 'infinity', 'infinity', '{infinity,2024-02-29}', "
                     "ARRAY[['a','b'],['c','d']]), ('-infinity', '-infinity', '-infinity', '{-infinity}', '{a}')")
        res = conn.execute("SELECT * FROM t ORDER BY dt DESC").pgresult
        texts = [[res.get_value(r, c).decode() for c in range(res.nfields)] for r in range(res.ntuples)]
    assert texts[0][4] == "{{a,b},{c,d}}" and texts[1][2] == "-infinity"
    conv = RowConverter(pg_table(ddl), "postgres", options=SparkOptions(dialect="postgres"))
    assert all(conv.try_convert(t)[1] for t in texts)
    conv = RowConverter(pg_table(ddl), "postgres",
                        options=SparkOptions(dialect="postgres", temporal_infinity="clamp", array_dimensions="text"))
    (top, e), (bottom, f) = [conv.try_convert(t) for t in texts]
    assert not e and not f
    assert list(top) == [dt.date(9999, 12, 31), dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
                         dt.datetime(9999, 12, 30, 23, 59, 59, 999999, tzinfo=dt.timezone.utc),
                         "{infinity,2024-02-29}", "{{a,b},{c,d}}"]
    assert list(bottom) == [dt.date(1, 1, 1), dt.datetime(1, 1, 1), dt.datetime(1, 1, 2, tzinfo=dt.timezone.utc),
                            "{-infinity}", "{a}"]


def test_docs_hold_the_postgres_mapping_table_as_the_rules_make_it():
    from pathlib import Path

    from ddlcore.spark import mapping_table

    docs = Path(__file__).resolve().parents[2] / "docs" / "postgres.md"
    assert mapping_table("postgres") in docs.read_text(encoding="utf-8")
