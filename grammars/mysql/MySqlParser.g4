/*
 * MySqlParser — the DDL of MySQL 8.0 and MariaDB 10.11 that changes table structure, one
 * statement at a time.
 *
 * Written for ddlcore from the MySQL 8.0 Reference Manual (chapter 15.1 Data Definition
 * Statements, 13 Data Types, 15.7.6.1 SET Syntax for Variable Assignment, 15.7.6.2 SET CHARACTER
 * SET, 15.7.6.3 SET NAMES) and the MariaDB 10.11 documentation (CREATE TABLE, ALTER TABLE, ...).
 * Rule names are the manual's syntax-block names in camelCase (create_definition ->
 * createDefinition, column_definition -> columnDefinition, data_type -> dataType, ...); the
 * comment above each rule names the section it follows.
 *
 * Rules for the visitor (ddlcore_mysql.visitor.MySqlDdlVisitor):
 *   - Alternatives a visitor must tell apart carry #labels (alterSpecification, columnAttribute,
 *     dataType, createDefinition, tableOption, defaultValue, ...).
 *   - There is no expression grammar. Defaults in parentheses, CHECK and generation
 *     expressions, functional key parts, partition clauses, view bodies and the tail of
 *     CREATE TABLE ... SELECT are `balancedTokens`: the visitor keeps their source text.
 *     (An expression grammar makes the Python ANTLR runtime fall back to full-context
 *     prediction, seconds per statement; see DESIGN.md "Performance facts".)
 *   - Entry rule: ddlStatement. The statement splitter upstream hands over one statement
 *     without its delimiter, versioned comments already opened; only statements of the kinds
 *     below reach the parser.
 *
 * Performance notes: keep decisions LL(1) where the manual allows (ANTLR compiles those to a
 * token switch instead of adaptive prediction); `identifier` matches ID first and only calls
 * `nonReservedKeyword` for keyword-named objects.
 */
parser grammar MySqlParser;

options { tokenVocab = MySqlLexer; }

// ======================================================================= entry

// One statement as the splitter hands it over (its delimiter removed; a trailing ';' is allowed).
ddlStatement
    : setStatementFor? statement SEMI? EOF
    ;

// MariaDB SET STATEMENT var=value [, var=value ...] FOR statement: the statement runs with
// those session variables for its duration (MariaDB KB "SET STATEMENT"); the values are kept
// as text.
setStatementFor
    : SET STATEMENT (~(FOR | SEMI))+ FOR
    ;

// MySQL 15.1 Data Definition Statements (those that change tables, databases or views),
// 15.8.4 USE, 15.7.6 SET (character-set variables only).
statement
    : createTable
    | alterTable
    | dropTable
    | renameTable
    | truncateTable
    | createDatabase
    | alterDatabase
    | dropDatabase
    | useStatement
    | createIndex
    | dropIndex
    | createView
    | alterView
    | dropView
    | setCharacterSet
    ;

// ======================================================================= tables

// MySQL 15.1.20 CREATE TABLE Statement; MariaDB CREATE TABLE (OR REPLACE).
//   CREATE [TEMPORARY] TABLE [IF NOT EXISTS] tbl_name (create_definition,...)
//       [table_options] [partition_options] [[IGNORE | REPLACE] [AS] query_expression]
//   CREATE [TEMPORARY] TABLE [IF NOT EXISTS] tbl_name { LIKE old_tbl_name | (LIKE old_tbl_name) }
createTable
    : CREATE (OR REPLACE)? TEMPORARY? TABLE ifNotExists? tableName
      ( createTableLike
      | createDefinitions tableOptions? partitionOptions? createTableSelect?
      | tableOptions? partitionOptions? createTableSelect
      )
    ;

// MySQL 15.1.20.3 CREATE TABLE ... LIKE Statement.
createTableLike
    : LIKE tableName
    | LPAREN LIKE tableName RPAREN
    ;

// MySQL 15.1.20: (create_definition,...)
createDefinitions
    : LPAREN createDefinition (COMMA createDefinition)* RPAREN
    ;

// MySQL 15.1.20: create_definition; MariaDB adds PERIOD FOR (system-versioned and
// application-time periods).
createDefinition
    : columnName columnDefinition                   #columnDeclaration
    | primaryKeyDefinition                          #primaryKeyDeclaration
    | uniqueKeyDefinition                           #uniqueKeyDeclaration
    | foreignKeyDefinition                          #foreignKeyDeclaration
    | checkConstraintDefinition                     #checkConstraintDeclaration
    | indexDefinition                               #indexDeclaration
    | periodDefinition                              #periodDeclaration
    ;

// MySQL 15.1.20: column_definition: data_type [column attributes ...], attributes in any order
// (both servers accept them in any order).
columnDefinition
    : dataType columnAttribute*
    ;

