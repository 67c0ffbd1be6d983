// The gateway's TLS port as an operator turns it on: `aegis serve --shield-tls-port N`,
// `aegis shield --tls-port N` and AEGIS_SHIELD_TLS_PORT, each a real process; and
// `aegis shield --workers 2 --tls-port N`, where every worker serves TLS on the one shared port
// (node:cluster hands each accepted connection to a worker in turn). Which worker answered is read
// from the primary's aggregated metrics, as test/gateway/cluster.test.ts does.
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCa, makeLeaf, setSiteTls, storeTestCertificate, testServerKey, type TestCa } from '../support/certificates.ts';
import { eventually } from '../support/gateway.ts';
import { startOrigin, type Origin } from '../support/origin.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { freePort } from '../support/loopback.ts';
import { PROCESS_TEST_TIMEOUT_MS, startAegis as startAegisProcess, stopAegis, type RunningAegis } from '../support/aegis-process.ts';

const onPostgres = Boolean(process.env.DATABASE_URL);

type Running = RunningAegis;

/** `aegis ARGS` as a child process, once its output matches `ready` (test/support/aegis-process.ts). */
const startAegis = (args: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<Running> =>
  startAegisProcess(args, { AEGIS_FROM_SOURCE: '1', AEGIS_LOG_LEVEL: 'warn', REDIS_URL: '', ...env }, ready);

const stop = stopAegis;

/** A handshake for a name no site serves: the TLS listener refuses it with unrecognized_name (112). */
function unknownNameAlert(port: number): Promise<string> {
  return new Promise((done) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'nobody.tls-cli.test', rejectUnauthorized: false });
    socket.once('secureConnect', () => {
      socket.destroy();
      done('handshake completed');
    });
    socket.once('error', (err) => done(err.message));
  });
}

const temporaryDirs: string[] = [];
const dataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'aegis-tls-cli-'));
  temporaryDirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of temporaryDirs) rmSync(dir, { recursive: true, force: true });
});

// `aegis serve` on the embedded database: what is checked is that the flag starts a TLS listener
// on that port, not certificates (tls.test.ts has those).
describe('aegis serve --shield-tls-port', () => {
  const env = { DATABASE_URL: '' };

  it('terminates TLS on the port it names', async () => {
    const tlsPort = await freePort();
    const served = await startAegis(['serve', '--host', '127.0.0.1', '--port', '0', '--shield-port', '0', '--shield-tls-port', String(tlsPort), '--data-dir', dataDir()], env, /Shield TLS (https:\/\/\S+)/);
    try {
      expect(new URL(served.match[1]!).port).toBe(String(tlsPort));
      expect(await unknownNameAlert(tlsPort)).toMatch(/unrecognized name|alert number 112/i);
    } finally {
      expect(await stop(served)).toBe(0);
    }
  }, PROCESS_TEST_TIMEOUT_MS);

  it('refuses a value that is not a port number, naming the flag', async () => {
    const refused = await startAegis(['serve', '--port', '0', '--shield-port', '0', '--shield-tls-port', 'x', '--data-dir', dataDir()], env, /Shield TLS/).then(
      async (running) => `started: ${running.output()} (exit ${await stop(running)})`,
      (err: unknown) => String(err),
    );
    expect(refused).toContain('--shield-tls-port must be a non-negative integer, got "x"');
  }, PROCESS_TEST_TIMEOUT_MS);
});

// The flag is read before `aegis shield` asks for PostgreSQL, so a bad value is refused without one.
describe('aegis shield --tls-port, a bad value', () => {
  it('refuses a value that is not a port number, naming its own flag', async () => {
    const refused = await startAegis(['shield', '--workers', '1', '--shield-port', '0', '--tls-port', 'x', '--data-dir', dataDir()], { DATABASE_URL: '' }, /listening on/).then(
      async (running) => `started: ${running.output()} (exit ${await stop(running)})`,
      (err: unknown) => String(err),
    );
    expect(refused).toContain('--tls-port must be a non-negative integer, got "x"');
    expect(refused).not.toContain('--shield-tls-port');
  }, PROCESS_TEST_TIMEOUT_MS);
});

