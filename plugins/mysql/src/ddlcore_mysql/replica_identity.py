"""One ``server_id``, one capture: what a MySQL/MariaDB capture does when another replica
takes its ``server_id``.

Owns: recognising the source's "same server_id" refusal and the capture's one-line error for
it.  Must not know: the binlog events, the change log.

The source knows a replica by its ``server_id`` alone.  When a second connection asks for a
binlog dump with a ``server_id`` that is already streaming, the source ends the older dump
(MariaDB ``kill_zombie_dump_threads``, sql/sql_repl.cc) and the older connection receives
``ER_SLAVE_SAME_ID`` — MariaDB error 4052, "A slave with the same server_uuid/server_id is
already connected" (MySQL: error 1236 with "... the same server_uuid/server_id as this
slave").  That is not a lost connection: reconnecting would end the other capture's dump in
turn, and the two would knock each other off for as long as they retry.  So the older capture
stops at its last checkpoint (nothing is lost: it resumes from there once it has a
``server_id`` of its own) with an error naming the ``server_id`` and its directory.

Why not a check before streaming: the dump connection would have to register as a replica
(``COM_REGISTER_SLAVE``, ``SHOW SLAVE HOSTS``) to be visible with an identity.  Tried with
``report_host = "ddlcore <epoch>"``: the capture's reconnect after a MariaDB 10.11 restart
(``tests/capture/test_no_loss.py::test_a_restarting_server_is_reconnected_from_the_checkpoint``)
then received no row after the restart (cause not established), so the capture does not
register.
"""

from __future__ import annotations

__all__ = ["is_same_server_id", "same_server_id_message"]

#: MariaDB's ER_SLAVE_SAME_ID
_MARIADB_SAME_ID = 4052
#: MySQL's ER_MASTER_FATAL_ERROR_READING_BINLOG, with this text when another replica took the id
_MYSQL_FATAL_READING = 1236
_MYSQL_TEXT = "same server_uuid/server_id"


def is_same_server_id(exc: BaseException) -> bool:
    """Whether ``exc`` (from the binlog dump connection) is the source ending this dump because
    another replica connected with the same ``server_id``."""
    import pymysql

    if not isinstance(exc, pymysql.err.OperationalError) or not exc.args:
        return False
    code, text = exc.args[0], str(exc.args[-1])
    return code == _MARIADB_SAME_ID or (code == _MYSQL_FATAL_READING and _MYSQL_TEXT in text)


def same_server_id_message(server_id: int, directory: str, position: str) -> str:
    """The capture's one-line error when its dump was ended by another replica (module
    docstring)."""
    return (f"server_id {server_id}: another replica connected to the source with this server_id, and the source "
            f"ended this capture's binlog dump (one server_id, one replica); this capture into {directory} stopped "
            f"at its checkpoint {position}: give each capture its own --server-id")
