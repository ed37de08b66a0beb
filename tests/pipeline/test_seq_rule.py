"""The seq rule (docs/pipeline.md, "Guarantees"): seq increases over all the files of a change
log, so a copy of a file beside it — ``a.jsonl`` and ``a-copy.jsonl``, or ``changelog.jsonl``
and the ``changelog.jsonl.gz`` that ``gzip -k`` keeps — is refused with one line naming both
files before anything is written, never read twice (``ddlcore.spark.seqcheck``)."""

from __future__ import annotations

import gzip
import shutil
import subprocess

import pytest

from tests.pipeline.growing import CaptureDir, seqs
from tests.pipeline.test_pipeline import shop_log

pyspark = pytest.importorskip("pyspark")

from ddlcore.spark import pipeline as pl  # noqa: E402
from ddlcore.spark import driver  # noqa: E402
from ddlcore.spark.seqcheck import check_files, seq_range  # noqa: E402


def test_a_copy_of_a_file_beside_it_is_refused_naming_both(spark, tmp_path):
    (tmp_path / "d").mkdir()
    log = shop_log(tmp_path)
    log.path = tmp_path / "d" / "a.jsonl"
    log.write(extra_lines=["{\"seq\": 8, torn"])
    shutil.copy(log.path, tmp_path / "d" / "a-copy.jsonl")
    out = tmp_path / "out"
    with pytest.raises(pl.PipelineError, match=r"d/a-copy.jsonl \(seq 1\.\.7\) and .*d/a.jsonl \(seq 1\.\.7\) overlap"):
        pl.run_pipeline(tmp_path / "d", out, spark=spark, dialect="mysql")
    assert not out.exists()
    (tmp_path / "d" / "a-copy.jsonl").unlink()
    assert pl.run_pipeline(tmp_path / "d", out, spark=spark, dialect="mysql").rows == 4  # each row once


def test_gzip_k_in_a_capture_directory_is_refused_and_elsewhere_overlaps(spark, tmp_path):
    cap = CaptureDir(tmp_path / "cap")
    cap.grow(5)
    subprocess.run(["gzip", "-k", str(cap.log)], check=True)
    cap.grow(3)  # the capture goes on: the .gz copy is behind its checkpoint
    out = tmp_path / "out"
    with pytest.raises(pl.PipelineError, match=r"is a capture's directory, yet holds changelog.jsonl.gz besides its "
                                               r"changelog.jsonl"):
        pl.run_pipeline(cap.dir, out, spark=spark, dialect="mysql")
    assert not out.exists()
    (cap.dir / "checkpoint.json").unlink()  # a plain directory of the same two files
    assert seq_range(cap.dir / "changelog.jsonl.gz") == (1, 7) and seq_range(cap.log) == (1, 10)
    with pytest.raises(pl.PipelineError, match=r"cap/changelog.jsonl.gz \(seq 1\.\.7\) and .*cap/changelog.jsonl "
                                               r"\(seq 1\.\.10\) overlap"):
        pl.run_pipeline(cap.dir, out, spark=spark, dialect="mysql")
    (cap.dir / "changelog.jsonl.gz").unlink()
    pl.run_pipeline(cap.dir, out, spark=spark, dialect="mysql")
    assert seqs(out) == list(range(3, 11))


def test_files_that_follow_each_other_pass(tmp_path):
    lines = [f'{{"seq": {i}, "op": "c"}}' for i in range(1, 7)]
    (tmp_path / "1.jsonl").write_text("\n".join(lines[:3]) + "\n")
    with gzip.open(tmp_path / "2.jsonl.gz", "wt") as fh:
        fh.write("\n".join(lines[3:5]) + "\nnot json\n")
    (tmp_path / "3.jsonl").write_text(lines[5] + "\n")
    files = [str(tmp_path / n) for n in ("1.jsonl", "2.jsonl.gz", "3.jsonl")]
    assert [seq_range(f) for f in files] == [(1, 3), (4, 5), (6, 6)]
    check_files(files)
    (tmp_path / "3.jsonl").write_text(lines[4] + "\n")  # seq 5 again, in another file
    with pytest.raises(pl.PipelineError, match=r"2.jsonl.gz \(seq 4\.\.5\) and .*3.jsonl \(seq 5\.\.5\) overlap"):
        check_files(files)


def test_a_seq_twice_inside_a_file_is_refused_by_either_path(spark, tmp_path, monkeypatch):
    """A line written twice in one file (the ranges cannot see it): refused in a first run
    (Spark reads the log) and in an incremental run of a few lines (read on the driver)."""
    cap = CaptureDir(tmp_path / "cap")
    cap.grow(6)
    lines = cap.log.read_text().splitlines(keepends=True)
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(lines[:5] + [lines[4]] + lines[5:]))
    with pytest.raises(pl.PipelineError, match=r"seq 5 appears 2 times in the change log \(.*plain.jsonl and "
                                               r".*plain.jsonl\)"):
        pl.run_pipeline(plain, tmp_path / "a", spark=spark, dialect="mysql")
    assert not (tmp_path / "a").exists()
    out = tmp_path / "b"
    pl.run_pipeline(cap.dir, out, spark=spark, dialect="mysql")
    cap.grow(3)
    with open(cap.log, "a") as fh:  # the last line again, checkpointed
        fh.write(cap.log.read_text().splitlines(keepends=True)[-1])
    cap.grow(1)
    reads = []
    real = driver.DriverIncrement.read
    monkeypatch.setattr(driver.DriverIncrement, "read",
                        classmethod(lambda cls, *a, **k: reads.append(real(*a, **k)) or reads[-1]))
    with pytest.raises(pl.PipelineError, match=r"seq 11 appears 2 times in the change log"):
        pl.run_pipeline(cap.dir, out, spark=spark, dialect="mysql")
    assert len(reads) == 1 and reads[0] is not None  # the driver's path read it
    assert seqs(out) == list(range(3, 9))  # nothing of that run committed
