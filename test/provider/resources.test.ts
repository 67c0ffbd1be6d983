// The provider's resources and data sources, called directly (no plugin protocol) against a real
// Aegis server: schema derivation, plan/apply/read/import as Terraform drives them, validation.
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aegisProvider } from '../../provider/main.ts';
import { nestedAttributeType, TfNumber, UNKNOWN, type AttributeSchema, type DataSourceDefinition, type NestedObjectSchema, type ProviderDefinition, type ResourceDefinition, type TfObject, type TfValue } from '../../provider/framework/contract.ts';
import { deriveAllKindSchemas, deriveKindSchema, SchemaDerivationError } from '../../provider/resources/schema.ts';
import { pathForApiField } from '../../provider/resources/validate.ts';
import { apiJson, containsUnknown, withNestedDefaults } from '../../provider/resources/values.ts';
import { KINDS } from '../../schemas/index.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let provider: ProviderDefinition;

beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 1_000_000 });
  provider = aegisProvider({ env: {} });
  expect(await provider.configure({ api_url: t.url, api_key: t.adminKey }, '1.5.7')).toEqual([]);
});
afterAll(() => t.close());

const resource = (type: string): ResourceDefinition => {
  const found = provider.resources.find((r) => r.typeName === type);
  if (!found) throw new Error(`no resource ${type}`);
  return found;
};
const dataSource = (type: string): DataSourceDefinition => {
  const found = provider.dataSources.find((d) => d.typeName === type);
  if (!found) throw new Error(`no data source ${type}`);
  return found;
};
const attribute = (r: { schema: { attributes: AttributeSchema[] } }, name: string): AttributeSchema | undefined => r.schema.attributes.find((a) => a.name === name);

/** A config object as Terraform sends it: every attribute present, unset ones (and computed ones) null. */
function configOf(r: ResourceDefinition, values: TfObject): TfObject {
  return Object.fromEntries(r.schema.attributes.map((a) => [a.name, values[a.name] ?? null]));
}

/** Validate, plan and apply a create; returns the plan and the new state. */
async function create(r: ResourceDefinition, values: TfObject): Promise<{ planned: TfObject; state: TfObject }> {
  const config = configOf(r, values);
  expect(r.validate(config)).toEqual([]);
  const plan = r.plan({ prior: null, proposed: config, config });
  expect(plan.diagnostics).toEqual([]);
  expect(plan.planned).not.toBeNull();
  const planned = plan.planned as TfObject;
  const applied = await r.apply({ prior: null, planned, config });
  expect(applied.diagnostics).toEqual([]);
  const state = applied.state as TfObject;
  expectConsistent(planned, state);
  expectPlanValid(r, null, config, planned);
  // No drift right after creation: the next `terraform plan` shows nothing.
  expect((await r.read(state)).state).toEqual(state);
  return { planned, state };
}

/**
 * Terraform's check of a planned value (plans/objchange AssertPlanValid), nested attributes
 * included: a value equal to config, or to a non-null prior when config is set, is fine; a
 * computed attribute may be anything when config is null; otherwise a nested attribute is checked
 * sub-attribute by sub-attribute (element by element for list nesting).
 */
function planErrors(a: AttributeSchema, prior: TfValue, config: TfValue, planned: TfValue, path: string): string[] {
  if (isDeepStrictEqual(planned, config)) return [];
  if (isDeepStrictEqual(planned, prior) && prior !== null && config !== null) return [];
  if (a.computed && !a.optional) return [];
  if (config === null && a.computed) return [];
  if (config === null && planned !== null) return [`${path}: planned ${String(planned)} for a non-computed attribute`];
  if (a.nested) return nestedPlanErrors(a.nested, prior, config, planned, path);
  return [`${path}: planned ${JSON.stringify(planned)} is neither config ${JSON.stringify(config)} nor prior`];
}

/** A sub-attribute of an object value (null for null, unknown or non-object values). */
function sub(value: TfValue | undefined, name: string): TfValue {
  return value !== null && value !== undefined && typeof value === 'object' && !Array.isArray(value) && !(value instanceof TfNumber) ? (value[name] ?? null) : null;
}

function nestedPlanErrors(nested: NestedObjectSchema, prior: TfValue, config: TfValue, planned: TfValue, path: string): string[] {
  if (planned === null && config !== null) return [`${path}: planned for absence but config wants existence`];
  if (config === null && planned !== null) return [`${path}: planned for existence but config wants absence`];
  if (config !== null && planned === UNKNOWN) return [`${path}: planned unknown for configured value`];
  if (planned === null || config === UNKNOWN) return [];
  const objectErrors = (p: TfValue | undefined, c: TfValue | undefined, v: TfValue | undefined, at: string): string[] =>
    nested.attributes.flatMap((a) => planErrors(a, sub(p, a.name), sub(c, a.name), sub(v, a.name), `${at}.${a.name}`));
  if (nested.nesting === 'single') return objectErrors(prior, config, planned, path);
  if (!Array.isArray(planned) || !Array.isArray(config)) return [`${path}: expected lists`];
  if (planned.length !== config.length) return [`${path}: count in plan (${planned.length}) disagrees with count in config (${config.length})`];
  return planned.flatMap((element, i) => objectErrors(Array.isArray(prior) ? prior[i] : null, config[i], element, `${path}[${i}]`));
}

function expectPlanValid(r: ResourceDefinition, prior: TfObject | null, config: TfObject, planned: TfObject): void {
  const errors = r.schema.attributes.flatMap((a) => planErrors(a, prior?.[a.name] ?? null, config[a.name] ?? null, planned[a.name] ?? null, `${r.typeName}.${a.name}`));
  expect(errors).toEqual([]);
}

/** Terraform's rule: wholly known, and what was known at plan time comes back unchanged. */
function expectConsistent(planned: TfObject, state: TfObject): void {
  expect(Object.keys(state).sort()).toEqual(Object.keys(planned).sort());
  for (const [name, value] of Object.entries(state)) {
    expect(containsUnknown(value), `${name} is unknown after apply`).toBe(false);
    const before = planned[name] ?? null;
    if (!containsUnknown(before)) expect(value, name).toEqual(before);
  }
}