// `aegis shield` needs PostgreSQL (the embedded database belongs to one process).
describe.skipIf(!onPostgres)('aegis shield --tls-port', () => {
  let t: TestServer;
  let origin: Origin;
  let ca: TestCa;
  let cluster: Running;
  let tlsPort: number;
  let metricsUrl: string;

  beforeAll(async () => {
    origin = await startOrigin();
    ca = makeCa();
    t = await startTestServer({ rateLimitPerMinute: 100_000 });
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    cluster = await startAegis(
      ['shield', '--workers', '2', '--host', '127.0.0.1', '--shield-port', '0', '--tls-port', '0', '--data-dir', t.database.dataDir],
      { DATABASE_URL: t.database.databaseUrl, AEGIS_METRICS_PORT: String(metricsPort) },
      /listening on \S+ and (https:\/\/\S+) \(TLS\) \(2 workers/,
    );
    tlsPort = Number(new URL(cluster.match[1]!).port);
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(async () => {
    await stop(cluster);
    await t?.close();
    await origin?.close();
    ca?.close();
  });

  /** One HTTPS request on a connection of its own, so the cluster hands each to a worker in turn. */
  const fresh = (host: string, path: string) =>
    new Promise<{ status: number; fingerprint: string }>((done, fail) => {
      const req = httpsRequest({ host: '127.0.0.1', port: tlsPort, servername: host, path, headers: { host }, ca: ca.certPem, agent: false }, (res) => {
        const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
        res.resume();
        res.on('end', () => done({ status: res.statusCode ?? 0, fingerprint }));
      });
      req.on('error', fail);
      req.end();
    });

  /** Decisions per worker slot, from the primary's aggregated metrics. */
  async function decisionsByWorker(): Promise<Map<string, number>> {
    const text = await (await fetch(metricsUrl)).text();
    const counts = new Map<string, number>();
    for (const m of text.matchAll(/^aegis_shield_worker_decisions\{worker="(\d+)"\} (\d+)/gm)) counts.set(m[1]!, Number(m[2]));
    return counts;
  }

  it('aegis shield --tls-port N, and AEGIS_SHIELD_TLS_PORT=N', async () => {
    const [flagPort, envPort] = await Promise.all([freePort(), freePort()]);
    const db = { DATABASE_URL: t.database.databaseUrl };
    const listening = /listening on \S+ and (https:\/\/\S+) \(TLS\)/;
    const [flag, fromEnv] = await Promise.all([
      startAegis(['shield', '--workers', '1', '--host', '127.0.0.1', '--shield-port', '0', '--tls-port', String(flagPort), '--data-dir', t.database.dataDir], db, listening),
      startAegis(['shield', '--workers', '1', '--host', '127.0.0.1', '--shield-port', '0', '--data-dir', t.database.dataDir], { ...db, AEGIS_SHIELD_TLS_PORT: String(envPort) }, listening),
    ]);
    try {
      expect(new URL(flag.match[1]!).port).toBe(String(flagPort));
      expect(new URL(fromEnv.match[1]!).port).toBe(String(envPort));
      expect(await unknownNameAlert(flagPort)).toMatch(/unrecognized name|alert number 112/i);
      expect(await unknownNameAlert(envPort)).toMatch(/unrecognized name|alert number 112/i);
    } finally {
      expect(await stop(flag)).toBe(0);
      expect(await stop(fromEnv)).toBe(0);
    }
  }, PROCESS_TEST_TIMEOUT_MS);

  it('serves HTTPS from every worker, with the certificate stored once in the database', async () => {
    const host = 'workers.tls-cli.test';
    const created = await t.call('POST', '/api/v1/shield/sites', { body: { domain: host, origin_url: origin.url, mode: 'block', tls: { mode: 'off' } } });
    expect(created.status, created.text).toBe(201);
    const siteId = created.body.id as string;
    const { org_id: orgId } = await t.server.database.db.selectFrom('shield_sites').select('org_id').where('id', '=', siteId).executeTakeFirstOrThrow();
    const leaf = makeLeaf(ca, [host]);
    await setSiteTls(t.server.database.db, siteId, { mode: 'custom' });
    await storeTestCertificate(t.server.database.db, await testServerKey(t.database.dataDir), { siteId, orgId, chainPem: leaf.chainPem, keyPem: leaf.keyPem });

    // Every worker has the site and its certificate once four connections in a row succeed.
    await eventually(async () => {
      const answers = await Promise.all([0, 1, 2, 3].map((i) => fresh(host, `/ready/${i}`).catch(() => ({ status: 0, fingerprint: '' }))));
      return answers.every((a) => a.status === 200);
    }, 20_000, 200);

    const before = await decisionsByWorker();
    const answers: { status: number; fingerprint: string }[] = [];
    for (let i = 0; i < 10; i++) answers.push(await fresh(host, `/tls/${i}`));
    const after = await decisionsByWorker();
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    expect(new Set(answers.map((a) => a.fingerprint))).toEqual(new Set([leaf.fingerprint]));
    const served = [...after].map(([slot, n]) => n - (before.get(slot) ?? 0));
    expect(served).toHaveLength(2);
    expect(served.every((n) => n > 0)).toBe(true);
    expect(served.reduce((a, b) => a + b, 0)).toBe(10);

    // The handshakes are counted by the workers and summed by the primary.
    const text = await (await fetch(metricsUrl)).text();
    expect(Number(/^aegis_shield_tls_handshakes_total\{result="ok",protocol="http\/1\.1"\} (\d+)/m.exec(text)?.[1] ?? 0)).toBeGreaterThanOrEqual(10);
  }, 60_000);
});