// MySQL 15.1.20 column_definition attributes; 15.1.20.8 CREATE TABLE and Generated Columns;
// 15.1.20.6 CHECK Constraints; MariaDB column_definition (PERSISTENT, INVISIBLE, COMPRESSED,
// WITH/WITHOUT SYSTEM VERSIONING, AS ROW START/END, engine-defined attributes).
// CHARACTER SET / COLLATE written right after a string type belong to dataType; written after
// other attributes they are columnAttributes.
columnAttribute
    : NOT? NULL                                                     #nullColumnAttribute
    | DEFAULT defaultValue                                          #defaultColumnAttribute
    | ON UPDATE currentTimestamp                                    #onUpdateColumnAttribute
    | AUTO_INCREMENT                                                #autoIncrementColumnAttribute
    | SERIAL DEFAULT VALUE                                          #serialDefaultValueColumnAttribute
    | PRIMARY? KEY                                                  #primaryKeyColumnAttribute
    | UNIQUE KEY?                                                   #uniqueKeyColumnAttribute
    | COMMENT stringLiteral                                         #commentColumnAttribute
    | characterSet charsetName                                      #charsetColumnAttribute
    | COLLATE collationName                                         #collateColumnAttribute
    | (GENERATED ALWAYS)? AS
      ( LPAREN balancedTokens RPAREN generatedColumnType=(VIRTUAL | STORED | PERSISTENT)?
      | ROW rowBoundary=(START | END)
      )                                                             #generatedColumnAttribute
    | (VISIBLE | INVISIBLE)                                         #visibilityColumnAttribute
    | checkConstraintDefinition                                     #checkColumnAttribute
    | referenceDefinition                                           #referenceColumnAttribute
    | SRID DECIMAL_LITERAL                                          #sridColumnAttribute
    | COLUMN_FORMAT (identifier | DEFAULT)                          #columnFormatColumnAttribute
    | STORAGE (identifier | DEFAULT)                                #storageColumnAttribute
    | (ENGINE_ATTRIBUTE | SECONDARY_ENGINE_ATTRIBUTE) EQ? stringLiteral   #engineAttributeColumnAttribute
    | (WITH | WITHOUT) SYSTEM VERSIONING                            #systemVersioningColumnAttribute
    | COMPRESSED (EQ identifier)?                                   #compressedColumnAttribute
    | ID EQ (stringLiteral | signedNumber | identifier)              #engineOptionColumnAttribute
    // TiDB (flavor tidb only; the visitor refuses them otherwise): AUTO_RANDOM[(shard_bits[,
    // range_bits])] (TiDB manual "AUTO_RANDOM"); PRIMARY KEY CLUSTERED | NONCLUSTERED written
    // inline (TiDB manual "Clustered Indexes")
    | AUTO_RANDOM (LPAREN DECIMAL_LITERAL (COMMA DECIMAL_LITERAL)? RPAREN)?  #autoRandomColumnAttribute
    | (CLUSTERED | NONCLUSTERED)                                    #clusteredColumnAttribute
    ;

// MySQL 13.6 Data Type Default Values (DEFAULT {literal | (expr)}, CURRENT_TIMESTAMP[(fsp)]);
// MariaDB DEFAULT (function calls without parentheses around them, NEXT VALUE FOR sequence).
defaultValue
    : NULL                                          #nullDefault
    | literal                                       #literalDefault
    | currentTimestamp                              #currentTimestampDefault
    | LPAREN balancedTokens RPAREN                  #expressionDefault
    | NEXT VALUE FOR tableName                      #nextValueDefault
    | functionCall                                  #functionCallDefault
    ;

// MySQL 13.2.5 Automatic Initialization and Updating for TIMESTAMP and DATETIME:
// CURRENT_TIMESTAMP, CURRENT_TIMESTAMP(), NOW(), LOCALTIME, LOCALTIME(), LOCALTIMESTAMP,
// LOCALTIMESTAMP(), each with an optional fsp.
currentTimestamp
    : (CURRENT_TIMESTAMP | LOCALTIME | LOCALTIMESTAMP) (LPAREN DECIMAL_LITERAL? RPAREN)?
    | NOW LPAREN DECIMAL_LITERAL? RPAREN
    ;

// A function call in a DEFAULT clause (MariaDB allows them without enclosing parentheses);
// the arguments are kept as text. Niladic functions (CURRENT_DATE, CURRENT_USER, ...) have no
// argument list.
functionCall
    : (qualifiedName | CURRENT_USER) (LPAREN balancedTokens RPAREN)?
    ;

// MySQL 15.1.20: [CONSTRAINT [symbol]] PRIMARY KEY [index_type] (key_part,...) [index_option] ...
primaryKeyDefinition
    : constraintName? PRIMARY KEY indexName? indexType? keyPartList indexOption*
    ;

// MySQL 15.1.20: [CONSTRAINT [symbol]] UNIQUE [INDEX | KEY] [index_name] [index_type]
// (key_part,...) [index_option] ...; MariaDB: [IF NOT EXISTS] after INDEX/KEY.
uniqueKeyDefinition
    : constraintName? UNIQUE (INDEX | KEY)? ifNotExists? indexName? indexType? keyPartList indexOption*
    ;

// MySQL 15.1.20: [CONSTRAINT [symbol]] FOREIGN KEY [index_name] (col_name,...)
// reference_definition; MariaDB: [IF NOT EXISTS].
foreignKeyDefinition
    : constraintName? FOREIGN KEY ifNotExists? indexName? LPAREN columnName (COMMA columnName)* RPAREN
      referenceDefinition
    ;

// MySQL 15.1.20.6 CHECK Constraints: [CONSTRAINT [symbol]] CHECK (expr) [[NOT] ENFORCED]
checkConstraintDefinition
    : constraintName? CHECK LPAREN balancedTokens RPAREN (NOT? ENFORCED)?
    ;

// MySQL 15.1.20: CONSTRAINT [symbol]
constraintName
    : CONSTRAINT identifier?
    ;