/** Plan and apply an update from `prior` to `values` (+ what is unchanged). */
async function update(r: ResourceDefinition, prior: TfObject, values: TfObject) {
  const config = configOf(r, values);
  const plan = r.plan({ prior, proposed: config, config });
  expect(plan.diagnostics).toEqual([]);
  const planned = plan.planned as TfObject;
  expectPlanValid(r, prior, config, planned);
  const applied = await r.apply({ prior, planned, config });
  expect(applied.diagnostics).toEqual([]);
  expectConsistent(planned, applied.state as TfObject);
  expect((await r.read(applied.state as TfObject)).state).toEqual(applied.state);
  return { plan, state: applied.state as TfObject };
}

const writable = (state: TfObject, r: ResourceDefinition): TfObject =>
  Object.fromEntries(r.schema.attributes.filter((a) => a.required || a.optional).map((a) => [a.name, state[a.name] ?? null]));

let domains = 0;
const domain = () => `site${++domains}-${Date.now().toString(36)}.example.com`;

async function newSite(extra: TfObject = {}): Promise<TfObject> {
  return (await create(resource('aegis_shield_site'), { domain: domain(), origin_url: 'https://origin.example.com', mode: 'block', ...extra })).state;
}

describe('schema derivation', () => {
  it('derives every resource from schemas/ with valid names and descriptions', () => {
    expect(provider.resources.map((r) => r.typeName).sort()).toEqual([
      'aegis_ip_access_rule',
      'aegis_rate_limit_rule',
      'aegis_scan_schedule',
      'aegis_shield_certificate',
      'aegis_shield_schema',
      'aegis_shield_site',
      'aegis_virtual_patch',
      'aegis_webhook',
    ]);
    const blocks = [...provider.resources, ...provider.dataSources].map((r) => r.schema).concat(provider.schema);
    for (const block of blocks) {
      expect(block.description).not.toBe('');
      for (const a of block.attributes) {
        expect(a.name).toMatch(/^[a-z0-9_]+$/);
        expect(a.description, a.name).not.toBe('');
        // Terraform: required xor optional/computed.
        expect(Boolean(a.required) && Boolean(a.optional || a.computed), a.name).toBe(false);
        expect(Boolean(a.required || a.optional || a.computed), a.name).toBe(true);
      }
    }
    for (const r of provider.resources) expect(attribute(r, 'id')?.computed, r.typeName).toBe(true);
  });

  it('maps types, defaults and flags the way the README of schema.ts says', () => {
    const webhook = resource('aegis_webhook');
    expect(attribute(webhook, 'secret')).toMatchObject({ computed: true, sensitive: true, type: 'string' });
    expect(attribute(webhook, 'events')).toMatchObject({ required: true, type: ['set', 'string'] });
    expect(attribute(webhook, 'enabled')).toMatchObject({ optional: true, computed: true, type: 'bool' });
    expect(attribute(webhook, 'labels')).toMatchObject({ optional: true, computed: true, type: ['map', 'string'] });
    const schedule = resource('aegis_scan_schedule');
    expect(attribute(schedule, 'config')).toBeUndefined();
    expect(attribute(schedule, 'config_json')).toMatchObject({ type: 'string', optional: true, computed: true });
    expect(attribute(schedule, 'next_run_at')).toMatchObject({ computed: true });
    expect(attribute(resource('aegis_rate_limit_rule'), 'budget')).toMatchObject({ type: 'number', required: true });
    const patch = resource('aegis_virtual_patch');
    expect(attribute(patch, 'expires_in_days')).toEqual(expect.objectContaining({ optional: true }));
    expect(attribute(patch, 'expires_in_days')?.computed).toBeUndefined();
    expect(attribute(resource('aegis_ip_access_rule'), 'expires_at')).toMatchObject({ optional: true });
    const schema = resource('aegis_shield_schema');
    expect(attribute(schema, 'operations')?.type).toEqual(['list', ['object', { method: 'string', path: 'string', operation_id: 'string' }]]);
    for (const type of ['aegis_virtual_patch', 'aegis_ip_access_rule', 'aegis_rate_limit_rule', 'aegis_shield_schema']) {
      expect(attribute(resource(type), 'site_id'), type).toMatchObject({ required: true, type: 'string' });
    }
    expect(attribute(resource('aegis_shield_site'), 'site_id')).toBeUndefined();
    // A write-only spec field: never in plan or state, its SHA-256 computed in its place.
    const certificate = resource('aegis_shield_certificate');
    expect(attribute(certificate, 'private_key')).toMatchObject({ required: true, sensitive: true, writeOnly: true, type: 'string' });
    expect(attribute(certificate, 'private_key_sha256')).toMatchObject({ computed: true, type: 'string' });
    expect(attribute(certificate, 'private_key_sha256')?.writeOnly).toBeUndefined();
  });

  it('marks a changed site_id as forcing replacement', () => {
    const r = resource('aegis_ip_access_rule');
    const prior = { ...configOf(r, { site_id: 'site_a', type: 'ip', value: '203.0.113.7', action: 'deny', note: '', labels: {} }), id: 'ipr_1', status: 'active', created_at: 'x', updated_at: 'x' };
    const config = configOf(r, { site_id: 'site_b', type: 'ip', value: '203.0.113.7', action: 'deny' });
    expect(r.plan({ prior, proposed: config, config }).requiresReplace).toEqual([['site_id']]);
  });
});

describe('provider configuration', () => {
  it('fails with diagnostics when neither the config nor the environment names the API', async () => {
    const bare = aegisProvider({ env: {} });
    const diagnostics = await bare.configure({ api_url: null, api_key: null }, '1.5.7');
    expect(diagnostics.map((d) => d.attribute)).toEqual([['api_url'], ['api_key']]);
    expect(attribute(bare, 'api_key')?.sensitive).toBe(true);
    // Resources of an unconfigured provider answer with a diagnostic, not a crash.
    const read = await bare.resources[0]!.read({ id: 'site_x' });
    expect(read.diagnostics[0]?.detail).toMatch(/not configured/);
  });

  it('falls back to AEGIS_API_URL / AEGIS_API_KEY', async () => {
    const fromEnv = aegisProvider({ env: { AEGIS_API_URL: t.url, AEGIS_API_KEY: t.adminKey } });
    expect(await fromEnv.configure({ api_url: null, api_key: null }, '1.5.7')).toEqual([]);
    const sites = await fromEnv.dataSources.find((d) => d.typeName === 'aegis_shield_sites')!.read({ sites: null });
    expect(sites.diagnostics).toEqual([]);
  });
});

