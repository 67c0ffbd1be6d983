// PEP 440 order for PyPI: epochs (`1!1.0`), pre-releases (a/b/rc), post-releases, dev releases and
// local versions (`1.0+ubuntu1`), with `1.0 == 1.0.0`.
import { compare, valid } from '@renovatebot/pep440';

export function comparePep440(a: string, b: string): number | null {
  if (a.length > 256 || b.length > 256) return null;
  // compare() throws on input it cannot parse; valid() returns null instead.
  if (valid(a) === null || valid(b) === null) return null;
  const c = compare(a, b);
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}
