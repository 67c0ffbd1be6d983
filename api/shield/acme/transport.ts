// The ACME client's HTTP, held to the outbound policy (platform/net/outbound.ts, operator class: the
// directory is the operator's setting, so a private or local address is allowed).
//
// acme-client 5.4 sends every request through its own axios instance (`acme.axios`, never axios's
// global one) and takes no per-client agent. One request interceptor on that instance gives each
// request the agents of the transport it runs under (an AsyncLocalStorage scope), `proxy: false`
// (no HTTP(S)_PROXY from the environment), a timeout, a size cap and the job's abort signal. A
// request made outside a transport is refused, so no ACME request can leave unguarded. Clients are
// made here only (newAcmeClient), with the interceptor in place.
// AEGIS_ACME_CA_CERTS adds CAs to Node's roots for these connections only.
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFile } from 'node:fs/promises';
import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import { rootCertificates } from 'node:tls';
import * as acme from 'acme-client';
import { operatorPolicy, outboundNodeAgents } from '../../../platform/net/outbound.ts';

/** Time for one ACME request; the CA answers in well under a second when it is well. */
const REQUEST_TIMEOUT_MS = 30_000;
/** Directory, orders and certificate chains are a few KiB. */
const MAX_RESPONSE_BYTES = 1024 * 1024;

interface Route {
  httpAgent: HttpAgent;
  httpsAgent: HttpsAgent;
  signal: AbortSignal | undefined;
}

const routes = new AsyncLocalStorage<Route>();
let installed = false;

function installInterceptor(): void {
  if (installed) return;
  installed = true;
  acme.axios.interceptors.request.use((config) => {
    const route = routes.getStore();
    if (!route) throw new Error('ACME request outside an ACME transport (api/shield/acme/transport.ts)');
    config.httpAgent = route.httpAgent;
    config.httpsAgent = route.httpsAgent;
    config.proxy = false;
    config.timeout = REQUEST_TIMEOUT_MS;
    config.maxContentLength = MAX_RESPONSE_BYTES;
    if (route.signal) config.signal = route.signal;
    return config;
  });
}

/** An ACME client; its requests work only inside a transport's `run`. */
export function newAcmeClient(options: acme.ClientOptions): acme.Client {
  installInterceptor();
  return new acme.Client(options);
}

export interface AcmeTransport {
  /** Runs `work`; every ACME request it makes goes through this transport, aborted with `signal`. */
  run<T>(signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T>;
  /** Closes the transport's connections. */
  close(): void;
}

/** The certificates in a PEM file: each `CERTIFICATE` block. */
async function readCaFile(path: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new Error(`AEGIS_ACME_CA_CERTS: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new Error(`AEGIS_ACME_CA_CERTS: ${path} holds no PEM certificate`);
  return blocks;
}

/** A transport for one order: fresh agents (closed with it), the operator's CAs read now. */
export async function openAcmeTransport(caCertsPath: string | undefined): Promise<AcmeTransport> {
  installInterceptor();
  const ca = caCertsPath ? [...rootCertificates, ...(await readCaFile(caCertsPath))] : undefined;
  const { httpAgent, httpsAgent } = outboundNodeAgents(operatorPolicy, ca ? { ca } : {});
  return {
    run: (signal, work) => routes.run({ httpAgent, httpsAgent, signal }, work),
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}
