// The upgrade promise (docs/operations.md, "Upgrades"): migrations run once however many processes
// start at once, and migrations after the previous release only add, so that release's processes
// keep working on the new schema and its rows read back through the new code.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { generateKey, hashKey } from '../../api/accounts/keys/key-material.ts';
import { verifyServiceSignature } from '../../api/webhooks/signature.ts';
import { loadServerKey, seal } from '../../platform/crypto/secret-box.ts';
import { openDatabase } from '../../platform/db/database.ts';
import { MIGRATION_NAMES, migrateTo } from '../../platform/db/migrate.ts';
import { quoteIdent, type TestDatabase } from '../support/database-template.ts';
import { listenOnLoopback } from '../support/loopback.ts';
import { startTestServer } from '../support/server.ts';

/**
 * The last migration of the previous release. There are no release tags yet; 0017 closes the
 * identity work of issue 39, the last schema a deployed server ran before the Shield-edge and
 * managed-rule-score migrations (0018, 0019) of the current cycle. Every migration after it is held
 * to the additive rules below; move the boundary forward at each release (docs/operations.md).
 */
const PREVIOUS_RELEASE_LAST_MIGRATION = '0017_identity_boundaries';
const MIGRATIONS_DIR = resolve('platform/db/migrations');

const template = inject('databaseTemplate');
const dirs: string[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A database with nothing in it: an empty data dir, or a new database on the test PostgreSQL server. */
async function emptyDatabase(): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'aegis-migrations-'));
  dirs.push(dataDir);
  if (template.kind === 'embedded') return { dataDir, databaseUrl: undefined };
  // The run's prefix: global-setup drops these databases at the end.
  const name = `${template.prefix}_empty_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: template.serverUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${quoteIdent(name)}`);
  } finally {
    await admin.end();
  }
  const url = new URL(template.serverUrl);
  url.pathname = `/${name}`;
  return { dataDir, databaseUrl: url.toString() };
}

// ---------------------------------------------------------------- the additive rule, checked on the sources

/** The text from `open` (an index just after an opening parenthesis) to its matching `)`. */
function balanced(text: string, open: number): string {
  let depth = 1;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return text.slice(open, i);
  }
  return text.slice(open);
}

/** Every call `.name(…)` in `text`, with its argument text. */
function calls(text: string, name: string): string[] {
  const found: string[] = [];
  const pattern = new RegExp(`\\.${name}\\(`, 'g');
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) found.push(balanced(text, match.index + match[0].length));
  return found;
}

/**
 * What in a migration's `up` a process of the previous release could trip over: dropping or
 * renaming anything, changing a column's type, making a column NOT NULL, a NOT NULL column added to
 * an existing table without a default (the old code's inserts leave it out), or a new constraint
 * or unique index on an existing table (the old code's writes may break it). `down` may do all of
 * that: it is a rollback, not an upgrade.
 */
