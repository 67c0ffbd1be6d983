// SQL injection. Level 1 rules need the shape of an injection, not just SQL words: a quote that
// closes the application's string followed by a condition of constants, `union … select`, a stacked
// statement, a delay or error function, a system catalogue, a comment that cuts the query off after
// a quote. Prose with `select`, `union`, `or` and apostrophes ("O'Reilly or Penguin") must pass.
// Higher levels accept SQL-looking text with less context.
import type { RuleDefinition } from '../types.ts';
import { ALL_INPUT, QUOTE_BREAK, SQL_BOOL, SQL_COMPARE, SQL_GAP, SQL_LITERAL, SQL_LITERAL_OPEN, SQL_SP, WORD_END, WORD_START, alt, spelledWith } from './fragments.ts';

const T = ALL_INPUT;
/**
 * What follows SELECT in an injected query, as opposed to prose ("does the union select its
 * representatives"): a star, a number, a literal, NULL, a variable, a function call, a column
 * list, a column and FROM, a column ending the value or cut off by a comment, or ALL/DISTINCT/TOP.
 */
const SELECT_FOLLOW = String.raw`(?:\*|@@|[\d'"~\\+-]|$|null\b|(?:all|distinct|top)\b|[a-z_][\w$.]*\s*(?:\(|,|$|--|#|/\*|;|\|\||\+|::)|[a-z_][\w$.\x60]*${SQL_SP}+from\b|case\b)`;

/** A one-letter name compared with itself (x=x): RE2 has no back-references, so the letters are spelt out. */
const SELF_COMPARISON = alt([...'abcdefghijklmnopqrstuvwxyz'].map((c) => String.raw`${c}\s*=\s*${c}`));

/** A statement keyword built from quoted pieces for dynamic SQL to run ('sel' || 'ect', 'ex'+'ec'): no text is spelt so. */
const CONCATENATED_KEYWORD = alt(['select', 'union', 'insert', 'update', 'delete', 'drop', 'exec', 'execute', 'declare', 'waitfor', 'shutdown'].map((word) => spelledWith(word, String.raw`['"]\s*(?:\|\||\+)\s*['"]`)));

/** UNION [ALL|DISTINCT] SELECT, with comments or `+` between the keywords. */
const UNION_SELECT = String.raw`union(?:${SQL_GAP}|\+)+(?:(?:all|distinct|distinctrow)(?:${SQL_GAP}|\+)+)?select`;

/** T-SQL's types, which DECLARE @variable names next: "declare @Input" in a question about Angular does not. */
const TSQL_TYPE = String.raw`(?:int|bigint|smallint|tinyint|bit|n?varchar|n?char|n?text|datetime2?|date|decimal|numeric|float|real|money|uniqueidentifier|varbinary|binary|table|cursor|sysname|xml|sql_variant)\b`;
/** Column types a CREATE TABLE names: T-SQL's, and the other dialects' own. */
const SQL_COLUMN_TYPE = String.raw`(?:${TSQL_TYPE}|integer|serial|bigserial|varchar2|longtext|clob|n?blob|bytea|bool(?:ean)?|timestamp|time|double|jsonb?|uuid)`;

/** Functions of MySQL, PostgreSQL, SQL Server, Oracle and SQLite that injected SQL calls. */
const SQL_FUNCTION = alt([
  'abs', 'acos', 'ascii', 'asin', 'atan2?', 'avg', 'benchmark', 'bin', 'bit_length', 'cast', 'ceil(?:ing)?', 'char(?:_length|acter_length)?', 'charset', 'chr',
  'coalesce', 'collation', 'compress', 'concat(?:_ws)?', 'connection_id', 'conv', 'convert', 'cos', 'cot', 'count', 'crc32', 'curdate', 'current_(?:date|time|timestamp|user|setting|database)',
  'curtime', 'database', 'datalength', 'date(?:_add|_format|_sub|diff)?', 'day(?:name|of(?:month|week|year))?', 'db_name', 'decode', 'default', 'degrees', 'elt', 'encode', 'exp',
  'extractvalue', 'field', 'find_in_set', 'floor', 'format', 'found_rows', 'from_base64', 'from_unixtime', 'get_lock', 'getdate', 'greatest', 'group_concat', 'hex',
  'host_name', 'hour', 'if', 'ifnull', 'in', 'inet_aton', 'instr', 'insert', 'is_srvrolemember', 'isnull', 'last_insert_id', 'lcase', 'least', 'left', 'len', 'length',
  'ln', 'load_file', 'locate', 'log(?:10|2)?', 'lower', 'lpad', 'ltrim', 'make_set', 'max', 'md5', 'mid', 'min', 'minute', 'mod', 'month(?:name)?', 'name_const',
  'nchar', 'newid', 'now', 'nullif', 'nvl', 'object_id', 'oct', 'octet_length', 'ord', 'password', 'pg_sleep', 'pi', 'position', 'pow(?:er)?', 'quarter', 'quote',
  'radians', 'rand(?:omblob)?', 'rawtohex', 'repeat', 'replace', 'reverse', 'right', 'round', 'row_count', 'rpad', 'rtrim', 'schema', 'sec_to_time', 'second',
  'session_user', 'sha[12]?', 'sign', 'sin', 'sleep', 'soundex', 'space', 'sqlite_version', 'sqrt', 'str_to_date', 'strcmp', 'string_agg', 'stuff', 'subdate',
  'substr(?:ing(?:_index)?)?', 'sum', 'sys_context', 'sysdate', 'system_user', 'tan', 'time(?:_to_sec|diff|stamp)?', 'to_base64', 'to_char', 'trim', 'truncate',
  'ucase', 'uncompress', 'unhex', 'unix_timestamp', 'updatexml', 'upper', 'user(?:_name)?', 'utc_date', 'uuid', 'values', 'version', 'week(?:day)?', 'xmltype',
  'year(?:week)?',
]);

