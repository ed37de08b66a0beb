"""Property: the current-state table's Arrow face (``ddlcore.sinks.arrowcurrent``, computed on
the driver) equals its Spark face (``ddlcore.sinks.read.current_frame``, what
``read_table(current=True)`` computes) on random event sequences of one table: adds with and
without defaults, drops, renames, widenings, a retype to text, deletes, truncates, several
events per key, and updates leaving a column absent (``$absent``).  Equal rows and the same
Spark schema (names, types, nullability) in the written file's footer.

Economy: the events of ``test_iceberg_fold``'s generator, one ``ddlcore run`` per example (the
driver's conversion, the Arrow face in the driver itself: ``driver_workers=1``), one Spark job
for the Spark face; few examples in the CI profile (``HYPOTHESIS_PROFILE=dev``: more).
"""

from __future__ import annotations

import json
import os

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from ddlcore.runconfig import Tuning
from ddlcore.spark import pipeline as pl

from .test_iceberg_fold import _catalog, workloads

pytest.importorskip("pyiceberg")

EXAMPLES = 30 if os.environ.get("HYPOTHESIS_PROFILE") == "dev" else 3
ROW_METADATA = b"org.apache.spark.sql.parquet.row.metadata"


@st.composite
def events(draw) -> list[str]:
    """A workload's events in one run, some updates leaving a non-key column absent."""
    runs, *_ = draw(workloads())
    out = []
    for line in (e for run in runs for e in run):
        ev = json.loads(line)
        if ev["op"] == "u" and draw(st.booleans()):
            # (values of non-key columns are seq * 100 + id: the key's is the small one)
            cols = [j for j, v in enumerate(ev["after"]) if isinstance(v, str) or v >= 100]
            if cols:
                ev["after"][draw(st.sampled_from(cols))] = {"$absent": True}
            line = json.dumps(ev)
        out.append(line)
    return out


def _rows(table) -> list[tuple]:
    return sorted((tuple(r.items()) for r in table.to_pylist()), key=repr)


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(written=events())
def test_arrow_face_equals_spark_face(spark, tmp_path_factory, monkeypatch, written):
    import pyarrow.parquet as pq

    import ddlcore
    from ddlcore.sinks import current

    calls: list[str] = []
    real = current.write_current

    def spy(job):
        try:
            names = real(job)
        except Exception as exc:
            calls.append(f"raised {exc!r}")
            raise
        calls.append("written")
        return names

    monkeypatch.setattr(current, "write_current", spy)
    tmp = tmp_path_factory.mktemp("faces")
    log, out = tmp / "log.jsonl", tmp / "out"
    log.write_text("\n".join(written) + "\n")
    res = pl.run_pipeline(log, out, spark=spark, output_format="iceberg", dialect="mysql",
                          tuning=Tuning(driver_workers=1))
    script = "\n".join(written)
    assert res.quarantined == 0, res.quarantine_reasons
    assert calls == ["written"], script
    spark_face = ddlcore.read_table(spark, out, "d.t", current=True)
    arrow_face = _catalog(out).load_table(("d", "t")).scan().to_arrow()
    assert _rows(arrow_face) == _rows(spark_face.toArrow()), script
    files = list((out / "_iceberg" / "d" / "t" / "data").glob("*/*.parquet"))
    assert len(files) == 1
    footer = json.loads(pq.read_metadata(files[0]).metadata[ROW_METADATA])
    assert _plain(footer) == _plain(json.loads(spark_face.schema.json())), script


def _plain(struct: dict) -> list[tuple]:
    """A Spark schema's names, types and nullability (its field metadata is the plan's:
    ``read_table``'s inferred read drops what the sink's read with the footer's schema keeps)."""
    return [(f["name"], json.dumps(f["type"], sort_keys=True), f["nullable"]) for f in struct["fields"]]
