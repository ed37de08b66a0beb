"""What the pipeline tests share: change logs written by a test (``Log``, ``shop_log``,
``sharded_log``, ``base`` with a ``source`` event), reading the output (``parquet_rows``,
``quarantine``, ``state``, ``row_files``), the comparison of two ways of writing an output
(``assert_same_output``: rows, Parquet schemas and footers, counts, quarantine, state), a MySQL
log's events that exercise every kind of row the pipeline handles (``mysql_extra_events``), and
the staged texts of the memo and kernel tests (``memo_table``, ``GOOD``, ``pick``, ``EVENT``)."""

from __future__ import annotations

import decimal
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import strategies as st

from ddlcore.raw import encode_json as e
from ddlcore.spark import driver

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def lines_of(path: Path) -> list[str]:
    return [ln for ln in path.read_text().splitlines() if ln.strip()]


def event(seq: int, **k) -> str:
    k = {"seq": seq, "position": f"p:{seq}", "ts": 1_718_002_000_000 + seq, **k}
    return json.dumps(k)


def row_files(out: Path) -> dict[str, list[Path]]:
    found: dict[str, list[Path]] = {}
    for f in sorted(out.rglob("*.parquet")):
        rel = f.relative_to(out)
        if rel.parts[0].startswith("_"):
            continue
        found.setdefault(str(rel.parent), []).append(f)
    return found


def quarantine(out: Path) -> list[dict]:
    return sorted((json.loads(ln) for f in (out / "_quarantine").glob("*.json") for ln in lines_of(f)),
                  key=lambda r: json.dumps(r, sort_keys=True))


def state(out: Path, name: str):
    path = out / "_state" / name
    return json.loads(path.read_text()) if path.exists() else None


def _columns(f: Path) -> list[tuple]:
    schema = pq.ParquetFile(f).schema
    return [(c.path, c.physical_type, str(c.logical_type), c.converted_type, c.max_definition_level,
             c.max_repetition_level, c.precision, c.scale, c.length) for c in (schema.column(i) for i in range(len(schema)))]


def _canonical_rows(table: pa.Table) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=repr) for r in table.to_pylist())


def assert_same_output(spark, a: Path, b: Path, run_id_a: str, run_id_b: str) -> None:
    """``a`` and ``b`` hold the same output: rows of every version directory (pyarrow and
    Spark), each file's Parquet schema and Spark footer, ``_run.json`` (last run and totals,
    but its seconds), quarantine records, ``malformed.json``, checkpoint ``last_seq``, schema
    files."""
    fa, fb = row_files(a), row_files(b)
    assert sorted(fa) == sorted(fb)
    for d in fa:
        ta = pa.concat_tables([pq.read_table(f) for f in fa[d]])
        tb = pa.concat_tables([pq.read_table(f) for f in fb[d]])
        assert _canonical_rows(ta) == _canonical_rows(tb), d
        for f in fa[d] + fb[d]:  # every file: the same physical schema and Spark footer as the first
            ref = (fa[d] + fb[d])[0]
            # every column: the same path, physical and logical type, repetition (the root's
            # name is the writer's: "spark_schema" or pyarrow's "schema")
            assert _columns(f) == _columns(ref), (d, f.name)
            meta, ref_meta = pq.read_schema(f).metadata, pq.read_schema(ref).metadata
            assert json.loads(meta[driver.ROW_METADATA_KEY.encode()]) == json.loads(
                ref_meta[driver.ROW_METADATA_KEY.encode()]), (d, f.name)
            assert meta[driver.SPARK_VERSION_KEY.encode()] == ref_meta[driver.SPARK_VERSION_KEY.encode()]
            assert pq.ParquetFile(f).schema_arrow.remove_metadata() == pq.ParquetFile(ref).schema_arrow.remove_metadata()
        # read as docs/pipeline.md tells readers of names that differ only in case
        case = spark.conf.get("spark.sql.caseSensitive")
        spark.conf.set("spark.sql.caseSensitive", "true")
        try:
            sa, sb = spark.read.parquet(str(a / d)), spark.read.parquet(str(b / d))
            assert sa.schema.jsonValue() == sb.schema.jsonValue(), d
            assert sorted(map(repr, sa.collect())) == sorted(map(repr, sb.collect())), d
        finally:
            spark.conf.set("spark.sql.caseSensitive", case)
    ra, rb = json.loads((a / "_run.json").read_text()), json.loads((b / "_run.json").read_text())
    for r in (ra, rb):
        r["last_run"].pop("seconds")
    assert ra == rb
    assert quarantine(a) == quarantine(b)
    assert state(a, "malformed.json") == state(b, "malformed.json")
    assert state(a, "checkpoint.json")["last_seq"] == state(b, "checkpoint.json")["last_seq"]
    sch_a = {f.name: json.loads(f.read_text()) for f in (a / "_schemas").glob("*.json")}
    sch_b = {f.name: json.loads(f.read_text()) for f in (b / "_schemas").glob("*.json")}
    assert sch_a == sch_b


