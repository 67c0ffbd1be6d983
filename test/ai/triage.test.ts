// AI triage end to end: a real server with its worker, findings from real SAST and secrets scans of
// a git repository on disk, the customer's model played by the OpenAI and Anthropic stand-ins
// (test/support/providers), which speak the documented wire protocols to the official SDKs. Each
// organisation below has its own connection (or none), so their budgets and quotas are their own.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProviderSettings } from '../../api/integrations/providers/settings.ts';
import { eventually } from '../support/gateway.ts';
import { keyInOrganization } from '../support/orgs.ts';
import { startAnthropicStandIn } from '../support/providers/anthropic.ts';
import { startOpenAiStandIn, type ModelStandIn } from '../support/providers/openai.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

interface Triage {
  object: 'triage';
  vulnerability_id: string;
  status: 'pending' | 'completed' | 'failed';
  trigger: 'manual' | 'auto';
  requested_by: string | null;
  completed_at: string | null;
  engine: { provider: string; model: string; integration_id: string | null } | null;
  result: { verdict: string; confidence: number; explanation: string; suggested_fix: { summary: string; patch: string | null } } | null;
  usage: { input_tokens: number; output_tokens: number };
  attempts: number;
  redactions: number;
  error: string | null;
  job_id: string | null;
}

interface Finding {
  id: string;
  scan_type: string;
  rule_id: string;
  severity: string;
  cwe: string | null;
  status: string;
  resolution: string | null;
  updated_at: string;
  location: { path?: string; line?: number };
  details: { source_window?: { text: string } };
  triage: Omit<Triage, 'object' | 'vulnerability_id'> | null;
}

/** A GitHub classic PAT with a valid checksum (test/fixtures/scanners/secrets/repo/src/github.js): the secrets scan finds it. */
const TOKEN = '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';

/** An Express route concatenating the query string into SQL, three times (three findings), a leaked token beside it. */
const USERS_JS = `'use strict';
const express = require('express');
const { Pool } = require('pg');

const router = express.Router();
const db = new Pool();
const auditToken = '${TOKEN}';

// Lookup of users by name for the admin screen.
router.get('/users', async (req, res) => {
  const name = req.query.name;
  const result = await db.query("SELECT id, email FROM users WHERE name = '" + name + "'");
  res.json({ users: result.rows, audit: auditToken.length });
});

router.get('/orders', async (req, res) => {
  const status = req.query.status;
  const result = await db.query("SELECT id FROM orders WHERE status = '" + status + "'");
  res.json(result.rows);
});

router.get('/products', async (req, res) => {
  const sku = req.query.sku;
  const result = await db.query('SELECT * FROM products WHERE sku = ' + sku);
  res.json(result.rows);
});

module.exports = router;
`;

let t: TestServer;
let openai: ModelStandIn;
let anthropic: ModelStandIn;
let repo: string;

const keys = new Map<string, string>();
const keyOf = (org: string): string => keys.get(org)!;

async function connect(org: string, provider: 'openai' | 'anthropic', standIn: ModelStandIn, settings: Record<string, unknown> = {}): Promise<string> {
  const res = await t.call('POST', `/api/v1/integrations/${provider}/connect`, { key: keyOf(org), body: { token: standIn.apiKey, settings: { ai: settings } } });
  expect(res.status, res.text).toBe(201);
  expect(res.body.status).toBe('active');
  expect(res.text).not.toContain(standIn.apiKey);
  return res.body.id;
}

/** Runs a code scan of the repository in `org` and returns its findings. */
async function scan(org: string, type: 'sast' | 'secrets'): Promise<Finding[]> {
  const started = await t.call('POST', `/api/v1/${type}/scans`, { key: keyOf(org), body: { target: `file://${repo}` } });
  expect(started.status, started.text).toBe(202);
  let status = '';
  await eventually(async () => {
    status = (await t.call('GET', `/api/v1/scans/${started.body.id}`, { key: keyOf(org) })).body.status;
    return ['completed', 'failed', 'canceled'].includes(status);
  }, 90_000, 100);
  expect(status).toBe('completed');
  return (await t.call('GET', `/api/v1/vulnerabilities?scan_id=${started.body.id}&limit=200`, { key: keyOf(org) })).body.data as Finding[];
}

