/*
 * PostgresLexer — the tokens of the PostgreSQL 15 DDL that ddlcore parses.
 *
 * Written for ddlcore from the PostgreSQL 15 manual:
 *   4.1 Lexical Structure (4.1.1 Identifiers and Key Words, 4.1.2 Constants: 4.1.2.1 String
 *   Constants, 4.1.2.2 String Constants with C-Style Escapes, 4.1.2.4 Dollar-Quoted String
 *   Constants, 4.1.2.5 Bit-String Constants, 4.1.2.6 Numeric Constants, 4.1.3 Operators,
 *   4.1.4 Special Characters, 4.1.5 Comments), Appendix C "SQL Key Words".
 *
 * Design (DESIGN.md, "Performance facts"): a keyword token exists only for a word the parser
 * grammar uses; every other word lexes as IDENTIFIER.  Keywords that PostgreSQL does not
 * reserve are accepted as names by the parser rules `colId` / `typeFunctionName`.
 * No character makes the lexer fail: anything unknown is OTHER_CHAR, which the parser reports
 * (or keeps inside balanced source text).
 *
 * Known limit: a dollar-quoted string ends at the first `$tag$` of the same shape; the
 * statement splitter (which matches tags exactly) decides statement boundaries, so this only
 * matters inside one statement that nests different dollar tags, which DDL parsed here (no
 * function bodies) does not do.
 */
lexer grammar PostgresLexer;

options { caseInsensitive = true; }

// ------------------------------------------------------------------ hidden channel (4.1.5)
SPACE           : [ \t\r\n\f\u000B]+                    -> channel(HIDDEN);
BLOCK_COMMENT   : '/*' ( BLOCK_COMMENT | . )*? '*/'      -> channel(HIDDEN);   // nests
LINE_COMMENT    : '--' ~[\r\n]*                          -> channel(HIDDEN);

// ------------------------------------------------------------------ key words (Appendix C)
// Reserved (the parser never takes them as names): ALL AND ANY ARRAY AS ASC CHECK COLLATE
// COLUMN CONSTRAINT CREATE DEFAULT DEFERRABLE DESC DISTINCT FALSE FOR FOREIGN FROM IN
// INITIALLY NOT NULL ON ONLY OR PRIMARY REFERENCES SELECT TABLE TO TRUE UNIQUE USER USING
// WITH; "type or function name" words (AUTHORIZATION CONCURRENTLY FULL IS LIKE) are not
// column names either.
ACCESS          : 'ACCESS';
ACTION          : 'ACTION';
ADD             : 'ADD';
AFTER           : 'AFTER';
ALL             : 'ALL';
ALTER           : 'ALTER';
ALWAYS          : 'ALWAYS';
AND             : 'AND';
ARRAY           : 'ARRAY';
AS              : 'AS';
ASC             : 'ASC';
ATTACH          : 'ATTACH';
ATTRIBUTE       : 'ATTRIBUTE';
AUTHORIZATION   : 'AUTHORIZATION';
BEFORE          : 'BEFORE';
BIT             : 'BIT';
BY              : 'BY';
CASCADE         : 'CASCADE';
CHAR            : 'CHAR';
CHARACTER       : 'CHARACTER';
CHECK           : 'CHECK';
CLUSTER         : 'CLUSTER';
COLLATE         : 'COLLATE';
COLUMN          : 'COLUMN';
COMMIT          : 'COMMIT';
COMMENT         : 'COMMENT';
COMMENTS        : 'COMMENTS';
COMPRESSION     : 'COMPRESSION';
CONCURRENTLY    : 'CONCURRENTLY';
CONSTRAINT      : 'CONSTRAINT';
CONSTRAINTS     : 'CONSTRAINTS';
CONTINUE        : 'CONTINUE';
CREATE          : 'CREATE';
DATA            : 'DATA';
DAY             : 'DAY';
DEFAULT         : 'DEFAULT';
DEFAULTS        : 'DEFAULTS';
DEFERRABLE      : 'DEFERRABLE';
DEFERRED        : 'DEFERRED';
DELETE          : 'DELETE';
DESC            : 'DESC';
DETACH          : 'DETACH';
DISABLE         : 'DISABLE';
DISTINCT        : 'DISTINCT';
DOMAIN          : 'DOMAIN';
DOUBLE          : 'DOUBLE';
DROP            : 'DROP';
ENABLE          : 'ENABLE';
ENUM            : 'ENUM';
EXCLUDE         : 'EXCLUDE';
EXCLUDING       : 'EXCLUDING';
EXISTS          : 'EXISTS';
EXPRESSION      : 'EXPRESSION';
FALSE           : 'FALSE';
FINALIZE        : 'FINALIZE';
FIRST           : 'FIRST';
FOR             : 'FOR';
FORCE           : 'FORCE';
FOREIGN         : 'FOREIGN';
FROM            : 'FROM';
FULL            : 'FULL';
GENERATED       : 'GENERATED';
GLOBAL          : 'GLOBAL';
HOUR            : 'HOUR';
IDENTITY        : 'IDENTITY';
IF              : 'IF';
IMMEDIATE       : 'IMMEDIATE';
IN              : 'IN';
INCLUDE         : 'INCLUDE';
INCLUDING       : 'INCLUDING';
INDEX           : 'INDEX';
INDEXES         : 'INDEXES';
INHERIT         : 'INHERIT';
INHERITS        : 'INHERITS';
INITIALLY       : 'INITIALLY';
INTERVAL        : 'INTERVAL';
IS              : 'IS';
KEY             : 'KEY';
LAST            : 'LAST';
LIKE            : 'LIKE';
LOCAL           : 'LOCAL';
LOGGED          : 'LOGGED';
MATCH           : 'MATCH';
MATERIALIZED    : 'MATERIALIZED';
METHOD          : 'METHOD';
MINUTE          : 'MINUTE';
MONTH           : 'MONTH';
NATIONAL        : 'NATIONAL';
NCHAR           : 'NCHAR';
NO              : 'NO';
NOT             : 'NOT';
NOTHING         : 'NOTHING';
NULL            : 'NULL';
NULLS           : 'NULLS';
OF              : 'OF';
OIDS            : 'OIDS';
OPTIONS         : 'OPTIONS';
ON              : 'ON';
ONLY            : 'ONLY';
OR              : 'OR';
OWNED           : 'OWNED';
OWNER           : 'OWNER';
PARTIAL         : 'PARTIAL';
PARTITION       : 'PARTITION';
PRECISION       : 'PRECISION';
PRESERVE        : 'PRESERVE';
PRIMARY         : 'PRIMARY';
RANGE           : 'RANGE';
RECURSIVE       : 'RECURSIVE';
REFERENCES      : 'REFERENCES';
RENAME          : 'RENAME';
REPLACE         : 'REPLACE';
REPLICA         : 'REPLICA';
RESET           : 'RESET';
RESTART         : 'RESTART';
RESTRICT        : 'RESTRICT';
ROWS            : 'ROWS';
RULE            : 'RULE';
SCHEMA          : 'SCHEMA';
SECOND          : 'SECOND';
SELECT          : 'SELECT';
SEQUENCE        : 'SEQUENCE';
SESSION         : 'SESSION';
SET             : 'SET';
SIMPLE          : 'SIMPLE';
STATISTICS      : 'STATISTICS';
STORAGE         : 'STORAGE';
STORED          : 'STORED';
TABLE           : 'TABLE';
TABLESPACE      : 'TABLESPACE';
TEMP            : 'TEMP';
TEMPORARY       : 'TEMPORARY';
TIME            : 'TIME';
TIMESTAMP       : 'TIMESTAMP';
TO              : 'TO';
TRIGGER         : 'TRIGGER';
TRUE            : 'TRUE';
TRUNCATE        : 'TRUNCATE';
TYPE            : 'TYPE';
UNIQUE          : 'UNIQUE';
UNLOGGED        : 'UNLOGGED';
UPDATE          : 'UPDATE';
USER            : 'USER';
USING           : 'USING';
VALID           : 'VALID';
VALIDATE        : 'VALIDATE';
VALUE           : 'VALUE';
VALUES          : 'VALUES';
VARCHAR         : 'VARCHAR';
VARYING         : 'VARYING';
VIEW            : 'VIEW';
WITH            : 'WITH';
WITHOUT         : 'WITHOUT';
YEAR            : 'YEAR';
ZONE            : 'ZONE';

