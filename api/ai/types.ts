// What a triage is, wherever it came from: the customer's model (OpenAI-compatible, Anthropic) or
// the bundled fallback (./fallback). Stored on the finding as `triage` (StoredTriage); the verdict
// never changes the finding's status — people decide.

export const VERDICTS = ['likely_true_positive', 'likely_false_positive', 'needs_review'] as const;
export type Verdict = (typeof VERDICTS)[number];

/** The structured answer (./verdict.ts holds its JSON Schema and validator). */
export interface TriageAnswer {
  verdict: Verdict;
  /** 0–1: how sure the engine is of the verdict. */
  confidence: number;
  /** Why, in a few sentences a developer can act on. */
  explanation: string;
  suggested_fix: {
    /** What to change, in prose. */
    summary: string;
    /** A unified diff against the file of a code finding, when the engine can write one; else null. */
    patch: string | null;
  };
}

export interface TriageEngine {
  /** `openai` / `anthropic`: the customer's connection; `fallback`: Aegis's bundled rules, no model. */
  provider: 'openai' | 'anthropic' | 'fallback';
  /** The model that answered, or `aegis-rules-v1` for the fallback. */
  model: string;
  /** The connection used, when it was one. */
  integration_id: string | null;
}

export interface TriageUsage {
  input_tokens: number;
  output_tokens: number;
}

export type TriageStatus = 'pending' | 'completed' | 'failed';

/** `vulnerabilities.triage` and the `triage` field of the finding resource. */
export interface StoredTriage {
  status: TriageStatus;
  requested_at: string;
  requested_by: string | null;
  /** `manual` (POST …/triage) or `auto` (a new high/critical finding, with auto_triage on). */
  trigger: 'manual' | 'auto';
  completed_at: string | null;
  engine: TriageEngine | null;
  /** Null until completed. */
  result: TriageAnswer | null;
  usage: TriageUsage;
  /** Model calls made (a malformed answer is retried once). */
  attempts: number;
  /** Secrets masked in what was sent (0 for the fallback: nothing is sent). */
  redactions: number;
  /** Why it failed (status `failed`). */
  error: string | null;
  job_id: string | null;
}

/** What the prompt builder and the fallback engine read of a finding. */
export interface TriageFinding {
  id: string;
  scan_type: string;
  rule_id: string;
  title: string;
  severity: string;
  cwe: string | null;
  target: string;
  location: Record<string, unknown>;
  evidence: string;
  details: Record<string, unknown>;
}
