// The request-time check of a git repository URL against the outbound policy, as URL scans do it:
// a literal private, loopback or link-local address (or `localhost`) is refused at once with a 422
// naming the setting, instead of a job that fails later. Names are not resolved here: the clone's
// egress proxy judges the address git actually connects to (platform/git/egress.ts), every redirect and
// DNS answer included, and fails the clone with the refusal.
import { isIP } from 'node:net';
import { literalRefusal, type OutboundPolicy } from '../net/outbound.ts';
import { gitEndpoint } from './url.ts';

const LOCALHOST = /^localhost\.?$|\.localhost\.?$/i;

/** curl and the C resolver read 2130706433, 0x7f.1 and 127.1 as IPv4 addresses: such a host is judged as WHATWG URL parsing writes it. */
function normalized(host: string): string {
  if (isIP(host) !== 0 || !/^[0-9a-fx.]+$/i.test(host)) return host;
  try {
    return new URL(`http://${host}/`).hostname;
  } catch {
    return host;
  }
}

/** Why cloning `url` would be refused for its host as written, or null (local sources, names, allowed addresses). */
export function gitTargetRefusal(url: string, policy: OutboundPolicy): string | null {
  const endpoint = gitEndpoint(url);
  if (!endpoint) return null;
  const rule = policy.ruleFor(endpoint.host, endpoint.port);
  const host = normalized(endpoint.host);
  const reason = LOCALHOST.test(host) ? (rule.refuse('127.0.0.1') === null ? null : `${host} is the server itself`) : literalRefusal(rule, host);
  return reason ? `${reason}; repositories on private addresses need AEGIS_ALLOW_PRIVATE_TARGETS=true on the server` : null;
}
