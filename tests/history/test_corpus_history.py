"""Every MySQL corpus file recorded as a history through the real parser (lenient): after every
statement, the model the history restores equals the parser's own model after the same
prefix, and reopening the history changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

import ddlcore
from ddlcore.history import SchemaHistory

from .conftest import mysql_available


def _files() -> list[Path | None]:
    """The corpus files, or ``[None]`` without the corpora: one test that the ``corpora``
    fixture skips with its reason (an empty parameter set would skip without it)."""
    from tests.conftest import corpora_dir
    from tests.servers.replay_corpora import mysql_corpus_files

    root = corpora_dir()
    return mysql_corpus_files(root) if root else [None]


@pytest.mark.parametrize("path", _files(), ids=lambda p: f"{p.parent.name}/{p.name}" if p else "no-corpora")
def test_history_of_a_corpus_file_matches_its_prefixes(tmp_path, corpora, path):
    reason = mysql_available()
    if reason:
        pytest.skip(reason)
    from tests.servers.catalog import read_script

    mysql = ddlcore.get_dialect("mysql")
    reference = mysql.parser(lenient=True)
    tables = reference.new_tables()
    store = tmp_path / "h.db"
    h = SchemaHistory(store, parser=mysql.parser(), lenient=True)
    stmts = reference.split(read_script(path))
    snapshots = []
    for i, st in enumerate(stmts, 1):
        reference.apply(st, tables)
        snapshots.append(tables.to_json())
        h.record({"seq": i, "position": f"{path.name}:{st.line}", "ddl": st.text}, statement=st)
    for i, snap in enumerate(snapshots, 1):
        assert h.tables_at(i).to_json() == snap, f"model after statement {i} (line {stmts[i - 1].line})"
    h.close()
    with SchemaHistory(store) as again:
        assert again.tables_at().to_json() == snapshots[-1] if snapshots else True
