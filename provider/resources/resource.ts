// One generic ResourceDefinition per managed kind, driven by the derived schema (schema.ts) and
// KindMeta; the little that differs per kind is in its kind registry entry (reconciler/kinds:
// `provider` traits, `singleton`).
//
// Terraform's rules this code keeps (see the plugin-protocol notes):
// - plan: every planned value is the config value, the prior value, or (computed attributes only)
//   something else — here the spec default or UNKNOWN. Inside a nested attribute Terraform checks
//   each sub-attribute the same way, so only null sub-attributes with a default are filled in;
//   a nested attribute without a default left out of config keeps the prior value (unknown on
//   create and replacement: the API chooses it);
// - apply: the result is wholly known and every value known at plan time comes back unchanged;
// - read: null state means the object is gone.
// Shield sites and their rules also warn, at plan time, what the change would have done to the
// site's recorded traffic (impact.ts), proposing exactly the bodies apply sends.
import { createHash } from 'node:crypto';
import { kindEntry } from '../../reconciler/kinds/index.ts';
import type { Fields } from '../../reconciler/live/resources.ts';
import { UNKNOWN, type AttributePath, type Diagnostic, type PlanRequest, type PlanResponse, type ResourceDefinition, type StateResponse, type TfObject, type TfValue } from '../framework/contract.ts';
import { errorDiagnostics, isNotFound, type Connect, type Connection } from './context.ts';
import { getObject } from './get.ts';
import { IMPACT_RULE_KINDS, ruleProposal, siteProposal, type PlannedChange, type RequestBodies, type SiteProposal } from './impact.ts';
import type { AttributeMapping, KindSchema } from './schema.ts';
import { pathForApiField, validateConfig } from './validate.ts';
import { apiJson, attr, canonicalJson, containsUnknown, fromJson, parseJsonObject, sameValue, withNestedDefaults } from './values.ts';
import type { Json } from './values.ts';

/** Computed attributes no in-place update changes. */
const STABLE = new Set(['id', 'created_at', 'secret', 'secret_last4', 'source_finding_id']);

interface Ids {
  id: string;
  siteId: string | undefined;
}

const stringOrUndefined = (value: TfValue): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