const sqlInjections = (findings: Finding[]): Finding[] => findings.filter((f) => f.cwe === 'CWE-89').sort((a, b) => (a.location.line ?? 0) - (b.location.line ?? 0));

const requestTriage = (org: string, id: string, body?: unknown) => t.call('POST', `/api/v1/vulnerabilities/${id}/triage`, { key: keyOf(org), ...(body === undefined ? {} : { body }) });

async function triageOf(org: string, id: string): Promise<Triage> {
  const res = await t.call('GET', `/api/v1/vulnerabilities/${id}/triage`, { key: keyOf(org) });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Polls until the triage is no longer pending. */
async function settled(org: string, id: string, timeoutMs = 30_000): Promise<Triage> {
  let triage = await triageOf(org, id);
  await eventually(async () => {
    triage = await triageOf(org, id);
    return triage.status !== 'pending';
  }, timeoutMs, 50);
  return triage;
}

async function triaged(org: string, id: string, body?: unknown): Promise<Triage> {
  const res = await requestTriage(org, id, body);
  expect(res.status, res.text).toBe(202);
  expect(res.body).toMatchObject({ object: 'triage', vulnerability_id: id, status: 'pending' });
  return settled(org, id);
}

const usage = async (org: string) => (await t.call('GET', '/api/v1/triage/usage', { key: keyOf(org) })).body;
const finding = async (org: string, id: string): Promise<Finding> => (await t.call('GET', `/api/v1/vulnerabilities/${id}`, { key: keyOf(org) })).body;

/** Every byte any model stand-in received. */
const everythingSent = (): string => [...openai.calls, ...anthropic.calls].map((c) => c.raw).join('\n');

// Per organisation: `main` (OpenAI), `budget` (OpenAI, 1 000 tokens a month), `claude` (Anthropic),
// `trial` (no connection: the fallback, quota 2), `auto` (OpenAI with auto triage).
const ORGS = ['main', 'budget', 'claude', 'trial', 'auto'] as const;
const findings = new Map<string, Finding[]>();
const connections = new Map<string, string>();

beforeAll(async () => {
  openai = await startOpenAiStandIn();
  anthropic = await startAnthropicStandIn();
  t = await startTestServer({
    providers: { ...loadProviderSettings({}), openai: openai.settings, anthropic: anthropic.settings },
    allowLocalSources: true,
    allowPrivateTargets: true,
    rateLimitPerMinute: 100_000,
    triage: { fallbackMonthlyQuota: 2, defaultMonthlyTokenBudget: 1_000_000 },
  });
  keys.set('main', t.adminKey);
  for (const org of ORGS.slice(1)) keys.set(org, await keyInOrganization(t, `triage-${org}`, ['admin']));

  repo = await mkdtemp(join(tmpdir(), 'aegis-triage-repo-'));
  await mkdir(join(repo, 'src', 'routes'), { recursive: true });
  await writeFile(join(repo, 'src', 'routes', 'users.js'), USERS_JS);
  const git = (...args: string[]) => execFileSync('git', ['-C', repo, '-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'users route');

  connections.set('main', await connect('main', 'openai', openai));
  connections.set('budget', await connect('budget', 'openai', openai, { monthly_token_budget: 1000 }));
  connections.set('claude', await connect('claude', 'anthropic', anthropic));
  for (const org of ['main', 'budget', 'claude', 'trial'] as const) findings.set(org, await scan(org, 'sast'));
  findings.set('main-secrets', await scan('main', 'secrets'));
  for (const org of ['main', 'budget', 'claude', 'trial'] as const) expect(sqlInjections(findings.get(org)!).length, org).toBe(3);
}, 240_000);

afterAll(async () => {
  await t?.close();
  await openai?.close();
  await anthropic?.close();
  if (repo) await rm(repo, { recursive: true, force: true });
});

describe('requests', () => {
  it('404 for an unknown finding or one of another organisation; GET is 404 until triaged', async () => {
    const unknown = await requestTriage('main', 'vuln_doesnotexist');
    expect(unknown.status, unknown.text).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
    const theirs = sqlInjections(findings.get('trial')!)[0]!;
    expect((await requestTriage('main', theirs.id)).status).toBe(404);
    const mine = sqlInjections(findings.get('main')!)[2]!;
    const none = await t.call('GET', `/api/v1/vulnerabilities/${mine.id}/triage`);
    expect(none.status).toBe(404);
    expect(none.body.error).toMatchObject({ code: 'not_found', message: expect.stringMatching(/not been triaged yet/) });
    expect((await finding('main', mine.id)).triage).toBeNull();
    const bad = await requestTriage('main', mine.id, { engine: 'gpt' });
    expect(bad.status).toBe(422);
  });
});

describe('the API reference', () => {
  it('documents the triage routes with their schemas and refusals', async () => {
    const doc = (await t.call('GET', '/api/v1/openapi.json', { key: null })).body;
    const post = doc.paths['/api/v1/vulnerabilities/{id}/triage'].post;
    expect(post.tags).toEqual(['Triage']);
    expect(post['x-required-scope']).toBe('vulnerabilities:write');
    expect(post.requestBody.content['application/json'].schema.properties.engine.enum).toEqual(['auto', 'fallback']);
    expect(post.responses['202'].content['application/json'].schema.properties.result.properties.verdict.enum).toEqual(['likely_true_positive', 'likely_false_positive', 'needs_review']);
    expect(post.responses['402'].description).toMatch(/triage_quota_exceeded/);
    expect(post.responses['429'].description).toMatch(/ai_budget_exhausted/);
    expect(doc.paths['/api/v1/vulnerabilities/{id}/triage'].get['x-required-scope']).toBe('vulnerabilities:read');
    expect(doc.paths['/api/v1/triage/usage'].get.responses['200'].content['application/json'].schema.required).toContain('fallback_quota');
    expect(doc.paths['/api/v1/vulnerabilities/{id}'].get.responses['200'].content['application/json'].schema.properties.triage).toBeDefined();
  });
});

describe('with an OpenAI-compatible connection', () => {
  it('triages a real SQL-injection finding: structured verdict, engine, usage; the prompt carries the code window; the status is unchanged', async () => {
    const sqli = sqlInjections(findings.get('main')!)[0]!;
    expect(sqli.scan_type).toBe('sast');
    expect(sqli.details.source_window?.text).toContain("router.get('/users'");
    const before = await finding('main', sqli.id);
    const calls = openai.calls.length;

    const triage = await triaged('main', sqli.id);
    expect(triage).toMatchObject({
      status: 'completed',
      trigger: 'manual',
      engine: { provider: 'openai', model: 'gpt-4.1-mini', integration_id: connections.get('main') },
      result: { verdict: 'likely_true_positive', confidence: 0.85, suggested_fix: { summary: expect.any(String) } },
      attempts: 1,
      error: null,
    });
    expect(triage.result!.explanation).toMatch(/SQL injection/);
    expect(triage.usage.input_tokens).toBeGreaterThan(0);
    expect(triage.usage.output_tokens).toBeGreaterThan(0);

    expect(openai.calls.length).toBe(calls + 1);
    const call = openai.calls[calls]!;
    expect(call.path).toBe('/v1/chat/completions');
    expect(call.model).toBe('gpt-4.1-mini');
    expect(call.body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'triage_verdict', strict: true, schema: { type: 'object' } } });
    // The finding's source window, beyond its own line: the comment and handler around it.
    expect(call.prompt).toContain('Lookup of users by name for the admin screen.');
    expect(call.prompt).toContain("SELECT id, email FROM users WHERE name = '");
    expect(call.prompt).toContain('CWE-89');
    expect(openai.rejected).toEqual([]);

    const after = await finding('main', sqli.id);
    expect(after.triage).toMatchObject({ status: 'completed', result: triage.result, engine: triage.engine, usage: triage.usage });
    expect({ status: after.status, resolution: after.resolution, updated_at: after.updated_at }).toEqual({ status: before.status, resolution: before.resolution, updated_at: before.updated_at });
    expect(after.status).toBe('open');

    const month = await usage('main');
    expect(month).toMatchObject({ object: 'triage_usage', engine: 'openai', integration_id: connections.get('main'), token_budget: 1_000_000, fallback_quota: null, triages: 1 });
    expect(month.tokens_used).toBe(triage.usage.input_tokens + triage.usage.output_tokens);

    const audit = (await t.call('GET', '/api/v1/audit-log?action=vulnerability.triage_requested&limit=100')).body.data as { target: { id: string } }[];
    expect(audit.some((a) => a.target.id === sqli.id)).toBe(true);
  }, 60_000);

  it('a malformed answer is asked for again once; malformed twice fails the triage with the reason', async () => {
    const sqli = sqlInjections(findings.get('main')!)[1]!;
    const calls = openai.calls.length;
    openai.answers.push({ text: 'I think this is probably fine.' }, { json: { verdict: 'maybe', confidence: 2 } });
    const failed = await triaged('main', sqli.id);
    expect(openai.calls.length).toBe(calls + 2);
    expect(failed).toMatchObject({ status: 'failed', result: null, attempts: 2, engine: { provider: 'openai', integration_id: connections.get('main') } });
    expect(failed.error).toMatch(/did not match the triage schema, twice/);
    expect(openai.calls[calls + 1]!.prompt).toContain('Your previous answer was invalid:');
    expect(openai.calls[calls + 1]!.prompt).toContain('answer again with only the JSON object');
    // The tokens of both calls were spent all the same.
    expect(failed.usage.input_tokens).toBeGreaterThan(0);
    expect((await finding('main', sqli.id)).status).toBe('open');

    // Malformed, then valid: completed on the second attempt.
    openai.answers.push({ text: '{"verdict": "likely_true_positive"' });
    const completed = await triaged('main', sqli.id);
    expect(openai.calls.length).toBe(calls + 4);
    expect(completed).toMatchObject({ status: 'completed', attempts: 2, error: null, result: { verdict: 'likely_true_positive' } });
    expect(openai.rejected).toEqual([]);
  }, 60_000);

  it('a secrets finding: the full secret never reaches the provider', async () => {
    const secret = findings.get('main-secrets')!.find((f) => f.rule_id === 'github-pat');
    expect(secret, JSON.stringify(findings.get('main-secrets')!.map((f) => f.rule_id))).toBeDefined();
    const calls = openai.calls.length;
    const triage = await triaged('main', secret!.id);
    expect(triage.status).toBe('completed');
    expect(openai.calls.length).toBe(calls + 1);
    // The call was about this finding (its file and rule), with the secret masked.
    expect(openai.calls[calls]!.prompt).toContain('src/routes/users.js');
    expect(openai.calls[calls]!.prompt).toContain('github-pat');
    expect(openai.calls[calls]!.raw).not.toContain(TOKEN);
    // Nor did any other call (the SQL-injection windows include the line that holds it).
    expect(everythingSent()).not.toContain(TOKEN);
    expect(everythingSent()).not.toContain(TOKEN.slice(4));
  }, 60_000);

  it('a rate limit (429 with Retry-After) retries the job, which then completes; a request while pending answers with that triage', async () => {
    const sqli = sqlInjections(findings.get('main')!)[2]!;
    const calls = openai.calls.length;
    openai.answers.push({ status: 429, retryAfterSeconds: 1 });
    const first = await requestTriage('main', sqli.id);
    expect(first.status, first.text).toBe(202);
    await eventually(async () => openai.calls.length > calls, 20_000, 20);
    const again = await requestTriage('main', sqli.id);
    expect(again.status, again.text).toBe(202);
    expect(again.body).toMatchObject({ status: 'pending', job_id: first.body.job_id });
    const done = await settled('main', sqli.id);
    expect(done).toMatchObject({ status: 'completed', job_id: first.body.job_id, attempts: 1 });
    expect(openai.calls.length).toBe(calls + 2);
    const job = await t.server.database.db.selectFrom('jobs').select(['state', 'attempts']).where('id', '=', first.body.job_id).executeTakeFirstOrThrow();
    expect(job).toEqual({ state: 'completed', attempts: 2 });
  }, 60_000);
});

describe('budget', () => {
  it('once the month’s token budget is spent: 429 ai_budget_exhausted with Retry-After and a clear message', async () => {
    const [a, b, c] = sqlInjections(findings.get('budget')!);
    let spent = 0;
    for (const f of [a!, b!]) {
      const triage = await triaged('budget', f.id);
      expect(triage.status).toBe('completed');
      spent = (await usage('budget')).tokens_used;
      if (spent >= 1000) break;
    }
    expect(spent).toBeGreaterThanOrEqual(1000);
    const month = await usage('budget');
    expect(month).toMatchObject({ engine: 'openai', token_budget: 1000, fallback_quota: null });

    const calls = openai.calls.length;
    const refused = await requestTriage('budget', c!.id);
    expect(refused.status, refused.text).toBe(429);
    expect(refused.body.error.code).toBe('ai_budget_exhausted');
    const resetsAt = new Date(month.resets_at);
    expect(refused.body.error.details).toEqual(expect.objectContaining({ budget: 1000, used: spent, resets_at: month.resets_at }));
    expect(refused.body.error.message).toContain('1,000 tokens');
    expect(refused.body.error.message).toContain(resetsAt.toISOString().slice(0, 10));
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter > 0).toBe(true);
    expect(retryAfter).toBeLessThanOrEqual(31 * 86_400);
    expect(Math.abs(Date.now() + retryAfter * 1000 - resetsAt.getTime())).toBeLessThan(120_000);
    // Nothing was queued, nothing sent, the finding not marked.
    expect((await finding('budget', c!.id)).triage).toBeNull();
    expect(openai.calls.length).toBe(calls);
  }, 60_000);
});

