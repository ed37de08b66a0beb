/*
 * PostgresParser — the PostgreSQL 15 statements that can change a table, one statement per
 * parse (the splitter has cut the script; the statement filter has skipped what cannot
 * change a table).
 *
 * Written for ddlcore from the synopses of the PostgreSQL 15 manual, Part VI "SQL Commands":
 * CREATE TABLE, CREATE TABLE AS, ALTER TABLE, DROP TABLE, TRUNCATE, CREATE/ALTER/DROP SCHEMA,
 * CREATE/ALTER TYPE, CREATE/ALTER DOMAIN, CREATE SEQUENCE, CREATE/ALTER/DROP INDEX,
 * CREATE [MATERIALIZED] VIEW, COMMENT, SET; and chapter 8 "Data Types" (type names).  Rule
 * names follow the synopsis blocks (createStmt, tableElement, columnConstraint,
 * alterTableCmd, ...).
 *
 * Expressions (defaults, CHECK, generation expressions, USING, partition bounds, view and
 * query bodies) are not parsed: they are `balancedTokens` (or the narrower `exprTokens`) and
 * the visitor keeps their source text (DESIGN.md, "Performance facts").
 */
parser grammar PostgresParser;

options { tokenVocab = PostgresLexer; }

ddlStatement
    : statement SEMI* EOF
    ;

statement
    : createStmt
    | createTableAsStmt
    | alterTableStmt
    | dropStmt
    | truncateStmt
    | createSchemaStmt
    | alterSchemaStmt
    | createTypeStmt
    | alterTypeStmt
    | createDomainStmt
    | alterDomainStmt
    | createSequenceStmt
    | alterSequenceStmt
    | createIndexStmt
    | alterIndexStmt
    | createViewStmt
    | createMatViewStmt
    | alterViewStmt
    | commentStmt
    | variableSetStmt
    | variableResetStmt
    | setConfigCall
    ;

// ------------------------------------------------------------------ CREATE TABLE
// CREATE [ [ GLOBAL | LOCAL ] { TEMPORARY | TEMP } | UNLOGGED ] TABLE [ IF NOT EXISTS ] table_name ...
createStmt
    : CREATE persistence? TABLE ifNotExists? qualifiedName
      ( LPAREN tableElementList? RPAREN inheritsClause? partitionSpec? tableTail
      | OF qualifiedName (LPAREN typedTableElementList RPAREN)? partitionSpec? tableTail
      | PARTITION OF qualifiedName (LPAREN typedTableElementList RPAREN)? partitionBoundSpec partitionSpec? tableTail
      )
    ;

persistence
    : (GLOBAL | LOCAL)? (TEMPORARY | TEMP)       #tempPersistence
    | UNLOGGED                                  #unloggedPersistence
    ;

ifNotExists : IF NOT EXISTS ;
ifExists    : IF EXISTS ;

tableElementList
    : tableElement (COMMA tableElement)*
    ;

tableElement
    : tableConstraint
    | tableLikeClause
    | columnDef
    ;

typedTableElementList
    : typedTableElement (COMMA typedTableElement)*
    ;

typedTableElement
    : tableConstraint
    | colId (WITH OPTIONS)? columnConstraint*
    ;

// column_name data_type [ STORAGE ... ] [ COMPRESSION method ] [ COLLATE collation ] [ column_constraint [ ... ] ]
columnDef
    : colId typeName columnQualifier*
    ;

columnQualifier
    : columnConstraint
    | STORAGE colId
    | COMPRESSION colId
    | OPTIONS LPAREN balancedTokens RPAREN
    ;

// [ CONSTRAINT constraint_name ] { NOT NULL | NULL | CHECK ( expression ) [ NO INHERIT ] |
//   DEFAULT default_expr | GENERATED ALWAYS AS ( generation_expr ) STORED |
//   GENERATED { ALWAYS | BY DEFAULT } AS IDENTITY [ ( sequence_options ) ] |
//   UNIQUE [ NULLS [ NOT ] DISTINCT ] index_parameters | PRIMARY KEY index_parameters |
//   REFERENCES reftable [ ( refcolumn ) ] [ MATCH ... ] [ ON DELETE ... ] [ ON UPDATE ... ] }
// [ DEFERRABLE | NOT DEFERRABLE ] [ INITIALLY DEFERRED | INITIALLY IMMEDIATE ]
columnConstraint
    : (CONSTRAINT name)? columnConstraintElem
    | constraintAttribute
    | COLLATE anyName
    ;

