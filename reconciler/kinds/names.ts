// Config names made up for objects that have none (no ownership label): `dump` needs one for every
// object it writes, and it must be a valid config name (envelope-schema NAME_PATTERN).

/** A label-safe name: lowercase letters, digits, `.`, `_`, `-`. */
export function slug(text: string): string {
  const cleaned = text.toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '');
  return (cleaned || 'object').slice(0, 63).replace(/[^a-z0-9]+$/, '');
}
