"""``ddlcore run --format iceberg``: the changes table of every source table, evolving with the
DDL (docs/tables.md), read back through the catalog by pyiceberg (Arrow, pandas), Polars and
DuckDB, with time travel; a commit that stops after the Iceberg commit is rolled forward
without duplicating a row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ddlcore.spark import commit
from ddlcore.spark import pipeline as pl

from .support import event

pytest.importorskip("pyiceberg")

RUN1 = [
    event(1, op="ddl", database="shop",
          ddl="CREATE TABLE t (id INT PRIMARY KEY, a INT, c VARCHAR(5), tags SET('x','y'))"),
    event(2, op="c", database="shop", table="t", after=[1, 10, "c1", 3]),
    event(3, op="ddl", database="shop", ddl="ALTER TABLE t DROP COLUMN a, ADD COLUMN b INT AFTER id"),
    event(4, op="c", database="shop", table="t", after=[2, 20, "c2", 1]),
]
RUN2 = [
    event(5, op="ddl", database="shop", ddl="ALTER TABLE t RENAME COLUMN b TO bb, MODIFY id BIGINT"),
    event(6, op="u", database="shop", table="t", before=[2, 20, "c2", 1], after=[2, 21, "c2", 2]),
    event(7, op="ddl", database="shop", ddl="ALTER TABLE t MODIFY c INT, ADD COLUMN a VARCHAR(3)"),
    event(8, op="c", database="shop", table="t", after=[3, 30, 7, 0, "new"]),
    event(9, op="ddl", database="shop", ddl="RENAME TABLE t TO t2"),
    event(10, op="d", database="shop", table="t2", before=[3, 30, 7, 0, "new"]),
]
#: every row event once, under the latest schema: (_seq, id, bb, c__string_v4, c, a, tags)
EXPECTED = [
    (2, 1, None, "c1", None, None, ["x", "y"]),  # a=10 belonged to the dropped column: never under the new a
    (4, 2, 20, "c2", None, None, ["x"]),
    (6, 2, 21, "c2", None, None, ["y"]),
    (8, 3, 30, None, 7, "new", []),
    (10, 3, 30, None, 7, "new", []),
]
COLS = ["_seq", "id", "bb", "c__string_v4", "c", "a", "tags"]


def _write(path: Path, events: list[str]) -> None:
    path.write_text("\n".join(events) + "\n")


def _catalog(out: Path):
    from ddlcore.sinks.iceberg import open_catalog
    return open_catalog({"name": "ddlcore", "uri": f"sqlite:///{out}/_catalog.sqlite",
                         "warehouse": f"file://{out}/_iceberg"})


def _rows(arrow) -> list[tuple]:
    return sorted(tuple(r[c] for c in COLS) for r in arrow.select(COLS).to_pylist())


@pytest.fixture(scope="module")
def two_runs(spark, tmp_path_factory):
    d = tmp_path_factory.mktemp("iceberg")
    log, out = d / "log.jsonl", d / "out"
    _write(log, RUN1)
    pl.run_pipeline(log, out, spark=spark, output_format="iceberg", dialect="mysql")
    _write(log, RUN1 + RUN2)
    pl.run_pipeline(log, out, spark=spark, output_format="iceberg", dialect="mysql")
    return out


def test_changes_table_follows_the_ddl(two_runs):
    cat = _catalog(two_runs)
    assert sorted(cat.list_tables(("shop",))) == [("shop", "t2"), ("shop", "t2__changes")]  # renamed with it
    t = cat.load_table(("shop", "t2__changes"))
    assert _rows(t.scan().to_arrow()) == EXPECTED
    schema = t.schema()
    # the source's order (b was added AFTER id), the retired c right before the c replacing it
    assert [f.name for f in schema.fields][:6] == ["id", "bb", "c__string_v4", "c", "tags", "a"]
    assert [f.name for f in schema.find_field("_before").field_type.fields] == \
        ["id", "bb", "c__string_v4", "c", "tags", "a"]
    assert str(schema.find_field("id").field_type) == "long"  # widened in place
    assert schema.find_field("tags").doc == "set('x','y')"  # the native type travels
    props = t.properties
    assert (props["ddlcore.source-table"], props["ddlcore.dialect"], props["ddlcore.last-seq"]) == \
        ("shop.t2", "mysql", "10")
    # the before image of the update, under the current names
    upd = [r for r in t.scan(row_filter="_seq == 6").to_arrow().to_pylist()]
    assert upd[0]["_before"]["bb"] == 20 and upd[0]["_before"]["id"] == 2


def test_time_travel_shows_the_first_runs_schema_and_rows(two_runs):
    t = _catalog(two_runs).load_table(("shop", "t2__changes"))
    first, second = t.snapshots()
    assert first.summary["ddlcore.last-seq"] == "4" and second.summary["ddlcore.last-seq"] == "10"
    old = t.scan(snapshot_id=first.snapshot_id).to_arrow()
    assert old.column_names[:4] == ["id", "b", "c", "tags"]
    assert sorted((r["_seq"], r["id"], r["b"], r["c"]) for r in old.to_pylist()) == [(2, 1, None, "c1"),
                                                                                      (4, 2, 20, "c2")]


def test_polars_duckdb_and_pandas_read_the_same_rows(two_runs):
    import duckdb
    import polars

    t = _catalog(two_runs).load_table(("shop", "t2__changes"))
    pol = polars.scan_iceberg(t).select(COLS).collect()
    assert sorted(tuple(r) for r in pol.rows()) == [tuple(r) for r in EXPECTED]
    arrow = t.scan().to_arrow()  # noqa: F841 - read by DuckDB below, by its variable name
    got = duckdb.sql("SELECT _seq, id, bb, c FROM arrow ORDER BY _seq").fetchall()
    assert got == [(s, i, bb, c) for s, i, bb, _, c, _, _ in EXPECTED]
    pdf = t.scan(selected_fields=("_seq", "a")).to_pandas().sort_values("_seq")
    assert pdf["a"].tolist()[-2:] == ["new", "new"] and pdf["a"].isna().sum() == 3


def test_a_commit_stopped_after_the_iceberg_commit_rolls_forward_once(spark, tmp_path, monkeypatch):
    log, out = tmp_path / "log.jsonl", tmp_path / "out"
    _write(log, RUN1)
    real = commit.write_json

    def crash_at_checkpoint(fs, rel, data, **kw):
        if rel == "_state/checkpoint.json":
            raise KeyboardInterrupt("killed between the Iceberg commit and the checkpoint")
        return real(fs, rel, data, **kw)

    monkeypatch.setattr(commit, "write_json", crash_at_checkpoint)
    with pytest.raises(KeyboardInterrupt):
        pl.run_pipeline(log, out, spark=spark, output_format="iceberg", dialect="mysql")
    monkeypatch.setattr(commit, "write_json", real)
    assert (out / "_state" / "pending.json").exists()
    t = _catalog(out).load_table(("shop", "t__changes"))
    assert len(t.scan().to_arrow()) == 2  # committed to Iceberg, not checkpointed
    cur = _catalog(out).load_table(("shop", "t"))
    assert len(cur.snapshots()) == 1  # the current state too
    # the same plan as an earlier version wrote it (current state in buckets, before position
    # deletes): its roll-forward stops in one line saying what to do, before doing anything
    pending = out / "_state" / "pending.json"
    written = pending.read_text()
    plan = json.loads(written)
    for entry in plan["sink"]["tables"]:
        current = entry["current"]
        del current["remove"], current["deletes"]
        current.update(buckets=16, touched=None, files=[[f, 0] for f in current["files"]])
    pending.write_text(json.dumps(plan))
    with pytest.raises(pl.PipelineError, match=r"pending\.json: the unfinished commit of an earlier ddlcore .* "
                                               r"run the version that wrote it once on this output"):
        pl.run_pipeline(log, out, spark=spark, output_format="iceberg", dialect="mysql")
    assert pending.read_text() == json.dumps(plan) and not (out / "_state" / "checkpoint.json").exists()
    pending.write_text(written)
    pl.run_pipeline(log, out, spark=spark, output_format="iceberg", dialect="mysql")  # rolls forward, then nothing new
    t = _catalog(out).load_table(("shop", "t__changes"))
    assert sorted(r["_seq"] for r in t.scan().to_arrow().to_pylist()) == [2, 4]
    assert len(t.snapshots()) == 1
    cur = _catalog(out).load_table(("shop", "t"))
    assert len(cur.snapshots()) == 1 and _current_rows(cur) == _spark_current(spark, out, "shop.t") == \
        [(1, None, "c1", ["x", "y"], 2, []), (2, 20, "c2", ["x"], 4, [])]
    # killed again, in a run of row events only (the incremental merge): the same as uninterrupted
    _write(log, RUN1 + [event(5, op="u", database="shop", table="t", before=[2, 20, "c2", 1], after=[2, 22, "c2", 1])])
    monkeypatch.setattr(commit, "write_json", crash_at_checkpoint)
    with pytest.raises(KeyboardInterrupt):
        pl.run_pipeline(log, out, spark=spark, output_format="iceberg", dialect="mysql")
    monkeypatch.setattr(commit, "write_json", real)
    pl.run_pipeline(log, out, spark=spark, output_format="iceberg", dialect="mysql")
    cur = _catalog(out).load_table(("shop", "t"))
    assert len(cur.snapshots()) == 2 and _current_rows(cur) == [(1, None, "c1", ["x", "y"], 2, []),
                                                                (2, 22, "c2", ["x"], 5, [])]
    assert json.loads((out / "_state" / "checkpoint.json").read_text())["last_seq"] == 5


def _spark_rows(df) -> list[tuple]:
    return sorted(tuple(r[c] for c in COLS) for r in df.select(*COLS).collect())


def test_read_table_with_plain_spark_equals_the_iceberg_view(spark, two_runs, tmp_path):
    import ddlcore

    t = _catalog(two_runs).load_table(("shop", "t2__changes"))
    changes = ddlcore.read_table(spark, two_runs, "shop.t2")
    assert changes.columns == t.schema().column_names[:len(changes.columns)] or \
        changes.columns == [f.name for f in t.schema().fields]
    assert _spark_rows(changes) == _rows(t.scan().to_arrow()) == EXPECTED
    # by its old name too, and the same rows from a --format parquet output of the same log
    assert _spark_rows(ddlcore.read_table(spark, two_runs, "shop.t")) == EXPECTED
    log, out = tmp_path / "log.jsonl", tmp_path / "out"
    _write(log, RUN1 + RUN2)
    pl.run_pipeline(log, out, spark=spark, dialect="mysql")
    assert _spark_rows(ddlcore.read_table(spark, out, "shop.t2")) == EXPECTED


def test_read_table_current_state_and_as_of_seq(spark, two_runs):
    import ddlcore

    cur = ddlcore.read_table(spark, two_runs, "shop.t2", current=True)
    assert cur.columns == ["id", "bb", "c", "tags", "a", "_seq", "_unknown"]  # the source's order
    # c: VARCHAR(5) → INT is not a conversion ddlcore can know ('c1' is no number): marked
    assert sorted(tuple(r) for r in cur.collect()) == [(1, None, None, ["x", "y"], None, 2, ["c"]),
                                                       (2, 21, None, ["y"], None, 6, ["c"])]
    old = ddlcore.read_table(spark, two_runs, "shop.t", as_of_seq=4)
    assert old.columns[:4] == ["id", "b", "c", "tags"]
    assert sorted((r["_seq"], r["id"], r["b"], r["c"]) for r in old.collect()) == [(2, 1, None, "c1"),
                                                                                   (4, 2, 20, "c2")]


def test_ddlcore_tables_lists_the_output(two_runs):
    from click.testing import CliRunner

    from ddlcore.cli import main

    res = CliRunner().invoke(main, ["tables", str(two_runs), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output) == [{"table": "shop.t2", "schema_version": 1, "dropped": False, "changes_rows": 5,
                                       "last_seq": 10, "quarantined": 0, "iceberg": "shop.t2__changes",
                                       "current_rows": 2}]
    res = CliRunner().invoke(main, ["tables", str(two_runs / "nothing")])
    assert res.exit_code == 2 and "not a ddlcore run output" in res.output


def test_current_state_computes_what_the_server_did_without_row_events(spark, tmp_path):
    """ADD COLUMN with a constant or CURRENT_TIMESTAMP default, and exact retypes, give the rows
    that existed what the server gave them; other cases are listed in ``_unknown``."""
    import datetime as dt
    from decimal import Decimal

    import ddlcore
    from ddlcore.raw import encode_json

    ddl = ("ALTER TABLE s ADD COLUMN d INT DEFAULT 5, ADD COLUMN e DATETIME DEFAULT CURRENT_TIMESTAMP, "
           "ADD COLUMN f VARCHAR(9) DEFAULT 'x''y', ADD COLUMN g INT DEFAULT (1+1), MODIFY code VARCHAR(20), "
           "MODIFY n INT, MODIFY p DECIMAL(9,3)")
    dec = lambda text: encode_json(Decimal(text))  # noqa: E731
    events = [
        event(1, op="ddl", database="shop",
              ddl="CREATE TABLE s (id INT PRIMARY KEY, code INT, n BIGINT, p DECIMAL(5,2))"),
        event(2, op="c", database="shop", table="s", after=[1, 7, 300, dec("1.50")]),
        event(3, op="c", database="shop", table="s", after=[2, 8, 5, dec("2.25")]),
        event(4, op="ddl", database="shop", ddl=ddl),
        event(5, op="c", database="shop", table="s", after=[3, "z", 1, dec("1.250"), 6, None, "q", 3]),
    ]
    log, out = tmp_path / "log.jsonl", tmp_path / "out"
    _write(log, events)
    pl.run_pipeline(log, out, spark=spark, dialect="mysql")
    got = {r["id"]: r.asDict() for r in ddlcore.read_table(spark, out, "shop.s", current=True).collect()}
    at = dt.datetime.fromtimestamp(json.loads(events[3])["ts"] / 1000, dt.timezone.utc).replace(tzinfo=None)
    assert got[1] == {"id": 1, "d": 5, "e": at, "f": "x'y", "g": None, "code": "7", "n": None,
                      "p": Decimal("1.500"), "_seq": 2, "_unknown": ["n", "g"]}
    assert got[2]["code"] == "8" and got[2]["p"] == Decimal("2.250") and got[2]["_unknown"] == ["n", "g"]
    assert got[3] == {"id": 3, "d": 6, "e": None, "f": "q", "g": 3, "code": "z", "n": 1,
                      "p": Decimal("1.250"), "_seq": 5, "_unknown": []}


def test_format_errors_are_one_line_before_anything_is_written(spark, two_runs, tmp_path):
    with pytest.raises(pl.PipelineError, match="--format parquet: .* was written with --format iceberg"):
        pl.run_pipeline(_log(tmp_path), two_runs, spark=spark, dialect="mysql")
    with pytest.raises(pl.PipelineError, match="--format 'delta': expected one of parquet, iceberg"):
        pl.run_pipeline(_log(tmp_path), tmp_path / "new", spark=spark, output_format="delta", dialect="mysql")
    assert not (tmp_path / "new").exists()


def _log(tmp_path: Path) -> Path:
    path = tmp_path / "log.jsonl"
    _write(path, RUN1 + RUN2)
    return path


def _current_rows(table) -> list[tuple]:
    """A current-state table's rows through pyiceberg, in its column order."""
    arrow = table.scan().to_arrow()
    return sorted(tuple(r.values()) for r in arrow.to_pylist())


