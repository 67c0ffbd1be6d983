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

/** Columns every managed object shares. */
interface ManagedColumns {
  id: string;
  org_id: string;
  labels: Json<Record<string, string>>;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface ShieldSitesTable extends ManagedColumns {
  domain: string;
  origin_url: string;
  mode: string;
}

export interface VirtualPatchesTable extends ManagedColumns {
  site_id: string;
  url_pattern: string;
  method: string;
  match_param: string;
  match_regex: string;
  action: string;
  expires_in_days: number | null;
  expires_at: NullableTimestamp;
  source_finding_id: string | null;
}

export interface IpAccessRulesTable extends ManagedColumns {
  site_id: string;
  type: string;
  value: string;
  value_key: string;
  action: string;
  note: Generated<string>;
  expires_at: NullableTimestamp;
}

export interface RateLimitRulesTable extends ManagedColumns {
  site_id: string;
  identity: string;
  url_pattern: string;
  method: string;
  budget: number;
  window_seconds: number;
  action: string;
  escalate_to_deny_minutes: Generated<number>;
}

export interface ShieldSchemaConfigsTable extends Omit<ManagedColumns, 'id'> {
  site_id: string;
  strictness: Generated<string>;
}

export interface ShieldSchemasTable {
  site_id: string;
  org_id: string;
  document: string;
  openapi_version: string;
  hash: string;
  operations: Json<{ method: string; path: string; operation_id: string | null }[]>;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface ScanSchedulesTable extends ManagedColumns {
  name: string;
  scan_type: string;
  target: string;
  cron: string;
  timezone: string;
  enabled: boolean;
  config: Json<Record<string, unknown>>;
  next_run_at: NullableTimestamp;
}

export interface WebhooksTable extends ManagedColumns {
  url: string;
  events: Json<string[]>;
  description: string;
  enabled: boolean;
  secret_sealed: string;
  secret_last4: string;
}

/** Bumped by triggers on every write to a site or its rules; the gateway polls it (migration 0003). */
export interface ShieldConfigVersionsTable {
  site_id: string;
  version: ColumnType<number, never, never>;
}

/** One decision of the Shield gateway (all non-allow decisions, a sample of allows); migration 0004. */
export interface ShieldEventsTable {
  id: string;
  site_id: string;
  org_id: string;
  occurred_at: Timestamp;
  action: string;
  rule_kind: string | null;
  rule_id: string | null;
  would: string | null;
  client_ip: string;
  asn: number | null;
  country: string | null;
  method: string;
  host: string;
  path: string;
  status: number;
  request_id: string;
}

/** Decisions per site, minute, action and rule kind ('' for none); `recorded` of them are in shield_events. */
export interface ShieldEventRollupsTable {
  site_id: string;
  minute: Timestamp;
  action: string;
  rule_kind: string;
  requests: number;
  recorded: number;
}

export interface Database {
  organizations: OrganizationsTable;
  users: UsersTable;
  memberships: MembershipsTable;
  api_keys: ApiKeysTable;
  audit_events: AuditEventsTable;
  idempotency_keys: IdempotencyKeysTable;
  shield_sites: ShieldSitesTable;
  virtual_patches: VirtualPatchesTable;
  ip_access_rules: IpAccessRulesTable;
  rate_limit_rules: RateLimitRulesTable;
  shield_schema_configs: ShieldSchemaConfigsTable;
  shield_schemas: ShieldSchemasTable;
  scan_schedules: ScanSchedulesTable;
  webhooks: WebhooksTable;
  shield_config_versions: ShieldConfigVersionsTable;
  shield_events: ShieldEventsTable;
  shield_event_rollups: ShieldEventRollupsTable;
}

export type Organization = Selectable<OrganizationsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type NewApiKeyRow = Insertable<ApiKeysTable>;
export type AuditEventRow = Selectable<AuditEventsTable>;
export type ShieldSiteRow = Selectable<ShieldSitesTable>;
export type VirtualPatchRow = Selectable<VirtualPatchesTable>;
export type IpAccessRuleRow = Selectable<IpAccessRulesTable>;
export type RateLimitRuleRow = Selectable<RateLimitRulesTable>;
export type ShieldSchemaConfigRow = Selectable<ShieldSchemaConfigsTable>;
export type ShieldSchemaRow = Selectable<ShieldSchemasTable>;
export type ScanScheduleRow = Selectable<ScanSchedulesTable>;
export type WebhookRow = Selectable<WebhooksTable>;
