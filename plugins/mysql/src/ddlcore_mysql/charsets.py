"""Character sets and collations of MariaDB 10.11 and MySQL 8.0, as data.

Source: ``information_schema.CHARACTER_SETS`` of a MariaDB 10.11.19 server (Debian package)
and the MySQL 8.0 manual, 12.2 "Character Sets and Collations in MySQL" (default collations
that differ).  Rules: MySQL manual 12.3.2–12.3.5 (server → database → table → column
inheritance): a charset without a collation takes the charset's default collation; a collation
without a charset implies the charset it belongs to.

Also the Python codec for each charset, used to decode string bytes of row events (MySQL's
``latin1`` is Windows-1252, manual 12.9.3 "The latin1 Character Set").
"""

from __future__ import annotations

import codecs

__all__ = ["CHARSETS", "MYSQL8_DEFAULT_COLLATIONS", "CHARSET_ALIASES", "PYTHON_CODECS",
           "normalize_charset", "default_collation", "collation_charset", "mbmaxlen",
           "python_codec", "decode_as_server"]

#: charset → (default collation in MariaDB 10.11, maximum bytes per character)
CHARSETS: dict[str, tuple[str, int]] = {
    "armscii8": ("armscii8_general_ci", 1),
    "ascii": ("ascii_general_ci", 1),
    "big5": ("big5_chinese_ci", 2),
    "binary": ("binary", 1),
    "cp1250": ("cp1250_general_ci", 1),
    "cp1251": ("cp1251_general_ci", 1),
    "cp1256": ("cp1256_general_ci", 1),
    "cp1257": ("cp1257_general_ci", 1),
    "cp850": ("cp850_general_ci", 1),
    "cp852": ("cp852_general_ci", 1),
    "cp866": ("cp866_general_ci", 1),
    "cp932": ("cp932_japanese_ci", 2),
    "dec8": ("dec8_swedish_ci", 1),
    "eucjpms": ("eucjpms_japanese_ci", 3),
    "euckr": ("euckr_korean_ci", 2),
    "gb18030": ("gb18030_chinese_ci", 4),  # MySQL only
    "gb2312": ("gb2312_chinese_ci", 2),
    "gbk": ("gbk_chinese_ci", 2),
    "geostd8": ("geostd8_general_ci", 1),
    "greek": ("greek_general_ci", 1),
    "hebrew": ("hebrew_general_ci", 1),
    "hp8": ("hp8_english_ci", 1),
    "keybcs2": ("keybcs2_general_ci", 1),
    "koi8r": ("koi8r_general_ci", 1),
    "koi8u": ("koi8u_general_ci", 1),
    "latin1": ("latin1_swedish_ci", 1),
    "latin2": ("latin2_general_ci", 1),
    "latin5": ("latin5_turkish_ci", 1),
    "latin7": ("latin7_general_ci", 1),
    "macce": ("macce_general_ci", 1),
    "macroman": ("macroman_general_ci", 1),
    "sjis": ("sjis_japanese_ci", 2),
    "swe7": ("swe7_swedish_ci", 1),
    "tis620": ("tis620_thai_ci", 1),
    "ucs2": ("ucs2_general_ci", 2),
    "ujis": ("ujis_japanese_ci", 3),
    "utf16": ("utf16_general_ci", 4),
    "utf16le": ("utf16le_general_ci", 4),
    "utf32": ("utf32_general_ci", 4),
    "utf8mb3": ("utf8mb3_general_ci", 3),
    "utf8mb4": ("utf8mb4_general_ci", 4),
}

#: MySQL 8.0 default collations that differ from MariaDB's (MySQL manual 10.10)
MYSQL8_DEFAULT_COLLATIONS: dict[str, str] = {"utf8mb4": "utf8mb4_0900_ai_ci"}

#: TiDB's default collations: binary ones for every charset (TiDB manual "Character Set and
#: Collation", ``SHOW CHARACTER SET``: ascii_bin, binary, gbk_bin, latin1_bin, utf8_bin,
#: utf8mb4_bin)
TIDB_DEFAULT_COLLATIONS: dict[str, str] = {"ascii": "ascii_bin", "binary": "binary", "gbk": "gbk_bin",
                                           "latin1": "latin1_bin", "utf8mb3": "utf8mb3_bin",
                                           "utf8mb4": "utf8mb4_bin"}

