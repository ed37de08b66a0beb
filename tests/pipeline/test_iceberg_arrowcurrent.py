"""Property: the current-state table's Arrow face (``ddlcore.sinks.arrowcurrent``, computed on
the driver) equals its Spark face (``ddlcore.sinks.read.current_frame``, what
``read_table(current=True)`` computes) on random event sequences of one table: adds with and
without defaults, drops, renames, widenings, a retype to text, deletes, truncates, several
events per key, and updates leaving a column absent (``$absent``).  Equal rows and the same
Spark schema (names, types, nullability, field metadata) in the written file's footer.  Tables over the
driver's limits (``arrowcurrent.within``, ``TooLarge``) are computed by Spark, rebuilt and merged.

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
            # (values of non-key columns are seq * 100 + id: the key's is the small one; a
            # value ``encode_row`` tags, ``{"$...": ...}``, is not the key's either)
            cols = [j for j, v in enumerate(ev["after"]) if not isinstance(v, int) or v >= 100]
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
    real = current.current_files

    def spy(job):
        try:
            names = real(job)
        except Exception as exc:
            calls.append(f"raised {exc!r}")
            raise
        calls.append("written")
        return names

    monkeypatch.setattr(current, "current_files", spy)
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
    files = list((out / "_iceberg" / "d" / "t" / "data").glob("*.parquet"))  # (the Arrow face: no directory per run)
    assert len(files) == 1
    footer = json.loads(pq.read_metadata(files[0]).metadata[ROW_METADATA])
    assert _plain(footer) == _plain(json.loads(spark_face.schema.json())), script


def _plain(struct: dict) -> list[tuple]:
    """A Spark schema's names, types, nullability and field metadata (the plan's: none for the
    fields, which ``read._version_frame`` casts; ``_seq``'s from the version files)."""
    return [(f["name"], json.dumps(f["type"], sort_keys=True), f["nullable"], json.dumps(f["metadata"], sort_keys=True))
            for f in struct["fields"]]


def test_tables_without_a_key_and_a_float_key_left_to_spark(spark, tmp_path, monkeypatch):
    """Two tables without a primary key (every column the key): ``s`` with a ``SET`` column
    (a list column, ``arrowcurrent._group_key``), identical rows, a delete and an update, on the driver;
    ``f`` with a ``DOUBLE`` key column, which the Arrow face leaves to Spark (``Unsure``).
    Both equal the Spark face."""
    import ddlcore
    from ddlcore.raw import encode_row
    from ddlcore.sinks import current

    from .support import event

    outcomes: list[str] = []
    real = current.current_files

    def spy(job):
        try:
            names = real(job)
        except current.Unsure:
            outcomes.append("unsure")
            raise
        outcomes.append("written")
        return names

    monkeypatch.setattr(current, "current_files", spy)
    rows = [[1, "a,b", "x"], [1, "a,b", "x"], [2, "", "y"], [3, None, None], [4, "b", "z"]]
    evs = [event(1, op="ddl", database="d", ddl="CREATE TABLE s (i INT, f SET('a','b'), v VARCHAR(5))"),
           event(2, op="ddl", database="d", ddl="CREATE TABLE f (i INT, x DOUBLE)")]
    evs += [event(3 + n, op="c", database="d", table="s", after=encode_row(r)) for n, r in enumerate(rows)]
    evs += [event(9, op="d", database="d", table="s", before=encode_row(rows[4])),
            event(10, op="u", database="d", table="s", before=encode_row(rows[2]), after=encode_row([2, "a", "y"])),
            event(11, op="c", database="d", table="f", after=encode_row([1, -0.0])),
            event(12, op="c", database="d", table="f", after=encode_row([1, 0.0]))]
    log, out = tmp_path / "log.jsonl", tmp_path / "out"
    log.write_text("\n".join(evs) + "\n")
    res = pl.run_pipeline(log, out, spark=spark, output_format="iceberg", dialect="mysql",
                          tuning=Tuning(driver_workers=1))
    assert res.quarantined == 0, res.quarantine_reasons
    assert sorted(outcomes) == ["unsure", "written"]
    cat = _catalog(out)
    for name in ("s", "f"):
        got = cat.load_table(("d", name)).scan().to_arrow()
        assert _rows(got) == _rows(ddlcore.read_table(spark, out, f"d.{name}", current=True).toArrow()), name
    # as the server holds them (docs/tables.md, "Tables without a primary key"): the two identical
    # rows twice (the later's _seq), the delete removes (4, b, z), the update replaces (2, '', y)
    assert sorted(r["_seq"] for r in cat.load_table(("d", "s")).scan().to_arrow().to_pylist()) == [4, 4, 6, 10]