function contractingChanges(source: string): string[] {
  const up = source.slice(source.indexOf('export async function up'), source.includes('export async function down') ? source.indexOf('export async function down') : undefined);
  const problems: string[] = [];
  const created = new Set([...up.matchAll(/\.createTable\(\s*'([^']+)'/g)].map((m) => m[1]));
  for (const name of ['dropTable', 'dropColumn', 'renameColumn', 'renameTo', 'dropConstraint', 'dropIndex', 'dropView', 'dropType', 'dropSchema']) {
    if (calls(up, name).length > 0) problems.push(`${name}`);
  }
  for (const args of calls(up, 'alterColumn')) {
    if (/setDataType|setNotNull/.test(args)) problems.push(`alterColumn(${args.split(',')[0]}) changes its type or makes it NOT NULL`);
  }
  // Statements, one per `await`: the alterTable ones add to a table the old code writes.
  for (const statement of up.split(/\bawait\b/)) {
    const altered = /\.alterTable\(\s*'([^']+)'/.exec(statement)?.[1];
    if (!altered || created.has(altered)) continue;
    for (const args of calls(statement, 'addColumn')) {
      if (/\.notNull\(\)/.test(args) && !/\.defaultTo\(/.test(args)) problems.push(`addColumn(${args.split(',')[0]}) on ${altered}: NOT NULL without a default`);
      if (/\.unique\(\)|\.primaryKey\(\)/.test(args)) problems.push(`addColumn(${args.split(',')[0]}) on ${altered}: a new unique key`);
    }
    for (const name of ['addUniqueConstraint', 'addCheckConstraint', 'addForeignKeyConstraint', 'addPrimaryKeyConstraint']) {
      if (calls(statement, name).length > 0) problems.push(`${name} on ${altered}`);
    }
  }
  for (const statement of up.split(/\bawait\b/)) {
    const indexed = /\.createIndex\([^)]*\)[\s\S]*?\.on\(\s*'([^']+)'/.exec(statement)?.[1];
    if (indexed && !created.has(indexed) && /\.unique\(\)/.test(statement)) problems.push(`a unique index on ${indexed}`);
  }
  // Raw SQL, in sql`…` templates.
  for (const match of up.matchAll(/sql`([^`]*)`/g)) {
    const text = (match[1] ?? '').toLowerCase().replace(/\s+/g, ' ');
    if (/\bdrop (table|column|constraint|index|view|type|schema)\b/.test(text)) problems.push(`raw SQL drops: ${text.slice(0, 60)}`);
    if (/\brename\b/.test(text)) problems.push(`raw SQL renames: ${text.slice(0, 60)}`);
    if (/\balter column \S+ (set data )?type\b/.test(text)) problems.push(`raw SQL changes a type: ${text.slice(0, 60)}`);
    if (/\bset not null\b/.test(text)) problems.push(`raw SQL makes a column NOT NULL: ${text.slice(0, 60)}`);
    if (/\badd column\b[^,;]*\bnot null\b/.test(text) && !/\bdefault\b/.test(text)) problems.push(`raw SQL adds a NOT NULL column without a default: ${text.slice(0, 60)}`);
    if (/\balter table\b.*\badd constraint\b/.test(text) || /\bcreate unique index\b/.test(text)) problems.push(`raw SQL adds a constraint: ${text.slice(0, 60)}`);
  }
  return problems;
}

describe('migrations after the previous release only add', () => {
  const files = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.ts')).sort();
  const boundary = files.indexOf(`${PREVIOUS_RELEASE_LAST_MIGRATION}.ts`);

  it('the boundary is a migration this code has, and every migration file is registered', () => {
    expect(boundary).toBeGreaterThanOrEqual(0);
    expect(files.map((f) => f.replace(/\.ts$/, ''))).toEqual([...MIGRATION_NAMES]);
  });

  it.each(files.slice(boundary + 1))('%s drops, renames and tightens nothing', (file) => {
    expect(contractingChanges(readFileSync(join(MIGRATIONS_DIR, file), 'utf8'))).toEqual([]);
  });

  it('the check itself catches each kind of contracting change', () => {
    const up = (body: string) => `export async function up(db) {\n${body}\n}\nexport async function down(db) { await db.schema.dropTable('ok').execute(); }`;
    const cases: [string, RegExp][] = [
      [`await db.schema.dropTable('webhooks').execute();`, /dropTable/],
      [`await db.schema.alterTable('webhooks').dropColumn('url').execute();`, /dropColumn/],
      [`await db.schema.alterTable('webhooks').renameColumn('url', 'target').execute();`, /renameColumn/],
      [`await db.schema.alterTable('webhooks').renameTo('hooks').execute();`, /renameTo/],
      [`await db.schema.alterTable('webhooks').alterColumn('url', (c) => c.setDataType('jsonb')).execute();`, /changes its type/],
      [`await db.schema.alterTable('webhooks').alterColumn('url', (c) => c.setNotNull()).execute();`, /NOT NULL/],
      [`await db.schema.alterTable('webhooks').addColumn('kind', 'text', (c) => c.notNull()).execute();`, /NOT NULL without a default/],
      [`await db.schema.alterTable('webhooks').addUniqueConstraint('u', ['url']).execute();`, /addUniqueConstraint/],
      [`await db.schema.createIndex('webhooks_url').on('webhooks').column('url').unique().execute();`, /unique index on webhooks/],
      ['await sql`alter table webhooks drop column url`.execute(db);', /raw SQL drops/],
      ['await sql`alter table webhooks rename column url to target`.execute(db);', /raw SQL renames/],
      ['await sql`alter table webhooks alter column url type jsonb using url::jsonb`.execute(db);', /changes a type/],
      ['await sql`alter table webhooks alter column url set not null`.execute(db);', /NOT NULL/],
      ['await sql`alter table webhooks add column kind text not null`.execute(db);', /without a default/],
    ];
    for (const [body, expected] of cases) expect(contractingChanges(up(body)).join('; '), body).toMatch(expected);
    // What stays allowed: new tables (NOT NULL, keys and all), nullable or defaulted columns, indexes.
    const additive = up(`
      await db.schema.createTable('things').addColumn('id', 'text', (c) => c.primaryKey()).addColumn('n', 'integer', (c) => c.notNull()).execute();
      await db.schema.createIndex('things_n').on('things').column('n').unique().execute();
      await db.schema.alterTable('webhooks').addColumn('note', 'text').addColumn('tries', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.createIndex('webhooks_note').on('webhooks').column('note').execute();
      await sql\`alter table webhooks add column extra jsonb not null default '{}'\`.execute(db);`);
    expect(contractingChanges(additive)).toEqual([]);
  });
});

