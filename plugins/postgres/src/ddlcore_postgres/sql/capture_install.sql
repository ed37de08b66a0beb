-- ddlcore capture support for PostgreSQL 15: DDL written into the WAL, in order.
--
-- Installed by `ddlcore capture postgres --install` (one transaction; idempotent), removed by
-- `--uninstall`.  docs/capture.md, section "PostgreSQL", is the user's description.
--
-- Logical decoding carries no DDL.  Two event triggers (PostgreSQL 15 manual, chapter 40
-- "Event Triggers") close the gap:
--
-- * `ddlcore_sql_drop` (event `sql_drop`) notes, in the transaction-local setting
--   `ddlcore.dropped`, the tables the command dropped and the tables whose columns or
--   constraints it dropped (pg_event_trigger_dropped_objects(), manual 9.29.2);
-- * `ddlcore_ddl_command_end` (event `ddl_command_end`) describes, from pg_catalog, every
--   table the command created or changed (pg_event_trigger_ddl_commands(), manual 9.29.1;
--   a type or domain change reaches every table using the type) and emits one transactional
--   logical decoding message (pg_logical_emit_message(true, 'ddlcore', ...), manual 9.27.6)
--   holding the command's text (current_query()), tag, object identities, the effective
--   search path (current_schemas(false)) and the descriptions.  Being transactional, the
--   message is decoded in commit order, between the row changes before and after it.
--
-- `ddlcore.relations` remembers each table's name by OID, so that a rename (ALTER TABLE ...
-- RENAME TO, ... SET SCHEMA, ALTER SCHEMA ... RENAME TO) is reported with the name the table
-- had before.  Only the SECURITY DEFINER function `ddlcore.record_ddl` writes it; the trigger
-- functions run with the rights of the role running the DDL and read the catalog as it does
-- (format_type() prints a type's name as that session's search_path shows it).
--
-- The trigger functions never make a DDL statement fail: an error while describing is caught
-- and emitted as a message with "error" set (the capture reports it and records the DDL text
-- without a catalog description).

CREATE SCHEMA IF NOT EXISTS ddlcore;
COMMENT ON SCHEMA ddlcore IS
  'ddlcore capture: event triggers writing DDL into the WAL (remove with: ddlcore capture postgres --uninstall)';
GRANT USAGE ON SCHEMA ddlcore TO PUBLIC;

CREATE TABLE IF NOT EXISTS ddlcore.relations (
    relid oid PRIMARY KEY,
    schema_name name NOT NULL,
    table_name name NOT NULL
);
REVOKE ALL ON ddlcore.relations FROM PUBLIC;
GRANT SELECT ON ddlcore.relations TO PUBLIC;

-- The version of this file's objects; the capture refuses to run with another.
CREATE OR REPLACE FUNCTION ddlcore.capture_version() RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT 2 $$;