def _spark_current(spark, out: Path, name: str) -> list[tuple]:
    import ddlcore
    return sorted(tuple(r) for r in ddlcore.read_table(spark, out, name, current=True).collect())


def test_current_state_table_equals_read_table_current(spark, two_runs):
    t = _catalog(two_runs).load_table(("shop", "t2"))
    assert [f.name for f in t.schema().fields] == ["id", "bb", "c", "tags", "a", "_seq", "_unknown"]
    assert _current_rows(t) == _spark_current(spark, two_runs, "shop.t2") == \
        [(1, None, None, ["x", "y"], None, 2, ["c"]), (2, 21, None, ["y"], None, 6, ["c"])]
    assert t.properties["ddlcore.last-seq"] == "10"


ABSENT = {"$absent": True}
#: runs over one table: inserts; updates (one with an absent column), a delete, an insert;
#: one key updated; a truncate and an insert
U_RUNS = [
    [event(1, op="ddl", database="shop", ddl="CREATE TABLE u (id INT PRIMARY KEY, v INT, w VARCHAR(5))")]
    + [event(1 + i, op="c", database="shop", table="u", after=[i, i * 10, f"w{i}"]) for i in range(1, 41)],
    [event(50, op="u", database="shop", table="u", before=[1, 10, "w1"], after=[1, 11, ABSENT]),
     event(51, op="u", database="shop", table="u", before=[1, 11, "w1"], after=[1, 12, ABSENT]),
     event(52, op="d", database="shop", table="u", before=[2, 20, "w2"]),
     event(53, op="c", database="shop", table="u", after=[99, 990, "w99"])],
    [event(60, op="u", database="shop", table="u", before=[3, 30, "w3"], after=[3, 31, "x3"])],
    [event(70, op="t", database="shop", table="u"),
     event(71, op="c", database="shop", table="u", after=[5, 50, "y5"])],
]