describe('aegis_shield_site', () => {
  it('plans computed attributes unknown on create, applies to a wholly known state, plans no change after', async () => {
    const r = resource('aegis_shield_site');
    const { planned, state } = await create(r, { domain: domain(), origin_url: 'https://origin.example.com', mode: 'log' });
    expect(planned).toMatchObject({ id: UNKNOWN, created_at: UNKNOWN, updated_at: UNKNOWN, mode: 'log', labels: {} });
    expect(state.id).toMatch(/^site_/);
    const again = r.plan({ prior: state, proposed: configOf(r, writable(state, r)), config: configOf(r, writable(state, r)) });
    expect(again.planned).toEqual(state);
    expect(again.requiresReplace).toEqual([]);
    const read = await r.read(state);
    expect(read).toEqual({ state, diagnostics: [] });
  });

  it('updates a mutable attribute in place and replaces on an immutable one', async () => {
    const r = resource('aegis_shield_site');
    const state = await newSite();
    const changed = { ...writable(state, r), mode: 'challenge', labels: { team: 'sec' } };
    const { plan, state: updated } = await update(r, state, changed);
    expect(plan.requiresReplace).toEqual([]);
    expect(plan.planned).toMatchObject({ id: state.id, created_at: state.created_at, updated_at: UNKNOWN });
    expect(updated).toMatchObject({ id: state.id, mode: 'challenge', labels: { team: 'sec' } });
    expect((await t.call('GET', `/api/v1/shield/sites/${String(state.id)}`)).body).toMatchObject({ mode: 'challenge', labels: { team: 'sec' } });

    const moved = configOf(r, { ...writable(updated, r), domain: domain() });
    const replace = r.plan({ prior: updated, proposed: moved, config: moved });
    expect(replace.requiresReplace).toEqual([['domain']]);
    expect(replace.planned?.id).toBe(UNKNOWN);
    // An immutable attribute whose value is not known yet forces replacement too.
    const unknown = configOf(r, { ...writable(updated, r), domain: UNKNOWN });
    expect(r.plan({ prior: updated, proposed: unknown, config: unknown }).requiresReplace).toEqual([['domain']]);
  });

  it('reads null once the site is deleted outside Terraform, and destroys cleanly', async () => {
    const r = resource('aegis_shield_site');
    const state = await newSite();
    expect(r.plan({ prior: state, proposed: null, config: null })).toEqual({ planned: null, requiresReplace: [], diagnostics: [] });
    expect((await t.call('DELETE', `/api/v1/shield/sites/${String(state.id)}`)).status).toBe(204);
    expect(await r.read(state)).toEqual({ state: null, diagnostics: [] });
    // Deleting what is already gone succeeds.
    expect(await r.apply({ prior: state, planned: null, config: null })).toEqual({ state: null, diagnostics: [] });
  });

  it('validates offline with diagnostics aimed at the attribute', () => {
    const r = resource('aegis_shield_site');
    const bad = r.validate(configOf(r, { domain: 'shop.example.com', origin_url: 'https://o.example.com', mode: 'panic' }));
    expect(bad).toEqual([expect.objectContaining({ severity: 'error', attribute: ['mode'], detail: expect.stringContaining('must be one of') })]);
    const label = r.validate(configOf(r, { domain: 'shop.example.com', origin_url: 'https://o.example.com', mode: 'log', labels: { 'Bad Key': 'x' } }));
    expect(label).toEqual([expect.objectContaining({ attribute: ['labels', 'Bad Key'], detail: expect.stringContaining('key "Bad Key" of labels') })]);
    // Unknown values are checked at apply, not now.
    expect(r.validate(configOf(r, { domain: UNKNOWN, origin_url: 'https://o.example.com', mode: UNKNOWN }))).toEqual([]);
  });
});

const n = (value: number): TfNumber => TfNumber.of(value);
/** A managed_rules value as Terraform sends it from config: every sub-attribute present, unset ones null. */
const managedConfig = (values: { enabled?: TfValue; paranoia_level?: TfValue; exclusions?: TfValue }): TfObject => ({ enabled: null, paranoia_level: null, exclusions: null, ...values });
const exclusion = (values: { rules: TfValue; url_pattern?: TfValue; parameter?: TfValue }): TfObject => ({ url_pattern: null, parameter: null, ...values });

