"""Replay MySQL scripts against the oracle server and read its catalog back as ddlcore JSON.

Owns: a small statement splitter for the corpora (``split_script``), ``replay`` (run a script
statement by statement and record which statements the server accepted), and
``catalog_model`` (``information_schema`` rendered in the shape of
``ddlcore parse --format json``).

Must not know: ddlcore's own parser or model (this is the independent side of the oracle), pytest.

The splitter is deliberately simple and independent of the product's splitter; it only has
to work on the corpora. It understands:

* ``DELIMITER x`` lines (as the ``mysql`` client does);
* quotes (``'…'``, ``"…"`` with backslash escapes and doubled quotes, ```…```), comments
  (``-- ``, ``#``, ``/* */``; text between statements is dropped, text inside is kept);
* compound bodies without a ``DELIMITER`` change: in ``CREATE … FUNCTION|PROCEDURE|TRIGGER|
  EVENT`` a ``;`` inside ``BEGIN … END`` / ``CASE … END`` does not end the statement;
* scripts whose statements are not ``;``-terminated (binlog dumps in the Debezium corpus): a
  line that starts *in column 0* with a statement keyword (``CREATE``, ``ALTER``, ``DROP``,
  ``GRANT``, …) outside parentheses and compound bodies starts a new statement. Continuation
  lines of such keywords are indented in the corpora; ``SELECT``/``SET``/``UPDATE`` never split.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

__all__ = [
    "Statement",
    "Accepted",
    "split_script",
    "replay",
    "replay_file",
    "read_script",
    "catalog_model",
    "parse_enum_labels",
    "unquote_mysql_string",
    "normalize_statement",
    "SYSTEM_SCHEMAS",
]

SYSTEM_SCHEMAS = ("information_schema", "mysql", "performance_schema", "sys")


# --------------------------------------------------------------------------------- splitting
@dataclass(frozen=True)
class Statement:
    """One statement of a script: its text (without the delimiter), the 1-based line where it
    starts, and the delimiter in force when it was read."""

    sql: str
    line: int
    delimiter: str = ";"


@dataclass(frozen=True)
class Accepted:
    """What the server said about one statement of a replayed script."""

    index: int  # 0-based position in the script
    sql: str
    line: int
    accepted: bool
    error_code: int | None = None
    error_message: str | None = None
    delimiter: str = ";"

    def __str__(self) -> str:
        head = " ".join(self.sql.split())[:80]
        verdict = "ok" if self.accepted else f"ERROR {self.error_code}: {self.error_message}"
        return f"line {self.line}: {head} -> {verdict}"


_NEWLINE_SPLIT_KEYWORDS = frozenset(
    "create alter drop grant revoke flush use rename truncate insert lock unlock delimiter".split()
)
_COMPOUND_HEAD = re.compile(
    r"\s*create\s+(?:or\s+replace\s+)?(?:definer\s*=\s*\S+?\s+)?(?:sql\s+security\s+\w+\s+)?"
    r"(?:aggregate\s+)?(?:function|procedure|trigger|event)\b",
    re.IGNORECASE | re.DOTALL,
)
_DELIMITER_LINE = re.compile(r"[ \t]*delimiter[ \t]+(\S+)[^\n]*", re.IGNORECASE)
# no "$" in words: a "$$" delimiter right after END must still be seen
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BLOCK_END_FOLLOWERS = frozenset({"if", "loop", "while", "repeat"})


def split_script(text: str) -> list[Statement]:
    """Split a MySQL script into statements (see the module docstring for the rules)."""
    out: list[Statement] = []
    n = len(text)
    i = 0
    line = 1
    delim = ";"

    start: int | None = None  # index of the current statement's first character
    start_line = 0
    depth = 0  # parentheses
    block = 0  # BEGIN/CASE … END nesting, only in compound statements
    compound: bool | None = None  # decided at the first BEGIN/CASE/END word
    first_word: str | None = None
    last_sig = ""  # last significant character of the statement so far

    def flush(end: int) -> None:
        nonlocal start, depth, block, compound, first_word, last_sig
        if start is not None:
            sql = text[start:end].strip()
            if sql:
                out.append(Statement(sql, start_line, delim))
        start = None
        depth = block = 0
        compound = None
        first_word = None
        last_sig = ""

    while i < n:
        c = text[i]
        at_line_start = i == 0 or text[i - 1] == "\n"

        # DELIMITER command: at a line start, between statements or ending an unterminated one
        if at_line_start and (c in "dD" or (start is None and c in " \t")):
            m = _DELIMITER_LINE.match(text, i)
            if m and (start is None or (depth == 0 and block == 0 and c in "dD")):
                flush(i)
                delim = m.group(1)
                i = m.end()
                continue

        if start is None:
            # between statements: skip blanks and comments
            if c == "\n":
                line += 1
                i += 1
                continue
            if c in " \t\r\f\v":
                i += 1
                continue
            if c == "#" or (text.startswith("--", i) and (i + 2 >= n or text[i + 2] in " \t\r\n")):
                j = text.find("\n", i)
                i = n if j < 0 else j
                continue
            if text.startswith("/*", i) and not text.startswith("/*!", i) and not text.startswith("/*M!", i):
                j = text.find("*/", i + 2)
                j = n if j < 0 else j + 2
                line += text.count("\n", i, j)
                i = j
                continue
            if text.startswith(delim, i):  # empty statement
                i += len(delim)
                continue
            start = i
            start_line = line

        # inside a statement
        if at_line_start and i != start and delim == ";" and depth == 0 and block == 0 and c.isalpha():
            m = _WORD.match(text, i)
            word = m.group(0).lower() if m else ""
            if word in _NEWLINE_SPLIT_KEYWORDS and last_sig != "," and not (
                first_word == "alter" and word in ("drop", "rename")
            ):
                flush(i)
                start = i
                start_line = line

        if text.startswith(delim, i) and (delim != ";" or block <= 0):
            flush(i)
            i += len(delim)
            continue

        if c == "\n":
            line += 1
            i += 1
            continue
        if c in "'\"`":
            j = i + 1
            while j < n:
                d = text[j]
                if d == "\\" and c != "`":
                    j += 2
                    continue
                if d == c:
                    if j + 1 < n and text[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            j = min(j + 1, n)
            line += text.count("\n", i, j)
            i = j
            last_sig = c
            continue
        if c == "#" or (text.startswith("--", i) and (i + 2 >= n or text[i + 2] in " \t\r\n")):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += text.count("\n", i, j)
            i = j
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c.isalpha() or c == "_":
            m = _WORD.match(text, i)
            assert m is not None
            word = m.group(0).lower()
            prev = text[i - 1] if i > 0 else ""
            if first_word is None:
                first_word = word
            if prev not in ".@" and word in ("begin", "case", "end"):
                if compound is None:
                    compound = bool(_COMPOUND_HEAD.match(text, start))
                if compound:
                    if word in ("begin", "case"):
                        block += 1
                    else:
                        nxt = _WORD.match(text, _skip_blanks(text, m.end()))
                        follower = nxt.group(0).lower() if nxt else ""
                        if follower in _BLOCK_END_FOLLOWERS:
                            i = nxt.end()  # END IF / END LOOP …: their openers were not counted
                            last_sig = "w"
                            continue
                        block -= 1
                        if follower == "case":
                            i = nxt.end()  # END CASE closes the CASE counted above
                            last_sig = "w"
                            continue
            i = m.end()
            last_sig = "w"
            continue
        if not c.isspace():
            last_sig = c
        i += 1
    flush(n)
    return out


def _skip_blanks(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def normalize_statement(sql: str) -> str:
    """Statement text for comparisons: comments outside quotes removed, whitespace collapsed."""
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c in "'\"`":
            j = i + 1
            while j < n:
                if sql[j] == "\\" and c != "`":
                    j += 2
                    continue
                if sql[j] == c:
                    if j + 1 < n and sql[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            out.append(sql[i : j + 1])
            i = j + 1
            continue
        if c == "#" or (sql.startswith("--", i) and (i + 2 >= n or sql[i + 2] in " \t\r\n")):
            j = sql.find("\n", i)
            i = n if j < 0 else j
            out.append(" ")
            continue
        if sql.startswith("/*", i) and not sql.startswith("/*!", i):
            j = sql.find("*/", i + 2)
            i = n if j < 0 else j + 2
            out.append(" ")
            continue
        out.append(c)
        i += 1
    return " ".join("".join(out).split())


# --------------------------------------------------------------------------------- replay
def read_script(path: str | Path) -> str:
    """A script file's text: UTF-8, or Latin-1 when it is not valid UTF-8."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def replay(conn: Any, script_text: str, *, stop_on_error: bool = False) -> list[Accepted]:
    """Execute ``script_text`` on the pymysql connection ``conn``, statement by statement
    (``split_script``), and return one :class:`Accepted` per statement, in order.

    Errors never stop the replay unless ``stop_on_error``; a lost connection is re-opened
    (``ping(reconnect=True)``) and the statement recorded as rejected. Result sets are read
    and discarded. Session state (``USE``, ``SET``) persists on ``conn`` as in the client.
    """
    import pymysql

    results: list[Accepted] = []
    for index, st in enumerate(split_script(script_text)):
        try:
            with conn.cursor() as cur:
                cur.execute(st.sql)
                while cur.nextset():
                    pass
            results.append(Accepted(index, st.sql, st.line, True, delimiter=st.delimiter))
        except pymysql.err.MySQLError as exc:
            code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
            message = str(exc.args[1]) if len(exc.args) > 1 else str(exc)
            results.append(Accepted(index, st.sql, st.line, False, code, message, st.delimiter))
            if code in (2006, 2013, 0):  # gone away / lost: keep going on a new session
                try:
                    conn.ping(reconnect=True)
                except Exception:
                    pass
            if stop_on_error:
                break
    return results


