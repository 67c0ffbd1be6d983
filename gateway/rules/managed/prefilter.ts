// The fast path. Most parameter values — words, numbers, e-mail addresses, ids, tokens — cannot
// match any rule that reads values, names or bodies: such a value is skipped before it is even
// canonicalised. A value is inert when
//   - every character is an ASCII letter or digit, a space, one of `_ . , @ # ! ? - [ ]`, or a letter
//     of a common non-Latin script whose NFKC form and lower case stay non-ASCII (accented Latin,
//     Greek, Cyrillic, Hebrew, Arabic, Devanagari, Thai, kana, CJK, Hangul). No quote, `<`, `=`,
//     `:`, `/`, `\`, `%`, `&`, `(`, `;`, `|`, `$`, `*`, `+` or control character; and
//   - none of its words is one some rule can match with those characters alone: SQL keywords
//     (`1 union select 2`), database objects (`information_schema`, `xp_cmdshell`), DOM objects
//     (`document.cookie`), sensitive file names (`wp-config.php`, `win.ini`), metadata host names;
//     and it holds no dotted number (`169.254.169.254`), hex number, `@@`, trailing comment marker,
//     or leading or trailing `..`, `..` before the hex of a separator (`..2f`: a mangled parent step),
//     or base64 piece of a Java serialization stream inside a word (`…SW52b2tlclRyYW5zZm9ybWVy…`).
// Words are runs of `[A-Za-z0-9_]` (RE2's `\b` sees the same words), compared in lower case and
// also without leading digits (SQL reads `1union` as `1 union`). The scan is one pass over the
// characters without allocating: each word is hashed as it is read and looked up by hash (a
// collision only sends a value down the exact path), and prefixes are compared character by
// character for the few first letters that have any.
// A value that may be base64 of text (base64-text.ts) is never inert: its decoded text is matched.
// The test suite checks the property: for every text the fast path skips, evaluating it in full
// finds nothing (test/gateway/managed-rules.test.ts).
import { RECON_COMMANDS } from '../../../schemas/managed-rules/data/fragments.ts';
import { JAVA_SERIALIZED_BASE64 } from '../../../schemas/managed-rules/data/java.ts';
import { mayBeBase64Text } from './base64-text.ts';

/** Whole words that some rule matches without punctuation. */
const TRIGGER_WORDS: ReadonlySet<string> = new Set([
  // SQL
  'union', 'select', 'order', 'group', 'having', 'insert', 'delete', 'update', 'drop', 'waitfor', 'shutdown', 'infile', 'outfile',
  'dumpfile', 'program', 'master', 'information_schema', 'sysobjects', 'syscolumns', 'sysdatabases', 'sysusers', 'sysxlogins', 'sysibm',
  'sys', 'msysobjects', 'msysaccessobjects', 'msysqueries', 'mysql', 'ctxsys', 'load_file', 'openrowset', 'opendatasource', 'lo_import',
  'lo_export', 'lo_get', 'lo_put', 'lo_from_bytea', 'all_users', 'column_name', 'schema_name', 'declare', 'syscat',
  // DOM
  'document', 'window', 'insertadjacenthtml',
  // files
  'ini', 'applicationhost', 'config', 'htpasswd', 'htaccess', 'tomcat', 'credentials', 'npmrc', 'netrc', 'pgpass', 'pypirc', 'cnf',
  'httpd', 'localsettings', 'configuration', 'id_rsa', 'id_dsa', 'id_ecdsa', 'id_ed25519',
  // hosts
  'metadata', 'instance', 'nip', 'sslip', 'xip', 'localtest', 'lvh', 'vcap', '1u', 'rbndr', 'traefik',
  // out-of-band callback services
  'burpcollaborator', 'oastify', 'oast', 'interact', 'interactsh', 'dnslog', 'ceye', 'canarytokens', 'requestrepo', 'bxss',
  // Node.js reaching its process (data/cmdi.ts)
  'child_process', 'mainmodule',
  // prototype pollution, template and deserialization gadgets
  '__proto__', 'constructor', 'prototype', '_self', 'smarty', 'freemarker', 'javax', 'springframework', 'sun', 'ro0ab',
  // Java packages and deserialization gadgets (data/java.ts)
  'java', 'jdk', 'classloader', 'apache', 'codehaus', 'corba', 'opensymphony', 'ognlcontext', 'weblogic', 'repackaged', 'invokertransformer', 'chainedtransformer',
  'constanttransformer', 'instantiatetransformer', 'instantiatefactory', 'clonetransformer', 'prototypeclonefactory',
  'prototypeserializationfactory', 'forclosure', 'whileclosure', 'annotationinvocationhandler', 'templatesimpl', 'jdbcrowsetimpl',
  'badattributevalueexpexception', 'methodclosure', 'convertedclosure', 'xmldecoder', 'xstream', 'remoteobjectinvocationhandler',
  // php://filter chains' conversion filters (data/php.ts)
  'iconv',
  // markup that sets cookies (data/session.ts)
  'equiv',
  // Windows interpreters named whole (canonicalise.ts builds their shell form), and shells given -c (data/cmdi.ts)
  'powershell', 'pwsh', 'cmd', 'sh', 'bash', 'dash', 'ksh', 'zsh', 'csh', 'tcsh', 'busybox',
  // Windows administration commands a value may be alone (fragments.ts ATTACK_COMMAND_LINE)
  'netsh', 'schtasks', 'wmic', 'vssadmin', 'bcdedit', 'icacls', 'takeown',
  // what cmd.exe's IF tests and compares with (data/cmdi.ts)
  'exist', 'defined', 'errorlevel', 'cmdextversion', 'equ', 'neq', 'lss', 'leq', 'gtr', 'geq',
  // reconnaissance commands a value may be alone
  ...RECON_COMMANDS,
]);
/** Word prefixes (database object families, hex literals) and suffixes (shell histories). */
const TRIGGER_PREFIXES = ['xp_', 'sp_', 'pg_', 'dbms_', 'utl_', 'sqlite_', 'sys_', 'all_tab', 'user_tab', 'dba_', 'table_', 'dblink', '0x', '__', 'ro0ab', 'kztaa', 'cs7qa'];
const TRIGGER_SUFFIXES = ['_history'];

