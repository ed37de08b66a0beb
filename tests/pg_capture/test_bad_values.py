"""Bad input through ``ddlcore run``: a PostgreSQL change log (the source event of a real
capture, a table's DDL) whose row events carry values PostgreSQL's output functions never
write — a malformed array literal, an element that is no integer, a numeric beyond its
column's precision, an integer out of range, a bad bytea — quarantines exactly those rows,
each with the column and the reason, and writes the good rows around them.  (The converter's
edges are in tests/spark/test_postgres_rules.py; NaN and a 2-D value in an ``int[]`` column
through the pipeline in tests/pipeline/test_pipeline_postgres.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ddlcore import raw

from .support import REPO

pytest.importorskip("pyspark")
pytest.importorskip("ddlcore_postgres")

SOURCE = json.loads((REPO / "examples" / "pg_shop" / "changelog.jsonl").open().readline())

#: (after image, (the column, what the reason says) or None for a good row)
ROWS = [
    (["1", "12.50", "{1,2,NULL}", "\\x00ff", "7"], None),
    (["2", "12.50", "{1,2", "\\x00", "7"], ("a", "({1,2): not a valid raw value for integer[]")),
    (["3", "12.50", "{1,x}", "\\x00", "7"], ("a", "an element is not a valid integer")),
    (["4", "1234.56", "{}", "\\x00", "7"], ("n", "out of range for numeric(5,2)")),
    (["5", "-0.01", "{}", "\\x00", "2147483648"], ("i", "2147483648\"}): out of range for integer")),
    (["6", "0.01", "{}", "\\x0", "1"], ("b", "\\x0")),
    (["7", "-999.99", "{-5}", "\\x", "-2147483648"], None),
]


def _log(path: Path) -> Path:
    lines = [dict(SOURCE, seq=1),
             {"seq": 2, "position": "0/2000000", "ts": 1, "op": "ddl", "database": "shop", "table": None,
              "ddl": "CREATE TABLE t (id integer PRIMARY KEY, n numeric(5,2), a int[], b bytea, i integer)",
              "search_path": ["public"], "tx": "9"}]
    for k, (after, _) in enumerate(ROWS):
        lines.append({"seq": 3 + k, "position": f"0/20000{10 + k}", "ts": 2, "op": "c", "database": "shop",
                      "schema": "public", "table": "t", "after": [raw.encode_json(v) for v in after], "tx": "10"})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_malformed_values_quarantine_their_rows_with_column_and_reason(tmp_path):
    from ddlcore.spark.pipeline import run_pipeline, spark_session

    spark = spark_session("local[2]")
    res = run_pipeline(_log(tmp_path / "changelog.jsonl"), tmp_path / "out", spark=spark)
    bad = {r["seq"]: r for f in (tmp_path / "out" / "_quarantine").glob("*.json")
           for r in map(json.loads, f.read_text().splitlines())}
    want_bad = {3 + k: why for k, (_, why) in enumerate(ROWS) if why}
    assert sorted(bad) == sorted(want_bad), {s: r["reason"] for s, r in bad.items()}
    for seq, (column, why) in want_bad.items():
        r = bad[seq]
        assert r["reason"].startswith(f"cannot convert: {column} (") and why in r["reason"], (seq, r["reason"])
        assert (r["schema"], r["table"], r["op"]) == ("public", "t", "c")
        assert json.loads(r["event"])["seq"] == seq  # the event's text, to replay or inspect
    assert res.quarantined == len(want_bad) and res.rows == len(ROWS) - len(want_bad)
    df = spark.read.parquet(str(tmp_path / "out" / "shop" / "public" / "t" / "schema_version=1"))
    got = sorted((r["id"], str(r["n"]), r["a"], bytes(r["b"]), r["i"]) for r in df.collect())
    assert got == [(1, "12.50", [1, 2, None], b"\x00\xff", 7), (7, "-999.99", [-5], b"", -2147483648)]
