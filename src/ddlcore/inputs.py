"""Input files as the commands read them: one reader for ``ddlcore parse``, ``history record``
and ``run``, so a file that is not what it should be gets the same one-line refusal everywhere.

Owns: reading a DDL file as text (encoding checked, gzip read transparently) and checking that
a change-log file is one (JSON Lines or Parquet, gzip complete) before anything is built from it.
Must not know: any dialect, click, pyspark.

Errors are ``InputError`` (a ``DdlCoreError`` and ``ValueError``) whose message is one line:
``FILE: byte N: what the bytes are, and what to do``.
"""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

from .errors import DdlCoreError

__all__ = ["InputError", "read_ddl_text", "check_change_log_file", "GZIP_MAGIC"]

GZIP_MAGIC = b"\x1f\x8b"
PARQUET_MAGIC = b"PAR1"

#: what the first bytes of a file say it is, when it is not text in the expected encoding
_MAGIC = ((b"PK\x03\x04", "a zip archive"),
          (b"\xff\xfe\x00\x00", "UTF-32 text (little endian BOM): use --encoding utf-32"),
          (b"\x00\x00\xfe\xff", "UTF-32 text (big endian BOM): use --encoding utf-32"),
          (b"\xff\xfe", "UTF-16 text (little endian BOM): use --encoding utf-16"),
          (b"\xfe\xff", "UTF-16 text (big endian BOM): use --encoding utf-16"))

#: how much of a change-log file is looked at to tell what it is
_HEAD = 1 << 16


class InputError(DdlCoreError, ValueError):
    """A file that is not the input it should be: ``path``, ``offset`` (byte offset, ``None``
    for the whole file) and ``reason``; the message is one line."""

    def __init__(self, path: str | os.PathLike, reason: str, offset: int | None = None):
        self.path, self.offset, self.reason = str(path), offset, reason
        where = f"{path}: byte {offset}: " if offset is not None else f"{path}: "
        super().__init__(where + reason)


def _gunzip(path: Path, data: bytes) -> bytes:
    """All of the gzip data ``data`` decompressed; ``InputError`` when it is corrupt or
    truncated (a file still being written or cut short by a copy)."""
    try:
        return gzip.decompress(data)
    except EOFError:
        raise InputError(path, f"truncated gzip data ({len(data)} bytes): the file ends before the "
                               f"end of its compressed stream") from None
    except (OSError, zlib.error) as exc:
        raise InputError(path, f"corrupt gzip data ({exc})") from None


def _utf16or32(encoding: str) -> bool:
    return encoding.lower().replace("_", "-").startswith(("utf-16", "utf16", "utf-32", "utf32"))


def read_ddl_text(path: str | os.PathLike, encoding: str = "utf-8") -> str:
    """The text of a DDL file in ``encoding``; a gzip file (by its first bytes, whatever its
    name) is decompressed first.  A UTF-8 byte-order mark is dropped.

    Raises ``InputError`` naming the file and the byte offset (in the decompressed data) for
    what is not text in that encoding: truncated or corrupt gzip data, a zip archive, a
    UTF-16/32 byte-order mark under another encoding, a NUL byte (binary data), bytes invalid in
    the encoding; ``LookupError`` for an unknown encoding."""
    p = Path(path)
    import codecs
    codecs.lookup(encoding)
    data = p.read_bytes()
    if data.startswith(GZIP_MAGIC):
        data = _gunzip(p, data)
    wide = _utf16or32(encoding)
    for magic, what in _MAGIC:
        if data.startswith(magic) and not (wide and "UTF-" in what):
            raise InputError(p, f"{what}, not DDL text", 0)
    if not wide:
        nul = data.find(b"\x00")
        if nul >= 0:
            raise InputError(p, f"a NUL byte: binary data, not DDL text in {encoding}", nul)
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise InputError(p, f"not valid {encoding} ({exc.reason}); give the file's encoding with "
                            f"--encoding", exc.start) from None
    return text[1:] if text.startswith("\ufeff") else text


def _check_gzip_stream(p: Path) -> bytes:
    """The first ``_HEAD`` decompressed bytes of the gzip file ``p``, after decompressing all of
    it (in chunks) to prove it complete."""
    head = b""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    read = 0
    try:
        with open(p, "rb") as fh:
            while True:
                chunk = fh.read(1 << 20)
                if not chunk:
                    break
                read += len(chunk)
                out = d.decompress(chunk)
                while d.eof and d.unused_data:  # concatenated gzip members (a rotated, appended file)
                    rest = d.unused_data
                    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
                    out += d.decompress(rest)
                if len(head) < _HEAD:
                    head += out[:_HEAD - len(head)]
    except zlib.error as exc:
        raise InputError(p, f"corrupt gzip data ({exc})") from None
    if read and not d.eof:
        raise InputError(p, f"truncated gzip data ({read} bytes): the file ends before the end of its "
                            f"compressed stream")
    return head


def check_change_log_file(path: str | os.PathLike, *, allow_array: bool = False) -> str:
    """What the change-log file ``path`` holds: ``"jsonl"`` (JSON Lines, gzip or not; also an
    empty file), ``"parquet"`` or, with ``allow_array``, ``"array"`` (a ``.json`` file holding one
    JSON array of events).  Reads the first 64 KB (a gzip file is decompressed whole, to find a
    truncated one before a run starts).

    Raises ``InputError`` (file, byte offset, what it is instead) for a file that is none of
    these: binary data (a NUL byte), UTF-16/32 text, a zip archive, gzip data in a file not
    named ``.gz`` (which Spark would read as text), truncated or corrupt gzip, a Parquet name
    without Parquet's magic bytes, text whose first character is not ``{``, or invalid UTF-8."""
    p = Path(path)
    name = p.name.lower()
    with open(p, "rb") as fh:
        first = fh.read(4)
    if name.endswith(".parquet"):
        if first != PARQUET_MAGIC:
            raise InputError(p, "not a Parquet file (no PAR1 magic bytes)", 0)
        return "parquet"
    if first.startswith(GZIP_MAGIC):
        if not name.endswith(".gz"):
            raise InputError(p, "gzip data in a file not named .gz: rename it to end in .gz", 0)
        head = _check_gzip_stream(p)
    elif name.endswith(".gz"):
        raise InputError(p, "not gzip data, although named .gz", 0)
    else:
        with open(p, "rb") as fh:
            head = fh.read(_HEAD)
    return _json_kind(p, head, allow_array)


def _json_kind(p: Path, head: bytes, allow_array: bool) -> str:
    for magic, what in _MAGIC:
        if head.startswith(magic):
            raise InputError(p, f"{what.split(':')[0]}, not a change log (JSON Lines in UTF-8)", 0)
    nul = head.find(b"\x00")
    if nul >= 0:
        raise InputError(p, "a NUL byte: binary data, not a change log (JSON Lines or Parquet)", nul)
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:  # not just a character cut by the 64 KB window
            raise InputError(p, f"not valid UTF-8 ({exc.reason}): a change log is UTF-8 JSON Lines",
                             exc.start) from None
        text = head[:exc.start].decode("utf-8")
    stripped = text.lstrip("\ufeff \t\r\n")
    if not stripped:
        return "jsonl"
    at = len(text.encode("utf-8")) - len(stripped.encode("utf-8"))
    if stripped[0] == "[" and allow_array:
        return "array"
    if stripped[0] != "{":
        what = "a JSON array: write one event per line (JSON Lines)" if stripped[0] == "[" else \
            f"text starting with {stripped[:20]!r}"
        raise InputError(p, f"{what}, not a change log (JSON Lines: one JSON object per line, or Parquet)", at)
    return "jsonl"
