"""`make demo`: the bundled example, end to end with what is built so far.

Parses examples/shop/schema.sql with the MySQL dialect, prints the final model as terminal
tables, and every change each statement made.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

import ddlcore
from ddlcore.cli import render_tables

HERE = Path(__file__).resolve().parent


def main() -> None:
    console = Console()
    parser = ddlcore.get_dialect("mysql").parser()
    tables = parser.new_tables()
    result = parser.parse((HERE / "shop" / "schema.sql").read_text(), tables)
    console.rule("statements")
    for s in result:
        what = ", ".join(f"{c.kind} {c.table_id}" + (f" (was {c.previous_id})" if c.previous_id else "")
                         for c in s.changes) or s.reason or "no table changed"
        console.print(f"[dim]{s.statement.line:>3}[/] {s.status:8} {what}", highlight=False)
    console.rule("model")
    render_tables(console, tables)


if __name__ == "__main__":
    main()
