"""The "shop" workload: a small, deterministic life of a MariaDB database, in two phases.

``setup(conn)`` creates the database ``shop`` and the tables that exist *before* a capture
starts, and fills them; ``run(conn, record)`` then changes rows while the schema changes under
them (columns added, dropped, modified and renamed, an ENUM's labels changed, a table converted
to utf8mb4, a table renamed).

After every row change ``run`` calls ``record(table, op, pk, row)``: ``op`` is ``"c"``,
``"u"`` or ``"d"``, ``row`` the row exactly as the server returns it to ``SELECT * ... WHERE
pk = ...`` right after the change (a ``dict`` column → pymysql value, in column order), or
``None`` for a delete.  Those are the values a consumer of the change log must end up with.
``setup(conn, record)`` reports the rows the tables hold when it ends as ``op="r"`` (what an
initial snapshot reads).

The connection is a pymysql connection with autocommit on and charset utf8mb4.  The session
runs with ``time_zone = TIME_ZONE`` (not UTC, so TIMESTAMP conversion is exercised: SELECT
shows wall time in that zone, the binlog holds UTC) and a fixed ``timestamp`` that advances by
one second per statement, so ``NOW()`` and the binlog event times are the same on every run.

Types covered: INT UNSIGNED and BIGINT UNSIGNED at their maximum, ENUM, SET (also the empty
set), VARCHAR in latin1 with non-ASCII text, utf8mb4 text with emoji, DECIMAL, DATETIME(3),
DATE, TIMESTAMP, TIME (negative and beyond a day), BIT(1), JSON, TINYINT(1).

Used by ``examples/shop/record.py`` (writes the committed change log ``changelog.jsonl``) and
``tests/e2e/test_shop_end_to_end.py``.  No third-party imports: the caller brings pymysql.
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["DATABASE", "TIME_ZONE", "START_TIMESTAMP", "PRIMARY_KEYS", "RENAMES", "setup", "run",
           "select_row", "select_all", "Record"]

DATABASE = "shop"
#: the session time zone of the workload (SELECT shows TIMESTAMP values in it)
TIME_ZONE = "+05:30"
#: ``SET timestamp``: the session clock of the first statement (2024-06-10 06:13:20 UTC)
START_TIMESTAMP = 1_718_000_000
#: the primary-key column of every table the workload writes (by the name it has at the time)
PRIMARY_KEYS = {"customers": "id", "orders": "id", "purchases": "id", "products": "sku"}
#: the tables ``run`` renames, ``(old name, new name)``
RENAMES = [("orders", "purchases")]

#: ``record(table, op, pk, row_or_None)``
Record = Callable[[str, str, Any, "dict[str, Any] | None"], None]

BIGINT_UNSIGNED_MAX = 2 ** 64 - 1
INT_UNSIGNED_MAX = 2 ** 32 - 1

SCHEMA = [
    f"CREATE DATABASE {DATABASE} DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
    f"USE {DATABASE}",
    """CREATE TABLE customers (
      id          INT UNSIGNED NOT NULL AUTO_INCREMENT,
      email       VARCHAR(120) NOT NULL,
      name        VARCHAR(80) CHARACTER SET latin1,
      tier        ENUM('basic','gold') NOT NULL DEFAULT 'basic',
      bio         TEXT,
      vip         TINYINT(1) NOT NULL DEFAULT 0,
      birthday    DATE,
      created_at  DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
      last_login  TIMESTAMP NULL DEFAULT NULL,
      PRIMARY KEY (id),
      UNIQUE KEY uq_email (email)
    ) ENGINE=InnoDB""",
    """CREATE TABLE orders (
      id          BIGINT UNSIGNED NOT NULL,
      customer_id INT UNSIGNED NOT NULL,
      total       DECIMAL(10,2) NOT NULL DEFAULT 0.00,
      flags       SET('gift','express','fragile') NOT NULL DEFAULT '',
      placed      DATE NOT NULL,
      pickup      TIME,
      shipped     BIT(1) NOT NULL DEFAULT b'0',
      meta        JSON,
      qty         INT UNSIGNED NOT NULL DEFAULT 1,
      PRIMARY KEY (id),
      KEY ix_customer (customer_id)
    ) ENGINE=InnoDB""",
    """CREATE TABLE products (
      sku         VARCHAR(20) NOT NULL,
      title       VARCHAR(100) NOT NULL,
      price       DECIMAL(8,2),
      stock       INT UNSIGNED,
      PRIMARY KEY (sku)
    ) ENGINE=InnoDB DEFAULT CHARSET=latin1""",
]

SEED_ROWS = [
    ("customers", 1,
     "INSERT INTO customers (id, email, name, tier, bio, vip, birthday, created_at, last_login) VALUES "
     "(1, 'ann@example.com', 'Ann Café', 'gold', 'likes ☕ and 🍰', 1, '1990-02-28', "
     "'2024-01-02 03:04:05.120', '2024-06-01 12:00:00')"),
    ("customers", 2,
     "INSERT INTO customers (id, email, name, bio, birthday, created_at) VALUES "
     "(2, 'bob@example.com', 'Bob Naïve', NULL, NULL, '2024-01-03 10:00:00.001')"),
    ("customers", 3,
     "INSERT INTO customers (id, email, name, tier, bio, vip, created_at, last_login) VALUES "
     "(3, 'chloé@example.com', 'Chloë Ørsted', 'basic', '🦄 unicorn fan', 0, "
     "'2024-01-04 23:59:59.999', '1970-01-01 05:30:01')"),
    ("orders", 10,
     "INSERT INTO orders (id, customer_id, total, flags, placed, pickup, shipped, meta, qty) VALUES "
     "(10, 1, 12.50, 'gift,fragile', '2024-02-29', '09:30:00', b'1', "
     "'{\"note\": \"für dich 🎁\", \"n\": [1, 2]}', 2)"),
    ("orders", 11,
     "INSERT INTO orders (id, customer_id, total, flags, placed, pickup, shipped, meta, qty) VALUES "
     "(11, 2, 0.99, '', '2024-03-01', '-01:30:00', b'0', NULL, 1)"),
    ("orders", BIGINT_UNSIGNED_MAX,
     "INSERT INTO orders (id, customer_id, total, flags, placed, pickup, shipped, meta, qty) VALUES "
     f"({BIGINT_UNSIGNED_MAX}, {INT_UNSIGNED_MAX}, 99999999.99, 'express', '2024-12-31', "
     f"'838:59:59', b'1', '[]', {INT_UNSIGNED_MAX})"),
    ("products", "mug",
     "INSERT INTO products VALUES ('mug', 'Tasse « café »', 7.90, 120)"),
    ("products", "tee",
     "INSERT INTO products VALUES ('tee', 'T-shirt naïve', 19.00, NULL)"),
    ("products", "big",
     f"INSERT INTO products VALUES ('big', 'Entrepôt', NULL, {INT_UNSIGNED_MAX})"),
]


class _Session:
    """Executes the workload's statements with an advancing, fixed session clock."""

    def __init__(self, conn: Any):
        self.conn = conn
        self.clock = START_TIMESTAMP
        with conn.cursor() as cur:
            cur.execute(f"SET SESSION time_zone = '{TIME_ZONE}'")

    def execute(self, sql: str, args: Any = None) -> int:
        with self.conn.cursor() as cur:
            cur.execute(f"SET TIMESTAMP = {self.clock}")
            self.clock += 1
            return cur.execute(sql, args)