def mysql_extra_events(n: int) -> list[str]:
    """Events after seq ``n`` of examples/shop's log (database ``shop``): a table of every
    MySQL type family (``extra``) with inserts, updates, deletes, absent values, zero dates,
    a value that cannot be converted, a row of the wrong arity; an unknown table,
    statement-format DML, a capture quarantine, malformed lines, lines before seq ``n`` (for
    an incremental run: before its checkpoint), a version whose columns collide with the
    pipeline's, an unparsable DDL and its blocked table, a truncate."""
    absent = {"$absent": True}
    return [
        event(n + 1, op="ddl", database="shop",
              ddl="CREATE TABLE extra (id int unsigned NOT NULL PRIMARY KEY, status enum('a','b'), "
                  "note varchar(10) CHARACTER SET latin1, amount decimal(30,2), small decimal(5,2), "
                  "big decimal(15,3), at datetime(6), ts timestamp(3), d date, t time, flags set('x','y'), "
                  "b bit(1), f float, dbl double, bin varbinary(4), j json, tiny tinyint, y year)"),
        event(n + 2, op="c", database="shop", table="extra", tx="0-1-77", row=0,
              after=[-1, 2, {"$b64": "Y2Fm6Q=="}, {"$dec": "123456789012345678901234.50"}, {"$dec": "-1.50"},
                     {"$dec": "1234.567"}, {"$datetime": "2024-02-29 13:14:15.123456"},
                     {"$datetime": "2024-03-01 00:00:00.250"}, {"$date": "1500-01-01"},
                     {"$time": "-838:59:59.000000"}, 3, 1, 1.5, 2.25, {"$b64": "AAE="}, {"$json": "{\"k\": [1]}"},
                     -5, 2024]),
        event(n + 3, op="c", database="shop", table="extra",  # zero date, nulls, absent values
              after=[2, None, absent, None, None, None, {"$datetime": "0000-00-00 00:00:00"}, None,
                     {"$date": "0000-00-00"}, None, 0, 0, None, None, None, None, None, None]),
        event(n + 4, op="u", database="shop", table="extra",
              before=[2, None, absent, None, None, None, None, None, None, None, 0, 0, None, None, None, None,
                      None, None],
              after=[2, 1, {"$b64": "eA=="}, absent, None, None, None, None, None, None, 1, 0, None, None, None,
                     None, None, None]),
        event(n + 5, op="c", database="shop", table="extra",  # enum index out of range: quarantined
              after=[3, 9, None, None, None, None, None, None, None, None, 0, 0, None, None, None, None, None,
                     None]),
        event(n + 6, op="c", database="shop", table="extra", after=[4, 1]),  # wrong arity
        event(n + 7, op="d", database="shop", table="extra",
              before=[-1, 2, None, None, None, None, None, None, None, None, 0, 0, None, None, None, None, None,
                      None]),
        event(n + 8, op="c", database="shop", table="nowhere", after=[1]),  # unknown table
        event(n + 9, op="stmt", database="shop", ddl="UPDATE extra SET status = 1 WHERE id > " + "9" * 400),
        event(n + 10, op="c", database="shop", table="extra", quarantine="drift: 3 columns in the binlog, 18 known",
              after=[5, 1, None]),
        "this line is not JSON",
        json.dumps({"position": "p:x", "op": "c", "database": "shop", "table": "extra", "after": [6]}),  # no seq
        event(n + 11, op="c", database="shop", table="extra"),  # no after image
        event(3, op="c", database="shop", table="extra", after=[7]),  # before the checkpoint: left out unparsed
        # before the checkpoint, but parsed (an escaped letter of "seq" in a value)
        event(4, op="c", database="shop", table="extra", after=[8], tx="SEQ").replace("SEQ", "\\u0073eq"),
        event(n + 12, op="ddl", database="shop", ddl="CREATE TABLE coll (id int, _op int)"),
        event(n + 13, op="c", database="shop", table="coll", after=[1, 2]),  # its columns collide
        event(n + 14, op="ddl", database="shop", ddl="ALTER TABLE extra ADD COLUMN ((( garbage"),
        event(n + 15, op="c", database="shop", table="extra", after=[9]),  # blocked
        event(n + 16, op="t", database="shop", table="purchases"),
    ]


