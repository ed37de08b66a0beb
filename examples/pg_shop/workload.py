"""The "pg_shop" workload: a small, deterministic life of a PostgreSQL 15 database, in two phases.

``setup(conn, record)`` creates, in the connected database, an enum ``tier``, a domain
``email_address``, a schema ``archive`` and the tables that exist *before* a capture starts, and
fills them; ``run(conn, record)`` then changes rows while the schema changes under them: columns
added, dropped, renamed and retyped (``ALTER COLUMN TYPE ... USING``, with a row right after it
in the same transaction), an enum label added, a domain changed, a table renamed and moved to
another schema, several DDL statements in one query string, a DDL with no row after it, rows
whose TOASTed values an update leaves unchanged, a TRUNCATE.

After every row change the workload calls ``record(schema, table, op, pk, row, columns)``:
``op`` is ``"c"``, ``"u"``, ``"d"`` (``"r"`` for the rows ``setup`` leaves, what an initial
snapshot reads; ``"t"`` for a truncate, ``pk`` and ``row`` ``None``); ``row`` is the row as
the server returns it to ``SELECT * ... WHERE <pk> = ...`` right after the change — every value
as the server's **text** (its output function, with the session settings ``SESSION``), in column
order — or ``None`` for a delete; ``columns`` are ``(column_name, data_type, udt_name,
format_type)`` of that moment (``information_schema.columns`` and ``format_type``).  Those are
what a consumer of the change log must end up with.

The connection is a psycopg 3 connection with autocommit on, opened with ``SESSION``'s
settings (``connect_options()``).  The workload writes literal values only (no ``now()``), so the
change log differs between recordings only in commit times and LSNs.

Types covered: integer, bigint at its maximum, numeric (with NaN), text (TOASTed), varchar,
a domain over varchar, an enum and an array of it, boolean, date, timestamp(3), timestamptz,
interval, uuid, jsonb, bytea, int[] (with NULL elements), money.

Used by ``examples/pg_shop/record.py`` (writes ``changelog.jsonl``) and the PostgreSQL end-to-end
test.  No third-party imports: the caller brings psycopg.
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["SESSION", "PRIMARY_KEYS", "setup", "run", "connect_options", "select_row", "Record"]

#: the session settings of the workload's connection (the capture uses the same ones)
SESSION = {"DateStyle": "ISO", "IntervalStyle": "postgres", "TimeZone": "UTC", "extra_float_digits": "3",
           "bytea_output": "hex"}
#: the primary-key column of every table the workload writes (by the name it has at the time)
PRIMARY_KEYS = {"customers": "id", "orders": "id", "purchases": "id", "products": "sku"}

#: ``record(schema, table, op, pk, row_or_None, columns)``
Record = Callable[[str, str, str, Any, "list[str | None] | None", "list[tuple[str, str, str, str]]"], None]

BIGINT_MAX = 2 ** 63 - 1
#: a text value that is stored out of line (TOASTed): long and incompressible
BIG_TEXT = "(SELECT string_agg(md5(i::text), '') FROM generate_series(1, 300) i)"

SCHEMA = [
    "CREATE TYPE tier AS ENUM ('basic', 'gold')",
    "CREATE DOMAIN email_address AS varchar(120) CHECK (VALUE LIKE '%@%')",
    "CREATE SCHEMA archive",
    """CREATE TABLE customers (
      id          integer PRIMARY KEY,
      email       email_address NOT NULL,
      name        varchar(80),
      level       tier NOT NULL DEFAULT 'basic',
      past_levels tier[],
      bio         text,
      vip         boolean NOT NULL DEFAULT false,
      birthday    date,
      created_at  timestamp(3) NOT NULL,
      last_login  timestamptz
    )""",
    """CREATE TABLE orders (
      id          bigint PRIMARY KEY,
      customer_id integer NOT NULL,
      total       numeric(10,2) NOT NULL DEFAULT 0,
      ratio       numeric,
      placed      date NOT NULL,
      wait        interval,
      token       uuid,
      meta        jsonb,
      blob        bytea,
      qty         integer NOT NULL DEFAULT 1
    )""",
    """CREATE TABLE products (
      sku         varchar(20) PRIMARY KEY,
      title       text NOT NULL,
      price       money,
      stock       integer,
      sizes       int[]
    )""",
]

SEED = [
    ("customers", 1,
     "INSERT INTO customers VALUES (1, 'ann@example.com', 'Ann Café', 'gold', '{basic}', "
     f"'likes ☕ ' || {BIG_TEXT}, true, '1990-02-28', '2024-01-02 03:04:05.12', '2024-06-01 12:00:00+02')"),
    ("customers", 2,
     "INSERT INTO customers (id, email, name, created_at) VALUES (2, 'bob@example.com', 'Bob Naïve', "
     "'2024-01-03 10:00:00.001')"),
    ("customers", 3,
     "INSERT INTO customers VALUES (3, 'chloé@example.com', 'Chloë Ørsted', 'basic', '{}', '🦄 unicorn fan', "
     "false, NULL, '2024-01-04 23:59:59.999', '1970-01-01 00:00:01+00')"),
    ("orders", 10,
     "INSERT INTO orders VALUES (10, 1, 12.50, 0.5, '2024-02-29', '1 day 02:00:00', "
     "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{\"note\": \"für dich 🎁\", \"n\": [1, 2]}', '\\x00ff', 2)"),
    ("orders", 11,
     "INSERT INTO orders VALUES (11, 2, 0.99, 'NaN', '2024-03-01', '-01:30:00', NULL, NULL, NULL, 1)"),
    ("orders", BIGINT_MAX,
     f"INSERT INTO orders VALUES ({BIGINT_MAX}, 3, 99999999.99, 1e-20, '2024-12-31', '3 mons', NULL, '[]', '\\x', 7)"),
    ("products", "mug", "INSERT INTO products VALUES ('mug', 'Tasse « café »', 7.90, 120, '{1,2,NULL}')"),
    ("products", "tee", "INSERT INTO products VALUES ('tee', 'T-shirt naïve', 19.00, NULL, NULL)"),
]


def connect_options() -> str:
    """The libpq ``options`` that give a connection ``SESSION``'s settings."""
    return " ".join(f"-c {k}={v}" for k, v in SESSION.items())


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def columns(conn: Any, schema: str, table: str) -> list[tuple[str, str, str, str]]:
    """``(column_name, data_type, udt_name, format_type)`` of a table, in column order."""
    return [tuple(r) for r in conn.execute(
        "SELECT c.column_name, c.data_type, c.udt_name, format_type(a.atttypid, a.atttypmod) "
        "FROM information_schema.columns c JOIN pg_attribute a ON a.attrelid = (quote_ident(c.table_schema) "
        "|| '.' || quote_ident(c.table_name))::regclass AND a.attname = c.column_name "
        "WHERE c.table_schema = %s AND c.table_name = %s ORDER BY c.ordinal_position", (schema, table)).fetchall()]


