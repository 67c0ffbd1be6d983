// Turns an uploaded CSV of IP access rules into rules to insert, or into a list of every problem
// (line, column, reason) so the whole file can be refused at once. Header: type,value,action,note
// and optionally expires_at, in any order.
import { parse } from 'csv-parse/sync';
import { IpAccessRuleSpec } from '../../../schemas/index.ts';
import { compileStrict } from '../../http/validation.ts';
import { checkIpRule } from './rule-check.ts';
import { ruleKey, type NewIpRule } from './store.ts';
import type { IpRuleType } from './values.ts';

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

function columnOf(instancePath: string, params: Record<string, unknown>): string | null {
  const field = instancePath.replace(/^\//, '') || (typeof params.missingProperty === 'string' ? params.missingProperty : '');
  return field || null;
}

type Records = { records: string[][]; lineOf: (index: number) => number } | { problem: RowProblem };

/**
 * Records, and a way to find the line a record starts on. Line numbers cost csv-parse a copy of its
 * bookkeeping per record, so they are computed (by a second pass) only when a problem needs one.
 */
function readRecords(text: string): Records {
  try {
    const records = parse(text, { bom: true, skip_empty_lines: true, relax_column_count: true }) as string[][];
    let lines: number[] | undefined;
    const lineOf = (index: number) => {
      lines ??= (parse(text, { bom: true, skip_empty_lines: true, relax_column_count: true, info: true }) as { info: { lines: number } }[]).map((r) => r.info.lines);
      return lines[index] ?? index + 1;
    };
    return { records, lineOf };
  } catch (err) {
    const line = typeof (err as { lines?: unknown }).lines === 'number' ? (err as { lines: number }).lines : 1;
    return { problem: { line, column: null, reason: `CSV syntax: ${err instanceof Error ? err.message : String(err)}` } };
  }
}

export function parseIpRulesCsv(text: string, now = Date.now()): ParseResult {
  const read = readRecords(text);
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

  // Problems hold the record index until the end, where it becomes a file line (see readRecords).
  const problems: { index: number; column: string | null; reason: string }[] = [];
  const rows: ParsedRow[] = [];
  for (let index = 1; index < records.length; index++) {
    const cells = records[index]!;
    if (cells.length !== names.length) {
      problems.push({ index, column: null, reason: `expected ${names.length} fields, found ${cells.length}` });
      continue;
    }
    const cell = (name: Column) => cells[names.indexOf(name)]?.trim() ?? '';
    const candidate: Record<string, string> = { type: cell('type'), value: cell('value'), action: cell('action'), note: cell('note') };
    if (cell('expires_at')) candidate.expires_at = cell('expires_at');
    if (!validateRow(candidate)) {
      for (const error of validateRow.errors ?? []) {
        const params = error.params as Record<string, unknown>;
        const allowed = Array.isArray(params.allowedValues) ? `must be one of ${params.allowedValues.join(', ')}` : error.message ?? 'is invalid';
        problems.push({ index, column: columnOf(error.instancePath, params), reason: allowed });
      }
      continue;
    }
    const checked = checkIpRule({ type: candidate.type as IpRuleType, value: candidate.value!, expires_at: candidate.expires_at }, now);
    if (!checked.ok) {
      for (const p of checked.problems) problems.push({ index, column: p.field, reason: p.message });
      continue;
    }
    rows.push({
      index,
      rule: { type: candidate.type!, value: candidate.value!, valueKey: checked.valueKey, action: candidate.action!, note: candidate.note ?? '', expiresAt: checked.expiresAt, labels: {} },
    });
  }
  if (problems.length > 0) return { ok: false, problems: problems.map(({ index, column, reason }) => ({ line: lineOf(index), column, reason })) };
  return { ok: true, rows, lineOf };
}

export interface ConflictOutcome {
  accepted: ParsedRow[];
  /** Rows that repeat an earlier row of the file or an existing rule. */
  conflicts: RowProblem[];
}

/** Splits rows into new rules and duplicates (within the file, or of rules the site already has). */
export function separateConflicts(rows: readonly ParsedRow[], existing: ReadonlySet<string>, lineOf: (index: number) => number): ConflictOutcome {
  const firstIndex = new Map<string, number>();
  const accepted: ParsedRow[] = [];
  const conflicts: RowProblem[] = [];
  for (const row of rows) {
    const key = ruleKey(row.rule.type, row.rule.valueKey);
    const earlier = firstIndex.get(key);
    if (earlier !== undefined) conflicts.push({ line: lineOf(row.index), column: 'value', reason: `duplicates line ${lineOf(earlier)}` });
    else if (existing.has(key)) conflicts.push({ line: lineOf(row.index), column: 'value', reason: `the site already has an IP access rule for ${row.rule.type} ${row.rule.value}` });
    else {
      firstIndex.set(key, row.index);
      accepted.push(row);
    }
  }
  return { accepted, conflicts };
}
