// What the tools need to know about one managed kind, in one place. The planner, the live reader,
// the REST resources, `dump`, the config loader and the Terraform provider read these entries
// instead of switching over kind names, so a new kind is one module here (plus its schema in
// schemas/ and its API routes) rather than an edit in every one of them.
//
// Entries hold no reference to the `Kind` union: `Kind` is derived from the registry (index.ts),
// and an entry type that mentioned it would make that derivation circular.
import { KINDS, type KindDefinition } from '../../schemas/index.ts';
import type { AegisClient, paths } from '../../client/client.ts';

/** An object's fields as the API returns or takes them. */
export type Fields = Record<string, unknown>;

type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';

/** The paths the generated client types have an operation `M` for. */
type PathWith<M extends Method> = { [P in keyof paths]: paths[P][M] extends undefined ? never : P }[keyof paths];

/** One REST operation, checked against the generated client types (and, by test, the served OpenAPI document). */
export type Endpoint = { [M in Method]: { method: M; path: PathWith<M> } }[Method];

/** The JSON request body type of an operation: config is validated against the same schemas, hence casts to it. */
export type Body<P extends keyof paths, M extends 'post' | 'patch'> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

/**
 * The kind's REST calls over the typed client. `siteId` is the parent's id for site-level kinds
 * (they refuse to run without it) and ignored at the top. Errors are the client's AegisApiError.
 */
export interface KindOperations {
  /** Every object (of one site, for site kinds), every page. A singleton lists none or one. */
  list(client: AegisClient, siteId?: string): Promise<Fields[]>;
  /** One object; rejects with a 404 AegisApiError when it does not exist. */
  get(client: AegisClient, id: string, siteId?: string): Promise<Fields>;
  create(client: AegisClient, fields: Fields, siteId?: string): Promise<Fields>;
  update(client: AegisClient, id: string, changes: Fields, siteId?: string): Promise<Fields>;
  remove(client: AegisClient, id: string, siteId?: string): Promise<void>;
}

/** Objects nested in their parent's config document as a list of named items (`virtual_patches: [...]`). */
export interface ListNesting {
  form: 'list';
  /** The parent's spec field. */
  field: string;
  /** Present when an item may leave out `name`: how its identity is derived then, and how the schema says so. */
  defaultName?: { description: string; of(fields: Fields): string };
}

/** A singleton nested in its parent's config document as one object (`schema: {...}`), named after the parent. */
export interface SingleNesting {
  form: 'single';
  field: string;
  description: string;
}

export interface KindConfig {
  nested?: ListNesting | SingleNesting;
  /** A required spec field config may leave out: it then takes `metadata.name` (a schedule's display name). */
  nameField?: string;
  /** A spec field config may give as a file next to the YAML instead (`document_file` for `document`): exactly one of the two. */
  fileField?: { field: string; fileField: string; description: string };
  /**
   * A write-only spec field (in KindMeta.sensitive) config must not hold: it names where the value
   * is (`{ env }` / `{ file }`, kinds/secret-reference.ts), and a plain value is refused.
   */
  secretField?: { field: string; description: string };
}

/** Where `dump` writes objects of the kind. */
export type DumpLayout =
  /** One file per object, `<name>.yaml`, holding its children (nested where config can nest them). Name without a label: from its fields. */
  | { placement: 'own-file'; fallbackName(fields: Fields): string }
  /** Every object of the kind in one file. Name without a label: `<prefix>-<last 8 characters of the id>`. */
  | { placement: 'shared-file'; file: string; namePrefix: string }
  /**
   * In its parent's file: nested, or as a document of its own beside the parent's. Name without a
   * label: as for shared files, or the parent's name for singletons. `sideFileSuffix`: the
   * config.fileField value goes to `<parent name><suffix>` and is referenced from the YAML.
   */
  | { placement: 'with-parent'; namePrefix: string; sideFileSuffix?: string };

/** A finding about one field: `path` starts with the field name (`['managed_rules', 'exclusions', 0]`). */
export interface FieldNote {
  path: readonly (string | number)[];
  message: string;
}

/** The field-by-field change of one object, as the planner computes it. */
export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
}

