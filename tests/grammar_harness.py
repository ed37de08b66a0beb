"""Grammar harness: parse every table-changing statement of the MySQL corpora with the MySQL grammar.

Usage::

    python tests/grammar_harness.py [--gen GENERATED_DIR] [FILES...] [--raw] [--verbose]

GENERATED_DIR holds MySqlLexer.py / MySqlParser.py generated from grammars/mysql (default: the
installed ``ddlcore_mysql/_generated``; to try a grammar change without reinstalling:
``java -cp antlr4-4.13.2.jar org.antlr.v4.Tool -Dlanguage=Python3 -visitor -no-listener
-Xexact-output-dir -o /tmp/gen grammars/mysql/*.g4``). Without FILES it reads the accepted
MySQL corpora under ``../shared/corpora/accepted`` (``--raw``: the raw corpora instead).

Each statement is parsed with SLL prediction and a bail-out error strategy, then with LL if SLL
failed, twice (cold, then warm); the report gives counts, failures, and the slowest warm parses.

The splitter here is deliberately small and throwaway (DELIMITER lines, quotes, comments,
versioned comments opened); it is not the product's splitter.
"""

from __future__ import annotations

import glob
import os
import re
import sys
import time

CORPORA = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "corpora")
ACCEPTED = [
    "accepted/debezium-mysql-connector/*.accepted.sql",
    "accepted/guacamole/mysql/**/*.accepted.sql",
    "accepted/sakila-jooq/mysql-*.accepted.sql",
    "accepted/test_db/*.accepted.sql",
]
RAW = [
    "debezium-mysql-connector/*",
    "guacamole/mysql/**/*.sql",
    "sakila-jooq/mysql-*",
    "test_db/*.sql",
]

_VERSIONED = re.compile(r"/\*(?:!|M!)\d*(.*?)\*/", re.S)

# Statement kinds the parser must accept (leading words, after versioned comments are opened).
_WANTED = re.compile(
    r"""^\s*(?:
        CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMPORARY\s+)?TABLE\b
      | CREATE\s+(?:OR\s+REPLACE\s+)?(?:DATABASE|SCHEMA)\b
      | CREATE\s+(?:OR\s+REPLACE\s+)?(?:ONLINE\s+|OFFLINE\s+)?(?:UNIQUE\s+|FULLTEXT\s+|SPATIAL\s+)?INDEX\b
      | CREATE\s+(?:OR\s+REPLACE\s+)?(?:ALGORITHM\s*=\s*\w+\s+)?(?:DEFINER\s*=\s*\S+\s+)?(?:SQL\s+SECURITY\s+\w+\s+)?VIEW\b
      | ALTER\s+(?:ONLINE\s+)?(?:IGNORE\s+)?TABLE\b
      | ALTER\s+(?:DATABASE|SCHEMA)\b
      | ALTER\s+(?:ALGORITHM\s*=\s*\w+\s+)?(?:DEFINER\s*=\s*\S+\s+)?(?:SQL\s+SECURITY\s+\w+\s+)?VIEW\b
      | DROP\s+(?:TEMPORARY\s+)?TABLES?\b
      | DROP\s+(?:DATABASE|SCHEMA|VIEW)\b
      | DROP\s+(?:ONLINE\s+|OFFLINE\s+)?INDEX\b
      | RENAME\s+TABLES?\b
      | TRUNCATE\b
      | USE\b
      | SET\s+(?:NAMES|CHARACTER\s+SET|CHARSET)\b
      | SET\s+(?:(?:GLOBAL|SESSION|LOCAL|PERSIST|PERSIST_ONLY)\s+|@@(?:\w+\.)?)?(?:character_set_\w+|collation_\w+)\s*:?=
    )""",
    re.I | re.X,
)