def test_the_driver_takes_a_lineage_within_its_rows_and_bytes():
    from ddlcore.sinks.arrowcurrent import within

    assert within(None, 100, 10 ** 9, 100)  # local mode: no row limit
    assert not within(None, 100, 1, 101)  # but the bytes a worker holds
    assert within(5, 100, 5, 0) and not within(5, 100, 6, 0)
    assert not within(-1, 100, 0, 0)  # -1: none


def test_tables_over_the_drivers_limit_computed_by_spark(spark, tmp_path, monkeypatch):
    """``driver_max_rows=6`` (``current.current_driver_rows``): the first run rebuilds
    ``test_iceberg_merge``'s keyed table (80 row events: the worker raises ``TooLarge``) by Spark
    and its table without a key (4) on the driver; the second run merges into both by Spark:
    the keyed table's stored rows exceed the limit (decided before the worker), the other's 4
    stored rows leave room for 2 of the run's 3 (the worker raises ``TooLarge``).  After each
    run both current-state tables equal the fold of the events."""
    from ddlcore.sinks import arrowmerge, current

    from .test_iceberg_merge import IDENT, NAME, NOPK_STATE, _fold, _log, _runs

    faces: list[tuple[str, str, str]] = []  # (face, table's directory, outcome)

    def table_of(dest: str) -> str:
        return "np" if "/shop/np/" in dest else NAME if f"/shop/{IDENT[1]}/" in dest else dest

    def spy(face: str, real, dest_of):
        def run(job):
            try:
                done = real(job)
            except current.Unsure as exc:
                faces.append((face, table_of(dest_of(job)), type(exc).__name__))
                raise
            faces.append((face, table_of(dest_of(job)), "written"))
            return done
        return run

    write_spark = current._write

    def spark_write(fs, frame, dest):
        faces.append(("spark", table_of(dest), "written"))
        return write_spark(fs, frame, dest)

    monkeypatch.setattr(current, "current_files", spy("rebuild", current.current_files, lambda j: j.dest))
    monkeypatch.setattr(arrowmerge, "merge_current", spy("merge", arrowmerge.merge_current, lambda j: j.current.dest))
    monkeypatch.setattr(current, "_write", spark_write)
    runs = _runs()[:2]
    log, out = tmp_path / "log.jsonl", tmp_path / "out"
    expected = [
        [("rebuild", NAME, "TooLarge"), ("rebuild", "np", "written"), ("spark", NAME, "written")],
        [("merge", "np", "TooLarge"), ("spark", NAME, "written"), ("spark", "np", "written")],
    ]
    for n, want in enumerate(expected):
        faces.clear()
        log.write_text("\n".join(_log(runs[:n + 1])) + "\n")
        res = pl.run_pipeline(log, out, spark=spark, output_format="iceberg", dialect="mysql",
                              tuning=Tuning(driver_workers=1, driver_max_rows=6))
        assert res.quarantined == 0, res.quarantine_reasons
        assert sorted(faces) == sorted(want), n
        cat = _catalog(out)
        keyed = cat.load_table(IDENT).scan().to_arrow().to_pylist()
        assert sorted((r["id"], r["v"], r["w"], r["_seq"], r["_unknown"]) for r in keyed) == _fold(runs[:n + 1]), n
        nopk = cat.load_table(("shop", "np")).scan().to_arrow().to_pylist()
        assert sorted((r["a"], r["b"]) for r in nopk) == NOPK_STATE[n], n
