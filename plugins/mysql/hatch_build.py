"""Build hook of ddlcore-mysql: generate the parser from ``grammars/mysql`` and compile the
TiDB binlog message (``proto/tidb_binlog.proto`` → ``src/ddlcore_mysql/_proto/``) (see
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



class MySqlBuildHook(_build.AntlrBuildHook):
    """The ANTLR parser, then the protobuf modules (generated code is never committed)."""

    def initialize(self, version: str, build_data: dict) -> None:
        super().initialize(version, build_data)
        if self.target_name not in ("wheel", "editable"):
            return
        try:
            _build.generate_proto(Path(self.root) / "proto", Path(self.root) / "src" / "ddlcore_mysql" / "_proto")
        except RuntimeError as exc:
            sys.stderr.write(f"\nddlcore build: {exc}\n\n")
            raise
        build_data.setdefault("artifacts", []).append("src/ddlcore_mysql/_proto/*.py")


if __name__ == "__main__":
    for p in _build.generate(_build.find_grammar_dir(_here, "mysql"), _here / "src" / "ddlcore_mysql" / "_generated"):
        print(p)
    for p in _build.generate_proto(_here / "proto", _here / "src" / "ddlcore_mysql" / "_proto"):
        print(p)