export function createKindResource(kind: KindSchema, connect: Connect): ResourceDefinition {
  const entry = kindEntry(kind.kind);
  const traits = entry.provider;
  const isSiteKind = entry.parent !== null;
  // A singleton (a site's schema) has no id of its own: its id is its site's.
  const { singleton } = entry;
  const label = kind.meta.terraformType;
  const toPath = (field: string): AttributePath | undefined => pathForApiField(kind, field);
  const writeOnly = kind.attributes.filter((m) => m.writeOnly);

  /** SHA-256 (hex) of a write-only value as config gives it: null when left out, unknown while it is. */
  const digestOfValue = (value: TfValue): TfValue => (value === null ? null : typeof value === 'string' ? createHash('sha256').update(value, 'utf8').digest('hex') : UNKNOWN);
  /** The digest attribute's name for a write-only mapping, and back. */
  const digestMapping = (field: string): AttributeMapping | undefined => kind.attributes.find((m) => m.digestOf === field);
  /** Write-only values go with every write: the API takes them whole (a certificate with its key), and no prior value is kept to compare. */
  const writeOnlyBody = (config: TfObject | null): Record<string, Json> =>
    Object.fromEntries(writeOnly.flatMap((m) => {
      const value = attr(config, m.schema.name);
      return typeof value === 'string' ? [[m.field, value]] : [];
    }));

  /**
   * What the configuration asks for: the value written, else the spec default, else null; inside
   * nested attributes, null sub-attributes take their defaults the same way.
   */
  const desired = (mapping: AttributeMapping, config: TfObject | null): TfValue => withNestedDefaults(mapping, attr(config, mapping.schema.name));

  const same = (mapping: AttributeMapping, a: TfValue, b: TfValue): boolean => sameValue(a, b, mapping.schema.type, mapping.json);

  /** The API value of an attribute as Terraform holds it, reusing `hint`'s form when it means the same (JSON text, number text). */
  function stateValue(mapping: AttributeMapping, fields: Fields, hint: TfValue | undefined): TfValue {
    const raw = fields[mapping.field];
    const value = mapping.json ? (raw === null || raw === undefined ? null : canonicalJson(raw)) : fromJson(raw, mapping.schema.type);
    return hint !== undefined && hint !== UNKNOWN && !containsUnknown(hint) && same(mapping, hint, value) ? hint : value;
  }

  /**
   * State from an API object. `planned` values that were known at plan time are returned as they
   * were (Terraform insists); fields the answer lacks (the webhook secret after creation) come from
   * `prior`.
   */
  function toState(fields: Fields, siteId: string | undefined, planned: TfObject | null, prior: TfObject | null): TfObject {
    const state: TfObject = {};
    for (const mapping of kind.attributes) {
      const name = mapping.schema.name;
      const plannedValue = planned ? attr(planned, name) : undefined;
      if (plannedValue !== undefined && !containsUnknown(plannedValue)) {
        state[name] = plannedValue;
        continue;
      }
      const priorValue = prior ? attr(prior, name) : null;
      if (mapping.parent || mapping.field === 'site_id') {
        state[name] = siteId ?? null; // the parent, or the schema kind's id (which is its site's)
      } else if (mapping.writeOnly) {
        state[name] = null; // never in state
      } else if (entry.digest?.field === mapping.field && typeof priorValue === 'string' && entry.digest.of(priorValue) === fields[entry.digest.as]) {
        // The API holds what state says, in its own spelling (a certificate's normalised PEM): keep state's.
        state[name] = priorValue;
      } else if (fields[mapping.field] === undefined) {
        const kept = prior ? attr(prior, name) : null;
        state[name] = containsUnknown(kept) ? null : kept;
      } else {
        state[name] = stateValue(mapping, fields, prior ? attr(prior, name) : undefined);
      }
    }
    return state;
  }

  function idsOf(state: TfObject): Ids | undefined {
    const siteId = stringOrUndefined(attr(state, 'site_id'));
    const id = singleton ? siteId : stringOrUndefined(attr(state, 'id'));
    if (!id || (isSiteKind && !siteId)) return undefined;
    return { id, siteId };
  }

  function bodyValue(mapping: AttributeMapping, value: TfValue): Json {
    if (mapping.json && typeof value === 'string') {
      const parsed = parseJsonObject(value);
      if (!parsed.ok) throw new Error(`${mapping.schema.name} ${parsed.reason}`);
      return parsed.value;
    }
    // Null sub-attributes of nested objects are left out: the API has no null for them.
    return apiJson(mapping, value);
  }

  /** The body of a create: every configured value (unknown ones left to the API), write-only ones included. */
  function createBody(planned: TfObject, config: TfObject | null): Record<string, Json> {
    const body: Record<string, Json> = {};
    for (const mapping of kind.attributes) {
      if (!mapping.configurable || mapping.parent || mapping.writeOnly) continue;
      const value = attr(planned, mapping.schema.name);
      // Unknown: left out of config, the API chooses (keepWhenOmitted).
      if (value === null || containsUnknown(value)) continue;
      body[mapping.field] = bodyValue(mapping, value);
    }
    return { ...body, ...writeOnlyBody(config) };
  }

  /** The body of an update in place: the fields whose value changes (empty: nothing to send). */
  function updateBody(prior: TfObject, planned: TfObject, config: TfObject | null): Record<string, Json> {
    const changes: Record<string, Json> = {};
    for (const mapping of kind.attributes) {
      if (!mapping.configurable || mapping.parent) continue;
      const name = mapping.schema.name;
      if (mapping.writeOnly) {
        // A changed digest means a new value; it is sent below with every write-only field.
        const digest = digestMapping(mapping.field);
        if (digest && attr(planned, digest.schema.name) !== attr(prior, digest.schema.name)) changes[mapping.field] = null;
        continue;
      }
      const value = attr(planned, name);
      if (containsUnknown(value)) continue; // keepWhenOmitted without a prior value: nothing to ask for
      if (!same(mapping, attr(prior, name), value)) changes[mapping.field] = bodyValue(mapping, value);
    }
    if (Object.keys(changes).length > 0) Object.assign(changes, writeOnlyBody(config));
    return changes;
  }

  const bodies: RequestBodies = { create: createBody, update: updateBody };
  /** `aegis_ip_access_rule ip 192.0.2.50 (deny)`: the object a state holds, as the kind describes it. */
  const describeState = (state: TfObject): string => {
    const fields = Object.fromEntries(kind.attributes.flatMap((m) => {
      const value = attr(state, m.schema.name);
      return typeof value === 'string' ? [[m.field, value]] : [];
    }));
    return `${label} ${entry.describe({ id: stringOrUndefined(attr(state, 'id')) ?? '', fields })}`;
  };
  // The Shield site and the rules the impact preview takes; other kinds change no verdict on traffic.
  const impactRuleKind = kind.kind in IMPACT_RULE_KINDS ? IMPACT_RULE_KINDS[kind.kind as keyof typeof IMPACT_RULE_KINDS] : undefined;
  const proposalFor: ((change: PlannedChange) => SiteProposal | undefined) | undefined =
    impactRuleKind !== undefined ? (change) => ruleProposal(impactRuleKind, change, bodies, describeState) : kind.kind === 'ShieldSite' ? (change) => siteProposal(change, bodies) : undefined;

  function withConnection<T>(run: (connection: Connection) => Promise<T>, onError: (error: unknown) => T): Promise<T> {
    let connection: Connection;
    try {
      connection = connect();
    } catch (err) {
      return Promise.resolve(onError(err));
    }
    return run(connection).catch(onError);
  }

  async function readBack(connection: Connection, fields: Fields, ids: Ids): Promise<Fields> {
    if (!traits.readBackAfterWrite) return fields;
    return (await getObject(connection, kind.kind, ids.id, ids.siteId)) ?? fields;
  }

  return {
    typeName: kind.meta.terraformType,
    version: 0,
    schema: kind.block,

    validate(config) {
      return validateConfig(kind, config);
    },

    plan({ prior, proposed, config }: PlanRequest): PlanResponse {
      if (proposed === null) return { planned: null, requiresReplace: [], diagnostics: [] };
      const planned: TfObject = {};
      const changed = new Set<string>();
      const requiresReplace: AttributePath[] = [];
      const omitted: AttributeMapping[] = [];
      for (const mapping of kind.attributes) {
        if (!mapping.configurable) continue;
        const name = mapping.schema.name;
        if (mapping.writeOnly) {
          // Never planned (null); compared through the digest state holds instead.
          planned[name] = null;
          const digest = digestMapping(mapping.field);
          const now = digestOfValue(attr(config, name));
          if (digest) planned[digest.schema.name] = now;
          if (prior && (now === UNKNOWN || !digest || attr(prior, digest.schema.name) !== now)) {
            changed.add(mapping.field);
            if (mapping.forcesReplacement) requiresReplace.push([name]);
          }
          continue;
        }
        if (mapping.keepWhenOmitted && attr(config, name) === null) {
          omitted.push(mapping); // planned below, once it is known whether the object is replaced
          continue;
        }
        const value = desired(mapping, config);
        planned[name] = value;
        if (prior && !same(mapping, attr(prior, name), value)) {
          changed.add(mapping.field);
          if (mapping.forcesReplacement) requiresReplace.push([name]);
        }
        // Keep prior's spelling when the meaning is the same (JSON text, set order), so no diff shows.
        if (prior && !changed.has(mapping.field)) planned[name] = attr(prior, name);
      }
      const replacing = requiresReplace.length > 0;
      // Left out of config: the API's value stays (prior), or is the API's choice for a new object.
      for (const mapping of omitted) {
        const kept = prior && !replacing ? attr(prior, mapping.schema.name) : null;
        planned[mapping.schema.name] = kept === null ? UNKNOWN : kept;
      }
      for (const mapping of kind.attributes) {
        if (mapping.configurable || mapping.digestOf !== undefined) continue; // digests: planned with their field
        const name = mapping.schema.name;
        if (!prior || replacing) {
          planned[name] = UNKNOWN;
          continue;
        }
        const dependsOn = traits.dependsOn?.[mapping.field];
        const affected = dependsOn ? dependsOn.some((field) => changed.has(field)) : changed.size > 0 && !STABLE.has(mapping.field);
        planned[name] = affected ? UNKNOWN : attr(prior, name);
      }
      return { planned, requiresReplace, diagnostics: [] };
    },

    ...(proposalFor
      ? {
          // The impact preview: the change as the API would take it on apply (the same bodies), replayed over the site's recorded traffic.
          async planWarnings({ prior, config }: PlanRequest, plan: PlanResponse): Promise<Diagnostic[]> {
            const change = proposalFor({ prior, planned: plan.planned, config, replacing: plan.requiresReplace.length > 0 });
            if (!change) return [];
            return withConnection((connection) => connection.impact?.preview(change) ?? Promise.resolve([]), () => []);
          },
        }
      : {}),

    apply({ prior, planned, config }): Promise<StateResponse> {
      return withConnection(
        async (connection): Promise<StateResponse> => {
          const { api } = connection;
          // Delete.
          if (planned === null) {
            const ids = prior ? idsOf(prior) : undefined;
            if (ids) {
              try {
                await api.remove(kind.kind, ids.id, ids.siteId);
              } catch (err) {
                if (!isNotFound(err)) throw err; // already gone: what we wanted
              }
            }
            return { state: null, diagnostics: [] };
          }
          const siteId = stringOrUndefined(attr(planned, 'site_id'));
          // Create.
          if (prior === null) {
            const created = await api.create(kind.kind, createBody(planned, config), siteId);
            const id = singleton ? siteId : stringOrUndefined(fromJson(created.id, 'string'));
            const fields = id ? await readBack(connection, created, { id, siteId }) : created;
            return { state: toState(fields, siteId, planned, null), diagnostics: [] };
          }
          // Update in place: send the fields whose value changes.
          const ids = idsOf(prior);
          if (!ids) return { state: prior, diagnostics: [{ severity: 'error', summary: `${label}: the prior state has no id` }] };
          const changes = updateBody(prior, planned, config);
          let fields: Fields;
          if (Object.keys(changes).length > 0) {
            fields = await readBack(connection, await api.update(kind.kind, ids.id, changes, ids.siteId), ids);
          } else {
            // Nothing to send (e.g. only a spelling of the same JSON changed): read what is there.
            fields = (await getObject(connection, kind.kind, ids.id, ids.siteId)) ?? {};
          }
          return { state: toState(fields, ids.siteId, planned, prior), diagnostics: [] };
        },
        (err) => ({
          // Nothing changed on failure: a failed create leaves nothing, a failed update or delete the prior object.
          state: prior,
          diagnostics: errorDiagnostics(`${label}: ${planned === null ? 'delete' : prior === null ? 'create' : 'update'} failed`, err, toPath),
        }),
      );
    },

    read(state): Promise<StateResponse> {
      return withConnection(
        async (connection): Promise<StateResponse> => {
          const ids = idsOf(state);
          if (!ids) return { state: null, diagnostics: [] };
          const fields = await getObject(connection, kind.kind, ids.id, ids.siteId);
          return { state: fields ? toState(fields, ids.siteId, null, state) : null, diagnostics: [] };
        },
        (err) => ({ state, diagnostics: errorDiagnostics(`${label}: read failed`, err, toPath) }),
      );
    },

    importState(importId): Promise<StateResponse> {
      const ids = parseImportId(importId);
      if (!ids) {
        const form = singleton ? 'SITE_ID' : isSiteKind ? 'SITE_ID/RULE_ID' : 'ID';
        return Promise.resolve({ state: null, diagnostics: [{ severity: 'error', summary: `${label}: invalid import id`, detail: `Expected ${form}, got ${JSON.stringify(importId)}.` }] });
      }
      return withConnection(
        async (connection): Promise<StateResponse> => {
          const fields = await getObject(connection, kind.kind, ids.id, ids.siteId);
          if (!fields) return { state: null, diagnostics: [{ severity: 'error', summary: `${label}: cannot import ${importId}`, detail: 'No such object.' }] };
          return { state: toState(fields, ids.siteId, null, null), diagnostics: [] };
        },
        (err) => ({ state: null, diagnostics: errorDiagnostics(`${label}: import of ${importId} failed`, err, toPath) }),
      );
    },
  };

  function parseImportId(importId: string): Ids | undefined {
    const parts = importId.split('/');
    if (parts.some((p) => p.trim() === '')) return undefined;
    if (singleton) return parts.length === 1 && parts[0] ? { id: parts[0], siteId: parts[0] } : undefined;
    if (isSiteKind) return parts.length === 2 && parts[0] && parts[1] ? { id: parts[1], siteId: parts[0] } : undefined;
    return parts.length === 1 && parts[0] ? { id: parts[0], siteId: undefined } : undefined;
  }
}