// MySQL 15.1.20: {INDEX | KEY} [index_name] [index_type] (key_part,...) [index_option] ...
//                {FULLTEXT | SPATIAL} [INDEX | KEY] [index_name] (key_part,...) [index_option] ...
// MariaDB: [IF NOT EXISTS] after INDEX/KEY.
indexDefinition
    : indexKind=(INDEX | KEY) ifNotExists? indexName? indexType? keyPartList indexOption*
    | indexKind=(FULLTEXT | SPATIAL) (INDEX | KEY)? ifNotExists? indexName? keyPartList indexOption*
    ;

// MariaDB: PERIOD FOR SYSTEM_TIME (start_col, end_col) | PERIOD FOR name (start_col, end_col)
periodDefinition
    : PERIOD FOR identifier LPAREN columnName COMMA columnName RPAREN
    ;

// MySQL 15.1.20: (key_part,...)
keyPartList
    : LPAREN keyPart (COMMA keyPart)* RPAREN
    ;

// MySQL 15.1.20: key_part: {col_name [(length)] | (expr)} [ASC | DESC]
keyPart
    : columnName fieldLength? (ASC | DESC)?
    | LPAREN balancedTokens RPAREN (ASC | DESC)?
    ;

// MySQL 15.1.20: index_type: USING {BTREE | HASH}  (RTREE in MariaDB)
indexType
    : USING identifier
    ;

// MySQL 15.1.20: index_option; MariaDB adds [NOT] IGNORED.
indexOption
    : KEY_BLOCK_SIZE EQ? DECIMAL_LITERAL                                #keyBlockSizeIndexOption
    | indexType                                                         #indexTypeIndexOption
    | WITH PARSER identifier                                            #parserIndexOption
    | COMMENT stringLiteral                                             #commentIndexOption
    | (VISIBLE | INVISIBLE)                                             #visibilityIndexOption
    | NOT? IGNORED                                                      #ignoredIndexOption
    | (ENGINE_ATTRIBUTE | SECONDARY_ENGINE_ATTRIBUTE) EQ? stringLiteral #engineAttributeIndexOption
    | (CLUSTERED | NONCLUSTERED)                                        #clusteredIndexOption
    // TiDB: a global or local index of a partitioned table (TiDB manual "Partitioned Tables",
    // "Global indexes")
    | (GLOBAL | LOCAL)                                                  #globalIndexOption
    ;

// MySQL 15.1.20: reference_definition:
//   REFERENCES tbl_name (key_part,...) [MATCH FULL | MATCH PARTIAL | MATCH SIMPLE]
//   [ON DELETE reference_option] [ON UPDATE reference_option]
referenceDefinition
    : REFERENCES tableName keyPartList? (MATCH identifier)? referenceAction*
    ;

// MySQL 15.1.20: [ON DELETE reference_option] [ON UPDATE reference_option], in either order.
referenceAction
    : ON action=(DELETE | UPDATE) referenceOption
    ;

// MySQL 15.1.20: reference_option: RESTRICT | CASCADE | SET NULL | NO ACTION | SET DEFAULT
referenceOption
    : RESTRICT
    | CASCADE
    | SET NULL
    | SET DEFAULT
    | NO ACTION
    ;

// MySQL 15.1.20: table_options: table_option [[,] table_option] ...
tableOptions
    : tableOption (COMMA? tableOption)*
    ;

// MySQL 15.1.20: table_option; MariaDB CREATE TABLE table options.
// The options ddlcore reads have their own alternative; every other documented option
// (ROW_FORMAT, KEY_BLOCK_SIZE, AVG_ROW_LENGTH, CHECKSUM, COMPRESSION, CONNECTION, ENCRYPTION,
// MAX_ROWS, STATS_*, TABLESPACE, STORAGE, PAGE_CHECKSUM, TRANSACTIONAL, SEQUENCE, engine-defined
// options, ...) is `name [=] value`.
tableOption
    : ENGINE EQ? engineName                                             #tableOptionEngine
    | force=FORCE? AUTO_INCREMENT EQ? DECIMAL_LITERAL                   #tableOptionAutoIncrement
    | DEFAULT? characterSet EQ? (charsetName | DEFAULT)                 #tableOptionCharset
    | DEFAULT? COLLATE EQ? (collationName | DEFAULT)                    #tableOptionCollate
    | COMMENT EQ? stringLiteral                                         #tableOptionComment
    | (DATA | INDEX) DIRECTORY EQ? stringLiteral                        #tableOptionDirectory
    | UNION EQ? LPAREN (tableName (COMMA tableName)*)? RPAREN           #tableOptionUnion
    | (WITH | WITHOUT) SYSTEM VERSIONING                                #tableOptionSystemVersioning
    // TiDB (flavor tidb only): [FORCE] AUTO_INCREMENT (TiDB manual "AUTO_INCREMENT"); PLACEMENT POLICY [=] name|DEFAULT (TiDB manual "Placement Rules
    // in SQL"); TTL [=] col + INTERVAL n unit (TiDB manual "Periodically Delete Data Using TTL");
    // TTL_ENABLE, TTL_JOB_INTERVAL, SHARD_ROW_ID_BITS, PRE_SPLIT_REGIONS, AUTO_ID_CACHE,
    // AUTO_RANDOM_BASE are `name = value` (tableOptionGeneric)
    | PLACEMENT POLICY EQ? (identifier | DEFAULT)                       #tableOptionPlacementPolicy
    | TTL EQ? columnName PLUS interval=ID ttlAmount=(DECIMAL_LITERAL | STRING_LITERAL) unit=identifier  #tableOptionTtl
    | name=(ID | BQUOTE_ID | KEY_BLOCK_SIZE | TABLESPACE | STORAGE | START | ENGINE_ATTRIBUTE
      | SECONDARY_ENGINE_ATTRIBUTE)
      EQ? tableOptionValue                                              #tableOptionGeneric
    ;

