/*
 * MySqlLexer — the tokens of the MySQL 8.0 / MariaDB 10.11 DDL that ddlcore parses.
 *
 * Written for ddlcore from the reference manuals:
 *   MySQL 8.0 Reference Manual, 11.1 Literal Values, 11.2 Schema Object Names,
 *   11.3 Keywords and Reserved Words, 11.7 Comments;
 *   MariaDB Server documentation: Identifier Names, Reserved Words, Comment Syntax,
 *   String Literals, Numeric Literals, Hexadecimal Literals, Binary Literals.
 *
 * Design (see DESIGN.md, "Performance facts"): the lexer is the largest cost of a parse on the
 * Python runtime, so it is kept small.
 *   - A keyword token exists only for a word the parser grammar uses. Every other word
 *     (function names, engine names, charset names, most table options, ...) lexes as ID.
 *   - Keywords the server does not reserve are accepted as identifiers by the parser rule
 *     `nonReservedKeyword`; keep that rule in step when a keyword is added here.
 *   - Comments and whitespace go to the hidden channel. Versioned comments (/*!50100 ... * /)
 *     are opened up by the statement splitter before the text reaches this lexer; one that
 *     reaches it unopened is an ordinary comment.
 *   - No character makes the lexer fail: anything unknown becomes OTHER_CHAR and the parser
 *     reports it (balanced-token rules, which keep expressions as source text, accept it).
 */
lexer grammar MySqlLexer;

options { caseInsensitive = true; }

// ------------------------------------------------------------------ hidden channel
// MySQL 8.0 manual 11.7 Comments: '#' to end of line, '-- ' (dash dash + whitespace or
// control character) to end of line, '/* ... */'.

SPACE           : [ \t\r\n\f\u000B]+                              -> channel(HIDDEN);
BLOCK_COMMENT   : '/*' .*? '*/'                                   -> channel(HIDDEN);
LINE_COMMENT    : ( '#' ~[\r\n]* | '--' [ \t\u000B\f] ~[\r\n]* | '--' ('\r'? '\n' | EOF) )
                                                                  -> channel(HIDDEN);

// ------------------------------------------------------------------ keywords
// Only the words the parser uses. Reserved words (MySQL 8.0 manual 11.3, table "Keywords and
// Reserved Words in MySQL 8.0", marked (R)) are listed first; the parser never accepts them
// as unquoted identifiers. The rest are non-reserved and usable as identifiers.