class Log:
    """A change log being written by a test."""

    def __init__(self, path: Path):
        self.path = path
        self.events: list[dict] = []

    def add(self, **k) -> int:
        k["seq"] = len(self.events) + 1
        k.setdefault("ts", 1_700_000_000_000 + k["seq"])
        k.setdefault("position", f"mariadb-bin.000001:{100 * k['seq']}")
        self.events.append(k)
        return k["seq"]

    def ddl(self, sql: str, db: str = "shop") -> int:
        return self.add(op="ddl", database=db, ddl=sql)

    def row(self, op: str, table: str, before=None, after=None, db: str = "shop") -> int:
        k = {"op": op, "database": db, "table": table}
        if before is not None:
            k["before"] = [e(v) for v in before]
        if after is not None:
            k["after"] = [e(v) for v in after]
        return self.add(**k)

    def write(self, extra_lines: list[str] = ()) -> Path:
        with open(self.path, "w") as fh:
            for ev in self.events:
                fh.write(json.dumps(ev) + "\n")
            for line in extra_lines:
                fh.write(line + "\n")
        return self.path


def shop_log(tmp_path: Path) -> Log:
    log = Log(tmp_path / "changelog.jsonl")
    log.ddl("CREATE DATABASE shop")
    log.ddl("CREATE TABLE orders (id int unsigned NOT NULL PRIMARY KEY, status enum('new','paid'), "
            "note varchar(20) CHARACTER SET latin1, total decimal(8,2), placed datetime(3))")
    log.row("c", "orders", after=[-1, 1, b"caf\xe9", decimal.Decimal("12.50"), "2024-02-29 13:14:15.250"])
    log.row("u", "orders", before=[-1, 1, b"caf\xe9", decimal.Decimal("12.50"), None],
            after=[-1, 2, b"caf\xe9", decimal.Decimal("13.00"), None])
    log.ddl("ALTER TABLE orders ADD COLUMN qty smallint NOT NULL DEFAULT 1 AFTER id, DROP COLUMN placed")
    log.row("c", "orders", after=[7, 3, 2, b"x", decimal.Decimal("1.00")])
    log.row("d", "orders", before=[7, 3, 2, b"x", decimal.Decimal("1.00")])
    return log


def parquet_rows(spark, out: Path, table: str, version: int):
    df = spark.read.parquet(str(out / "shop" / table / f"schema_version={version}"))
    return df, sorted(df.collect(), key=lambda r: r["_seq"])


SHARD = ("(id int unsigned NOT NULL PRIMARY KEY, status enum('new','paid'), "
         "note varchar(20) CHARACTER SET latin1, total decimal(8,2))")


