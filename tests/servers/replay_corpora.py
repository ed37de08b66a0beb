"""Replay the shared MySQL corpora against a throwaway MariaDB and compare which statements it
accepted with the recorded verdicts in ``corpora/accepted/``.

Each file runs on a clean server state (every non-system database and every non-builtin
account dropped first) in a fresh database ``corpus`` selected on a new connection, because
that is how the recorded verdicts were produced (e.g. the guacamole upgrade scripts and the
sakila drop script are recorded as run alone). ``--chain`` additionally replays the
guacamole schema followed by its upgrade scripts in one database, as a product would see them.

    python tests/servers/replay_corpora.py [--corpora DIR] [--chain] [-v]

Exit status 0 when every file agrees with its recorded verdicts, apart from the
``KNOWN_DIFFERENCES`` (privilege-dependent statements on system schemas).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from catalog import Accepted, normalize_statement, read_script, replay, split_script  # type: ignore
    from mariadb import MariaDbServer  # type: ignore
else:
    from .catalog import Accepted, normalize_statement, read_script, replay, split_script
    from .mariadb import MariaDbServer

_REPO = Path(__file__).resolve().parents[2]
DEFAULT_CORPORA = Path(os.environ.get("DDLCORE_CORPORA") or _REPO.parent / "shared" / "corpora")

# Verdicts the recorded run gave that a default-privileged account here does not reproduce:
# all touch system schemas or need a privilege the recording account evidently lacked
# (SET USER for a foreign DEFINER, global GRANT of ALL, DDL on `mysql`/`performance_schema`).
KNOWN_DIFFERENCES = {
    ("debezium-mysql-connector/mysql-test-init-5.6.ddl", "DROP DATABASE IF EXISTS performance_schema"),
    ("debezium-mysql-connector/mysql-test-init-5.6.ddl", "CREATE DATABASE performance_schema character set utf8"),
    ("debezium-mysql-connector/mysql-test-init-5.6.ddl", "CREATE DATABASE IF NOT EXISTS `mysql`"),
    ("debezium-mysql-connector/mysql-test-init-5.7.ddl", "DROP DATABASE IF EXISTS performance_schema"),
    ("debezium-mysql-connector/mysql-test-init-5.7.ddl", "CREATE DATABASE performance_schema character set utf8"),
    ("debezium-mysql-connector/mysql-test-init-5.7.ddl",
     "GRANT ALL PRIVILEGES ON *.* TO 'root'@'localhost' WITH GRANT OPTION"),
    ("debezium-mysql-connector/mysql-test-init-5.7.ddl", "CREATE DATABASE IF NOT EXISTS `mysql`"),
    ("debezium-mysql-connector/mysql-test-statements.ddl",
     "CREATE DEFINER = 'admin'@'localhost' PROCEDURE account_count() BEGIN SELECT 'Number of accounts:', "
     "COUNT(*) FROM mysql.user; END"),
}
BUILTIN_USERS = {("root", "localhost"), ("mariadb.sys", "localhost"), ("mysql", "localhost"),
                 ("ddlcore", "localhost"), ("ddlcore", "127.0.0.1"), ("PUBLIC", "")}
SYSTEM = ("information_schema", "mysql", "performance_schema", "sys")


def mysql_corpus_files(root: Path) -> list[Path]:
    """The MySQL corpus files, in the order the brief gives them."""
    files = sorted((root / "debezium-mysql-connector").glob("*"))
    files.append(root / "guacamole/mysql/schema/001-create-schema.sql")
    files += sorted((root / "guacamole/mysql/schema/upgrade").glob("*.sql"))
    files += sorted((root / "sakila-jooq").glob("mysql-*.sql"))
    files += sorted((root / "test_db").glob("*.sql"))
    return [f for f in files if f.is_file()]


@dataclass
class FileResult:
    path: str
    statements: int
    accepted: int
    expected_accepted: int
    disagreements: list[str] = field(default_factory=list)
    seconds: float = 0.0
    disagreeing_sql: list[str] = field(default_factory=list)  # normalised statement texts

    @property
    def agrees(self) -> bool:
        return not self.disagreements

    @property
    def unexplained(self) -> list[str]:
        """Disagreements not listed in KNOWN_DIFFERENCES."""
        return [d for d, sql in zip(self.disagreements, self.disagreeing_sql)
                if (self.path, sql) not in KNOWN_DIFFERENCES]


def reset_server(conn) -> None:
    """Drop every non-system database and every account the scripts created."""
    with conn.cursor() as cur:
        cur.execute("SET sql_log_bin = 0")
        cur.execute("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA")
        for (name,) in cur.fetchall():
            if name.lower() not in SYSTEM:
                cur.execute("DROP DATABASE `%s`" % name.replace("`", "``"))
        cur.execute("SELECT User, Host FROM mysql.user")
        for user, host in cur.fetchall():
            if (user, host) not in BUILTIN_USERS:
                cur.execute("DROP USER %s@%s", (user, host))
        cur.execute("CREATE DATABASE corpus")


def compare(results: list[Accepted], expected_sql: list[str]) -> tuple[list[str], list[str]]:
    """Walk the replay in order against the recorded accepted statements (also in order):
    a statement is 'expected accepted' when it is the next recorded one. Returns the
    messages and the normalised texts of the disagreeing statements."""
    expected = [normalize_statement(s) for s in expected_sql]
    problems: list[str] = []
    texts: list[str] = []
    k = 0
    for r in results:
        norm = normalize_statement(r.sql)
        exp = k < len(expected) and expected[k] == norm
        if exp:
            k += 1
        if exp != r.accepted:
            want = "accepted" if exp else "rejected"
            problems.append(f"line {r.line}: recorded {want}, server said "
                            f"{'ok' if r.accepted else f'{r.error_code} {r.error_message}'}: {norm[:100]}")
            texts.append(norm)
    for rest in expected[k:]:
        problems.append(f"recorded accepted but not replayed in order: {rest[:100]}")
        texts.append(rest)
    return problems, texts


def run(server: MariaDbServer, corpora: Path, verbose: bool = False) -> list[FileResult]:
    out: list[FileResult] = []
    admin = server.connect()
    try:
        for path in mysql_corpus_files(corpora):
            rel = path.relative_to(corpora)
            reset_server(admin)
            t0 = time.perf_counter()
            conn = server.connect("corpus")
            try:
                results = replay(conn, read_script(path))
            finally:
                conn.close()
            seconds = time.perf_counter() - t0
            acc_file = corpora / "accepted" / f"{rel}.accepted.sql"
            expected = [s.sql for s in split_script(read_script(acc_file))] if acc_file.exists() else []
            problems, texts = compare(results, expected)
            fr = FileResult(rel.as_posix(), len(results), sum(r.accepted for r in results), len(expected),
                            problems, seconds, texts)
            out.append(fr)
            if verbose:
                for r in results:
                    print("   ", r)
    finally:
        admin.close()
    return out


def run_chain(server: MariaDbServer, corpora: Path) -> list[tuple[str, int, int]]:
    """guacamole: the schema, then the upgrade scripts, all in one database."""
    admin = server.connect()
    reset_server(admin)
    admin.close()
    files = [corpora / "guacamole/mysql/schema/001-create-schema.sql"]
    files += sorted((corpora / "guacamole/mysql/schema/upgrade").glob("*.sql"))
    out = []
    for path in files:
        conn = server.connect("corpus")
        try:
            res = replay(conn, read_script(path))
        finally:
            conn.close()
        out.append((str(path.relative_to(corpora)), len(res), sum(r.accepted for r in res)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    ap.add_argument("--chain", action="store_true", help="also replay guacamole schema + upgrades in one database")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE",
                    help="extra mariadbd option, e.g. -o performance_schema=ON")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    options = dict(o.split("=", 1) if "=" in o else (o, None) for o in args.option)
    with MariaDbServer(options=options) as server:
        t_start = time.perf_counter() - t0
        t1 = time.perf_counter()
        results = run(server, args.corpora, args.verbose)
        t_replay = time.perf_counter() - t1
        chain = run_chain(server, args.corpora) if args.chain else []
    t_total = time.perf_counter() - t0

    stmts = sum(r.statements for r in results)
    agree_stmts = stmts - sum(len(r.disagreements) for r in results)
    for r in results:
        mark = "ok  " if r.agrees else ("KNOWN" if not r.unexplained else "DIFF")
        print(f"{mark} {r.path}: {r.statements} statements, {r.accepted} accepted "
              f"(recorded {r.expected_accepted}), {r.seconds:.2f} s")
        for d in r.disagreements:
            print(f"       {d}")
    for rel, n, ok in chain:
        print(f"chain {rel}: {n} statements, {ok} accepted")
    print(f"files agreeing: {sum(r.agrees for r in results)}/{len(results)}; statements agreeing: "
          f"{agree_stmts}/{stmts}; accepted {sum(r.accepted for r in results)}; "
          f"unexplained differences: {sum(len(r.unexplained) for r in results)}")
    print(f"server start {t_start:.2f} s, replay {t_replay:.2f} s, total {t_total:.2f} s")
    return 0 if not any(r.unexplained for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
