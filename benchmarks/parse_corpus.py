"""Parse throughput over the shared MySQL corpora, against sqlglot as the baseline.

Prints statements per second for ddlcore (cold first pass and warm passes; every statement of
the accepted corpora, skipped ones included, and separately the parsed ones) and for
``sqlglot.parse(read="mysql")`` on the same statements, measured in the same run, and the
ratio.  Also the slowest statements.  Run: ``python benchmarks/parse_corpus.py [--passes N]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import ddlcore

REPO = Path(__file__).resolve().parent.parent


def corpus_statements(root: Path) -> list[str]:
    parser = ddlcore.get_dialect("mysql").parser()
    files = sorted((root / "accepted" / "debezium-mysql-connector").glob("*.sql"))
    files += sorted((root / "accepted" / "guacamole" / "mysql").rglob("*.sql"))
    files += sorted((root / "accepted" / "sakila-jooq").glob("mysql-*.sql"))
    files += sorted((root / "accepted" / "test_db").glob("*.sql"))
    out: list[str] = []
    for f in files:
        out += [s.text for s in parser.split(f.read_text(encoding="utf-8", errors="replace"))]
    return out


def run_ddlcore(statements: list[str]) -> tuple[float, list[tuple[float, str]], int]:
    parser = ddlcore.get_dialect("mysql").parser(lenient=True)
    tables = parser.new_tables()
    tables.current_database = "bench"
    times = []
    parsed = 0
    t0 = time.perf_counter()
    for s in statements:
        a = time.perf_counter()
        r = parser.apply(s, tables)
        times.append((time.perf_counter() - a, s))
        parsed += r.status != "skipped"
    return time.perf_counter() - t0, times, parsed


def run_sqlglot(statements: list[str]) -> float:
    import sqlglot
    t0 = time.perf_counter()
    for s in statements:
        try:
            sqlglot.parse(s, read="mysql")
        except Exception:  # noqa: BLE001 - the baseline's failures still cost time
            pass
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=3)
    args = ap.parse_args()
    root = Path(os.environ.get("DDLCORE_CORPORA") or REPO.parent / "shared" / "corpora")
    if not root.is_dir():
        print(f"corpora not found at {root}", file=sys.stderr)
        return 2
    stmts = corpus_statements(root)
    cold, _, parsed = run_ddlcore(stmts)
    warm = []
    slow: list[tuple[float, str]] = []
    for _ in range(args.passes):
        t, times, _ = run_ddlcore(stmts)
        warm.append(t)
        slow = sorted(times, reverse=True)[:5]
    run_sqlglot(stmts)  # warm it too
    glot = [run_sqlglot(stmts) for _ in range(args.passes)]
    w, g = statistics.median(warm), statistics.median(glot)
    n = len(stmts)
    print(f"statements: {n} ({parsed} parsed, {n - parsed} skipped by the filter)")
    print(f"ddlcore cold first pass : {n / cold:9.0f} statements/s")
    print(f"ddlcore warm (median)   : {n / w:9.0f} statements/s")
    print(f"sqlglot (median)        : {n / g:9.0f} statements/s")
    print(f"ratio ddlcore/sqlglot   : {g / w:9.2f}x")
    print("slowest statements (warm):")
    for t, s in slow:
        print(f"  {t * 1000:7.1f} ms  {' '.join(s.split())[:90]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
