// The event catalogue end to end: a real secrets scan of a git repository raises scan.started,
// vulnerability.created (one per new finding, with the finding as data.object) and scan.completed;
// the finding's triage raises vulnerability.updated, a rescan that no longer sees it
// vulnerability.resolved; key changes raise api_key.*. A webhook on a loopback receiver gets the
// vulnerability.created events signed, and the signature verifies with the exported helper — a
// tampered body or an old timestamp does not. GET /api/v1/events pages, filters by type and family,
// catches up from an id, and shows a key only the types its scopes can read.
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyServiceSignature } from '../../api/webhooks/signature.ts';
import { eventually } from '../support/gateway.ts';
import { keyInOrganization } from '../support/orgs.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

interface Received {
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

interface Event {
  id: string;
  object: 'event';
  type: string;
  version: number;
  organization_id: string;
  created_at: string;
  data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> };
}

let t: TestServer;
let repo: string;
let receiver: Server;
let receiverUrl: string;
const received: Received[] = [];

const execFileAsync = promisify(execFile);

const git = (...args: string[]) => execFileSync('git', ['-C', repo, '-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { stdio: 'pipe' }).toString();

beforeAll(async () => {
  t = await startTestServer({ allowLocalSources: true, allowPrivateTargets: true, rateLimitPerMinute: 100_000 });
  repo = await mkdtemp(join(tmpdir(), 'aegis-events-repo-'));
  await cp('test/fixtures/scanners/secrets/repo/src/github.js', join(repo, 'github.js'));
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'initial');
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/aegis`;
}, 60_000);

afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => receiver?.close(resolve));
  if (repo) await rm(repo, { recursive: true, force: true });
});

async function events(query = '', key?: string): Promise<Event[]> {
  const all: Event[] = [];
  let cursor: string | null = null;
  do {
    const sep = query ? '&' : '';
    const res: { status: number; text: string; body: { data: Event[]; pagination: { next: string | null } } } = await t.call('GET', `/api/v1/events?limit=200${sep}${query}${cursor ? `&cursor=${cursor}` : ''}`, key ? { key } : {});
    expect(res.status, res.text).toBe(200);
    all.push(...res.body.data);
    cursor = res.body.pagination.next;
  } while (cursor);
  return all;
}

async function scanOnce(): Promise<{ id: string; summary: Record<string, number> }> {
  const started = await t.call('POST', '/api/v1/secrets/scans', { body: { target: `file://${repo}` } });
  expect(started.status, started.text).toBe(202);
  let scan = started.body;
  await eventually(async () => {
    scan = (await t.call('GET', `/api/v1/scans/${started.body.id}`)).body;
    return ['completed', 'failed', 'canceled'].includes(scan.status);
  }, 60_000, 100);
  expect(scan.status, scan.error ?? '').toBe('completed');
  return scan;
}

describe('events from a real scan', () => {
  let webhookSecret: string;
  let scanId: string;
  let findingIds: string[];

  it('a scan raises scan.started, one vulnerability.created per new finding, then scan.completed', async () => {
    const hook = await t.call('POST', '/api/v1/webhooks', { body: { url: receiverUrl, events: ['vulnerability.*'], description: 'events test' } });
    expect(hook.status, hook.text).toBe(201);
    webhookSecret = hook.body.secret;

    const scan = await scanOnce();
    scanId = scan.id;
    const findings = (await t.call('GET', `/api/v1/vulnerabilities?scan_id=${scan.id}&limit=200`)).body.data as { id: string; status: string }[];
    expect(findings.length).toBeGreaterThan(0);
    findingIds = findings.map((f) => f.id).sort();

    const all = await events();
    const ofScan = all.filter((e) => e.data.object.id === scan.id);
    expect(ofScan.map((e) => e.type).sort()).toEqual(['scan.completed', 'scan.started']);
    const completed = ofScan.find((e) => e.type === 'scan.completed')!;
    expect(completed.data.object).toMatchObject({ id: scan.id, status: 'completed', summary: { new: findings.length } });
    const created = all.filter((e) => e.type === 'vulnerability.created');
    expect(created.map((e) => e.data.object.id).sort()).toEqual(findingIds);
    for (const e of created) {
      expect(e).toMatchObject({ object: 'event', version: 1, id: expect.stringMatching(/^evt_/) });
      expect(e.data.object).toMatchObject({ status: 'open', first_scan_id: scan.id });
    }
    // Newest first, and each finding's event before the scan's completion (they share its transaction).
    expect(all.map((e) => e.id)).toEqual(all.map((e) => e.id).sort().reverse());
    expect(created.every((e) => e.id < completed.id)).toBe(true);
  }, 90_000);

  it('the receiver gets each vulnerability.created, signed so that the helper verifies it', async () => {
    await eventually(async () => received.filter((r) => r.headers['x-service-event-type'] === 'vulnerability.created').length >= findingIds.length, 20_000, 50);
    const deliveries = received.filter((r) => r.headers['x-service-event-type'] === 'vulnerability.created');
    const ids = new Set<string>();
    for (const delivery of deliveries) {
      const header = String(delivery.headers['x-service-signature']);
      expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(verifyServiceSignature(delivery.body, header, webhookSecret)).toBe(true);
      const event = JSON.parse(delivery.body) as Event;
      expect(delivery.headers['x-service-event-id']).toBe(event.id);
      ids.add(String(event.data.object.id));
    }
    expect([...ids].sort()).toEqual(findingIds);

    const [sample] = deliveries;
    const header = String(sample!.headers['x-service-signature']);
    // One changed byte in the body, another secret, or a timestamp past the tolerance: refused.
    expect(verifyServiceSignature(sample!.body.replace('"open"', '"opeN"'), header, webhookSecret)).toBe(false);
    expect(verifyServiceSignature(sample!.body, header, `${webhookSecret}x`)).toBe(false);
    const t0 = Number(/t=(\d+)/.exec(header)![1]);
    expect(verifyServiceSignature(sample!.body, header, webhookSecret, 300, t0 + 301)).toBe(false);
    expect(verifyServiceSignature(sample!.body, header, webhookSecret, 300, t0 + 299)).toBe(true);
  }, 30_000);

  it('a receiver in another project verifies the same delivery with `aegis/webhooks`, the package export', async () => {
    // The export points into dist/ (npm ci builds it); rebuilt here only if the sources are newer.
    await execFileAsync(process.execPath, ['build/bundle.mjs', '--if-stale'], { timeout: 120_000 });
    const project = await mkdtemp(join(tmpdir(), 'aegis-receiver-'));
    try {
      await mkdir(join(project, 'node_modules'));
      await symlink(process.cwd(), join(project, 'node_modules', 'aegis'), 'dir');
      const delivery = received.find((r) => r.headers['x-service-event-type'] === 'vulnerability.created')!;
      await writeFile(join(project, 'body.json'), delivery.body);
      await writeFile(
        join(project, 'check.mjs'),
        [
          "import { readFileSync } from 'node:fs';",
          "import { verifyServiceSignature } from 'aegis/webhooks';",
          "const body = readFileSync(new URL('./body.json', import.meta.url));",
          'const [header, secret] = process.argv.slice(2);',
          'console.log(verifyServiceSignature(body, header, secret), verifyServiceSignature(Buffer.concat([body, Buffer.from(" ")]), header, secret));',
        ].join('\n'),
      );
      const run = await execFileAsync(process.execPath, [join(project, 'check.mjs'), String(delivery.headers['x-service-signature']), webhookSecret], { cwd: project });
      expect(run.stdout.trim()).toBe('true false');
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  }, 150_000);

  it('triage raises vulnerability.updated with the old values; a rescan that no longer sees it, vulnerability.resolved', async () => {
    const [first, second] = findingIds;
    const acked = await t.call('PATCH', `/api/v1/vulnerabilities/${first}`, { body: { status: 'acknowledged', notes: 'rotating it' } });
    expect(acked.status, acked.text).toBe(200);
    const updated = (await events('type=vulnerability.updated')).filter((e) => e.data.object.id === first);
    expect(updated).toHaveLength(1);
    expect(updated[0]!.data.object).toMatchObject({ status: 'acknowledged', notes: 'rotating it' });
    expect(updated[0]!.data.previous_attributes).toEqual({ status: 'open', notes: '' });

    // Notes set to what they are: no change, no event.
    await t.call('PATCH', `/api/v1/vulnerabilities/${first}`, { body: { notes: 'rotating it' } });
    expect((await events('type=vulnerability.updated')).filter((e) => e.data.object.id === first)).toHaveLength(1);

    const closed = await t.call('PATCH', `/api/v1/vulnerabilities/${second}`, { body: { status: 'resolved' } });
    expect(closed.status, closed.text).toBe(200);
    const resolvedByHand = (await events('type=vulnerability.resolved')).find((e) => e.data.object.id === second)!;
    expect(resolvedByHand.data.object).toMatchObject({ status: 'resolved', resolution: 'manual' });
    expect(resolvedByHand.data.previous_attributes).toMatchObject({ status: 'open', resolution: null });

    // The secret is removed: the rescan resolves every remaining finding as fixed.
    git('rm', '-q', 'github.js');
    git('commit', '-q', '-m', 'remove the key');
    await scanOnce();
    const fixed = (await events('type=vulnerability.resolved')).filter((e) => e.data.object.resolution === 'fixed');
    expect(fixed.map((e) => e.data.object.id).sort()).toEqual(findingIds.filter((id) => id !== second));
    for (const e of fixed) expect(e.data.previous_attributes?.status).not.toBe('resolved');
  }, 90_000);

  it('the family filter, catching up from an id, and one event by id', async () => {
    const family = await events('type=vulnerability.*');
    expect(family.length).toBeGreaterThan(findingIds.length);
    expect(new Set(family.map((e) => e.type))).toEqual(new Set(['vulnerability.created', 'vulnerability.updated', 'vulnerability.resolved']));
    const scans = await events('type=scan.started,scan.completed');
    expect(scans.map((e) => e.type).sort()).toEqual(['scan.completed', 'scan.completed', 'scan.started', 'scan.started']);

    const all = await events();
    const oldest = all[all.length - 1]!;
    const newer = await events(`ending_before=${oldest.id}`);
    expect(newer.map((e) => e.id)).toEqual(all.slice(0, -1).map((e) => e.id));

    const one = await t.call('GET', `/api/v1/events/${oldest.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(oldest);
    expect((await t.call('GET', '/api/v1/events/evt_nope')).status).toBe(404);
    expect(scanId).toMatch(/^scan_/);
  });
});

describe('who sees which events', () => {
  it('api_key.created and api_key.revoked carry the key without its value', async () => {
    const created = await t.call('POST', '/api/v1/api-keys', { body: { name: 'events reader', scopes: ['scans:read'] } });
    expect(created.status).toBe(201);
    const revoked = await t.call('DELETE', `/api/v1/api-keys/${created.body.id}`);
    expect(revoked.status).toBe(200);
    const keyEvents = (await events('type=api_key.*')).filter((e) => e.data.object.id === created.body.id);
    expect(keyEvents.map((e) => e.type)).toEqual(['api_key.revoked', 'api_key.created']);
    expect(keyEvents[0]!.data.object).toMatchObject({ status: 'revoked', name: 'events reader' });
    expect(JSON.stringify(keyEvents)).not.toContain(created.body.key);
  });

  it('a scans:read key lists only scan events, and an event of another type is 404 to it', async () => {
    const reader = (await t.call('POST', '/api/v1/api-keys', { body: { name: 'scan reader', scopes: ['scans:read'] } })).body.key as string;
    const seen = await events('', reader);
    expect(seen.length).toBeGreaterThan(0);
    expect(new Set(seen.map((e) => e.type.split('.')[0]))).toEqual(new Set(['scan']));
    // Asking for a type it cannot read gives nothing, not an error.
    expect(await events('type=vulnerability.created', reader)).toEqual([]);
    const vulnerabilityEvent = (await events('type=vulnerability.created'))[0]!;
    expect((await t.call('GET', `/api/v1/events/${vulnerabilityEvent.id}`, { key: reader })).status).toBe(404);
  });

  it('another organisation sees none of them', async () => {
    const stranger = await keyInOrganization(t, 'events-stranger', ['admin']);
    expect(await events('', stranger)).toEqual([]);
    const mine = (await events())[0]!;
    expect((await t.call('GET', `/api/v1/events/${mine.id}`, { key: stranger })).status).toBe(404);
  });
});