columnConstraintElem
    : NOT NULL                                                      #notNullConstraint
    | NULL                                                          #nullConstraint
    | CHECK LPAREN balancedTokens RPAREN (NO INHERIT)?              #checkColumnConstraint
    | DEFAULT exprTokens                                            #defaultConstraint
    | GENERATED ALWAYS AS LPAREN balancedTokens RPAREN STORED        #generatedConstraint
    | GENERATED identityKind AS IDENTITY (LPAREN balancedTokens RPAREN)?  #identityConstraint
    | UNIQUE nullsDistinct? indexParameters                         #uniqueColumnConstraint
    | PRIMARY KEY indexParameters                                   #primaryKeyColumnConstraint
    | REFERENCES qualifiedName (LPAREN nameList RPAREN)? referenceActions  #referencesColumnConstraint
    ;

identityKind
    : ALWAYS
    | BY DEFAULT
    ;

nullsDistinct
    : NULLS NOT? DISTINCT
    ;

constraintAttribute
    : NOT? DEFERRABLE
    | INITIALLY (DEFERRED | IMMEDIATE)
    | NOT VALID
    | NO INHERIT
    ;

referenceActions
    : ( MATCH (FULL | PARTIAL | SIMPLE)
      | ON (DELETE | UPDATE) referentialAction
      )*
    ;

referentialAction
    : NO ACTION
    | RESTRICT
    | CASCADE
    | SET (NULL | DEFAULT) (LPAREN nameList RPAREN)?
    ;

// [ INCLUDE ( column_name [, ... ] ) ] [ WITH ( storage_parameter [= value] [, ... ] ) ]
// [ USING INDEX TABLESPACE tablespace_name ]
indexParameters
    : (INCLUDE LPAREN nameList RPAREN)? (WITH LPAREN balancedTokens RPAREN)? (USING INDEX TABLESPACE name)?
    ;

// [ CONSTRAINT constraint_name ] { CHECK ( expression ) [ NO INHERIT ] |
//   UNIQUE [ NULLS [ NOT ] DISTINCT ] ( column_name [, ... ] ) index_parameters |
//   PRIMARY KEY ( column_name [, ... ] ) index_parameters |
//   EXCLUDE [ USING index_method ] ( exclude_element WITH operator [, ... ] ) index_parameters [ WHERE ( predicate ) ] |
//   FOREIGN KEY ( column_name [, ... ] ) REFERENCES reftable [ ( refcolumn [, ... ] ) ] ... }
tableConstraint
    : (CONSTRAINT name)? tableConstraintElem constraintAttribute*
    ;

tableConstraintElem
    : CHECK LPAREN balancedTokens RPAREN (NO INHERIT)?                               #checkTableConstraint
    | UNIQUE nullsDistinct? LPAREN nameList RPAREN indexParameters                  #uniqueTableConstraint
    | UNIQUE USING INDEX name                                                       #uniqueUsingIndex
    | PRIMARY KEY LPAREN nameList RPAREN indexParameters                            #primaryKeyTableConstraint
    | PRIMARY KEY USING INDEX name                                                  #primaryKeyUsingIndex
    | EXCLUDE (USING name)? LPAREN balancedTokens RPAREN indexParameters (identifierLike LPAREN balancedTokens RPAREN)?  #excludeTableConstraint
    | FOREIGN KEY LPAREN nameList RPAREN REFERENCES qualifiedName (LPAREN nameList RPAREN)? referenceActions  #foreignKeyTableConstraint
    ;

// LIKE source_table [ { INCLUDING | EXCLUDING } { COMMENTS | COMPRESSION | CONSTRAINTS |
//   DEFAULTS | GENERATED | IDENTITY | INDEXES | STATISTICS | STORAGE | ALL } ... ]
tableLikeClause
    : LIKE qualifiedName tableLikeOption*
    ;

tableLikeOption
    : (INCLUDING | EXCLUDING) likeOptionName
    ;

likeOptionName
    : COMMENTS | COMPRESSION | CONSTRAINTS | DEFAULTS | GENERATED | IDENTITY | INDEXES | STATISTICS | STORAGE | ALL
    ;

