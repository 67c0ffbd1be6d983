// Object ids: a short type prefix and a ULID, so ids sort by creation time and say what they name
// (`key_01J…`, `org_01J…`). Lists page in id order, which is therefore creation order.
import { monotonicFactory } from 'ulid';

const ulid = monotonicFactory();

export type IdPrefix = 'org' | 'usr' | 'key' | 'aud' | (string & {});

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${ulid().toLowerCase()}`;
}
