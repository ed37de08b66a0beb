"""``ddlcore parse`` on input that is not DDL text: one line naming the file and the byte
offset, exit status 1, nothing printed on stdout (issue 11.10)."""

from __future__ import annotations

import gzip

import pytest
from click.testing import CliRunner

from ddlcore.cli import main

DDL = "CREATE TABLE t (id int);\n"


@pytest.mark.parametrize("name, data, message", [
    ("bin.sql", b"CREATE TABLE t (id int);\x00\x01\x02", "byte 24: a NUL byte"),
    ("z.sql.gz", gzip.compress(DDL.encode(), mtime=0)[:-12], "truncated gzip data"),
    ("zbin.sql.gz", gzip.compress(b"CREATE TABLE t (id int);\x00", mtime=0), "byte 24: a NUL byte"),
    ("u16.sql", DDL.encode("utf-16"), "byte 0: UTF-16 text"),
    ("latin.sql", "CREATE TABLE t (nom varchar(5) COMMENT 'é');".encode("latin-1"), "byte 40: not valid utf-8"),
])
def test_parse_refuses_what_is_not_text_naming_file_and_offset(tmp_path, name, data, message):
    path = tmp_path / name
    path.write_bytes(data)
    r = CliRunner().invoke(main, ["parse", "--dialect", "mysql", str(path)])
    assert r.exit_code == 1
    assert f"error: {path}: {message}" in r.output and '"tables"' not in r.output


def test_parse_reads_gzip_files_decompressed(tmp_path):
    path = tmp_path / "dump.sql.gz"
    path.write_bytes(gzip.compress(DDL.encode()))
    r = CliRunner().invoke(main, ["parse", "--dialect", "mysql", "--database", "d", str(path)])
    assert r.exit_code == 0, r.output
    assert '"name": "t"' in r.output


def test_parse_reads_the_declared_encoding(tmp_path):
    path = tmp_path / "u16.sql"
    path.write_bytes("CREATE TABLE t (nom varchar(5) COMMENT 'é');".encode("utf-16"))
    r = CliRunner().invoke(main, ["parse", "--dialect", "mysql", "--database", "d", "--encoding", "utf-16", str(path)])
    assert r.exit_code == 0, r.output
    assert '"comment": "é"' in r.output
    path = tmp_path / "l1.sql"
    path.write_bytes("CREATE TABLE t (nom varchar(5) COMMENT 'é');".encode("latin-1"))
    r = CliRunner().invoke(main, ["parse", "--dialect", "mysql", "--database", "d", "--encoding", "latin-1", str(path)])
    assert r.exit_code == 0 and '"comment": "é"' in r.output
