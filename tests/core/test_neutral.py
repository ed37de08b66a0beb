"""Core is dialect-neutral: importing ddlcore and every one of its modules loads no dialect
plugin, and core's source names no plugin package."""

from __future__ import annotations

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
