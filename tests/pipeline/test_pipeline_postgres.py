"""``ddlcore run`` on a PostgreSQL change log: the pg_shop log recorded by ``ddlcore capture
postgres`` from a real PostgreSQL 15 (examples/pg_shop) goes through the PostgreSQL dialect's
history and Spark rules into OUT/<database>/<schema>/<table>/schema_version=<N>/; values without
a Spark value (numeric NaN, an unconstrained numeric beyond decimal(38,18)) are quarantined with
the column and the reason, and convert exactly with ``numeric_unconstrained=string``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("ddlcore_postgres")

LOG = Path(__file__).resolve().parents[2] / "examples" / "pg_shop" / "changelog.jsonl"


def _events() -> list[dict]:
    return [json.loads(line) for line in LOG.read_text().splitlines() if line.strip()]


def test_pg_shop_log_writes_schema_paths_and_quarantines_what_spark_cannot_hold(spark, tmp_path):
    from ddlcore.spark.pipeline import run_pipeline

    rows_in = sum(1 for e in _events() if e.get("op") in ("c", "u", "d", "r"))
    res = run_pipeline(LOG, tmp_path / "out", spark=spark)
    assert res.dialect == "postgres"
    assert res.drift == []
    # every row event is written or quarantined, none lost
    assert res.rows + res.quarantined >= rows_in - sum(1 for e in _events() if e.get("op") == "t")
    tables = {p.relative_to(tmp_path / "out").parts[:3] for p in (tmp_path / "out").glob("*/*/*/schema_version=*")}
    assert ("shop", "public", "orders") in tables
    assert all(len(t) == 3 for t in tables)
    assert res.quarantined == 4, res.quarantine_reasons
    reasons = [json.loads(line)["reason"] for f in (tmp_path / "out" / "_quarantine").rglob("*.json")
               for line in f.read_text().splitlines() if line.strip()]
    assert len(reasons) == 4
    assert any("ratio" in r and "NaN or Infinity has no Spark decimal value" in r for r in reasons), reasons
    # PostgreSQL does not enforce an array column's declared dimensions: the pg_shop workload
    # writes a two-dimensional value into sizes int[]; it is quarantined, loudly, not flattened
    assert all(r.startswith(("cannot convert: ratio", "cannot convert: sizes ({{")) for r in reasons), reasons

    # numeric_unconstrained=string keeps the ratios exactly; array_dimensions=text keeps the 2-D
    # value as the array's text (every array column a string column)
    exact = run_pipeline(LOG, tmp_path / "out2", spark=spark,
                         spark_options={"numeric_unconstrained": "string", "array_dimensions": "text"})
    assert exact.quarantined == 0, exact.quarantine_reasons
    df = spark.read.parquet(str(tmp_path / "out2" / "shop" / "public" / "orders" / "schema_version=1"))
    ratios = {r["ratio"] for r in df.select("ratio").collect()}
    assert "NaN" in ratios and "0.00000000000000000001" in ratios
    versions = (tmp_path / "out2" / "shop" / "public" / "products").glob("schema_version=*")
    products = spark.read.parquet(*map(str, versions))
    assert "{{1,2},{3,NULL}}" in {r["sizes"] for r in products.select("sizes").collect()}