// ------------------------------------------------------------------ constants (4.1.2)
// 'text' with '' for a quote (standard_conforming_strings on); E'...' with backslash escapes;
// B'0101' / X'1F' bit strings; U&'...' Unicode escapes; $tag$...$tag$ dollar quoting.
STRING          : '\'' ( '\'\'' | ~'\'' )* '\'';
ESCAPE_STRING   : 'E' '\'' ( '\\' . | '\'\'' | ~['\\] )* '\'';
BIT_STRING      : [BX] '\'' ~'\''* '\'';
UNICODE_STRING  : 'U&' '\'' ( '\'\'' | ~'\'' )* '\'';
NATIONAL_STRING : 'N' '\'' ( '\'\'' | ~'\'' )* '\'';
DOLLAR_STRING   : '$' DOLLAR_TAG? '$' .*? '$' DOLLAR_TAG? '$';
PARAM           : '$' [0-9]+;
// the opening of a string, quoted name or dollar quote that is never closed (only matched
// when the whole constant cannot be): no parser rule accepts it, so the statement is an error
UNTERMINATED    : '\'' | '"' | '$' DOLLAR_TAG? '$';

INTEGER         : [0-9]+;
NUMERIC         : ( [0-9]+ '.' [0-9]* | '.' [0-9]+ ) ( 'E' [+-]? [0-9]+ )?
                | [0-9]+ 'E' [+-]? [0-9]+;

// ------------------------------------------------------------------ names (4.1.1)
IDENTIFIER      : [A-Z_\u0080-\uFFFF] [A-Z_0-9$\u0080-\uFFFF]*;
QUOTED_IDENTIFIER : '"' ( '""' | ~'"' )+ '"';
UNICODE_IDENTIFIER : 'U&"' ( '""' | ~'"' )+ '"';

// ------------------------------------------------------------------ special characters (4.1.4)
LPAREN          : '(';
RPAREN          : ')';
LBRACKET        : '[';
RBRACKET        : ']';
COMMA           : ',';
SEMI            : ';';
DOT             : '.';
TYPECAST        : '::';
COLON           : ':';
EQUAL           : '=';
STAR            : '*';
// 4.1.3: an operator is a run of + - * / < > = ~ ! @ # % ^ & | ` ?
OPERATOR        : [+\-*/<>=~!@#%^&|`?]+;

OTHER_CHAR      : .;

fragment DOLLAR_TAG : [A-Z_\u0080-\uFFFF] [A-Z_0-9\u0080-\uFFFF]*;