def _text_rows(conn: Any, sql: str, args: Any = None) -> list[list[str | None]]:
    """Rows as the server's text (the wire result, no client-side conversion)."""
    res = conn.execute(sql, args).pgresult
    return [[None if (v := res.get_value(r, c)) is None else bytes(v).decode("utf-8") for c in range(res.nfields)]
            for r in range(res.ntuples)]


def select_row(conn: Any, schema: str, table: str, pk: Any) -> list[str | None] | None:
    """``SELECT * FROM schema.table WHERE <pk> = pk`` as server text, or None."""
    rows = _text_rows(conn, f"SELECT * FROM {_ident(schema)}.{_ident(table)} WHERE {_ident(PRIMARY_KEYS[table])} "
                            f"= %s", (pk,))
    assert len(rows) <= 1, (schema, table, pk, rows)
    return rows[0] if rows else None


def setup(conn: Any, record: Record | None = None) -> None:
    """Create the types, schema and tables, insert the seed rows; report every row the tables
    hold at the end as ``record(schema, table, "r", pk, row, columns)``."""
    for sql in SCHEMA:
        conn.execute(sql)
    for _table, _pk, sql in SEED:
        conn.execute(sql)
    if record is not None:
        for table in ("customers", "orders", "products"):
            cols = columns(conn, "public", table)
            pk_at = [c[0] for c in cols].index(PRIMARY_KEYS[table])
            for row in _text_rows(conn, f"SELECT * FROM {table} ORDER BY {PRIMARY_KEYS[table]}"):
                record("public", table, "r", row[pk_at], row, cols)


