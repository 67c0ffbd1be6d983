// PLACEHOLDER (foundation): the triage answer's JSON Schema and its validator.
import type { TriageAnswer } from './types.ts';

/** Strict-mode JSON Schema of TriageAnswer (every property required, no additional properties). */
export const TRIAGE_SCHEMA: Record<string, unknown> = {};

/** Parses and validates a model's answer. */
export function parseTriageAnswer(_text: string): { ok: true; answer: TriageAnswer } | { ok: false; error: string } {
  return { ok: false, error: 'not built yet' };
}
