// The tfplugin6.Provider RPCs mapped onto a ProviderDefinition. Each method takes and returns the
// proto-loader message shapes; serve.ts puts them on gRPC. Every exception (a handler throwing, a
// value not fitting its schema) becomes an error diagnostic: Terraform shows it and the plugin lives.
import type { BlockSchema, DataSourceDefinition, Diagnostic, ProviderDefinition, ResourceDefinition, TfObject, TfValue } from '../framework/contract.ts';
import type * as M from '../protocol/messages.ts';
import { decodeDynamicValue, encodeDynamicValue, type DynamicValueMessage } from '../values/dynamic-value.ts';
import { decodeJson } from '../values/json.ts';
import { blockType } from '../values/types.ts';
import { attributePathMessage, diagnosticMessage, errorDiagnostic, hasErrors, schemaMessage } from './convert.ts';

export interface ProviderService {
  GetProviderSchema(request: object): Promise<M.GetProviderSchemaResponse>;
  ValidateProviderConfig(request: M.ConfigRequest): Promise<M.DiagnosticsResponse>;
  ValidateResourceConfig(request: M.ConfigRequest): Promise<M.DiagnosticsResponse>;
  ValidateDataResourceConfig(request: M.ConfigRequest): Promise<M.DiagnosticsResponse>;
  UpgradeResourceState(request: M.UpgradeResourceStateRequest): Promise<M.UpgradeResourceStateResponse>;
  ConfigureProvider(request: M.ConfigureProviderRequest): Promise<M.DiagnosticsResponse>;
  ReadResource(request: M.ReadResourceRequest): Promise<M.ReadResourceResponse>;
  PlanResourceChange(request: M.PlanResourceChangeRequest): Promise<M.PlanResourceChangeResponse>;
  ApplyResourceChange(request: M.ApplyResourceChangeRequest): Promise<M.ApplyResourceChangeResponse>;
  ImportResourceState(request: M.ImportResourceStateRequest): Promise<M.ImportResourceStateResponse>;
  ReadDataSource(request: M.ReadDataSourceRequest): Promise<M.ReadDataSourceResponse>;
  StopProvider(request: object): Promise<{ Error: string }>;
}

/** Objects are what every schema here describes; anything else from the wire is a protocol error. */
function asObject(value: TfValue): TfObject | null {
  if (value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value) || !(Object.getPrototypeOf(value) === Object.prototype)) {
    throw new Error('expected an object value');
  }
  return value as TfObject;
}

function decodeObject(message: DynamicValueMessage | undefined, block: BlockSchema): TfObject | null {
  return asObject(decodeDynamicValue(message, blockType(block)));
}

function encodeObject(value: TfObject | null, block: BlockSchema): DynamicValueMessage {
  return encodeDynamicValue(value, blockType(block));
}

function unknownType(kind: string, typeName: string | undefined): M.DiagnosticMessage {
  return { severity: 1, summary: `Unknown ${kind} type`, detail: `The Aegis provider has no ${kind} "${typeName ?? ''}".` };
}

function diagnostics(list: readonly Diagnostic[], block: BlockSchema): M.DiagnosticMessage[] {
  return list.map((d) => diagnosticMessage(d, block));
}

