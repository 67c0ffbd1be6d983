// Turns an uploaded CSV of IP access rules into rules to insert, or into a list of every problem
// (line, column, reason) so the whole file can be refused at once. Header: type,value,action,note
// and optionally expires_at, in any order.
//
// 100 000 rows have to be read and checked in a small fraction of a second, so the common case
// avoids per-row allocations beyond the rule itself: a file without any quote character is split
// directly (csv-parse reads the rest, see readCsvRecords), and a row is checked against the JSON
// schema by direct comparisons, with ajv consulted only for rows that might fail it (so the
// messages are ajv's, exactly as on the JSON route).
import { parse } from 'csv-parse/sync';
import { IP_RULE_ACTIONS, IP_RULE_TYPES, IpAccessRuleSpec } from '../../../schemas/index.ts';
import { compileStrict } from '../../../schemas/validation.ts';
import { checkIpRule } from '../../../schemas/checks/ip-rule.ts';
import { ruleKey, type NewIpRule } from './store.ts';
import type { IpRuleType } from '../../../schemas/checks/ip-values.ts';
import { errorMessage } from '../../../schemas/json-value.ts';

export const MAX_IMPORT_ROWS = 100_000;
export const MAX_IMPORT_BYTES = 10 * 1024 * 1024;

const REQUIRED_COLUMNS = ['type', 'value', 'action', 'note'] as const;
const OPTIONAL_COLUMNS = ['expires_at'] as const;
type Column = (typeof REQUIRED_COLUMNS)[number] | (typeof OPTIONAL_COLUMNS)[number];

export interface RowProblem {
  line: number;
  column: string | null;
  reason: string;
}

export interface ParsedRow {
  /** Index of the record in the file (0 is the header). */
  index: number;
  rule: NewIpRule;
}

export type ParseResult =
  | { ok: true; rows: ParsedRow[]; lineOf: (index: number) => number }
  | { ok: false; problems: RowProblem[] }
  | { ok: false; tooManyRows: true };

// The same schema as the JSON route (without its $id, which the JSON route's validator has registered).
const { $id: _routeSchemaId, ...rowSchema } = IpAccessRuleSpec;
const validateRow = compileStrict(rowSchema);

// What the schema allows, for the direct check (see passesSchema).
const RULE_TYPES: ReadonlySet<string> = new Set(IP_RULE_TYPES);
const RULE_ACTIONS: ReadonlySet<string> = new Set(IP_RULE_ACTIONS);
const { value: valueSchema, note: noteSchema } = IpAccessRuleSpec.properties;

/**
 * True when the row certainly satisfies the schema. String length in UTF-16 units is never below
 * the code-point length ajv measures, so a value within the limits here is within ajv's. Anything
 * else (including every row with an expiry, whose date-time format ajv checks) goes to ajv.
 */
function passesSchema(type: string, value: string, action: string, note: string, expiresAt: string): boolean {
  return (
    expiresAt === '' &&
    RULE_TYPES.has(type) &&
    RULE_ACTIONS.has(action) &&
    value.length >= valueSchema.minLength &&
    value.length <= valueSchema.maxLength &&
    note.length <= noteSchema.maxLength
  );
}

