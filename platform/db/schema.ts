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
  /** Stripe's customer (cus_…) billing this organisation; unique (migration 0013). */
  stripe_customer_id: Generated<string | null>;
  /** Stripe's status of the subscription (active, past_due, canceled, …); null: never billed. */
  billing_status: Generated<string | null>;
  /** `created` of the last Stripe event applied; older events are ignored. */
  billing_updated_at: NullableTimestamp;
  /** Set on a sandbox (migration 0014): the organisation whose test environment this row is. */
  live_org_id: Generated<string | null>;
  /** Hosts test-mode URL scans may probe (sandbox rows only). */
  sandbox_targets: ColumnType<string[], string | undefined, string>;
}

export interface UsersTable {
  id: string;
  /** Lower-cased; unique. */
  email: string;
  name: string | null;
  created_at: CreatedAt;
  last_login_at: NullableTimestamp;
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
  /** The person whose role caps the key (migration 0017); null for keys an operator made. */
  owner_user_id: ColumnType<string | null, string | null | undefined, string | null>;
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

/** A site's managed-rule settings (jsonb; schemas/shield-site.ts). */
export interface ManagedRulesSettings {
  enabled: boolean;
  paranoia_level: number;
  exclusions: { rules: string[]; url_pattern?: string; parameter?: string }[];
}

export interface ShieldSitesTable extends ManagedColumns {
  domain: string;
  origin_url: string;
  mode: string;
  /** `insensitive` | `sensitive` (migration 0009). */
  path_case: ColumnType<string, string | undefined, string>;
  managed_rules: ColumnType<ManagedRulesSettings, string | undefined, string>;
  /** TLS at the edge (migration 0018; schemas/shield-site.ts `tls`). */
  tls: ColumnType<SiteTlsSettings, string | undefined, string>;
  /** What the organisation publishes to prove it controls the domain (DNS TXT or HTTP token). */
  verification_token: ColumnType<string, string | undefined, string>;
  domain_verified_at: NullableTimestamp;
  /** `dns` | `http` | `acme`: how control of the domain was proved. */
  domain_verified_by: ColumnType<DomainProofMethod | null, DomainProofMethod | null | undefined, DomainProofMethod | null>;
  domain_checked_at: NullableTimestamp;
  domain_check_error: ColumnType<string | null, string | null | undefined, string | null>;
}

export type TlsMode = 'acme' | 'custom' | 'off';
export type DomainProofMethod = 'dns' | 'http' | 'acme';

/** A site's TLS settings (jsonb). */
export interface SiteTlsSettings {
  mode: TlsMode;
  /** Answer plain-HTTP requests with a redirect to HTTPS (once a certificate serves the site). */
  redirect_http: boolean;
  /** Strict-Transport-Security on HTTPS answers; null: not sent. */
  hsts: { max_age: number; include_subdomains: boolean; preload: boolean } | null;
  min_version: '1.2' | '1.3';
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
  previous_secret_sealed: Generated<string | null>;
  previous_secret_expires_at: NullableTimestamp;
  failing_since: NullableTimestamp;
  disabled_reason: Generated<string | null>;
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
  /** Managed-rule decisions: the anomaly score and the rules counted (migration 0019). */
  anomaly: ColumnType<{ score: number; signals: string[] } | null, string | null | undefined, string | null>;
}

/** The traffic record (migration 0020, gateway/traffic/): one row per batch of a site's requests, partitioned by day. */
export interface ShieldTrafficTable {
  site_id: string;
  /** The batch's first and last request. */
  at: Timestamp;
  until_at: Timestamp;
  requests: number;
  /** The batch as JSON, written by releases before migration 0022 only (readers skip such rows). */
  records: string | null;
  /** The batch, encoded in base64 (gateway/traffic/record-batch.ts); null in a row of an earlier release. */
  columns: string | null;
  /** The kept values by request index, JSON sealed with the server key (context: the site id); null when none or swept. */
  values_sealed: string | null;
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

/** One run of a scanner over a target (migration 0006). */
export interface ScansTable {
  id: string;
  org_id: string;
  scan_type: string;
  status: string;
  target: string;
  source: Json<Record<string, unknown>>;
  config: Json<Record<string, unknown>>;
  schedule_id: string | null;
  job_id: string | null;
  triggered_by: string | null;
  progress: Generated<number>;
  summary: Json<Record<string, number>>;
  coverage: Json<Record<string, unknown>> | null;
  error: string | null;
  created_at: CreatedAt;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
}

/** A finding, the same row across the scans of one target that see it (migration 0006). */
export interface VulnerabilitiesTable {
  id: string;
  org_id: string;
  scan_type: string;
  target: string;
  fingerprint: string;
  rule_id: string;
  title: string;
  severity: string;
  cwe: string | null;
  location: Json<Record<string, unknown>>;
  evidence: string;
  details: Json<Record<string, unknown>>;
  status: string;
  resolution: string | null;
  false_positive: Generated<boolean>;
  notes: Generated<string>;
  first_scan_id: string;
  last_scan_id: string;
  first_seen_at: Timestamp;
  last_seen_at: Timestamp;
  fixed_at: NullableTimestamp;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
  /** The latest verify-fix (migration 0008). */
  verification: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  virtual_patch_id: ColumnType<string | null, string | null | undefined, string | null>;
  virtual_patch_auto_remove: Generated<boolean>;
  /** The latest triage (migration 0016; api/ai/types.ts StoredTriage). */
  triage: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
}

/** An OSV advisory (migration 0006), shared by all organisations. */
export interface AdvisoriesTable {
  id: string;
  modified: Timestamp;
  record: Json<Record<string, unknown>>;
  imported_at: CreatedAt;
}

/** Which advisories mention a package (`ecosystem:normalised name`). */
export interface AdvisoryPackagesTable {
  package_key: string;
  advisory_id: string;
}

/** An uploaded archive until its scan has run. */
export interface ScanArchivesTable {
  scan_id: string;
  content: Buffer;
}

/** Which vulnerabilities a scan saw. */
export interface ScanFindingsTable {
  scan_id: string;
  vulnerability_id: string;
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
  shield_traffic: ShieldTrafficTable;
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

/** Where a job is in its life (platform/jobs): queued → running → completed | failed | canceled | dead, or back to queued for a retry. */
export type JobState = 'queued' | 'running' | 'completed' | 'failed' | 'canceled' | 'dead';

/** One job of the durable queue; migration 0005. */
export interface JobsTable {
  id: string;
  org_id: string | null;
  kind: string;
  payload: Json<Record<string, unknown>>;
  state: ColumnType<JobState, JobState | undefined, JobState>;
  priority: Generated<number>;
  attempts: Generated<number>;
  max_attempts: Generated<number>;
  run_at: ColumnType<Date, Date | string | undefined, Date | string>;
  lease_owner: string | null;
  lease_expires_at: NullableTimestamp;
  last_error: string | null;
  progress: Generated<number>;
  /** jsonb written as JSON text like the other jsonb columns; whatever the handler returned. */
  result: ColumnType<unknown, string | null | undefined, string | null>;
  cancel_requested: Generated<boolean>;
  dedupe_key: string | null;
  created_at: CreatedAt;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
}

// Declaration merging adds the table to the Database interface above.
export interface Database {
  jobs: JobsTable;
  scans: ScansTable;
  vulnerabilities: VulnerabilitiesTable;
  scan_findings: ScanFindingsTable;
  scan_archives: ScanArchivesTable;
  advisories: AdvisoriesTable;
  advisory_packages: AdvisoryPackagesTable;
}

export type JobRow = Selectable<JobsTable>;

/** A git repository the platform follows (migration 0007). */
export interface ConfigReposTable {
  id: string;
  org_id: string;
  name: string;
  url: string;
  url_sealed: string | null;
  repo_key: string;
  branch: string;
  path: string;
  source: string;
  auto_sync: boolean;
  prune: boolean;
  self_heal: boolean;
  deny_weakening: boolean;
  max_changes: number;
  max_change_percent: number;
  poll_interval_seconds: number;
  credentials_ref: string | null;
  /** The source-control connection whose token clones the repository (migration 0015). */
  connection_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The window each sync's impact preview replays (`24h`); null: no preview (migration 0021). */
  impact_window: ColumnType<string | null, string | null | undefined, string | null>;
  /** Refuse a sync whose plan makes one site newly block more recorded requests than this; null: no gate (migration 0021). */
  max_new_blocks: ColumnType<number | null, number | null | undefined, number | null>;
  webhook_secret_sealed: string;
  webhook_secret_last4: string;
  api_key_id: string;
  api_key_sealed: string;
  status: ColumnType<string, string | undefined, string>;
  status_message: string | null;
  last_synced_commit: string | null;
  last_synced_at: NullableTimestamp;
  last_checked_at: NullableTimestamp;
  next_poll_at: Timestamp;
  sync_job_id: string | null;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** One sync of a config repository (migration 0007). */
export interface ConfigRepoSyncsTable {
  id: string;
  org_id: string;
  repo_id: string;
  job_id: string | null;
  trigger: string;
  status: string;
  result: string | null;
  failure_stage: string | null;
  forced: Generated<boolean>;
  delivery_id: string | null;
  commit_sha: string | null;
  summary: Json<Record<string, unknown>> | null;
  changes: ColumnType<string[], string | undefined, string>;
  errors: ColumnType<string[], string | undefined, string>;
  warnings: ColumnType<string[], string | undefined, string>;
  /** The impact preview's lines (migration 0021); null: none was made. */
  impact: ColumnType<string[] | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
}

/** A source-control delivery acted on, kept to make redeliveries no-ops (migration 0007). */
export interface SourceControlDeliveriesTable {
  provider: string;
  delivery_id: string;
  received_at: CreatedAt;
  sync_ids: Json<string[]>;
}

export interface Database {
  config_repos: ConfigReposTable;
  config_repo_syncs: ConfigRepoSyncsTable;
  source_control_deliveries: SourceControlDeliveriesTable;
}

export type ConfigRepoRow = Selectable<ConfigReposTable>;
export type ConfigRepoSyncRow = Selectable<ConfigRepoSyncsTable>;

// People (migration 0011): sign-in tokens, sessions, invites, SSO connections.

export interface LoginTokensTable {
  id: string;
  token_hash: string;
  email: string;
  ip: string | null;
  created_at: CreatedAt;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
}

export interface SessionsTable {
  id: string;
  user_id: string;
  org_id: string;
  method: string;
  sso_org_id: string | null;
  user_agent: string | null;
  browser: string | null;
  ip: string | null;
  created_at: CreatedAt;
  last_seen_at: ColumnType<Date, Date | string | undefined, Date | string>;
  expires_at: Timestamp;
  revoked_at: NullableTimestamp;
  /** The environment the session works in (migration 0014). */
  environment: ColumnType<'live' | 'test', 'live' | 'test' | undefined, 'live' | 'test'>;
}

export interface InvitesTable {
  id: string;
  org_id: string;
  email: string;
  role: string;
  token_hash: string;
  invited_by_type: string;
  invited_by_id: string;
  created_at: CreatedAt;
  expires_at: Timestamp;
  accepted_at: NullableTimestamp;
  accepted_by: string | null;
  revoked_at: NullableTimestamp;
}

export interface SsoConnectionsTable {
  org_id: string;
  protocol: 'oidc' | 'saml';
  oidc_issuer: string | null;
  oidc_client_id: string | null;
  /** Sealed with the server key (platform/crypto/secret-box.ts), context `sso:<org id>`. */
  oidc_client_secret: string | null;
  saml_metadata_url: string | null;
  saml_metadata_xml: string | null;
  saml_idp_entity_id: string | null;
  saml_idp_sso_url: string | null;
  saml_idp_certs: ColumnType<string[], string | undefined, string>;
  enforced: Generated<boolean>;
  jit_domains: ColumnType<string[], string | undefined, string>;
  jit_role: Generated<string>;
  tested_at: NullableTimestamp;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface AuthFlowsTable {
  id: string;
  state_hash: string;
  kind: string;
  org_id: string | null;
  purpose: string;
  user_id: string | null;
  code_verifier: string | null;
  nonce: string | null;
  request_id: string | null;
  /** The pending connection an OAuth connect flow completes (migration 0015). */
  integration_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
  /** What the identity provider vouched for, kept until the browser that started the flow completes it (SAML, migration 0017). */
  identity: ColumnType<FlowIdentity | null, string | null | undefined, string | null>;
  completed_at: NullableTimestamp;
}

export type FlowIdentity = { email: string; name: string | null };

/** An e-mail domain an organisation claims, and whether DNS proved it (migration 0017). */
export interface OrganizationDomainsTable {
  id: string;
  org_id: string;
  domain: string;
  token: string;
  verified_at: NullableTimestamp;
  checked_at: NullableTimestamp;
  check_error: string | null;
  created_at: CreatedAt;
}

export interface SamlAssertionsTable {
  org_id: string;
  assertion_id: string;
  expires_at: Timestamp;
}

export interface Database {
  login_tokens: LoginTokensTable;
  sessions: SessionsTable;
  invites: InvitesTable;
  sso_connections: SsoConnectionsTable;
  auth_flows: AuthFlowsTable;
  saml_assertions: SamlAssertionsTable;
  organization_domains: OrganizationDomainsTable;
}

export type UserRow = Selectable<UsersTable>;
export type SessionRow = Selectable<SessionsTable>;
export type InviteRow = Selectable<InvitesTable>;
export type SsoConnectionRow = Selectable<SsoConnectionsTable>;
export type AuthFlowRow = Selectable<AuthFlowsTable>;
export type OrganizationDomainRow = Selectable<OrganizationDomainsTable>;

// Events out (migration 0012).

export interface EventsTable {
  id: string;
  org_id: string;
  type: string;
  version: Generated<number>;
  data: Json<EventData>;
  created_at: CreatedAt;
}

/** What an event carries: the object as it is after the change, and for updates what it was before (an alias: it fits response types). */
export type EventData = {
  object: Record<string, unknown>;
  previous_attributes?: Record<string, unknown>;
};

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookDeliveriesTable {
  id: string;
  org_id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  status: ColumnType<DeliveryStatus, DeliveryStatus | undefined, DeliveryStatus>;
  attempts: Generated<number>;
  next_attempt_at: NullableTimestamp;
  last_attempt_at: NullableTimestamp;
  response_status: number | null;
  response_body: string | null;
  duration_ms: number | null;
  error: string | null;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export type AttemptTrigger = 'automatic' | 'manual' | 'test';

export interface WebhookDeliveryAttemptsTable {
  id: string;
  delivery_id: string;
  trigger: AttemptTrigger;
  started_at: ColumnType<Date, Date | string, never>;
  duration_ms: number;
  succeeded: boolean;
  response_status: number | null;
  response_body: string | null;
  error: string | null;
}

export interface ShieldAlertWindowsTable {
  site_id: string;
  org_id: string;
  action: string;
  rule_kind: string;
  rule_id: string;
  window_start: ColumnType<Date, Date | string, never>;
  window_end: ColumnType<Date, Date | string, never>;
  count: ColumnType<string, number, never>;
  samples: Json<Record<string, unknown>[]>;
  first_at: ColumnType<Date, Date | string, Date | string>;
  last_at: ColumnType<Date, Date | string, Date | string>;
}

export interface Database {
  events: EventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
  shield_alert_windows: ShieldAlertWindowsTable;
}

export type EventRow = Selectable<EventsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type WebhookDeliveryAttemptRow = Selectable<WebhookDeliveryAttemptsTable>;

// Billing from Stripe (migration 0013).

/** What was done with a Stripe event (api/billing/subscription-events.ts). */
export type StripeEventOutcome = 'applied' | 'unchanged' | 'ignored' | 'unmatched' | 'unknown_plan' | 'stale';

export interface StripeEventsTable {
  /** Stripe's evt_…: a redelivery finds its row and changes nothing. */
  id: string;
  type: string;
  org_id: string | null;
  received_at: CreatedAt;
  outcome: ColumnType<StripeEventOutcome, StripeEventOutcome, StripeEventOutcome>;
}

export interface Database {
  stripe_events: StripeEventsTable;
}

// Provider connections (migration 0015).

export type IntegrationKind = 'source_control' | 'ticket_tracker' | 'ai' | 'cloud';
export type IntegrationAuthType = 'oauth' | 'token' | 'role';
export type IntegrationStatus = 'pending' | 'active' | 'error';
export type TicketState = 'creating' | 'open' | 'closed' | 'failed';
export type PullRequestCheckStatus = 'queued' | 'scanning' | 'completed' | 'failed';

type Updated = ColumnType<Date, Date | string | undefined, Date | string>;
/** A jsonb column with a default: optional on insert. */
type JsonWithDefault<T> = ColumnType<T, string | undefined, string>;

/** Pull-request checks of a source-control connection (docs/integrations.md). */
export interface IntegrationSettings {
  pull_requests?: { enabled: boolean; scan_types: ('secrets' | 'sast' | 'sca')[]; fail_on: 'critical' | 'high' | 'medium' | 'low' | 'info' | 'none' };
  /** AI connections (api/ai). */
  ai?: { model?: string; monthly_token_budget?: number; auto_triage?: boolean };
  /** Cloud connections (api/attack-surface). */
  discovery?: { regions?: string[]; interval_hours?: number };
}

export interface IntegrationsTable {
  id: string;
  org_id: string;
  kind: ColumnType<IntegrationKind, IntegrationKind, IntegrationKind>;
  provider: string;
  auth_type: ColumnType<IntegrationAuthType, IntegrationAuthType, IntegrationAuthType>;
  status: ColumnType<IntegrationStatus, IntegrationStatus, IntegrationStatus>;
  error: string | null;
  account: string | null;
  account_id: string | null;
  scopes: JsonWithDefault<string[]>;
  api_base_url: string | null;
  metadata: JsonWithDefault<Record<string, unknown>>;
  settings: JsonWithDefault<IntegrationSettings>;
  access_token_sealed: string | null;
  refresh_token_sealed: string | null;
  token_expires_at: NullableTimestamp;
  webhook_secret_sealed: string | null;
  connected_by: string | null;
  created_at: CreatedAt;
  updated_at: Updated;
}

export interface VulnerabilityTicketsTable {
  vulnerability_id: string;
  org_id: string;
  integration_id: string | null;
  provider: string;
  state: ColumnType<TicketState, TicketState, TicketState>;
  external_id: string | null;
  key: string | null;
  url: string | null;
  request: JsonWithDefault<Record<string, unknown>>;
  error: string | null;
  created_by: string | null;
  created_at: CreatedAt;
  updated_at: Updated;
}

export interface PullRequestChecksTable {
  id: string;
  org_id: string;
  integration_id: string;
  provider: string;
  repository: string;
  number: number;
  head_sha: string;
  base_sha: string | null;
  status: ColumnType<PullRequestCheckStatus, PullRequestCheckStatus, PullRequestCheckStatus>;
  conclusion: string | null;
  check_id: string | null;
  comment_id: string | null;
  summary: JsonWithDefault<Record<string, unknown>>;
  error: string | null;
  created_at: CreatedAt;
  updated_at: Updated;
}

export interface Database {
  integrations: IntegrationsTable;
  ai_usage: AiUsageTable;
  attack_surface_assets: AttackSurfaceAssetsTable;
  attack_surface_runs: AttackSurfaceRunsTable;
  vulnerability_tickets: VulnerabilityTicketsTable;
  pull_request_checks: PullRequestChecksTable;
}

/** Per organisation and month (migration 0016): what AI triage spent. */
export interface AiUsageTable {
  org_id: string;
  /** First day of the month, UTC. */
  month: ColumnType<Date, Date | string, Date | string>;
  /** bigint: node-postgres returns it as a string. */
  tokens: ColumnType<string | number, number | undefined, number | string>;
  triages: Generated<number>;
  fallback_triages: Generated<number>;
}

export interface AttackSurfaceAssetsTable {
  id: string;
  org_id: string;
  integration_id: string;
  provider: string;
  kind: string;
  host: string;
  resource_id: string;
  resource_name: string | null;
  region: string | null;
  scope: string;
  details: JsonWithDefault<Record<string, unknown>>;
  first_seen_at: CreatedAt;
  last_seen_at: ColumnType<Date, Date | string | undefined, Date | string>;
  gone_at: NullableTimestamp;
}

export type AttackSurfaceRunStatus = 'queued' | 'running' | 'completed' | 'failed';

export interface AttackSurfaceRunsTable {
  id: string;
  org_id: string;
  integration_id: string;
  status: ColumnType<AttackSurfaceRunStatus, AttackSurfaceRunStatus, AttackSurfaceRunStatus>;
  trigger: ColumnType<'schedule' | 'manual' | 'connect', 'schedule' | 'manual' | 'connect', never>;
  job_id: string | null;
  counts: ColumnType<{ total: number; added: number; removed: number; unchanged: number } | null, string | null | undefined, string | null>;
  errors: JsonWithDefault<{ scope: string; code: string; message: string }[]>;
  error: string | null;
  created_at: CreatedAt;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
}

export type IntegrationRow = Selectable<IntegrationsTable>;
export type AttackSurfaceAssetRow = Selectable<AttackSurfaceAssetsTable>;
export type AttackSurfaceRunRow = Selectable<AttackSurfaceRunsTable>;
export type VulnerabilityTicketRow = Selectable<VulnerabilityTicketsTable>;
export type PullRequestCheckRow = Selectable<PullRequestChecksTable>;

// The Shield edge (migration 0018): certificates, ACME orders, accounts and challenges.

export type CertificateSource = 'custom' | 'acme';

export interface ShieldCertificatesTable {
  id: string;
  org_id: string;
  site_id: string;
  source: ColumnType<CertificateSource, CertificateSource, CertificateSource>;
  /** The leaf first, then its chain (PEM). */
  certificate_pem: string;
  /** The private key, sealed with the server key, context `shield-certificate:<site id>`. */
  private_key_sealed: string;
  /** DNS names the certificate covers (subject alternative names). */
  names: Json<string[]>;
  issuer: string;
  not_before: ColumnType<Date, Date | string, Date | string>;
  not_after: ColumnType<Date, Date | string, Date | string>;
  /** SHA-256 of the leaf's DER, hex with colons. */
  fingerprint: string;
  created_at: CreatedAt;
  updated_at: Updated;
}

export type CertificateOrderStatus = 'pending' | 'valid' | 'failed';

export interface ShieldCertificateOrdersTable {
  site_id: string;
  org_id: string;
  status: ColumnType<CertificateOrderStatus, CertificateOrderStatus, CertificateOrderStatus>;
  attempts: ColumnType<number, number | undefined, number>;
  last_error: string | null;
  last_attempt_at: NullableTimestamp;
  next_attempt_at: NullableTimestamp;
  /** The `shield.certificate.order` job working on it while `pending`. */
  job_id: ColumnType<string | null, string | null | undefined, string | null>;
  updated_at: Updated;
}

export interface AcmeAccountsTable {
  directory_url: string;
  email: string | null;
  account_url: string | null;
  /** The account key (PEM), sealed, context `acme-account:<directory url>`. */
  key_sealed: string;
  created_at: CreatedAt;
}

export type AcmeChallengeType = 'http-01' | 'tls-alpn-01';

export interface AcmeChallengesTable {
  id: string;
  domain: string;
  type: ColumnType<AcmeChallengeType, AcmeChallengeType, AcmeChallengeType>;
  token: string;
  key_authorization: string;
  /** TLS-ALPN-01: the self-signed certificate carrying the acmeIdentifier extension, and its key (sealed, context `acme-challenge:<id>`). */
  certificate_pem: string | null;
  private_key_sealed: string | null;
  expires_at: ColumnType<Date, Date | string, Date | string>;
  created_at: CreatedAt;
}

export interface Database {
  shield_certificates: ShieldCertificatesTable;
  shield_certificate_orders: ShieldCertificateOrdersTable;
  acme_accounts: AcmeAccountsTable;
  acme_challenges: AcmeChallengesTable;
}

export type ShieldCertificateRow = Selectable<ShieldCertificatesTable>;
export type ShieldCertificateOrderRow = Selectable<ShieldCertificateOrdersTable>;
export type AcmeChallengeRow = Selectable<AcmeChallengesTable>;