// ---------------------------------------------------------------- the previous release's rows, read by this code

describe("the previous release's schema and rows, after migrating to the latest", () => {
  it('sites, virtual patches, API keys and webhooks written as that release wrote them read back through the API; the sealed secret still signs', async () => {
    const database = await emptyDatabase();
    const handle = await openDatabase({ databaseUrl: database.databaseUrl, dataDir: database.dataDir });
    const previousKey = generateKey();
    const webhookSecret = `whsec_${randomBytes(24).toString('hex')}`;
    const requests: { headers: IncomingHttpHeaders; body: string }[] = [];
    const receiver = await listenOnLoopback(
      createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          requests.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
          res.end('ok');
        });
      }),
    );
    cleanups.push(receiver.close);
    try {
      await migrateTo(handle.db, PREVIOUS_RELEASE_LAST_MIGRATION);
      const tables = await sql<{ name: string }>`select name from aegis_migrations order by name`.execute(handle.db);
      expect(tables.rows.map((r) => r.name)).toEqual(MIGRATION_NAMES.slice(0, MIGRATION_NAMES.indexOf(PREVIOUS_RELEASE_LAST_MIGRATION) + 1));

      // Rows as the previous release's code wrote them: plain SQL naming only the columns it knew.
      const key = await loadServerKey(database.dataDir, undefined);
      await sql`insert into organizations (id, slug, name, plan) values ('org_previous01', 'default', 'Default organization', 'enterprise')`.execute(handle.db);
      await sql`insert into api_keys (id, org_id, name, prefix, key_hash, last4, scopes)
        values ('key_previous01', 'org_previous01', 'ops', 'svc_live_', ${hashKey(previousKey)}, ${previousKey.slice(-4)}, '["admin"]')`.execute(handle.db);
      await sql`insert into shield_sites (id, org_id, domain, origin_url, mode, labels, path_case, managed_rules)
        values ('site_previous01', 'org_previous01', 'legacy.example.com', 'https://origin.example.net', 'block', '{"team":"web"}', 'insensitive',
                '{"enabled":true,"paranoia_level":2,"exclusions":[]}')`.execute(handle.db);
      await sql`insert into virtual_patches (id, site_id, org_id, url_pattern, method, match_param, match_regex, action)
        values ('vp_previous01', 'site_previous01', 'org_previous01', '/search', 'GET', 'q', '(?i)union\\s+select', 'block')`.execute(handle.db);
      await sql`insert into webhooks (id, org_id, url, events, description, enabled, secret_sealed, secret_last4)
        values ('whk_previous01', 'org_previous01', ${`${receiver.url}/hook`}, '["api_key.created"]', 'from the previous release', true,
                ${seal(key, webhookSecret, 'whk_previous01')}, ${webhookSecret.slice(-4)})`.execute(handle.db);
    } finally {
      await handle.close();
    }

    // This code starts on it: startServer migrates to the latest first (as `aegis migrate` would).
    const t = await startTestServer({ allowPrivateTargets: true }, database);
    const call = (method: string, path: string) => t.call(method, path, { key: previousKey });
    try {
      const migrated = await sql<{ name: string }>`select name from aegis_migrations order by name`.execute(t.server.database.db);
      expect(migrated.rows.map((r) => r.name)).toEqual([...MIGRATION_NAMES]);

      const site = await call('GET', '/api/v1/shield/sites/site_previous01');
      expect(site.status, site.text).toBe(200);
      expect(site.body).toMatchObject({ id: 'site_previous01', domain: 'legacy.example.com', mode: 'block', labels: { team: 'web' } });
      // Columns added since read as their defaults say: the site keeps serving plain HTTP.
      expect(site.body.tls).toMatchObject({ mode: 'off' });
      const patches = await call('GET', '/api/v1/shield/sites/site_previous01/virtual-patches');
      expect(patches.status, patches.text).toBe(200);
      expect(patches.body.data).toEqual([expect.objectContaining({ id: 'vp_previous01', url_pattern: '/search', action: 'block' })]);

      const hook = await call('GET', '/api/v1/webhooks/whk_previous01');
      expect(hook.status, hook.text).toBe(200);
      expect(hook.body).toMatchObject({ description: 'from the previous release', enabled: true, secret_last4: webhookSecret.slice(-4), failing_since: null });
      const ping = await call('POST', '/api/v1/webhooks/whk_previous01/test');
      expect(ping.status, ping.text).toBe(200);
      expect(ping.body.status).toBe('succeeded');
      const delivered = requests.at(-1)!;
      expect(verifyServiceSignature(delivered.body, String(delivered.headers['x-service-signature']), webhookSecret)).toBe(true);
    } finally {
      await t.close();
    }
  }, 120_000);
});