def _data_files(table) -> dict[str, int]:
    """The current snapshot's data files: path → records."""
    return {t.file.file_path: t.file.record_count for t in table.scan().plan_files()}


def _delete_files(table) -> dict[str, list[str]]:
    """The current snapshot's position delete files: data file path → its delete files' paths."""
    return {t.file.file_path: sorted(d.file_path for d in t.delete_files) for t in table.scan().plan_files()
            if t.delete_files}


def test_current_state_table_follows_each_run_and_adds_only_what_a_run_changes(spark, tmp_path):
    log, out = tmp_path / "log.jsonl", tmp_path / "out"
    done: list[str] = []
    files, deletes = [], []
    for n, run in enumerate(U_RUNS):
        done += run
        _write(log, done)
        pl.run_pipeline(log, out, spark=spark, output_format="iceberg", dialect="mysql")
        t = _catalog(out).load_table(("shop", "u"))
        assert _current_rows(t) == _spark_current(spark, out, "shop.u"), n
        files.append(_data_files(t))
        deletes.append(_delete_files(t))
    rows = {r[0]: r for r in _current_rows(_catalog(out).load_table(("shop", "u")))}
    assert rows == {5: (5, 50, "y5", 71, [])}  # the truncate emptied it
    assert sum(files[0].values()) == 40 and not deletes[0]
    # run 2 changed keys 1, 2 (deleted) and 99 (new): their old rows deleted by position, one new file
    (new2,) = set(files[1]) - set(files[0])
    assert set(files[0]) < set(files[1]) and files[1][new2] == 2 and len(deletes[1]) == 1
    # run 3 touched key 3 only: one new data file of one row; the first file's delete file replaced
    (new3,) = set(files[2]) - set(files[1])
    assert set(files[1]) < set(files[2]) and files[2][new3] == 1
    (data, dels), = deletes[2].items()
    assert data in files[0] and dels != deletes[1][data]
    # the truncate: every earlier file gone
    assert not set(files[3]) & set(files[2]) and not deletes[3]
    _check_scd2(_catalog(out).load_table(("shop", "u__changes")))