// reserved
ADD                 : 'ADD';
ALL                 : 'ALL';
ALTER               : 'ALTER';
ANALYZE             : 'ANALYZE';
AS                  : 'AS';
ASC                 : 'ASC';
BIGINT              : 'BIGINT';
BINARY              : 'BINARY';
BLOB                : 'BLOB';
BY                  : 'BY';
CASCADE             : 'CASCADE';
CHANGE              : 'CHANGE';
CHAR                : 'CHAR';
CHARACTER           : 'CHARACTER';
CHECK               : 'CHECK';
COLLATE             : 'COLLATE';
COLUMN              : 'COLUMN';
CONSTRAINT          : 'CONSTRAINT';
CONVERT             : 'CONVERT';
CREATE              : 'CREATE';
CURRENT_TIMESTAMP   : 'CURRENT_TIMESTAMP';
CURRENT_USER        : 'CURRENT_USER';
DATABASE            : 'DATABASE';
DEC                 : 'DEC';
DECIMAL             : 'DECIMAL';
DEFAULT             : 'DEFAULT';
DELETE              : 'DELETE';
DESC                : 'DESC';
DISTINCT            : 'DISTINCT';
DISTINCTROW         : 'DISTINCTROW';
DOUBLE              : 'DOUBLE';
DROP                : 'DROP';
EXISTS              : 'EXISTS';
FALSE               : 'FALSE';
FLOAT               : 'FLOAT';
FLOAT4              : 'FLOAT4';
FLOAT8              : 'FLOAT8';
FOR                 : 'FOR';
FORCE               : 'FORCE';
FOREIGN             : 'FOREIGN';
FROM                : 'FROM';
FULLTEXT            : 'FULLTEXT';
HIGH_PRIORITY       : 'HIGH_PRIORITY';
IF                  : 'IF';
IGNORE              : 'IGNORE';
INDEX               : 'INDEX';
INT                 : 'INT';
INT1                : 'INT1';
INT2                : 'INT2';
INT3                : 'INT3';
INT4                : 'INT4';
INT8                : 'INT8';
INTEGER             : 'INTEGER';
KEY                 : 'KEY';
KEYS                : 'KEYS';
LIKE                : 'LIKE';
LOCALTIME           : 'LOCALTIME';
LOCALTIMESTAMP      : 'LOCALTIMESTAMP';
LOCK                : 'LOCK';
LONG                : 'LONG';
LONGBLOB            : 'LONGBLOB';
LONGTEXT            : 'LONGTEXT';
MATCH               : 'MATCH';
MEDIUMBLOB          : 'MEDIUMBLOB';
MEDIUMINT           : 'MEDIUMINT';
MEDIUMTEXT          : 'MEDIUMTEXT';
MIDDLEINT           : 'MIDDLEINT';
NOT                 : 'NOT';
NULL                : 'NULL';
NUMERIC             : 'NUMERIC';
ON                  : 'ON';
OPTIMIZE            : 'OPTIMIZE';
OR                  : 'OR';
ORDER               : 'ORDER';
PARTITION           : 'PARTITION';
PRECISION           : 'PRECISION';
PRIMARY             : 'PRIMARY';
READ                : 'READ';
REAL                : 'REAL';
REFERENCES          : 'REFERENCES';
RENAME              : 'RENAME';
REPLACE             : 'REPLACE';
RESTRICT            : 'RESTRICT';
SCHEMA              : 'SCHEMA';
SELECT              : 'SELECT';
SET                 : 'SET';
SMALLINT            : 'SMALLINT';
SPATIAL             : 'SPATIAL';
SQL                 : 'SQL';
SQL_BIG_RESULT      : 'SQL_BIG_RESULT';
SQL_CALC_FOUND_ROWS : 'SQL_CALC_FOUND_ROWS';
SQL_SMALL_RESULT    : 'SQL_SMALL_RESULT';
STRAIGHT_JOIN       : 'STRAIGHT_JOIN';
TABLE               : 'TABLE';
TINYBLOB            : 'TINYBLOB';
TINYINT             : 'TINYINT';
TINYTEXT            : 'TINYTEXT';
TO                  : 'TO';
TRUE                : 'TRUE';
UNION               : 'UNION';
UNIQUE              : 'UNIQUE';
UNSIGNED            : 'UNSIGNED';
UPDATE              : 'UPDATE';
USE                 : 'USE';
USING               : 'USING';
VARBINARY           : 'VARBINARY';
VARCHAR             : 'VARCHAR';
VARCHARACTER        : 'VARCHARACTER';
VARYING             : 'VARYING';
WITH                : 'WITH';
ZEROFILL            : 'ZEROFILL';

