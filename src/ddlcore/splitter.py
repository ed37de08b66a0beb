"""Statement splitting: a script → ``Statement``s, without parsing them.

Owns: quotes, comments, the client's ``DELIMITER`` command, versioned comments, and the line
and column where each statement starts (so errors point into the original text).  Must not
know: a dialect's grammar.  A dialect describes its lexical quirks with ``SplitRules``.

Versioned comments follow the MySQL manual, 11.7 "Comments": ``/*! ... */`` is executed by
MySQL and MariaDB; ``/*!NNNNN ... */`` only by servers whose version is at least ``NNNNN``
(``MMmmpp``) — MariaDB not at all for 50700-99999 (MySQL 5.7 and later); MariaDB also runs
``/*M! ... */`` and ``/*M!NNNNNN ... */`` (MariaDB KB, "Comment Syntax").  TiDB (``tidb``) runs
every ``/*! */`` and ``/*!NNNNN */`` whatever the number, ``/*T! ... */``, and
``/*T![feature_id,...] ... */`` when it knows every feature id (TiDB manual, "Comment Syntax",
section "TiDB-specific comment syntax"; the ids are ``TIDB_FEATURE_IDS``).  An executed comment is opened up: its markers become spaces of the same
length, so every offset in the statement still matches the input.  A comment that is not
executed stays a comment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

__all__ = ["SplitRules", "Statement", "split_statements"]


@dataclass(frozen=True)
class SplitRules:
    r"""Lexical rules of a dialect that matter for splitting.

    * ``backslash_escapes``: ``\\'`` escapes a quote inside strings (MySQL without
      ``NO_BACKSLASH_ESCAPES``); PostgreSQL only inside ``E'...'``.
    * ``hash_comments``: ``#`` starts a comment (MySQL).
    * ``dash_comment_needs_space``: ``--`` starts a comment only when followed by white space
      or a control character (MySQL manual 1.6.2.4).
    * ``dollar_quotes``: ``$tag$ ... $tag$`` strings (PostgreSQL 4.1.2.4).
    * ``nested_block_comments``: ``/* /* */ */`` nests (PostgreSQL).
    * ``delimiter_command``: the mysql client's ``DELIMITER x`` line.
    * ``versioned_comments``: open up ``/*! */`` comments; ``server_version`` (``MMmmpp``) and
      ``mariadb`` decide which ones run.
    * ``tidb``: TiDB's executable comments: ``/*T! */`` and ``/*T![id] */`` run (when every id is
      in ``TIDB_FEATURE_IDS``), and every MySQL-versioned comment runs whatever its version.
    * ``backquoted_identifiers``: `` `x` `` quotes a name (MySQL); otherwise a backquote is an
      ordinary character (an operator character in PostgreSQL).
    * ``escape_strings``: ``E'...'`` strings take backslash escapes even when
      ``backslash_escapes`` is off (PostgreSQL 4.1.2.2, standard_conforming_strings on).
    * ``meta_commands``: a line starting with a backslash between statements is a psql
      meta-command (``\connect``, ``\set``, ``\restrict``...) and is skipped (psql manual,
      "Meta-Commands").
    * ``copy_data``: after ``COPY ... FROM stdin;`` the data lines up to a line ``\.`` are
      skipped, as psql reads them (pg_dump output; COPY manual page, "File Formats").
    """

    backslash_escapes: bool = True
    hash_comments: bool = True
    dash_comment_needs_space: bool = True
    dollar_quotes: bool = False
    nested_block_comments: bool = False
    delimiter_command: bool = True
    versioned_comments: bool = True
    server_version: int = 101100
    mariadb: bool = True
    backquoted_identifiers: bool = True
    escape_strings: bool = False
    meta_commands: bool = False
    copy_data: bool = False
    tidb: bool = False


@dataclass(frozen=True)
class Statement:
    """One statement: ``text`` (without its delimiter, versioned-comment markers opened up),
    ``index`` (0-based among the statements of the input), ``line`` (1-based) and ``column``
    (0-based) where it starts, ``offset`` (character offset in the input)."""

    text: str
    index: int
    line: int
    column: int
    offset: int


_COPY_FROM_STDIN = re.compile(r"\s*COPY\b[^;]*\bFROM\s+STDIN\b", re.IGNORECASE)
_COPY_END = re.compile(r"^\\\.[ \t]*(?:\r?\n|$)", re.MULTILINE)
_DELIMITER_LINE = re.compile(r"[ \t]*delimiter[ \t]+(\S+)[ \t]*(?:\r?\n|$)", re.IGNORECASE)
_VERSIONED = re.compile(r"/\*(?:(M?)!(\d{5,6})?|T!(?:\[([A-Za-z0-9_, ]*)\])?)")

#: the feature ids of ``/*T![id] ... */`` that TiDB v8 parses (TiDB manual "Comment Syntax";
#: TiDB's ``parser/tidb/features.go``): a comment naming another id is not run
TIDB_FEATURE_IDS = frozenset({"auto_rand", "auto_id_cache", "auto_rand_base", "clustered_index",
                              "force_inc", "placement", "ttl", "resource_group", "global_index",
                              "pre_split"})


def _is_space_or_ctrl(ch: str) -> bool:
    return ch == "" or ch.isspace() or ord(ch) < 32


class _Scanner:
    """Single pass over the text.  Finds statement boundaries; opens versioned comments."""

    def __init__(self, text: str, rules: SplitRules):
        self.text = text
        self.rules = rules
        specials = "'\"/-;\n"
        if rules.backquoted_identifiers:
            specials += "`"
        if rules.meta_commands:
            specials += "\\"
        if rules.hash_comments:
            specials += "#"
        if rules.dollar_quotes:
            specials += "$"
        self._special = re.compile("[" + re.escape(specials) + "]")

    def split(self) -> Iterator[tuple[int, int, list[tuple[int, int]]]]:
        """Yields ``(start, end, blanks)``: a statement's span and the spans to blank out
        (versioned comment markers)."""
        text, rules = self.text, self.rules
        n = len(text)
        delimiter = ";"
        start = 0
        pos = 0
        blanks: list[tuple[int, int]] = []
        at_line_start = True
        special = self._special
        while pos < n:
            if rules.delimiter_command and at_line_start:
                m = _DELIMITER_LINE.match(text, pos)
                if m and not text[start:pos].strip():
                    delimiter = m.group(1)
                    pos = m.end()
                    start = pos
                    continue
            if delimiter != ";":
                # custom delimiter: search for it or for something that hides it
                m = special.search(text, pos)
                d = text.find(delimiter, pos)
                if d != -1 and (m is None or d <= m.start()):
                    yield start, d, blanks
                    blanks = []
                    pos = start = d + len(delimiter)
                    at_line_start = False
                    continue
            else:
                m = special.search(text, pos)
            if m is None:
                break
            i = m.start()
            ch = text[i]
            at_line_start = False
            if ch == "\n":
                pos = i + 1
                at_line_start = True
                continue
            if ch == ";" and delimiter == ";":
                stmt_start = start
                yield start, i, blanks
                blanks = []
                pos = start = i + 1
                if rules.copy_data and _COPY_FROM_STDIN.match(text[stmt_start:i]):
                    end = _COPY_END.search(text, pos)
                    pos = start = n if end is None else end.end()
                    at_line_start = True
                continue
            if ch == "\\":
                if (i == 0 or text[i - 1] == "\n") and not text[start:i].strip():
                    pos = start = self._skip_line(i)
                else:
                    pos = i + 1
                continue
            if ch in "'\"`":
                escapes = (rules.escape_strings and ch == "'" and i > 0 and text[i - 1] in "eE"
                           and (i < 2 or not (text[i - 2].isalnum() or text[i - 2] in "_$")))
                pos = self._skip_quoted(i, ch, escapes)
                continue
            if ch == "#":
                pos = self._skip_line(i)
                continue
            if ch == "-":
                if text.startswith("--", i) and (not rules.dash_comment_needs_space
                                                 or _is_space_or_ctrl(text[i + 2:i + 3])):
                    pos = self._skip_line(i)
                else:
                    pos = i + 1
                continue
            if ch == "/":
                if text.startswith("/*", i):
                    vm = _VERSIONED.match(text, i) if rules.versioned_comments else None
                    if vm and self._executes(vm):
                        # open it: blank the marker; the matching */ is blanked when reached
                        blanks.append((i, vm.end()))
                        pos = vm.end()
                        continue
                    pos = self._skip_block_comment(i)
                    continue
                pos = i + 1
                continue
            if ch == "*":
                pos = i + 1
                continue
            if ch == "$":
                pos = self._skip_dollar(i)
                continue
            pos = i + 1
        if text[start:].strip():
            yield start, n, blanks

    def _executes(self, m: re.Match) -> bool:
        if m.group(0).startswith("/*T"):
            if not self.rules.tidb:
                return False
            ids = m.group(3)
            return ids is None or all(f.strip() in TIDB_FEATURE_IDS for f in ids.split(",") if f.strip())
        if self.rules.tidb:
            return True  # TiDB runs MySQL-versioned comments whatever the version
        mariadb_only = bool(m.group(1))
        if mariadb_only and not self.rules.mariadb:
            return False
        version = m.group(2)
        if version is None:
            return True
        v = int(version)
        if self.rules.mariadb and not mariadb_only and 50700 <= v <= 99999:
            # MariaDB does not run MySQL-versioned comments of MySQL 5.7 and later (5-digit
            # versions 50700-99999: MySQL-only syntax since the two diverged); observed on
            # MariaDB 10.11 (tests/mysql/test_parse_gaps.py)
            return False
        return v <= self.rules.server_version

    def _skip_quoted(self, i: int, q: str, escapes: bool = False) -> int:
        text = self.text
        n = len(text)
        j = i + 1
        backslash = (self.rules.backslash_escapes or escapes) and q != "`"
        while j < n:
            c = text[j]
            if backslash and c == "\\":
                j += 2
                continue
            if c == q:
                if j + 1 < n and text[j + 1] == q:
                    j += 2
                    continue
                return j + 1
            j += 1
        return n

    def _skip_line(self, i: int) -> int:
        j = self.text.find("\n", i)
        return len(self.text) if j == -1 else j

    def _skip_block_comment(self, i: int) -> int:
        text = self.text
        if not self.rules.nested_block_comments:
            k = text.find("*/", i + 2)
            return len(text) if k == -1 else k + 2
        depth, j, n = 0, i, len(text)
        while j < n:
            if text.startswith("/*", j):
                depth += 1
                j += 2
            elif text.startswith("*/", j):
                depth -= 1
                j += 2
                if depth == 0:
                    return j
            else:
                j += 1
        return n

    _DOLLAR_TAG = re.compile(r"\$([A-Za-z_\x80-\uffff][\w\x80-\uffff]*)?\$")

    def _skip_dollar(self, i: int) -> int:
        m = self._DOLLAR_TAG.match(self.text, i)
        if not m or (i > 0 and (self.text[i - 1].isalnum() or self.text[i - 1] == "_")):
            return i + 1
        tag = m.group(0)
        k = self.text.find(tag, m.end())
        return len(self.text) if k == -1 else k + len(tag)


def split_statements(text: str, rules: SplitRules | None = None) -> list[Statement]:
    """Split ``text`` into statements (MySQL client rules by default).

    Empty statements are dropped.  The text of each statement has versioned-comment markers
    replaced by spaces (same length), so ``Statement.offset + i`` is the input offset of the
    statement's ``i``-th character.  Never raises for any input: an unterminated quote or
    comment runs to the end of the input and the parser reports it."""
    rules = rules or SplitRules()
    scanner = _Scanner(text, rules)
    out: list[Statement] = []
    for start, end, blanks in scanner.split():
        chunk = text[start:end]
        if blanks and rules.versioned_comments:
            chunk = _open_versioned(chunk, start, blanks)
        # trim leading white space, keep offsets right
        stripped = chunk.lstrip()
        if not stripped.strip() or _only_comments(stripped, rules):
            continue
        lead = len(chunk) - len(stripped)
        offset = start + lead
        body = stripped.rstrip()
        line = text.count("\n", 0, offset) + 1
        col = offset - (text.rfind("\n", 0, offset) + 1)
        out.append(Statement(body, len(out), line, col, offset))
    return out


def _open_versioned(chunk: str, start: int, blanks: list[tuple[int, int]]) -> str:
    """Blank out ``/*!NNNNN`` markers and the ``*/`` closing each one."""
    chars = list(chunk)
    for b0, b1 in blanks:
        for k in range(b0 - start, min(b1 - start, len(chars))):
            chars[k] = " "
        close = chunk.find("*/", b1 - start)
        if close != -1:
            chars[close] = chars[close + 1] = " "
    return "".join(chars)


# comments unrolled ("/*", non-stars, stars not followed by "/", "*/"): no nested quantifier can
# backtrack exponentially on a long statement that is not only comments
_BLOCK_COMMENT = r"/\*[^*]*\*+(?:[^/*][^*]*\*+)*/"
_COMMENT_TOKEN = re.compile(r"\s+|--[^\n]*|#[^\n]*|" + _BLOCK_COMMENT)


def _only_comments(chunk: str, rules: SplitRules) -> bool:
    """True when ``chunk`` holds only white space and comments (one linear scan)."""
    if "--" not in chunk and "#" not in chunk and "/*" not in chunk:
        return False
    pos, n = 0, len(chunk)
    while pos < n:
        m = _COMMENT_TOKEN.match(chunk, pos)
        if m is None or m.end() == pos:
            return False
        pos = m.end()
    return True