const INERT_PUNCTUATION = new Uint8Array(128);
for (const ch of ' _.,@#!?-[]') INERT_PUNCTUATION[ch.charCodeAt(0)] = 1;

/** Letters of scripts whose NFKC form and lower case stay outside ASCII. */
function inertNonAscii(c: number): boolean {
  return (
    (c >= 0xc0 && c <= 0x17e && c !== 0xd7 && c !== 0xf7 && c !== 0x130 && c !== 0x131 && c !== 0x132 && c !== 0x133 && c !== 0x13f && c !== 0x140 && c !== 0x149) ||
    (c >= 0x386 && c <= 0x3ce) ||
    (c >= 0x400 && c <= 0x45f) ||
    (c >= 0x5d0 && c <= 0x5ea) ||
    (c >= 0x621 && c <= 0x64a) ||
    (c >= 0x905 && c <= 0x939) ||
    (c >= 0xe01 && c <= 0xe30) ||
    (c >= 0x3041 && c <= 0x3096) ||
    (c >= 0x30a1 && c <= 0x30fa) ||
    (c >= 0x4e00 && c <= 0x9fff) ||
    (c >= 0xac00 && c <= 0xd7a3)
  );
}

const isWordChar = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;
const isDigit = (c: number): boolean => c >= 48 && c <= 57;
/** ASCII letters folded to lower case; other word characters unchanged. */
const fold = (c: number): number => (c >= 65 && c <= 90 ? c | 0x20 : c);
/** FNV-1a, one character at a time. */
const FNV_OFFSET = 0x811c9dc5;
const step = (hash: number, c: number): number => Math.imul(hash ^ c, 0x01000193) >>> 0;

function hashOf(word: string): number {
  let hash = FNV_OFFSET;
  for (let i = 0; i < word.length; i++) hash = step(hash, word.charCodeAt(i));
  return hash;
}

const WORD_HASHES: ReadonlySet<number> = new Set([...TRIGGER_WORDS].map(hashOf));
/** Prefixes by their first character, so most words are compared with none. */
const PREFIXES_BY_FIRST = new Map<number, string[]>();
for (const prefix of TRIGGER_PREFIXES) {
  const first = prefix.charCodeAt(0);
  PREFIXES_BY_FIRST.set(first, [...(PREFIXES_BY_FIRST.get(first) ?? []), prefix]);
}

/** Whether raw[start..end) starts with `prefix`, ignoring ASCII case. */
function startsWithFolded(raw: string, start: number, end: number, prefix: string): boolean {
  if (end - start < prefix.length) return false;
  for (let k = 0; k < prefix.length; k++) if (fold(raw.charCodeAt(start + k)) !== prefix.charCodeAt(k)) return false;
  return true;
}

