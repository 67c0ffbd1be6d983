import { createdAtSchema, labelsSchema, siteIdSchema, updatedAtSchema, type KindMeta, withoutDefaults, livemodeSchema } from './common.ts';

export const SCHEMA_STRICTNESS = ['lenient', 'standard', 'strict'] as const;
export const MAX_SCHEMA_BYTES = 5 * 1024 * 1024;

const strictness = {
  type: 'string',
  enum: SCHEMA_STRICTNESS,
  default: 'standard',
  description:
    '`lenient`: path and method must match a declared operation. `standard`: also parameters, their types and JSON bodies. ' +
    '`strict`: also rejects unknown parameters, unknown body properties and undeclared endpoints.',
} as const;

const properties = {
  document: {
    type: 'string',
    minLength: 1,
    maxLength: MAX_SCHEMA_BYTES,
    description: 'The OpenAPI 3.0 or 3.1 document (YAML or JSON text) that requests to the site must conform to.',
  },
  strictness,
  labels: labelsSchema,
} as const;

export const ShieldSchemaSpec = {
  $id: 'https://aegis.dev/schemas/ShieldSchema.json',
  title: 'ShieldSchema',
  description: "OpenAPI schema enforcement for a site: requests that do not fit the site's API description are rejected.",
  type: 'object',
  additionalProperties: false,
  required: ['document'],
  properties,
} as const;

export const SchemaConfigUpdate = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: withoutDefaults({ strictness, labels: labelsSchema }),
} as const;

export const SchemaConfigResource = {
  type: 'object',
  required: ['livemode', 'site_id', 'strictness', 'labels', 'updated_at'],
  properties: { livemode: livemodeSchema, site_id: siteIdSchema, strictness, labels: labelsSchema, updated_at: updatedAtSchema },
} as const;

export const schemaOperationSchema = {
  type: 'object',
  required: ['method', 'path', 'operation_id'],
  properties: {
    method: { type: 'string', description: 'HTTP method, upper case.' },
    path: { type: 'string', description: 'Path template as declared, e.g. `/pets/{petId}`.' },
    operation_id: { type: ['string', 'null'], description: 'The operationId, if declared.' },
  },
} as const;

export const ShieldSchemaResource = {
  type: 'object',
  required: ['livemode', 'site_id', 'openapi_version', 'hash', 'operations', 'strictness', 'labels', 'document', 'created_at', 'updated_at'],
  properties: {
    livemode: livemodeSchema,
    site_id: siteIdSchema,
    openapi_version: { type: 'string', readOnly: true, description: 'The `openapi` version the document declares.' },
    hash: { type: 'string', readOnly: true, description: 'SHA-256 of the uploaded document text (`sha256:<hex>`).' },
    operations: { type: 'array', items: schemaOperationSchema, readOnly: true, description: 'Operations found in the document.' },
    strictness,
    labels: labelsSchema,
    document: properties.document,
    created_at: createdAtSchema,
    updated_at: updatedAtSchema,
  },
} as const;

export const shieldSchemaMeta: KindMeta = {
  kind: 'ShieldSchema',
  terraformType: 'aegis_shield_schema',
  parent: 'ShieldSite',
  identity: [],
  mutable: ['document', 'strictness', 'labels'],
  computed: ['site_id', 'openapi_version', 'hash', 'operations', 'created_at', 'updated_at'],
  sensitive: [],
};