-- Which capture owns which replication slot: one slot, one capture.  A PostgreSQL 15 slot
-- has no field of its own to carry an owner, so the claim lives beside it, in the slot's
-- database: the slot name, the epoch of the capture directory that claimed it (a UUID in its
-- checkpoint.json and its change log's source event) and that directory's path (for messages
-- only).  A capture claims a slot before creating it and drops or advances only a slot whose
-- claim carries its own epoch (ddlcore_postgres.slots).  Only ddlcore.claim_slot and
-- ddlcore.release_slot (SECURITY DEFINER, callable by roles that may create slots) write it.
CREATE TABLE IF NOT EXISTS ddlcore.capture_slots (
    slot_name name PRIMARY KEY,
    epoch text NOT NULL,
    directory text NOT NULL,
    claimed_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
REVOKE ALL ON ddlcore.capture_slots FROM PUBLIC;
GRANT SELECT ON ddlcore.capture_slots TO PUBLIC;

-- Claim `slot` for the capture directory with `epoch`, atomically (the claim row locked).
-- `status`: 'new' (claimed now; the slot does not exist), 'own' (already this epoch's),
-- 'taken' (a claim of another epoch whose slot no longer exists was replaced: nobody's
-- position is lost), 'other' (another epoch's slot exists: refused) or 'unclaimed' (the slot
-- exists with no claim: created by hand or by another tool; refused).  `epoch` / `directory`:
-- the previous claim's, for 'taken' and 'other'.
CREATE OR REPLACE FUNCTION ddlcore.claim_slot(p_slot text, p_epoch text, p_directory text,
    OUT status text, OUT epoch text, OUT directory text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  prev record;
  slot_exists boolean;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = session_user AND (rolreplication OR rolsuper)) THEN
    RAISE EXCEPTION 'ddlcore.claim_slot: role % may not create replication slots', session_user
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  PERFORM pg_advisory_xact_lock(hashtext('ddlcore.capture_slots'), hashtext(p_slot));
  SELECT s.epoch, s.directory INTO prev FROM ddlcore.capture_slots s WHERE s.slot_name = p_slot FOR UPDATE;
  slot_exists := EXISTS (SELECT 1 FROM pg_replication_slots r WHERE r.slot_name = p_slot);
  IF prev.epoch = p_epoch THEN
    status := 'own';
    IF prev.directory <> p_directory THEN
      UPDATE ddlcore.capture_slots SET directory = p_directory WHERE slot_name = p_slot;
    END IF;
    RETURN;
  END IF;
  IF prev.epoch IS NOT NULL AND slot_exists THEN
    status := 'other'; epoch := prev.epoch; directory := prev.directory;
    RETURN;
  END IF;
  IF prev.epoch IS NULL AND slot_exists THEN
    status := 'unclaimed';
    RETURN;
  END IF;
  IF prev.epoch IS NOT NULL THEN
    status := 'taken'; epoch := prev.epoch; directory := prev.directory;
    UPDATE ddlcore.capture_slots SET epoch = p_epoch, directory = p_directory, claimed_at = now()
     WHERE slot_name = p_slot;
  ELSE
    status := 'new';
    INSERT INTO ddlcore.capture_slots (slot_name, epoch, directory) VALUES (p_slot, p_epoch, p_directory);
  END IF;
END
$$;

-- Drop the claim of `slot` when it is `epoch`'s (after that capture dropped its slot);
-- returns whether a claim was removed.
CREATE OR REPLACE FUNCTION ddlcore.release_slot(p_slot text, p_epoch text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = session_user AND (rolreplication OR rolsuper)) THEN
    RAISE EXCEPTION 'ddlcore.release_slot: role % may not drop replication slots', session_user
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  DELETE FROM ddlcore.capture_slots WHERE slot_name = p_slot AND epoch = p_epoch;
  RETURN FOUND;
END
$$;

-- Whether a relation is one of the tables ddlcore describes: an ordinary or partitioned table
-- that is not temporary and not in a system schema or ddlcore's own.
CREATE OR REPLACE FUNCTION ddlcore.is_described(relid oid) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT EXISTS (
    SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = relid AND c.relkind IN ('r', 'p') AND c.relpersistence <> 't'
       AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast', 'ddlcore')
       AND n.nspname NOT LIKE 'pg\_toast\_temp\_%' AND n.nspname NOT LIKE 'pg\_temp\_%')
$$;

-- The innermost non-domain base type of a type, with the typmod a domain gave it; and the
-- element type of that base when it is an array (itself stripped of domains).
CREATE OR REPLACE FUNCTION ddlcore.core_type(typid oid, typmod integer,
    OUT base_oid oid, OUT base_typmod integer, OUT element_oid oid)
LANGUAGE plpgsql STABLE AS $$
DECLARE
  t record;
  guard integer := 0;
BEGIN
  base_oid := typid;
  base_typmod := typmod;
  LOOP
    SELECT typtype, typbasetype, typtypmod INTO t FROM pg_catalog.pg_type WHERE oid = base_oid;
    EXIT WHEN NOT FOUND OR t.typtype <> 'd' OR guard > 100;
    base_oid := t.typbasetype;
    base_typmod := t.typtypmod;
    guard := guard + 1;
  END LOOP;
  SELECT CASE WHEN typelem <> 0 AND typlen = -1 THEN typelem END INTO element_oid
    FROM pg_catalog.pg_type WHERE oid = base_oid;
  guard := 0;
  LOOP
    EXIT WHEN element_oid IS NULL OR guard > 100;
    SELECT typtype, typbasetype INTO t FROM pg_catalog.pg_type WHERE oid = element_oid;
    EXIT WHEN NOT FOUND OR t.typtype <> 'd';
    element_oid := t.typbasetype;
    guard := guard + 1;
  END LOOP;
END $$;

-- The catalog description of one table (null when it is not a described table).  Column
-- fields follow information_schema.columns (PostgreSQL 15 manual 37.17; the expressions are
-- the view's own, without its privilege filter), plus the raw facts of pg_attribute.
CREATE OR REPLACE FUNCTION ddlcore.describe_table(relid oid) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT pg_catalog.jsonb_build_object(
    'oid', c.oid,
    'schema', n.nspname,
    'name', c.relname,
    'relkind', c.relkind,
    'persistence', c.relpersistence,
    'replica_identity', CASE c.relreplident WHEN 'd' THEN 'DEFAULT' WHEN 'n' THEN 'NOTHING'
                          WHEN 'f' THEN 'FULL' WHEN 'i' THEN 'INDEX' END,
    'replica_identity_index',
      (SELECT ic.relname FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
        WHERE i.indrelid = c.oid AND i.indisreplident LIMIT 1),
    'comment', pg_catalog.obj_description(c.oid, 'pg_class'),
    'partition_key', CASE WHEN c.relkind = 'p' THEN pg_catalog.pg_get_partkeydef(c.oid) END,
    'is_partition', c.relispartition,
    'parents', COALESCE(
      (SELECT pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('schema', pn.nspname, 'name', p.relname)
                                   ORDER BY i.inhseqno)
         FROM pg_catalog.pg_inherits i JOIN pg_catalog.pg_class p ON p.oid = i.inhparent
         JOIN pg_catalog.pg_namespace pn ON pn.oid = p.relnamespace
        WHERE i.inhrelid = c.oid), '[]'::jsonb),
    'max_attnum',
      (SELECT COALESCE(max(a.attnum), 0) FROM pg_catalog.pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0),
    'indexes', COALESCE(
      (SELECT pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                'name', ic.relname, 'primary', x.indisprimary, 'unique', x.indisunique,
                'columns', (SELECT pg_catalog.jsonb_agg(ia.attname ORDER BY k.ord)
                              FROM pg_catalog.unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
                              LEFT JOIN pg_catalog.pg_attribute ia ON ia.attrelid = c.oid AND ia.attnum = k.attnum
                             WHERE k.ord <= x.indnkeyatts))
              ORDER BY ic.oid)
         FROM pg_catalog.pg_index x JOIN pg_catalog.pg_class ic ON ic.oid = x.indexrelid
        WHERE x.indrelid = c.oid), '[]'::jsonb),
    'primary_key_name',
      (SELECT con.conname FROM pg_catalog.pg_constraint con WHERE con.conrelid = c.oid AND con.contype = 'p'),
    'primary_key', COALESCE(
      (SELECT pg_catalog.jsonb_agg(a.attname ORDER BY k.ord)
         FROM pg_catalog.pg_constraint con
         CROSS JOIN LATERAL pg_catalog.unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
         JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum
        WHERE con.conrelid = c.oid AND con.contype = 'p'), '[]'::jsonb),
    'columns', COALESCE(
      (SELECT pg_catalog.jsonb_agg(col.d ORDER BY col.attnum) FROM (
        SELECT a.attnum, pg_catalog.jsonb_build_object(
          'name', a.attname,
          'attnum', a.attnum,
          'type_oid', a.atttypid,
          'typmod', a.atttypmod,
          'format_type', pg_catalog.format_type(a.atttypid, a.atttypmod),
          'data_type',
            CASE WHEN t.typtype = 'd' THEN
                   CASE WHEN bt.typelem <> 0 AND bt.typlen = -1 THEN 'ARRAY'
                        WHEN nbt.nspname = 'pg_catalog' THEN pg_catalog.format_type(t.typbasetype, NULL)
                        ELSE 'USER-DEFINED' END
                 ELSE
                   CASE WHEN t.typelem <> 0 AND t.typlen = -1 THEN 'ARRAY'
                        WHEN nt.nspname = 'pg_catalog' THEN pg_catalog.format_type(a.atttypid, NULL)
                        ELSE 'USER-DEFINED' END
            END,
          'attnotnull', a.attnotnull,
          'nullable', NOT (a.attnotnull OR (t.typtype = 'd' AND t.typnotnull)),
          'default', CASE WHEN a.attgenerated = '' THEN pg_catalog.pg_get_expr(ad.adbin, ad.adrelid) END,
          'generated', NULLIF(a.attgenerated, ''),
          'generation_expression',
            CASE WHEN a.attgenerated <> '' THEN pg_catalog.pg_get_expr(ad.adbin, ad.adrelid) END,
          'identity', CASE a.attidentity WHEN 'a' THEN 'ALWAYS' WHEN 'd' THEN 'BY DEFAULT' END,
          'collation_schema', nco.nspname,
          'collation_name', co.collname,
          'attndims', a.attndims,
          'character_maximum_length', information_schema._pg_char_max_length(
              information_schema._pg_truetypid(a.*, t.*), information_schema._pg_truetypmod(a.*, t.*)),
          'character_octet_length', information_schema._pg_char_octet_length(
              information_schema._pg_truetypid(a.*, t.*), information_schema._pg_truetypmod(a.*, t.*)),
          'numeric_precision', information_schema._pg_numeric_precision(
              information_schema._pg_truetypid(a.*, t.*), information_schema._pg_truetypmod(a.*, t.*)),
          'numeric_precision_radix', information_schema._pg_numeric_precision_radix(
              information_schema._pg_truetypid(a.*, t.*), information_schema._pg_truetypmod(a.*, t.*)),
          'numeric_scale', information_schema._pg_numeric_scale(
              information_schema._pg_truetypid(a.*, t.*), information_schema._pg_truetypmod(a.*, t.*)),
          'datetime_precision', information_schema._pg_datetime_precision(
              information_schema._pg_truetypid(a.*, t.*), information_schema._pg_truetypmod(a.*, t.*)),
          'interval_type', information_schema._pg_interval_type(
              information_schema._pg_truetypid(a.*, t.*), information_schema._pg_truetypmod(a.*, t.*)),
          'udt_schema', COALESCE(nbt.nspname, nt.nspname),
          'udt_name', COALESCE(bt.typname, t.typname),
          'domain_schema', CASE WHEN t.typtype = 'd' THEN nt.nspname END,
          'domain_name', CASE WHEN t.typtype = 'd' THEN t.typname END,
          'domain_base_type',
            CASE WHEN t.typtype = 'd' THEN pg_catalog.format_type(ct.base_oid, ct.base_typmod) END,
          'base_type_oid', ct.base_oid,
          'element_type_oid', ct.element_oid,
          'enum_labels',
            (SELECT pg_catalog.jsonb_agg(e.enumlabel ORDER BY e.enumsortorder)
               FROM pg_catalog.pg_enum e WHERE e.enumtypid = COALESCE(ct.element_oid, ct.base_oid)),
          'comment', pg_catalog.col_description(c.oid, a.attnum)
        ) AS d
        FROM pg_catalog.pg_attribute a
        LEFT JOIN pg_catalog.pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
        JOIN (pg_catalog.pg_type t JOIN pg_catalog.pg_namespace nt ON t.typnamespace = nt.oid)
          ON a.atttypid = t.oid
        LEFT JOIN (pg_catalog.pg_type bt JOIN pg_catalog.pg_namespace nbt ON bt.typnamespace = nbt.oid)
          ON t.typtype = 'd' AND t.typbasetype = bt.oid
        LEFT JOIN (pg_catalog.pg_collation co JOIN pg_catalog.pg_namespace nco ON co.collnamespace = nco.oid)
          ON a.attcollation = co.oid AND (nco.nspname <> 'pg_catalog' OR co.collname <> 'default')
        CROSS JOIN LATERAL ddlcore.core_type(a.atttypid, a.atttypmod) AS ct
        WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      ) AS col), '[]'::jsonb)
  )
  FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  WHERE c.oid = relid AND ddlcore.is_described(c.oid)
$$;

-- The described tables using a type: directly, as an array's element, through a domain (at
-- any depth), and their inheritance children.
CREATE OR REPLACE FUNCTION ddlcore.tables_using_type(typid oid) RETURNS SETOF oid
LANGUAGE sql STABLE AS $$
  WITH RECURSIVE types(oid) AS (
      SELECT typid
    UNION
      SELECT t.oid FROM pg_catalog.pg_type t JOIN types ON t.typbasetype = types.oid OR
             (t.typelem = types.oid AND t.typlen = -1 AND t.typtype = 'b')
  )
  SELECT DISTINCT a.attrelid FROM pg_catalog.pg_attribute a JOIN types ON a.atttypid = types.oid
   WHERE a.attnum > 0 AND NOT a.attisdropped AND ddlcore.is_described(a.attrelid)