// MySQL 15.1.20: the value of a table_option: a name, a literal, NULL or DEFAULT.
tableOptionValue
    : identifier
    | literal
    | NULL
    | DEFAULT
    ;

// MySQL 15.1.20 partition_options: PARTITION BY ... (kept as text up to an IGNORE/REPLACE/AS/
// SELECT that starts a query_expression).
partitionOptions
    : PARTITION BY (~(LPAREN | RPAREN | SEMI | SELECT | AS | IGNORE | REPLACE) | LPAREN balancedTokens RPAREN)*
    ;

// MySQL 15.1.20.4 CREATE TABLE ... SELECT Statement: [IGNORE | REPLACE] [AS] query_expression
createTableSelect
    : (IGNORE | REPLACE)? AS? queryExpression
    ;

// MySQL 15.2.14 query_expression, shallow: the select list is read, the rest kept as text.
queryExpression
    : selectStatement
    | LPAREN queryExpression RPAREN balancedTokens
    | WITH balancedTokens
    ;

// MySQL 15.2.13 SELECT Statement, shallow: SELECT [select options] select_expr [, select_expr]
// ... [FROM ... (kept as text)]
selectStatement
    : SELECT selectSpec* selectElements ((FROM | UNION) balancedTokens)?
    ;

// MySQL 15.2.13: [ALL | DISTINCT | DISTINCTROW] [HIGH_PRIORITY] [STRAIGHT_JOIN] [SQL_SMALL_RESULT]
// [SQL_BIG_RESULT] [SQL_BUFFER_RESULT] [SQL_NO_CACHE] [SQL_CALC_FOUND_ROWS]
selectSpec
    : ALL
    | DISTINCT
    | DISTINCTROW
    | HIGH_PRIORITY
    | STRAIGHT_JOIN
    | SQL_SMALL_RESULT
    | SQL_BIG_RESULT
    | SQL_BUFFER_RESULT
    | SQL_CACHE
    | SQL_NO_CACHE
    | SQL_CALC_FOUND_ROWS
    ;

// MySQL 15.2.13: select_expr [, select_expr] ...
selectElements
    : (STAR | selectElement) (COMMA selectElement)*
    ;

// select_expr: a column (the visitor can take its definition from the source table), t.*, or
// any other expression, kept as text. An expression takes an alias only with AS; without AS a
// trailing word is part of the expression text.
selectElement
    : tableName DOT STAR                                                #selectStarElement
    | columnRef (AS? alias)?                                            #selectColumnElement
    | selectExpression (AS alias)?                                      #selectExpressionElement
    ;

// Any other select_expr, kept as text (it cannot start with '*' or a select option).
selectExpression
    : ( ~(COMMA | LPAREN | RPAREN | FROM | AS | SEMI | UNION | STAR | ALL | DISTINCT | DISTINCTROW
        | HIGH_PRIORITY | STRAIGHT_JOIN | SQL_SMALL_RESULT | SQL_BIG_RESULT | SQL_BUFFER_RESULT
        | SQL_CACHE | SQL_NO_CACHE | SQL_CALC_FOUND_ROWS)
      | LPAREN balancedTokens RPAREN
      )
      (~(COMMA | LPAREN | RPAREN | FROM | AS | SEMI | UNION) | LPAREN balancedTokens RPAREN)*
    ;

// MySQL 15.2.13: [AS] alias_name (a name or a string).
alias
    : identifier
    | STRING_LITERAL
    ;

// MySQL 15.1.9 ALTER TABLE Statement; MariaDB ALTER TABLE.
//   ALTER [ONLINE] [IGNORE] TABLE [IF EXISTS] tbl_name [WAIT n | NOWAIT]
//       [alter_option [, alter_option] ...] [partition_options]
// MariaDB/MySQL take REMOVE PARTITIONING (and the other partition options) after the
// alter_specification list without a comma: `ALTER TABLE t ADD COLUMN c int REMOVE PARTITIONING`.
alterTable
    : ALTER ONLINE? IGNORE? TABLE ifExists? tableName waitOption?
      (alterSpecification (COMMA alterSpecification)*)? (partitionOptions | removePartitioning)?
    ;

removePartitioning
    : (REMOVE | UPGRADE) PARTITIONING
    ;