function columnOf(instancePath: string, params: Record<string, unknown>): string | null {
  const field = instancePath.replace(/^\//, '') || (typeof params.missingProperty === 'string' ? params.missingProperty : '');
  return field || null;
}

export type CsvRecords = { records: string[][]; lineOf: (index: number) => number } | { problem: RowProblem };

const CSV_OPTIONS = { bom: true, skip_empty_lines: true, relax_column_count: true } as const;

/**
 * What csv-parse (with CSV_OPTIONS) makes of text that has no quote character and one kind of line
 * ending, read with a plain split: without quotes there is no escaping, so a record is a line and a
 * field is what lies between commas. csv-parse takes the first line ending it meets as the only
 * record delimiter; text that mixes endings (or has a bare CR) is left to it, as is anything quoted.
 * Null when the text is not of that kind.
 */
function splitPlainCsv(text: string): { records: string[][]; lines: number[] } | null {
  if (text.includes('"')) return null;
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let delimiter = '\n';
  if (body.includes('\r')) {
    // Only CRLF throughout: every CR is followed by LF and every LF preceded by CR.
    for (let at = body.indexOf('\r'); at !== -1; at = body.indexOf('\r', at + 1)) if (body.charCodeAt(at + 1) !== 10) return null;
    for (let at = body.indexOf('\n'); at !== -1; at = body.indexOf('\n', at + 1)) if (body.charCodeAt(at - 1) !== 13) return null;
    delimiter = '\r\n';
  }
  const records: string[][] = [];
  const lines: number[] = [];
  let line = 1;
  for (let start = 0; start < body.length; line++) {
    let end = body.indexOf(delimiter, start);
    if (end === -1) end = body.length;
    if (end > start) {
      records.push(body.slice(start, end).split(','));
      lines.push(line);
    }
    start = end + delimiter.length;
  }
  return { records, lines };
}

/** Records, and a way to find the line a record starts on (0 is the first record, the header). */
export function readCsvRecords(text: string): CsvRecords {
  const plain = splitPlainCsv(text);
  if (plain) return { records: plain.records, lineOf: (index) => plain.lines[index] ?? index + 1 };
  try {
    const records = parse(text, CSV_OPTIONS) as string[][];
    // Line numbers cost csv-parse a copy of its bookkeeping per record, so they are computed (by a
    // second pass) only when a problem needs one.
    let lines: number[] | undefined;
    const lineOf = (index: number) => {
      lines ??= (parse(text, { ...CSV_OPTIONS, info: true }) as { info: { lines: number } }[]).map((r) => r.info.lines);
      return lines[index] ?? index + 1;
    };
    return { records, lineOf };
  } catch (err) {
    const line = typeof (err as { lines?: unknown }).lines === 'number' ? (err as { lines: number }).lines : 1;
    return { problem: { line, column: null, reason: `CSV syntax: ${errorMessage(err)}` } };
  }
}

// Cells are trimmed; trim() returns the same string when there is nothing to trim, but is a call per
// cell, so it is only made when an end is white space (or could be: any code unit at or below a space,
// or a non-ASCII one).
const trimmed = (cell: string | undefined): string => {
  if (cell === undefined || cell === '') return '';
  const first = cell.charCodeAt(0);
  const last = cell.charCodeAt(cell.length - 1);
  return first <= 32 || last <= 32 || first > 126 || last > 126 ? cell.trim() : cell;
};

export function parseIpRulesCsv(text: string, now = Date.now()): ParseResult {
  const read = readCsvRecords(text);
  if ('problem' in read) return { ok: false, problems: [read.problem] };
  const { records, lineOf } = read;
  const header = records[0];
  if (!header) return { ok: false, problems: [{ line: 1, column: null, reason: 'the file is empty; expected a header row type,value,action,note' }] };
  if (records.length - 1 > MAX_IMPORT_ROWS) return { ok: false, tooManyRows: true };

  const names = header.map((c) => c.trim().toLowerCase());
  const headerProblems: Omit<RowProblem, 'line'>[] = [];
  for (const name of names) {
    if (![...REQUIRED_COLUMNS, ...OPTIONAL_COLUMNS].includes(name as Column)) headerProblems.push({ column: name, reason: 'unknown column' });
  }
  for (const name of REQUIRED_COLUMNS) if (!names.includes(name)) headerProblems.push({ column: name, reason: 'missing column' });
  if (new Set(names).size !== names.length) headerProblems.push({ column: null, reason: 'a column appears twice' });
  if (headerProblems.length > 0) return { ok: false, problems: headerProblems.map((p) => ({ line: lineOf(0), ...p })) };

  const typeAt = names.indexOf('type');
  const valueAt = names.indexOf('value');
  const actionAt = names.indexOf('action');
  const noteAt = names.indexOf('note');
  const expiresAt = names.indexOf('expires_at'); // -1 when the file has no such column
  const width = names.length;

  // Problems hold the record index until the end, where it becomes a file line (see readCsvRecords).
  const problems: { index: number; column: string | null; reason: string }[] = [];
  const rows: ParsedRow[] = new Array(records.length - 1);
  let count = 0;
  for (let index = 1; index < records.length; index++) {
    const cells = records[index]!;
    if (cells.length !== width) {
      problems.push({ index, column: null, reason: `expected ${width} fields, found ${cells.length}` });
      continue;
    }
    const type = trimmed(cells[typeAt]);
    const value = trimmed(cells[valueAt]);
    const action = trimmed(cells[actionAt]);
    const note = trimmed(cells[noteAt]);
    const expires = expiresAt < 0 ? '' : trimmed(cells[expiresAt]);
    if (!passesSchema(type, value, action, note, expires)) {
      const candidate: Record<string, string> = { type, value, action, note };
      if (expires) candidate.expires_at = expires;
      if (!validateRow(candidate)) {
        for (const error of validateRow.errors ?? []) {
          const params = error.params as Record<string, unknown>;
          const allowed = Array.isArray(params.allowedValues) ? `must be one of ${params.allowedValues.join(', ')}` : error.message ?? 'is invalid';
          problems.push({ index, column: columnOf(error.instancePath, params), reason: allowed });
        }
        continue;
      }
    }
    const checked = checkIpRule({ type: type as IpRuleType, value, expires_at: expires || undefined }, now);
    if (!checked.ok) {
      for (const p of checked.problems) problems.push({ index, column: p.field, reason: p.message });
      continue;
    }
    if (problems.length > 0) continue; // the file is refused: no need to keep rules
    rows[count++] = { index, rule: { type, value, valueKey: checked.valueKey, action, note, expiresAt: checked.expiresAt, labels: {} } };
  }
  if (problems.length > 0) return { ok: false, problems: problems.map(({ index, column, reason }) => ({ line: lineOf(index), column, reason })) };
  rows.length = count;
  return { ok: true, rows, lineOf };
}

export interface ConflictOutcome {
  accepted: ParsedRow[];
  /** Rows that repeat an earlier row of the file or an existing rule. */
  conflicts: RowProblem[];
}

/** Splits rows into new rules and duplicates (within the file, or of rules the site already has). */
export function separateConflicts(rows: readonly ParsedRow[], existing: ReadonlySet<string>, lineOf: (index: number) => number): ConflictOutcome {
  // First index per canonical value, one map per type (no key strings to build per row).
  const firstIndex = new Map<string, Map<string, number>>();
  const accepted: ParsedRow[] = [];
  const conflicts: RowProblem[] = [];
  for (const row of rows) {
    const { type, valueKey } = row.rule;
    let seen = firstIndex.get(type);
    if (!seen) firstIndex.set(type, (seen = new Map()));
    const earlier = seen.get(valueKey);
    if (earlier !== undefined) conflicts.push({ line: lineOf(row.index), column: 'value', reason: `duplicates line ${lineOf(earlier)}` });
    else if (existing.size > 0 && existing.has(ruleKey(type, valueKey))) conflicts.push({ line: lineOf(row.index), column: 'value', reason: `the site already has an IP access rule for ${type} ${row.rule.value}` });
    else {
      seen.set(valueKey, row.index);
      accepted.push(row);
    }
  }
  return { accepted, conflicts };
}