def run(conn: Any, record: Record) -> None:
    """The life of the shop after the capture started: row changes interleaved with DDL."""
    where = {"customers": "public", "orders": "public", "products": "public"}

    def change(table: str, op: str, pk: Any, sql: str, *more: str) -> None:
        """Run ``sql`` (and ``more`` statements) in one transaction; record the row after it."""
        if more:
            conn.execute("BEGIN")
        n = conn.execute(sql).rowcount
        assert n == 1, f"{sql!r} changed {n} rows"
        schema = where[table]
        row = select_row(conn, schema, table, pk)
        assert (row is None) == (op == "d"), (table, op, pk, row)
        record(schema, table, op, str(pk), row, columns(conn, schema, table))
        for statement in more:
            conn.execute(statement)
        if more:
            conn.execute("COMMIT")

    # -- plain row changes on the snapshotted schema -------------------------------------------
    change("customers", "c", 4,
           "INSERT INTO customers VALUES (4, 'zoe@example.com', 'Zoë', 'basic', '{gold,basic}', "
           "'emoji 😀👍🏽 and 日本語', true, '2000-01-01', '2024-06-10 06:13:20.5', '2024-06-10 06:13:20+00')")
    change("orders", "c", 12,
           "INSERT INTO orders VALUES (12, 4, 1234.56, -0.001, '2024-06-10', '00:00:01', NULL, '{\"a\": null}', "
           "'\\xdeadbeef', 3)")
    # the TOASTed bio is left unchanged: the stream does not carry it
    change("customers", "u", 1, "UPDATE customers SET level = 'basic', last_login = '2024-06-10 23:45:00+00' WHERE id = 1")
    change("orders", "u", BIGINT_MAX, f"UPDATE orders SET total = 0.01, meta = '{{\"k\": [true]}}' WHERE id = {BIGINT_MAX}")
    change("orders", "d", 10, "DELETE FROM orders WHERE id = 10")

    # -- add a column; a DDL with no row after it in its transaction -----------------------------
    conn.execute("ALTER TABLE customers ADD COLUMN phone varchar(20)")
    change("customers", "u", 2, "UPDATE customers SET phone = '+33 1 23 45 67 89', vip = true WHERE id = 2")

    # -- an enum label added; the domain changed (NOT NULL, then renamed) --------------------------
    conn.execute("ALTER TYPE tier ADD VALUE 'platinum'")
    change("customers", "u", 3, "UPDATE customers SET level = 'platinum', past_levels = '{basic,platinum}' WHERE id = 3")
    conn.execute("ALTER DOMAIN email_address SET NOT NULL")
    conn.execute("ALTER DOMAIN email_address RENAME TO email")
    change("customers", "c", 5,
           "INSERT INTO customers (id, email, name, bio, created_at) VALUES (5, 'eve@example.com', 'Ève', '', "
           "'2024-06-10 12:00:00.5')")

    # -- retype a column (USING), with a row right after it in the same transaction ---------------
    conn.execute("BEGIN")
    conn.execute("ALTER TABLE orders ALTER COLUMN total TYPE text USING total::text || ' EUR'")
    n = conn.execute("INSERT INTO orders (id, customer_id, total, placed) VALUES (13, 5, '7.125 EUR', '2024-06-12')").rowcount
    assert n == 1
    record("public", "orders", "c", "13", select_row(conn, "public", "orders", 13), columns(conn, "public", "orders"))
    conn.execute("COMMIT")

    # -- drop and rename columns: several DDL statements in one query string --------------------
    conn.execute("ALTER TABLE orders DROP COLUMN wait; ALTER TABLE orders RENAME COLUMN qty TO quantity; "
                 "ALTER TABLE orders ADD COLUMN coupon varchar(12)")
    change("orders", "u", 12, "UPDATE orders SET quantity = 4, coupon = 'ÉTÉ24' WHERE id = 12")

    # -- an update that leaves a TOASTed value unchanged, after the schema changed ---------------
    change("customers", "u", 1, "UPDATE customers SET phone = '555-0100' WHERE id = 1")

    # -- rename the table, then move it to another schema --------------------------------------
    conn.execute("ALTER TABLE orders RENAME TO purchases")
    where["purchases"] = "public"
    change("purchases", "c", 14, "INSERT INTO purchases (id, customer_id, total, placed, meta) VALUES "
                                 "(14, 3, '0 EUR', '2025-01-01', '{\"emoji\": \"🚀\"}')")
    conn.execute("ALTER TABLE purchases SET SCHEMA archive")
    where["purchases"] = "archive"
    change("purchases", "u", 14, "UPDATE archive.purchases SET coupon = 'X' WHERE id = 14",
           f"DELETE FROM archive.purchases WHERE id = {BIGINT_MAX}")
    record("archive", "purchases", "d", str(BIGINT_MAX), None, columns(conn, "archive", "purchases"))

    # -- products: an array column retyped, a delete, a truncate ---------------------------------
    change("products", "u", "mug", "UPDATE products SET stock = 0, sizes = '{{1,2},{3,NULL}}' WHERE sku = 'mug'")
    change("products", "d", "tee", "DELETE FROM products WHERE sku = 'tee'")
    conn.execute("TRUNCATE products")
    record("public", "products", "t", None, None, columns(conn, "public", "products"))
    change("products", "c", "cup", "INSERT INTO products VALUES ('cup', 'Tasse ☕ 🍵', 4.50, 7, '{}')")
    change("customers", "d", 2, "DELETE FROM customers WHERE id = 2")
    conn.execute("ALTER TABLE customers DROP COLUMN birthday")
    change("customers", "u", 5, "UPDATE customers SET last_login = '2038-01-19 03:14:08+00', vip = false WHERE id = 5")
    conn.execute("ALTER TABLE customers ADD COLUMN loyalty integer DEFAULT 0")  # no row after it