def sharded_log(tmp_path: Path) -> Log:
    log = Log(tmp_path / "changelog.jsonl")
    log.ddl("CREATE DATABASE shop")
    for t in ("s0", "s1", "s2"):
        log.ddl(f"CREATE TABLE {t} {SHARD}")
    log.ddl("CREATE TABLE other (id int, note varchar(20) CHARACTER SET latin1)")
    for i, t in enumerate(("s0", "s1", "s2", "s0", "s1")):
        log.row("c", t, after=[-1 - i, 1, b"caf\xe9", decimal.Decimal("12.50")])
    log.row("u", "s1", before=[-2, 1, b"caf\xe9", decimal.Decimal("12.50")],
            after=[-2, 2, b"caf\xe9", decimal.Decimal("13.00")])
    log.row("d", "s2", before=[-3, 1, b"x", decimal.Decimal("1.00")])
    log.row("c", "s1", after=[9, 7, b"x", decimal.Decimal("1.00")])        # enum index 7: quarantined
    log.row("c", "other", after=[1, b"x"])
    log.ddl("ALTER TABLE s2 ADD COLUMN qty smallint")                       # s2 v2: columns of its own
    log.row("c", "s2", after=[5, 2, b"y", decimal.Decimal("2.00"), 3])
    log.row("c", "s0", after=[6, 2, b"z", decimal.Decimal("3.00")])
    return log


SOURCE = {"dialect": "mysql", "flavor": "mariadb", "epoch": "epoch-1",
          "server": {"server_id": 1, "version": "10.11.6-MariaDB"},
          "parser_options": {"character_set_server": "latin1", "collation_server": "latin1_swedish_ci",
                             "lower_case_table_names": 0}}


def source(log: Log, **over) -> int:
    return log.add(op="source", source={**SOURCE, **over})


def quarantine_by_seq(out: Path) -> list[dict]:
    """Every quarantine record of ``out``, in ``seq`` order (those without a seq last)."""
    return sorted((json.loads(line) for f in (out / "_quarantine").glob("*.json")
                   for line in f.read_text().splitlines() if line.strip()),
                  key=lambda r: (r["seq"] is None, r["seq"] or 0))


def base(tmp_path, **over) -> Log:
    log = Log(tmp_path / "changelog.jsonl")
    source(log, **over)
    log.ddl("CREATE DATABASE shop")
    log.ddl("CREATE TABLE t (id int NOT NULL PRIMARY KEY, name varchar(10), qty int)")
    return log


def memo_table():
    """A MySQL table of eight columns, one per rule family the memo and the kernels meet."""
    from ddlcore_mysql.types import DataTypeSpec as D

    from tests.spark.support import table
    return table(D("INT"), D("TINYINT", unsigned=True), D("ENUM", values=("new", "paid")),
                 D("DECIMAL", 5, 2), D("DATE"), D("DATETIME", 3), D("VARCHAR", 8, charset="latin1"),
                 D("SET", values=("a", "b")))


#: per column of ``memo_table``: texts that convert, and texts that do not
GOOD = [["1", "-7", "2147483647"], ["0", "255"], ["1", "2", "paid"], ['{"$dec":"1.50"}', "12"],
         ["2024-02-29", '{"$date":"2024-01-01"}'],
         ["2024-01-01 10:00:00.123", '{"$datetime":"2024-01-01 10:00:00.1234"}'],
         ['{"$b64":"Y2Fm6Q=="}', "plain"], ["0", "3", "a,b"]]
BAD = [["2147483648", "abc"], ["256", "-1"], ["3", "nope"], ['{"$dec":"1234.567"}', "x"], ["2023-02-29"],
        ["nonsense"], ['{"$b64":"////////////"}'], ["4", "c"]]


def pick(i: int, p: int) -> str | None:
    """Column ``i % 8``'s text number ``p``: mostly one that converts, at times a null, the
    absent marker or one that does not."""
    c = i % 8
    if p == 0:
        return None
    if p == 1:
        return driver.raw.ABSENT_TEXT
    if p == 2:
        return BAD[c][i % len(BAD[c])]
    return GOOD[c][p % len(GOOD[c])]


IMAGE = st.lists(st.integers(0, 19), min_size=7, max_size=9).map(lambda picks: [pick(i, p) for i, p in enumerate(picks)])
EVENT = st.tuples(st.sampled_from(["c", "r", "u", "d", "t"]), st.none() | IMAGE, st.none() | IMAGE)
