// A DNS lookup for outbound connections that drops the addresses a policy refuses, so the check is
// made on the address actually connected to — a name that resolves to a refused address, or changes
// its answer between a save-time check and the connection (DNS rebinding), cannot reach it. Given to
// net/tls.connect (and undici) as `lookup`, it runs once per new connection, not per request.
// Note that net.connect does not call `lookup` for a literal IP address: callers check those
// themselves. URL scans (scanners/web/http.ts, address-policy.ts) and Shield origins
// (gateway/proxy/forward.ts, metadata-address.ts) both connect through here.
import { lookup as dnsLookup, promises as dnsPromises, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';

/** Why `address` may not be connected to (a sentence naming it), or null when it may. */
export type AddressPolicy = (address: string) => string | null;

export const allowEveryAddress: AddressPolicy = () => null;

/** Resolves a name to every address it has, honouring the connection's `family` and `hints`. */
export type AddressResolver = (hostname: string, options: LookupOptions, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

/** The system resolver (getaddrinfo: /etc/hosts, nsswitch, resolv.conf), all addresses. */
export const systemResolver: AddressResolver = (hostname, options, callback) => dnsLookup(hostname, { ...options, all: true }, callback);

/**
 * Asks these DNS servers (`ip` or `ip:port`, `[ipv6]:port`) directly, for A and AAAA records, instead
 * of the system resolver: no /etc/hosts, no search domains. Throws on a malformed server.
 */
export function dnsServersResolver(servers: readonly string[], { timeoutMs = 2_000, tries = 2 } = {}): AddressResolver {
  const resolver = new dnsPromises.Resolver({ timeout: timeoutMs, tries });
  resolver.setServers([...servers]);
  return (hostname, options, callback) => {
    const literal = isIP(hostname);
    if (literal !== 0) return callback(null, [{ address: hostname, family: literal }]);
    const family = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
    const queries: Promise<LookupAddress[]>[] = [];
    if (family !== 6) queries.push(resolver.resolve4(hostname).then((list) => list.map((address) => ({ address, family: 4 }))));
    if (family !== 4) queries.push(resolver.resolve6(hostname).then((list) => list.map((address) => ({ address, family: 6 }))));
    void Promise.allSettled(queries).then((results) => {
      const addresses = results.flatMap((r) => (r.status === 'fulfilled' ? r.value : []));
      if (addresses.length > 0) return callback(null, addresses);
      const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      callback((failure?.reason as NodeJS.ErrnoException | undefined) ?? Object.assign(new Error(`${hostname}: no address`), { code: 'ENOTFOUND' }), []);
    });
  };
}

/** Every address `hostname` resolves to (a literal address is its own answer). */
export function resolveAll(resolve: AddressResolver, hostname: string): Promise<LookupAddress[]> {
  const literal = isIP(hostname);
  if (literal !== 0) return Promise.resolve([{ address: hostname, family: literal }]);
  return new Promise((resolvePromise, reject) => resolve(hostname, {}, (err, addresses) => (err ? reject(err) : resolvePromise(addresses))));
}

/** The resolver of these DNS servers, or the system resolver when there are none; `setting` names the variable in errors. */
export function configuredResolver(servers: readonly string[], setting: string): AddressResolver {
  if (servers.length === 0) return systemResolver;
  try {
    return dnsServersResolver(servers);
  } catch (err) {
    throw new Error(`${setting}: ${(err as Error).message}`);
  }
}

/** Every address `hostname` resolves to within `timeoutMs`; none when it does not resolve (in time). */
export async function resolveWithin(resolve: AddressResolver, hostname: string, timeoutMs: number): Promise<LookupAddress[]> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    resolveAll(resolve, hostname).catch(() => []),
    new Promise<LookupAddress[]>((done) => (timer = setTimeout(() => done([]), timeoutMs))),
  ]).finally(() => clearTimeout(timer));
}

export interface GuardedLookupOptions {
  refuse: AddressPolicy;
  /** How names are resolved (default: the system resolver). */
  resolve?: AddressResolver;
  /** The error the connection fails with when none of the name's addresses may be used; `reason` is the first address's. */
  refusal: (hostname: string, reason: string) => Error;
}

/** A `lookup` for net/tls.connect that resolves every address and keeps only those `refuse` allows. */
export function guardedLookup({ refuse, resolve = systemResolver, refusal }: GuardedLookupOptions): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, options, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const usable = addresses.filter((a) => refuse(a.address) === null);
      if (usable.length === 0) {
        const reason = refuse(addresses[0]?.address ?? hostname) ?? 'no address';
        return callback(refusal(hostname, reason) as NodeJS.ErrnoException, '', 0);
      }
      if (options.all) return (callback as unknown as (err: null, addresses: LookupAddress[]) => void)(null, usable);
      return callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}