def select_row(conn: Any, table: str, pk: Any) -> dict[str, Any] | None:
    """``SELECT * FROM shop.<table> WHERE <pk column> = pk`` as a dict (column order), or None."""
    with conn.cursor() as cur:
        cur.execute(f"SELECT * FROM `{DATABASE}`.`{table}` WHERE `{PRIMARY_KEYS[table]}` = %s", (pk,))
        names = [d[0] for d in cur.description]
        rows = cur.fetchall()
    if not rows:
        return None
    assert len(rows) == 1, (table, pk, rows)
    return dict(zip(names, rows[0]))


def select_all(conn: Any, table: str) -> list[dict[str, Any]]:
    """Every row of ``shop.<table>`` in primary-key order."""
    with conn.cursor() as cur:
        cur.execute(f"SELECT * FROM `{DATABASE}`.`{table}` ORDER BY `{PRIMARY_KEYS[table]}`")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]


def setup(conn: Any, record: Record | None = None) -> None:
    """Create ``shop`` and its first tables, insert the seed rows; report every row the tables
    hold at the end as ``record(table, "r", pk, row)``."""
    s = _Session(conn)
    s.execute(f"DROP DATABASE IF EXISTS {DATABASE}")
    for sql in SCHEMA:
        s.execute(sql)
    for _table, _pk, sql in SEED_ROWS:
        s.execute(sql)
    if record is not None:
        for table in ("customers", "orders", "products"):
            for row in select_all(conn, table):
                record(table, "r", row[PRIMARY_KEYS[table]], row)


