// Row types of every table, as Kysely sees them. Migrations in ./migrations are the other half of
// this contract; keep the two in step.
import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
/** jsonb: written as a JSON string (both drivers then agree), read back parsed. */
type Json<T> = ColumnType<T, string, string>;

export interface OrganizationsTable {
  id: string;
  slug: string;
  name: string;
  plan: Generated<string>;
  created_at: CreatedAt;
}

export interface UsersTable {
  id: string;
  email: string;
  name: string | null;
  created_at: CreatedAt;
}

export interface MembershipsTable {
  org_id: string;
  user_id: string;
  role: string;
  created_at: CreatedAt;
}

export interface ApiKeysTable {
  id: string;
  org_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  last4: string;
  scopes: Json<string[]>;
  created_by: string | null;
  created_at: CreatedAt;
  last_used_at: NullableTimestamp;
  expires_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
  replaced_by: string | null;
}

export interface AuditEventsTable {
  id: string;
  org_id: string;
  actor_type: string;
  actor_id: string;
  action: string;
  target_type: string | null;
  target_id: string | null;
  ip: string | null;
  metadata: Json<Record<string, unknown>>;
  created_at: CreatedAt;
}

export interface IdempotencyKeysTable {
  org_id: string;
  key: string;
  fingerprint: string;
  state: 'pending' | 'done';
  response_status: number | null;
  response_type: string | null;
  response_body: string | null;
  created_at: Timestamp;
}

export interface Database {
  organizations: OrganizationsTable;
  users: UsersTable;
  memberships: MembershipsTable;
  api_keys: ApiKeysTable;
  audit_events: AuditEventsTable;
  idempotency_keys: IdempotencyKeysTable;
}

export type Organization = Selectable<OrganizationsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type NewApiKeyRow = Insertable<ApiKeysTable>;
export type AuditEventRow = Selectable<AuditEventsTable>;
