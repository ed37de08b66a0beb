"""``ddlcore.runconfig``: one frozen configuration per run, its options named once."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest

from ddlcore.runconfig import DEFAULT_CONCURRENT_JOBS, RunConfig, Tuning


def test_options_replace_the_given_config_and_an_unknown_one_is_refused_by_name():
    cfg = RunConfig.of(strict=True, tuning=Tuning(driver_max_rows=-1))
    assert cfg.strict and cfg.tuning.driver_max_rows == -1 and cfg.concurrent_jobs == DEFAULT_CONCURRENT_JOBS
    more = RunConfig.of(cfg, concurrent_jobs=2)
    assert more.strict and more.concurrent_jobs == 2 and cfg.concurrent_jobs == DEFAULT_CONCURRENT_JOBS
    assert RunConfig.of(cfg) is cfg
    with pytest.raises(TypeError, match="unknown run option.*: stict "):  # a misspelt option is never ignored
        RunConfig.of(stict=True)
    with pytest.raises(FrozenInstanceError):
        cfg.strict = False  # type: ignore[misc]


def test_the_command_lines_defaults_are_the_configs():
    from ddlcore.cli.run_cli import run_cmd

    defaults = {p.name: p.default for p in run_cmd.params}
    cfg = RunConfig()
    assert defaults["concurrent_jobs"] == cfg.concurrent_jobs
    assert defaults["output_format"] == cfg.output_format
    assert not cfg.strict and not cfg.replay_quarantine  # the flags' absence
