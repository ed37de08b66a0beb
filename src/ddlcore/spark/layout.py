"""The output layout of ``ddlcore run``: where a table version's rows and schema go.

Owns: turning database, schema and table names — any legal quoted identifier, including
``/``, ``..``, ``.``, ``=``, a leading ``_`` or characters a filesystem refuses — into safe,
unique and reversible path components.  Must not know: Spark, any dialect.

Escaping (``escape_name``): every character outside ``[A-Za-z0-9_-]`` is written as ``%XX``
per byte of its UTF-8 encoding (``.`` → ``%2E``, ``/`` → ``%2F``, ``é`` → ``%C3%A9``), and so
is a leading ``_`` (Spark and Hadoop skip paths that start with ``_`` or ``.``, and ``_schemas``
/ ``_quarantine`` are ours).  ``unescape_name`` reverses it exactly.  Ordinary names
(``orders``, ``order_items``, ``Orders2``) are unchanged.  A component whose escaped form
would exceed ``MAX_COMPONENT`` bytes (a 64-character identifier of 4-byte characters) is cut
and ends with ``~`` and 16 hex digits of the name's SHA-256: still unique, no longer reversible
from the path — the schema file beside the data names the table exactly.

Layout::

    OUT/<database>/<table>/schema_version=<N>/            MySQL, TiDB (no schema)
    OUT/<database>/<schema>/<table>/schema_version=<N>/   PostgreSQL
    OUT/_schemas/<database>.<table>.v<N>.json             (…<database>.<schema>.<table>…)

A ``None`` database or schema is written ``%00`` (no name can escape to that).
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["escape_name", "unescape_name", "version_dir", "schema_file", "MAX_COMPONENT", "NULL_NAME"]

#: longest path component written (bytes); filesystems allow 255
MAX_COMPONENT = 200
#: the component of a ``None`` database or schema
NULL_NAME = "%00"
_SAFE = re.compile(r"[A-Za-z0-9_-]")


def escape_name(name: str | None) -> str:
    """A safe, unique path component for ``name`` (module docstring)."""
    if name is None:
        return NULL_NAME
    out = []
    for i, ch in enumerate(name):
        if _SAFE.match(ch) and not (i == 0 and ch == "_"):
            out.append(ch)
        else:
            out.append("".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass")))
    text = "".join(out)
    if len(text) > MAX_COMPONENT:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        cut = text[:MAX_COMPONENT - 17]
        cut = re.sub(r"%[0-9A-F]?$", "", cut)  # never cut inside an escape
        text = f"{cut}~{digest}"
    return text


def unescape_name(component: str) -> str | None:
    """The name ``escape_name`` made ``component`` from (``None`` for ``NULL_NAME``).
    Raises ``ValueError`` for a shortened component (it ends with ``~`` and a digest)."""
    if component == NULL_NAME:
        return None
    if re.search(r"~[0-9a-f]{16}$", component):
        raise ValueError(f"{component!r} is a shortened name: read the table's name from its schema file")
    return _unquote(component)


def _unquote(component: str) -> str:
    data = bytearray()
    i = 0
    while i < len(component):
        if component[i] == "%":
            data.append(int(component[i + 1:i + 3], 16))
            i += 3
        else:
            data.extend(component[i].encode("ascii"))
            i += 1
    return data.decode("utf-8", "surrogatepass")


def version_dir(database: str | None, schema: str | None, table: str, version: int) -> str:
    """The relative directory of one table version's rows."""
    parts = [escape_name(database)]
    if schema is not None:
        parts.append(escape_name(schema))
    parts += [escape_name(table), f"schema_version={version}"]
    return "/".join(parts)


def schema_file(database: str | None, schema: str | None, table: str, version: int) -> str:
    """The file name of one table version's schema under ``_schemas/``."""
    parts = [escape_name(database)] + ([escape_name(schema)] if schema is not None else [])
    return ".".join(parts + [escape_name(table), f"v{version}.json"])
