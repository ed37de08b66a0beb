"""Core is dialect-neutral: importing ddlcore and every one of its modules loads no dialect
plugin, and core's source names no plugin package.  Core is below its command line: no module
outside ``ddlcore.cli`` imports it."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import ddlcore

CORE = Path(ddlcore.__file__).parent


def test_importing_every_core_module_loads_no_plugin():
    code = ("import importlib, pkgutil, sys, ddlcore\n"
            "for m in pkgutil.walk_packages(ddlcore.__path__, 'ddlcore.'):\n"
            "    importlib.import_module(m.name)\n"
            "bad = sorted(n for n in sys.modules if n.startswith(('ddlcore_mysql', 'ddlcore_postgres')))\n"
            "print(','.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"core imported plugin modules: {out.stdout.strip()}"


def test_core_source_names_no_plugin_package():
    offenders = [str(p.relative_to(CORE)) for p in CORE.rglob("*.py")
                 if "import ddlcore_mysql" in p.read_text() or "from ddlcore_mysql" in p.read_text()
                 or "import ddlcore_postgres" in p.read_text() or "from ddlcore_postgres" in p.read_text()]
    assert not offenders


def _imported_modules(path: Path) -> set[str]:
    """Every module ``path`` (a module of ``ddlcore``) imports, at any depth (a function's
    imports too), relative imports resolved."""
    package = ["ddlcore", *path.relative_to(CORE).parent.parts]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            found.add(".".join(base + ([node.module] if node.module else [])))
    return found


#: core modules that are programs running the command line (not used by other core modules)
ENTRY_POINTS = {"spark/submit.py"}  # the script spark-submit runs: ``ddlcore`` with its arguments


def test_no_core_module_imports_the_command_line():
    offenders = sorted(str(p.relative_to(CORE)) for p in CORE.rglob("*.py")
                       if "cli" not in p.relative_to(CORE).parts and str(p.relative_to(CORE)) not in ENTRY_POINTS
                       and any(m == "ddlcore.cli" or m.startswith("ddlcore.cli.") for m in _imported_modules(p)))
    assert offenders == []
