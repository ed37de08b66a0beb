"""How ``CREATE TABLE ... INHERITS`` merges column definitions, as PostgreSQL 15's
``MergeAttributes`` (src/backend/commands/tablecmds.c) does; manual CREATE TABLE, "INHERITS":
"If the same column name exists in more than one parent table, an error is reported unless the
data types of the columns match in each of the parent tables. If there is no conflict, then the
duplicate columns are merged to form a single column in the new table. If the column name list of
the new table contains a column name that is also inherited, the data type must likewise match
the inherited column(s), and the column definitions are merged into one."

The functions take and return model ``Column``s and raise ``InheritanceConflict`` with the
server's message; they know nothing of parse trees.
"""

from __future__ import annotations

from ddlcore.model import Column

__all__ = ["InheritanceConflict", "TYPE_FIELDS", "merge_parent_column", "merge_local_column"]

#: the fields that make a column's type (``atttypid`` / ``atttypmod``): they must be equal
TYPE_FIELDS = ("column_type", "udt_schema", "udt_name", "domain_schema", "domain_name")


class InheritanceConflict(ValueError):
    """Two definitions of one column cannot be merged (the server's error text)."""


def _check_same_type(first: Column, second: Column, what: str) -> None:
    if any(getattr(first, f) != getattr(second, f) for f in TYPE_FIELDS):
        raise InheritanceConflict(f"{what} \"{first.name}\" has a type conflict "
                                  f"({first.column_type} versus {second.column_type})")
    if first.collation_name != second.collation_name:  # None: the type's default collation
        raise InheritanceConflict(f"{what} \"{first.name}\" has a collation conflict "
                                  f"(\"{first.collation_name}\" versus \"{second.collation_name}\")")


def merge_parent_column(seen: Column, col: Column) -> tuple[Column, bool]:
    """A column inherited from two parents (``seen`` from an earlier one, ``col`` as copied
    from a later one): one column at ``seen``'s position, NOT NULL if either is; the first
    default found is kept.  Returns ``(merged, conflicting_defaults)``: the server refuses
    conflicting defaults ("column inherits conflicting default values") unless the new
    table's own definition of the column gives one."""
    _check_same_type(seen, col, "inherited column")
    conflict = None not in (seen.column_default, col.column_default) and seen.column_default != col.column_default
    merged = seen.replace(nullable=seen.nullable and col.nullable,
                          column_default=seen.column_default if seen.column_default is not None else col.column_default)
    return merged, conflict


def merge_local_column(inherited: Column, local: Column) -> Column:
    """An inherited column merged with the new table's own definition of it (the server's
    NOTICE "merging column ... with inherited definition"): the inherited position and type
    (``attndims`` 0, as for any inherited column), NOT NULL if either is, the local default
    (or generation expression) if it gives one, else the inherited one."""
    _check_same_type(inherited, local, "column")
    merged = inherited.replace(nullable=inherited.nullable and local.nullable)
    if local.generation_expression is not None:
        return merged.replace(generation_expression=local.generation_expression,
                              generation_stored=local.generation_stored, column_default=None)
    if local.column_default is not None:
        merged = merged.replace(column_default=local.column_default)
    if local.identity is not None:
        merged = merged.replace(identity=local.identity)
    return merged
