// TypeScript shapes of the tfplugin6 messages as @grpc/proto-loader hands them over (keepCase,
// int64 as string, bytes as Buffer, enums as numbers, defaults off: absent fields are undefined).
import type { DynamicValueMessage } from '../values/dynamic-value.ts';

export type DynamicValue = DynamicValueMessage;

/** Diagnostic.Severity: ERROR = 1, WARNING = 2 (0, INVALID, makes Terraform drop the diagnostic). */
export type Severity = 1 | 2;

/** StringKind: PLAIN = 0, MARKDOWN = 1. */
export type StringKind = 0 | 1;

export type AttributePathStep = { attribute_name: string } | { element_key_string: string } | { element_key_int: number };

export interface AttributePathMessage {
  steps: AttributePathStep[];
}

export interface DiagnosticMessage {
  severity: Severity;
  summary: string;
  detail?: string;
  attribute?: AttributePathMessage;
}

/** Schema.Object.NestingMode: SINGLE = 1, LIST = 2 (SET = 3, MAP = 4 are not used). */
export type ObjectNestingMode = 1 | 2 | 3 | 4;

/** Schema.Object: the object of a nested attribute. */
export interface ObjectMessage {
  attributes: AttributeMessage[];
  nesting: ObjectNestingMode;
}

/** Exactly one of `type` and `nested_type` is set: Terraform panics on an empty `type`. */
export interface AttributeMessage {
  name: string;
  type?: Buffer;
  nested_type?: ObjectMessage;
  description: string;
  description_kind: StringKind;
  required: boolean;
  optional: boolean;
  computed: boolean;
  sensitive: boolean;
  write_only: boolean;
}

export interface BlockMessage {
  version: number;
  attributes: AttributeMessage[];
  block_types: never[];
  description: string;
  description_kind: StringKind;
}

export interface SchemaMessage {
  version: number;
  block: BlockMessage;
}

export interface GetProviderSchemaResponse {
  provider: SchemaMessage;
  resource_schemas: Record<string, SchemaMessage>;
  data_source_schemas: Record<string, SchemaMessage>;
  diagnostics: DiagnosticMessage[];
  server_capabilities: { plan_destroy: boolean };
}

export interface ConfigRequest {
  type_name?: string;
  config?: DynamicValue;
}

export interface DiagnosticsResponse {
  diagnostics: DiagnosticMessage[];
}

export interface UpgradeResourceStateRequest {
  type_name: string;
  version?: string;
  raw_state?: { json?: Buffer; flatmap?: Record<string, string> };
}

export interface UpgradeResourceStateResponse {
  upgraded_state?: DynamicValue;
  diagnostics: DiagnosticMessage[];
}

export interface ConfigureProviderRequest {
  terraform_version?: string;
  config?: DynamicValue;
}

export interface ReadResourceRequest {
  type_name: string;
  current_state?: DynamicValue;
  private?: Buffer;
}

export interface ReadResourceResponse {
  new_state?: DynamicValue;
  diagnostics: DiagnosticMessage[];
  private?: Buffer;
}

export interface PlanResourceChangeRequest {
  type_name: string;
  prior_state?: DynamicValue;
  proposed_new_state?: DynamicValue;
  config?: DynamicValue;
  prior_private?: Buffer;
}

export interface PlanResourceChangeResponse {
  planned_state?: DynamicValue;
  requires_replace: AttributePathMessage[];
  planned_private?: Buffer;
  diagnostics: DiagnosticMessage[];
}

export interface ApplyResourceChangeRequest {
  type_name: string;
  prior_state?: DynamicValue;
  planned_state?: DynamicValue;
  config?: DynamicValue;
  planned_private?: Buffer;
}

export interface ApplyResourceChangeResponse {
  new_state?: DynamicValue;
  private?: Buffer;
  diagnostics: DiagnosticMessage[];
}

export interface ImportResourceStateRequest {
  type_name: string;
  id: string;
}

export interface ImportResourceStateResponse {
  imported_resources: { type_name: string; state: DynamicValue; private?: Buffer }[];
  diagnostics: DiagnosticMessage[];
}

export interface ReadDataSourceRequest {
  type_name: string;
  config?: DynamicValue;
}

export interface ReadDataSourceResponse {
  state?: DynamicValue;
  diagnostics: DiagnosticMessage[];
}