def split_statements(text: str):
    """Split a script into statements; honours DELIMITER, quotes and comments."""
    out = []
    delim = ";"
    buf = []
    i = 0
    n = len(text)
    line_start = True
    while i < n:
        if line_start:
            m = re.match(r"[ \t]*DELIMITER[ \t]+(\S+)[ \t]*(?:\r?\n|$)", text[i:], re.I)
            if m and not "".join(buf).strip():
                delim = m.group(1)
                i += m.end()
                continue
        c = text[i]
        line_start = False
        if text.startswith(delim, i):
            out.append("".join(buf))
            buf = []
            i += len(delim)
            continue
        if c in "'\"`":
            j = i + 1
            while j < n:
                if text[j] == "\\" and c != "`":
                    j += 2
                    continue
                if text[j] == c:
                    if j + 1 < n and text[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            buf.append(text[i : j + 1])
            i = j + 1
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            buf.append(text[i:j])
            i = j
            continue
        if c == "#" or (text.startswith("--", i) and (i + 2 >= n or text[i + 2] in " \t\r\n")):
            j = text.find("\n", i)
            j = n if j < 0 else j
            buf.append(text[i:j])
            i = j
            continue
        if c == "\n":
            line_start = True
        buf.append(c)
        i += 1
    out.append("".join(buf))
    return [s for s in out if s.strip()]


def _strip_comments_head(stmt: str) -> str:
    s = stmt
    while True:
        s = s.lstrip()
        if s.startswith("/*"):
            s = s[s.find("*/") + 2 :] if "*/" in s else ""
        elif s.startswith("#") or s.startswith("-- ") or s.startswith("--\n"):
            s = s[s.find("\n") + 1 :] if "\n" in s else ""
        else:
            return s


_NEXT_STATEMENT = re.compile(
    r"\n(?=[ \t]*(?:CREATE|ALTER|DROP|TRUNCATE|RENAME|USE|SET|INSERT|GRANT|SELECT)\b)", re.I
)


def split_on_lines(stmt: str):
    """Raw Debezium test files separate statements by newlines only: split at a line that starts
    with a statement keyword while no parenthesis is open (quotes are not tracked; good enough
    for the harness)."""
    parts, start, depth = [], 0, 0
    for i, c in enumerate(stmt):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "\n" and depth == 0 and _NEXT_STATEMENT.match(stmt, i):
            parts.append(stmt[start:i])
            start = i + 1
    parts.append(stmt[start:])
    return [p for p in parts if p.strip()]


def statements_of(path: str, by_lines: bool = False):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    stmts = split_statements(text)
    if by_lines:
        stmts = [p for s in stmts for p in split_on_lines(s)]
    for stmt in stmts:
        opened = _VERSIONED.sub(lambda m: m.group(1), stmt)
        head = _strip_comments_head(opened)
        if head and _WANTED.match(head):
            yield opened.strip()


class Grammar:
    def __init__(self, gen_dir: str):
        sys.path.insert(0, gen_dir)
        import antlr4  # noqa: F401
        from antlr4 import CommonTokenStream, InputStream
        from antlr4.error.ErrorListener import ErrorListener
        from antlr4.error.ErrorStrategy import BailErrorStrategy, DefaultErrorStrategy
        from antlr4.atn.PredictionMode import PredictionMode
        from MySqlLexer import MySqlLexer
        from MySqlParser import MySqlParser

        class Collect(ErrorListener):
            def __init__(self):
                self.errors = []

            def syntaxError(self, recognizer, offendingSymbol, line, column, msg, e):
                self.errors.append(f"{line}:{column} {msg}")

        self._ns = dict(
            CommonTokenStream=CommonTokenStream,
            InputStream=InputStream,
            BailErrorStrategy=BailErrorStrategy,
            DefaultErrorStrategy=DefaultErrorStrategy,
            PredictionMode=PredictionMode,
            MySqlLexer=MySqlLexer,
            MySqlParser=MySqlParser,
            Collect=Collect,
        )

    def parse(self, sql: str):
        """Return (tree or None, mode used 'SLL'|'LL', errors)."""
        ns = self._ns
        lexer = ns["MySqlLexer"](ns["InputStream"](sql))
        lexer.removeErrorListeners()
        tokens = ns["CommonTokenStream"](lexer)
        parser = ns["MySqlParser"](tokens)
        parser.removeErrorListeners()
        parser._interp.predictionMode = ns["PredictionMode"].SLL
        parser._errHandler = ns["BailErrorStrategy"]()
        try:
            return parser.ddlStatement(), "SLL", []
        except Exception:
            pass
        tokens.seek(0)
        parser.reset()
        collect = ns["Collect"]()
        parser.addErrorListener(collect)
        parser._interp.predictionMode = ns["PredictionMode"].LL
        parser._errHandler = ns["DefaultErrorStrategy"]()
        tree = parser.ddlStatement()
        return (None if collect.errors else tree), "LL", collect.errors


def main(argv):
    verbose = "--verbose" in argv
    raw = "--raw" in argv
    gen_dir = None
    if "--gen" in argv:
        i = argv.index("--gen")
        gen_dir = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if gen_dir is None:
        import ddlcore_mysql

        gen_dir = os.path.join(os.path.dirname(ddlcore_mysql.__file__), "_generated")
    files = [a for a in argv if not a.startswith("--")]
    if not files:
        for pat in RAW if raw else ACCEPTED:
            files += sorted(glob.glob(os.path.join(CORPORA, pat), recursive=True))
        files = [f for f in files if os.path.isfile(f)]
    g = Grammar(gen_dir)
    stmts = [(f, s) for f in files for s in statements_of(f, by_lines=raw)]
    results = []
    t_cold0 = time.perf_counter()
    for f, s in stmts:
        g.parse(s)
    t_cold = time.perf_counter() - t_cold0
    for f, s in stmts:
        best = None
        for _ in range(3):  # best of three warm runs: the minimum hides GC pauses
            t0 = time.perf_counter()
            tree, mode, errors = g.parse(s)
            dt = time.perf_counter() - t0
            best = dt if best is None else min(best, dt)
        results.append((best, f, s, tree, mode, errors))
    ok_sll = sum(1 for r in results if r[3] is not None and r[4] == "SLL")
    ok_ll = sum(1 for r in results if r[3] is not None and r[4] == "LL")
    failed = [r for r in results if r[3] is None]
    total_warm = sum(r[0] for r in results)
    print(f"files: {len(files)}  statements: {len(results)}  bytes: {sum(len(s) for _, s in stmts)}")
    print(f"parsed SLL: {ok_sll}  LL fallback: {ok_ll}  failed: {len(failed)}")
    print(f"cold pass: {t_cold:.2f}s  warm pass (best of 3 per statement): {total_warm:.2f}s "
          f"({len(results) / total_warm:.0f} stmt/s)")
    print("slowest warm parses:")
    for dt, f, s, tree, mode, errors in sorted(results, key=lambda r: -r[0])[:8]:
        head = " ".join(s.split())[:90]
        print(f"  {dt * 1000:7.1f} ms {mode:3} {len(s):6} B  {os.path.basename(f)}: {head}")
    for dt, f, s, tree, mode, errors in failed:
        print(f"FAILED {os.path.relpath(f, CORPORA)}: {errors[:2]}")
        print("   " + (s if verbose else " ".join(s.split())[:300]))
    for dt, f, s, tree, mode, errors in results:
        if tree is not None and mode == "LL":
            print(f"LL-ONLY {os.path.relpath(f, CORPORA)}: {' '.join(s.split())[:200]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