#: the SCD type 2 recipe of docs/tables.md ("SCD type 2"), verbatim
SCD2 = """
WITH ev AS (
  SELECT id, v,
         last_value(CASE WHEN NOT list_contains(coalesce(_absent, []), 'w') THEN w END IGNORE NULLS)
           OVER (PARTITION BY id ORDER BY _seq, _row ROWS UNBOUNDED PRECEDING) AS w,
         _op, _seq,
         lead(_seq) OVER (PARTITION BY id ORDER BY _seq, _row) AS next_seq
  FROM changes WHERE _op <> 't'),
truncates AS (SELECT _seq AS t_seq FROM changes WHERE _op = 't')
SELECT id, v, w, _seq AS valid_from_seq,
       least(next_seq, (SELECT min(t_seq) FROM truncates WHERE t_seq > ev._seq)) AS valid_to_seq
FROM ev WHERE _op <> 'd'
"""


def _check_scd2(table) -> None:
    import duckdb

    changes = table.scan().to_arrow()  # noqa: F841 - read by DuckDB by its variable name
    got = {(r[0], r[3]): r for r in duckdb.sql(SCD2).fetchall()}
    assert len(got) == 40 + 1 + 2 + 1 + 1  # inserts, 99, two updates of 1, one of 3, 5 after the truncate
    assert [got[(1, s)] for s in (2, 50, 51)] == [(1, 10, "w1", 2, 50), (1, 11, "w1", 50, 51), (1, 12, "w1", 51, 70)]
    assert got[(2, 3)] == (2, 20, "w2", 3, 52)  # deleted at 52
    assert got[(5, 6)][4] == 70 and got[(5, 71)] == (5, 50, "y5", 71, None)  # truncated, then inserted again


