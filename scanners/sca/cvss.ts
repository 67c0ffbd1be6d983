// CVSS v3.0/v3.1 base score from a vector string, per the FIRST specification (v3.1 §7.1 formulas,
// Appendix A Roundup). Only base metrics count; temporal and environmental metrics may be present
// in the vector and are ignored. v3.0 differs only in rounding (a plain ceiling to one decimal).
import type { Severity } from '../types.ts';

const AV: Record<string, number> = { N: 0.85, A: 0.62, L: 0.55, P: 0.2 };
const AC: Record<string, number> = { L: 0.77, H: 0.44 };
const PR_UNCHANGED: Record<string, number> = { N: 0.85, L: 0.62, H: 0.27 };
const PR_CHANGED: Record<string, number> = { N: 0.85, L: 0.68, H: 0.5 };
const UI: Record<string, number> = { N: 0.85, R: 0.62 };
const CIA: Record<string, number> = { H: 0.56, L: 0.22, N: 0 };
const BASE = ['AV', 'AC', 'PR', 'UI', 'S', 'C', 'I', 'A'] as const;
const OTHER = new Set(['E', 'RL', 'RC', 'CR', 'IR', 'AR', 'MAV', 'MAC', 'MPR', 'MUI', 'MS', 'MC', 'MI', 'MA']);

/** v3.1 Roundup: smallest one-decimal number ≥ x, computed on integers to avoid float error. */
function roundup31(x: number): number {
  const i = Math.round(x * 100000);
  return i % 10000 === 0 ? i / 100000 : (Math.floor(i / 10000) + 1) / 10;
}

function roundup30(x: number): number {
  return Math.ceil(x * 10) / 10;
}

/** Base score 0.0–10.0, or null when the vector is not a well-formed CVSS v3.x vector. */
export function cvss3BaseScore(vector: string): number | null {
  const parts = vector.trim().split('/');
  const head = parts.shift();
  if (head !== 'CVSS:3.1' && head !== 'CVSS:3.0') return null;
  const m = new Map<string, string>();
  for (const part of parts) {
    const [k, v, extra] = part.split(':');
    if (!k || v === undefined || extra !== undefined || m.has(k)) return null;
    if (!(BASE as readonly string[]).includes(k) && !OTHER.has(k)) return null;
    m.set(k, v);
  }
  const changed = m.get('S') === 'C';
  if (m.get('S') !== 'U' && !changed) return null;
  const av = AV[m.get('AV') ?? ''];
  const ac = AC[m.get('AC') ?? ''];
  const pr = (changed ? PR_CHANGED : PR_UNCHANGED)[m.get('PR') ?? ''];
  const ui = UI[m.get('UI') ?? ''];
  const c = CIA[m.get('C') ?? ''];
  const i = CIA[m.get('I') ?? ''];
  const a = CIA[m.get('A') ?? ''];
  if (av === undefined || ac === undefined || pr === undefined || ui === undefined || c === undefined || i === undefined || a === undefined) return null;

  const iss = 1 - (1 - c) * (1 - i) * (1 - a);
  const impact = changed ? 7.52 * (iss - 0.029) - 3.25 * Math.pow(iss - 0.02, 15) : 6.42 * iss;
  const exploitability = 8.22 * av * ac * pr * ui;
  if (impact <= 0) return 0;
  const roundup = head === 'CVSS:3.1' ? roundup31 : roundup30;
  return changed ? roundup(Math.min(1.08 * (impact + exploitability), 10)) : roundup(Math.min(impact + exploitability, 10));
}

/** CVSS qualitative rating: 9.0+ critical, 7.0+ high, 4.0+ medium, above 0 low, 0 none (`info`). */
export function severityFromScore(score: number): Severity {
  if (score >= 9) return 'critical';
  if (score >= 7) return 'high';
  if (score >= 4) return 'medium';
  if (score > 0) return 'low';
  return 'info';
}