export const SQLI_RULES: readonly RuleDefinition[] = [
  {
    id: 'sqli.union_select',
    category: 'sqli',
    paranoia_level: 1,
    description: "UNION [ALL|DISTINCT] SELECT followed by a column list, with comments, parentheses or line comments between the keywords, or opening a value right after a closing quote ('union select/)",
    targets: T,
    pattern: String.raw`${WORD_START}\d*${UNION_SELECT}(?:${SQL_GAP}|\+)*${SELECT_FOLLOW}|^\s*['"\x60)]+\s*${UNION_SELECT}\b`,
  },
  {
    id: 'sqli.tautology',
    category: 'sqli',
    paranoia_level: 1,
    description: "A boolean operator and a comparison of constants after a quote closing a string (' or 1=1, \") or (\"a\")=(\"a, ' or ''&'), or of two quoted strings or of a one-letter column with itself anywhere (or 'x'='x, or 'a' = n'a', or 'a' in ('a'), or x=x)",
    targets: T,
    pattern:
      String.raw`${QUOTE_BREAK}${SQL_BOOL}${SQL_GAP}*${SQL_LITERAL}[\s)]*${SQL_COMPARE}\s*\(?\s*${SQL_LITERAL_OPEN}|` +
      String.raw`${QUOTE_BREAK}${SQL_BOOL}${SQL_GAP}*(?:'[^'\n]*'[\s)]*[-+*/%&^|]\s*'|"[^"\n]*"[\s)]*[-+*/%&^|]\s*")|` +
      // A one-letter column compared with itself (or x=x), the classic probe with no literal.
      String.raw`\b(?:or|and)${SQL_GAP}+\(?\s*${SELF_COMPARISON}(?:[^\w]|$)|` +
      // Also a national literal (n'x') and a list (or 'a' in ('a')).
      String.raw`\b(?:or|and)${SQL_GAP}+(?:'[^'\n]*'[\s)]*(?:=|\slike\s|\sin\s*\()\s*\(?\s*n?'|"[^"\n]*"[\s)]*(?:=|\slike\s|\sin\s*\()\s*\(?\s*n?")`,
  },
  {
    id: 'sqli.boolean_constant',
    category: 'sqli',
    paranoia_level: 1,
    description: "A quote closing a string, then OR with a constant truth and a comment or the end (' or 1--, ' or true#), or a column compared with NULL or a match-all LIKE (also LIKE CHAR(37) after any OR)",
    targets: T,
    pattern: String.raw`${QUOTE_BREAK}(?:or|\|\|)${SQL_GAP}*(?:\d+|true|not\s+false)[\s)]*(?:--|#|/\*|;|$)|${QUOTE_BREAK}${SQL_BOOL}${SQL_GAP}+[a-z_][\w.]*\s+(?:is\s+(?:not\s+)?null\b|like\s+(?:['"]%|(?:char|chr)\s*\(\s*37\s*\)))|\b(?:or|\|\|)${SQL_GAP}+[a-z_][\w.]*\s+like\s+(?:char|chr)\s*\(\s*37\s*\)`,
  },
  {
    id: 'sqli.numeric_tautology',
    category: 'sqli',
    paranoia_level: 1,
    description: 'A value or path segment made of a boolean operator and a constant comparison, after a number or alone (1 or 1=1, or 1=1, OR [id]=[id], 1 or 2 between 1 and 3#, " AND 7300=7300 AND (\'a\'=\'a", 1) and (2>1)--), or such a comparison, maybe negated, cut off by a comment after anything (hi or 1=1 --, or not 5=5 #), or a number and a truth constant cut off by a comment or making the whole value (1 or true--, 9999 or /*+hint*/ true)',
    targets: T,
    // A path segment starts like a value: REST ids are values (/api/users/1 OR 1=1).
    pattern: String.raw`(?:^|/)\s*(?:-?\d+[\s)]*)?${SQL_BOOL}${SQL_GAP}+(?:not${SQL_GAP}+)?${SQL_LITERAL}[\s)]*(?:=|<>|!=|<=|>=|<|>|\sbetween\s+${SQL_LITERAL}\s+and\s)\s*\(?\s*${SQL_LITERAL_OPEN}|^\s*(?:or|\|\|)\s+-?\d+[\s)]*(?:--|#|/\*)|` +
      String.raw`\b${SQL_BOOL}${SQL_GAP}+(?:not${SQL_GAP}+)?-?\d+\s*(?:=|<>|!=|<|>)\s*-?\d+[\s)]*(?:--|#|/\*|;)|` +
      // A number, then a truth constant cut off by a comment, or the whole value (1 or true--; 9999 or /*+hint*/ true, its comment a space by now).
      String.raw`(?:^|/)\s*-?\d+[\s)]*${SQL_BOOL}${SQL_GAP}+(?:not${SQL_GAP}+)?(?:true|false)[\s)]*(?:--|#|/\*|;)|^\s*-?\d+[\s)]*(?:or|xor|\|\|)\s+(?:not\s+)?(?:true|false)\s*$`,
  },
  {
    id: 'sqli.comment_truncation',
    category: 'sqli',
    paranoia_level: 1,
    in_prose: 'notice',
    description: "A quote closing a string followed by a comment that cuts the rest of the query off (admin'--, ')#), a comparison or an operation on a column cut off by a comment ('=0--, x'|email--), or a one-word value ending in a quote and a semicolon (admin@example.com';)",
    targets: T,
    pattern: String.raw`${QUOTE_BREAK}(?:;\s*)?(?:--[\s+-]*|#\s*|/\*[^\n]*)$|${QUOTE_BREAK};\s*(?:--|#|/\*)|^[^\s'"\x60]+['"\x60]\s*;\s*$|${QUOTE_BREAK}(?:=|<>|!=)\s*(?:\d+|'\w*'|"\w*")\s*(?:--|#)[\s+-]*$|${QUOTE_BREAK}(?:[-+|^&<>=*/%]|<>|!=)\s*[a-z_][\w.]*\s*(?:--|#)[\s+-]*$`,
  },
  {
    id: 'sqli.stacked_query',
    category: 'sqli',
    paranoia_level: 1,
    description: 'A semicolon followed by a second statement that changes data, runs code or reads the schema (; drop table, ; exec xp_…, ; begin declare @, ;select *; after a quote or a number also ; desc users and ; show tables)',
    targets: T,
    pattern:
      String.raw`;\s*(?:drop${SQL_SP}+(?:table|database|schema|view|user|procedure|function|index|trigger)\b|truncate${SQL_SP}+table\b|alter${SQL_SP}+(?:table|user|database|login)\b|create${SQL_SP}+(?:table|user|database|procedure|function|trigger|login)\b|` +
      String.raw`insert${SQL_SP}+into${SQL_SP}+[\w.\x60"\[\]]+\s*(?:\(|values\b|select\b)|delete${SQL_SP}+from${SQL_SP}+[\w.\x60"\[\]]+\s*(?:where\b|$|;|--|#)|update${SQL_SP}+[\w.\x60"\[\]]+${SQL_SP}+set${SQL_SP}+[\w.\x60"\[\]]+\s*=|` +
      String.raw`exec(?:ute)?(?:\s*\(|${SQL_SP}+(?:master\.|xp_|sp_|@|\(|'))|(?:begin${SQL_SP}+)?declare${SQL_SP}+@|shutdown\b\s*(?:with\s+nowait\b|$|;|--|#)|waitfor${SQL_SP}+(?:delay|time)\b|` +
      String.raw`select${SQL_SP}+(?:pg_sleep|sleep|benchmark|load_file|@@|current_user\b|(?:\*|count\s*\(\s*\*\s*\))${SQL_SP}*from\b|\*\s*(?:$|--|#|;)|\d+\s*(?:--|#|;|$))|set${SQL_SP}+@|replace${SQL_SP}+(?:into${SQL_SP}+)?[\w.\x60"\[\]]+\s*\([^)\n]*\)\s*values\s*\(|copy${SQL_SP}+[\w.]+${SQL_SP}+(?:from|to)\b|grant${SQL_SP}+all\b)|` +
      // Schema reads are English words too ("; describe it"): only after a quote or a number.
      String.raw`(?:['"\x60]|\d)[\s)]*;\s*(?:desc(?:ribe)?${SQL_SP}+[\w.\x60"]+\s*(?:;|--|#|$)|show${SQL_SP}+(?:tables|databases|schemas|grants|full${SQL_SP}+processlist)\b)`,
  },
  {
    id: 'sqli.time_delay',
    category: 'sqli',
    paranoia_level: 1,
    description: 'Time-based blind injection: SLEEP/PG_SLEEP after a quote or an operator (with a number, a variable or a payload list placeholder: sleep(__TIME__), sleep(@t)), BENCHMARK (its count maybe split by a comment: BENCHMARK(2999/**/999,MD5(…))), a string repeated a million times, WAITFOR DELAY, DBMS_LOCK.SLEEP, delays inside IF/CASE, a delay of a number or placeholder cut off by a comment (sleep(5)#, pg_sleep(__TIME__)--)',
    targets: T,
    pattern:
      String.raw`(?:\b(?:and|or|xor|select|then|else|when|union|r?like|regexp)${SQL_GAP}*\(*|['"][\s)]*(?:;|\|\||&&|[-+*])?\s*\(*|(?:&&|\|\|)\s*\(*)(?:[!~-]\s*)?(?:sleep|pg_sleep)\s*\(\s*(?:[\d.]+|__\w{1,20}__|@@?\w{1,20}|\[\w{1,20}\]|\{\w{1,20}\}|%\w{1,20}%?)\s*\)|\border${SQL_SP}+by\b[^;\n]*,\s*(?:sleep|pg_sleep|benchmark)\s*\(|` +
      String.raw`\bbenchmark\s*\(\s*\d{4,}\s*,|\bbenchmark\s*\(\s*\d+(?:\s+\d+)+\s*,\s*(?:md5|sha[12]?|encode|aes_encrypt|char|concat|rand)\s*\(|\bselect(?:${SQL_SP}|\()+(?:[!~-]\s*)?(?:sleep|pg_sleep|benchmark)\s*\(|\bwaitfor${SQL_SP}+(?:delay|time)${SQL_SP}+['"]|\bpg_sleep\s*\(\s*\d|` +
      String.raw`\bdbms_(?:pipe\s*\.\s*receive_message|lock\s*\.\s*sleep|session\s*\.\s*sleep)\b|\b(?:randomblob|zeroblob)\s*\(\s*\d{6,}|\b(?:repeat|replicate|space)\s*\([^\n]{0,80}?,\s*\d{6,}\s*\)|` +
      String.raw`\b(?:if|iif|elt|make_set)\s*\([^\n]*,\s*(?:[!~-]\s*)?(?:sleep|benchmark|pg_sleep)\s*\(|\b(?:pg_)?sleep\s*\(\s*(?:[\d.]+|__\w{1,20}__|@@?\w{1,20})\s*\)\s*(?:--|#|/\*|=\s*['"])|\bif\s*\(\s*\d+\s*=\s*\d+\s*\)\s*(?:select|waitfor|begin|exec)\b`,
  },
  {
    id: 'sqli.error_function',
    category: 'sqli',
    paranoia_level: 1,
    description: 'Functions used to leak data through database errors (EXTRACTVALUE, UPDATEXML, EXP(~…), GTID_SUBSET, FLOOR(RAND(0)*2), CONVERT(INT,…)), or a division by zero as a condition (or isnull(1/0))',
    targets: T,
    pattern:
      String.raw`\b(?:extractvalue|updatexml|xmltype|gtid_subset|gtid_subtract|json_keys|name_const)\s*\(|\bexp\s*\(\s*~|` +
      String.raw`\b(?:geometrycollection|multipoint|multipolygon|multilinestring|linestring|polygon)\s*\(\s*\(\s*select\b|` +
      String.raw`\bfloor\s*\(\s*rand\s*\(\s*\d*\s*\)\s*\*\s*2\s*\)|\bconvert\s*\(\s*int\s*,\s*(?:@@|db_name|user_name|char|\(\s*select|system_user|host_name)|` +
      String.raw`\b${SQL_BOOL}${SQL_GAP}+(?:isnull|ifnull|nvl|coalesce)\s*\(\s*\d+\s*/\s*0\s*\)|\bcast\s*\(\s*\(\s*select\b|\bctxsys\s*\.\s*drithsx\s*\.\s*sn\b|\butl_inaddr\s*\.\s*get_host|\bdbms_xmlgen\s*\.|\bto_number\s*\(\s*\(\s*select`,
  },
  {
    id: 'sqli.dangerous_function',
    category: 'sqli',
    paranoia_level: 1,
    description: 'Database features that read files, run commands or reach the network (xp_cmdshell, LOAD_FILE, INTO OUTFILE, COPY … PROGRAM, UTL_HTTP, OPENROWSET)',
    targets: T,
    pattern:
      String.raw`\b(?:xp_cmdshell|xp_dirtree|xp_fileexist|xp_regread|xp_regwrite|xp_servicecontrol|xp_availablemedia|xp_subdirs|xp_loginconfig|xp_makecab|xp_ntsec_enumdomains|xp_terminate_process|` +
      String.raw`sp_oacreate|sp_oamethod|sp_execute_external_script|sp_makewebtask|sp_addextendedproc|sp_addsrvrolemember|sp_addlogin|sp_password|openrowset|opendatasource|load_file|` +
      String.raw`utl_http|utl_inaddr|utl_file|utl_tcp|utl_smtp|dbms_java|dbms_scheduler|sys_eval|sys_exec|pg_read_file|pg_read_binary_file|pg_ls_dir|lo_import|lo_export|lo_get|lo_put|lo_from_bytea|dblink_connect)\b|` +
      String.raw`\binto${SQL_SP}+(?:outfile|dumpfile)\b|\bcopy\b[^\n]*\b(?:from|to)${SQL_SP}+program\b|\bload${SQL_SP}+data${SQL_SP}+(?:local${SQL_SP}+)?infile\b|\bmaster\s*\.\s*(?:\.|dbo\s*\.)\s*(?:sys|xp_|sp_)|\bbackup${SQL_SP}+(?:database|log)\b[^\n]*\bto${SQL_SP}+disk\s*=`,
  },
  {
    id: 'sqli.schema_enumeration',
    category: 'sqli',
    paranoia_level: 1,
    description: 'System catalogues that list tables, columns and users (INFORMATION_SCHEMA, sysobjects, sqlite_master, pg_shadow, mysql.user, DB2 syscat.tabauth and sysibm.tables)',
    targets: T,
    pattern: String.raw`\b(?:information_schema|sysobjects|syscolumns|sysdatabases|sysusers|sysxlogins|sqlite_master|sqlite_schema|sqlite_temp_master|pg_shadow|pg_authid|pg_user|pg_group|msysobjects|msysaccessobjects|msysqueries)\b|\bmysql\s*\.\s*(?:user|db)\b|\bsysibm\s*\.\s*(?:sys\w+|tables|columns|views|routines)\b|\bsyscat\s*\.\s*(?:schemata|tables|columns|dbauth|tabauth|colauth|indexauth|routines|views|packages)\b|\bsys\s*\.\s*(?:sql_logins|server_principals|syslogins)\b|\bv\$(?:version|instance|database)\b|\brdb\$\w+`,
  },
  {
    id: 'sqli.system_information',
    category: 'sqli',
    paranoia_level: 1,
    description: 'Server variables and functions that fingerprint the database (@@version, @@datadir, version() after a quote or compared after a number: 1 and user_name() = \'dbo\', 1 and left(version(),1)=4, SELECT current_setting(…), SELECT … FROM dual)',
    targets: T,
    pattern:
      String.raw`@@(?:version|datadir|hostname|basedir|tmpdir|servername|servicename|spid|language|identity|global\s*\.|session\s*\.|innodb\w*|secure_file_priv|plugin_dir|version_compile_\w+|port)\b|` +
      String.raw`${QUOTE_BREAK}(?:${SQL_BOOL}|[,+=]|\|\|)${SQL_GAP}*(?:version|user|current_user|session_user|system_user|database|schema|db_name|user_name|suser_sname|host_name|connection_id)\s*\(\s*\)|` +
      // After a number, compared, maybe through functions that cut it up (1 and user_name() = 'dbo', 1 and left(version(),1)=4).
      String.raw`(?:^|[\s(])-?\d+[\s)]*${SQL_BOOL}${SQL_GAP}+(?:[a-z_]\w{0,20}\s*\(\s*){0,4}(?:version|user|current_user|session_user|system_user|database|schema|db_name|user_name|suser_sname|host_name)\s*\(\s*\)[^=<>!\n]{0,30}?(?:=|<>|!=|<|>|\blike\b)|` +
      // A SELECT from Oracle's one-row DUAL, the fingerprint of an Oracle back end (select user from dual).
      String.raw`\bselect${SQL_SP}+[^\n]{1,120}?${SQL_SP}from${SQL_SP}+dual(?:\s*(?:$|[;)#,]|--|/\*)|${SQL_SP}+(?:where|union|order|group|connect)\b)|` +
      String.raw`\bselect${SQL_SP}+(?:@@[a-z_]+|(?:version|user|current_user|session_user|system_user|database|current_database|schema|current_schema|db_name|current_setting|inet_server_addr|pg_postmaster_start_time)\s*\(|(?:current_user|session_user|system_user|current_database)\s*(?:;|$|--|#|,|\bfrom\b))`,
  },
  {
    id: 'sqli.concatenation',
    category: 'sqli',
    paranoia_level: 1,
    description: 'String building that hides keywords or exfiltrates data (CONCAT(0x7e, …), CHAR(115,101,108), CHR(65)||CHR(66)), a statement keyword built from quoted pieces (execute immediate \'sel\' || \'ect us\' || \'er\'), or a quote closed onto a concatenated function call or string, or a value opening with one (\'||(elt(…)), ||(elt(…)), 1\'||\'asd\'||\')',
    targets: T,
    pattern:
      String.raw`\b(?:concat(?:_ws)?|group_concat|make_set|export_set)\s*\([^\n]*(?:0x[0-9a-f]{2,}|@@|char\s*\(|version\s*\(|user\s*\(|database\s*\(|schema\s*\(|table_name|column_name|schema_name|\(\s*select\b)|` +
      // A quote closed onto a concatenated function call or a string the query's own quote closes again ('||(elt(…)), 1'||'asd'||').
      String.raw`(?:${QUOTE_BREAK}|^\s*)\|\|\s*\(*\s*${SQL_FUNCTION}\s*\(|'\s*(?:\|\||\+)\s*'[^'\n]*'\s*(?:\|\||\+)\s*'\s*$|"\s*(?:\|\||\+)\s*"[^"\n]*"\s*(?:\|\||\+)\s*"\s*$|` +
      String.raw`['"]\s*${CONCATENATED_KEYWORD}(?:[^a-z]|$)|\bchar\s*\(\s*\d+(?:\s*,\s*\d+){3,}\s*\)|\b(?:chr|char|nchar)\s*\(\s*(?:\d+|0x[0-9a-f]+)\s*\)\s*(?:\|\||\+|&)\s*(?:chr|char|nchar)\s*\(`,
  },
  {
    id: 'sqli.subquery',
    category: 'sqli',
    paranoia_level: 1,
    description: "A sub-select joined to the query by an operator after a quote, a number, a parenthesis or a bracketed name, or assigned to a MySQL user variable, possibly inside function calls (' and (select …), 1=(select …), [id]=(select …), ' and ascii(substring((select …), @a:=(select …), @.:=right((select …)",
    targets: T,
    pattern: String.raw`(?:(?:['")\]]|\d)[\s)]*(?:${SQL_BOOL}|[-+*/=<>,]|in\b)|\b(?:r?like|regexp)\b|@[\w.$]*\s*:=)(?:${SQL_SP}|[a-z_]+\s*\()*\(${SQL_GAP}*select${SQL_GAP}+${SELECT_FOLLOW}|\bcase${SQL_SP}+when${SQL_GAP}*\d+\s*=\s*\d+[\s)]*then\b`,
  },
  {
    id: 'sqli.conditional_function',
    category: 'sqli',
    paranoia_level: 1,
    description: "A conditional function or CASE given a comparison of constants, as boolean- and error-based injection asks the database a yes/no question (IF(1=1,…), IIF(5=5,5,1/0), ELT(3=3,1), MAKE_SET(7=7,2), CASE 5 WHEN 5 THEN); a spreadsheet's IF(A1=1,…) compares a cell",
    targets: T,
    pattern: String.raw`\b(?:if|iif|elt|make_set)\s*\(\s*\(?\s*-?\d+\s*(?:=|<>|!=|<=|>=|<|>)\s*-?\d+\s*\)?\s*,|\bcase${SQL_SP}+-?\d+${SQL_SP}+when${SQL_SP}+-?\d+${SQL_SP}+then\b`,
  },
  {
    id: 'sqli.clause_probe',
    category: 'sqli',
    paranoia_level: 1,
    description: "Column-count and grouping probes after a quote, a number or alone (' order by 5--, 1 group by 1,2,3#, ' having 1=1, ' group by a having, group by userid having 1=1, where 1=1)",
    targets: T,
    pattern:
      String.raw`['")][\s)]*(?:order|group)${SQL_SP}+by${SQL_SP}+\d+|\b\d+[\s)]*(?:order|group)${SQL_SP}+by${SQL_SP}+\d+[\s,\d]*(?:--|#|/\*|;)|` +
      String.raw`['")][\s)]*group${SQL_SP}+by${SQL_SP}+[\w.,\s\x60]+having\b|^\s*(?:order|group)${SQL_SP}+by${SQL_SP}+\d+[\s,\d]*(?:--|#|/\*|;)|(?:['")][\s)]*|^\s*|\d[\s)]*|\bgroup${SQL_SP}+by${SQL_SP}+[\w.,\s\x60]{1,80}?)having${SQL_SP}+\d+\s*=\s*\d+|\bwhere${SQL_SP}+(?:\d+\s*=\s*\d+|'[^'\n]*'\s*=\s*')|['")][\s)]*procedure${SQL_SP}+analyse\b|['")][\s)]*limit${SQL_SP}+\d+\s*,\s*\d+\s*(?:--|#|/\*|;)`,
  },
  // --- level 2 -------------------------------------------------------------------------------------
  {
    id: 'sqli.quoted_boolean',
    category: 'sqli',
    paranoia_level: 1,
    description: "A quote closing a string, then a boolean operator and a constant or an empty string (' or true, ')) or (('x'))=(('x, \" or \"\" \", ' or '' ', ' or '1 ending the value), or the operator glued between quotes (a'or'a, \\'or'1)",
    targets: T,
    pattern: String.raw`['"]\s*\)*\s*(?:or|and|xor|\|\||&&)\s*\(*\s*(?:true|false|not\s|''|""|\(+\s*['"][^'"\n]*['"]\s*\)+\s*=)|['"]\s*(?:or|and)\s+['"]\d+['"]?\s*$|` +
      // The operator glued between quotes with no space at all (a'or'a, \'or'1): no word of prose is spelt so.
      String.raw`[\w\\]'(?:or|and|xor)'\w|[\w\\]"(?:or|and|xor)"\w`,
  },
  {
    id: 'sqli.clause_value',
    category: 'sqli',
    paranoia_level: 1,
    description: "A value that is only a SQL probe: ORDER BY n, GROUP BY n, OR x=x with a comment, OR TRUE, '-' (string arithmetic), 'or'1=1, LIKE '%'",
    targets: ['value', 'header'],
    pattern: String.raw`^\s*['")]*\s*(?:order|group)\s+by\s+\d+\s*(?:--|#|;|$)|^\s*\)*\s*(?:or|and)\s+[a-z0-9_]+\s*=\s*[a-z0-9_]+\s*(?:#|--|;)|^\s*\)*\s*(?:or|and)\s+(?:true|false)\b|^\s*['"]\s*[-+*/^&|%]\s*['"]\s*$|['"]\s*(?:or|and|\|\|)\s*['"]?\s*\d+\s*=\s*\d+|\blike\s+['"]%+['"]`,
  },
  {
    id: 'sqli.admin_statement',
    category: 'sqli',
    paranoia_level: 1,
    description: "Statements that change who may do what or copy the database out (create user … identified by, grant … to, backup database … to disk), and a quote closing into a call of a package function (' || app.adduser(…) || ')",
    targets: T,
    pattern: String.raw`\bcreate\s+(?:user|login|role)\s+[\w"'\x60@.-]+\s+(?:identified\s+by|with\s+password)\b|\bgrant\s+(?:connect|resource|dba|all(?:\s+privileges)?|sysadmin|select|execute)\b[^;\n]{0,80}\bto\s+[\w"'\x60@.-]+|\bbackup\s+(?:database|log)\s+[\w\[\]."]+\s+to\s+(?:disk|url)\b|['"]\s*\|\|\s*[a-z_][\w$]*(?:\.[a-z_][\w$]*)+\s*\(`,
  },
  {
    id: 'sqli.commented_probe',
    category: 'sqli',
    paranoia_level: 1,
    description: "Probe shapes an injection tool sends: a quote, OR and a column compared with a column before a comment (' or a=a--), a delay placed in ORDER BY or concatenated into the value (order by sleep(5), + sleep(10) + ')",
    targets: T,
    pattern: String.raw`['"]\s*\)*\s*(?:or|and)\s+[a-z_]\w*\s*=\s*[a-z_]\w*\s*(?:--|#|/\*|;)|(?:order\s+by|[+|]\s*)\s*(?:sleep|pg_sleep|benchmark)\s*\(\s*\d`,
  },
  {
    id: 'sqli.dialect_statement',
    category: 'sqli',
    paranoia_level: 1,
    description: "A value that starts a statement only one database's SQL writes (DECLARE @x INT, EXEC(@sql), EXECUTE IMMEDIATE '…', PROCEDURE ANALYSE(, SELECT pg_sleep, CREATE FUNCTION f(…) RETURNS, CREATE TABLE t (c TEXT), MySQL's empty exponent glued to a call (1.e(ascii(…))), which hides a keyword from word-based filters, or a hex-spelt statement run by EXEC (0x7761…74 exec(@s))",
    targets: T,
    pattern:
      String.raw`^\s*['")]*\s*(?:declare${SQL_SP}+@\w+\s*(?:;|=|$|(?:as\s+)?${TSQL_TYPE})|exec(?:ute)?\s*\(\s*@|execute${SQL_SP}+immediate\s*['"]|procedure${SQL_SP}+analyse\s*\(|select${SQL_SP}+pg_sleep\b|create${SQL_SP}+(?:or\s+replace\s+)?function\s+[\w.\x60"]+\s*\((?:[^()\n]|\([^()\n]*\))*\)\s*returns\b|create${SQL_SP}+(?:temp(?:orary)?\s+)?table\s+[\w.\x60"\[\]]+\s*\(\s*[\w\x60"\[\]]+\s+${SQL_COLUMN_TYPE}\b)|` +
      String.raw`\b\d+\.e\(\s*(?:ascii|ord|substr(?:ing)?|mid|char|concat|select|user|version|database|schema|length|hex|if|\d)\b|` +
      // A statement spelt as a hex literal and run by EXEC (…0x77616974666f72… exec(@s)): SQL Server's way past keyword filters.
      String.raw`\b0x[0-9a-f]{16,}[\s;'")]*exec(?:ute)?\s*\(\s*@\w+\s*\)`,
  },
  {
    id: 'sqli.function_fragment',
    category: 'sqli',
    paranoia_level: 1,
    description: 'A value or name that is only a SQL function opening its call, maybe after SELECT (benchmark(, CONCAT (, md5(, length&&(, SELECT CHAR( ): a fuzzer testing which function names get through, never what a form or a search box sends',
    targets: ['value', 'name'],
    // Junk between name and parenthesis is glued to the name: "time :(" is a sad face.
    pattern: String.raw`^\s*(?:select\s+)?${SQL_FUNCTION}(?:\s*|[^\w\s]{1,8})\(\s*$`,
  },
  {
    id: 'sqli.condition_fragment',
    category: 'sqli',
    paranoia_level: 1,
    description: "A value that starts with a boolean operator and a comparison the query is to complete (AND 4372=(, OR name = \", and code != ', && uid!=(, xor 2 <): a fragment appended to a WHERE clause; searches do not open with AND or OR",
    targets: ['value'],
    pattern: String.raw`^\s*[)'"\x60]*\s*(?:(?:and|or|xor)\b|&&|\|\|)\s*\(?\s*(?:[a-z_][\w.]*|\d+|'[^'\n]*'|"[^"\n]*")\s*(?:={1,3}|!={1,2}|<>|<=>|<=?|>=?)\s*(?:['"(]|-?\d+\)?\s*$|$)`,
  },
  {
    id: 'sqli.statement_fragment',
    category: 'sqli',
    paranoia_level: 1,
    description: "A value that starts with a semicolon, maybe after a closing quote, and a SQL statement's first word (; insert into, ';drop, \";SELECT, ; SET @x): a second statement stacked on the application's",
    targets: ['value'],
    pattern: String.raw`^\s*[)'"\x60]*\s*;\s*(?:select|insert|update|delete|drop|alter|create|truncate|exec(?:ute)?|declare|shutdown|waitfor|grant|revoke|load\s+data|set\s+@)\b`,
  },
  {
    id: 'sqli.versioned_comment',
    category: 'sqli',
    paranoia_level: 1,
    description: "MySQL's executable comment, which MySQL runs and other readers skip, holding SQL (/*!50000select*/, /*!1111'*/, /*!and*/): a keyword hidden from filters that drop comments; a script's licence banner (/*! jQuery v3 */) passes",
    targets: T,
    // Canonicalisation keeps such a comment's content as SQL (canonicalise.ts step 7): the comment itself is in the raw text.
    form: 'raw',
    pattern: String.raw`/\*!\s*(?:\d{4,6}\s*)?(?:select|union|and|or|xor|not|from|where|having|if|case|sleep|benchmark|concat|char|insert|update|delete|drop|exec|['"\x60()=]|\d+\s*(?:=|\*/))`,
  },
  {
    id: 'sqli.xpath_injection',
    category: 'sqli',
    paranoia_level: 1,
    description: "XPath injection: a quote and a boolean operator with XPath node functions (' and substring(password/text(),1,1)='a, ' or count(/child::node())=…)",
    targets: T,
    pattern: String.raw`['"]\s*(?:or|and)\s+(?:substring|string-length|count|name|local-name|contains|starts-with)\s*\([^)\n]*(?:/text\(\)|/\*|child::|node\(\)|/[a-z]+)|\bcount\s*\(\s*/child::`,
  },
  {
    id: 'sqli.operator_comment',
    category: 'sqli',
    paranoia_level: 1,
    in_prose: 'notice',
    description: "A quote closing a string, a SQL operator word, and a comment cutting the query off at the end of the value (' or email notnull--, x' collate nocase--, ' and email ilike email--)",
    targets: T,
    pattern: String.raw`${QUOTE_BREAK}(?:or|and|xor|not|notnull|isnull|collate|like|ilike|rlike|glob|regexp|escape|between|is)\s[^\n]{0,100}(?:--|#)\s*$`,
  },
  {
    id: 'sqli.blind_condition',
    category: 'sqli',
    paranoia_level: 1,
    description: "A quote closing a string, a boolean operator and a condition the query completes: a function's result compared with a literal (' and mid(version(),1,1)='5), a column compared with a string left open (' and a='a), or a boolean function over a credential column (' and starts_with(password,'a') and 'true)",
    targets: T,
    pattern:
      String.raw`${QUOTE_BREAK}(?:and|or|&&|\|\|)\s+[a-z_][\w.]*\s*\([^\n]{0,80}\)\s*(?:=|<>|!=|<|>|\slike\s)\s*\(?\s*(?:'[^'\n]*'?|"[^"\n]*"?|-?\d)|${QUOTE_BREAK}(?:and|or)\s+[a-z_]\w{0,30}\s*=\s*'[^'\n]*$|` +
      // A boolean function over a credential column is the condition itself (' and starts_with(password,'a') and 'x).
      String.raw`${QUOTE_BREAK}(?:and|or|&&|\|\|)\s+[a-z_][\w.]*\s*\(\s*(?:password|passwd|pwd|user_pass|password_hash|passhash|secret)\b`,
  },
  {
    id: 'sqli.cast_value',
    category: 'sqli',
    paranoia_level: 1,
    description: 'A value that is a column or a call cast to a PostgreSQL type (password::int, version()::text), or a credential or the session user cast to a number inside an expression (1+current_user::int, (json_build_object(1,password)::jsonb)::int), which makes the database print the value in its conversion error; also in headers an application logs to its database (User-Agent)',
    targets: ['value', 'user_agent', 'header'],
    pattern:
      String.raw`^\s*[a-z_][\w.]*\s*(?:\([^)\n]{0,60}\)\s*)?::\s*(?:int[248]?|integer|bigint|smallint|text|varchar|numeric|real|float[48]?|double\s+precision|bool(?:ean)?|bytea|regclass|oid|jsonb?)\s*$|` +
      String.raw`\b(?:(?:current_user|session_user|password|passwd|usename|rolpassword)\b|(?:current_database|version)\s*\(\s*\))[^;\n]{0,40}?::\s*(?:int[248]?|integer|bigint|smallint|numeric)\b`,
  },
  {
    id: 'sqli.json_operator',
    category: 'sqli',
    paranoia_level: 1,
    in_prose: 'notice',
    description: "A condition built with JSON operators, which WAFs without JSON grammar let through (or '{\"b\":2}'::jsonb <@ '{…}', or json_extract('{…}','$.a')='x', '{\"a\":[1]}'::jsonb @? '$.a[*]', '[1]'::jsonb || '2')",
    targets: T,
    pattern: String.raw`\b(?:or|and)\s+(?:'[\[{][^'\n]*'\s*(?:::\s*jsonb?\s*)?(?:<@|@>|\?[|&]?|->>?|#>>?|@[?@])|json_(?:extract|contains|unquote|value|query|exists)\s*\()|'[\[{][^'\n]*'\s*::\s*jsonb?\s*(?:<@|@>|\?[|&]?|->>?|#>>?|@[?@]|-\s*\d|(?:#-|\|\||[<>]=?|!?=|<>)\s*')`,
  },
  {
    id: 'sqli.quote_keyword',
    category: 'sqli',
    paranoia_level: 2,
    signal: { from: 1, severity: 'warning' },
    description: "A quote closing a string followed by a SQL clause keyword, a concatenation operator, or a boolean operator and an operand (' union, ' having, ' ||, ' or 1, ' and ')",
    targets: T,
    pattern: String.raw`${QUOTE_BREAK}(?:(?:union|having|order\s+by|group\s+by|limit|procedure|into|select|waitfor|exec|like|rlike|regexp)${WORD_END}|\|\||&&|(?:or|and|xor)\s*(?:[\d'"(@]|(?:not|true|false|null)${WORD_END}))`,
  },
  {
    id: 'sqli.identifier_comparison',
    category: 'sqli',
    paranoia_level: 2,
    signal: { from: 1, severity: 'warning' },
    description: "A quote closing a string, a boolean operator and a comparison of column names (' or a=a, ' and id>0)",
    targets: T,
    pattern: String.raw`${QUOTE_BREAK}${SQL_BOOL}${SQL_GAP}+[a-z_][\w.]*\s*(?:=|<>|!=|<|>|\slike\s)\s*[a-z_'"\d(]`,
  },
  {
    id: 'sqli.numeric_condition',
    category: 'sqli',
    paranoia_level: 2,
    description: 'A boolean operator with a constant comparison anywhere (and 1=2, or 3>2)',
    targets: T,
    pattern: String.raw`\b${alt(['or', 'and', 'xor'])}${SQL_GAP}+-?\d+\s*(?:=|<>|!=|<|>)\s*-?\d+`,
  },
  {
    id: 'sqli.sql_statement',
    category: 'sqli',
    paranoia_level: 2,
    signal: { from: 1, severity: 'warning' },
    description: 'A SQL statement with SQL-only syntax (SELECT * / a column list / COUNT( … FROM, INSERT INTO … VALUES, UPDATE … SET x=)',
    targets: T,
    pattern:
      String.raw`\bselect${SQL_SP}+(?:\*|[\w.\x60"]+\s*,\s*[\w.\x60"]+|count\s*\(|distinct\b|top\s+\d)[^\n]*\bfrom${SQL_SP}+[\w.\x60"\[\]]+|` +
      String.raw`\binsert${SQL_SP}+into${SQL_SP}+[\w.\x60"\[\]]+\s*(?:\([^)]*\)\s*)?values\s*\(|\bupdate${SQL_SP}+[\w.\x60"\[\]]+${SQL_SP}+set${SQL_SP}+[\w.\x60"\[\]]+\s*=|` +
      String.raw`\bdelete${SQL_SP}+from${SQL_SP}+[\w.\x60"\[\]]+${SQL_SP}+where\b|\bdrop${SQL_SP}+(?:table|database)${SQL_SP}+(?:if\s+exists\s+)?[\w.\x60"\[\]]+`,
  },
  {
    id: 'sqli.catalogue_names',
    category: 'sqli',
    paranoia_level: 2,
    description: 'Oracle and generic dictionary names, any @@variable (all_tables, user_tab_columns, dba_users, table_name, @@foo)',
    targets: T,
    pattern: String.raw`\b(?:all_tables|all_tab_columns|all_users|user_tables|user_tab_columns|dba_users|dba_tables|table_schema|table_name|column_name|schema_name)\b|@@[a-z_]{3,}`,
  },
  {
    id: 'sqli.delay_call',
    category: 'sqli',
    paranoia_level: 2,
    signal: { from: 1, severity: 'warning' },
    description: 'A sleep-like call anywhere (sleep(5) ending a value, benchmark with any number of iterations)',
    targets: T,
    pattern: String.raw`(?:^|[^\w.])sleep\s*\(\s*\d+\s*\)\s*$|\bbenchmark\s*\(\s*\d+\s*,`,
  },
  // --- level 3 -------------------------------------------------------------------------------------
  {
    id: 'sqli.keyword_sequence',
    category: 'sqli',
    paranoia_level: 3,
    description: 'SQL verbs followed by the keyword they need (select … from, insert … into, union … select in any form, delete … from)',
    targets: T,
    pattern: String.raw`\b(?:select\b[^\n]*\bfrom|insert\b[^\n]*\binto|delete\b[^\n]*\bfrom|update\b[^\n]*\bset|union\b[^\n]*\bselect|drop\b[^\n]*\b(?:table|database))\b`,
  },
  {
    id: 'sqli.quote_concatenation',
    category: 'sqli',
    paranoia_level: 3,
    description: "String concatenation across a quote (' || ', '+', \"+\") and a quote followed by a comment",
    targets: T,
    pattern: String.raw`['"]\s*(?:\|\||\+|&)\s*['"(]|['"][\s)]*(?:--|#|/\*)`,
  },
  {
    id: 'sqli.hex_literal',
    category: 'sqli',
    paranoia_level: 3,
    description: 'Long hexadecimal literals that spell strings (0x61646d696e)',
    targets: T,
    pattern: String.raw`\b0x[0-9a-f]{8,}\b`,
  },
  // --- level 4 -------------------------------------------------------------------------------------
  {
    id: 'sqli.quote_operator',
    category: 'sqli',
    paranoia_level: 4,
    description: 'A quote followed by any operator, parenthesis or semicolon; a trailing SQL comment marker',
    targets: T,
    pattern: String.raw`['"\x60]\s*(?:[-+|&=<>;)]|or\b|and\b)|(?:--|#)\s*$`,
  },
];
