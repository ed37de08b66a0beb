"""``ddlcore capture``: core lists and runs the commands plugins give through the
``ddlcore_capture_commands`` hook, without naming any plugin."""

from __future__ import annotations

import click
from click.testing import CliRunner

import ddlcore
from ddlcore.cli import main
from ddlcore.plugins import register_plugin, unregister_plugin


class _ToySource:
    @ddlcore.hookimpl
    def ddlcore_capture_commands(self):
        @click.command("toysrc")
        @click.option("--out", required=True)
        def toysrc(out: str) -> None:
            """Capture nothing from a toy source."""
            click.echo(f"toy capture into {out}")

        return [toysrc]


def test_plugin_capture_commands_are_listed_and_run():
    plugin = _ToySource()
    register_plugin(plugin, name="toy-source")
    try:
        runner = CliRunner()
        listing = runner.invoke(main, ["capture", "--help"])
        assert listing.exit_code == 0
        assert "toysrc" in listing.output and "mysql" in listing.output
        ran = runner.invoke(main, ["capture", "toysrc", "--out", "x"])
        assert ran.exit_code == 0 and ran.output.strip() == "toy capture into x"
        assert runner.invoke(main, ["capture", "nosuch"]).exit_code == 2
    finally:
        unregister_plugin(plugin)


def test_mysql_capture_usage_errors_exit_2():
    runner = CliRunner()
    out = runner.invoke(main, ["capture", "mysql", "--server-id", "1", "--out", "d", "--start", "f:1"])
    assert out.exit_code == 2 and "--snapshot never" in out.output
    out = runner.invoke(main, ["capture", "mysql", "--server-id", "1", "--out", "d", "--password-env", "NO_SUCH_VAR_X"])
    assert out.exit_code == 2 and "NO_SUCH_VAR_X" in out.output