// non-reserved (also identifiers; see parser rule nonReservedKeyword).
// GENERATED, ROW, STORED, SYSTEM and VIRTUAL are reserved in MySQL 8.0 but not in MariaDB 10.11,
// so they are accepted as identifiers here.
ACTION              : 'ACTION';
AFTER               : 'AFTER';
ALGORITHM           : 'ALGORITHM';
ALWAYS              : 'ALWAYS';
ASCII               : 'ASCII';
AUTO_INCREMENT      : 'AUTO_INCREMENT';
AUTO_RANDOM         : 'AUTO_RANDOM';          // TiDB
BIT                 : 'BIT';
BOOL                : 'BOOL';
BOOLEAN             : 'BOOLEAN';
BYTE                : 'BYTE';
CHARSET             : 'CHARSET';
CLOB                : 'CLOB';
CLUSTERED           : 'CLUSTERED';            // TiDB
COALESCE            : 'COALESCE';
COLUMN_FORMAT       : 'COLUMN_FORMAT';
COMMENT             : 'COMMENT';
COMPRESSED          : 'COMPRESSED';
DATA                : 'DATA';
DATE                : 'DATE';
DATETIME            : 'DATETIME';
DEFINER             : 'DEFINER';
DIRECTORY           : 'DIRECTORY';
DISABLE             : 'DISABLE';
DISCARD             : 'DISCARD';
ENABLE              : 'ENABLE';
END                 : 'END';
ENFORCED            : 'ENFORCED';
ENGINE              : 'ENGINE';
ENGINE_ATTRIBUTE    : 'ENGINE_ATTRIBUTE';
ENUM                : 'ENUM';
EXCHANGE            : 'EXCHANGE';
FIRST               : 'FIRST';
FIXED               : 'FIXED';
GENERATED           : 'GENERATED';
GEOMCOLLECTION      : 'GEOMCOLLECTION';
GEOMETRY            : 'GEOMETRY';
GEOMETRYCOLLECTION  : 'GEOMETRYCOLLECTION';
GLOBAL              : 'GLOBAL';
IGNORED             : 'IGNORED';
IMPORT              : 'IMPORT';
INET4               : 'INET4';
INET6               : 'INET6';
INVISIBLE           : 'INVISIBLE';
JSON                : 'JSON';
KEY_BLOCK_SIZE      : 'KEY_BLOCK_SIZE';
LINESTRING          : 'LINESTRING';
LOCAL               : 'LOCAL';
MODIFY              : 'MODIFY';
MULTILINESTRING     : 'MULTILINESTRING';
MULTIPOINT          : 'MULTIPOINT';
MULTIPOLYGON        : 'MULTIPOLYGON';
NAME                : 'NAME';
NAMES               : 'NAMES';
NATIONAL            : 'NATIONAL';
NCHAR               : 'NCHAR';
NEXT                : 'NEXT';
NO                  : 'NO';
NONCLUSTERED        : 'NONCLUSTERED';         // TiDB
NOW                 : 'NOW';
NOWAIT              : 'NOWAIT';
NUMBER              : 'NUMBER';
NVARCHAR            : 'NVARCHAR';
OFFLINE             : 'OFFLINE';
ONLINE              : 'ONLINE';
ONLY                : 'ONLY';
PARSER              : 'PARSER';
PARTITIONING        : 'PARTITIONING';
PERIOD              : 'PERIOD';
PERSIST             : 'PERSIST';
PERSIST_ONLY        : 'PERSIST_ONLY';
PERSISTENT          : 'PERSISTENT';
PLACEMENT           : 'PLACEMENT';            // TiDB
POINT               : 'POINT';
POLICY              : 'POLICY';               // TiDB
POLYGON             : 'POLYGON';
RAW                 : 'RAW';
REBUILD             : 'REBUILD';
REMOVE              : 'REMOVE';
REORGANIZE          : 'REORGANIZE';
REPAIR              : 'REPAIR';
ROW                 : 'ROW';
SECONDARY_ENGINE_ATTRIBUTE : 'SECONDARY_ENGINE_ATTRIBUTE';
SECURITY            : 'SECURITY';
SERIAL              : 'SERIAL';
STATEMENT           : 'STATEMENT';
SESSION             : 'SESSION';
SIGNED              : 'SIGNED';
SQL_BUFFER_RESULT   : 'SQL_BUFFER_RESULT';
SQL_CACHE           : 'SQL_CACHE';
SQL_NO_CACHE        : 'SQL_NO_CACHE';
SRID                : 'SRID';
START               : 'START';
STORAGE             : 'STORAGE';
STORED              : 'STORED';
SYSTEM              : 'SYSTEM';
TABLES              : 'TABLES';
TABLESPACE          : 'TABLESPACE';
TEMPORARY           : 'TEMPORARY';
TEXT                : 'TEXT';
TIME                : 'TIME';
TIMESTAMP           : 'TIMESTAMP';
TTL                 : 'TTL';                  // TiDB
TRUNCATE            : 'TRUNCATE';
UNICODE             : 'UNICODE';
UPGRADE             : 'UPGRADE';
UUID                : 'UUID';
VALIDATION          : 'VALIDATION';
VALUE               : 'VALUE';
VARCHAR2            : 'VARCHAR2';
VERSIONING          : 'VERSIONING';
VIEW                : 'VIEW';
VIRTUAL             : 'VIRTUAL';
VISIBLE             : 'VISIBLE';
WAIT                : 'WAIT';
WITHOUT             : 'WITHOUT';
YEAR                : 'YEAR';

