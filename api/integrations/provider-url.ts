// A provider address an admin gives (a Jira site, a self-managed GitLab). Aegis calls it from the
// server with the pasted token, so unless private targets are allowed (AEGIS_ALLOW_PRIVATE_TARGETS)
// it must be https and must not be or resolve to a private, loopback, link-local or reserved
// address — the same rule as webhook endpoints and URL-scan targets.
import { isIP } from 'node:net';
import { refusedAddress } from '../net/address-policy.ts';
import { resolveWithin, type AddressResolver } from '../net/guarded-lookup.ts';

export async function providerUrlRefusal(url: string, policy: { allowPrivate: boolean; resolve: AddressResolver }, timeoutMs = 2_000): Promise<string | null> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a valid URL';
  }
  if (parsed.username || parsed.password) return 'must not contain credentials';
  if (policy.allowPrivate) return null;
  if (parsed.protocol !== 'https:') return 'must use https://';
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  const addresses = isIP(host) !== 0 ? [host] : (await resolveWithin(policy.resolve, host, timeoutMs)).map((a) => a.address);
  for (const address of addresses) {
    const reason = refusedAddress(address);
    if (reason) return `${host === address ? '' : `${host} resolves to `}${reason} (set AEGIS_ALLOW_PRIVATE_TARGETS=true to allow it)`;
  }
  return null;
}
