"""The commit of ``ddlcore run`` (docs/pipeline.md, "Crash safety"): the staged files are named
after the run, a directory whose destination does not exist yet is moved whole (a first run
moves a handful of directories, not a file each), rows of an incremental run are appended file
by file to the version directories that exist, and a commit killed between any two moves — or
in the middle of a directory move, as an object store leaves one — is rolled forward to exactly
the output of an uninterrupted run.  ``OutputFS``'s moves are tested on their own too."""

from __future__ import annotations

import decimal
import json
from pathlib import Path

import pytest

from tests.pipeline.support import Log

pyspark = pytest.importorskip("pyspark")

from ddlcore import Table  # noqa: E402
from ddlcore.spark import RowConverter  # noqa: E402
from ddlcore.spark import commit  # noqa: E402
from ddlcore.spark import pipeline as pl  # noqa: E402
from ddlcore.spark.fs import OutputFS  # noqa: E402

COLUMNS = ("(id int unsigned NOT NULL PRIMARY KEY, status enum('new','paid'), "
           "note varchar(20) CHARACTER SET latin1, total decimal(8,2))")


def sharded_log(tmp_path: Path) -> Log:
    """Two tables of the same columns (one conversion group per version: written by one job,
    partitioned by version) and a third of its own, each with two versions."""
    log = Log(tmp_path / "changelog.jsonl")
    log.ddl("CREATE DATABASE shop")
    for t in ("orders_00", "orders_01"):
        log.ddl(f"CREATE TABLE {t} {COLUMNS}")
    log.ddl("CREATE TABLE notes (id int NOT NULL PRIMARY KEY, body text)")
    for i, t in enumerate(("orders_00", "orders_01")):
        log.row("c", t, after=[i, 1, b"caf\xe9", decimal.Decimal("1.50")])
        log.row("u", t, before=[i, 1, b"caf\xe9", decimal.Decimal("1.50")],
                after=[i, 2, b"caf\xe9", decimal.Decimal("2.50")])
    log.row("c", "notes", after=[1, b"hello"])
    for t in ("orders_00", "orders_01"):
        log.ddl(f"ALTER TABLE {t} ADD COLUMN qty smallint")
    log.ddl("ALTER TABLE notes ADD COLUMN seen tinyint")
    for i, t in enumerate(("orders_00", "orders_01")):
        log.row("c", t, after=[10 + i, 1, b"x", decimal.Decimal("3.00"), 4])
    log.row("c", "notes", after=[2, b"again", 1])
    log.row("c", "nowhere", after=[1])  # quarantined: unknown table
    return log


def grow(log: Log) -> None:
    """Rows for versions that exist (appended to their directories) and a new version."""
    log.row("c", "orders_00", after=[20, 2, b"y", decimal.Decimal("5.00"), 1])
    log.row("d", "notes", before=[2, b"again", 1])
    log.ddl("ALTER TABLE orders_01 ADD COLUMN flag tinyint")
    log.row("c", "orders_01", after=[21, 1, b"z", decimal.Decimal("6.00"), 2, 1])
    log.row("c", "nowhere", after=[2])


def output_of(spark, out: Path) -> dict:
    """Everything a reader sees: the rows of every version directory, the schema files, the
    quarantine, the counts and the checkpoint; and the files that must not be there."""
    rows = {}
    for d in sorted(out.glob("shop/*/schema_version=*")):
        rows[str(d.relative_to(out))] = sorted(
            json.dumps(r.asDict(recursive=True), sort_keys=True, default=str)
            for r in spark.read.parquet(str(d)).collect())
    quarantine = sorted(line for f in (out / "_quarantine").glob("*.json")
                        for line in f.read_text().splitlines() if line.strip())
    run = json.loads((out / "_run.json").read_text())
    return {"rows": rows, "quarantine": quarantine,
            "schemas": {f.name: json.loads(f.read_text()) for f in sorted((out / "_schemas").glob("*.json"))},
            "counts": run["total"], "runs": run["runs"],
            "checkpoint": json.loads((out / "_state" / "checkpoint.json").read_text())["last_seq"],
            "left": sorted(p.name for p in (out / "_state").iterdir() if not p.name.startswith(".")),
            "markers": sorted(str(p.relative_to(out)) for p in out.rglob("_SUCCESS*"))}


