"""Parse throughput over the shared corpora, per dialect (MySQL and PostgreSQL), against
sqlglot as the baseline.

Prints, per dialect, statements per second for ddlcore (cold first pass and warm passes; every
statement of the accepted corpora, skipped ones included) and for ``sqlglot.parse(read=...)`` on
the same statements, measured in the same run, the ratios warm/sqlglot and cold/warm, and the
slowest statements.  A dialect whose plugin is not installed is skipped with a line saying so.
Run: ``python benchmarks/parse_corpus.py [--passes N] [--dialect mysql|postgres]``.
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


#: per dialect: (sqlglot dialect, corpus files under accepted/)
DIALECTS = {
    "mysql": ("mysql", lambda a: sorted((a / "debezium-mysql-connector").glob("*.sql"))
              + sorted((a / "guacamole" / "mysql").rglob("*.sql"))
              + sorted((a / "sakila-jooq").glob("mysql-*.sql")) + sorted((a / "test_db").glob("*.sql"))),
    "postgres": ("postgres", lambda a: sorted((a / "pagila").glob("*.sql"))
                 + sorted((a / "guacamole" / "postgresql").rglob("*.sql"))
                 + sorted((a / "sakila-jooq").glob("postgres-*.sql"))
                 + sorted((a / "sakila-jooq").glob("yugabytedb-*.sql"))),
}


def corpus_statements(root: Path, dialect: str = "mysql") -> list[str]:
    parser = ddlcore.get_dialect(dialect).parser()
    files = DIALECTS[dialect][1](root / "accepted")
    out: list[str] = []
    for f in files:
        out += [s.text for s in parser.split(f.read_text(encoding="utf-8", errors="replace"))]
    return out


def run_ddlcore(statements: list[str], dialect: str = "mysql") -> tuple[float, list[tuple[float, str]], int]:
    parser = ddlcore.get_dialect(dialect).parser(lenient=True)
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


def run_sqlglot(statements: list[str], read: str = "mysql") -> float:
    import logging

    import sqlglot
    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # its "falling back to Command" notes
    t0 = time.perf_counter()
    for s in statements:
        try:
            sqlglot.parse(s, read=read)
        except Exception:  # noqa: BLE001 - the baseline's failures still cost time
            pass
    return time.perf_counter() - t0


def bench(root: Path, dialect: str, passes: int) -> None:
    stmts = corpus_statements(root, dialect)
    cold, _, parsed = run_ddlcore(stmts, dialect)
    warm = []
    slow: list[tuple[float, str]] = []
    for _ in range(passes):
        t, times, _ = run_ddlcore(stmts, dialect)
        warm.append(t)
        slow = sorted(times, reverse=True)[:5]
    read = DIALECTS[dialect][0]
    run_sqlglot(stmts, read)  # warm it too
    glot = [run_sqlglot(stmts, read) for _ in range(passes)]
    w, g = statistics.median(warm), statistics.median(glot)
    n = len(stmts)
    print(f"== {dialect}: {n} statements ({parsed} parsed, {n - parsed} skipped by the filter)")
    print(f"ddlcore cold first pass : {n / cold:9.0f} statements/s")
    print(f"ddlcore warm (median)   : {n / w:9.0f} statements/s")
    print(f"sqlglot (median)        : {n / g:9.0f} statements/s  (read={read!r})")
    print(f"ratio warm/sqlglot      : {g / w:9.2f}x")
    print(f"ratio cold/warm         : {w / cold:9.2f}x")
    print("slowest statements (warm):")
    for t, s in slow:
        print(f"  {t * 1000:7.1f} ms  {' '.join(s.split())[:90]}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--dialect", choices=sorted(DIALECTS), action="append")
    args = ap.parse_args()
    root = Path(os.environ.get("DDLCORE_CORPORA") or REPO.parent / "shared" / "corpora")
    if not root.is_dir():
        print(f"corpora not found at {root}", file=sys.stderr)
        return 2
    for dialect in args.dialect or list(DIALECTS):
        try:
            ddlcore.get_dialect(dialect)
        except Exception as exc:  # noqa: BLE001 - DialectNotFound: say so and go on
            print(f"== {dialect}: skipped ({exc})")
            continue
        bench(root, dialect, args.passes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