// ------------------------------------------------------------------ punctuation
ASSIGN      : ':=';
EQ          : '=';
COMMA       : ',';
DOT         : '.';
LPAREN      : '(';
RPAREN      : ')';
SEMI        : ';';
AT          : '@';
STAR        : '*';
PLUS        : '+';
MINUS       : '-';

// ------------------------------------------------------------------ literals
// MySQL 8.0 manual 11.1.1 String Literals: 'x' or "x"; a quote inside is doubled or escaped with
// a backslash. A double-quoted string is an identifier under sql_mode ANSI_QUOTES; the parser
// accepts DQUOTE_STRING in both places.
STRING_LITERAL      : SQ_STRING;
DQUOTE_STRING       : '"' ( '\\' . | '""' | ~["\\] )* '"';
// N'x' (11.1.1, national character set) and _charset'x' (10.3.8 Character Set Introducers).
NATIONAL_STRING     : 'N' SQ_STRING;
INTRODUCED_STRING   : '_' [A-Z0-9_]+ [ \t\r\n]* ( SQ_STRING | '0X' HEX_DIGIT+ | 'X' '\'' HEX_DIGIT* '\'' );
// 11.1.4 Hexadecimal Literals, 11.1.5 Bit-Value Literals.
HEX_LITERAL         : 'X' '\'' HEX_DIGIT* '\'' | '0X' HEX_DIGIT+;
BIT_LITERAL         : 'B' '\'' [01]* '\'' | '0B' [01]+;
// 11.1.2 Numeric Literals (the sign is a separate token).
DECIMAL_LITERAL     : DEC_DIGIT+;
REAL_LITERAL        : DEC_DIGIT+ '.' DEC_DIGIT* EXPONENT?
                    | '.' DEC_DIGIT+ EXPONENT?
                    | DEC_DIGIT+ EXPONENT
                    ;

// ------------------------------------------------------------------ identifiers
// MySQL 8.0 manual 11.2 Schema Object Names: unquoted names are [0-9a-zA-Z$_] and U+0080..U+FFFF,
// may begin with a digit but may not consist solely of digits ("1e5" is a number).
// A name directly after a '.' may be any word, reserved or not (11.2.2 Identifier Qualifiers):
// DOT_ID is that '.name' as one token, so `db.table` and `db.1abc` lex as qualified names.
DOT_ID              : '.' ID_BODY;
ID                  : ID_BODY;
BQUOTE_ID           : '`' ( ~'`' | '``' )* '`';

// Anything else (operators inside expressions kept as text, stray characters): one token per
// character, so the lexer never fails and the parser reports the position.
OTHER_CHAR          : .;

fragment SQ_STRING  : '\'' ( '\\' . | '\'\'' | ~['\\] )* '\'';
fragment HEX_DIGIT  : [0-9A-F];
fragment DEC_DIGIT  : [0-9];
fragment EXPONENT   : 'E' [+\-]? DEC_DIGIT+;
fragment ID_CHAR    : [0-9A-Z_$\u0080-\uFFFF];
fragment ID_BODY    : DEC_DIGIT* [A-Z_$\u0080-\uFFFF] ID_CHAR*;
