// Runs a ProviderDefinition as a Terraform plugin (go-plugin over gRPC, protocol 6): checks the
// environment Terraform sets, listens on a fresh unix socket with TLS pinned both ways, and writes
// the handshake line — the only thing this process ever writes to stdout.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, ServerCredentials, status, type sendUnaryData, type ServerUnaryCall, type UntypedServiceImplementation } from '@grpc/grpc-js';
import type { ProviderDefinition } from '../framework/contract.ts';
import { loadProtocol } from '../protocol/load.ts';
import { createServerCertificate } from './certificate.ts';
import { createProviderService, type ProviderService } from './provider-service.ts';
import { errorMessage } from '../../schemas/json-value.ts';

export const MAGIC_COOKIE_KEY = 'TF_PLUGIN_MAGIC_COOKIE';
export const MAGIC_COOKIE_VALUE = 'd602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2';
const PROTOCOL_VERSION = 6;
const MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

/** Exits with a human message unless Terraform launched us (go-plugin's contract). */
export function checkPluginEnvironment(env: NodeJS.ProcessEnv = process.env): void {
  if (env[MAGIC_COOKIE_KEY] !== MAGIC_COOKIE_VALUE) {
    process.stderr.write(
      'This binary is a plugin. These are not meant to be executed directly.\n' +
        'Please execute the program that consumes these plugins, which will load any plugins automatically\n' +
        '(the Aegis provider runs under Terraform: see `aegis provider install`).\n',
    );
    process.exit(1);
  }
  const versions = (env.PLUGIN_PROTOCOL_VERSIONS ?? String(PROTOCOL_VERSION)).split(',').map((v) => Number(v.trim()));
  if (!versions.includes(PROTOCOL_VERSION)) {
    process.stderr.write(`The Aegis provider speaks plugin protocol ${PROTOCOL_VERSION}; this Terraform offers ${env.PLUGIN_PROTOCOL_VERSIONS ?? 'none'}. Use Terraform 1.0 or newer.\n`);
    process.exit(1);
  }
}

function unary<Request, Response>(handler: (request: Request) => Promise<Response>) {
  return (call: ServerUnaryCall<Request, Response>, callback: sendUnaryData<Response>): void => {
    handler(call.request).then(
      (response) => callback(null, response),
      (error: unknown) => callback({ code: status.INTERNAL, details: errorMessage(error) }),
    );
  };
}

function providerImplementation(service: ProviderService): UntypedServiceImplementation {
  const implementation: UntypedServiceImplementation = {};
  for (const name of Object.keys(service) as (keyof ProviderService)[]) {
    // The loader hands over plain objects shaped as messages.ts describes; trust it at this seam.
    const method = service[name] as unknown as (request: object) => Promise<unknown>;
    implementation[name] = unary(method.bind(service));
  }
  return implementation;
}

export async function serveProvider(definition: ProviderDefinition): Promise<void> {
  checkPluginEnvironment();
  const protocol = loadProtocol();
  // Terraform's process group gets Ctrl-C; Terraform itself then calls StopProvider and Shutdown.
  process.on('SIGINT', () => {});

  const socketDir = mkdtempSync(join(tmpdir(), 'aegis-tf-'));
  const socketPath = join(socketDir, 'plugin.sock'); // short: unix socket paths end at ~107 bytes
  const cleanup = (): void => rmSync(socketDir, { recursive: true, force: true });
  process.on('exit', cleanup);

  const server = new Server({ 'grpc.max_receive_message_length': MAX_MESSAGE_BYTES, 'grpc.max_send_message_length': MAX_MESSAGE_BYTES });
  server.addService(protocol.provider, providerImplementation(createProviderService(definition)));
  const exit = (): void => {
    // Give the Shutdown reply time to leave, then go whether or not streams linger.
    setTimeout(() => process.exit(0), 200).unref();
    server.tryShutdown(() => process.exit(0));
  };
  server.addService(protocol.controller, {
    Shutdown: (_call: ServerUnaryCall<object, object>, callback: sendUnaryData<object>) => {
      callback(null, {});
      setImmediate(exit);
    },
  });

  const clientCert = process.env.TF_DISABLE_PLUGIN_TLS ? undefined : process.env.PLUGIN_CLIENT_CERT;
  const certificate = clientCert ? createServerCertificate() : undefined;
  const credentials = certificate && clientCert
    ? ServerCredentials.createSsl(Buffer.from(clientCert), [{ private_key: Buffer.from(certificate.keyPem), cert_chain: Buffer.from(certificate.certPem) }], true)
    : ServerCredentials.createInsecure();

  await new Promise<void>((resolve, reject) => {
    server.bindAsync(`unix:${socketPath}`, credentials, (error) => (error ? reject(error) : resolve()));
  });

  // Orphaned (Terraform killed without Shutdown): nobody will ever call us again.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) exit();
  }, 1000).unref();

  const cert = certificate ? certificate.der.toString('base64').replace(/=+$/, '') : '';
  process.stdout.write(`1|${PROTOCOL_VERSION}|unix|${socketPath}|grpc|${cert}\n`);
}
