// The kind registry (reconciler/kinds) against what it stands for: the kinds of schemas/ (KINDS and
// the exported JSON Schemas), the routes the server serves, and the order objects can be created
// in. A kind added on one side only fails here.
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KINDS } from '../../schemas/index.ts';
import { JSON_DIR } from '../../schemas/export-json.ts';
import { createAegisClient, type FetchFn } from '../../client/client.ts';
import { loadConfigDir } from '../../reconciler/config/index.ts';
import { ALL_KINDS, KIND_REGISTRY, SITE_KINDS, childrenOf, kindEntry, type Entry, type Kind } from '../../reconciler/kinds/index.ts';
import type { Endpoint } from '../../reconciler/kinds/kind.ts';
import { makeCa, makeLeaf } from '../support/certificates.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const registered = KIND_REGISTRY.map((entry) => entry.kind as string);

describe('the kind registry and schemas/', () => {
  it('has one entry per kind of schemas/index.ts KINDS, in the same order, holding that very definition', () => {
    expect(registered).toEqual(KINDS.map((k) => k.meta.kind));
    for (const [i, entry] of KIND_REGISTRY.entries()) expect(entry.definition, entry.kind).toBe(KINDS[i]);
  });

  it('has one entry per exported JSON Schema (schemas/json/*.schema.json)', () => {
    const exported = readdirSync(JSON_DIR)
      .filter((file) => file.endsWith('.schema.json'))
      .map((file) => file.slice(0, -'.schema.json'.length));
    expect([...registered].sort()).toEqual(exported.sort());
  });

  it('takes each parent from the schema meta, and derives ALL_KINDS and SITE_KINDS from the entries', () => {
    for (const entry of KIND_REGISTRY) expect(entry.parent, entry.kind).toBe(entry.definition.meta.parent);
    expect(ALL_KINDS).toEqual(registered);
    expect(SITE_KINDS).toEqual(KIND_REGISTRY.filter((e) => e.parent !== null).map((e) => e.kind));
  });
});

describe('dependency order', () => {
  it('puts every parent strictly before its children, and the registry itself is in that order', () => {
    for (const entry of KIND_REGISTRY) {
      if (entry.parent === null) continue;
      const parent = kindEntry(entry.parent);
      expect(parent.parent, `${entry.kind}: its parent ${parent.kind} must be top-level`).toBeNull();
      expect(parent.order, `${parent.kind} before ${entry.kind}`).toBeLessThan(entry.order);
      expect(registered.indexOf(parent.kind), `${parent.kind} listed before ${entry.kind}`).toBeLessThan(registered.indexOf(entry.kind));
    }
    const orders = KIND_REGISTRY.map((entry) => entry.order);
    expect(orders).toEqual([...orders].sort((a, b) => a - b));
  });
});

describe('entries are consistent with each other', () => {
  const unique = (values: readonly string[]) => expect(new Set(values).size, values.join(', ')).toBe(values.length);

  it('names Terraform types, nested config fields and dump files once each', () => {
    unique(KIND_REGISTRY.map((e) => e.definition.meta.terraformType));
    for (const parent of KIND_REGISTRY) {
      const fields = childrenOf(parent.kind).flatMap((c) => (c.config.nested ? [c.config.nested.field] : []));
      unique(fields);
      for (const field of fields) expect(Object.keys(parent.definition.spec.properties), `${parent.kind}.${field} is not a spec field too`).not.toContain(field);
    }
    unique(KIND_REGISTRY.flatMap((e) => (e.dump.placement === 'shared-file' ? [e.dump.file] : [])));
  });

  it('dumps site-level kinds with their site, and top-level kinds on their own', () => {
    for (const entry of KIND_REGISTRY) {
      if (entry.parent !== null) expect(entry.dump.placement, entry.kind).toBe('with-parent');
      else expect(entry.dump.placement, entry.kind).not.toBe('with-parent');
      // A kind with children needs a file of its own to hold them.
      if (childrenOf(entry.kind).length > 0) expect(entry.dump.placement, entry.kind).toBe('own-file');
    }
  });

  it('makes singletons site-level, nested (if at all) as one object', () => {
    for (const entry of KIND_REGISTRY.filter((e) => e.singleton)) {
      expect(entry.parent, entry.kind).not.toBeNull();
      expect(entry.config.nested?.form ?? 'single', entry.kind).toBe('single');
    }
    for (const entry of KIND_REGISTRY.filter((e) => e.config.nested?.form === 'single')) expect(entry.singleton, entry.kind).toBe(true);
  });

  it('refers only to spec fields of its own kind', () => {
    for (const entry of KIND_REGISTRY) {
      const fields = Object.keys(entry.definition.spec.properties);
      const named = [entry.config.fileField?.field, entry.config.nameField, entry.digest?.field].filter((f): f is string => f !== undefined);
      for (const field of named) expect(fields, `${entry.kind}.${field}`).toContain(field);
      for (const field of Object.values(entry.provider.dependsOn ?? {}).flat()) expect(fields, `${entry.kind} dependsOn ${field}`).toContain(field);
      for (const computed of Object.keys(entry.provider.dependsOn ?? {})) expect(entry.definition.meta.computed, `${entry.kind} dependsOn key ${computed}`).toContain(computed);
    }
  });
});

