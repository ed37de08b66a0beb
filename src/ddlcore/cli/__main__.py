"""``python -m ddlcore.cli``: the ``ddlcore`` command."""

from .main import main

if __name__ == "__main__":  # importing the module (pkgutil.walk_packages) runs nothing
    main(prog_name="ddlcore")
