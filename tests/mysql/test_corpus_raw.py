"""Every raw MySQL corpus file (not only the statements a server accepted) goes through the
parser in lenient mode quickly: a result or recorded errors, never a hang or a crash."""

from __future__ import annotations

import time

import pytest

import ddlcore


def test_raw_corpus_files_parse_leniently_in_bounded_time(corpora):
    files = sorted((corpora / "debezium-mysql-connector").glob("*")) + sorted((corpora / "test_db").glob("*.sql")) \
        + sorted((corpora / "sakila-jooq").glob("mysql-*.sql")) + sorted((corpora / "guacamole" / "mysql").rglob("*.sql"))
    assert files
    parser = ddlcore.get_dialect("mysql").parser(lenient=True)
    for f in files:
        t0 = time.perf_counter()
        result = parser.parse(f.read_text(encoding="utf-8", errors="replace"), database="corpus")
        took = time.perf_counter() - t0
        assert took < 10, f"{f.name}: {took:.1f}s"
        assert len(result.statements) > 0, f.name
        for err in result.errors:
            assert err.line is not None and err.statement, f.name
