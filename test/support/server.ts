// Starts a real Aegis server (the same startServer as `aegis serve`) on a fresh clone of the test
// database, on a random port, and speaks HTTP to it.
import { rmSync } from 'node:fs';
import { Writable } from 'node:stream';
import { inject } from 'vitest';
import { loadConfig, type ServerConfig } from '../../api/config.ts';
import { startServer, type RunningServer } from '../../api/server.ts';
import { syncConfigDirectory } from '../../reconciler/sync/config-repo-sync.ts';
import { generateKey } from '../../api/accounts/keys/key-material.ts';
import { cloneDatabase, type TestDatabase } from './database-template.ts';

export interface CallOptions {
  key?: string | null;
  body?: unknown;
  /** Raw body, sent as is (with the content type from headers). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

export interface Response<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface TestServer {
  url: string;
  /** The admin key of organisation `default`. */
  adminKey: string;
  server: RunningServer;
  database: TestDatabase;
  /** Every log line written so far. */
  logs: string[];
  call<T = any>(method: string, path: string, options?: CallOptions): Promise<Response<T>>;
  close(): Promise<void>;
}

export async function request<T>(baseUrl: string, method: string, path: string, options: CallOptions = {}): Promise<Response<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | Buffer | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(baseUrl + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

export async function startTestServer(overrides: Partial<ServerConfig> = {}, database?: TestDatabase): Promise<TestServer> {
  const db = database ?? (await cloneDatabase(inject('databaseTemplate')));
  const adminKey = generateKey();
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const config: ServerConfig = {
    ...loadConfig({ host: '127.0.0.1', port: '0', dataDir: db.dataDir }, {}),
    databaseUrl: db.databaseUrl,
    bootstrapApiKey: adminKey,
    logLevel: 'info',
    logStream,
    // The gateway is opted into by the tests that send traffic through it; elsewhere it would only
    // poll the database. Port 0 so that servers started in parallel never collide.
    shieldEnabled: false,
    shieldPort: 0,
    // Dozens of servers start in one test process; the few that scan pay for their first thread.
    warmScanThreads: false,
    // No test reaches a real ACME CA: a server with a TLS port orders certificates only in the tests
    // that run pebble and say so (test/shield/acme.test.ts); elsewhere the scheduler's pass never
    // comes round again after start-up, and an order would find no directory.
    acmeDirectoryUrl: 'https://acme.invalid/directory',
    acmeCheckIntervalMs: 2_147_483_647,
    // Suites sign in newcomers who get organisations of their own (the hosted service's open
    // sign-up); the invite-only default of a self-hosted server is tested where a test asks for it.
    signup: 'open',
    ...overrides,
  };
  // Wired as `aegis serve` wires it: config-repo syncs run the reconciler.
  const server = await startServer(config, { configSync: syncConfigDirectory });
  return {
    url: server.url,
    adminKey: config.bootstrapApiKey ?? adminKey,
    server,
    database: db,
    logs,
    call: (method, path, options = {}) => request(server.url, method, path, { key: adminKey, ...options }),
    async close() {
      await server.close();
      if (!database) rmSync(db.dataDir, { recursive: true, force: true });
    },
  };
}
