"""The pipeline's handling of rows that cannot be converted: ``--strict`` stops at them too (not
only at malformed events, unknown tables and unparsable DDL), and quarantine records keep
every field, the raw event of an unparsable DDL statement included."""

from __future__ import annotations

import decimal
import json

import pytest

pyspark = pytest.importorskip("pyspark")

from ddlcore.spark import pipeline as pl  # noqa: E402

from .support import shop_log  # noqa: E402


def test_strict_mode_stops_at_a_row_that_cannot_be_converted(spark, tmp_path):
    log = shop_log(tmp_path)
    bad = log.row("c", "orders", after=[8, 1, 9, b"x", decimal.Decimal("1")])  # enum index 9 of 2
    out = tmp_path / "out"
    with pytest.raises(pl.PipelineError) as info:
        pl.run_pipeline(log.write(), out, spark=spark, strict=True, dialect="mysql")
    assert info.value.seq == bad and "cannot convert" in info.value.reason and "status" in info.value.reason
    assert not (out / "shop").exists() and not (out / "_state" / "checkpoint.json").exists()
    # the same log without --strict: quarantined, the rest committed
    res = pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    assert res.quarantined == 1 and res.rows == 4
    assert not list((out / "_state").glob("staging*"))


def test_quarantine_records_keep_every_field_and_the_raw_ddl_event(spark, tmp_path):
    log = shop_log(tmp_path)
    ddl_seq = log.ddl("CREATE TABLE broken (")
    log.row("c", "orders", after=[1, 2])
    out = tmp_path / "out"
    res = pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    assert res.quarantined == 2
    records = [json.loads(line) for f in (out / "_quarantine").glob("*.json")
               for line in f.read_text().splitlines()]
    assert all(set(r) == {"seq", "position", "op", "database", "schema", "table", "reason", "event"} for r in records)
    ddl = next(r for r in records if r["seq"] == ddl_seq)
    assert ddl["reason"].startswith("DDL could not be parsed") and ddl["database"] == "shop"
    assert json.loads(ddl["event"])["ddl"] == "CREATE TABLE broken ("
    assert ddl["table"] is None


@pytest.mark.parametrize("incremental", [False, True], ids=["whole run", "incremental run"])
def test_an_image_the_op_does_not_carry_is_ignored(spark, tmp_path, incremental):
    """An insert's stray ``before`` image and a delete's stray ``after`` image are neither
    converted into the row nor a reason to quarantine the event — in a version whose plan
    converts both images (it has updates) and in one whose plan does not; on Spark (a whole
    run) and on the driver (a small incremental run).  Before, an insert with a bad stray
    ``before`` was written, and quarantined too if another row of its group failed."""
    good = [8, 1, 1, b"x", decimal.Decimal("1")]
    bad = [8, 1, 9, b"x", decimal.Decimal("1")]  # enum index 9 of 2
    for with_update in (False, True):
        (tmp_path / str(with_update)).mkdir()
        log = shop_log(tmp_path / str(with_update))
        out = tmp_path / str(with_update) / "out"
        if incremental:
            first = pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
            assert first.quarantined == 0
        log.row("c", "orders", before=bad, after=good)
        log.row("d", "orders", before=good, after=bad)
        log.row("c", "orders", after=bad)  # a row that does fail: its group has an error job
        if with_update:
            log.row("u", "orders", before=good, after=good)
        res = pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
        assert res.quarantined == 1, res.quarantine_reasons
        assert res.rows == (0 if incremental else 4) + 2 + with_update
