// What a finding may carry about its secret: a preview that cannot reconstruct it and a digest that
// identifies it. The digest is a plain SHA-256 by default so the same leaked value is recognisable
// across scans, repositories and tools (e.g. to check "is this the key we rotated?"); for
// low-entropy values (passwords) a plain digest can be brute-forced, so a caller may pass a key and
// get HMAC-SHA256 instead — findings are then comparable only under the same key.
import { createHash, createHmac } from 'node:crypto';

export function secretDigest(secret: string, key?: string | Buffer): string {
  return key === undefined ? createHash('sha256').update(secret, 'utf8').digest('hex') : createHmac('sha256', key).update(secret, 'utf8').digest('hex');
}

/**
 * First characters and the length: `ghp_…(40)`. Shows at most 4 characters and never more than a
 * quarter of the secret, so short passwords reveal little.
 */
export function redactedPreview(secret: string): string {
  const chars = [...secret];
  const shown = Math.min(4, Math.floor(chars.length / 4));
  return `${chars.slice(0, shown).join('')}…(${chars.length})`;
}

/** Stable across scans while the same secret stays in the same file under the same rule. */
export function fingerprint(ruleId: string, path: string, digest: string): string {
  return createHash('sha256').update(`${ruleId}:${path}:${digest}`, 'utf8').digest('hex');
}
