"""Statement sequences where the model used to part from PostgreSQL 15's catalog: each runs in
a real PostgreSQL 15 and through ddlcore, and the model must equal the server's catalog
(tests/servers/pg_catalog.py) after every statement.  Every statement must be accepted by the
server (a case the server refuses is a broken test)."""

from __future__ import annotations

import pytest

import ddlcore
from tests.postgres.oracle import replay_and_compare

pytestmark = pytest.mark.postgres

CASES: dict[str, list[str]] = {
    # MergeAttributes (src/backend/commands/tablecmds.c): an inherited column and a local one of
    # the same name merge; NOT NULL is or-ed, the local default wins, identity is not inherited
    "INHERITS merges a local column with the parent's": [
        "CREATE TABLE parent (a int NOT NULL, b text DEFAULT 'p', c int)",
        "CREATE TABLE child (c int DEFAULT 7, a int, d int, b text NOT NULL DEFAULT 'c') INHERITS (parent)",
        "ALTER TABLE parent ADD COLUMN e int",
        "ALTER TABLE parent RENAME COLUMN c TO cc",
        "CREATE TABLE src (a int, e int DEFAULT 5, f text)",
        "CREATE TABLE liked (LIKE src INCLUDING DEFAULTS, g int) INHERITS (parent)",
    ],
    "INHERITS merges equal collations, typmods and a local primary key": [
        'CREATE TABLE cp (a text COLLATE "C", b varchar(5), id int)',
        'CREATE TABLE cc (a text COLLATE "C" NOT NULL, b varchar(5) DEFAULT \'x\', id int PRIMARY KEY) INHERITS (cp)',
    ],
    "INHERITS from several parents with one column name": [
        "CREATE TABLE p1 (id int NOT NULL, x text DEFAULT 'x', y int)",
        "CREATE TABLE p2 (y int NOT NULL, id int, z int DEFAULT 2)",
        "CREATE TABLE kid (z int, w int) INHERITS (p1, p2)",
        "CREATE TABLE kid2 () INHERITS (p2, p1)",
        "CREATE SCHEMA el CREATE TABLE e1 (y int) INHERITS (public.p2) CREATE TABLE e2 (id int, z int)",
    ],
    "constraints added to a parent reach its children, identity does not": [
        "CREATE TABLE base (id int, v int)",
        "CREATE TABLE sub (w int) INHERITS (base)",
        "CREATE TABLE subsub () INHERITS (sub)",
        "ALTER TABLE base ADD PRIMARY KEY (id)",
        "ALTER TABLE base ALTER COLUMN v SET NOT NULL",
        "ALTER TABLE base ALTER COLUMN v ADD GENERATED ALWAYS AS IDENTITY",
        "CREATE TABLE late () INHERITS (base)",
    ],
    "ALTER INDEX ... RENAME TO on a table renames the table": [
        "CREATE TABLE t (id int PRIMARY KEY)",
        "ALTER INDEX t RENAME TO t2",
        "ALTER INDEX IF EXISTS t2 RENAME TO t3",
        "ALTER INDEX t_pkey RENAME TO t3_key",
    ],
    "a renamed partitioned or inherited parent keeps its partitions and children": [
        "CREATE TABLE m (id int, d date, PRIMARY KEY (id, d)) PARTITION BY RANGE (d)",
        "CREATE TABLE m1 PARTITION OF m FOR VALUES FROM ('2020-01-01') TO ('2021-01-01')",
        "CREATE TABLE p (a int)",
        "CREATE TABLE c () INHERITS (p)",
        "ALTER TABLE m RENAME TO m2",
        "ALTER TABLE p RENAME TO p2",
        "ALTER TABLE m2 ADD COLUMN x int",
        "ALTER TABLE p2 ADD COLUMN y int",
        "CREATE SCHEMA s",
        "ALTER TABLE m2 SET SCHEMA s",
        "ALTER TABLE s.m2 ADD COLUMN z int",
        "CREATE TABLE s.q (a int)",
        "CREATE TABLE s.qc () INHERITS (s.q)",
        "ALTER SCHEMA s RENAME TO s2",
        "ALTER TABLE s2.m2 ADD COLUMN w int",
        "ALTER TABLE s2.q ADD COLUMN b int",
        "ALTER INDEX s2.m2 RENAME TO m3",
        "ALTER TABLE s2.m3 ADD COLUMN v int",
    ],
    "a sub-partitioned table attached gets the primary key down to its partitions": [
        "CREATE TABLE m (id int, d date, PRIMARY KEY (id, d)) PARTITION BY RANGE (d)",
        "CREATE TABLE sub (id int NOT NULL, d date NOT NULL) PARTITION BY LIST (id)",
        "CREATE TABLE subsub PARTITION OF sub FOR VALUES IN (1)",
        "ALTER TABLE m ATTACH PARTITION sub FOR VALUES FROM ('2020-01-01') TO ('2021-01-01')",
    ],
    "CREATE TABLE pg_temp.x is a temporary table": [
        "CREATE TABLE pg_temp.x (a int)",
        "CREATE TABLE x (b int)",
        "ALTER TABLE public.x ADD COLUMN c int",
    ],
    "DROP DOMAIN ... CASCADE on a partition key's domain drops the table": [
        "CREATE DOMAIN dk AS int",
        "CREATE TABLE pt (k dk, v text) PARTITION BY LIST (k)",
        "CREATE TABLE pt1 PARTITION OF pt FOR VALUES IN (1)",
        "CREATE TABLE keep (k dk, v text)",
        "DROP DOMAIN dk CASCADE",
    ],
    "pg_catalog is searched before the search path": [
        "CREATE TYPE public.name AS ENUM ('a')",
        "CREATE TYPE public.int4 AS ENUM ('b')",
        "CREATE TABLE t (a name, b int4, c public.name, d public.int4)",
    ],
    "defaults as pg_get_expr prints them: regclass names, timestamp literals, operator trees": [
        "CREATE SEQUENCE seq",
        "CREATE SCHEMA other",
        "CREATE SEQUENCE other.seq2",
        "CREATE TABLE t (a int DEFAULT nextval('public.seq'::regclass), b bigint DEFAULT nextval('public.seq'), "
        "c int DEFAULT nextval('other.seq2'::regclass), "
        "d timestamp DEFAULT '1970-01-01 00:00:01+00:00', "
        "e timestamp(0) without time zone DEFAULT '2020-01-02 03:04:05', "
        "f int DEFAULT 100 + (200 - 199) * 2, g int DEFAULT (1 + 2) * 3, h int DEFAULT 1 - 2 - 3, "
        "i int DEFAULT 2 * 3 + 4, j numeric DEFAULT 1.5 * 2)",
        "CREATE TABLE u (a int DEFAULT -1 + 2, b int DEFAULT 1 + -2, c int DEFAULT - (1 + 2), d int DEFAULT +1 + 2, "
        "e numeric DEFAULT 1.5 * (1 + 2), f bigint DEFAULT 1 + 3000000000, g int DEFAULT 7 / 2 % 3, "
        "h real DEFAULT 1.5 + 1, i double precision DEFAULT 1 + 2.5, j numeric DEFAULT -1.5 * 2, "
        "k int DEFAULT 1-(2*3), l numeric DEFAULT (1 + 2) * -.5)",
        "CREATE TABLE v (a timestamp(0) DEFAULT '2020-01-02 03:04:05.6', "
        "b timestamp(2) DEFAULT '2020-01-02T03:04:05.125Z', "
        "c timestamp DEFAULT '2020-01-02 03:04:05.500', d timestamp DEFAULT '2020-12-31 23:59:59.9999995-05:30', "
        "e timestamp(3) DEFAULT '2020-01-02 03:04:05')",
    ],
}