export function createProviderService(definition: ProviderDefinition): ProviderService {
  const resources = new Map<string, ResourceDefinition>(definition.resources.map((r) => [r.typeName, r]));
  const dataSources = new Map<string, DataSourceDefinition>(definition.dataSources.map((d) => [d.typeName, d]));
  const resource = (name: string | undefined): ResourceDefinition | undefined => (name === undefined ? undefined : resources.get(name));
  const dataSource = (name: string | undefined): DataSourceDefinition | undefined => (name === undefined ? undefined : dataSources.get(name));

  return {
    async GetProviderSchema() {
      return {
        provider: schemaMessage(definition.schema),
        resource_schemas: Object.fromEntries(definition.resources.map((r) => [r.typeName, schemaMessage(r.schema, r.version)])),
        data_source_schemas: Object.fromEntries(definition.dataSources.map((d) => [d.typeName, schemaMessage(d.schema)])),
        diagnostics: [],
        // Terraform asks PlanResourceChange about deletions too, so their impact can be previewed.
        server_capabilities: { plan_destroy: true },
      };
    },

    async ValidateProviderConfig(request) {
      try {
        decodeObject(request.config, definition.schema);
        return { diagnostics: [] };
      } catch (error) {
        return { diagnostics: [errorDiagnostic('Invalid provider configuration', error, definition.schema)] };
      }
    },

    async ValidateResourceConfig(request) {
      const r = resource(request.type_name);
      if (!r) return { diagnostics: [unknownType('resource', request.type_name)] };
      try {
        const config = decodeObject(request.config, r.schema);
        return { diagnostics: config ? diagnostics(r.validate(config), r.schema) : [] };
      } catch (error) {
        return { diagnostics: [errorDiagnostic(`Validating ${r.typeName} failed`, error, r.schema)] };
      }
    },

    async ValidateDataResourceConfig(request) {
      const d = dataSource(request.type_name);
      if (!d) return { diagnostics: [unknownType('data source', request.type_name)] };
      try {
        decodeObject(request.config, d.schema);
        return { diagnostics: [] };
      } catch (error) {
        return { diagnostics: [errorDiagnostic(`Validating data.${d.typeName} failed`, error, d.schema)] };
      }
    },

    // Called for every stored object on every run. The schema version has not changed yet, so the
    // stored JSON is read against the current schema (dropping attributes since removed) and sent
    // back as msgpack.
    async UpgradeResourceState(request) {
      const r = resource(request.type_name);
      if (!r) return { diagnostics: [unknownType('resource', request.type_name)] };
      try {
        const json = request.raw_state?.json;
        if (!json || json.length === 0) throw new Error('only JSON state is supported (this state is in the legacy flatmap form)');
        const state = asObject(decodeJson(json, blockType(r.schema)));
        return { upgraded_state: encodeObject(state, r.schema), diagnostics: [] };
      } catch (error) {
        return { diagnostics: [errorDiagnostic(`Reading the stored state of ${r.typeName} failed`, error, r.schema)] };
      }
    },

    async ConfigureProvider(request) {
      try {
        const config = decodeObject(request.config, definition.schema) ?? {};
        return { diagnostics: diagnostics(await definition.configure(config, request.terraform_version ?? ''), definition.schema) };
      } catch (error) {
        return { diagnostics: [errorDiagnostic('Configuring the Aegis provider failed', error, definition.schema)] };
      }
    },

    async ReadResource(request) {
      const r = resource(request.type_name);
      if (!r) return { diagnostics: [unknownType('resource', request.type_name)] };
      try {
        const current = decodeObject(request.current_state, r.schema);
        if (!current) return { new_state: encodeObject(null, r.schema), diagnostics: [], private: request.private };
        const result = await r.read(current);
        // A failed read says nothing about existence: keep the object rather than drop it.
        const state = result.state === null && hasErrors(result.diagnostics) ? current : result.state;
        return { new_state: encodeObject(state, r.schema), diagnostics: diagnostics(result.diagnostics, r.schema), private: request.private };
      } catch (error) {
        return { new_state: request.current_state, diagnostics: [errorDiagnostic(`Reading ${r.typeName} failed`, error, r.schema)], private: request.private };
      }
    },

    async PlanResourceChange(request) {
      const r = resource(request.type_name);
      if (!r) return { requires_replace: [], diagnostics: [unknownType('resource', request.type_name)] };
      try {
        const planRequest = {
          prior: decodeObject(request.prior_state, r.schema),
          proposed: decodeObject(request.proposed_new_state, r.schema),
          config: decodeObject(request.config, r.schema),
        };
        const result = r.plan(planRequest);
        // Warnings (the impact preview) only on a plan that stands, and never at its expense.
        const warnings = r.planWarnings && !hasErrors(result.diagnostics) ? await r.planWarnings(planRequest, result).catch((): Diagnostic[] => []) : [];
        return {
          planned_state: encodeObject(result.planned, r.schema),
          requires_replace: result.requiresReplace.map((path) => attributePathMessage(path, r.schema)),
          planned_private: request.prior_private,
          diagnostics: diagnostics([...result.diagnostics, ...warnings], r.schema),
        };
      } catch (error) {
        return { requires_replace: [], diagnostics: [errorDiagnostic(`Planning ${r.typeName} failed`, error, r.schema)] };
      }
    },

    async ApplyResourceChange(request) {
      const r = resource(request.type_name);
      if (!r) return { diagnostics: [unknownType('resource', request.type_name)] };
      let prior: TfObject | null = null;
      try {
        prior = decodeObject(request.prior_state, r.schema);
        const result = await r.apply({
          prior,
          planned: decodeObject(request.planned_state, r.schema),
          config: decodeObject(request.config, r.schema),
        });
        return { new_state: encodeObject(result.state, r.schema), private: request.planned_private, diagnostics: diagnostics(result.diagnostics, r.schema) };
      } catch (error) {
        // Nothing known to have changed: hand back the prior state so Terraform keeps tracking it.
        return { new_state: request.prior_state, private: request.planned_private, diagnostics: [errorDiagnostic(`Applying ${r.typeName} failed`, error, r.schema)] };
      }
    },

    async ImportResourceState(request) {
      const r = resource(request.type_name);
      if (!r) return { imported_resources: [], diagnostics: [unknownType('resource', request.type_name)] };
      try {
        const result = await r.importState(request.id);
        const imported = result.state ? [{ type_name: r.typeName, state: encodeObject(result.state, r.schema) }] : [];
        const extra = !result.state && !hasErrors(result.diagnostics)
          ? [{ severity: 1 as const, summary: 'Cannot import non-existent remote object', detail: `No ${r.typeName} with id "${request.id}".` }]
          : [];
        return { imported_resources: imported, diagnostics: [...diagnostics(result.diagnostics, r.schema), ...extra] };
      } catch (error) {
        return { imported_resources: [], diagnostics: [errorDiagnostic(`Importing ${r.typeName} failed`, error, r.schema)] };
      }
    },

    async ReadDataSource(request) {
      const d = dataSource(request.type_name);
      if (!d) return { diagnostics: [unknownType('data source', request.type_name)] };
      try {
        const config = decodeObject(request.config, d.schema) ?? {};
        const result = await d.read(config);
        return { state: encodeObject(result.state ?? config, d.schema), diagnostics: diagnostics(result.diagnostics, d.schema) };
      } catch (error) {
        return { diagnostics: [errorDiagnostic(`Reading data.${d.typeName} failed`, error, d.schema)] };
      }
    },

    async StopProvider() {
      return { Error: '' };
    },
  };
}