// MySQL 15.1.9: alter_option (MariaDB: alter_specification).
// Partition operations and everything after them are kept as text (MySQL allows them only last).
alterSpecification
    : tableOption+                                                      #alterTableOptions
    | ADD COLUMN? ifNotExists? columnName columnDefinition columnPosition?  #alterAddColumn
    | ADD COLUMN? ifNotExists? LPAREN createDefinition (COMMA createDefinition)* RPAREN  #alterAddColumns
    | ADD indexDefinition                                               #alterAddIndex
    | ADD primaryKeyDefinition                                          #alterAddPrimaryKey
    | ADD uniqueKeyDefinition                                           #alterAddUniqueKey
    | ADD foreignKeyDefinition                                          #alterAddForeignKey
    | ADD checkConstraintDefinition                                     #alterAddCheck
    | ADD periodDefinition                                              #alterAddPeriod
    | ADD SYSTEM VERSIONING                                             #alterAddSystemVersioning
    | algorithmOption                                                   #alterAlgorithm
    | ALTER COLUMN? columnName (SET DEFAULT defaultValue | DROP DEFAULT)  #alterColumnDefault
    | ALTER COLUMN? columnName SET (VISIBLE | INVISIBLE)                #alterColumnVisibility
    | ALTER INDEX indexName (VISIBLE | INVISIBLE | NOT? IGNORED)        #alterIndexVisibility
    | ALTER (CHECK | CONSTRAINT) identifier NOT? ENFORCED               #alterCheck
    | CHANGE COLUMN? ifExists? oldColumn=columnName columnName columnDefinition columnPosition?  #alterChangeColumn
    | CONVERT TO characterSet (charsetName | DEFAULT) (COLLATE collationName)?  #alterConvertCharset
    | (DISABLE | ENABLE) KEYS                                           #alterKeys
    | (DISCARD | IMPORT) TABLESPACE                                     #alterTablespace
    | DROP COLUMN? ifExists? columnName (RESTRICT | CASCADE)?           #alterDropColumn
    | DROP (INDEX | KEY) ifExists? indexName                            #alterDropIndex
    | DROP PRIMARY KEY                                                  #alterDropPrimaryKey
    | DROP FOREIGN KEY ifExists? identifier                             #alterDropForeignKey
    | DROP (CHECK | CONSTRAINT) ifExists? identifier                    #alterDropConstraint
    | DROP PERIOD FOR identifier                                        #alterDropPeriod
    | DROP SYSTEM VERSIONING                                            #alterDropSystemVersioning
    | FORCE                                                             #alterForce
    | lockOption                                                        #alterLock
    | MODIFY COLUMN? ifExists? columnName columnDefinition columnPosition?  #alterModifyColumn
    | ORDER BY columnName (ASC | DESC)? (COMMA columnName (ASC | DESC)?)*  #alterOrderBy
    | RENAME COLUMN ifExists? oldColumn=columnName TO columnName        #alterRenameColumn
    | RENAME (INDEX | KEY) oldIndex=indexName TO indexName              #alterRenameIndex
    | RENAME (TO | AS)? tableName                                       #alterRenameTable
    | (WITH | WITHOUT) VALIDATION                                       #alterValidation
    | ( ADD | DROP | DISCARD | IMPORT | TRUNCATE | COALESCE | REORGANIZE | EXCHANGE
      | ANALYZE | CHECK | OPTIMIZE | REBUILD | REPAIR ) PARTITION partitionTokens   #alterPartition
    | CONVERT (PARTITION | TABLE) partitionTokens                       #alterPartition
    | (REMOVE | UPGRADE) PARTITIONING                                   #alterPartition
    // TiDB: REMOVE TTL (TiDB manual "Periodically Delete Data Using TTL"); SET TIFLASH REPLICA
    // n [LOCATION LABELS 'l', ...] (TiDB manual "Create TiFlash Replicas"): no table change
    | REMOVE TTL                                                        #alterRemoveTtl
    // TiDB: ALTER TABLE t CACHE | NOCACHE (TiDB manual "Cached Tables"): no table change
    | tidbWord=ID                                                       #alterTidbWord
    | SET tiflash=ID replica=ID DECIMAL_LITERAL (location=ID labels=ID stringLiteral (COMMA stringLiteral)*)?  #alterTiflashReplica
    ;

// MySQL 15.1.9: [FIRST | AFTER col_name]
columnPosition
    : FIRST
    | AFTER columnName
    ;

// MySQL 15.1.9: ALGORITHM [=] {DEFAULT | INSTANT | INPLACE | COPY}
algorithmOption
    : ALGORITHM EQ? (identifier | DEFAULT)
    ;

// MySQL 15.1.9: LOCK [=] {DEFAULT | NONE | SHARED | EXCLUSIVE}
lockOption
    : LOCK EQ? (identifier | DEFAULT)
    ;

// MariaDB WAIT and NOWAIT: [WAIT n | NOWAIT]
waitOption
    : WAIT DECIMAL_LITERAL
    | NOWAIT
    ;

// MySQL 15.1.32 DROP TABLE Statement; MariaDB DROP TABLE (WAIT/NOWAIT).
//   DROP [TEMPORARY] TABLE [IF EXISTS] tbl_name [, tbl_name] ... [RESTRICT | CASCADE]
dropTable
    : DROP TEMPORARY? (TABLE | TABLES) ifExists? tableName (COMMA tableName)* waitOption? (RESTRICT | CASCADE)?
    ;

// MySQL 15.1.36 RENAME TABLE Statement; MariaDB RENAME TABLE [IF EXISTS] ... [WAIT n | NOWAIT].
renameTable
    : RENAME (TABLE | TABLES) ifExists? renameTableClause (COMMA renameTableClause)*
    ;

// MySQL 15.1.36: tbl_name TO new_tbl_name
renameTableClause
    : oldName=tableName waitOption? TO newName=tableName
    ;

// MySQL 15.1.37 TRUNCATE TABLE Statement.
truncateTable
    : TRUNCATE TABLE? tableName waitOption?
    ;

// ======================================================================= databases

// MySQL 15.1.12 CREATE DATABASE Statement; MariaDB CREATE [OR REPLACE] DATABASE.
createDatabase
    : CREATE (OR REPLACE)? (DATABASE | SCHEMA) ifNotExists? identifier databaseOption*
    ;