$$;

-- A set of tables and every table inheriting from them (partitions, INHERITS children), at
-- any depth: ALTER TABLE on a parent changes its children too.
CREATE OR REPLACE FUNCTION ddlcore.with_descendants(relids oid[]) RETURNS SETOF oid
LANGUAGE sql STABLE AS $$
  WITH RECURSIVE tree(oid) AS (
      SELECT pg_catalog.unnest(relids)
    UNION
      SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN tree ON i.inhparent = tree.oid
  )
  SELECT oid FROM tree WHERE ddlcore.is_described(oid)
$$;

-- The privileged part: remember table names by OID (to report renames with the old name) and
-- emit the message.  `payload` is the document the trigger built; the message gets a
-- "renamed" list added.  SECURITY DEFINER with a fixed search_path: it writes
-- ddlcore.relations, which the roles running DDL cannot write themselves.
CREATE OR REPLACE FUNCTION ddlcore.record_ddl(payload jsonb) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  item jsonb;
  old record;
  renamed jsonb := '[]'::jsonb;
BEGIN
  -- only from inside an event trigger (this raises elsewhere): roles may call this function,
  -- as the trigger does on their behalf, but not to rewrite ddlcore.relations at will
  PERFORM 1 FROM pg_event_trigger_ddl_commands() LIMIT 1;
  FOR item IN SELECT * FROM jsonb_array_elements(COALESCE(payload->'dropped', '[]'::jsonb)) LOOP
    DELETE FROM ddlcore.relations WHERE relid = (item->>'oid')::oid;
  END LOOP;
  FOR item IN SELECT * FROM jsonb_array_elements(COALESCE(payload->'tables', '[]'::jsonb)) LOOP
    SELECT schema_name, table_name INTO old FROM ddlcore.relations WHERE relid = (item->>'oid')::oid;
    IF FOUND AND (old.schema_name::text <> item->>'schema' OR old.table_name::text <> item->>'name') THEN
      renamed := renamed || jsonb_build_array(jsonb_build_object(
        'oid', item->'oid',
        'from', jsonb_build_object('schema', old.schema_name, 'name', old.table_name),
        'to', jsonb_build_object('schema', item->'schema', 'name', item->'name')));
    END IF;
    INSERT INTO ddlcore.relations AS r (relid, schema_name, table_name)
      VALUES ((item->>'oid')::oid, item->>'schema', item->>'name')
      ON CONFLICT (relid) DO UPDATE SET schema_name = EXCLUDED.schema_name, table_name = EXCLUDED.table_name
      WHERE (r.schema_name, r.table_name) IS DISTINCT FROM (EXCLUDED.schema_name, EXCLUDED.table_name);
  END LOOP;
  PERFORM pg_logical_emit_message(true, 'ddlcore', (payload || jsonb_build_object('renamed', renamed))::text);
  -- A transactional message is queued for decoding at the *end* of its WAL record, which is
  -- where the next record starts: a row change of the next statement has the same LSN.  When
  -- the message is in a subtransaction (the EXCEPTION block of the trigger, a SAVEPOINT) the
  -- reorder buffer merges subtransactions by LSN and a tie may put that row first.  A second,
  -- empty message takes the tie: the DDL message's LSN is then strictly below any later change.
  PERFORM pg_logical_emit_message(true, 'ddlcore-pad', '');
