"""The event triggers against a real PostgreSQL 15: installed idempotently, removed whole;
every DDL command that changes a table emits one transactional message, decoded by pgoutput
in commit order, holding the text, the search path and the tables *after that command*;
renames carry the old name; type and domain changes reach the tables using them; the
description equals ``information_schema.columns``."""

from __future__ import annotations

import json

import psycopg2
import pytest

from ddlcore_postgres import event_trigger as et
from ddlcore_postgres import pgoutput as po
from ddlcore_postgres.catalog import parse_ddl_message

from .support import create_capture_db, drop_capture_db



def _slot(db, name="et_test"):
    with db.connect() as conn:
        conn.execute("SELECT pg_create_logical_replication_slot(%s, 'pgoutput')", (name,))
    return name


def _messages(db, slot="et_test"):
    """The ddlcore messages the slot holds (consumed), in stream order, as documents."""
    with db.connect() as conn:
        rows = conn.execute("SELECT data FROM pg_logical_slot_get_binary_changes(%s, NULL, NULL, "
                            "'proto_version', '1', 'publication_names', 'pub', 'messages', 'true')",
                            (slot,)).fetchall()
    out = []
    for (data,) in rows:
        m = po.decode(data)
        if isinstance(m, po.Message) and m.prefix == et.MESSAGE_PREFIX:
            assert m.transactional
            out.append(json.loads(m.content))
    return out


def _tables(doc):
    return {f"{t['schema']}.{t['name']}": [c["name"] for c in t["columns"]] for t in doc["tables"]}


def test_install_is_idempotent_and_uninstall_removes_everything(capdb):
    conn = psycopg2.connect(capdb.dsn)
    try:
        st = et.status(conn)
        assert st.ready and st.problem() is None
        assert et.install(conn).ready  # again: replaces, still ready
        with conn.cursor() as cur:
            cur.execute("SELECT count(*) FROM pg_event_trigger WHERE evtname LIKE 'ddlcore%'")
            assert cur.fetchone()[0] == 2
        conn.commit()
        gone = et.uninstall(conn)
        assert gone.version is None and gone.triggers == {}
        assert "not installed" in gone.problem()
        with conn.cursor() as cur:
            cur.execute("SELECT count(*) FROM pg_namespace WHERE nspname = 'ddlcore'")
            assert cur.fetchone()[0] == 0
        conn.commit()
        # DDL still works without them, and a re-install picks existing tables up
        capdb.execute("CREATE TABLE after_uninstall (id int)")
        assert et.install(conn).ready
        with conn.cursor() as cur:
            cur.execute("SELECT schema_name, table_name FROM ddlcore.relations")
            assert ("public", "after_uninstall") in cur.fetchall()
        conn.commit()
    finally:
        conn.close()


def test_a_disabled_trigger_is_reported(capdb):
    capdb.execute("ALTER EVENT TRIGGER ddlcore_sql_drop DISABLE")
    conn = psycopg2.connect(capdb.dsn)
    try:
        assert "ddlcore_sql_drop is disabled" in et.status(conn).problem()
    finally:
        conn.close()


def test_install_needs_a_superuser(postgres):
    db = create_capture_db(postgres, install=False)
    try:
        db.execute("CREATE ROLE et_plain LOGIN")
        conn = psycopg2.connect(db.dsn.replace(f"user={postgres.user}", "user=et_plain"))
        try:
            with pytest.raises(et.EventTriggerError, match="superuser"):
                et.install(conn)
        finally:
            conn.close()
    finally:
        drop_capture_db(db)
        with postgres.connect() as c:
            c.execute("DROP ROLE IF EXISTS et_plain")


def test_each_command_of_a_query_string_describes_the_tables_after_it(capdb):
    slot = _slot(capdb)
    capdb.execute("CREATE TABLE a (id int PRIMARY KEY); ALTER TABLE a ADD COLUMN x text; "
                  "ALTER TABLE a RENAME COLUMN x TO y; CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'select 1'")
    docs = _messages(capdb, slot)
    assert [d["tag"] for d in docs] == ["CREATE TABLE", "ALTER TABLE", "ALTER TABLE"]
    assert [_tables(d) for d in docs] == [{"public.a": ["id"]}, {"public.a": ["id", "x"]}, {"public.a": ["id", "y"]}]
    assert all(d["query"].startswith("CREATE TABLE a (id int PRIMARY KEY); ALTER TABLE a") for d in docs)
    assert all(d["search_path"] == ["public"] for d in docs)
    assert docs[0]["tables"][0]["primary_key"] == ["id"]


