"""What the Iceberg sink tests share: the few ``OutputFS`` calls the sink makes on a local
directory (``LocalFS``), and one row event written the way Spark writes a table version's file
(``write_row``: pyarrow, the physical column names the sink gives, the pipeline's columns)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ddlcore.spark.layout import version_dir


class LocalFS:
    """The few ``OutputFS`` calls the sink makes, on a local directory."""

    def __init__(self, root: Path):
        self.root = root

    def exists(self, rel: str = "") -> bool:
        return (self.root / rel.lstrip("/")).exists()  # the sink joins an empty staging dir as "/<dir>"

    @property
    def local_root(self) -> str:
        return str(self.root)

    def local(self, rel: str = "") -> str:
        return str(self.root / rel)

    def str(self, rel: str = "") -> str:
        return f"file://{self.root / rel}"

    def names(self, rel: str = "") -> list[str]:
        p = self.root / rel
        return sorted(x.name for x in p.iterdir()) if p.exists() else []


def write_row(out: Path, model, version: int, seq: int, run: str, table: str = "t") -> dict[int, int]:
    """One row event in the version's directory of ``d.<table>``, its columns under the names of
    ``model`` (the physical names the sink gave); returns its values by column id (text for a
    VARCHAR)."""
    kind = {"int": pa.int32(), "bigint": pa.int64(), "varchar": pa.string()}
    values = {c.column_id: (f"s{seq}.{c.column_id}" if c.data_type == "varchar" else seq * 100 + c.column_id)
              for c in model.columns}
    fields = [pa.field(c.name, kind[c.data_type]) for c in model.columns]
    data = {f.name: pa.array([values[c.column_id]], f.type) for f, c in zip(fields, model.columns)}
    data.update({"_op": ["c"], "_seq": [seq], "_position": [str(seq)], "_ts": [seq],
                 "_tx": pa.array([None], pa.string()), "_row": [0],
                 "_absent": pa.array([None], pa.list_(pa.string())),
                 "_before": pa.array([None], pa.struct(fields)),
                 "_before_absent": pa.array([None], pa.list_(pa.string()))})
    d = out / version_dir("d", None, table, version)
    d.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(data), d / f"{run}-part-{seq}.parquet")
    return values