inheritsClause
    : INHERITS LPAREN qualifiedName (COMMA qualifiedName)* RPAREN
    ;

// PARTITION BY { RANGE | LIST | HASH } ( { column_name | ( expression ) } [ COLLATE collation ] [ opclass ] [, ... ] )
partitionSpec
    : PARTITION BY partitionStrategy LPAREN balancedTokens RPAREN
    ;

partitionStrategy
    : RANGE
    | identifierLike    // LIST, HASH
    ;

// FOR VALUES partition_bound_spec | DEFAULT
// partition_bound_spec (CREATE TABLE):
//   IN ( partition_bound_expr [, ...] ) |
//   FROM ( { partition_bound_expr | MINVALUE | MAXVALUE } [, ...] ) TO ( ... ) |
//   WITH ( MODULUS numeric_literal, REMAINDER numeric_literal )
// The lists are kept as text (balancedTokens, followed only by ')': one token decides its loop).
partitionBoundSpec
    : FOR VALUES ( IN LPAREN balancedTokens RPAREN
                 | FROM LPAREN balancedTokens RPAREN TO LPAREN balancedTokens RPAREN
                 | WITH LPAREN balancedTokens RPAREN
                 )
    | DEFAULT
    ;

// [ USING method ] [ WITH ( storage_parameter [= value] [, ... ] ) | WITHOUT OIDS ]
// [ ON COMMIT { PRESERVE ROWS | DELETE ROWS | DROP } ] [ TABLESPACE tablespace_name ]
tableTail
    : ( USING name
      | WITH LPAREN balancedTokens RPAREN
      | WITHOUT OIDS
      | ON COMMIT (PRESERVE ROWS | DELETE ROWS | DROP)
      | TABLESPACE name
      )*
    ;

// CREATE [ ... ] TABLE [ IF NOT EXISTS ] table_name [ (column_name [, ...] ) ] [ USING method ]
//   [ WITH ( ... ) | WITHOUT OIDS ] [ ON COMMIT ... ] [ TABLESPACE ... ] AS query [ WITH [ NO ] DATA ]
createTableAsStmt
    : CREATE persistence? TABLE ifNotExists? qualifiedName (LPAREN nameList RPAREN)? tableTail AS query
    ;

query
    : balancedTokens
    ;

// ------------------------------------------------------------------ ALTER TABLE
alterTableStmt
    : ALTER FOREIGN? TABLE ifExists? ONLY? qualifiedName STAR? alterTableAction
    ;

alterTableAction
    : RENAME COLUMN? colId TO colId                                        #renameColumn
    | RENAME CONSTRAINT name TO name                                       #renameConstraint
    | RENAME TO name                                                       #renameTable
    | SET SCHEMA name                                                      #setSchema
    | ATTACH PARTITION qualifiedName partitionBoundSpec                    #attachPartition
    | DETACH PARTITION qualifiedName (CONCURRENTLY | FINALIZE)?            #detachPartition
    | alterTableCmd (COMMA alterTableCmd)*                                  #alterTableCmds
    ;

alterTableCmd
    : ADD COLUMN? ifNotExists? columnDef                                    #addColumn
    | ADD tableConstraint                                                   #addConstraint
    | DROP COLUMN? ifExists? colId dropBehavior?                            #dropColumn
    | ALTER COLUMN? colId (SET DATA)? TYPE typeName (COLLATE anyName)? (USING exprTokens)?  #alterColumnType
    | ALTER COLUMN? colId SET DEFAULT exprTokens                            #setDefault
    | ALTER COLUMN? colId DROP DEFAULT                                      #dropDefault
    | ALTER COLUMN? colId SET NOT NULL                                      #setNotNull
    | ALTER COLUMN? colId DROP NOT NULL                                     #dropNotNull
    | ALTER COLUMN? colId DROP EXPRESSION ifExists?                         #dropExpression
    | ALTER COLUMN? colId ADD GENERATED identityKind AS IDENTITY (LPAREN balancedTokens RPAREN)?  #addIdentity
    | ALTER COLUMN? colId identityAlteration+                               #alterIdentity
    | ALTER COLUMN? colId DROP IDENTITY ifExists?                           #dropIdentity
    | ALTER COLUMN? colId (SET | RESET) columnSetting                       #alterColumnSetting
    | ALTER CONSTRAINT name constraintAttribute*                             #alterConstraint
    | VALIDATE CONSTRAINT name                                              #validateConstraint
    | DROP CONSTRAINT ifExists? name dropBehavior?                          #dropConstraint
    | REPLICA IDENTITY replicaIdentity                                      #replicaIdentityCmd
    | INHERIT qualifiedName                                                 #inherit
    | NO INHERIT qualifiedName                                              #noInherit
    | SET (LOGGED | UNLOGGED)                                               #setLogged
    | OWNER TO roleSpec                                                     #ownerTo
    | otherTableCmd                                                         #otherCmd
    ;