describe('nested attributes: schema derivation', () => {
  it('maps managed_rules to a SINGLE nested attribute with a LIST nested exclusions, optional+computed, implied types kept', () => {
    const r = resource('aegis_shield_site');
    const managed = attribute(r, 'managed_rules');
    expect(managed).toMatchObject({ optional: true, computed: true });
    expect(managed?.required).toBeUndefined();
    expect(managed?.nested?.nesting).toBe('single');
    expect(managed?.type).toEqual(nestedAttributeType(managed!.nested!));
    const subs = Object.fromEntries(managed!.nested!.attributes.map((a) => [a.name, a]));
    expect(subs.enabled).toMatchObject({ type: 'bool', optional: true, computed: true });
    expect(subs.paranoia_level).toMatchObject({ type: 'number', optional: true, computed: true });
    expect(subs.exclusions).toMatchObject({ optional: true, computed: true, nested: { nesting: 'list' } });
    expect(subs.exclusions?.type).toEqual(['list', ['object', { rules: ['list', 'string'], url_pattern: 'string', parameter: 'string' }]]);
    const exclusionAttributes = Object.fromEntries(subs.exclusions!.nested!.attributes.map((a) => [a.name, a]));
    expect(exclusionAttributes.rules).toMatchObject({ required: true, type: ['list', 'string'] });
    // No default: optional only, so null means "not set" and is planned (and kept) as null.
    expect(exclusionAttributes.url_pattern).toEqual(expect.objectContaining({ optional: true, type: 'string' }));
    expect(exclusionAttributes.url_pattern?.computed).toBeUndefined();
    expect(exclusionAttributes.parameter?.computed).toBeUndefined();
    expect(attribute(r, 'path_case')).toMatchObject({ type: 'string', optional: true, computed: true });
  });

  it('keeps the API value only for managed_rules: every other optional attribute of every kind has a default or plans null', () => {
    const keep = deriveAllKindSchemas().flatMap((k) => k.attributes.filter((a) => a.keepWhenOmitted).map((a) => `${k.meta.terraformType}.${a.schema.name}`));
    expect(keep).toEqual(['aegis_shield_site.managed_rules', 'aegis_shield_site.tls']);
    const site = deriveAllKindSchemas().find((k) => k.kind === 'ShieldSite')!;
    const managed = site.attributes.find((a) => a.field === 'managed_rules')!;
    expect(managed.defaultValue).toBeUndefined();
    expect(managed.nested?.attributes.map((a) => [a.field, a.defaultValue])).toEqual([
      ['enabled', true],
      ['paranoia_level', 1],
      ['exclusions', []],
    ]);
  });

  it('derives nested attributes from any object with properties: required ones, defaults, and refuses what it cannot map', () => {
    const base = KINDS.find((k) => k.meta.kind === 'Webhook')!;
    const object = { type: 'object', description: 'An object.', required: ['a'], properties: { a: { type: 'string', description: 'A.' }, b: { type: 'integer', default: 3, description: 'B.' } } };
    const withField = (field: object, required: string[] = []) =>
      ({ ...base, spec: { ...base.spec, required: [...base.spec.required, ...required], properties: { ...base.spec.properties, extra: field } } }) as unknown as typeof base;
    const required = deriveKindSchema(withField(object, ['extra'])).attributes.find((a) => a.field === 'extra')!;
    expect(required.schema).toMatchObject({ required: true, nested: { nesting: 'single' } });
    expect(required.keepWhenOmitted).toBe(false);
    expect(required.schema.nested?.attributes).toEqual([
      { name: 'a', type: 'string', description: 'A.', required: true },
      { name: 'b', type: 'number', description: 'B.', optional: true, computed: true },
    ]);
    const defaulted = deriveKindSchema(withField({ ...object, default: { a: 'x' } })).attributes.find((a) => a.field === 'extra')!;
    expect(defaulted).toMatchObject({ keepWhenOmitted: false, defaultValue: { a: 'x' }, schema: { optional: true, computed: true } });
    const list = deriveKindSchema(withField({ type: 'array', items: object, description: 'Objects.' })).attributes.find((a) => a.field === 'extra')!;
    // Top level, optional, no default: like managed_rules, left out it keeps what the API has.
    expect(list).toMatchObject({ keepWhenOmitted: true, schema: { optional: true, computed: true, nested: { nesting: 'list' }, type: ['list', ['object', { a: 'string', b: 'number' }]] } });
    expect(() => deriveKindSchema(withField({ type: 'array', uniqueItems: true, items: object, description: 'Set.' }))).toThrow(SchemaDerivationError);
    expect(() => deriveKindSchema(withField({ ...object, properties: { ...object.properties, free: { type: 'object', description: 'Free.' } } }))).toThrow(/free objects inside nested attributes/);
  });
});

describe('nested attributes: values', () => {
  const site = deriveAllKindSchemas().find((k) => k.kind === 'ShieldSite')!;
  const managed = site.attributes.find((a) => a.field === 'managed_rules')!;

  it('fills nested defaults into null sub-attributes only, at every depth, and keeps unknowns', () => {
    const config = managedConfig({ paranoia_level: n(2), exclusions: [exclusion({ rules: ['xss'] })] });
    expect(withNestedDefaults(managed, config)).toEqual({ enabled: true, paranoia_level: n(2), exclusions: [{ rules: ['xss'], url_pattern: null, parameter: null }] });
    expect(withNestedDefaults(managed, managedConfig({ enabled: false }))).toEqual({ enabled: false, paranoia_level: n(1), exclusions: [] });
    expect(withNestedDefaults(managed, managedConfig({ paranoia_level: UNKNOWN, exclusions: [UNKNOWN] }))).toEqual({ enabled: true, paranoia_level: UNKNOWN, exclusions: [UNKNOWN] });
    expect(withNestedDefaults(managed, UNKNOWN)).toBe(UNKNOWN);
    // No default for the attribute itself: null stays null (the plan keeps the API's value instead).
    expect(withNestedDefaults(managed, null)).toBeNull();
  });

  it('sends null sub-attributes as absent keys, numbers as numbers', () => {
    const value = { enabled: true, paranoia_level: n(3), exclusions: [{ rules: ['sqli.tautology'], url_pattern: '/cms/*', parameter: null }, { rules: ['xss'], url_pattern: null, parameter: 'q' }] };
    expect(apiJson(managed, value)).toEqual({ enabled: true, paranoia_level: 3, exclusions: [{ rules: ['sqli.tautology'], url_pattern: '/cms/*' }, { rules: ['xss'], parameter: 'q' }] });
    expect(apiJson(managed, null)).toBeNull();
  });

  it('maps API field paths inside nested attributes to attribute paths', () => {
    expect(pathForApiField(site, 'managed_rules.exclusions[1].rules[0]')).toEqual(['managed_rules', 'exclusions', 1, 'rules', 0]);
    expect(pathForApiField(site, 'managed_rules.paranoia_level')).toEqual(['managed_rules', 'paranoia_level']);
    expect(pathForApiField(site, 'managed_rules.nope')).toEqual(['managed_rules']);
    expect(pathForApiField(site, 'labels.aegis.dev/name')).toEqual(['labels', 'aegis.dev/name']);
    const webhook = deriveAllKindSchemas().find((k) => k.kind === 'Webhook')!;
    expect(pathForApiField(webhook, 'events[0]')).toEqual(['events']); // a set element has no index
  });
});

