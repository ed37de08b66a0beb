"""A TiDB workload as Drainer would send it: ``Binlog`` messages (one per transaction) and, for
every row change, the typed values the pipeline must produce.

The messages are built the way TiDB Binlog's translator fills them (``DatumToColumn``: signed
integers in ``int64_value``, unsigned ones and ENUM/SET in ``uint64_value``, FLOAT/DOUBLE in
``double_value``, DECIMAL/temporal/YEAR/MEDIUMINT/character types as ``string_value``,
binary types, BIT and JSON as ``bytes_value``; ``ColumnInfo.mysql_type`` is TiDB's
``types.TypeToStr``), with every MySQL type TiDB has at its extremes, a column added, modified
and renamed, a table renamed, and TiDB-only DDL.

``build()`` → ``Workload``: ``messages`` in commit order; ``rows``: per row event in order,
``Expect(table, op, before, after, columns)`` where ``before`` / ``after`` map column names to
the value Spark must hold (the oracle is written here, from the values put in, not computed
by ddlcore) and ``columns`` is ``[(name, spark type)]`` of the schema in force.
"""

from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import dataclass
from typing import Any

from pyspark.sql import types as T

from ddlcore_mysql.tidb_capture import binlog_pb2

DATABASE = "shop"
CLUSTER_ID = "6790123456789012345"
TOPIC = f"{CLUSTER_ID}_obinlog"
#: physical time of the first transaction (ms), 2025-11-24
PHYS0 = 1_764_000_000_000


def tso(i: int) -> int:
    """The commit TSO of the i-th transaction: one second apart, a small logical part."""
    return ((PHYS0 + i * 1000) << 18) | (i % 5)


@dataclass
class Expect:
    table: str
    op: str
    commit_ts: int
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    columns: list[tuple[str, T.DataType]]


@dataclass
class Workload:
    messages: list[Any]
    rows: list[Expect]


# a value: (Column field, wire value, expected Spark value)
def I(v: int, want: Any = None):  # noqa: E743 - signed integer
    return ("int64_value", v, v if want is None else want)


def U(v: int, want: Any = None):
    return ("uint64_value", v, v if want is None else want)


def F(v: float, want: Any = None):
    return ("double_value", v, v if want is None else want)


def S(v: str, want: Any):
    return ("string_value", v, want)


def B(v: bytes, want: Any = None):
    return ("bytes_value", v, bytes(v) if want is None else want)


NULL = ("is_null", True, None)
UTC = dt.timezone.utc

# (name, DDL type, Drainer's mysql_type, Spark type)
T_ALL = [
    ("id", "bigint /*T![auto_rand] AUTO_RANDOM(5) */", "bigint", T.LongType()),
    ("ti", "tinyint", "tinyint", T.ByteType()),
    ("tiu", "tinyint unsigned", "tinyint", T.ShortType()),
    ("si", "smallint", "smallint", T.ShortType()),
    ("siu", "smallint unsigned", "smallint", T.IntegerType()),
    ("mi", "mediumint", "mediumint", T.IntegerType()),
    ("miu", "mediumint unsigned", "mediumint", T.IntegerType()),
    ("i", "int", "int", T.IntegerType()),
    ("iu", "int unsigned", "int", T.LongType()),
    ("bi", "bigint", "bigint", T.LongType()),
    ("biu", "bigint unsigned", "bigint", T.DecimalType(20, 0)),
    ("f", "float", "float", T.FloatType()),
    ("d", "double", "double", T.DoubleType()),
    ("dec", "decimal(20,6)", "decimal", T.DecimalType(20, 6)),
    ("e", "enum('new','paid','shipped')", "enum", T.StringType()),
    ("s", "set('a','b','c')", "set", T.ArrayType(T.StringType())),
    ("b1", "bit(1)", "bit", T.BooleanType()),
    ("b12", "bit(12)", "bit", T.BinaryType()),
    ("j", "json", "json", T.StringType()),
    ("dt", "datetime(6)", "datetime", T.TimestampNTZType()),
    ("d0", "date", "date", T.DateType()),
    ("tm", "time", "time", T.DayTimeIntervalType(T.DayTimeIntervalType.DAY, T.DayTimeIntervalType.SECOND)),
    ("ts", "timestamp(3) NULL", "timestamp", T.TimestampType()),
    ("y", "year", "year", T.IntegerType()),
    ("c", "char(4)", "char", T.StringType()),
    ("vc", "varchar(20)", "varchar", T.StringType()),
    ("lt", "text CHARACTER SET latin1", "text", T.StringType()),
    ("bin", "binary(4)", "binary", T.BinaryType()),
    ("vb", "varbinary(8)", "varbinary", T.BinaryType()),
    ("bl", "blob", "blob", T.BinaryType()),
]

