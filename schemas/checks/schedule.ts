// The checks on a scan schedule that JSON Schema cannot express, and the next-run computation.
// Pure functions: each check returns the problem (or null) so a route can report every failing
// field at once, the way schema failures are reported.
import { createRequire } from 'node:module';
import type { SCAN_TYPES } from '../index.ts';
import { errorMessage } from '../json-value.ts';

// cron-parser brings luxon (~25 ms to load): loaded on first use, so commands that meet no
// schedule (`aegis validate` of a config without one) do not pay for it.
const require = createRequire(import.meta.url);
let parser: typeof import('cron-parser').CronExpressionParser | undefined;
const cronParser = () => (parser ??= (require('cron-parser') as typeof import('cron-parser')).CronExpressionParser);

export type ScanType = (typeof SCAN_TYPES)[number];

export interface FieldIssue {
  field: string;
  message: string;
}

/** Scans that probe a running service take a web URL; the others read a git repository. */
const URL_TARGET_TYPES: ReadonlySet<ScanType> = new Set(['dast', 'api', 'cve']);

/** Jenkins-style `H` picks a random value on every parse, so the stored schedule would not be what runs. */
const HASH_TOKEN = /(?<![A-Za-z])H(?![A-Za-z])/i;

export function timezoneIssue(timezone: string): string | null {
  // Intl knows the IANA database the runtime ships and rejects made-up zones. Since Node 24 (ES2024)
  // it also takes UTC offsets such as `+05:00`, which are not IANA names and do not follow daylight
  // saving time: refused here on every runtime alike (the IANA spelling is Etc/GMT-5).
  if (/^[+\-\u2212]/.test(timezone)) return `is not an IANA time zone (such as Europe/Amsterdam or UTC)`;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return null;
  } catch {
    return `is not an IANA time zone (such as Europe/Amsterdam or UTC)`;
  }
}

export function cronIssue(cron: string): string | null {
  const fields = cron.trim().split(/\s+/);
  // cron-parser also takes a leading seconds field and @-macros; the specification promises 5 fields,
  // and a scheduler that runs at most once a minute cannot honour seconds.
  if (fields.length !== 5) {
    return `must have 5 fields (minute hour day-of-month month day-of-week), got ${fields.length}; seconds and @-macros are not supported`;
  }
  if (HASH_TOKEN.test(cron)) return 'must not use H (random values); pick explicit values';
  try {
    // next() as well as parse(): an expression can parse yet never fire.
    cronParser().parse(cron, { tz: 'UTC' }).next();
    return null;
  } catch (err) {
    return `is not a valid cron expression: ${errorMessage(err)}`;
  }
}

/** `https://…` must be exactly that: WHATWG URL parsing would also read `https:host` as a URL. */
function urlWithScheme(value: string, schemes: readonly string[]): URL | null {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(value)?.[1]?.toLowerCase();
  if (!scheme || !schemes.includes(scheme)) return null;
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

/** scp-like git address: `git@github.com:org/repo.git` (a user, a host, a colon, a path). */
const SCP_LIKE = /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:(?!\/\/)\S+$/;

export function targetIssue(scanType: ScanType, target: string): string | null {
  if (/\s/.test(target)) return 'must not contain whitespace';
  if (URL_TARGET_TYPES.has(scanType)) {
    const url = urlWithScheme(target, ['http', 'https']);
    return url?.hostname ? null : `must be an http:// or https:// URL for ${scanType} scans`;
  }
  const gitHint = `must be a git repository URL for ${scanType} scans (https://, ssh://, git@host:path or file://)`;
  if (SCP_LIKE.test(target)) return null;
  const url = urlWithScheme(target, ['https', 'ssh', 'file']);
  if (!url) return gitHint;
  if (url.protocol === 'file:') return url.pathname.length > 1 ? null : gitHint;
  return url.hostname ? null : gitHint;
}

export interface ScheduleTiming {
  cron: string;
  timezone: string;
}

/** The first time `cron`, read in `timezone`, fires strictly after `after`. Inputs must have passed the checks. */
export function nextRunAt({ cron, timezone }: ScheduleTiming, after: Date = new Date()): Date {
  return cronParser().parse(cron, { tz: timezone, currentDate: after }).next().toDate();
}

export interface ScheduleFields extends ScheduleTiming {
  scan_type: ScanType;
  target: string;
}

/**
 * Every problem with the given fields. `only` limits the checks to what a partial update touched,
 * so that changing a label never fails on a value that was accepted when it was written.
 */
export function scheduleIssues(fields: ScheduleFields, only?: { timing: boolean; target: boolean }): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const add = (field: string, message: string | null) => {
    if (message !== null) issues.push({ field, message });
  };
  if (only?.timing ?? true) {
    add('cron', cronIssue(fields.cron));
    const tz = timezoneIssue(fields.timezone);
    add('timezone', tz);
    // The runtime's Intl and cron-parser's time-zone library could disagree on a rare zone name;
    // the schedule is only usable when the next run can actually be computed.
    if (tz === null && issues.length === 0) {
      try {
        nextRunAt(fields);
      } catch {
        add('timezone', 'is not a time zone the scheduler can use');
      }
    }
  }
  if (only?.target ?? true) add('target', targetIssue(fields.scan_type, fields.target));
  return issues;
}
