"""``ddlcore parse --dialect postgres --format json``: the MySQL contract (issue #3) with the
PostgreSQL fields (schema, arrays, identity, udt/domain names, replica identity, types)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from ddlcore.cli import main

SCRIPT = """
-- pg_dump style
SELECT pg_catalog.set_config('search_path', '', false);
CREATE SCHEMA shop;
CREATE TYPE shop.status AS ENUM ('new', 'paid');
CREATE TABLE shop."Orders" (
    id bigint GENERATED ALWAYS AS IDENTITY,
    tags text[],
    st shop.status DEFAULT 'new'::shop.status NOT NULL,
    PRIMARY KEY (id)
);
COPY shop."Orders" (id, tags, st) FROM stdin;
1	{a}	new
\\.
ALTER TABLE shop."Orders" REPLICA IDENTITY FULL;
CREATE VIEW shop.v AS SELECT id FROM shop."Orders";
GRANT SELECT ON shop.v TO PUBLIC;
"""


def test_parse_json_has_the_postgres_fields(tmp_path):
    path = tmp_path / "dump.sql"
    path.write_text(SCRIPT, encoding="utf-8")
    r = CliRunner().invoke(main, ["parse", "--dialect", "postgres", "--format", "json", str(path)])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    [table] = out["tables"]
    assert (table["database"], table["schema"], table["name"]) == (None, "shop", "Orders")
    assert table["primary_key"] == ["id"] and table["replica_identity"] == "full"
    cols = {c["name"]: c for c in table["columns"]}
    assert cols["id"]["identity"] == "ALWAYS" and cols["id"]["nullable"] is False
    assert (cols["tags"]["data_type"], cols["tags"]["column_type"], cols["tags"]["udt_name"],
            cols["tags"]["array_dimensions"]) == ("ARRAY", "text[]", "_text", 1)
    assert (cols["st"]["data_type"], cols["st"]["column_type"], cols["st"]["enum_values"],
            cols["st"]["column_default"]) == ("USER-DEFINED", "shop.status", ["new", "paid"], "'new'::shop.status")
    assert [v["name"] for v in out["views"]] == ["v"]