describe('aegis_shield_site: path_case and managed_rules', () => {
  it('creates with managed_rules given: nested defaults planned, null sub-attributes neither sent nor invented; read and import agree', async () => {
    const r = resource('aegis_shield_site');
    const managed_rules = managedConfig({ paranoia_level: n(2), exclusions: [exclusion({ rules: ['sqli.tautology'], url_pattern: '/cms/*' })] });
    const { planned, state } = await create(r, { domain: domain(), origin_url: 'https://origin.example.com', mode: 'block', path_case: 'sensitive', managed_rules });
    expect(planned.managed_rules).toEqual({ enabled: true, paranoia_level: n(2), exclusions: [{ rules: ['sqli.tautology'], url_pattern: '/cms/*', parameter: null }] });
    expect(state).toMatchObject({ path_case: 'sensitive', managed_rules: planned.managed_rules });
    const live = (await t.call('GET', `/api/v1/shield/sites/${String(state.id)}`)).body;
    expect(live.managed_rules).toEqual({ enabled: true, paranoia_level: 2, exclusions: [{ rules: ['sqli.tautology'], url_pattern: '/cms/*' }] });
    expect(await r.importState(String(state.id))).toEqual({ state, diagnostics: [] });
    // The same config again: nothing to do.
    const config = configOf(r, { ...writable(state, r), managed_rules });
    expect(r.plan({ prior: state, proposed: config, config }).planned).toEqual(state);
  });

  it('creates with managed_rules left out: unknown until the API answers with its default, then kept as the API has it', async () => {
    const r = resource('aegis_shield_site');
    const { planned, state } = await create(r, { domain: domain(), origin_url: 'https://origin.example.com', mode: 'log' });
    expect(planned).toMatchObject({ managed_rules: UNKNOWN, path_case: 'insensitive' });
    expect(state.managed_rules).toEqual({ enabled: true, paranoia_level: n(1), exclusions: [] });
    const omitted = configOf(r, { ...writable(state, r), managed_rules: null });
    expect(r.plan({ prior: state, proposed: omitted, config: omitted }).planned).toEqual(state);

    // Changed elsewhere: read reports it, and a config without managed_rules leaves it be.
    await t.call('PATCH', `/api/v1/shield/sites/${String(state.id)}`, { body: { managed_rules: { paranoia_level: 4, exclusions: [{ rules: ['protocol'] }] } } });
    const read = (await r.read(state)).state!;
    expect(read.managed_rules).toEqual({ enabled: true, paranoia_level: n(4), exclusions: [{ rules: ['protocol'], url_pattern: null, parameter: null }] });
    const kept = r.plan({ prior: read, proposed: omitted, config: omitted });
    expect(kept.planned).toEqual(read);
    // Another field changes: managed_rules is kept from prior and not sent.
    const moded = await update(r, read, { ...writable(read, r), managed_rules: null, mode: 'block' });
    expect(moded.plan.planned?.managed_rules).toEqual(read.managed_rules);
    expect((await t.call('GET', `/api/v1/shield/sites/${String(state.id)}`)).body).toMatchObject({ mode: 'block', managed_rules: { paranoia_level: 4 } });
  });

  it('updates managed_rules in place (paranoia level, exclusions) and plans unknown on replacement when left out', async () => {
    const r = resource('aegis_shield_site');
    const state = await newSite();
    const next = managedConfig({ paranoia_level: n(3), exclusions: [exclusion({ rules: ['xss', 'sqli.union_select'], parameter: 'comment' }), exclusion({ rules: ['traversal'], url_pattern: '/files/*' })] });
    const { plan, state: updated } = await update(r, state, { ...writable(state, r), managed_rules: next, path_case: 'sensitive' });
    expect(plan.requiresReplace).toEqual([]);
    expect(plan.planned).toMatchObject({ updated_at: UNKNOWN, path_case: 'sensitive', managed_rules: { enabled: true, paranoia_level: n(3) } });
    expect((await t.call('GET', `/api/v1/shield/sites/${String(state.id)}`)).body.managed_rules).toEqual({
      enabled: true,
      paranoia_level: 3,
      exclusions: [
        { rules: ['xss', 'sqli.union_select'], parameter: 'comment' },
        { rules: ['traversal'], url_pattern: '/files/*' },
      ],
    });
    // Dropping an exclusion and turning the rules off.
    const fewer = await update(r, updated, { ...writable(updated, r), managed_rules: managedConfig({ enabled: false, paranoia_level: n(3), exclusions: [exclusion({ rules: ['traversal'], url_pattern: '/files/*' })] }) });
    expect((await t.call('GET', `/api/v1/shield/sites/${String(state.id)}`)).body.managed_rules).toEqual({ enabled: false, paranoia_level: 3, exclusions: [{ rules: ['traversal'], url_pattern: '/files/*' }] });
    // The same number spelled otherwise is no change: prior's spelling is kept.
    const respelled = configOf(r, { ...writable(fewer.state, r), managed_rules: managedConfig({ enabled: false, paranoia_level: new TfNumber('3.0'), exclusions: [exclusion({ rules: ['traversal'], url_pattern: '/files/*' })] }) });
    expect(r.plan({ prior: fewer.state, proposed: respelled, config: respelled }).planned).toEqual(fewer.state);

    const moved = configOf(r, { ...writable(fewer.state, r), domain: domain(), managed_rules: null });
    const replace = r.plan({ prior: fewer.state, proposed: moved, config: moved });
    expect(replace.requiresReplace).toEqual([['domain']]);
    expect(replace.planned?.managed_rules).toBe(UNKNOWN); // the new site gets the API's default, not the old value
    expectPlanValid(r, fewer.state, moved, replace.planned!);
    const movedWith = configOf(r, { ...writable(fewer.state, r), domain: domain() });
    expect(r.plan({ prior: fewer.state, proposed: movedWith, config: movedWith }).planned?.managed_rules).toEqual(fewer.state.managed_rules);
  });

  it('plans unknown config values inside managed_rules as unknown, and a prior without managed_rules (old state) as unknown', () => {
    const r = resource('aegis_shield_site');
    const config = configOf(r, { domain: 'x.example.com', origin_url: 'https://o.example.com', mode: 'log', managed_rules: managedConfig({ paranoia_level: UNKNOWN }) });
    expect(r.validate(config)).toEqual([]);
    const planned = r.plan({ prior: null, proposed: config, config }).planned!;
    expect(planned.managed_rules).toEqual({ enabled: true, paranoia_level: UNKNOWN, exclusions: [] });
    expectPlanValid(r, null, config, planned);
    const prior = { ...configOf(r, { domain: 'x.example.com', origin_url: 'https://o.example.com', mode: 'log', path_case: 'insensitive', labels: {} }), id: 'site_x', created_at: 'a', updated_at: 'a' };
    const omitted = configOf(r, { domain: 'x.example.com', origin_url: 'https://o.example.com', mode: 'log' });
    expect(r.plan({ prior, proposed: omitted, config: omitted }).planned).toMatchObject({ managed_rules: UNKNOWN, updated_at: 'a' });
  });

  it('validates managed_rules offline with diagnostics aimed inside the nested attribute; the API agrees', async () => {
    const r = resource('aegis_shield_site');
    const base = { domain: 'shop.example.com', origin_url: 'https://o.example.com', mode: 'block' };
    const valid = r.validate(configOf(r, { ...base, managed_rules: managedConfig({ exclusions: [exclusion({ rules: ['sqli'] })] }) }));
    expect(valid).toEqual([]);
    const unknownRule = r.validate(configOf(r, { ...base, managed_rules: managedConfig({ exclusions: [exclusion({ rules: ['sqli', 'sqli.nope'] })] }) }));
    expect(unknownRule).toEqual([expect.objectContaining({ attribute: ['managed_rules', 'exclusions', 0, 'rules', 1], detail: expect.stringContaining('"sqli.nope" is not a managed rule') })]);
    const badPattern = r.validate(configOf(r, { ...base, managed_rules: managedConfig({ exclusions: [exclusion({ rules: ['xss'], url_pattern: 'no-slash' })] }) }));
    expect(badPattern).toEqual([expect.objectContaining({ attribute: ['managed_rules', 'exclusions', 0, 'url_pattern'] })]);
    const level = r.validate(configOf(r, { ...base, managed_rules: managedConfig({ paranoia_level: n(9) }) }));
    expect(level).toEqual([expect.objectContaining({ attribute: ['managed_rules', 'paranoia_level'] })]);
    expect(r.validate(configOf(r, { ...base, path_case: 'upper' }))).toEqual([expect.objectContaining({ attribute: ['path_case'] })]);

    // Past validation (as with a value unknown at validate time), the API's 422 is aimed the same way.
    const config = configOf(r, { ...base, domain: domain(), managed_rules: managedConfig({ exclusions: [exclusion({ rules: ['sqli.nope'] })] }) });
    const planned = r.plan({ prior: null, proposed: config, config }).planned;
    const applied = await r.apply({ prior: null, planned, config });
    expect(applied.state).toBeNull();
    expect(applied.diagnostics).toEqual([expect.objectContaining({ severity: 'error', attribute: ['managed_rules', 'exclusions', 0, 'rules', 0] })]);
  });
});

