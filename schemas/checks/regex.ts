// User-supplied regular expressions run only on RE2, whose matching time is linear in the input:
// a pattern such as `(a+)+$` cannot stall the process the way it stalls a backtracking engine.
// Patterns RE2 cannot compile (backreferences, lookaround) are refused when they are saved.
import RE2 from 're2';
import { errorMessage } from '../json-value.ts';

export type CompiledPattern = RE2;

export type RegexCheck = { ok: true; compiled: CompiledPattern } | { ok: false; reason: string };

export function compileUserRegex(pattern: string): RegexCheck {
  try {
    return { ok: true, compiled: new RE2(pattern, 'u') };
  } catch (err) {
    return { ok: false, reason: `is not a valid RE2 pattern: ${errorMessage(err)}` };
  }
}