def run(conn: Any, record: Record) -> None:
    """The life of the shop after the capture started: row changes interleaved with DDL."""
    s = _Session(conn)
    s.clock += 1000  # after setup's clock
    s.execute(f"USE {DATABASE}")

    def change(table: str, op: str, pk: Any, sql: str, args: Any = None) -> None:
        n = s.execute(sql, args)
        assert n == 1, f"{sql!r} changed {n} rows"
        row = select_row(conn, table, pk)
        assert (row is None) == (op == "d"), (table, op, pk, row)
        record(table, op, pk, row)

    # -- plain row changes on the snapshotted schema ------------------------------------------
    change("customers", "c", 4,
           "INSERT INTO customers (id, email, name, tier, bio, vip, birthday, created_at, last_login) "
           "VALUES (4, 'zoe@example.com', 'Zoë', 'basic', 'emoji 😀👍🏽 and 日本語', 1, '2000-01-01', "
           "NOW(3), NOW())")
    change("orders", "c", 12,
           "INSERT INTO orders (id, customer_id, total, flags, placed, pickup, shipped, meta) VALUES "
           "(12, 4, 1234.56, '', '2024-06-10', '00:00:01', b'0', '{\"a\": null}')")
    change("customers", "u", 1, "UPDATE customers SET tier = 'basic', last_login = '2024-06-10 23:45:00' WHERE id = 1")
    change("orders", "u", BIGINT_UNSIGNED_MAX,
           "UPDATE orders SET flags = 'gift,express,fragile', shipped = b'0', total = 0.01 WHERE id = %s",
           (BIGINT_UNSIGNED_MAX,))
    change("orders", "u", 11, "UPDATE orders SET flags = 'fragile', pickup = NULL WHERE id = 11")
    change("orders", "d", 10, "DELETE FROM orders WHERE id = 10")

    # -- add a column --------------------------------------------------------------------------
    s.execute("ALTER TABLE customers ADD COLUMN phone VARCHAR(20) NULL AFTER email")
    change("customers", "u", 2, "UPDATE customers SET phone = '+33 1 23 45 67 89', vip = 1 WHERE id = 2")
    change("customers", "c", 5,
           "INSERT INTO customers (id, email, phone, name, bio, created_at) "
           "VALUES (5, 'eve@example.com', '555-0100', 'Ève', '', '2024-06-10 12:00:00.5')")

    # -- change an ENUM's labels (a label inserted in the middle: the indexes of later labels move)
    s.execute("ALTER TABLE customers MODIFY tier ENUM('basic','silver','gold','platinum') "
              "NOT NULL DEFAULT 'basic'")
    change("customers", "u", 3, "UPDATE customers SET tier = 'silver' WHERE id = 3")
    change("customers", "u", 1, "UPDATE customers SET tier = 'platinum', name = 'Ann Café-Crème' WHERE id = 1")
    change("customers", "c", 6,
           "INSERT INTO customers (id, email, name, tier, created_at) "
           "VALUES (6, 'gus@example.com', 'Gus', 'gold', '2024-06-11 00:00:00')")

    # -- drop, modify and rename columns in one statement -----------------------------------------
    s.execute("ALTER TABLE orders DROP COLUMN pickup, MODIFY total DECIMAL(12,3) NOT NULL DEFAULT 0, "
              "CHANGE placed placed_on DATE NOT NULL")
    change("orders", "c", 13,
           "INSERT INTO orders (id, customer_id, total, flags, placed_on, shipped, meta, qty) VALUES "
           "(13, 5, 7.125, 'gift', '2024-06-12', b'1', '{\"k\": \"v\"}', 3)")
    change("orders", "u", 12, "UPDATE orders SET total = total + 0.005 WHERE id = 12")
    s.execute("ALTER TABLE orders RENAME COLUMN qty TO quantity")
    change("orders", "u", 13, "UPDATE orders SET quantity = 4294967295 WHERE id = 13")

    # -- convert a latin1 table to utf8mb4: text that latin1 cannot hold fits afterwards ---------
    change("products", "u", "tee", "UPDATE products SET title = 'T-shirt naïve ®' WHERE sku = 'tee'")
    s.execute("ALTER TABLE products CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci")
    change("products", "c", "cup", "INSERT INTO products VALUES ('cup', 'Tasse ☕ 🍵', 4.50, 7)")
    change("products", "u", "mug", "UPDATE products SET title = 'Tasse « café » ☕', stock = 0 WHERE sku = 'mug'")
    s.execute("ALTER TABLE products MODIFY stock BIGINT UNSIGNED")
    change("products", "u", "big", "UPDATE products SET stock = %s WHERE sku = 'big'", (BIGINT_UNSIGNED_MAX,))
    change("products", "d", "tee", "DELETE FROM products WHERE sku = 'tee'")

    # -- rename the table --------------------------------------------------------------------------
    s.execute("RENAME TABLE orders TO purchases")
    change("purchases", "c", 14,
           "INSERT INTO purchases (id, customer_id, total, flags, placed_on, shipped, meta, quantity) VALUES "
           "(14, 6, 0, 'express,gift', '2025-01-01', b'1', '{\"emoji\": \"🚀\"}', 1)")
    # one transaction of several statements
    s.execute("BEGIN")
    change("purchases", "u", 14, "UPDATE purchases SET flags = '' WHERE id = 14")
    change("purchases", "d", BIGINT_UNSIGNED_MAX, "DELETE FROM purchases WHERE id = %s", (BIGINT_UNSIGNED_MAX,))
    change("customers", "u", 4, "UPDATE customers SET bio = NULL, birthday = '2000-02-29' WHERE id = 4")
    s.execute("COMMIT")

    # -- more column changes after the rename ----------------------------------------------------
    s.execute("ALTER TABLE purchases ADD COLUMN coupon VARCHAR(12) CHARACTER SET latin1 NULL, "
              "MODIFY flags SET('gift','express','fragile','bulky') NOT NULL DEFAULT ''")
    change("purchases", "u", 12,
           "UPDATE purchases SET coupon = 'ÉTÉ24', flags = 'bulky,gift' WHERE id = 12")
    change("customers", "d", 2, "DELETE FROM customers WHERE id = 2")
    s.execute("ALTER TABLE customers DROP COLUMN bio")
    change("customers", "u", 5, "UPDATE customers SET last_login = '2038-01-19 08:44:07', vip = 0 WHERE id = 5")
    change("purchases", "d", 11, "DELETE FROM purchases WHERE id = 11")
