"""``python -m ddlcore.cli``: the ``ddlcore`` command."""

from .main import main

main(prog_name="ddlcore")