// SET GENERATED { ALWAYS | BY DEFAULT } | SET sequence_option | RESTART [ [ WITH ] restart ]
identityAlteration
    : SET GENERATED identityKind
    | SET (IDENTIFIER | NO | SEQUENCE) balancedNoComma?
    | RESTART (WITH? INTEGER)?
    ;

columnSetting
    : STATISTICS balancedNoComma
    | STORAGE colId
    | COMPRESSION colId
    | LPAREN balancedTokens RPAREN
    ;

replicaIdentity
    : DEFAULT
    | FULL
    | NOTHING
    | USING INDEX name
    ;

// actions that change no row image: triggers, rules, row security, clustering, storage
// parameters, tablespace, access method, typed-table links (parsed, no model change)
otherTableCmd
    : (ENABLE | DISABLE | FORCE | NO FORCE | CLUSTER | SET | RESET | OF | NOT OF) balancedNoComma?
    ;

dropBehavior
    : CASCADE
    | RESTRICT
    ;

roleSpec
    : colId
    | USER
    | identifierLike
    ;

// ------------------------------------------------------------------ DROP / TRUNCATE
dropStmt
    : DROP dropObjectType CONCURRENTLY? ifExists? qualifiedName (COMMA qualifiedName)* dropBehavior?
    ;

dropObjectType
    : TABLE                 #dropTableType
    | FOREIGN TABLE         #dropTableType
    | VIEW                  #dropViewType
    | MATERIALIZED VIEW     #dropViewType
    | INDEX                 #dropIndexType
    | SEQUENCE              #dropSequenceType
    | TYPE                  #dropTypeType
    | DOMAIN                #dropTypeType
    | SCHEMA                #dropSchemaType
    ;

// TRUNCATE [ TABLE ] [ ONLY ] name [ * ] [, ... ] [ RESTART IDENTITY | CONTINUE IDENTITY ] [ CASCADE | RESTRICT ]
truncateStmt
    : TRUNCATE TABLE? truncateTarget (COMMA truncateTarget)* ((RESTART | CONTINUE) IDENTITY)? dropBehavior?
    ;

truncateTarget
    : ONLY? qualifiedName STAR?
    ;

// ------------------------------------------------------------------ schemas
// CREATE SCHEMA [ IF NOT EXISTS ] schema_name [ AUTHORIZATION role_specification ] [ schema_element [ ... ] ]
createSchemaStmt
    : CREATE SCHEMA ifNotExists? (name (AUTHORIZATION roleSpec)? | AUTHORIZATION roleSpec) schemaElement*
    ;

// schema_element: CREATE TABLE and CREATE INDEX (parsed), CREATE VIEW | SEQUENCE | TRIGGER,
// GRANT (kept as tokens up to the next CREATE: their bodies never hold a bare CREATE)
schemaElement
    : createStmt
    | createIndexStmt
    | CREATE tokensBeforeCreate
    | identifierLike tokensBeforeCreate
    ;

// tokens with balanced parentheses up to the next CREATE (the end of a schema element)
tokensBeforeCreate
    : (~(CREATE | SEMI | LPAREN | RPAREN | UNTERMINATED) | LPAREN balancedTokens RPAREN)*
    ;

alterSchemaStmt
    : ALTER SCHEMA name (RENAME TO name | OWNER TO roleSpec)
    ;

// ------------------------------------------------------------------ types and domains
createTypeStmt
    : CREATE TYPE qualifiedName AS ENUM LPAREN (stringConst (COMMA stringConst)*)? RPAREN     #createEnumType
    | CREATE TYPE qualifiedName AS LPAREN (compositeAttribute (COMMA compositeAttribute)*)? RPAREN  #createCompositeType
    | CREATE TYPE qualifiedName (AS RANGE)? (LPAREN balancedTokens RPAREN)?                 #createOtherType
    ;

