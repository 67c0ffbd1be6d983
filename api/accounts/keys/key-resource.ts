// An API key as the API shows it (never the value, but at creation) and as events carry it.
import type { ApiKeyRow } from '../../../platform/db/schema.ts';
import { SCOPES, type Scope } from '../auth/scopes.ts';
import { nullableTimestampSchema, timestampSchema } from '../../../platform/http/schemas.ts';
import { KEY_STATUSES, keyStatus } from './key-store.ts';
import { livemodeSchema } from '../../../schemas/common.ts';
import { livemodeOf } from '../../../platform/db/environments.ts';

export const apiKeySchema = {
  type: 'object',
  required: ['livemode', 'id', 'name', 'prefix', 'last4', 'scopes', 'status', 'created_at', 'last_used_at', 'expires_at', 'revoked_at', 'replaced_by'],
  properties: {
    livemode: livemodeSchema,
    id: { type: 'string', description: 'Key id (not the secret).' },
    name: { type: 'string', description: 'Human-readable name.' },
    prefix: { type: 'string', description: '`svc_live_` or `svc_test_`.' },
    last4: { type: 'string', description: 'Last four characters of the value, to recognise it.' },
    scopes: { type: 'array', items: { type: 'string', enum: SCOPES }, description: 'What the key may do.' },
    status: { type: 'string', enum: KEY_STATUSES, description: '`active`; `rotating` (replaced, works until `expires_at`); `revoked`.' },
    created_at: timestampSchema,
    last_used_at: { ...nullableTimestampSchema, description: 'Last authenticated request (updated within about 10 s).' },
    expires_at: { ...nullableTimestampSchema, description: 'When the key stops working (set by rotation).' },
    revoked_at: nullableTimestampSchema,
    replaced_by: { type: ['string', 'null'], description: 'Id of the successor issued by rotation.' },
  },
} as const;

export const issuedKeySchema = {
  ...apiKeySchema,
  required: [...apiKeySchema.required, 'key'],
  properties: { ...apiKeySchema.properties, key: { type: 'string', description: 'The key value. Shown this once only: store it now.' } },
} as const;

export function toApiKey(row: ApiKeyRow) {
  return {
    id: row.id,
    livemode: livemodeOf(row.org_id),
    name: row.name,
    prefix: row.prefix,
    last4: row.last4,
    scopes: row.scopes as Scope[],
    status: keyStatus(row),
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at?.toISOString() ?? null,
    expires_at: row.expires_at?.toISOString() ?? null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
    replaced_by: row.replaced_by,
  };
}