def test_current_state_keeps_absent_values_across_runs(spark, tmp_path):
    log, out = tmp_path / "log.jsonl", tmp_path / "out"
    _write(log, U_RUNS[0])
    pl.run_pipeline(log, out, spark=spark, output_format="iceberg", dialect="mysql")
    _write(log, U_RUNS[0] + U_RUNS[1])
    pl.run_pipeline(log, out, spark=spark, output_format="iceberg", dialect="mysql")
    rows = {r[0]: r for r in _current_rows(_catalog(out).load_table(("shop", "u")))}
    assert rows[1] == (1, 12, "w1", 51, []) and 2 not in rows and rows[99] == (99, 990, "w99", 53, [])
    assert len(rows) == 40


def test_drop_table_empties_the_current_state_and_a_recreated_table_starts_afresh(spark, tmp_path):
    log, out = tmp_path / "log.jsonl", tmp_path / "out"
    runs = [U_RUNS[0][:3], [event(60, op="ddl", database="shop", ddl="DROP TABLE u")],
            [event(61, op="ddl", database="shop", ddl="CREATE TABLE u (id INT PRIMARY KEY, v INT, w VARCHAR(5))"),
             event(62, op="c", database="shop", table="u", after=[7, 70, "n7"])]]
    done: list[str] = []
    got = []
    for run in runs:
        done += run
        _write(log, done)
        pl.run_pipeline(log, out, spark=spark, output_format="iceberg", dialect="mysql")
        t = _catalog(out).load_table(("shop", "u"))
        got.append((_current_rows(t), t.properties["ddlcore.dropped"]))
    assert got == [([(1, 10, "w1", 2, []), (2, 20, "w2", 3, [])], "false"), ([], "true"),
                   ([(7, 70, "n7", 62, [])], "false")]
    assert _spark_current(spark, out, "shop.u") == got[-1][0]