#: names the servers accept for a charset (``utf8`` is ``utf8mb3`` in MariaDB 10.6+ with the
#: default ``old_mode=UTF8_IS_UTF8MB3`` and in MySQL 8.0)
CHARSET_ALIASES: dict[str, str] = {"utf8": "utf8mb3"}

#: Python codec per charset (for decoding row-event bytes)
PYTHON_CODECS: dict[str, str] = {
    "armscii8": "latin_1", "ascii": "ascii", "big5": "big5", "binary": "latin_1",
    "cp1250": "cp1250", "cp1251": "cp1251", "cp1256": "cp1256", "cp1257": "cp1257",
    "cp850": "cp850", "cp852": "cp852", "cp866": "cp866", "cp932": "cp932", "dec8": "latin_1",
    "eucjpms": "euc_jp", "euckr": "euc_kr", "gb18030": "gb18030", "gb2312": "gb2312",
    "gbk": "gbk", "geostd8": "latin_1", "greek": "iso8859_7", "hebrew": "iso8859_8",
    "hp8": "latin_1", "keybcs2": "latin_1", "koi8r": "koi8_r", "koi8u": "koi8_u",
    "latin1": "cp1252", "latin2": "iso8859_2", "latin5": "iso8859_9", "latin7": "iso8859_13",
    "macce": "mac_latin2", "macroman": "mac_roman", "sjis": "shift_jis", "swe7": "latin_1",
    "tis620": "tis_620", "ucs2": "utf_16_be", "ujis": "euc_jp", "utf16": "utf_16_be",
    "utf16le": "utf_16_le", "utf32": "utf_32_be", "utf8mb3": "utf_8", "utf8mb4": "utf_8",
}


def normalize_charset(name: str) -> str:
    """Lower-cased charset name with aliases resolved (``UTF8`` → ``utf8mb3``)."""
    n = name.lower()
    return CHARSET_ALIASES.get(n, n)


def default_collation(charset: str, flavor: str = "mariadb") -> str:
    """The default collation of ``charset`` (``flavor``: ``"mariadb"``, ``"mysql"`` or ``"tidb"``).

    Raises ``KeyError`` for an unknown charset."""
    cs = normalize_charset(charset)
    if flavor == "tidb" and cs in TIDB_DEFAULT_COLLATIONS:
        return TIDB_DEFAULT_COLLATIONS[cs]
    if flavor == "mysql" and cs in MYSQL8_DEFAULT_COLLATIONS:
        return MYSQL8_DEFAULT_COLLATIONS[cs]
    return CHARSETS[cs][0]


def normalize_collation(name: str) -> str:
    """Lower-cased collation with the ``utf8_`` prefix read as ``utf8mb3_`` (MariaDB 10.6+)."""
    n = name.lower()
    if n.startswith("utf8_"):
        return "utf8mb3_" + n[5:]
    return n


def collation_charset(collation: str) -> str:
    """The charset a collation belongs to: its name up to the first ``_`` (every collation of
    both servers is named so), ``binary`` for ``binary``."""
    c = normalize_collation(collation)
    if c == "binary":
        return "binary"
    best = ""
    for cs in CHARSETS:
        if c.startswith(cs + "_") and len(cs) > len(best):
            best = cs
    return best or c.split("_", 1)[0]


def mbmaxlen(charset: str | None) -> int:
    """Maximum bytes per character (1 for unknown or ``None``)."""
    if charset is None:
        return 1
    return CHARSETS.get(normalize_charset(charset), ("", 1))[1]


def python_codec(charset: str | None) -> str:
    """The Python codec that decodes ``charset`` bytes (``utf_8`` if unknown)."""
    if charset is None:
        return "utf_8"
    return PYTHON_CODECS.get(normalize_charset(charset), "utf_8")


def _question_mark_per_byte(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    return "?", exc.start + 1


codecs.register_error("ddlcore_mysql_question_mark", _question_mark_per_byte)


def decode_as_server(data: bytes, charset: str | None) -> str:
    """``data`` as text of ``charset`` the way the server converts a literal's bytes into a
    column's charset (``copy_and_convert`` in strings/ctype.c): a byte that does not start a
    valid character becomes ``?`` and the conversion resumes at the next byte, so
    ``enum(0xFFFF)`` in a utf8mb4 column is ``enum('??')`` in ``information_schema``."""
    return data.decode(python_codec(charset), "ddlcore_mysql_question_mark")
