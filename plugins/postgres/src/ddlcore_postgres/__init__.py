"""ddlcore's PostgreSQL plugin (distribution ``ddlcore-postgres``, entry point ``postgres``).

``capture`` / ``capture_cli``: ``ddlcore capture postgres`` (extra ``[capture]``: psycopg2),
with ``event_trigger`` (the DDL written into the WAL), ``pgoutput`` (the stream's messages),
``catalog`` (catalog descriptions → the table model) and ``relations`` (row images)."""