/** `tls` (and its `hsts`) as Terraform sends them from config: every sub-attribute present, unset ones null. */
const tlsConfig = (values: { mode?: TfValue; redirect_http?: TfValue; hsts?: TfValue; min_version?: TfValue }): TfObject => ({ mode: null, redirect_http: null, hsts: null, min_version: null, ...values });
const hstsConfig = (values: { max_age?: TfValue; include_subdomains?: TfValue; preload?: TfValue }): TfObject => ({ max_age: null, include_subdomains: null, preload: null, ...values });

describe('aegis_shield_site: tls', () => {
  it('creates with tls given: nested defaults planned (hsts too), read and import agree; the same config plans nothing', async () => {
    const r = resource('aegis_shield_site');
    const tls = tlsConfig({ mode: 'acme', hsts: hstsConfig({ max_age: n(600) }) });
    const { planned, state } = await create(r, { domain: domain(), origin_url: 'https://origin.example.com', mode: 'block', tls });
    expect(planned.tls).toEqual({ mode: 'acme', redirect_http: false, hsts: { max_age: n(600), include_subdomains: false, preload: false }, min_version: '1.2' });
    expect(state.tls).toEqual(planned.tls);
    expect(state.status).toBe('active');
    expect(state.certificate).toBeNull();
    expect(state.domain_verification).toMatchObject({ status: 'unverified', txt_record: { name: `_aegis-verify.${String(state.domain)}` } });
    const live = (await t.call('GET', `/api/v1/shield/sites/${String(state.id)}`)).body;
    expect(live.tls).toEqual({ mode: 'acme', redirect_http: false, hsts: { max_age: 600, include_subdomains: false, preload: false }, min_version: '1.2' });
    expect(await r.importState(String(state.id))).toEqual({ state, diagnostics: [] });
    const config = configOf(r, { ...writable(state, r), tls });
    expect(r.plan({ prior: state, proposed: config, config }).planned).toEqual(state);
  });

  it('updates tls in place, HSTS off again included (null is sent, not left out), and keeps it when config leaves it out', async () => {
    const r = resource('aegis_shield_site');
    const state = await newSite({ tls: tlsConfig({ mode: 'custom', redirect_http: true, hsts: hstsConfig({ max_age: n(31536000), include_subdomains: true, preload: true }) }) });
    const { plan, state: off } = await update(r, state, { ...writable(state, r), tls: tlsConfig({ mode: 'custom', redirect_http: true, min_version: '1.3' }) });
    expect(plan.requiresReplace).toEqual([]);
    expect(off.tls).toEqual({ mode: 'custom', redirect_http: true, hsts: null, min_version: '1.3' });
    expect((await t.call('GET', `/api/v1/shield/sites/${String(state.id)}`)).body.tls).toEqual({ mode: 'custom', redirect_http: true, hsts: null, min_version: '1.3' });

    const omitted = configOf(r, { ...writable(off, r), tls: null });
    expect(r.plan({ prior: off, proposed: omitted, config: omitted }).planned).toEqual(off);
    const moded = await update(r, off, { ...writable(off, r), tls: null, mode: 'log' });
    expect(moded.plan.planned?.tls).toEqual(off.tls);
    expect((await t.call('GET', `/api/v1/shield/sites/${String(state.id)}`)).body).toMatchObject({ mode: 'log', tls: { mode: 'custom', min_version: '1.3' } });
  });

  it('creates with tls left out: unknown until the API answers with the server default', async () => {
    const r = resource('aegis_shield_site');
    const { planned, state } = await create(r, { domain: domain(), origin_url: 'https://origin.example.com', mode: 'log' });
    expect(planned.tls).toBe(UNKNOWN);
    // This server has no TLS port: plain HTTP.
    expect(state.tls).toEqual({ mode: 'off', redirect_http: false, hsts: null, min_version: '1.2' });
  });

  it('validates tls offline (a mode is required, values by path); the API refuses HSTS preload without a year, aimed at the attribute', async () => {
    const r = resource('aegis_shield_site');
    const base = { domain: 'shop.example.com', origin_url: 'https://o.example.com', mode: 'block' };
    expect(r.validate(configOf(r, { ...base, tls: tlsConfig({ mode: 'acme' }) }))).toEqual([]);
    expect(r.validate(configOf(r, { ...base, tls: tlsConfig({ mode: 'letsencrypt' }) }))).toEqual([expect.objectContaining({ attribute: ['tls', 'mode'] })]);
    expect(r.validate(configOf(r, { ...base, tls: tlsConfig({ mode: 'acme', hsts: hstsConfig({ max_age: n(-1) }) }) }))).toEqual([expect.objectContaining({ attribute: ['tls', 'hsts', 'max_age'] })]);
    const config = configOf(r, { ...base, domain: domain(), tls: tlsConfig({ mode: 'acme', hsts: hstsConfig({ preload: true }) }) });
    const planned = r.plan({ prior: null, proposed: config, config }).planned;
    const applied = await r.apply({ prior: null, planned, config });
    expect(applied.state).toBeNull();
    expect(applied.diagnostics).toEqual([expect.objectContaining({ severity: 'error', attribute: ['tls', 'hsts', 'preload'] })]);
  });
});