def recording(monkeypatch, plans: list, deaths: tuple[int | None, ...] = ()) -> None:
    """``commit.apply_moves`` records the moves of each plan it is given (a run's commit, or the
    roll-forward of one at the start of a run); the ``i``-th call, when ``deaths[i]`` is not
    ``None``, "kills" the run after that many moves."""
    real = commit.apply_moves

    def apply(moves, fs):
        plans.append([list(m) for m in moves])
        die_after = deaths[len(plans) - 1] if len(plans) <= len(deaths) else None
        if die_after is None:
            return real(moves, fs)
        real(moves[:die_after], fs)
        raise KeyboardInterrupt(f"killed after {die_after} move(s)")

    monkeypatch.setattr(commit, "apply_moves", apply)


def test_a_first_run_moves_whole_directories_of_files_named_after_the_run(spark, tmp_path, monkeypatch):
    log = sharded_log(tmp_path)
    out = tmp_path / "out"
    plans: list = []
    recording(monkeypatch, plans)
    res = pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    assert res.rows == 8 and res.quarantined == 1
    [moves] = plans
    run = json.loads((out / "_state" / "checkpoint.json").read_text())["run"]
    staging = f"_state/staging/{run}"
    # the database directory (every table and version of it), the schema files and the
    # quarantine: three renames, not one per file
    assert moves == [[f"{staging}/_quarantine", "_quarantine", "dir"], [f"{staging}/_schemas", "_schemas", "dir"],
                     [f"{staging}/shop", "shop", "dir"]]
    files = [p for p in out.rglob("*") if p.is_file() and not p.name.startswith(".")
             and p.parts[len(out.parts)] in ("shop", "_quarantine")]
    assert files and all(p.name.startswith(f"{run}-part-") for p in files), files
    assert sorted(str(p.parent.relative_to(out)) for p in files if p.suffix == ".parquet") == sorted(
        {f"shop/{t}/schema_version={v}" for t in ("orders_00", "orders_01", "notes") for v in (1, 2)})
    got = output_of(spark, out)
    assert got["markers"] == [] and got["left"] == ["checkpoint.json", "inputs.json", "log.json"]
    assert not (out / "_state" / "staging").exists()
    # the schema files' struct_type is the one RowConverter builds
    for name, schema in got["schemas"].items():
        conv = RowConverter(Table.from_json(schema["model"]), "mysql", options=json.loads(
            (out / "_state" / "log.json").read_text())["spark_options"])
        assert schema["struct_type"] == conv.struct_type.jsonValue(), name


def test_an_incremental_run_appends_file_by_file_and_moves_new_versions_whole(spark, tmp_path, monkeypatch):
    log = sharded_log(tmp_path)
    out = tmp_path / "out"
    pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    first = json.loads((out / "_state" / "checkpoint.json").read_text())["run"]
    before = {p.name for p in out.rglob("*.parquet")}
    grow(log)
    plans: list = []
    recording(monkeypatch, plans)
    res = pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    assert res.rows == 3 and res.quarantined == 1
    second = json.loads((out / "_state" / "checkpoint.json").read_text())["run"]
    [moves] = plans
    staging = f"_state/staging/{second}"
    dirs = [m for m in moves if len(m) == 3]
    assert dirs == [[f"{staging}/shop/orders_01/schema_version=3", "shop/orders_01/schema_version=3", "dir"]]
    files = {m[1].rpartition("/")[0] for m in moves if len(m) == 2}
    assert files == {"_quarantine", "_schemas", "shop/orders_00/schema_version=2", "shop/notes/schema_version=2"}
    assert all(m[1].rpartition("/")[2].startswith(f"{second}-") for m in moves
               if len(m) == 2 and not m[1].startswith("_schemas/"))
    # the first run's files are where they were, the second's beside them
    v2 = {p.name for p in (out / "shop" / "orders_00" / "schema_version=2").glob("*.parquet")}
    assert {n for n in v2 if n.startswith(f"{first}-")} <= before and any(n.startswith(f"{second}-") for n in v2)
    got = output_of(spark, out)
    assert [json.loads(r)["_seq"] for r in got["rows"]["shop/orders_00/schema_version=2"]] == [13, 17]
    assert len(got["quarantine"]) == 2 and got["markers"] == []


