"""Synthetic DDL histories (MySQL syntax that both ``minisql`` and the MySQL parser read), for
the crash test and ``benchmarks/history_scale.py``.

``synthetic_history(events, tables, seed)`` returns ``events`` statements: ``CREATE DATABASE``
and ``USE`` lines, ``tables`` CREATE TABLEs spread over the databases, then a deterministic
random mix (tables stay about the same size) of ALTERs (add / drop / modify / rename column, comments, keys), table renames,
drops and re-creates, TRUNCATEs and DML that the history skips.
"""

from __future__ import annotations

import random

__all__ = ["synthetic_history", "SCRIPTED_HISTORY"]

_TYPES = ["int", "bigint", "varchar(32)", "varchar(255)", "decimal(12,2)", "datetime", "text",
          "tinyint unsigned", "char(8)", "double"]


def synthetic_history(events: int, tables: int, seed: int = 7, databases: int | None = None) -> list[str]:
    """``events`` statements over ``tables`` tables (see the module docstring).  When
    ``events`` is smaller than what the set-up needs, the list is cut at ``events``."""
    rnd = random.Random(seed)
    ndb = databases or max(1, tables // 500)
    out: list[str] = []
    live: dict[str, list[str]] = {}  # "db.t" -> column names
    counter = 0
    for d in range(ndb):
        cs = "latin1" if d % 2 else "utf8mb4"
        out.append(f"CREATE DATABASE db{d} DEFAULT CHARACTER SET {cs}")
    for i in range(tables):
        db = f"db{i % ndb}"
        name = f"{db}.t{i}"
        ncols = 3 + i % 6
        cols = [f"c{j}" for j in range(ncols)]
        defs = ", ".join(f"c{j} {_TYPES[(i + j) % len(_TYPES)]}" for j in range(ncols))
        out.append(f"CREATE TABLE {name} (id bigint NOT NULL, {defs}, PRIMARY KEY (id)) COMMENT = 'table {i}'")
        live[name] = ["id"] + cols
    names = sorted(live)
    while len(out) < events:
        counter += 1
        r = rnd.random()
        name = rnd.choice(names)
        cols = live.get(name)
        if cols is None:  # dropped earlier: re-create
            cols = ["id", "a0"]
            out.append(f"CREATE TABLE {name} (id bigint NOT NULL, a0 int, PRIMARY KEY (id))")
            live[name] = cols
            continue
        if r < 0.42 and len(cols) >= 9:  # keep tables about the same size over the history
            col = rnd.choice(cols[1:])
            out.append(f"ALTER TABLE {name} DROP COLUMN {col}")
            cols.remove(col)
        elif r < 0.30:
            col = f"n{counter}"
            out.append(f"ALTER TABLE {name} ADD COLUMN {col} {rnd.choice(_TYPES)}")
            cols.append(col)
        elif r < 0.42 and len(cols) > 2:
            col = rnd.choice(cols[1:])
            out.append(f"ALTER TABLE {name} DROP COLUMN {col}")
            cols.remove(col)
        elif r < 0.57 and len(cols) > 1:
            col = rnd.choice(cols[1:])
            out.append(f"ALTER TABLE {name} MODIFY COLUMN {col} {rnd.choice(_TYPES)}")
        elif r < 0.67 and len(cols) > 1:
            col = rnd.choice(cols[1:])
            new = f"r{counter}"
            out.append(f"ALTER TABLE {name} RENAME COLUMN {col} TO {new}")
            cols[cols.index(col)] = new
        elif r < 0.72:
            out.append(f"ALTER TABLE {name} COMMENT = 'rev {counter}'")
        elif r < 0.77:
            # rename away and back under a new name; the old name is re-created later
            db = name.split(".")[0]
            new = f"{db}.x{counter}"
            out.append(f"RENAME TABLE {name} TO {new}")
            live[new] = live.pop(name)
            names[names.index(name)] = new
        elif r < 0.80:
            out.append(f"DROP TABLE {name}")
            del live[name]
        elif r < 0.85:
            out.append(f"TRUNCATE TABLE {name}")
        else:
            out.append(f"INSERT INTO {name} (id) VALUES ({counter})")
    return out[:events]


#: A scripted history with adds, drops, renames, type changes, table renames (a swap, a
#: cross-database move), database defaults inherited by later tables, USE, SET NAMES, views,
#: DROP DATABASE, a skipped statement and a no-op ALTER — valid MySQL / MariaDB.
SCRIPTED_HISTORY = """
CREATE DATABASE shop DEFAULT CHARACTER SET latin1;
USE shop;
CREATE TABLE customers (id int NOT NULL AUTO_INCREMENT, name varchar(40) NOT NULL, email varchar(80), PRIMARY KEY (id));
CREATE TABLE orders (id bigint NOT NULL, customer_id int NOT NULL, total decimal(10,2), note text, PRIMARY KEY (id));
INSERT INTO customers (name) VALUES ('x');
ALTER TABLE customers ADD COLUMN phone varchar(20) AFTER name;
ALTER TABLE orders MODIFY COLUMN total decimal(12,2) NOT NULL;
ALTER TABLE orders RENAME COLUMN note TO remark;
ALTER TABLE customers DROP COLUMN email;
CREATE TABLE tmp_log (id int, msg varchar(200));
CREATE VIEW big_orders AS SELECT id FROM orders WHERE total > 100;
RENAME TABLE orders TO orders_old;
CREATE TABLE orders (id bigint NOT NULL, customer_id int NOT NULL, total decimal(12,2) NOT NULL, remark text, created datetime, PRIMARY KEY (id));
DROP TABLE orders_old;
ALTER TABLE customers CHANGE COLUMN phone mobile varchar(30);
ALTER TABLE customers ENGINE = InnoDB;
ALTER TABLE customers ENGINE = InnoDB;
RENAME TABLE customers TO tmp, tmp_log TO customers, tmp TO tmp_log;
ALTER TABLE tmp_log RENAME TO clients;
ALTER TABLE customers ADD PRIMARY KEY (id);
CREATE DATABASE crm;
CREATE TABLE crm.contacts (id int NOT NULL, label varchar(10), PRIMARY KEY (id));
ALTER TABLE crm.contacts ADD COLUMN shop_ref int FIRST;
RENAME TABLE crm.contacts TO shop.contacts;
SET NAMES utf8;
USE crm;
CREATE TABLE notes (id int, body varchar(100));
ALTER TABLE notes MODIFY body varchar(200);
USE shop;
DROP DATABASE crm;
ALTER TABLE clients DROP PRIMARY KEY;
TRUNCATE TABLE clients;
DROP VIEW big_orders;
DROP TABLE IF EXISTS nothing_here;
ALTER TABLE contacts MODIFY label varchar(20) NOT NULL, ADD COLUMN flags bigint unsigned;
"""
