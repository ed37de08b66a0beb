"""Build hook of ddlcore-postgres: generate the parser from ``grammars/postgres`` (see
``ddlcore.build``).  Loaded by path from the checkout, so the build needs no installed ddlcore.

``python hatch_build.py`` regenerates in place (``make grammar``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_here = Path(__file__).resolve().parent
_core = _here.parent.parent / "src" / "ddlcore" / "build.py"
if _core.is_file():
    _spec = importlib.util.spec_from_file_location("_ddlcore_build", _core)
    _build = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_build)  # type: ignore[union-attr]
else:  # built outside the checkout: use the installed ddlcore
    import ddlcore.build as _build  # type: ignore[no-redef]

AntlrBuildHook = _build.AntlrBuildHook

if __name__ == "__main__":
    for p in _build.generate(_build.find_grammar_dir(_here, "postgres"), _here / "src" / "ddlcore_postgres" / "_generated"):
        print(p)