def test_renames_and_schema_moves_carry_the_old_name(capdb):
    capdb.execute("CREATE TABLE r (id int)", "CREATE SCHEMA s1")
    slot = _slot(capdb)
    capdb.execute("ALTER TABLE r RENAME TO r2", "ALTER TABLE r2 SET SCHEMA s1", "ALTER SCHEMA s1 RENAME TO s2")
    docs = _messages(capdb, slot)
    renames = [[(x["from"]["schema"], x["from"]["name"], x["to"]["schema"], x["to"]["name"]) for x in d["renamed"]]
               for d in docs]
    assert renames == [[("public", "r", "public", "r2")], [("public", "r2", "s1", "r2")], [("s1", "r2", "s2", "r2")]]
    msg = parse_ddl_message(json.dumps(docs[2]), database=capdb.name)
    assert msg.catalog["renamed"] == [{"from": {"database": capdb.name, "schema": "s1", "name": "r2"},
                                       "to": {"database": capdb.name, "schema": "s2", "name": "r2"}}]


def test_type_and_domain_changes_reach_the_tables_using_them(capdb):
    capdb.execute("CREATE TYPE mood AS ENUM ('sad', 'ok')", "CREATE DOMAIN code AS varchar(5)",
                  "CREATE DOMAIN code2 AS code", "CREATE TABLE uses (id int, m mood, ms mood[], c code2, c1 code)",
                  "CREATE TABLE other (id int)")
    slot = _slot(capdb)
    capdb.execute("ALTER TYPE mood ADD VALUE 'happy'", "ALTER DOMAIN code SET NOT NULL", "ALTER DOMAIN code RENAME TO kode")
    docs = _messages(capdb, slot)
    assert [(d["tag"], list(_tables(d))) for d in docs] == [
        ("ALTER TYPE", ["public.uses"]), ("ALTER DOMAIN", ["public.uses"]), ("ALTER DOMAIN", ["public.uses"])]
    cols = {c["name"]: c for c in docs[0]["tables"][0]["columns"]}
    assert cols["m"]["enum_labels"] == cols["ms"]["enum_labels"] == ["sad", "ok", "happy"]
    after_not_null = {c["name"]: c for c in docs[1]["tables"][0]["columns"]}
    c1 = after_not_null["c1"]
    assert c1["nullable"] is False and c1["attnotnull"] is False  # NOT NULL through the domain
    # a domain over that domain: information_schema looks at the column's own domain only
    c = after_not_null["c"]
    assert c["nullable"] is True and c["domain_base_type"] == "character varying(5)" and c["udt_name"] == "code"
    assert {c["name"]: c for c in docs[2]["tables"][0]["columns"]}["c1"]["domain_name"] == "kode"


def test_drops_are_reported(capdb):
    capdb.execute("CREATE SCHEMA gone", "CREATE TABLE gone.t1 (id int)", "CREATE TABLE d (id int, x int)",
                  "CREATE TYPE dt AS ENUM ('a')", "CREATE TABLE uses_dt (id int, v dt)")
    slot = _slot(capdb)
    capdb.execute("ALTER TABLE d DROP COLUMN x", "DROP TABLE d", "DROP SCHEMA gone CASCADE", "DROP TYPE dt CASCADE")
    docs = _messages(capdb, slot)
    assert [(d["tag"], _tables(d), [(x["schema"], x["name"]) for x in d["dropped"]]) for d in docs] == [
        ("ALTER TABLE", {"public.d": ["id"]}, []),
        ("DROP TABLE", {}, [("public", "d")]),
        ("DROP SCHEMA", {}, [("gone", "t1")]),
        ("DROP TYPE", {"public.uses_dt": ["id"]}, []),
    ]