/** `/api/v1/shield/sites/{id}/ip-access/{rule_id}` → a RegExp matching concrete paths. */
const templatePattern = (path: string) => new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);

describe('endpoints, against the running server', () => {
  let t: TestServer;
  let openapi: { paths: Record<string, Record<string, unknown>> };
  beforeAll(async () => {
    t = await startTestServer({ rateLimitPerMinute: 1_000_000 });
    openapi = (await t.call('GET', '/api/v1/openapi.json', { key: null })).body;
  });
  afterAll(() => t.close());

  it('every endpoint an entry declares is an operation of the served OpenAPI document', () => {
    const missing = KIND_REGISTRY.flatMap((entry) => entry.endpoints.filter((e) => openapi.paths[e.path]?.[e.method] === undefined).map((e) => `${entry.kind}: ${e.method} ${e.path}`));
    expect(missing).toEqual([]);
  });

  it('the operations send only the endpoints their entry declares, and use every one of them', async () => {
    // Each kind's operations run for real (create, list, get, update, remove) on the example repo's
    // objects; a fetch that only records what is sent tells which endpoint each request hit.
    const sent = new Map<Kind, { method: string; path: string }[]>(ALL_KINDS.map((kind) => [kind, []]));
    let current: Kind | undefined;
    const recording: FetchFn = (request) => {
      if (current) sent.get(current)!.push({ method: request.method.toLowerCase(), path: new URL(request.url).pathname });
      return fetch(request);
    };
    const client = createAegisClient({ baseUrl: t.url, apiKey: t.adminKey, fetch: recording });
    const { objects, problems } = await loadConfigDir('examples/gitops');
    expect(problems).toEqual([]);
    // A certificate must cover its site's domain and be valid now: made here rather than kept in the example.
    const ca = makeCa();
    const leaf = makeLeaf(ca, [String(objects.find((o) => o.kind === 'ShieldSite')?.spec.domain)]);
    ca.close();
    const sample = (kind: Kind) => {
      if (kind === 'ShieldCertificate') return { certificate: leaf.chainPem, private_key: leaf.keyPem };
      const found = objects.find((o) => o.kind === kind);
      if (!found) throw new Error(`examples/gitops has no ${kind} to exercise`);
      return found.spec;
    };

    /** Creates, lists, reads and updates one object of the kind; returns its id. */
    async function exercise(entry: Entry, siteId: string | undefined): Promise<string> {
      const { operations: ops } = entry;
      current = entry.kind;
      const created = await ops.create(client, sample(entry.kind), siteId);
      const id = entry.singleton ? siteId! : String(created.id);
      expect(await ops.list(client, siteId), `${entry.kind} list`).toHaveLength(1);
      if (entry.ownedWithParent) {
        // No labels of its own (its site's ownership is its): an update writes it again.
        await ops.update(client, id, sample(entry.kind), siteId);
        expect((await ops.get(client, id, siteId)).fingerprint, `${entry.kind} after update`).toBe(leaf.fingerprint);
        current = undefined;
        return id;
      }
      expect((await ops.get(client, id, siteId)).labels, `${entry.kind} get`).toEqual({});
      await ops.update(client, id, { labels: { exercised: 'yes' } }, siteId);
      expect((await ops.get(client, id, siteId)).labels, `${entry.kind} labels after update`).toEqual({ exercised: 'yes' });
      current = undefined;
      return id;
    }
    async function remove(entry: Entry, id: string, siteId: string | undefined): Promise<void> {
      current = entry.kind;
      await entry.operations.remove(client, id, siteId);
      expect(await entry.operations.list(client, siteId), `${entry.kind} removed`).toEqual([]);
      current = undefined;
    }

    for (const top of KIND_REGISTRY.filter((e) => e.parent === null)) {
      const id = await exercise(top, undefined);
      for (const child of childrenOf(top.kind)) await remove(child, await exercise(child, id), id);
      await remove(top, id, undefined);
    }

    for (const entry of KIND_REGISTRY) {
      const requests = sent.get(entry.kind)!;
      const declares = (request: { method: string; path: string }) => entry.endpoints.some((e) => e.method === request.method && templatePattern(e.path).test(request.path));
      const used = (e: Endpoint) => requests.some((r) => r.method === e.method && templatePattern(e.path).test(r.path));
      expect(requests.filter((r) => !declares(r)), `${entry.kind} sent requests it does not declare`).toEqual([]);
      expect(entry.endpoints.filter((e) => !used(e)), `${entry.kind} declares endpoints it never used`).toEqual([]);
    }
  });
});
