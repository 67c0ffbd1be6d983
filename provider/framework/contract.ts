// The contract between the plugin-protocol server (provider/server, provider/values) and the Aegis
// resources (provider/resources): schemas in Terraform's terms, values as decoded from
// DynamicValue, and the handlers each resource and data source implements. The server speaks
// gRPC and msgpack; resources never see either.

/** Terraform type constraint, as the JSON Terraform expects in Attribute.type. */
export type TfType =
  | 'string'
  | 'number'
  | 'bool'
  | 'dynamic'
  | readonly ['list', TfType]
  | readonly ['set', TfType]
  | readonly ['map', TfType]
  | readonly ['object', { readonly [attribute: string]: TfType }];

/** How a nested attribute holds its object(s): one object, or a list of them (protocol 6 Schema.Object.NestingMode). */
export type NestingMode = 'single' | 'list';

/**
 * The object of a nested attribute (protocol 6 `nested_type`): its own attributes, each required,
 * optional or computed like a top-level one, so HCL can leave optional ones out.
 */
export interface NestedObjectSchema {
  nesting: NestingMode;
  attributes: AttributeSchema[];
}

export interface AttributeSchema {
  name: string;
  /**
   * The type of the attribute's values. For a nested attribute it is the type its nested object
   * implies (`object` for single nesting, `list` of `object` for list nesting): values are encoded
   * with it, while the schema sent to Terraform carries `nested` instead (use nestedAttributeType).
   */
  type: TfType;
  /** Set for a nested attribute (sent as `nested_type`, never together with `type`). */
  nested?: NestedObjectSchema;
  description: string;
  required?: boolean;
  optional?: boolean;
  computed?: boolean;
  sensitive?: boolean;
  /**
   * Write-only (protocol 6.8, Terraform 1.11+): given in config, never in plan or state. Plans and
   * states hold null for it; the resource sees the value in the request's `config`.
   */
  writeOnly?: boolean;
}

/** The value type a nested object implies, as Terraform derives it (configschema.Object.ImpliedType). */
export function nestedAttributeType(nested: NestedObjectSchema): TfType {
  const object: TfType = ['object', Object.fromEntries(nested.attributes.map((a) => [a.name, a.type]))];
  return nested.nesting === 'single' ? object : ['list', object];
}

export interface BlockSchema {
  description: string;
  attributes: AttributeSchema[];
}

/** A value not known until apply. */
export const UNKNOWN: unique symbol = Symbol('unknown');
export type Unknown = typeof UNKNOWN;

/**
 * A Terraform number, kept exact: msgpack integers beyond 2^53 and decimals that are not exact
 * float64 arrive as text. `Number(n.text)` when a JS number is enough.
 */
export class TfNumber {
  constructor(readonly text: string) {}
  static of(value: number | bigint): TfNumber {
    return new TfNumber(String(value));
  }
  toNumber(): number {
    return Number(this.text);
  }
}

export type TfValue = null | Unknown | string | boolean | TfNumber | TfValue[] | { [key: string]: TfValue };
export type TfObject = { [attribute: string]: TfValue };

/** A path to an attribute, e.g. ['labels', 'team'] (string steps are attribute names or map keys, numbers list indexes). */
export type AttributePath = (string | number)[];

export interface Diagnostic {
  severity: 'error' | 'warning';
  summary: string;
  detail?: string;
  attribute?: AttributePath;
}

export interface PlanRequest {
  prior: TfObject | null;
  proposed: TfObject | null;
  config: TfObject | null;
}

export interface PlanResponse {
  planned: TfObject | null;
  requiresReplace: AttributePath[];
  diagnostics: Diagnostic[];
}

export interface ApplyRequest {
  prior: TfObject | null;
  planned: TfObject | null;
  config: TfObject | null;
}

export interface StateResponse {
  state: TfObject | null;
  diagnostics: Diagnostic[];
}

export interface ResourceDefinition {
  typeName: string;
  version: number;
  schema: BlockSchema;
  validate(config: TfObject): Diagnostic[];
  plan(request: PlanRequest): PlanResponse;
  /**
   * Optional warnings about a plan that stands (no errors), asked after `plan`: what the change
   * would do beyond its own values (the Shield impact preview). May call the API; resolves to no
   * diagnostics rather than fail, so it can never fail a plan.
   */
  planWarnings?(request: PlanRequest, plan: PlanResponse): Promise<Diagnostic[]>;
  /** Create (prior null), update, or delete (planned null). */
  apply(request: ApplyRequest): Promise<StateResponse>;
  /** Null state: the object is gone (Terraform drops it from state). */
  read(state: TfObject): Promise<StateResponse>;
  /** `terraform import` by id (rules as SITE_ID/RULE_ID). */
  importState(id: string): Promise<StateResponse>;
}

export interface DataSourceDefinition {
  typeName: string;
  schema: BlockSchema;
  read(config: TfObject): Promise<StateResponse>;
}

export interface ProviderDefinition {
  schema: BlockSchema;
  configure(config: TfObject, terraformVersion: string): Promise<Diagnostic[]>;
  resources: ResourceDefinition[];
  dataSources: DataSourceDefinition[];
}