compositeAttribute
    : colId typeName (COLLATE anyName)?
    ;

alterTypeStmt
    : ALTER TYPE qualifiedName ADD VALUE ifNotExists? stringConst ((BEFORE | AFTER) stringConst)?  #addEnumValue
    | ALTER TYPE qualifiedName RENAME VALUE stringConst TO stringConst                      #renameEnumValue
    | ALTER TYPE qualifiedName RENAME TO name                                               #renameType
    | ALTER TYPE qualifiedName SET SCHEMA name                                              #setTypeSchema
    | ALTER TYPE qualifiedName RENAME ATTRIBUTE colId TO colId dropBehavior?                 #renameTypeAttribute
    | ALTER TYPE qualifiedName alterTypeCmd (COMMA alterTypeCmd)*                           #alterTypeAttributes
    | ALTER TYPE qualifiedName objectOptions?                                               #otherAlterType
    ;

// ADD ATTRIBUTE attribute_name data_type [ COLLATE collation ] [ CASCADE | RESTRICT ]
// DROP ATTRIBUTE [ IF EXISTS ] attribute_name [ CASCADE | RESTRICT ]
// ALTER ATTRIBUTE attribute_name [ SET DATA ] TYPE data_type [ COLLATE collation ] [ CASCADE | RESTRICT ]
alterTypeCmd
    : ADD ATTRIBUTE colId typeName (COLLATE anyName)? dropBehavior?                         #addAttribute
    | DROP ATTRIBUTE ifExists? colId dropBehavior?                                          #dropAttribute
    | ALTER ATTRIBUTE colId (SET DATA)? TYPE typeName (COLLATE anyName)? dropBehavior?      #alterAttributeType
    ;

// CREATE DOMAIN name [ AS ] data_type [ COLLATE collation ] [ DEFAULT expression ] [ domain_constraint [ ... ] ]
createDomainStmt
    : CREATE DOMAIN qualifiedName AS? typeName domainConstraint*
    ;

domainConstraint
    : COLLATE anyName
    | DEFAULT exprTokens
    | (CONSTRAINT name)? (NOT NULL | NULL | CHECK LPAREN balancedTokens RPAREN)
    | constraintAttribute
    ;

alterDomainStmt
    : ALTER DOMAIN qualifiedName SET DEFAULT exprTokens                                     #domainSetDefault
    | ALTER DOMAIN qualifiedName DROP DEFAULT                                               #domainDropDefault
    | ALTER DOMAIN qualifiedName SET NOT NULL                                               #domainSetNotNull
    | ALTER DOMAIN qualifiedName DROP NOT NULL                                              #domainDropNotNull
    | ALTER DOMAIN qualifiedName RENAME TO name                                             #domainRename
    | ALTER DOMAIN qualifiedName SET SCHEMA name                                            #domainSetSchema
    | ALTER DOMAIN qualifiedName objectOptions?                                             #domainOther
    ;

// ------------------------------------------------------------------ sequences
createSequenceStmt
    : CREATE persistence? SEQUENCE ifNotExists? qualifiedName objectOptions?
    ;

alterSequenceStmt
    : ALTER SEQUENCE ifExists? qualifiedName (RENAME TO name | SET SCHEMA name | objectOptions?)
    ;

// ------------------------------------------------------------------ indexes
// CREATE [ UNIQUE ] INDEX [ CONCURRENTLY ] [ [ IF NOT EXISTS ] name ] ON [ ONLY ] table_name [ USING method ]
//   ( { column_name | ( expression ) } [ COLLATE collation ] [ opclass ] [ ASC | DESC ] [ NULLS { FIRST | LAST } ] [, ...] ) ...
createIndexStmt
    : CREATE UNIQUE? INDEX CONCURRENTLY? (ifNotExists? name)? ON ONLY? qualifiedName (USING name)?
      LPAREN indexElem (COMMA indexElem)* RPAREN tokensBeforeCreate
    ;

indexElem
    : (colId | LPAREN balancedTokens RPAREN | functionCall) balancedNoComma?
    ;

functionCall
    : qualifiedName LPAREN balancedTokens RPAREN
    ;