END $$;

-- sql_drop: note what the command dropped, for the ddl_command_end trigger that follows.
CREATE OR REPLACE FUNCTION ddlcore.on_sql_drop() RETURNS event_trigger
LANGUAGE plpgsql AS $$
DECLARE
  noted jsonb;
  found jsonb;
BEGIN
  noted := COALESCE(NULLIF(pg_catalog.current_setting('ddlcore.dropped', true), ''), '{}')::jsonb;
  SELECT pg_catalog.jsonb_build_object(
           'dropped', COALESCE(noted->'dropped', '[]'::jsonb) || COALESCE(pg_catalog.jsonb_agg(
               pg_catalog.jsonb_build_object('oid', d.objid, 'schema', d.schema_name, 'name', d.object_name))
               FILTER (WHERE d.object_type = 'table' AND NOT d.is_temporary), '[]'::jsonb),
           'touched', COALESCE(noted->'touched', '[]'::jsonb) || COALESCE(pg_catalog.jsonb_agg(
               pg_catalog.jsonb_build_object('oid', CASE WHEN d.object_type = 'table column' THEN d.objid END,
                                             'schema', d.address_names[1], 'name', d.address_names[2]))
               FILTER (WHERE d.object_type IN ('table column', 'table constraint') AND NOT d.is_temporary),
               '[]'::jsonb))
    INTO found
    FROM pg_catalog.pg_event_trigger_dropped_objects() AS d;
  PERFORM pg_catalog.set_config('ddlcore.dropped', found::text, true);
