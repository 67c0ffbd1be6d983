// PLACEHOLDER (foundation): the triage prompt of a finding, secrets redacted.
import type { TriageFinding } from './types.ts';

export interface TriagePrompt {
  system: string;
  user: string;
  /** Secrets masked in `user` (and `system`). */
  redactions: number;
}

export function buildTriagePrompt(finding: TriageFinding): TriagePrompt {
  return { system: '', user: JSON.stringify(finding), redactions: 0 };
}