@pytest.mark.parametrize("name", list(CASES))
def test_model_equals_catalog_after_every_statement(postgres, postgres_db, name):
    diffs = replay_and_compare(postgres, postgres_db, CASES[name])
    assert not diffs, "\n".join(diffs)


#: (set-up statements, a statement the server refuses, the server's message ddlcore must give too)
REFUSED = [
    (["CREATE TABLE p1 (a int)", "CREATE TABLE p2 (a text)"], "CREATE TABLE k () INHERITS (p1, p2)",
     'inherited column "a" has a type conflict'),
    (["CREATE TABLE p1 (a int)"], "CREATE TABLE k (a bigint) INHERITS (p1)", 'column "a" has a type conflict'),
    (["CREATE TABLE p1 (a int DEFAULT 1)", "CREATE TABLE p2 (a int DEFAULT 2)"],
     "CREATE TABLE k (b int) INHERITS (p1, p2)", 'column "a" inherits conflicting default values'),
    (["CREATE TABLE p1 (a int)"], "CREATE TABLE k (a int, a int) INHERITS (p1)", 'column "a" specified more than once'),
    (['CREATE TABLE p1 (a text COLLATE "C")'], "CREATE TABLE k (a text) INHERITS (p1)",
     'column "a" has a collation conflict'),
    (['CREATE TABLE p1 (a text COLLATE "C")', "CREATE TABLE p2 (a text)"], "CREATE TABLE k () INHERITS (p1, p2)",
     'inherited column "a" has a collation conflict'),
]


@pytest.mark.parametrize("setup,refused,message", REFUSED, ids=[m for _, _, m in REFUSED])
def test_statements_the_server_refuses_fail_with_its_message(postgres, postgres_db, setup, refused, message):
    assert not replay_and_compare(postgres, postgres_db, setup)
    with postgres.connect(postgres_db) as conn:
        with pytest.raises(Exception, match=message):
            conn.execute(refused)
    parser = ddlcore.get_dialect("postgres").parser(database=postgres_db)
    tables = parser.new_tables()
    for text in setup:
        parser.apply(text, tables)
    with pytest.raises(ddlcore.DdlParseError, match=message):
        parser.apply(refused, tables)