/** Whether the word raw[start..end) (hashed `hash`) is, or starts or ends like, a trigger. */
function isTrigger(raw: string, start: number, end: number, hash: number): boolean {
  if (WORD_HASHES.has(hash)) return true;
  const prefixes = PREFIXES_BY_FIRST.get(fold(raw.charCodeAt(start)));
  if (prefixes) for (const prefix of prefixes) if (startsWithFolded(raw, start, end, prefix)) return true;
  for (const suffix of TRIGGER_SUFFIXES) {
    if (end - start >= suffix.length && startsWithFolded(raw, end - suffix.length, end, suffix)) return true;
  }
  return false;
}

/**
 * Base64 pieces of a Java serialization stream (data/java.ts) sit anywhere inside a word, so a value
 * at least as long as the shortest is searched for them (only letters and digits reach this test).
 */
const BASE64_PIECES = JAVA_SERIALIZED_BASE64.filter((piece) => /^[a-z0-9]+$/.test(piece));
const SHORTEST_PIECE = Math.min(...BASE64_PIECES.map((piece) => piece.length));
const BASE64_PIECE = new RegExp(BASE64_PIECES.join('|'), 'i');

/**
 * Whether `raw` has an ASCII capital and a small letter: base64 of a dozen characters or more all in
 * one case does not happen, so a long word in one case (`aaaa…`) is not searched. The one known
 * exception to the property above: a one-case text holding a piece (which real base64 never is) is
 * skipped although java.serialized_base64, reading lower case, would match it.
 */
const CAPITAL = /[A-Z]/;
const SMALL = /[a-z]/;
const mixesCase = (raw: string): boolean => CAPITAL.test(raw) && SMALL.test(raw);

const DOTTED_NUMBER = /\d\.\d+\.\d/;
const DOT_DOT_HEX = /\.\.(?:2f|5c)/i;

/** True when no value/name/body rule can match `raw` (see the file comment). */
export function isInert(raw: string): boolean {
  const n = raw.length;
  let dots = 0;
  let wordStart = -1;
  let hash = FNV_OFFSET;
  for (let i = 0; i <= n; i++) {
    const c = i < n ? raw.charCodeAt(i) : 32;
    if (isWordChar(c)) {
      if (wordStart < 0) {
        wordStart = i;
        hash = FNV_OFFSET;
      }
      hash = step(hash, fold(c));
      continue;
    }
    if (wordStart >= 0) {
      if (i - wordStart >= 2 && wordIsTrigger(raw, wordStart, i, hash)) return false;
      wordStart = -1;
    }
    if (i === n) break;
    if (c < 128) {
      if (INERT_PUNCTUATION[c] === 0) return false;
      if (c === 46) dots++;
      else if (c === 64 && raw.charCodeAt(i + 1) === 64) return false; // @@
    } else if (!inertNonAscii(c)) return false;
  }
  if (dots > 0) {
    let first = 0;
    while (raw.charCodeAt(first) === 32) first++;
    if (raw.charCodeAt(first) === 46 || raw.endsWith('..') || (dots > 1 && (DOTTED_NUMBER.test(raw) || DOT_DOT_HEX.test(raw)))) return false;
  }
  let last = n - 1;
  while (last >= 0 && raw.charCodeAt(last) === 32) last--;
  const tail = raw.charCodeAt(last);
  if (tail === 35 /* # */ || (tail === 45 /* - */ && raw.charCodeAt(last - 1) === 45)) return false;
  if (n >= SHORTEST_PIECE && mixesCase(raw) && BASE64_PIECE.test(raw)) return false;
  // Carriers are read trimmed (canonicalise.ts): a trailing `+` sent unencoded arrives as a space.
  return !mayBeBase64Text(last === n - 1 && raw.charCodeAt(0) !== 32 ? raw : raw.trim());
}

/** The word as it is, or after its leading digits (`1union`), is a trigger. */
function wordIsTrigger(raw: string, start: number, end: number, hash: number): boolean {
  if (isTrigger(raw, start, end, hash)) return true;
  if (!isDigit(raw.charCodeAt(start))) return false;
  let letters = start;
  while (letters < end && isDigit(raw.charCodeAt(letters))) letters++;
  if (letters === end) return false;
  let letterHash = FNV_OFFSET;
  for (let k = letters; k < end; k++) letterHash = step(letterHash, fold(raw.charCodeAt(k)));
  return isTrigger(raw, letters, end, letterHash);
}