describe('the fallback', () => {
  it('triages without any network up to its quota; beyond it 402 triage_quota_exceeded, even for concurrent requests', async () => {
    const sent = openai.calls.length + anthropic.calls.length;
    expect(await usage('trial')).toMatchObject({ engine: 'fallback', integration_id: null, fallback_quota: 2, fallback_triages: 0, token_budget: null });
    const three = sqlInjections(findings.get('trial')!);
    const answers = await Promise.all(three.map((f) => requestTriage('trial', f.id)));
    expect(answers.map((r) => r.status).sort()).toEqual([202, 202, 402]);
    const refused = answers.find((r) => r.status === 402)!;
    expect(refused.body.error.code).toBe('triage_quota_exceeded');
    expect(refused.body.error.message).toContain('2 triages per month');
    expect(refused.body.error.message).toContain('Settings → Integrations → AI');
    const month = await usage('trial');
    expect(refused.body.error.message).toContain(month.resets_at.slice(0, 10));
    expect(refused.body.error.details).toEqual({ quota: 2, used: 2, resets_at: month.resets_at });

    for (const accepted of answers.filter((r) => r.status === 202)) {
      const triage = await settled('trial', accepted.body.vulnerability_id);
      expect(triage).toMatchObject({ status: 'completed', engine: { provider: 'fallback', model: 'aegis-rules-v1', integration_id: null }, usage: { input_tokens: 0, output_tokens: 0 }, attempts: 0, redactions: 0 });
      expect(['likely_true_positive', 'likely_false_positive', 'needs_review']).toContain(triage.result!.verdict);
      // Labelled for what it is: rules, not a model.
      expect(triage.result!.explanation).toMatch(/^Aegis rules \(no AI model\)/);
    }
    expect(await usage('trial')).toMatchObject({ fallback_triages: 2, tokens_used: 0, triages: 0 });
    // No model was asked anything.
    expect(openai.calls.length + anthropic.calls.length).toBe(sent);
    const notTriaged = three.find((f) => f.id === refused.body.error.details?.vulnerability_id) ?? three.find((f) => !answers.some((r) => r.status === 202 && r.body.vulnerability_id === f.id))!;
    expect((await finding('trial', notTriaged.id)).triage).toBeNull();
  }, 60_000);

  it('can be asked for by name with a connection: no quota, no call', async () => {
    const sqli = sqlInjections(findings.get('claude')!)[2]!;
    const sent = openai.calls.length + anthropic.calls.length;
    const triage = await triaged('claude', sqli.id, { engine: 'fallback' });
    expect(triage).toMatchObject({ status: 'completed', engine: { provider: 'fallback', model: 'aegis-rules-v1' } });
    expect(openai.calls.length + anthropic.calls.length).toBe(sent);
  }, 30_000);
});