def test_duckdb_iceberg_scan_reads_both_tables_and_time_travels(two_runs):
    """DuckDB's own ``iceberg_scan`` (its ``iceberg`` extension: tests/duckdb_iceberg.py) on the
    metadata files: the same rows and columns as pyiceberg, the first snapshot's schema."""
    from tests.duckdb_iceberg import iceberg_scan, metadata_file

    cat = _catalog(two_runs)
    changes = cat.load_table(("shop", "t2__changes"))
    meta = metadata_file(changes)
    cols, rows = iceberg_scan(f"SELECT * FROM iceberg_scan('{meta}') ORDER BY _seq")
    assert cols == [f.name for f in changes.schema().fields]
    assert sorted(tuple(dict(zip(cols, r))[c] for c in COLS) for r in rows) == EXPECTED
    first = changes.snapshots()[0].snapshot_id
    cols, rows = iceberg_scan(f"SELECT * FROM iceberg_scan('{meta}', snapshot_from_id={first}) ORDER BY _seq")
    assert cols[:4] == ["id", "b", "c", "tags"]
    assert [(r[cols.index("_seq")], r[0], r[1], r[2]) for r in rows] == [(2, 1, None, "c1"), (4, 2, 20, "c2")]
    current = cat.load_table(("shop", "t2"))
    cols, rows = iceberg_scan(f"SELECT * FROM iceberg_scan('{metadata_file(current)}')")
    assert cols == [f.name for f in current.schema().fields]
    assert sorted(rows) == _current_rows(current)


#: a table renamed onto the name of a dropped table, a column renamed onto a dropped column's name
ONTO_DROPPED = [
    event(1, op="ddl", database="shop", ddl="CREATE TABLE t (id INT PRIMARY KEY, a INT)"),
    event(2, op="c", database="shop", table="t", after=[1, 11]),
    event(3, op="ddl", database="shop", ddl="DROP TABLE t"),
    event(4, op="ddl", database="shop", ddl="CREATE TABLE u (id INT PRIMARY KEY, x VARCHAR(5), a INT)"),
    event(5, op="c", database="shop", table="u", after=[2, "x5", 55]),
]
ONTO_DROPPED_2 = [
    event(6, op="ddl", database="shop", ddl="ALTER TABLE u DROP COLUMN a"),
    event(7, op="ddl", database="shop", ddl="ALTER TABLE u RENAME COLUMN x TO a"),
    event(8, op="ddl", database="shop", ddl="RENAME TABLE u TO t"),
    event(9, op="c", database="shop", table="t", after=[3, "a9"]),
    event(10, op="u", database="shop", table="t", before=[2, "x5"], after=[2, "a10"]),
]