ROW_MIN = [I(1), I(-128), U(0), I(-32768), U(0), S("-8388608", -8388608), S("0", 0), I(-2147483648), U(0),
           I(-9223372036854775808), U(0, decimal.Decimal(0)), F(-1.5), F(-2.25e300),
           S("-99999999999999.999999", decimal.Decimal("-99999999999999.999999")), U(1, "new"), U(0, []),
           B(b"\x00", False), B(b"\x00\x00"), B(b'{"k": [1, "x"]}', '{"k": [1, "x"]}'),
           S("1000-01-01 00:00:00.000000", dt.datetime(1000, 1, 1)), S("1000-01-01", dt.date(1000, 1, 1)),
           S("-838:59:59", -dt.timedelta(hours=838, minutes=59, seconds=59)),
           S("1970-01-01 00:00:01.000", dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC)), S("1901", 1901),
           S("", ""), S("", ""), S("", ""), B(b"\x00\x00\x00\x00"), B(b""), B(b"")]
ROW_MAX = [I(2), I(127), U(255), I(32767), U(65535), S("8388607", 8388607), S("16777215", 16777215),
           I(2147483647), U(4294967295), I(9223372036854775807),
           U(18446744073709551615, decimal.Decimal(18446744073709551615)), F(1.5), F(1.7976931348623157e308),
           S("99999999999999.999999", decimal.Decimal("99999999999999.999999")), U(3, "shipped"),
           U(7, ["a", "b", "c"]), B(b"\x01", True), B(b"\x0f\xff"),
           B('{"a": null, "é": [true, 1.5]}'.encode(), '{"a": null, "é": [true, 1.5]}'),
           S("9999-12-31 23:59:59.999999", dt.datetime(9999, 12, 31, 23, 59, 59, 999999)),
           S("9999-12-31", dt.date(9999, 12, 31)), S("838:59:59", dt.timedelta(hours=838, minutes=59, seconds=59)),
           S("2038-01-19 03:14:07.999", dt.datetime(2038, 1, 19, 3, 14, 7, 999000, tzinfo=UTC)), S("2155", 2155),
           S("abcd", "abcd"), S("héllo wörld ✓ 𝄞", "héllo wörld ✓ 𝄞"), S("café crème ÿ", "café crème ÿ"),
           B(b"\xff\xfe\x00\x01"), B(b"\x00\x01\x02\x03\x04\x05\x06\xff"), B(bytes(range(256)))]
ROW_NULLS = [I(3)] + [NULL] * (len(T_ALL) - 1)


def _column(pb: Any, value: tuple) -> Any:
    c = pb.Column()
    setattr(c, value[0], value[1])
    return c


class _Builder:
    def __init__(self) -> None:
        self.pb = binlog_pb2()
        self.messages: list[Any] = []
        self.rows: list[Expect] = []
        self.n = 0

    def ddl(self, query: str, schema: str = DATABASE, table: str = "") -> None:
        self.n += 1
        b = self.pb.Binlog(type=self.pb.DDL, commit_ts=tso(self.n))
        b.ddl_data.schema_name = schema
        b.ddl_data.table_name = table
        b.ddl_data.ddl_query = query.encode("utf-8")
        self.messages.append(b)

    def dml(self, changes: list[tuple[str, str, list[tuple], list | None, list | None]]) -> None:
        """One transaction: ``(table, op, columns, before values, after values)`` per row;
        ``columns`` as ``T_ALL`` (``pk`` = first column)."""
        self.n += 1
        ts = tso(self.n)
        b = self.pb.Binlog(type=self.pb.DML, commit_ts=ts)
        for table, op, columns, before, after in changes:
            t = b.dml_data.tables.add()
            t.schema_name, t.table_name = DATABASE, table
            for k, (name, _, mysql_type, _) in enumerate(columns):
                ci = t.column_info.add()
                ci.name, ci.mysql_type, ci.is_primary_key = name, mysql_type, k == 0
            key = t.unique_keys.add()
            key.name = "PRIMARY"
            key.column_names.append(columns[0][0])
            m = t.mutations.add()
            m.type = {"c": self.pb.Insert, "u": self.pb.Update, "d": self.pb.Delete}[op]
            row_values = after if op in ("c", "u") else before
            m.row.columns.extend(_column(self.pb, v) for v in row_values)
            if op == "u":
                m.change_row.columns.extend(_column(self.pb, v) for v in before)
            names = [c[0] for c in columns]
            self.rows.append(Expect(
                table, op, ts,
                dict(zip(names, (v[2] for v in before))) if before is not None else None,
                dict(zip(names, (v[2] for v in after))) if after is not None else None,
                [(c[0], c[3]) for c in columns]))
        self.messages.append(b)