// MySQL 15.1.2 ALTER DATABASE Statement (name optional: the default database);
// MariaDB ALTER DATABASE ... UPGRADE DATA DIRECTORY NAME.
alterDatabase
    : ALTER (DATABASE | SCHEMA) identifier? (databaseOption+ | UPGRADE DATA DIRECTORY NAME)
    ;

// MySQL 15.1.12 create_option / 15.1.2 alter_option; MariaDB create_specification.
databaseOption
    : DEFAULT? characterSet EQ? (charsetName | DEFAULT)                 #databaseOptionCharset
    | DEFAULT? COLLATE EQ? (collationName | DEFAULT)                    #databaseOptionCollate
    | COMMENT EQ? stringLiteral                                         #databaseOptionComment
    | READ ONLY EQ? (DEFAULT | DECIMAL_LITERAL)                         #databaseOptionReadOnly
    | DEFAULT? name=ID EQ? tableOptionValue                             #databaseOptionGeneric
    | PLACEMENT POLICY EQ? (identifier | DEFAULT)                       #databaseOptionPlacementPolicy
    ;

// MySQL 15.1.24 DROP DATABASE Statement.
dropDatabase
    : DROP (DATABASE | SCHEMA) ifExists? identifier
    ;

// MySQL 15.8.4 USE Statement.
useStatement
    : USE identifier
    ;

// ======================================================================= indexes

// MySQL 15.1.15 CREATE INDEX Statement; MariaDB CREATE [OR REPLACE] [ONLINE|OFFLINE] ... INDEX
// [IF NOT EXISTS] ... [WAIT n | NOWAIT].
createIndex
    : CREATE (OR REPLACE)? (ONLINE | OFFLINE)? indexCategory=(UNIQUE | FULLTEXT | SPATIAL)? INDEX
      ifNotExists? indexName indexType? ON tableName keyPartList waitOption?
      (indexOption | algorithmOption | lockOption)*
    ;

// MySQL 15.1.27 DROP INDEX Statement; MariaDB DROP [ONLINE|OFFLINE] INDEX [IF EXISTS].
dropIndex
    : DROP (ONLINE | OFFLINE)? INDEX ifExists? indexName ON tableName waitOption?
      (algorithmOption | lockOption)*
    ;

// ======================================================================= views

// MySQL 15.1.23 CREATE VIEW Statement; MariaDB CREATE [OR REPLACE] ... VIEW [IF NOT EXISTS].
//   The select statement (and WITH CHECK OPTION) is kept as text: viewBody.
createView
    : CREATE (OR REPLACE)? viewAlgorithm? definerClause? sqlSecurity? VIEW ifNotExists? tableName
      columnList? AS viewBody
    ;

// MySQL 15.1.11 ALTER VIEW Statement.
alterView
    : ALTER viewAlgorithm? definerClause? sqlSecurity? VIEW tableName columnList? AS viewBody
    ;

// MySQL 15.1.35 DROP VIEW Statement.
dropView
    : DROP VIEW ifExists? tableName (COMMA tableName)* (RESTRICT | CASCADE)?
    ;

// ALGORITHM = {UNDEFINED | MERGE | TEMPTABLE}
viewAlgorithm
    : ALGORITHM EQ identifier
    ;

// DEFINER = user (MySQL 8.2.4 Specifying Account Names)
definerClause
    : DEFINER EQ userName
    ;

// SQL SECURITY { DEFINER | INVOKER }
sqlSecurity
    : SQL SECURITY identifier
    ;

// MySQL 8.2.4 Specifying Account Names: 'user_name'@'host_name', CURRENT_USER[()]
userName
    : (identifier | STRING_LITERAL) (AT (identifier | STRING_LITERAL))?
    | CURRENT_USER (LPAREN RPAREN)?
    ;

// MySQL 15.1.23: AS select_statement [WITH [CASCADED | LOCAL] CHECK OPTION], kept as text.
viewBody
    : balancedTokens
    ;

// MySQL 15.1.23: [(column_list)]
columnList
    : LPAREN columnName (COMMA columnName)* RPAREN
    ;

// ======================================================================= SET (charsets only)

// MySQL 15.7.6.1 SET Syntax for Variable Assignment, 15.7.6.2 SET CHARACTER SET Statement,
// 15.7.6.3 SET NAMES Statement. Only the charset/collation variables matter to ddlcore; the
// splitter sends no other SET statement, but any `name = simple value` parses.
setCharacterSet
    : SET setOption (COMMA setOption)*
    ;

// One assignment of a SET statement (MySQL 15.7.6.1 SET Syntax for Variable Assignment).
setOption
    : NAMES (charsetName | DEFAULT) (COLLATE (collationName | DEFAULT))?    #setNames
    | characterSet (charsetName | DEFAULT)                                  #setCharacterSetOption
    | variableName (EQ | ASSIGN) variableValue                              #setVariable
    ;

// [GLOBAL | SESSION | LOCAL | PERSIST | PERSIST_ONLY] name, or a variableReference
variableName
    : variableScope? identifier
    | variableReference
    ;

// @@[scope.]name (system variable), @name (user variable)
variableReference
    : AT AT (variableScope dottedId | identifier)
    | AT (identifier | STRING_LITERAL)
    ;

