// Row timestamps as the API writes them (ISO 8601 UTC strings).
export const iso = (value: Date): string => value.toISOString();
export const isoOrNull = (value: Date | null): string | null => (value ? value.toISOString() : null);

/** Expiring rules: expired once the time has passed, until the sweep removes them. */
export const expiryStatus = (expiresAt: Date | null, now = Date.now()): 'active' | 'expired' =>
  expiresAt && expiresAt.getTime() <= now ? 'expired' : 'active';
