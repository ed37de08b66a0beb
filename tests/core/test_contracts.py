"""One definition of each change-log contract, shared by its writers and readers: the row ops,
and what a reader takes from a capture's checkpoint."""

from __future__ import annotations

import json

import pytest

from ddlcore import changelog
from ddlcore.capture import CHANGELOG_NAME, CHECKPOINT_NAME, CheckpointBound, read_checkpoint_bound


def _event(op: str, **k) -> dict:
    return {"seq": 1, "position": "p", "ts": 0, "op": op, "database": "shop", "table": "t", **k}


def test_a_truncate_is_a_row_event_without_images():
    """``t`` is a row event (it becomes an output row: the pipeline reads ``ROW_OPS`` from
    ``ddlcore.changelog``) that carries no row image (``IMAGE_OPS``)."""
    assert "t" in changelog.ROW_OPS and "t" not in changelog.IMAGE_OPS
    assert set(changelog.IMAGE_OPS) < set(changelog.ROW_OPS) <= changelog.OPS
    assert not set(changelog.HISTORY_OPS) & set(changelog.ROW_OPS)
    assert changelog.validate(_event("t")).op == "t"
    with pytest.raises(ValueError, match="a t event carries no row images"):
        changelog.validate(_event("t", after=["1"]))
    assert changelog.validate(_event("c", after=[1])).after == [1]


def test_a_reader_takes_a_captures_checkpoint_by_its_one_definition(tmp_path):
    assert read_checkpoint_bound(tmp_path) is None                      # not a capture's directory
    (tmp_path / CHANGELOG_NAME).write_text("")
    (tmp_path / CHECKPOINT_NAME).write_text(json.dumps({"seq": 7, "changelog_bytes": 120, "phase": "streaming",
                                                        "binlog": "mariadb-bin.000001:4"}))
    assert read_checkpoint_bound(tmp_path) == CheckpointBound(7, 120, "streaming", tmp_path / CHANGELOG_NAME)
    (tmp_path / CHECKPOINT_NAME).write_text(json.dumps({"seq": 7, "changelog_bytes": 120}))
    assert read_checkpoint_bound(tmp_path).phase == "streaming"        # a checkpoint without a phase
    (tmp_path / CHECKPOINT_NAME).write_text(json.dumps({"seq": 7}))    # another program's checkpoint.json
    assert read_checkpoint_bound(tmp_path) is None