// ---------------------------------------------------------------- several processes migrating at once

describe('several processes migrating one database at once', () => {
  it.skipIf(template.kind !== 'postgres')('four `aegis migrate` processes on an empty PostgreSQL database: all succeed, each migration applied once', async () => {
    const database = await emptyDatabase();
    const run = () =>
      new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
        execFile(
          process.execPath,
          [resolve('bin/aegis.mjs'), 'migrate', '--data-dir', database.dataDir],
          { env: { ...process.env, AEGIS_FROM_SOURCE: '1', DATABASE_URL: database.databaseUrl! }, timeout: 120_000 },
          (error, stdout, stderr) => done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
        );
      });
    const results = await Promise.all([run(), run(), run(), run()]);
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    // Between them they applied every migration exactly once; the others found the database up to date.
    const applied = results.flatMap((r) => /^applied: (.*)$/m.exec(r.stdout)?.[1]?.split(', ') ?? []);
    expect(applied.sort()).toEqual([...MIGRATION_NAMES]);

    const client = new pg.Client({ connectionString: database.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string; n: number }>('select name, count(*)::int as n from aegis_migrations group by name order by name');
      expect(rows).toEqual(MIGRATION_NAMES.map((name) => ({ name, n: 1 })));
    } finally {
      await client.end();
    }
  }, 180_000);
});