export interface ProviderTraits {
  /** Terraform Registry navigation group of the resource (and of a data source of the same name). */
  subcategory: string;
  /**
   * Computed attributes that change only when one of these spec fields changes (kept from the
   * prior state otherwise). Others become unknown on any change, unless never changed by updates.
   */
  dependsOn?: Readonly<Record<string, readonly string[]>>;
  /** Write answers that do not carry the whole object: read it back after create/update. */
  readBackAfterWrite?: boolean;
}

export interface KindEntry<K extends string = string> {
  /** The YAML `kind`; also how plans, live state and the provider name it. */
  kind: K;
  /** The schemas/ definition: spec (writable fields), resource (as returned), meta (identity, mutable, computed…). */
  definition: KindDefinition;
  /** The kind it lives under (from definition.meta): config names it in `spec.site`, REST nests it in `/sites/{id}/…`. */
  parent: 'ShieldSite' | null;
  /** Dependency order: planned and created in ascending order, a parent strictly before its children; equal orders keep config order. */
  order: number;
  /** One per parent and no id of its own: its id is its parent's (a site's schema). */
  singleton: boolean;
  /**
   * The API keeps no labels on it (a site's certificate): it is owned by whoever owns its parent,
   * and config names it after the parent. Only for singletons.
   */
  ownedWithParent?: boolean;
  /** Deleting one removes protection (apply warns about it). */
  protective: boolean;
  /** Natural identity (definition.meta.identity) in comparable form: equal parts under one parent are "the same thing". */
  identity(fields: Fields): string[];
  /** One line about a live object, for plan output. */
  describe(object: { id: string; fields: Fields }): string;
  /** How a planned change makes protection weaker, one reason each; none when it does not. */
  weakened?(diff: readonly FieldChange[]): string[];
  /**
   * A spec field the API does not return; it is compared through a digest it does return
   * (`document` through `hash`). A change of `as` means a change of `field`.
   */
  digest?: { field: string; as: string; of(value: unknown): string };
  /** Every REST operation `operations` sends. */
  endpoints: readonly Endpoint[];
  operations: KindOperations;
  config: KindConfig;
  /** Security lint of a valid config spec (`aegis validate` warnings): probably not what a security team wants. */
  lint?(spec: Fields): FieldNote[];
  /** What the API checks beyond the JSON Schema that needs no server (the provider's ValidateResourceConfig). */
  offlineChecks?(fields: Fields): FieldNote[];
  dump: DumpLayout;
  provider: ProviderTraits;
}

/** An entry as a module writes it: the schema definition and the parent come from schemas/ (KINDS), so they are said once. */
export type KindModule<K extends string> = Omit<KindEntry<K>, 'definition' | 'parent'>;

/** Builds an entry, keeping `kind` as its literal type so that the registry can derive the `Kind` union. */
export function defineKind<const K extends string>(module: KindModule<K>): KindEntry<K> {
  const definition = KINDS.find((k) => k.meta.kind === module.kind);
  if (!definition) throw new Error(`kind ${module.kind} has no schema in schemas/index.ts KINDS`);
  return { ...module, definition, parent: definition.meta.parent };
}

/** Natural identity from the meta's identity fields, as strings. */
export const identityFields =
  (fields: readonly string[]) =>
  (values: Fields): string[] =>
    fields.map((field) => String(values[field] ?? ''));

/** The site id a site-level operation needs. */
export function requireSite(siteId: string | undefined): string {
  if (!siteId) throw new Error('a site-level object needs its site id');
  return siteId;
}

export const asFields = (value: unknown): Fields => (value ?? {}) as Fields;

/** The five endpoints of a plain collection: list and create on it, read, change and delete an item. */
export function collectionEndpoints(collection: PathWith<'get'> & PathWith<'post'>, item: PathWith<'get'> & PathWith<'patch'> & PathWith<'delete'>): readonly Endpoint[] {
  return [
    { method: 'get', path: collection },
    { method: 'post', path: collection },
    { method: 'get', path: item },
    { method: 'patch', path: item },
    { method: 'delete', path: item },
  ];
}