@pytest.fixture(scope="module")
def never_killed(spark, tmp_path_factory) -> dict:
    """``output_of`` the runs of the roll-forward test below, never killed: the sharded log's,
    its growth's, and one that finds nothing new (the same for each ``die_after``: run once)."""
    tmp = tmp_path_factory.mktemp("never-killed")
    reference = sharded_log(tmp)
    ref = tmp / "ref"
    pl.run_pipeline(reference.write(), ref, spark=spark, dialect="mysql")
    grow(reference)
    pl.run_pipeline(reference.write(), ref, spark=spark, dialect="mysql")
    pl.run_pipeline(reference.write(), ref, spark=spark, dialect="mysql")  # nothing new (a run all the same)
    return output_of(spark, ref)


@pytest.mark.parametrize("die_after", [1, 3])
def test_a_commit_killed_between_two_moves_is_rolled_forward(spark, tmp_path, monkeypatch, die_after, never_killed):
    """A first run killed after some of its (directory) moves; the next run killed while it
    rolls that commit forward; the next one rolls it forward, then is killed after some of its
    own (file and directory) moves; the last rolls that forward and finds nothing new.  Every
    roll-forward repeats the whole plan, and the output equals that of runs never killed."""
    (tmp_path / "b").mkdir()
    log = sharded_log(tmp_path / "b")
    out = tmp_path / "out"
    plans: list = []
    recording(monkeypatch, plans, (die_after, die_after + 1, None, die_after))
    with pytest.raises(KeyboardInterrupt):
        pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    assert (out / "_state" / "pending.json").exists()
    grow(log)
    with pytest.raises(KeyboardInterrupt):  # killed in the roll-forward
        pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    with pytest.raises(KeyboardInterrupt):  # rolls forward, runs, killed in its own commit
        pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    assert pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql").events == 0
    assert len(plans) == 6 and plans[0] == plans[1] == plans[2] and plans[3] == plans[4]
    assert len(plans[3]) > die_after and {len(m) for m in plans[3]} == {2, 3}  # files and a directory
    assert output_of(spark, out) == never_killed


@pytest.fixture
def fs(spark, tmp_path):
    out = OutputFS(spark, str(tmp_path / "o"))
    out.mkdirs()
    yield out
    out.close()


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.startswith(".")}


def test_moves_are_idempotent_and_a_half_done_directory_move_is_finished(fs, tmp_path):
    root = tmp_path / "o"
    for name, text in (("s/v/a", "1"), ("s/v/b", "2"), ("s/w/c", "3"), ("s/f", "new"), ("f", "old")):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    assert fs.walk("s") == [("s/f", False), ("s/v", True), ("s/v/a", False), ("s/v/b", False),
                            ("s/w", True), ("s/w/c", False)]
    # an object store's directory rename interrupted after its first file: part of it at the
    # destination, all of it still at the source
    (root / "t" / "w").mkdir(parents=True)
    (root / "t" / "w" / "c").write_text("3")
    moves = [["s/v", "t/v", "dir"], ["s/w", "t/w", "dir"], ["s/f", "f"]]
    for _ in range(2):  # a roll-forward repeats every move
        commit.apply_moves(moves, fs)
        assert _tree(root) == {"f": "new", "t/v/a": "1", "t/v/b": "2", "t/w/c": "3"}
    assert not (root / "t" / "w" / "w").exists()  # never the directory moved *into* its destination
    assert fs.move("nothing", "x") is False and fs.move_dir("nothing", "y") is False