EXCEPTION WHEN OTHERS THEN
  RAISE WARNING 'ddlcore: could not note dropped objects: %', SQLERRM;
END $$;

-- ddl_command_end: describe the tables the command changed and emit the message.
CREATE OR REPLACE FUNCTION ddlcore.on_ddl_command_end() RETURNS event_trigger
LANGUAGE plpgsql AS $$
DECLARE
  noted jsonb;
  commands jsonb;
  relids oid[];
  tables jsonb;
  dropped jsonb;
  payload jsonb;
  relevant boolean;
BEGIN
  noted := COALESCE(NULLIF(pg_catalog.current_setting('ddlcore.dropped', true), ''), '{}')::jsonb;
  PERFORM pg_catalog.set_config('ddlcore.dropped', '', true);
  BEGIN
    SELECT COALESCE(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
             'tag', c.command_tag, 'object_type', c.object_type, 'schema', c.schema_name,
             'identity', c.object_identity, 'in_extension', c.in_extension)), '[]'::jsonb)
      INTO commands FROM pg_catalog.pg_event_trigger_ddl_commands() AS c;
    -- the tables each command changed
    SELECT COALESCE(pg_catalog.array_agg(DISTINCT x.relid), '{}') INTO relids FROM (
        SELECT CASE WHEN r.relkind IN ('r', 'p') THEN r.oid
                    WHEN r.relkind IN ('i', 'I') THEN (SELECT i.indrelid FROM pg_catalog.pg_index i WHERE i.indexrelid = r.oid)
               END AS relid
          FROM pg_catalog.pg_event_trigger_ddl_commands() AS c
          JOIN pg_catalog.pg_class r ON c.classid = 'pg_catalog.pg_class'::regclass AND r.oid = c.objid
      UNION ALL
        SELECT con.conrelid FROM pg_catalog.pg_event_trigger_ddl_commands() AS c
          JOIN pg_catalog.pg_constraint con ON c.classid = 'pg_catalog.pg_constraint'::regclass AND con.oid = c.objid
      UNION ALL
        SELECT u.relid FROM pg_catalog.pg_event_trigger_ddl_commands() AS c
          JOIN pg_catalog.pg_constraint con ON c.classid = 'pg_catalog.pg_constraint'::regclass AND con.oid = c.objid
          CROSS JOIN LATERAL ddlcore.tables_using_type(con.contypid) AS u(relid)
         WHERE con.contypid <> 0
      UNION ALL
        SELECT ad.adrelid FROM pg_catalog.pg_event_trigger_ddl_commands() AS c
          JOIN pg_catalog.pg_attrdef ad ON c.classid = 'pg_catalog.pg_attrdef'::regclass AND ad.oid = c.objid
      UNION ALL
        SELECT u.relid FROM pg_catalog.pg_event_trigger_ddl_commands() AS c
          CROSS JOIN LATERAL ddlcore.tables_using_type(c.objid) AS u(relid)
         WHERE c.classid = 'pg_catalog.pg_type'::regclass
      UNION ALL
        SELECT r.oid FROM pg_catalog.pg_event_trigger_ddl_commands() AS c
          JOIN pg_catalog.pg_class r ON c.classid = 'pg_catalog.pg_namespace'::regclass AND r.relnamespace = c.objid
      UNION ALL
        SELECT (t->>'oid')::oid FROM pg_catalog.jsonb_array_elements(COALESCE(noted->'touched', '[]'::jsonb)) AS t
         WHERE t->>'oid' IS NOT NULL
      UNION ALL
        SELECT pg_catalog.to_regclass(pg_catalog.quote_ident(t->>'schema') || '.' || pg_catalog.quote_ident(t->>'name'))::oid
          FROM pg_catalog.jsonb_array_elements(COALESCE(noted->'touched', '[]'::jsonb)) AS t
         WHERE t->>'oid' IS NULL AND t->>'schema' IS NOT NULL AND t->>'name' IS NOT NULL
    ) AS x WHERE x.relid IS NOT NULL;
    SELECT COALESCE(pg_catalog.jsonb_agg(ddlcore.describe_table(d) ORDER BY d), '[]'::jsonb) INTO tables
      FROM ddlcore.with_descendants(relids) AS d;
    dropped := COALESCE(noted->'dropped', '[]'::jsonb);
    relevant := pg_catalog.jsonb_array_length(tables) > 0 OR pg_catalog.jsonb_array_length(dropped) > 0
      OR TG_TAG ~ '^(CREATE|ALTER|DROP) (TABLE|FOREIGN TABLE|TYPE|DOMAIN|SCHEMA|SEQUENCE|INDEX|VIEW|MATERIALIZED VIEW|EXTENSION)$'
      OR TG_TAG IN ('COMMENT', 'CREATE TABLE AS', 'SELECT INTO', 'IMPORT FOREIGN SCHEMA');
    -- ddlcore's own objects (re-installing) are not the user's schema
    IF relevant AND pg_catalog.jsonb_array_length(tables) = 0 AND pg_catalog.jsonb_array_length(dropped) = 0
       AND NOT EXISTS (SELECT 1 FROM pg_catalog.jsonb_array_elements(commands) AS c
                        WHERE COALESCE(c->>'schema', c->>'identity') IS DISTINCT FROM 'ddlcore') THEN
      relevant := false;
    END IF;
    IF NOT relevant THEN
      RETURN;
    END IF;
    payload := pg_catalog.jsonb_build_object(
      'format', 1, 'tag', TG_TAG, 'query', pg_catalog.current_query(),
      'search_path', pg_catalog.to_jsonb(pg_catalog.current_schemas(false)),
      'database', pg_catalog.current_database(), 'commands', commands,
      'tables', tables, 'dropped', dropped);
  EXCEPTION WHEN OTHERS THEN
    payload := pg_catalog.jsonb_build_object(
      'format', 1, 'tag', TG_TAG, 'query', pg_catalog.current_query(),
      'search_path', pg_catalog.to_jsonb(pg_catalog.current_schemas(false)),
      'database', pg_catalog.current_database(),
      'error', SQLSTATE || ': ' || SQLERRM, 'tables', '[]'::jsonb, 'dropped', '[]'::jsonb);
  END;
  BEGIN
    PERFORM ddlcore.record_ddl(payload);
  EXCEPTION WHEN OTHERS THEN
    RAISE WARNING 'ddlcore: could not write the DDL message for %: %', TG_TAG, SQLERRM;
  END;
END $$;
