// The fallback triage engine: finding → family (./rules.ts) → signals (./evidence.ts) → verdict,
// explanation and fix (./text.ts, ./patch.ts). Pure and deterministic: no I/O, no clock, no
// randomness; the same finding always gets the same answer.
import type { TriageAnswer, TriageFinding, Verdict } from '../types.ts';
import { collectSignals, type Signal } from './evidence.ts';
import { derivePatch } from './patch.ts';
import { familyById, familyFor, type Family } from './rules.ts';
import { compose, familyLabel, fill, varsOf } from './text.ts';
import { describeLocation, viewOf, type FindingView } from './view.ts';

export const FALLBACK_MODEL = 'aegis-rules-v1';

/** A sum of signal weights at or beyond this decides the verdict; in between: needs_review. */
export const DECISION_THRESHOLD = 1.5;
/** Confidence of a needs_review answer: with nothing to go on, and with signals that cancel out. */
const CONFIDENCE_NOTHING = 0.25;
const CONFIDENCE_UNDECIDED = 0.4;
/** Without a family the engine knows less about what matters: never more sure than this. */
const CAP_UNKNOWN_FAMILY = 0.6;

/** The family a finding belongs to: scanner kind first (a dependency advisory about XSS is still a dependency finding). */
export function familyOf(v: FindingView): Family | undefined {
  if (v.scanType === 'sca' || v.location.kind === 'package') return familyById('vulnerable-dependency');
  if (v.scanType === 'cve') return familyById('known-cve');
  if (v.scanType === 'secrets') return familyById('hardcoded-secret');
  return familyFor(v.cwe, v.ruleId);
}

export interface Decision {
  verdict: Verdict;
  confidence: number;
  score: number;
  signals: Signal[];
}

const round2 = (n: number): number => Math.round(n * 100) / 100;

export function decide(signals: Signal[], family: Family | undefined): Decision {
  const score = round2(signals.reduce((s, x) => s + x.weight, 0));
  const decisive = signals.some((s) => s.weight !== 0);
  if (!decisive || Math.abs(score) < DECISION_THRESHOLD) {
    return { verdict: 'needs_review', confidence: decisive ? CONFIDENCE_UNDECIDED : CONFIDENCE_NOTHING, score, signals };
  }
  const verdict: Verdict = score > 0 ? 'likely_true_positive' : 'likely_false_positive';
  let confidence = Math.min(0.95, 0.5 + 0.1 * Math.abs(score));
  for (const s of signals) if (s.cap !== undefined) confidence = Math.min(confidence, s.cap);
  if (!family) confidence = Math.min(confidence, CAP_UNKNOWN_FAMILY);
  // A floor is proof in the verdict's direction (a live credential): it overrides the caps.
  for (const s of signals) if (s.floor !== undefined && Math.sign(s.weight) === Math.sign(score)) confidence = Math.max(confidence, s.floor);
  return { verdict, confidence: round2(Math.max(0, Math.min(1, confidence))), score, signals };
}

function verdictSentence(d: Decision): string {
  const score = `${d.score >= 0 ? '+' : ''}${d.score.toFixed(1)}`;
  if (d.verdict === 'needs_review') {
    return d.signals.some((s) => s.weight !== 0)
      ? `Verdict: needs review (evidence score ${score}, within ±${DECISION_THRESHOLD} of undecided); a person should confirm it.`
      : 'Verdict: needs review: these rules have no evidence either way for this finding; a person should confirm it.';
  }
  const what = d.verdict === 'likely_true_positive' ? 'likely a true positive' : 'likely a false positive';
  return `Verdict: ${what} (evidence score ${score}, confidence ${d.confidence.toFixed(2)}). Triage does not change the finding's status.`;
}

/** Where a dependency advisory or a CVE template names a weakness class of its own, say which. */
function weaknessNote(v: FindingView, family: Family | undefined): string | undefined {
  if (v.cwe === null || !family || (family.id !== 'vulnerable-dependency' && family.id !== 'known-cve')) return undefined;
  const inner = familyFor(v.cwe, '');
  return `The advisory classifies the weakness as ${inner ? `${inner.name} (CWE-${v.cwe})` : `CWE-${v.cwe}`}.`;
}

export function fallbackTriage(finding: TriageFinding): TriageAnswer {
  const v = viewOf(finding);
  const family = familyOf(v);
  const decision = decide(collectSignals(v, family), family);
  const vars = varsOf(v);
  const patch = derivePatch(v, family);

  // A dependency advisory's or CVE template's own CWE is named by weaknessNote, not as the family's.
  const ownCwe = family?.id === 'vulnerable-dependency' || family?.id === 'known-cve' ? null : v.cwe;
  const head = `${familyLabel(family, ownCwe)}, rule ${v.ruleId}, at ${describeLocation(v.location)}.`;
  const parts = [head];
  if (family) parts.push(fill(family.explain, vars));
  const note = weaknessNote(v, family);
  if (note) parts.push(note);
  parts.push(verdictSentence(decision));
  for (const s of decision.signals) parts.push(s.reason);

  let summary = family
    ? fill(family.fix, vars)
    : `No fix template covers this rule (${v.ruleId}); review the evidence at ${vars.where} against the rule's guidance.`;
  if (patch) summary += ` The patch ${patch.note}.`;
  return {
    verdict: decision.verdict,
    confidence: decision.confidence,
    explanation: compose(parts),
    suggested_fix: { summary, patch: patch?.patch ?? null },
  };
}
