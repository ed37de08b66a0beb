"""Parse throughput over the shared corpora, per dialect (MySQL and PostgreSQL), against
sqlglot as the baseline.

Prints, per dialect, statements per second for ddlcore (cold first pass and warm passes; every
statement of the accepted corpora, skipped ones included) and for ``sqlglot.parse(read=...)`` on
the same statements, measured in the same run, the ratios warm/sqlglot and cold/warm, and the
slowest statements.  A dialect whose plugin is not installed is skipped with a line saying so.
Run: ``python benchmarks/parse_corpus.py [--passes N] [--dialect mysql|postgres]``.
The corpora are read from ``$DDLCORE_CORPORA`` or ``../shared/corpora`` beside the checkout;
without them the benchmark prints "skipped: corpora not found ..." and exits 0, except under
``CI=true``, where it exits 2.

How it measures (the machine is shared, so wall-clock time mostly measures the other jobs):
* times are CPU seconds of this process (``time.process_time``): the cost per core;
* warm passes of ddlcore and sqlglot alternate, and the medians are compared, so a change of
  load during the run hits both sides alike;
* the cold first pass runs in a fresh process (``--cold``: import the dialect, split the
  corpus, then time the first pass over it), so no cache of this process helps it; the median
  of ``COLD_RUNS`` such processes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import statistics
import sys
import time
from pathlib import Path

import ddlcore

REPO = Path(__file__).resolve().parent.parent
#: fresh processes timed for the cold first pass (the median is printed)
COLD_RUNS = 3


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
    t0 = time.process_time()
    for s in statements:
        a = time.process_time()
        r = parser.apply(s, tables)
        times.append((time.process_time() - a, s))
        parsed += r.status != "skipped"
    return time.process_time() - t0, times, parsed


def run_sqlglot(statements: list[str], read: str = "mysql") -> float:
    import logging

    import sqlglot
    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # its "falling back to Command" notes
    t0 = time.process_time()
    for s in statements:
        try:
            sqlglot.parse(s, read=read)
        except Exception:  # noqa: BLE001 - the baseline's failures still cost time
            pass
    return time.process_time() - t0


def cold_pass(root: Path, dialect: str, runs: int) -> float:
    """CPU seconds of ddlcore's first pass over the corpus in a fresh process (import and
    corpus splitting excluded); the median of ``runs`` processes."""
    times = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, __file__, "--cold", "--dialect", dialect],
                             env={**os.environ, "DDLCORE_CORPORA": str(root)},
                             capture_output=True, text=True, check=True)
        times.append(json.loads(out.stdout.strip().splitlines()[-1])["cold"])
    return statistics.median(times)


def bench(root: Path, dialect: str, passes: int) -> None:
    stmts = corpus_statements(root, dialect)
    cold = cold_pass(root, dialect, COLD_RUNS)
    read = DIALECTS[dialect][0]
    _, _, parsed = run_ddlcore(stmts, dialect)  # warm it up
    run_sqlglot(stmts, read)  # warm it too
    warm, glot = [], []
    slow: list[tuple[float, str]] = []
    for _ in range(passes):  # alternate, so that load changes hit both alike
        t, times, _ = run_ddlcore(stmts, dialect)
        warm.append(t)
        slow = sorted(times, reverse=True)[:5]
        glot.append(run_sqlglot(stmts, read))
    w, g = statistics.median(warm), statistics.median(glot)
    n = len(stmts)
    print(f"== {dialect}: {n} statements ({parsed} parsed, {n - parsed} skipped by the filter); "
          f"CPU time, median of {passes} alternating passes")
    print(f"ddlcore cold first pass : {n / cold:9.0f} statements/s  (fresh process, import excluded; "
          f"median of {COLD_RUNS} processes)")
    print(f"ddlcore warm (median)   : {n / w:9.0f} statements/s")
    print(f"sqlglot (median)        : {n / g:9.0f} statements/s  (read={read!r})")
    print(f"ratio warm/sqlglot      : {g / w:9.2f}x")
    print(f"ratio cold/warm         : {w / cold:9.2f}x")
    print("slowest statements (warm):")
    for t, s in slow:
        print(f"  {t * 1000:7.1f} ms  {' '.join(s.split())[:90]}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--cold", action="store_true",
                    help="only time the first pass of one dialect (run in a fresh process by the benchmark)")
    ap.add_argument("--dialect", choices=sorted(DIALECTS), action="append")
    args = ap.parse_args()
    root = Path(os.environ.get("DDLCORE_CORPORA") or REPO.parent / "shared" / "corpora")
    if not root.is_dir():
        where = f"corpora not found at {root} (set DDLCORE_CORPORA or place them in ../shared/corpora)"
        if os.environ.get("CI") == "true":  # CI always has them: a missing corpus is a failure there
            print(f"parse_corpus.py: {where}", file=sys.stderr)
            return 2
        print(f"parse_corpus.py: skipped: {where}")
        return 0
    if args.cold:
        dialect = (args.dialect or ["mysql"])[0]
        stmts = corpus_statements(root, dialect)
        print(json.dumps({"cold": run_ddlcore(stmts, dialect)[0]}))
        return 0
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