// MySQL 15.7.6.1: GLOBAL | SESSION | LOCAL | PERSIST | PERSIST_ONLY
variableScope
    : GLOBAL
    | SESSION
    | LOCAL
    | PERSIST
    | PERSIST_ONLY
    ;

// MySQL 15.7.6.1: the value of a character-set variable (a name, DEFAULT, another variable, ...).
variableValue
    : charsetName
    | DEFAULT
    | NULL
    | ON
    | signedNumber
    | variableReference
    ;

// ======================================================================= data types

// MySQL 13 Data Types (13.1 Numeric Data Type Syntax, 13.2 Date and Time Data Types,
// 13.3 String Data Types, 13.4 Spatial Data Types, 13.5 The JSON Data Type, 13.8 Data Type
// Storage Requirements for synonyms); MariaDB Data Types (INET4, INET6, UUID, NUMBER and
// VARCHAR2 in sql_mode=ORACLE).
// Every alternative collects its type-name tokens in `typeName` (e.g. [DOUBLE, PRECISION],
// [NATIONAL, CHAR, VARYING]), then lengths, then sign/zerofill flags or charset options.
dataType
    : typeName+=(TINYINT | SMALLINT | MEDIUMINT | MIDDLEINT | INT | INTEGER | BIGINT
      | INT1 | INT2 | INT3 | INT4 | INT8) fieldLength? fieldOption*                  #integerType
    | typeName+=BIT fieldLength?                                                     #bitType
    | typeName+=(BOOL | BOOLEAN)                                                     #booleanType
    | typeName+=SERIAL                                                               #serialType
    | typeName+=(DECIMAL | DEC | NUMERIC | FIXED | NUMBER) precisionScale? fieldOption*  #fixedPointType
    | ( typeName+=(FLOAT | REAL | FLOAT4 | FLOAT8)
      | typeName+=DOUBLE typeName+=PRECISION?
      ) precisionScale? fieldOption*                                                 #floatType
    | typeName+=(DATE | TIME | DATETIME | TIMESTAMP | YEAR) fieldLength?             #temporalType
    | ( typeName+=(CHAR | CHARACTER) typeName+=VARYING?
      | typeName+=NATIONAL typeName+=(CHAR | CHARACTER | VARCHAR) typeName+=VARYING?
      | typeName+=NCHAR typeName+=(VARCHAR | VARYING)?
      | typeName+=(VARCHAR | VARCHARACTER | NVARCHAR | VARCHAR2)
      ) fieldLength? stringOption*                                                   #characterType
    | typeName+=(BINARY | VARBINARY | RAW) fieldLength?                              #binaryType
    | typeName+=(TINYBLOB | BLOB | MEDIUMBLOB | LONGBLOB) fieldLength?               #blobType
    | typeName+=(TINYTEXT | TEXT | MEDIUMTEXT | LONGTEXT | CLOB) fieldLength? stringOption*  #textType
    | typeName+=LONG
      ( typeName+=VARBINARY
      | (typeName+=VARCHAR | typeName+=(CHAR | CHARACTER) typeName+=VARYING)? stringOption*
      )                                                                              #longType
    | typeName+=ENUM LPAREN enumValue (COMMA enumValue)* RPAREN stringOption*  #enumType
    | typeName+=SET LPAREN enumValue (COMMA enumValue)* RPAREN stringOption*   #setType
    | typeName+=JSON                                                                 #jsonType
    | typeName+=(GEOMETRY | POINT | LINESTRING | POLYGON | MULTIPOINT | MULTILINESTRING
      | MULTIPOLYGON | GEOMETRYCOLLECTION | GEOMCOLLECTION)                          #spatialType
    | typeName+=(INET4 | INET6)                                                      #inetType
    | typeName+=UUID                                                                 #uuidType
    ;

// MySQL 13.3.5 / 13.3.6: an ENUM or SET member is a string literal; MariaDB and MySQL also take
// a hexadecimal or bit literal (its bytes in the column's charset).
enumValue
    : stringLiteral
    | HEX_LITERAL
    | BIT_LITERAL
    ;

// (M): display width, length, or fractional-seconds precision (fsp).
fieldLength
    : LPAREN length=DECIMAL_LITERAL RPAREN
    ;

// (M[,D]): precision and scale (DECIMAL, FLOAT, DOUBLE; FLOAT(p)).
// MariaDB also reads a precision written as a fraction, DECIMAL(19.5) (sql_yacc.yy field_length:
// '(' DECIMAL_NUM ')'), keeping its integer part.
precisionScale
    : LPAREN precision=(DECIMAL_LITERAL | REAL_LITERAL) (COMMA scale=DECIMAL_LITERAL)? RPAREN
    ;

// MySQL 13.1: [UNSIGNED | SIGNED] [ZEROFILL], any order.
fieldOption
    : UNSIGNED
    | SIGNED
    | ZEROFILL
    ;

// MySQL 13.3: [CHARACTER SET charset_name] [COLLATE collation_name], and the shorthands
// ASCII (CHARACTER SET latin1), UNICODE (CHARACTER SET ucs2), BINARY (the _bin collation),
// BYTE (CHAR BYTE = BINARY).
stringOption
    : characterSet charsetName
    | COLLATE collationName
    | ASCII
    | UNICODE
    | BINARY
    | BYTE
    ;

// CHARACTER SET | CHARSET | CHAR SET  (MySQL 12.3.x "[DEFAULT] CHARACTER SET")
characterSet
    : (CHARACTER | CHAR) SET
    | CHARSET
    ;