def test_a_table_renamed_onto_a_dropped_tables_name_moves_the_dropped_one_aside(spark, tmp_path):
    """``RENAME TABLE u TO t`` after ``DROP TABLE t``: ``t``'s tables now hold ``u``'s rows; the
    dropped ``t``'s two tables are kept under ``t__dropped<seq>`` (its DROP's seq), readable.
    ``x`` renamed onto the dropped ``a``'s name: ``a`` shows ``x``'s values only."""
    import ddlcore

    log, out = tmp_path / "log.jsonl", tmp_path / "out"
    _write(log, ONTO_DROPPED)
    pl.run_pipeline(log, out, spark=spark, output_format="iceberg", dialect="mysql")
    _write(log, ONTO_DROPPED + ONTO_DROPPED_2)
    pl.run_pipeline(log, out, spark=spark, output_format="iceberg", dialect="mysql")
    cat = _catalog(out)
    assert sorted(cat.list_tables(("shop",))) == [("shop", "t"), ("shop", "t__changes"), ("shop", "t__dropped3"),
                                                  ("shop", "t__dropped3__changes")]
    changes = cat.load_table(("shop", "t__changes"))
    assert [f.name for f in changes.schema().fields][:2] == ["id", "a"]
    assert sorted((r["_seq"], r["id"], r["a"]) for r in changes.scan().to_arrow().to_pylist()) == \
        [(5, 2, "x5"), (9, 3, "a9"), (10, 2, "a10")]  # 55 belonged to the dropped a: never under a
    assert sorted((r["id"], r["a"], r["_seq"]) for r in cat.load_table(("shop", "t")).scan().to_arrow().to_pylist()) \
        == [(2, "a10", 10), (3, "a9", 9)]
    old = cat.load_table(("shop", "t__dropped3__changes"))
    assert old.properties["ddlcore.dropped"] == "true"
    # the dropped table's changes keep their fields: the run that inserted and dropped shows the row
    assert [(r["_seq"], r["id"], r["a"]) for r in old.scan().to_arrow().to_pylist()] == [(2, 1, 11)]
    assert cat.load_table(("shop", "t__dropped3")).scan().to_arrow().num_rows == 0  # emptied by the DROP
    assert sorted((r["id"], r["a"]) for r in ddlcore.read_table(spark, out, "shop.t", current=True).collect()) == \
        [(2, "a10"), (3, "a9")]
    # ddlcore tables: the dropped t under its moved-aside names, the renamed one under t
    from ddlcore.sinks.listing import list_tables
    facts = sorted((f.iceberg, f.dropped, f.current_rows) for f in list_tables(out))
    assert facts == [("shop.t__changes", False, 2), ("shop.t__dropped3__changes", True, 0)]


def test_data_files_registered_from_the_stages_footers_hold_each_files_true_counts(spark, tmp_path, monkeypatch):
    """The Arrow face read the staged version files' footers (and wrote the current-state
    files): the plan carries their record counts and sizes (``file_counts``), the commit opens
    none of those files again, and every ``DataFile`` of both tables says what its file holds."""
    import os

    import pyarrow.parquet as pq

    from ddlcore.sinks import icecommit

    opened: list[str] = []
    real = icecommit.local_data_file

    def spy(uri):
        opened.append(uri)
        return real(uri)

    plans: list[dict] = []
    write = commit.write_json

    def keep_plan(fs, rel, data, **kw):
        if rel == "_state/pending.json":
            plans.append(data)
        return write(fs, rel, data, **kw)

    monkeypatch.setattr(icecommit, "local_data_file", spy)
    monkeypatch.setattr(commit, "write_json", keep_plan)
    log, out = tmp_path / "log.jsonl", tmp_path / "out"
    _write(log, RUN1 + RUN2)
    pl.run_pipeline(log, out, spark=spark, output_format="iceberg", dialect="mysql")
    (entry,) = plans[0]["sink"]["tables"]
    assert len(entry["file_counts"]) == len(entry["dirs"]) == 5 and entry["current"]["file_counts"]  # (one file each)
    assert opened == []
    for ident in (("shop", "t2__changes"), ("shop", "t2")):
        files = [t.file for t in _catalog(out).load_table(ident).scan().plan_files()]
        assert files, ident
        for f in files:
            path = f.file_path.removeprefix("file://")
            assert (f.record_count, f.file_size_in_bytes) == (pq.read_metadata(path).num_rows,
                                                              os.path.getsize(path)), f.file_path
