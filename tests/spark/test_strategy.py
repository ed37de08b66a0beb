"""``ExecutionStrategy``: the one place a run's execution path is chosen (driver or Spark), from
its ``Tuning``, master and output."""

from __future__ import annotations

import pytest

from ddlcore.runconfig import Tuning
from ddlcore.spark.readlog import Inputs
from ddlcore.spark.strategy import ExecutionStrategy, Path


def _tails(n: int, nbytes: int, whole: bool = False, parquet: tuple = ()) -> Inputs:
    inputs = Inputs(([f"t{i}.jsonl" for i in range(n)], list(parquet)))
    inputs.tails, inputs.whole, inputs.tail_bytes = tuple(range(n)), whole, nbytes
    return inputs


def test_groups_go_to_the_driver_by_where_the_run_is_and_its_tuning():
    local, cluster = ExecutionStrategy(Tuning(), local=True, local_output=True), ExecutionStrategy(Tuning())
    assert local.driver_max_rows() is None and local.on_driver(10**9) and local.path() is Path.STAGED
    assert cluster.driver_max_rows() == Tuning().cluster_max_rows
    assert cluster.on_driver(20_000) and not cluster.on_driver(20_001)
    assert cluster.group_path(20_001, 0) is Path.SPARK and cluster.group_path(5, 10) is Path.STAGED
    never = ExecutionStrategy(Tuning(driver_max_rows=-1), local=True, local_output=True)
    assert never.path() is Path.SPARK and not never.on_driver(0) and never.group_path(1, 1) is Path.SPARK


def test_a_group_of_large_values_stays_a_spark_job():
    """Values over ``group_max_bytes`` held at once: the whole group read by the driver, a chunk's
    share on a local output (the workers read the files a chunk at a time)."""
    tuning = Tuning(group_max_bytes=1_000, chunk_rows=10)
    read_by_driver, local = ExecutionStrategy(tuning), ExecutionStrategy(tuning, local=True, local_output=True)
    assert read_by_driver.too_large(100, 1_001) and read_by_driver.group_path(100, 1_001) is Path.SPARK
    assert local.held_bytes(100, 1_001) == pytest.approx(100.1) and local.group_path(100, 1_001) is Path.STAGED
    assert local.too_large(5, 1_001)  # a group smaller than a chunk: all of it at once


def test_only_a_small_increment_of_tails_may_run_all_on_the_driver():
    s = ExecutionStrategy(Tuning(driver_increment_max_bytes=100))
    assert s.may_run_on_driver(_tails(2, 100), last=7)
    assert not s.may_run_on_driver(_tails(2, 100), last=None)  # a first run
    assert not s.may_run_on_driver(_tails(2, 101), last=7)
    assert not s.may_run_on_driver(_tails(2, 10, whole=True), last=7)
    assert not s.may_run_on_driver(_tails(2, 10, parquet=("p.parquet",)), last=7)
    assert not ExecutionStrategy(Tuning(driver_increment_max_bytes=100), replay=True).may_run_on_driver(
        _tails(1, 1), last=7)
    assert ExecutionStrategy(Tuning(interpreted_max_bytes=100)).interpreted_increment(_tails(1, 100))
    assert not ExecutionStrategy(Tuning(interpreted_max_bytes=100)).interpreted_increment(_tails(1, 101))