describe('with an Anthropic connection', () => {
  it('triages through the Messages API with the verdict schema as a forced tool', async () => {
    const sqli = sqlInjections(findings.get('claude')!)[0]!;
    const calls = anthropic.calls.length;
    const triage = await triaged('claude', sqli.id);
    expect(anthropic.calls.length).toBe(calls + 1);
    const call = anthropic.calls[calls]!;
    expect(call.path).toBe('/v1/messages');
    expect(call.body.tools).toEqual([expect.objectContaining({ name: 'triage_verdict' })]);
    expect(call.body.tool_choice).toMatchObject({ type: 'tool', name: 'triage_verdict' });
    expect(triage).toMatchObject({
      status: 'completed',
      engine: { provider: 'anthropic', model: call.model, integration_id: connections.get('claude') },
      result: { verdict: 'likely_true_positive' },
      attempts: 1,
    });
    expect(triage.usage.input_tokens).toBeGreaterThan(0);
    expect(anthropic.rejected).toEqual([]);
    expect(await usage('claude')).toMatchObject({ engine: 'anthropic', triages: 1 });
  }, 60_000);
});

describe('automatic triage', () => {
  it('triages the new high and critical findings of a scan when the connection has auto_triage on', async () => {
    connections.set('auto', await connect('auto', 'openai', openai, { auto_triage: true }));
    const calls = openai.calls.length;
    const found = await scan('auto', 'sast');
    const severe = found.filter((f) => f.severity === 'high' || f.severity === 'critical');
    expect(sqlInjections(severe).length).toBe(3);
    for (const f of severe) {
      const triage = await settled('auto', f.id);
      expect(triage).toMatchObject({ status: 'completed', trigger: 'auto', requested_by: null, engine: { provider: 'openai', integration_id: connections.get('auto') } });
    }
    for (const f of found.filter((x) => !severe.includes(x))) expect((await finding('auto', f.id)).triage).toBeNull();
    expect(openai.calls.length).toBe(calls + severe.length);
    expect((await usage('auto')).triages).toBe(severe.length);

    // Without auto_triage (the `main` organisation), the same critical findings came out of their
    // scan untriaged (an automatic triage is marked pending in the scan's own transaction).
    expect(sqlInjections(findings.get('main')!).map((f) => f.triage)).toEqual([null, null, null]);
  }, 120_000);
});

describe('a revoked key', () => {
  it('fails the triage with the reason and puts the connection in error', async () => {
    const sqli = sqlInjections(findings.get('main')!)[0]!;
    openai.revokeKey();
    const triage = await triaged('main', sqli.id);
    expect(triage.status).toBe('failed');
    expect(triage.error).toMatch(/refused the API key/);
    const connection = (await t.call('GET', `/api/v1/integrations/${connections.get('main')}`)).body;
    expect(connection.status).toBe('error');
    // With no active connection left, triage falls back (the quota applies again).
    expect(await usage('main')).toMatchObject({ engine: 'fallback', fallback_quota: 2 });
  }, 60_000);
});