def build() -> Workload:
    w = _Builder()
    cols = list(T_ALL)
    w.ddl(f"CREATE DATABASE `{DATABASE}`", schema="")
    w.ddl("CREATE TABLE `t_all` (\n" + ",\n".join(f"  `{n}` {t}" for n, t, _, _ in cols)
          + ",\n  PRIMARY KEY (`id`) /*T![clustered_index] CLUSTERED */\n"
          ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin /*T![auto_rand_base] AUTO_RANDOM_BASE=30001 */",
          table="t_all")
    w.dml([("t_all", "c", cols, None, ROW_MIN), ("t_all", "c", cols, None, ROW_MAX)])
    w.dml([("t_all", "c", cols, None, ROW_NULLS)])
    row2b = list(ROW_MAX)
    row2b[cols.index(next(c for c in cols if c[0] == "vc"))] = S("changed", "changed")
    row2b[cols.index(next(c for c in cols if c[0] == "e"))] = U(2, "paid")
    row2b[cols.index(next(c for c in cols if c[0] == "s"))] = U(2, ["b"])
    w.dml([("t_all", "u", cols, ROW_MAX, row2b)])

    # a column added (TiDB fills it with its default in old rows' images)
    w.ddl("ALTER TABLE `t_all` ADD COLUMN `extra` varchar(10) DEFAULT 'x'", table="t_all")
    cols = cols + [("extra", "varchar(10)", "varchar", T.StringType())]
    row1 = ROW_MIN + [S("x", "x")]
    row1b = list(row1)
    row1b[-1] = S("set", "set")
    w.dml([("t_all", "u", cols, row1, row1b),
           ("t_all", "c", cols, None, [I(4)] + [NULL] * (len(cols) - 2) + [S("new", "new")])])

    # a column modified: i int → bigint
    w.ddl("ALTER TABLE `t_all` MODIFY COLUMN `i` bigint", table="t_all")
    k = [c[0] for c in cols].index("i")
    cols[k] = ("i", "bigint", "bigint", T.LongType())
    row5 = [I(5)] + [NULL] * (len(cols) - 1)
    row5[k] = I(5_000_000_000)
    w.dml([("t_all", "c", cols, None, row5)])

    # a column renamed
    w.ddl("ALTER TABLE `t_all` RENAME COLUMN `extra` TO `note`", table="t_all")
    cols[-1] = ("note", "varchar(10)", "varchar", T.StringType())
    # a table renamed
    w.ddl("RENAME TABLE `t_all` TO `t_main`", table="t_main")
    row1c = list(row1b)
    row1c[k] = I(-2147483648)
    row6 = [I(6)] + [NULL] * (len(cols) - 2) + [S("after", "after")]
    w.dml([("t_main", "c", cols, None, row6), ("t_main", "d", cols, [I(3)] + [NULL] * (len(cols) - 1), None)])

    # TiDB-only DDL: placement, TTL, shard bits, pre-split, TiFlash replica, a nonclustered key
    w.ddl("CREATE PLACEMENT POLICY `p1` PRIMARY_REGION=\"r1\" REGIONS=\"r1,r2\"", schema="")
    ocols = [("id", "bigint", "bigint", T.LongType()), ("amount", "decimal(10,2)", "decimal", T.DecimalType(10, 2)),
             ("created", "datetime", "datetime", T.TimestampNTZType()),
             ("label", "varchar(16) CHARACTER SET latin1", "varchar", T.StringType())]
    w.ddl("CREATE TABLE `orders` (`id` bigint NOT NULL, `amount` decimal(10,2), `created` datetime, "
          "`label` varchar(16) CHARACTER SET latin1, PRIMARY KEY (`id`) /*T![clustered_index] NONCLUSTERED */) "
          "/*T! SHARD_ROW_ID_BITS=4 PRE_SPLIT_REGIONS=2 */ /*T![placement] PLACEMENT POLICY=`p1` */ "
          "/*T![ttl] TTL=`created` + INTERVAL 90 DAY */ /*T![ttl] TTL_ENABLE='ON' */", table="orders")
    w.ddl("ALTER TABLE `orders` SET TIFLASH REPLICA 1", table="orders")
    w.dml([("orders", "c", ocols, None, [I(1), S("12.50", decimal.Decimal("12.50")),
                                         S("2025-11-24 10:00:00", dt.datetime(2025, 11, 24, 10)), S("Müller", "Müller")]),
           ("orders", "c", ocols, None, [I(2), S("-0.01", decimal.Decimal("-0.01")), NULL, S("", "")])])
    w.dml([("orders", "u", ocols,
            [I(1), S("12.50", decimal.Decimal("12.50")), S("2025-11-24 10:00:00", dt.datetime(2025, 11, 24, 10)),
             S("Müller", "Müller")],
            [I(1), S("99999999.99", decimal.Decimal("99999999.99")),
             S("2025-11-24 10:00:00", dt.datetime(2025, 11, 24, 10)), S("Straße", "Straße")])])
    return Workload(w.messages, w.rows)


def with_redeliveries(messages: list[Any]) -> list[Any]:
    """The stream as a Drainer restart leaves it: after message 8, messages 5..8 again; after
    message 12, 10..11 again (out of place, after newer ones); the last message twice."""
    out = []
    for i, m in enumerate(messages):
        out.append(m)
        if i == 8:
            out += messages[5:9]
        if i == 12:
            out += messages[10:12]
    out.append(messages[-1])
    return out
