// The triage answer's schema and validator: strict-mode shape for providers, bounds checked on
// what comes back, and a reason a person can read when an answer is refused.
import { describe, expect, it } from 'vitest';
import { parseTriageAnswer, TRIAGE_SCHEMA } from '../../api/ai/verdict.ts';
import { VERDICTS } from '../../api/ai/types.ts';

const valid = {
  verdict: 'likely_true_positive',
  confidence: 0.82,
  explanation: 'The id parameter reaches the query string unescaped.',
  suggested_fix: { summary: 'Use a parameterised query.', patch: '--- a/src/db.js\n+++ b/src/db.js\n@@ -3 +3 @@\n-db.query("SELECT * FROM t WHERE id=" + id)\n+db.query("SELECT * FROM t WHERE id=$1", [id])\n' },
};
const text = (v: unknown): string => JSON.stringify(v);
const failure = (input: string): string => {
  const r = parseTriageAnswer(input);
  expect(r.ok).toBe(false);
  return r.ok ? '' : r.error;
};

/** Every object schema of a JSON Schema, depth first. */
function objectSchemas(s: Record<string, unknown>): Record<string, unknown>[] {
  const out = s.type === 'object' ? [s] : [];
  for (const child of Object.values((s.properties ?? {}) as Record<string, Record<string, unknown>>)) out.push(...objectSchemas(child));
  return out;
}

describe('TRIAGE_SCHEMA', () => {
  it('is strict-mode compatible: every property required, no additional properties, no bounds keywords', () => {
    const objects = objectSchemas(TRIAGE_SCHEMA);
    expect(objects).toHaveLength(2);
    for (const o of objects) {
      expect(o.additionalProperties).toBe(false);
      expect([...(o.required as string[])].sort()).toEqual(Object.keys(o.properties as object).sort());
    }
    const json = JSON.stringify(TRIAGE_SCHEMA);
    for (const keyword of ['minimum', 'maximum', 'minLength', 'maxLength', 'pattern', 'format', 'oneOf', '"$ref"']) expect(json).not.toContain(keyword);
    expect((TRIAGE_SCHEMA.properties as Record<string, { enum?: string[] }>).verdict!.enum).toEqual([...VERDICTS]);
    const fix = (TRIAGE_SCHEMA.properties as Record<string, { properties: Record<string, { type: unknown }> }>).suggested_fix!;
    expect(fix.properties.patch!.type).toEqual(['string', 'null']);
  });
});

describe('parseTriageAnswer', () => {
  it('accepts a valid answer, also with a null patch', () => {
    expect(parseTriageAnswer(text(valid))).toEqual({ ok: true, answer: valid });
    const noPatch = { ...valid, verdict: 'needs_review', confidence: 0, suggested_fix: { summary: 'Check who calls this.', patch: null } };
    expect(parseTriageAnswer(text(noPatch))).toEqual({ ok: true, answer: noPatch });
  });

  it('tolerates surrounding whitespace and a ```json fence', () => {
    expect(parseTriageAnswer(`\n\n  ${text(valid)}  \n`)).toEqual({ ok: true, answer: valid });
    expect(parseTriageAnswer('```json\n' + JSON.stringify(valid, null, 2) + '\n```')).toEqual({ ok: true, answer: valid });
    expect(parseTriageAnswer('  ```\n' + text(valid) + '```\n')).toEqual({ ok: true, answer: valid });
  });

  it('refuses a verdict outside the enum', () => {
    expect(failure(text({ ...valid, verdict: 'definitely_fine' }))).toMatch(/verdict must be one of likely_true_positive, likely_false_positive, needs_review/);
  });

  it('refuses a confidence outside 0..1 or not a number', () => {
    expect(failure(text({ ...valid, confidence: 1.5 }))).toMatch(/confidence must be between 0 and 1/);
    expect(failure(text({ ...valid, confidence: -0.1 }))).toMatch(/confidence must be between 0 and 1/);
    expect(failure(text({ ...valid, confidence: '0.9' }))).toMatch(/confidence must be number/);
  });

  it('refuses a missing field, at the top and inside suggested_fix', () => {
    const { explanation: _, ...noExplanation } = valid;
    expect(failure(text(noExplanation))).toMatch(/missing field "explanation"/);
    expect(failure(text({ ...valid, suggested_fix: { summary: 'x' } }))).toMatch(/suggested_fix: missing field "patch"/);
  });

  it('refuses an extra field', () => {
    expect(failure(text({ ...valid, severity: 'high' }))).toMatch(/unexpected field "severity"/);
    expect(failure(text({ ...valid, suggested_fix: { ...valid.suggested_fix, files: [] } }))).toMatch(/suggested_fix: unexpected field "files"/);
  });

  it('refuses an empty or too long explanation and a too long patch', () => {
    expect(failure(text({ ...valid, explanation: '' }))).toMatch(/explanation must not be empty/);
    expect(failure(text({ ...valid, explanation: 'x'.repeat(4001) }))).toMatch(/explanation is longer than 4000 characters/);
    expect(parseTriageAnswer(text({ ...valid, explanation: 'x'.repeat(4000) })).ok).toBe(true);
    expect(failure(text({ ...valid, suggested_fix: { summary: 's', patch: 'p'.repeat(20_001) } }))).toMatch(/suggested_fix\.patch is longer than 20000 characters/);
  });

  it('refuses what is not JSON, or not an object', () => {
    expect(failure('Sure! Here is my analysis: the finding is real.')).toMatch(/^the answer is not JSON/);
    expect(failure('{"verdict": "likely_true_positive",')).toMatch(/^the answer is not JSON/);
    expect(failure('   ')).toBe('the answer is empty');
    expect(failure('[1, 2]')).toMatch(/the answer must be object/);
  });
});
