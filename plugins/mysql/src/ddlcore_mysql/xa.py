"""XA transactions in a binlog: their rows held until ``XA COMMIT``, durably.

Owns: naming an XA transaction (its XID), reading the XA statements of query events, the events
of the XA transaction being read (held, not written), and the prepared transactions not yet
committed or rolled back — each in a file of its own under ``DIR/xa-prepared/``, named in the
capture's checkpoint (``xa_prepared``: XID → file name), so that a restart between ``XA PREPARE``
and ``XA COMMIT`` loses nothing and repeats nothing.
Must not know: the change log's format or seq numbering (the capture writes what ``commit``
returns), the replication library's event classes.

What the binlog holds (MariaDB 10.5+; MySQL 8.0 manual 13.3.8 "XA Transactions" and
``XA_prepare_log_event``):

* MariaDB: a GTID event with ``FL_PREPARED_XA`` opens the transaction, its row events follow,
  ``XA END`` (query event), then an ``XA_prepare`` event; later, under another GTID, a query
  event ``XA COMMIT X'…',X'…',n`` or ``XA ROLLBACK X'…',X'…',n``.  ``XA COMMIT … ONE PHASE``
  is logged as an ordinary ``BEGIN … COMMIT`` transaction; an XA transaction rolled back
  before ``XA PREPARE`` is not logged.
* MySQL 8: a query event ``XA START X'…',X'…',n`` opens it, rows, ``XA END``, then the
  ``XA_prepare`` event — its ``one_phase`` flag set for ``XA COMMIT … ONE PHASE``, which then
  ends the transaction as committed; otherwise ``XA COMMIT`` / ``XA ROLLBACK`` follow later.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Iterable, Iterator

__all__ = ["XID_RX", "XaStatement", "xid_text", "parse_xa_statement", "PreparedTransactions",
           "PREPARED_DIR"]

#: the directory of the held prepared transactions, inside the capture's output directory
PREPARED_DIR = "xa-prepared"

#: one XID part as the server logs it (``X'6162'``) or as a client may write it (``'ab'``)
_PART = r"(?:X'([0-9A-Fa-f]*)'|'((?:[^'\\]|\\.|'')*)')"
#: an XID: ``gtrid [, bqual [, formatID]]`` (MySQL manual 13.3.8.1 "XA Transaction SQL Statements")
XID_RX = rf"{_PART}(?:\s*,\s*{_PART}(?:\s*,\s*(\d+))?)?"
_STATEMENT = re.compile(rf"\s*XA\s+(START|BEGIN|END|PREPARE|COMMIT|ROLLBACK)\s+{XID_RX}\s*(ONE\s+PHASE)?", re.I)


def xid_text(format_id: int, gtrid: bytes, bqual: bytes) -> str:
    """The canonical name of an XID, as the server logs it: ``X'<gtrid hex>',X'<bqual hex>',<formatID>``."""
    return f"X'{gtrid.hex()}',X'{bqual.hex()}',{int(format_id)}"


def _part(hex_part: str | None, quoted: str | None) -> bytes:
    if hex_part is not None:
        return bytes.fromhex(hex_part)
    return (quoted or "").replace("''", "'").encode("utf-8")


@dataclass(frozen=True)
class XaStatement:
    """An XA statement read from a query event: ``verb`` (``START``, ``END``, ``PREPARE``,
    ``COMMIT``, ``ROLLBACK``; ``BEGIN`` reads as ``START``), ``xid`` (``xid_text``) and
    ``one_phase`` (``XA COMMIT … ONE PHASE``)."""

    verb: str
    xid: str
    one_phase: bool = False


def parse_xa_statement(text: str) -> XaStatement | None:
    """``"XA COMMIT X'7831',X'',1"`` → ``XaStatement("COMMIT", "X'7831',X'',1")``; ``None`` for
    any other statement (``XA RECOVER`` included).  A missing bqual is empty and a missing
    formatID is 1, as the server defaults them."""
    m = _STATEMENT.match(text)
    if m is None:
        return None
    verb = m.group(1).upper()
    xid = xid_text(int(m.group(6) or 1), _part(m.group(2), m.group(3)), _part(m.group(4), m.group(5)))
    return XaStatement("START" if verb == "BEGIN" else verb, xid, m.group(7) is not None)


class PreparedTransactions:
    """The events of the XA transaction being read (``open`` … ``hold`` … ``prepare``) and the
    prepared transactions held until their end (``commit`` / ``rollback``).

    An event is the keyword arguments of ``ChangeLogOutput.emit`` (JSON values).  The events
    being read are spooled to ``DIR/xa-prepared/reading.tmp`` as they come (memory stays
    bounded whatever the transaction's size); ``prepare`` fsyncs it and renames it to
    ``<binlog file>.<position>.jsonl`` (the directory fsync'ed) before the checkpoint naming it
    can be written; ``files()`` is what the checkpoint records; ``load(files)`` gives back the
    state a checkpoint recorded; ``collect(files)`` removes the files a written checkpoint no
    longer names.  ``take_open`` / ``commit`` return the events as an iterator read from the
    file.  Raises ``OSError`` when a file cannot be written or read."""

    SPOOL = "reading.tmp"

    def __init__(self, out: Path):
        self.dir = Path(out) / PREPARED_DIR
        self._files: dict[str, str] = {}
        self._open: IO[str] | None = None

    @property
    def active(self) -> bool:
        """An XA transaction is being read: its events are held, not written."""
        return self._open is not None

    def open(self) -> None:
        self.discard()
        self.dir.mkdir(exist_ok=True)
        self._open = open(self.dir / self.SPOOL, "w", encoding="utf-8")

    def hold(self, event: dict[str, Any]) -> None:
        assert self._open is not None
        self._open.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")

    def discard(self) -> None:
        """Forget the transaction being read (rolled back before PREPARE, or a rewind)."""
        if self._open is not None:
            self._open.close()
            self._open = None
            (self.dir / self.SPOOL).unlink(missing_ok=True)

    def take_open(self) -> Iterator[dict[str, Any]]:
        """The events of the transaction being read, which ends (``XA COMMIT … ONE PHASE``)."""
        if self._open is None:
            return iter(())
        self._open.close()
        self._open = None
        return _read(self.dir / self.SPOOL, remove=True)

    def prepare(self, xid: str, where: str) -> None:
        """The transaction being read is prepared as ``xid`` at ``where`` (``file:pos``): its
        events are in their file, on disk, and held under ``xid``."""
        if self._open is None:
            self.open()
        fh, self._open = self._open, None
        assert fh is not None
        fh.flush()
        os.fsync(fh.fileno())
        fh.close()
        name = where.replace(":", ".").replace(os.sep, "_") + ".jsonl"
        os.replace(self.dir / self.SPOOL, self.dir / name)
        dfd = os.open(self.dir, os.O_RDONLY)  # the rename durable before a checkpoint names it
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
        self._files[xid] = name

    def held(self, xid: str) -> bool:
        return xid in self._files

    def commit(self, xid: str) -> Iterator[dict[str, Any]]:
        """The events of the prepared transaction ``xid``, which is no longer held (its file
        stays until ``collect``: a checkpoint before this one still names it).  Raises
        ``KeyError`` when it is not held."""
        return _read(self.dir / self._files.pop(xid))

    def rollback(self, xid: str) -> bool:
        """``xid`` is no longer held; whether it was."""
        return self._files.pop(xid, None) is not None

    def files(self) -> dict[str, str]:
        """XID → file name of every prepared transaction held (what a checkpoint records)."""
        return dict(self._files)

    def load(self, files: dict[str, str] | None) -> None:
        """Back to what a checkpoint recorded (``files``); the transaction being read is
        forgotten.  Raises ``FileNotFoundError`` naming a recorded file that is missing."""
        self.discard()
        self._files = dict(files or {})
        for xid, name in self._files.items():
            if not (self.dir / name).is_file():
                raise FileNotFoundError(f"{self.dir / name} (prepared XA transaction {xid}) is missing")

    def collect(self, files: Iterable[str]) -> None:
        """Remove the files (and temporary files) not in ``files`` — a written checkpoint's."""
        if not self.dir.is_dir():
            return
        keep = set(files)
        if self._open is not None:
            keep.add(self.SPOOL)
        for path in self.dir.iterdir():
            if path.name not in keep:
                path.unlink(missing_ok=True)


def _read(path: Path, remove: bool = False) -> Iterator[dict[str, Any]]:
    """The events of one file, one JSON object a line; the file removed after (``remove``)."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)
    if remove:
        path.unlink(missing_ok=True)
