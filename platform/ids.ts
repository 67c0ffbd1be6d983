// Object ids: a short type prefix and a ULID, so ids sort by creation time and say what they name
// (`key_01J…`, `org_01J…`). Lists page in id order, which is therefore creation order.
import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

// ulid's default generator asks the OS for one byte per character; the gateway mints ids on every
// request, so bytes come from a pool refilled from the same CSPRNG 4 KiB at a time.
const pool = Buffer.alloc(4096);
let offset = pool.length;

function take(count: number): number {
  if (offset + count > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  offset += count;
  return offset - count;
}

const ulid = monotonicFactory(() => pool[take(1)]! / 256);

export type IdPrefix = 'org' | 'usr' | 'key' | 'aud' | (string & {});

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${ulid().toLowerCase()}`;
}

/** `bytes` random bytes as hex (for tokens that need no order, such as request ids). */
export function randomHex(bytes: number): string {
  const start = take(bytes);
  return pool.toString('hex', start, start + bytes);
}
