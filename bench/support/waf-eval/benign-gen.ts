// Turns a source's request templates into a fixed number of requests: each slot picks a template by
// weight, and a template may decline (its text would not fit a request line or body limit) so
// another draw is made. Sizes are the only thing checked; texts are never looked at.
import { Buffer } from 'node:buffer';
import type { Rng } from './benign-rng.ts';
import type { EvalRequest } from './types.ts';

/** A request before the runner stamps its class and source. */
export type Draft = Omit<EvalRequest, 'class' | 'source'>;

export interface Template {
  /** Second half of `source` (`owner/repo:what`). */
  what: string;
  weight: number;
  make: (rng: Rng) => Draft | null;
}

/** Bodies stay under 64 KiB. */
export const MAX_BODY = 64 * 1024 - 1;
/** Request targets stay well inside common request-line limits (8 KiB). */
export const MAX_TARGET = 6000;
/** All header values together, inside Node's 16 KiB header limit with the request line. */
const MAX_HEADERS = 9000;

export function fits(d: Draft): boolean {
  if (d.target.length > MAX_TARGET) return false;
  const headerBytes = Object.entries(d.headers).reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
  if (headerBytes > MAX_HEADERS) return false;
  if (d.body !== undefined && Buffer.byteLength(d.body) > MAX_BODY) return false;
  return true;
}

/** `count` requests from `templates`; `rng` is the source's own, so each source is reproducible alone. */
export function generate(repo: string, rng: Rng, templates: readonly Template[], count: number): EvalRequest[] {
  const weighted = templates.map((t) => [t, t.weight] as const);
  const out: EvalRequest[] = [];
  let misses = 0;
  while (out.length < count) {
    const t = rng.weighted(weighted);
    let draft: Draft | null = null;
    for (let i = 0; i < 20 && !draft; i++) {
      const d = t.make(rng);
      if (d && fits(d)) draft = d;
    }
    if (!draft) {
      // A template whose texts never fit would loop forever; give up on the source instead.
      if (++misses > 1000) break;
      continue;
    }
    out.push({ ...draft, class: 'benign', source: `${repo}:${t.what}` });
  }
  return out;
}