alterIndexStmt
    : ALTER INDEX ifExists? qualifiedName (RENAME TO name | objectOptions?)
    ;

// ------------------------------------------------------------------ views
createViewStmt
    : CREATE (OR REPLACE)? (TEMP | TEMPORARY)? RECURSIVE? VIEW qualifiedName (LPAREN nameList RPAREN)?
      (WITH LPAREN balancedTokens RPAREN)? AS query
    ;

createMatViewStmt
    : CREATE MATERIALIZED VIEW ifNotExists? qualifiedName (LPAREN nameList RPAREN)? tableTail AS query
    ;

alterViewStmt
    : ALTER MATERIALIZED? VIEW ifExists? qualifiedName (RENAME TO name | SET SCHEMA name | objectOptions?)
    ;

// ------------------------------------------------------------------ COMMENT, SET
// COMMENT ON { TABLE object_name | COLUMN relation_name.column_name | ... } IS { string_literal | NULL }
commentStmt
    : COMMENT ON TABLE qualifiedName IS commentText                      #commentOnTable
    | COMMENT ON COLUMN qualifiedName IS commentText                     #commentOnColumn
    | COMMENT ON balancedTokens                                          #commentOnOther
    ;

commentText
    : stringConst
    | NULL
    ;

// SET [ SESSION | LOCAL ] configuration_parameter { TO | = } { value | 'value' | DEFAULT } [, ...]
variableSetStmt
    : SET (SESSION | LOCAL)? identifierLike (TO | EQUAL) (DEFAULT | setValue (COMMA setValue)*)
    ;

// RESET configuration_parameter
variableResetStmt
    : RESET identifierLike
    ;

setValue
    : stringConst
    | colId
    | INTEGER
    | NUMERIC
    | TRUE
    | FALSE
    | ON
    ;

// pg_dump's SELECT pg_catalog.set_config('search_path', '', false);
setConfigCall
    : SELECT qualifiedName LPAREN stringConst COMMA stringConst COMMA (TRUE | FALSE | identifierLike) RPAREN
    ;

// ------------------------------------------------------------------ type names (chapter 8)
// type_name [ '[' [n] ']' ... ] | type_name ARRAY [ '[' n ']' ] (8.15.1); left-factored, so one
// token after the type decides (no lookahead over the whole type name)
typeName
    : simpleTypeName (arrayBounds | ARRAY (LBRACKET INTEGER? RBRACKET)?)
    ;

arrayBounds
    : (LBRACKET INTEGER? RBRACKET)*
    ;

simpleTypeName
    : DOUBLE PRECISION                                                  #doublePrecisionType
    | (CHARACTER | CHAR | NCHAR | NATIONAL (CHARACTER | CHAR)) VARYING? typeModifiers?  #characterType
    | VARCHAR typeModifiers?                                            #characterType
    | BIT VARYING? typeModifiers?                                       #bitType
    | (TIME | TIMESTAMP) typeModifiers? timeZone?                       #datetimeType
    | INTERVAL intervalFields? typeModifiers?                           #intervalType
    | qualifiedTypeName typeModifiers?                                  #genericType
    ;

typeModifiers
    : LPAREN balancedTokens RPAREN
    ;

timeZone
    : (WITH | WITHOUT) TIME ZONE
    ;

// YEAR | MONTH | DAY | HOUR | MINUTE | SECOND | YEAR TO MONTH | DAY TO HOUR | ...
intervalFields
    : intervalField (TO intervalField)?
    ;

intervalField
    : YEAR | MONTH | DAY | HOUR | MINUTE | SECOND
    ;

qualifiedTypeName
    : typeFunctionName (DOT colLabel)*
    ;

// ------------------------------------------------------------------ names (4.1.1, Appendix C)
qualifiedName
    : colId (DOT colLabel)*
    ;

anyName
    : colId (DOT colLabel)*
    ;

nameList
    : colId (COMMA colId)*
    ;

name
    : colId
    ;

// a name where the manual allows identifiers and unreserved / column-name key words
colId
    : IDENTIFIER
    | QUOTED_IDENTIFIER
    | UNICODE_IDENTIFIER
    | unreservedKeyword
    | colNameKeyword
    ;

// a type or function name: identifiers and unreserved / type-function-name key words
typeFunctionName
    : IDENTIFIER
    | QUOTED_IDENTIFIER
    | UNICODE_IDENTIFIER
    | unreservedKeyword
    ;