describe('site rules', () => {
  it('creates an IP rule under its site, imports it by SITE_ID/RULE_ID to the state read gives', async () => {
    const site = await newSite();
    const r = resource('aegis_ip_access_rule');
    const { planned, state } = await create(r, { site_id: site.id as string, type: 'cidr', value: '198.51.100.0/24', action: 'deny' });
    expect(planned).toMatchObject({ id: UNKNOWN, status: UNKNOWN, note: '', labels: {}, expires_at: null });
    expect(state).toMatchObject({ site_id: site.id, status: 'active' });
    const read = await r.read(state);
    expect(read.state).toEqual(state);
    const imported = await r.importState(`${String(site.id)}/${String(state.id)}`);
    expect(imported).toEqual({ state: read.state, diagnostics: [] });
    expect((await r.importState('just-one-part')).diagnostics[0]?.summary).toMatch(/invalid import id/);
    expect((await r.importState(`${String(site.id)}/ipr_nope`)).diagnostics[0]?.summary).toMatch(/cannot import/);

    // action is mutable, value is not.
    const note = await update(r, state, { ...writable(state, r), action: 'challenge', note: 'tor exit' });
    expect(note.plan.requiresReplace).toEqual([]);
    const other = configOf(r, { ...writable(note.state, r), value: '198.51.101.0/24' });
    expect(r.plan({ prior: note.state, proposed: other, config: other }).requiresReplace).toEqual([['value']]);
  });

  it('turns API errors into diagnostics aimed at the attribute the API names', async () => {
    const site = await newSite();
    const r = resource('aegis_ip_access_rule');
    const config = configOf(r, { site_id: site.id as string, type: 'ip', value: '203.0.113.9', action: 'deny', expires_at: '2001-01-01T00:00:00Z' });
    expect(r.validate(config)).toEqual([]);
    const planned = r.plan({ prior: null, proposed: config, config }).planned;
    const applied = await r.apply({ prior: null, planned, config });
    expect(applied.state).toBeNull();
    expect(applied.diagnostics).toEqual([expect.objectContaining({ severity: 'error', attribute: ['expires_at'] })]);
  });

  it('validates IP values and RE2 patterns offline', () => {
    const ip = resource('aegis_ip_access_rule');
    expect(ip.validate(configOf(ip, { site_id: 's', type: 'ip', value: '300.1.1.1', action: 'deny' }))).toEqual([expect.objectContaining({ attribute: ['value'] })]);
    expect(ip.validate(configOf(ip, { site_id: 's', type: 'cidr', value: '198.51.100.1/24', action: 'deny' }))[0]?.detail).toMatch(/host bits/);
    expect(ip.validate(configOf(ip, { site_id: 's', type: UNKNOWN, value: '300.1.1.1', action: 'deny' }))).toEqual([]);
    const patch = resource('aegis_virtual_patch');
    const base = { site_id: 's', url_pattern: '/search', method: 'GET', match_param: 'q' };
    expect(patch.validate(configOf(patch, { ...base, match_regex: '(a)\\1' }))).toEqual([expect.objectContaining({ attribute: ['match_regex'] })]);
    expect(patch.validate(configOf(patch, { ...base, match_regex: '(?i)union\\s+select' }))).toEqual([]);
    const limit = resource('aegis_rate_limit_rule');
    const budget = limit.validate(configOf(limit, { site_id: 's', identity: 'ip', url_pattern: '/login', method: 'POST', budget: TfNumber.of(0), window_seconds: TfNumber.of(60), action: 'block' }));
    expect(budget).toEqual([expect.objectContaining({ attribute: ['budget'] })]);
  });

  it('creates a virtual patch and a rate-limit rule; labels change in place, the pattern replaces', async () => {
    const site = await newSite();
    const patch = resource('aegis_virtual_patch');
    const created = await create(patch, { site_id: site.id as string, url_pattern: '/search', method: 'GET', match_param: 'q', match_regex: '(?i)union\\s+select', expires_in_days: TfNumber.of(30) });
    expect(created.planned.action).toBe('block');
    expect(typeof created.state.expires_at).toBe('string');
    const relabel = await update(patch, created.state, { ...writable(created.state, patch), labels: { cve: 'cve-2024-1' } });
    expect(relabel.plan.requiresReplace).toEqual([]);
    expect(relabel.plan.planned?.expires_at).toBe(created.state.expires_at);
    const other = configOf(patch, { ...writable(relabel.state, patch), match_regex: 'drop\\s+table' });
    expect(patch.plan({ prior: relabel.state, proposed: other, config: other }).requiresReplace).toEqual([['match_regex']]);

    const limit = resource('aegis_rate_limit_rule');
    const rl = await create(limit, { site_id: site.id as string, identity: 'ip', url_pattern: '/login', method: 'POST', budget: TfNumber.of(10), window_seconds: TfNumber.of(60), action: 'block' });
    expect(rl.state.escalate_to_deny_minutes).toEqual(TfNumber.of(0));
    const raised = await update(limit, rl.state, { ...writable(rl.state, limit), budget: TfNumber.of(20) });
    expect(raised.plan.requiresReplace).toEqual([]);
    expect((await limit.read(raised.state)).state).toEqual(raised.state);
  });

  it('manages the site schema: PUT + schema-config, import by SITE_ID', async () => {
    const site = await newSite();
    const r = resource('aegis_shield_schema');
    const document = 'openapi: 3.0.3\ninfo: { title: Shop, version: "1.0" }\npaths:\n  /search:\n    get:\n      responses:\n        "200": { description: ok }\n';
    const { planned, state } = await create(r, { site_id: site.id as string, document });
    expect(planned).toMatchObject({ strictness: 'standard', hash: UNKNOWN, operations: UNKNOWN });
    expect(state).toMatchObject({ id: site.id, site_id: site.id, openapi_version: '3.0.3', operations: [{ method: 'GET', path: '/search', operation_id: null }] });
    const strict = await update(r, state, { ...writable(state, r), strictness: 'strict' });
    expect(strict.plan.planned).toMatchObject({ hash: state.hash, operations: state.operations, updated_at: UNKNOWN });
    expect(strict.state.strictness).toBe('strict');
    expect((await t.call('GET', `/api/v1/shield/sites/${String(site.id)}/schema-config`)).body.strictness).toBe('strict');
    expect(await r.importState(String(site.id))).toEqual({ state: strict.state, diagnostics: [] });
    expect(await r.apply({ prior: strict.state, planned: null, config: null })).toEqual({ state: null, diagnostics: [] });
    expect(await r.read(strict.state)).toEqual({ state: null, diagnostics: [] });
  });
});

