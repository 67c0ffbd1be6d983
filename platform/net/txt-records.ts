// TXT record lookups for domain proofs: the system resolver, or DNS servers the operator names
// (AEGIS_VERIFICATION_DNS_SERVERS — tests point it at a local DNS server). A name without TXT
// records (NODATA, NXDOMAIN) is an empty answer; a resolver that fails (timeout, SERVFAIL,
// refused) is an error, so a passing outage is never mistaken for a record taken away.
import { promises as dns } from 'node:dns';

export type TxtLookup = (name: string) => Promise<string[]>;

const ABSENT = new Set(['ENODATA', 'ENOTFOUND', 'NOTFOUND', 'ENONAME']);

export class TxtLookupError extends Error {
  override name = 'TxtLookupError';
}

/** Looks up TXT records through `servers` (`ip`, `ip:port`, `[ipv6]:port`), or the system resolver when empty. */
export function txtLookup(servers: readonly string[], { timeoutMs = 3_000, tries = 2 } = {}): TxtLookup {
  const resolver = new dns.Resolver({ timeout: timeoutMs, tries });
  if (servers.length > 0) {
    try {
      resolver.setServers([...servers]);
    } catch (err) {
      throw new Error(`AEGIS_VERIFICATION_DNS_SERVERS: ${(err as Error).message}`);
    }
  }
  return async (name) => {
    try {
      // A record may be split in several character-strings; they form one value.
      return (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      if (ABSENT.has(code)) return [];
      throw new TxtLookupError(`the DNS lookup of ${name} failed (${code || (err as Error).message})`);
    }
  };
}