def test_ddl_of_a_role_without_privileges_on_ddlcore_is_described(capdb):
    capdb.execute("CREATE ROLE et_app LOGIN", "GRANT CREATE ON SCHEMA public TO et_app")
    slot = _slot(capdb)
    import psycopg

    try:
        with psycopg.connect(capdb.dsn.replace(f"user={capdb.server.user}", "user=et_app"), autocommit=True) as c:
            c.execute("CREATE TABLE app_t (id int PRIMARY KEY) PARTITION BY RANGE (id)")
            c.execute("CREATE TABLE app_t1 PARTITION OF app_t FOR VALUES FROM (0) TO (10)")
            c.execute("ALTER TABLE app_t ADD COLUMN v text")
            c.execute("DO $$ BEGIN EXECUTE 'ALTER TABLE app_t RENAME TO app_u'; END $$")
            with pytest.raises(psycopg.Error, match="event trigger"):
                c.execute("SELECT ddlcore.record_ddl('{}')")  # only from inside a trigger
        docs = _messages(capdb, slot)
        assert [_tables(d) for d in docs] == [
            {"public.app_t": ["id"]}, {"public.app_t1": ["id"]},
            {"public.app_t": ["id", "v"], "public.app_t1": ["id", "v"]},  # the partition changed too
            {"public.app_u": ["id", "v"], "public.app_t1": ["id", "v"]}]  # children are always described
        assert docs[3]["query"].startswith("DO $$") and docs[3]["renamed"][0]["from"]["name"] == "app_t"
        assert docs[0]["tables"][0]["partition_key"] == "RANGE (id)"
    finally:
        capdb.execute("DROP TABLE IF EXISTS app_u", "DROP OWNED BY et_app", "DROP ROLE et_app")


COLUMNS = """
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, s serial, i2 int2 DEFAULT 7 NOT NULL,
  n numeric, n2 numeric(10,2), f4 real, f8 double precision, vc varchar(20) COLLATE "C", c char(3),
  t text DEFAULT 'x''y', b bytea, ok boolean, d date, tm time(3), tz timetz, ts timestamp(0),
  tstz timestamptz(6), iv interval, iv2 interval day to second(2), u uuid, j json, jb jsonb,
  ip inet, cidr_ cidr, mac macaddr, m money, bt bit(3), vb varbit(8), x xml, r int4range,
  a int[], a2 text[][], a3 varchar(4)[3], mo mood, mos mood[], dm code, g int GENERATED ALWAYS AS (i2 * 2) STORED,
  "Mixed Case" int, tv tsvector, p point
"""


def test_the_description_equals_information_schema(capdb):
    capdb.execute("CREATE TYPE mood AS ENUM ('a', 'b')", "CREATE DOMAIN code AS varchar(5) NOT NULL",
                  f"CREATE TABLE every_type ({COLUMNS})",
                  "COMMENT ON COLUMN every_type.n IS 'unconstrained'")
    with capdb.connect() as conn:
        doc = json.loads(conn.execute("SELECT ddlcore.describe_table('every_type'::regclass)::text").fetchone()[0])
        rows = conn.execute(
            "SELECT column_name, ordinal_position, column_default, is_nullable, data_type, character_maximum_length, "
            "character_octet_length, numeric_precision, numeric_precision_radix, numeric_scale, datetime_precision, "
            "interval_type, collation_name, domain_schema, domain_name, udt_schema, udt_name, identity_generation, "
            "generation_expression FROM information_schema.columns WHERE table_name = 'every_type' "
            "ORDER BY ordinal_position").fetchall()
        formats = dict(conn.execute("SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
                                    "WHERE attrelid = 'every_type'::regclass AND attnum > 0").fetchall())
        dims = dict(conn.execute("SELECT attname, attndims FROM pg_attribute "
                                 "WHERE attrelid = 'every_type'::regclass AND attnum > 0").fetchall())
    assert [c["name"] for c in doc["columns"]] == [r[0] for r in rows]
    for c, r in zip(doc["columns"], rows):
        expect = {"name": r[0], "attnum": r[1], "default": r[2], "nullable": r[3] == "YES", "data_type": r[4],
                  "character_maximum_length": r[5], "character_octet_length": r[6], "numeric_precision": r[7],
                  "numeric_precision_radix": r[8], "numeric_scale": r[9], "datetime_precision": r[10],
                  "interval_type": r[11], "collation_name": r[12], "domain_schema": r[13], "domain_name": r[14],
                  "udt_schema": r[15], "udt_name": r[16], "identity": r[17], "generation_expression": r[18],
                  "format_type": formats[r[0]], "attndims": dims[r[0]]}
        got = {k: c[k] for k in expect}
        assert got == expect, r[0]
    cols = {c["name"]: c for c in doc["columns"]}
    assert cols["mo"]["enum_labels"] == cols["mos"]["enum_labels"] == ["a", "b"]
    assert cols["dm"]["domain_base_type"] == "character varying(5)" and cols["dm"]["nullable"] is False
    assert cols["g"]["generated"] == "s" and cols["g"]["default"] is None
    assert cols["n"]["comment"] == "unconstrained"
    assert doc["primary_key"] == ["id"] and doc["replica_identity"] == "DEFAULT"