def replay_file(conn: Any, path: str | Path, **kw: Any) -> list[Accepted]:
    """``replay`` of a file read with :func:`read_script`."""
    return replay(conn, read_script(path), **kw)


# --------------------------------------------------------------------------------- catalog
_ESCAPES = {"0": "\0", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a"}


def unquote_mysql_string(body: str) -> str:
    """Unescape the inside of a single-quoted MySQL string literal: ``''`` → ``'``, ``\\n`` …
    (``\\0 \\b \\n \\r \\t \\Z``), any other ``\\x`` → ``x``."""
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c == "\\" and i + 1 < n:
            out.append(_ESCAPES.get(body[i + 1], body[i + 1]))
            i += 2
        elif c == "'" and i + 1 < n and body[i + 1] == "'":
            out.append("'")
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def parse_enum_labels(column_type: str) -> list[str]:
    """Labels of ``enum('a','b''c',…)`` / ``set(…)`` as MariaDB writes them in COLUMN_TYPE:
    single quotes doubled, backslash written ``\\\\``, newline ``\\n``, CR ``\\r``, NUL ``\\0``;
    commas inside labels are kept."""
    open_paren = column_type.index("(")
    labels: list[str] = []
    i, n = open_paren + 1, len(column_type)
    while i < n:
        c = column_type[i]
        if c == "'":
            j = i + 1
            while j < n:
                if column_type[j] == "\\":
                    j += 2
                    continue
                if column_type[j] == "'":
                    if j + 1 < n and column_type[j + 1] == "'":
                        j += 2
                        continue
                    break
                j += 1
            labels.append(unquote_mysql_string(column_type[i + 1 : j]))
            i = j + 1
        elif c == ")":
            break
        else:
            i += 1
    return labels


def _rows(conn: Any, sql: str, args: Iterable[Any] | None = None) -> list[dict[str, Any]]:
    with conn.cursor() as cur:
        cur.execute(sql, tuple(args) if args is not None else None)
        names = [d[0].lower() for d in cur.description]
        return [dict(zip(names, row)) for row in cur.fetchall()]


def _schema_filter(databases: Iterable[str] | None, column: str) -> tuple[str, list[Any]]:
    if databases is None:
        marks = ",".join(["%s"] * len(SYSTEM_SCHEMAS))
        return f"{column} NOT IN ({marks})", list(SYSTEM_SCHEMAS)
    dbs = list(databases)
    if not dbs:
        return "1 = 0", []
    return f"{column} IN ({','.join(['%s'] * len(dbs))})", dbs


def _on_update(extra: str) -> str | None:
    m = re.search(r"on update (\S+(?:\(\d*\))?)", extra, re.IGNORECASE)
    return m.group(1) if m else None


def catalog_model(conn: Any, databases: Iterable[str] | None = None) -> dict[str, Any]:
    """The server's tables as ddlcore's JSON model (``ddlcore parse --format json``).

    ``databases``: names to include (default: every non-system schema). Base tables (and
    system-versioned tables) go to ``"tables"``, sorted by (database, name); views go to
    ``"views"`` as ``{"database", "name"}``. Sequences are left out.
    ``column_default`` is COLUMN_DEFAULT as MariaDB renders it, except that both "no default"
    (SQL NULL) and the NULL default (the text ``NULL``) become None.
    """
    dbs = list(databases) if databases is not None else None
    where, args = _schema_filter(dbs, "t.TABLE_SCHEMA")
    tables = _rows(
        conn,
        "SELECT t.TABLE_SCHEMA, t.TABLE_NAME, t.TABLE_TYPE, t.TABLE_COLLATION, t.TABLE_COMMENT, "
        "c.CHARACTER_SET_NAME AS TABLE_CHARSET "
        "FROM information_schema.TABLES t "
        "LEFT JOIN information_schema.COLLATIONS c ON c.COLLATION_NAME = t.TABLE_COLLATION "
        f"WHERE {where}",
        args,
    )
    where_c, args_c = _schema_filter(dbs, "TABLE_SCHEMA")
    columns = _rows(
        conn,
        "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, COLUMN_DEFAULT, "
        "IS_NULLABLE, DATA_TYPE, CHARACTER_MAXIMUM_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE, "
        "DATETIME_PRECISION, CHARACTER_SET_NAME, COLLATION_NAME, COLUMN_TYPE, EXTRA, "
        "COLUMN_COMMENT, IS_GENERATED, GENERATION_EXPRESSION "
        f"FROM information_schema.COLUMNS WHERE {where_c} "
        "ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION",
        args_c,
    )
    pk_rows = _rows(
        conn,
        "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, SEQ_IN_INDEX FROM information_schema.STATISTICS "
        f"WHERE INDEX_NAME = 'PRIMARY' AND {where_c} ORDER BY TABLE_SCHEMA, TABLE_NAME, SEQ_IN_INDEX",
        args_c,
    )

    cols_by_table: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in columns:
        cols_by_table.setdefault((r["table_schema"], r["table_name"]), []).append(_column(r))
    pk_by_table: dict[tuple[str, str], list[str]] = {}
    for r in pk_rows:
        pk_by_table.setdefault((r["table_schema"], r["table_name"]), []).append(r["column_name"])

    out_tables: list[dict[str, Any]] = []
    views: list[dict[str, Any]] = []
    for t in tables:
        key = (t["table_schema"], t["table_name"])
        kind = (t["table_type"] or "").upper()
        if kind == "VIEW":
            views.append({"database": key[0], "name": key[1]})
            continue
        if kind not in ("BASE TABLE", "SYSTEM VERSIONED"):
            continue  # SEQUENCE, SYSTEM VIEW, TEMPORARY
        collation = t["table_collation"]
        charset = t["table_charset"] or (collation.split("_", 1)[0] if collation else None)
        cols = cols_by_table.get(key, [])
        if kind == "SYSTEM VERSIONED" and not any(c["generation_expression"] == "ROW START" for c in cols):
            cols = cols + _implicit_period(len(cols))
        out_tables.append(
            {
                "database": key[0],
                "schema": None,
                "name": key[1],
                "columns": cols,
                "primary_key": pk_by_table.get(key, []),
                "default_character_set_name": charset,
                "default_collation_name": collation,
                "comment": t["table_comment"] or None,
            }
        )
    out_tables.sort(key=lambda t: (t["database"], t["name"]))
    views.sort(key=lambda v: (v["database"], v["name"]))
    return {"tables": out_tables, "views": views}


def _implicit_period(n: int) -> list[dict[str, Any]]:
    """The invisible ``row_start`` / ``row_end`` of a table WITH SYSTEM VERSIONING that
    declares no period columns: information_schema does not list them, the binlog's row images
    carry them after the table's columns (MariaDB KB "System-Versioned Tables")."""
    return [{"name": name, "ordinal_position": n + i, "data_type": "timestamp", "column_type": "timestamp(6)",
             "nullable": False, "column_default": None, "character_maximum_length": None,
             "numeric_precision": None, "numeric_scale": None, "datetime_precision": 6,
             "character_set_name": None, "collation_name": None, "auto_increment": False,
             "generation_expression": bound, "enum_values": None, "set_values": None, "unsigned": False,
             "on_update": None, "comment": None}
            for i, (name, bound) in enumerate((("row_start", "ROW START"), ("row_end", "ROW END")), start=1)]


def _column(r: dict[str, Any]) -> dict[str, Any]:
    data_type = r["data_type"]
    column_type = r["column_type"]
    extra = r["extra"] or ""
    default = r["column_default"]
    if default == "NULL":
        default = None
    is_enum = data_type == "enum"
    is_set = data_type == "set"
    generated = (r.get("is_generated") or "NEVER").upper() != "NEVER"
    return {
        "name": r["column_name"],
        "ordinal_position": int(r["ordinal_position"]),
        "data_type": data_type,
        "column_type": column_type,
        "nullable": r["is_nullable"] == "YES",
        "column_default": default,
        "character_maximum_length": _int(r["character_maximum_length"]),
        "numeric_precision": _int(r["numeric_precision"]),
        "numeric_scale": _int(r["numeric_scale"]),
        "datetime_precision": _int(r["datetime_precision"]),
        "character_set_name": r["character_set_name"],
        "collation_name": r["collation_name"],
        "auto_increment": "auto_increment" in extra.lower(),
        "generation_expression": (r["generation_expression"] if generated else None) or None,
        "enum_values": parse_enum_labels(column_type) if is_enum else None,
        "set_values": parse_enum_labels(column_type) if is_set else None,
        "unsigned": (not is_enum and not is_set) and bool(re.search(r"\bunsigned\b", column_type)),
        "on_update": _on_update(extra),
        "comment": r["column_comment"] or None,
    }


def _int(v: Any) -> int | None:
    return None if v is None else int(v)