describe('top-level kinds', () => {
  it('keeps the webhook secret, returned only on create, in state afterwards', async () => {
    const r = resource('aegis_webhook');
    const { planned, state } = await create(r, { url: 'https://hooks.example.com/aegis', events: ['scan.completed', 'vulnerability.created'] });
    expect(planned.secret).toBe(UNKNOWN);
    expect(state.secret).toMatch(/^whsec_/);
    expect(state).toMatchObject({ enabled: true, description: '' });
    const changed = await update(r, state, { ...writable(state, r), description: 'SOC pager', events: ['vulnerability.created', 'scan.completed', 'shield.block'] });
    expect(changed.plan.requiresReplace).toEqual([]);
    expect(changed.state.secret).toBe(state.secret);
    expect((await r.read(changed.state)).state).toEqual(changed.state);
    // Set order means nothing.
    const reordered = configOf(r, { ...writable(changed.state, r), events: ['shield.block', 'scan.completed', 'vulnerability.created'] });
    expect(r.plan({ prior: changed.state, proposed: reordered, config: reordered }).planned).toEqual(changed.state);
    const imported = await r.importState(String(state.id));
    expect(imported.state).toMatchObject({ id: state.id, secret: null });
  });

  it('carries the scan schedule config as JSON text', async () => {
    const r = resource('aegis_scan_schedule');
    const { state } = await create(r, { name: `nightly-${Date.now()}`, scan_type: 'dast', target: 'https://shop.example.com', cron: '0 3 * * *', config_json: '{ "scope": "full", "budget": 5 }' });
    expect(state.config_json).toBe('{ "scope": "full", "budget": 5 }');
    expect(state.next_run_at).toEqual(expect.any(String));
    // Same content, other spelling: no change planned, and read keeps the text.
    const respelled = configOf(r, { ...writable(state, r), config_json: '{"budget":5,"scope":"full"}' });
    expect(r.plan({ prior: state, proposed: respelled, config: respelled }).planned).toEqual(state);
    expect((await r.read(state)).state).toEqual(state);
    const imported = await r.importState(String(state.id));
    expect(imported.state?.config_json).toBe('{"budget":5,"scope":"full"}');
    const bad = r.validate(configOf(r, { ...writable(state, r), config_json: '[1]' }));
    expect(bad).toEqual([expect.objectContaining({ attribute: ['config_json'] })]);
    const paused = await update(r, state, { ...writable(state, r), enabled: false });
    expect(paused.plan.planned?.next_run_at).toBe(UNKNOWN);
    expect(paused.state.next_run_at).toBeNull();
  });
});

describe('data sources', () => {
  it('finds a site by domain and lists every site', async () => {
    const site = await newSite({ labels: { team: 'web' } });
    const one = await dataSource('aegis_shield_site').read({ domain: site.domain as string, id: null, origin_url: null, mode: null, labels: null, created_at: null, updated_at: null });
    expect(one).toEqual({ state: site, diagnostics: [] });
    const missing = await dataSource('aegis_shield_site').read({ domain: 'nowhere.example.com' });
    expect(missing.diagnostics[0]).toMatchObject({ severity: 'error', attribute: ['domain'] });
    const all = await dataSource('aegis_shield_sites').read({ sites: null });
    expect(all.diagnostics).toEqual([]);
    const sites = all.state?.sites as TfValue[];
    expect(sites).toContainEqual(site);
  });
});
