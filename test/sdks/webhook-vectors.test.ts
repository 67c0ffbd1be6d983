// The webhook signature vectors every SDK's verifier is tested on (sdks/testdata) are the server's
// own: each valid vector's header is what the server would sign, and its verifier agrees on all.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { signatureHeader, verifyServiceSignature } from '../../api/webhooks/signature.ts';

interface Vector { name: string; secret: string; body: string; header: string; now: number; tolerance: number; valid: boolean }
const { vectors } = JSON.parse(readFileSync(new URL('../../sdks/testdata/webhook-signatures.json', import.meta.url), 'utf8')) as { vectors: Vector[] };

describe('shared webhook signature vectors', () => {
  it.each(vectors.map((v) => [v.name, v] as const))('%s', (_name, vector) => {
    expect(verifyServiceSignature(vector.body, vector.header, vector.secret, vector.tolerance, vector.now)).toBe(vector.valid);
  });

  it('hold a signature the server makes, a tampered body and a stale timestamp', () => {
    const valid = vectors.find((v) => v.name === 'valid')!;
    const t = Number(/t=(\d+)/.exec(valid.header)![1]);
    expect(signatureHeader(valid.body, [valid.secret], t)).toBe(valid.header);
    expect(vectors.some((v) => v.name === 'tampered body' && !v.valid)).toBe(true);
    expect(vectors.some((v) => v.name === 'stale timestamp' && !v.valid)).toBe(true);
  });
});
