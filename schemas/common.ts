// Building blocks shared by every managed kind's schema.

export const labelsSchema = {
  type: 'object',
  description:
    'Key/value labels. Keys are lowercase letters, digits and `._/-` (up to 63 characters); values are up to 256 characters. ' +
    'The reconciler records ownership here (`aegis.dev/source`, `aegis.dev/name`).',
  maxProperties: 64,
  propertyNames: { pattern: '^[a-z0-9]([a-z0-9._/-]{0,61}[a-z0-9])?$' },
  additionalProperties: { type: 'string', maxLength: 256 },
  default: {},
} as const;

/** Stripe's word: true for live objects, false for the sandbox's (made with a `svc_test_` key or a session in test mode). */
export const livemodeSchema = { type: 'boolean', description: 'True for live objects; false for objects of the sandbox (test mode).', readOnly: true } as const;
export const idSchema = { type: 'string', description: 'Identifier assigned by Aegis.', readOnly: true } as const;
export const createdAtSchema = { type: 'string', format: 'date-time', description: 'When the object was created.', readOnly: true } as const;
export const updatedAtSchema = { type: 'string', format: 'date-time', description: 'When the object last changed.', readOnly: true } as const;
export const siteIdSchema = { type: 'string', description: 'Id of the Shield site the rule belongs to.', readOnly: true } as const;

export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'ANY'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export const methodSchema = {
  type: 'string',
  enum: HTTP_METHODS,
  description: 'HTTP method to match; `ANY` matches every method, and `GET` also matches `HEAD`.',
} as const;

export const urlPatternSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 1024,
  pattern: '^/[\\x21-\\x7e]*$',
  description:
    'URL path to match, starting with `/`. `*` matches any run of characters (`/api/*/orders`); without `*` the path must match exactly. ' +
    'Request paths are compared decoded and normalised (dot segments, `//`, `;` parameters) and, unless the site says `path_case: sensitive`, without case.',
} as const;

/** How the reconciler and the provider treat a field. */
export interface KindMeta {
  /** YAML `kind`. */
  kind: string;
  /** Terraform resource type. */
  terraformType: string;
  /** Rules live under a site; sites, schedules and webhooks at the top. */
  parent: 'ShieldSite' | null;
  /** Fields that make two objects of a parent "the same thing" (for adoption and collisions; the API refuses duplicate site domains and IP rules). */
  identity: readonly string[];
  /** Fields that can change in place; every other spec field forces a new object. */
  mutable: readonly string[];
  /** Output-only fields computed by Aegis. */
  computed: readonly string[];
  /** Spec fields that are write-only (never returned after creation). */
  sensitive: readonly string[];
}

type WithoutDefault<P> = { [K in keyof P]: Omit<P[K], 'default'> };

/**
 * Update bodies must not carry defaults: a validator that fills them in would turn
 * `PATCH {"mode": "log"}` into "and reset the labels".
 */
export function withoutDefaults<const P extends Record<string, object>>(properties: P): WithoutDefault<P> {
  const result: Record<string, object> = {};
  for (const [name, schema] of Object.entries(properties)) {
    const { default: _ignored, ...rest } = schema as { default?: unknown };
    result[name] = rest;
  }
  return result as WithoutDefault<P>;
}