// after a dot any key word is a name
colLabel
    : colId
    | reservedKeyword
    ;

identifierLike
    : colId
    ;

stringConst
    : STRING
    | ESCAPE_STRING
    | UNICODE_STRING
    | DOLLAR_STRING
    | NATIONAL_STRING
    ;

unreservedKeyword
    : ACCESS | ACTION | ADD | AFTER | ALTER | ALWAYS | ATTACH | ATTRIBUTE | BEFORE | BY | CASCADE
    | CLUSTER | COMMENT | COMMENTS | COMPRESSION | CONSTRAINTS | CONTINUE | DATA | DAY | DEFAULTS
    | DEFERRED | DELETE | DETACH | DISABLE | DOMAIN | DOUBLE | DROP | ENABLE | ENUM | EXCLUDE
    | EXCLUDING | EXPRESSION | FINALIZE | FIRST | FORCE | GENERATED | GLOBAL | HOUR | IDENTITY
    | IF | IMMEDIATE | INCLUDE | INCLUDING | INDEX | INDEXES | INHERIT | INHERITS | KEY | LAST
    | LOCAL | LOGGED | MATCH | MATERIALIZED | METHOD | MINUTE | MONTH | NO | NOTHING | NULLS
    | OF | OIDS | OWNED | OWNER | PARTIAL | PARTITION | PRESERVE | RANGE | RECURSIVE
    | RENAME | REPLACE | REPLICA | RESET | RESTART | RESTRICT | ROWS | RULE | SCHEMA | SECOND
    | SEQUENCE | SESSION | SET | SIMPLE | STATISTICS | STORAGE | STORED | TABLESPACE | TEMP
    | TEMPORARY | TRIGGER | TRUNCATE | TYPE | UNLOGGED | UPDATE | VALID | VALIDATE | VALUE
    | VALUES | VARYING | VIEW | WITHOUT | YEAR | ZONE | COMMIT | OPTIONS
    ;

// column-name key words: names of columns, not of types or functions
colNameKeyword
    : BIT | CHAR | CHARACTER | EXISTS | INTERVAL | NATIONAL | NCHAR | PRECISION | TIME
    | TIMESTAMP | VARCHAR
    ;

reservedKeyword
    : ALL | AND | ARRAY | AS | ASC | AUTHORIZATION | CHECK | COLLATE | COLUMN | CONCURRENTLY
    | CONSTRAINT | CREATE | DEFAULT | DEFERRABLE | DESC | DISTINCT | FALSE | FOR | FOREIGN
    | FROM | FULL | IN | INITIALLY | IS | LIKE | NOT | NULL | ON | ONLY | OR | PRIMARY
    | REFERENCES | SELECT | TABLE | TO | TRUE | UNIQUE | USER | USING | WITH
    ;

// ------------------------------------------------------------------ kept as source text
// An expression up to the next column-constraint key word, comma or closing parenthesis at
// its level: DEFAULT and USING expressions.
exprTokens
    : (NULL | exprToken) exprToken*
    ;

exprToken
    : ~(LPAREN | RPAREN | SEMI | UNTERMINATED | COMMA | NOT | NULL | CONSTRAINT | CHECK | DEFAULT | GENERATED
       | UNIQUE | PRIMARY | REFERENCES | COLLATE | DEFERRABLE | INITIALLY | STORAGE | COMPRESSION)
    | LPAREN balancedTokens RPAREN
    ;

// tokens up to a comma at this level
balancedNoComma
    : (~(LPAREN | RPAREN | SEMI | UNTERMINATED | COMMA) | LPAREN balancedTokens RPAREN)+
    ;

// any tokens with balanced parentheses
balancedTokens
    : (~(LPAREN | RPAREN | SEMI | UNTERMINATED) | LPAREN balancedTokens RPAREN)*
    ;

// what follows an object's name, kept as text (sequence options, the other ALTER actions): the
// tokens of balancedTokens, but never starting with '.', which continues the name (the parser
// always took it so); then one token ends qualifiedName instead of a lookahead over the rest
objectOptions
    : (~(DOT | LPAREN | RPAREN | SEMI | UNTERMINATED) | LPAREN balancedTokens RPAREN) balancedTokens
    ;
