"""One replication slot, one capture: which capture owns a slot, and the only ways a capture
touches one (claim before creating it, check before streaming from it, drop only its own).

Owns: the claims in ``ddlcore.capture_slots`` (``sql/capture_install.sql``: ``claim_slot``,
``release_slot``) as the capture sees them.  Must not know: the change log, the stream.

Why a claim table: a capture that trusted its ``checkpoint.json`` alone dropped a slot another
capture was reading (the file named the slot before the slot was created, and a retry with the
same directory believed it), and the other capture lost rows without an error.  Ownership
must be proven by the slot's side.  A PostgreSQL 15 slot has no field a client can set (its
name, plugin and positions only; ``pg_replication_slots``), so the proof lives beside it in
the same database, written by the capture *before* it creates the slot:

* ``slot_name`` → the capture directory's ``epoch`` (the UUID in its checkpoint and source
  event) and the directory's path (messages only).  Claims are transactional and the row is
  locked while it is decided, so two captures racing for one name cannot both win.
* A slot name carrying the epoch would be atomic with the slot, but it would make the slot
  name the user chose (and monitors) meaningless; a logical message in the slot's stream is
  gone once it is confirmed, so it cannot prove anything at the next start.
* A crash between the claim and ``CREATE_REPLICATION_SLOT`` leaves a claim without a slot:
  the same directory's rerun finds it its own, and a claim whose slot no longer exists may be
  taken over by another capture (no position is lost with a slot that does not exist).
"""

from __future__ import annotations

from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Claim", "SlotClaims"]


@dataclass(frozen=True)
class Claim:
    """``ddlcore.claim_slot``'s answer: ``status`` (``new``, ``own``, ``taken``, ``other``,
    ``unclaimed``; ``sql/capture_install.sql``) and, for ``taken`` / ``other``, the previous
    claim's ``epoch`` and ``directory``."""

    status: str
    epoch: str | None = None
    directory: str | None = None


class SlotClaims:
    """The slot claims of one capture directory (``epoch``, ``directory``) in the database
    ``connection`` (a ``ConnectionSettings``) reaches.  ``error``: the exception class raised
    (the capture's ``CaptureError``); every message is one line naming the slot, this
    directory and, when another capture owns the slot, that capture's directory and epoch."""

    def __init__(self, connection: Any, epoch: str, directory: Path, error: type[Exception]):
        self.connection = connection
        self.epoch = epoch
        self.directory = str(Path(directory).resolve())
        self.error = error

    def _me(self) -> str:
        return f"this capture into {self.directory} (epoch {self.epoch})"

    def claim(self, slot: str) -> Claim:
        """Claim ``slot`` before creating it (or before dropping a stale slot of this
        directory's).  Returns the claim (``new``, ``own`` or ``taken``); raises ``error`` when
        another capture's slot of that name exists (``other``) or a slot exists that no
        capture claims (``unclaimed``)."""
        with closing(self.connection.connect()) as conn, conn.cursor() as cur:
            cur.execute("SELECT status, epoch, directory FROM ddlcore.claim_slot(%s, %s, %s)",
                        (slot, self.epoch, self.directory))
            got = Claim(*cur.fetchone())
            conn.commit()
        if got.status == "other":
            raise self.error(f"replication slot {slot} belongs to the capture into {got.directory} (epoch "
                             f"{got.epoch}); {self._me()} must not use it (one slot, one capture): choose another "
                             f"--slot")
        if got.status == "unclaimed":
            raise self.error(f"replication slot {slot} already exists and no ddlcore capture claims it: a first run "
                             f"creates its own slot (drop it with SELECT pg_drop_replication_slot('{slot}'), or "
                             f"choose another --slot)")
        return got

    def owner(self, slot: str) -> tuple[str | None, str | None, bool]:
        """``(epoch, directory, exists)``: the claim of ``slot`` (``None``s without one) and
        whether the slot exists."""
        with closing(self.connection.connect()) as conn, conn.cursor() as cur:
            cur.execute("SELECT c.epoch, c.directory, EXISTS (SELECT 1 FROM pg_catalog.pg_replication_slots r "
                        "WHERE r.slot_name = %s) FROM (SELECT 1) one LEFT JOIN ddlcore.capture_slots c "
                        "ON c.slot_name = %s", (slot, slot))
            epoch, directory, exists = cur.fetchone()
            conn.rollback()
        return epoch, directory, bool(exists)

    def check_owned(self, slot: str) -> None:
        """Before streaming from (and so advancing) ``slot``: it exists and its claim is this
        directory's epoch.  Raises ``error`` otherwise, naming the capture that owns it."""
        epoch, directory, exists = self.owner(slot)
        if epoch == self.epoch and exists:
            return
        if epoch is not None and epoch != self.epoch:
            raise self.error(f"replication slot {slot} belongs to the capture into {directory} (epoch {epoch}), "
                             f"not to {self._me()}: this directory's slot was dropped and its position is lost "
                             f"(one slot, one capture); capture into a new directory")
        if not exists:
            raise self.error(f"replication slot {slot} of {self._me()} does not exist (dropped?): its position "
                             f"is lost; capture into a new directory")
        raise self.error(f"replication slot {slot} is not claimed by {self._me()} and no ddlcore capture claims "
                         f"it: a capture drops or advances only a slot it created (docs/capture.md, \"One slot, "
                         f"one capture\")")

    def drop_own(self, slot: str, *, release: bool = True) -> bool:
        """Drop ``slot`` when its claim is this directory's epoch (a first run that was
        interrupted: its snapshot starts over with a new slot), and its claim too unless
        ``release`` is false (the slot is created again next).  Returns whether the claim was
        this directory's; another capture's slot, or one no capture claims, is left alone."""
        with closing(self.connection.connect()) as conn, conn.cursor() as cur:
            cur.execute("SELECT 1 FROM ddlcore.capture_slots WHERE slot_name = %s AND epoch = %s",
                        (slot, self.epoch))
            if cur.fetchone() is None:
                conn.rollback()
                return False
            cur.execute("SELECT pg_catalog.pg_drop_replication_slot(slot_name) FROM pg_catalog.pg_replication_slots "
                        "WHERE slot_name = %s AND database = current_database()", (slot,))
            if release:
                cur.execute("SELECT ddlcore.release_slot(%s, %s)", (slot, self.epoch))
            conn.commit()
        return True