def test_a_local_tree_is_put_in_place_at_once(fs, tmp_path):
    local = tmp_path / "local" / "tree"
    (local / "a" / "b").mkdir(parents=True)
    (local / "a" / "f.json").write_text("{}")
    fs.mkdirs("x")
    fs.put_tree(str(local), "x/tree")
    root = tmp_path / "o"
    assert _tree(root) == {"x/tree/a/f.json": "{}"} and (root / "x" / "tree" / "a" / "b").is_dir()
    assert not local.exists()


@pytest.mark.parametrize("root", ["o", "o[1]"])
def test_names_are_the_listed_names(spark, tmp_path, root):
    """``names`` (a glob and the text of its paths) lists what ``list`` lists, also under a
    root whose name holds glob characters (then it lists, as ``list`` does)."""
    fs = OutputFS(spark, str(tmp_path / root))
    base = tmp_path / root
    for name in ("d/a", "d/_part=1/x", "d/.a.crc", "d/b%2Ec/y"):
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text("x")
    try:
        assert fs.names("d") == [n for n, _ in fs.list("d")] == ["_part=1", "a", "b%2Ec"]  # .crc: hidden
        assert fs.names("d/_part=1") == ["x"] and fs.names("d/b%2Ec") == ["y"]  # an escaped name (layout)
        assert fs.names("nothing") == [] and "d" in fs.names()
    finally:
        fs.close()


def test_an_output_only_hadoop_reaches_is_committed_alike(spark, tmp_path, mounted):
    """On a ``viewfs://`` output (no local rename: the schema files and the directories above
    the group versions are copied in by Hadoop) the first run and an incremental run write
    what they write to a local path."""
    uri, target, _ = mounted
    (tmp_path / "log").mkdir()
    log = sharded_log(tmp_path / "log")
    for out in (f"{uri}/s", tmp_path / "local"):
        pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    grow(log)
    for out in (f"{uri}/s", tmp_path / "local"):
        pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    assert output_of(spark, target / "s") == output_of(spark, tmp_path / "local")


def test_the_schema_files_written_beside_the_stage_are_waited_for_and_their_error_stops_the_run(
        spark, tmp_path, monkeypatch):
    """The schema files are written in a thread while the sink stages (``schemafiles.start_writing``):
    a slow writer is waited for before the moves are planned (the run commits them), and a
    failing one fails the run with its error, commits nothing and leaves no staging directory."""
    import time

    from ddlcore.spark import schemafiles

    real = schemafiles.write_schemas

    def slow(*args):
        time.sleep(1.5)
        return real(*args)

    log = sharded_log(tmp_path)
    plans: list = []
    recording(monkeypatch, plans)
    monkeypatch.setattr(schemafiles, "write_schemas", slow)
    out = tmp_path / "out"
    pl.run_pipeline(log.write(), out, spark=spark, dialect="mysql")
    [moves] = plans
    assert any(m[1] == "_schemas" for m in moves)
    assert len(list((out / "_schemas").glob("*.json"))) == 6

    def broken(*args):
        time.sleep(0.5)
        raise OSError("disk full")

    monkeypatch.setattr(schemafiles, "write_schemas", broken)
    failed = tmp_path / "failed"
    with pytest.raises(OSError, match="disk full"):
        pl.run_pipeline(log.write(), failed, spark=spark, dialect="mysql")
    assert len(plans) == 1  # nothing was committed
    assert not failed.exists() or not (failed / "_state" / "staging").exists()
