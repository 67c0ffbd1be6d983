// Where outbound connections are opened under a policy (outbound-rules.ts), for the three kinds of
// HTTP client the server uses: undici (fetch, webhooks, URL scans, the Shield gateway) through a
// connector, node:http(s) agents (the AWS SDK), and plain TCP (the git egress proxy). Each new
// connection picks the rule of its destination, refuses a literal address the rule refuses (net.connect
// skips `lookup` for those), and resolves names with the rule's guarded lookup, which drops refused
// addresses — so the address actually connected to is the one judged, on every new connection,
// redirects and reconnections included.
import http from 'node:http';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';
import type { Duplex } from 'node:stream';
import { Agent, buildConnector } from 'undici';
import { guardedLookup } from './guarded-lookup.ts';
import { literalRefusal, type AddressRule, type OutboundPolicy } from './outbound-rules.ts';

export type Refused = (host: string, reason: string, error: Error) => void;

export interface ConnectOptions {
  /** Time to establish a connection (TCP and TLS), ms; default 10 s. */
  timeoutMs?: number;
  /** Verify TLS certificates (default true; URL scans probe targets with any certificate). */
  rejectUnauthorized?: boolean;
  /** Told about every refusal (the gateway logs them), with the error the connection fails with. */
  onRefused?: Refused;
}

/** The guarded lookup of a rule, reporting refusals to `onRefused`. */
export function ruleLookup(rule: AddressRule, onRefused?: Refused): LookupFunction {
  return guardedLookup({ refuse: rule.refuse, resolve: rule.resolve, refusal: (host, reason) => refusalOf(rule, host, reason, onRefused) });
}

/** The rule's error for a refused connection, reported to `onRefused`. */
function refusalOf(rule: AddressRule, host: string, reason: string, onRefused: Refused | undefined): Error {
  const error = rule.refusal(host, reason);
  onRefused?.(host, reason, error);
  return error;
}

/** Memoises one value per rule (a policy has a handful of rules; connections reuse their lookups). */
function perRule<T>(make: (rule: AddressRule) => T): (rule: AddressRule) => T {
  const made = new Map<AddressRule, T>();
  return (rule) => {
    let value = made.get(rule);
    if (value === undefined) made.set(rule, (value = make(rule)));
    return value;
  };
}

/** An undici connector (Agent/Pool/Client `connect`) that opens every connection under `policy`. */
export function outboundConnector(policy: OutboundPolicy, options: ConnectOptions = {}): buildConnector.connector {
  const connectorOf = perRule((rule) =>
    buildConnector({ lookup: ruleLookup(rule, options.onRefused), timeout: options.timeoutMs ?? 10_000, ...(options.rejectUnauthorized === false ? { rejectUnauthorized: false } : {}) }),
  );
  return (connectOptions, callback) => {
    const host = connectOptions.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = Number(connectOptions.port) || (connectOptions.protocol === 'https:' ? 443 : 80);
    const rule = policy.ruleFor(host, port);
    const refused = literalRefusal(rule, host);
    if (refused) {
      callback(refusalOf(rule, host, refused, options.onRefused), null);
      return;
    }
    connectorOf(rule)(connectOptions, callback);
  };
}

/** An undici Agent whose connections are opened under `policy`. */
export function outboundAgent(policy: OutboundPolicy, options: ConnectOptions & Omit<Agent.Options, 'connect'> = {}): Agent {
  const { timeoutMs, rejectUnauthorized, onRefused, ...agentOptions } = options;
  const connectOptions: ConnectOptions = { ...(timeoutMs !== undefined ? { timeoutMs } : {}), ...(rejectUnauthorized !== undefined ? { rejectUnauthorized } : {}), ...(onRefused ? { onRefused } : {}) };
  return new Agent({ ...agentOptions, connect: outboundConnector(policy, connectOptions) });
}

/**
 * A TCP connection to `host:port` under `policy` (the egress proxy's upstream side). Fails with the
 * rule's refusal error, before any packet is sent, when the destination is refused.
 */
export function outboundSocket(policy: OutboundPolicy, host: string, port: number, options: ConnectOptions = {}): net.Socket {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  const rule = policy.ruleFor(bare, port);
  const refused = literalRefusal(rule, bare);
  if (refused) {
    // Destroyed once the caller has attached its listeners: the refusal is its 'error'.
    const socket = new net.Socket();
    const error = refusalOf(rule, bare, refused, options.onRefused);
    queueMicrotask(() => socket.destroy(error));
    return socket;
  }
  const socket = net.connect({ host: bare, port, lookup: ruleLookup(rule, options.onRefused) });
  if (options.timeoutMs !== undefined) {
    socket.setTimeout(options.timeoutMs, () => {
      if (socket.connecting) socket.destroy(new Error(`connecting to ${bare}:${port} timed out`));
    });
    socket.once('connect', () => socket.setTimeout(0));
  }
  return socket;
}

type CreateConnection = (options: http.ClientRequestArgs, callback?: (err: Error | null, stream: Duplex) => void) => Duplex | null | undefined;

/** Wraps an agent's createConnection: the rule's lookup for names, the rule's check for literal addresses. */
function guardConnections(agent: http.Agent, policy: OutboundPolicy, defaultPort: number, onRefused?: Refused): void {
  const lookupOf = perRule((rule) => ruleLookup(rule, onRefused));
  const create = (agent.createConnection as CreateConnection).bind(agent);
  agent.createConnection = ((options: http.ClientRequestArgs, callback?: (err: Error | null, stream: Duplex) => void) => {
    const host = (options.hostname ?? options.host ?? 'localhost').replace(/^\[(.*)\]$/, '$1');
    const rule = policy.ruleFor(host, Number(options.port) || defaultPort);
    const refused = literalRefusal(rule, host);
    if (refused) {
      const error = refusalOf(rule, host, refused, onRefused);
      if (callback) queueMicrotask(() => callback(error, new net.Socket()));
      else throw error;
      return undefined;
    }
    return create({ ...options, lookup: lookupOf(rule) }, callback);
  }) as CreateConnection;
}

/**
 * node:http and node:https agents (keep-alive) whose connections are opened under `policy` (the AWS
 * SDK's request handler, the ACME client). `ca` replaces the certificates the https agent trusts, for
 * its connections only (the ACME client passes Node's roots plus the operator's AEGIS_ACME_CA_CERTS).
 */
export function outboundNodeAgents(policy: OutboundPolicy, options: { onRefused?: Refused; ca?: readonly string[] } = {}): { httpAgent: http.Agent; httpsAgent: https.Agent } {
  const httpAgent = new http.Agent({ keepAlive: true });
  const httpsAgent = new https.Agent({ keepAlive: true, ...(options.ca ? { ca: [...options.ca] } : {}) });
  guardConnections(httpAgent, policy, 80, options.onRefused);
  guardConnections(httpsAgent, policy, 443, options.onRefused);
  return { httpAgent, httpsAgent };
}
