"""DuckDB's own ``iceberg_scan`` on the tables ``ddlcore run --format iceberg`` writes.

The ``iceberg`` extension cannot be installed into the DuckDB the project uses (2.0): DuckDB
downloads extensions from its own site, which these machines cannot reach, and a DuckDB
extension binary loads only into the DuckDB version it was built for.  The PyPI packages
``duckdb-ext-iceberg`` and ``duckdb-ext-avro`` ship the extensions for DuckDB 1.4.4 (newest
there), so ``make venv`` installs DuckDB 1.4.4 with them into a directory of their own
(``ISOLATED``, ``pip install --target``) and the tests query through it in a subprocess.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
#: ``pip install --target`` directory of DuckDB 1.4.4 and its ``avro`` and ``iceberg`` extensions (Makefile)
ISOLATED = Path(os.environ.get("DDLCORE_DUCKDB_ICEBERG", REPO / ".venv" / "duckdb-iceberg"))

_SCRIPT = """
import pickle, sys, duckdb
from pathlib import Path
root = Path(sys.argv[1]) / "duckdb_ext" / "extensions" / ("v" + duckdb.__version__) / "linux_amd64"
con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
con.sql(f"LOAD '{root / 'avro.duckdb_extension'}'")
con.sql(f"LOAD '{root / 'iceberg.duckdb_extension'}'")
rel = con.sql(sys.argv[2])
sys.stdout.buffer.write(pickle.dumps((duckdb.__version__, rel.columns, rel.fetchall())))
"""


def iceberg_scan(sql: str) -> tuple[list[str], list[tuple]]:
    """Run ``sql`` (which calls ``iceberg_scan('<metadata.json>')``) in DuckDB with the
    ``iceberg`` extension loaded: ``(column names, rows)`` as DuckDB's Python values.  Skips
    (a failure under ``CI=true``) when ``ISOLATED`` is not installed (``make venv``)."""
    if not (ISOLATED / "duckdb_ext").is_dir():
        pytest.skip(f"DuckDB with the iceberg extension is not installed in {ISOLATED} (make venv)")
    env = {**os.environ, "PYTHONPATH": str(ISOLATED)}
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, str(ISOLATED), sql], env=env, capture_output=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    _version, columns, rows = pickle.loads(proc.stdout)
    return list(columns), rows


def metadata_file(table: Any) -> str:
    """The current metadata JSON of a ``pyiceberg`` table, as a local path."""
    location = table.metadata_location
    return location[len("file://"):] if location.startswith("file://") else location