// MySQL 12.2: charset_name (a name, a string, or BINARY)
charsetName
    : identifier
    | STRING_LITERAL
    | BINARY
    ;

// MySQL 12.2: collation_name
collationName
    : identifier
    | STRING_LITERAL
    | BINARY
    ;

// MySQL 15.1.20: ENGINE [=] engine_name
engineName
    : identifier
    | STRING_LITERAL
    ;

// ======================================================================= names

// MySQL 11.2 Schema Object Names, 11.2.2 Identifier Qualifiers: db_name.tbl_name
tableName
    : identifier dottedId?
    ;

// col_name, also qualified (db_name.tbl_name.col_name) as MySQL's field_ident allows.
columnName
    : identifier dottedId*
    ;

// A column reference in a select list: [[db.]tbl.]col
columnRef
    : identifier dottedId*
    ;

// MySQL 15.1.20: index_name
indexName
    : identifier
    ;

// A dotted name (function names in DEFAULT clauses).
qualifiedName
    : identifier dottedId*
    ;

// '.name' after a qualifier (MySQL 11.2.2 Identifier Qualifiers; whitespace around the dot allowed).
dottedId
    : DOT_ID
    | DOT identifier
    ;

// [IF EXISTS]
ifExists
    : IF EXISTS
    ;

// [IF NOT EXISTS]
ifNotExists
    : IF NOT EXISTS
    ;

// MySQL 11.2 Schema Object Names: unquoted, `quoted`, "quoted" (ANSI_QUOTES), or a keyword
// that is not reserved (11.3).
identifier
    : ID
    | BQUOTE_ID
    | DQUOTE_STRING
    | nonReservedKeyword
    ;

// Every keyword token of MySqlLexer that neither MySQL 8.0 nor MariaDB 10.11 reserves
// (MySQL 11.3 Keywords and Reserved Words; MariaDB Reserved Words).
nonReservedKeyword
    : ACTION | AFTER | ALGORITHM | ALWAYS | ASCII | AUTO_INCREMENT | AUTO_RANDOM | BIT | BOOL | BOOLEAN | BYTE
    | CHARSET | CLOB | CLUSTERED | COALESCE | COLUMN_FORMAT | COMMENT | COMPRESSED | DATA | DATE | DATETIME
    | DEFINER | DIRECTORY | DISABLE | DISCARD | ENABLE | END | ENFORCED | ENGINE | ENGINE_ATTRIBUTE
    | ENUM | EXCHANGE | FIRST | FIXED | GENERATED | GEOMCOLLECTION | GEOMETRY | GEOMETRYCOLLECTION
    | GLOBAL | IGNORED | IMPORT | INET4 | INET6 | INVISIBLE | JSON | KEY_BLOCK_SIZE | LINESTRING
    | LOCAL | MODIFY | MULTILINESTRING | MULTIPOINT | MULTIPOLYGON | NAME | NAMES | NATIONAL | NCHAR
    | NEXT | NO | NONCLUSTERED | NOW | NOWAIT | NUMBER | NVARCHAR | OFFLINE | ONLINE | ONLY | PARSER | PARTITIONING
    | PERIOD | PERSIST | PERSIST_ONLY | PERSISTENT | PLACEMENT | POINT | POLICY | POLYGON | RAW | REBUILD | REMOVE
    | REORGANIZE | REPAIR | ROW | SECONDARY_ENGINE_ATTRIBUTE | SECURITY | SERIAL | SESSION | SIGNED
    | SQL_BUFFER_RESULT | SQL_CACHE | SQL_NO_CACHE | SRID | START | STATEMENT | STORAGE | STORED | SYSTEM
    | TABLES | TABLESPACE | TEMPORARY | TEXT | TIME | TIMESTAMP | TRUNCATE | TTL | UNICODE | UPGRADE
    | UUID | VALIDATION | VALUE | VARCHAR2 | VERSIONING | VIEW | VIRTUAL | VISIBLE | WAIT | WITHOUT
    | YEAR
    ;

// ======================================================================= literals

// MySQL 11.1 Literal Values.
literal
    : stringLiteral
    | signedNumber
    | HEX_LITERAL
    | BIT_LITERAL
    | TRUE
    | FALSE
    | (DATE | TIME | TIMESTAMP) STRING_LITERAL
    ;

// MySQL 11.1.1: adjacent strings are concatenated ('a' 'b' = 'ab'); N'x'; _charset'x'.
stringLiteral
    : (STRING_LITERAL | DQUOTE_STRING | NATIONAL_STRING | INTRODUCED_STRING) (STRING_LITERAL | DQUOTE_STRING)*
    ;

// MySQL 11.1.2 Numeric Literals, with an optional sign.
signedNumber
    : (MINUS | PLUS)? (DECIMAL_LITERAL | REAL_LITERAL)
    ;

// Any tokens with balanced parentheses: expressions, partition clauses, view bodies, kept as
// source text by the visitor.
balancedTokens
    : (~(LPAREN | RPAREN | SEMI) | LPAREN balancedTokens RPAREN)*
    ;

// The rest of a partition operation of ALTER TABLE, kept as text to the end of the statement
// (greedy, as balancedTokens). A rule of its own so that balancedTokens is only ever followed
// by ')' or the end of a statement: then one token decides its loop (DESIGN.md, performance).
partitionTokens
    : (~(LPAREN | RPAREN | SEMI) | LPAREN balancedTokens RPAREN)*
    ;
