// The managed kinds: one JSON Schema of the writable fields (`…Spec`) per kind, the shape the API
// returns (`…Resource`), and how tools treat each field (`…Meta`). The API validates with these,
// the reconciler validates config files with them, and the Terraform provider derives its schema
// from them.
import type { FromSchema } from 'json-schema-to-ts';
import type { KindMeta } from './common.ts';
import { IpAccessRuleResource, IpAccessRuleSpec, ipAccessRuleMeta } from './ip-access-rule.ts';
import { RateLimitRuleResource, RateLimitRuleSpec, rateLimitRuleMeta } from './rate-limit-rule.ts';
import { ScanScheduleResource, ScanScheduleSpec, scanScheduleMeta } from './scan-schedule.ts';
import { ShieldCertificateResource, ShieldCertificateSpec, shieldCertificateMeta } from './shield-certificate.ts';
import { ShieldSchemaResource, ShieldSchemaSpec, shieldSchemaMeta } from './shield-schema.ts';
import { ShieldSiteResource, ShieldSiteSpec, shieldSiteMeta } from './shield-site.ts';
import { VirtualPatchResource, VirtualPatchSpec, virtualPatchMeta } from './virtual-patch.ts';
import { WebhookCreated, WebhookResource, WebhookSpec, webhookMeta } from './webhook.ts';

export * from './common.ts';
export * from './events.ts';
export * from './ip-access-rule.ts';
export * from './rate-limit-rule.ts';
export * from './scan-schedule.ts';
export * from './shield-certificate.ts';
export * from './shield-schema.ts';
export * from './shield-site.ts';
export * from './virtual-patch.ts';
export * from './webhook.ts';

export interface KindDefinition {
  meta: KindMeta;
  /** The writable fields: API create bodies and config-file `spec`s. */
  spec: { $id: string; title: string; description: string; properties: Record<string, unknown>; required: readonly string[] };
  /** The object as the API returns it. */
  resource: { properties: Record<string, unknown>; required: readonly string[] };
}

/** In dependency order: sites first, then what hangs off them. */
export const KINDS: readonly KindDefinition[] = [
  { meta: shieldSiteMeta, spec: ShieldSiteSpec, resource: ShieldSiteResource },
  { meta: virtualPatchMeta, spec: VirtualPatchSpec, resource: VirtualPatchResource },
  { meta: ipAccessRuleMeta, spec: IpAccessRuleSpec, resource: IpAccessRuleResource },
  { meta: rateLimitRuleMeta, spec: RateLimitRuleSpec, resource: RateLimitRuleResource },
  { meta: shieldSchemaMeta, spec: ShieldSchemaSpec, resource: ShieldSchemaResource },
  { meta: shieldCertificateMeta, spec: ShieldCertificateSpec, resource: ShieldCertificateResource },
  { meta: scanScheduleMeta, spec: ScanScheduleSpec, resource: ScanScheduleResource },
  // The create answer, which alone carries the signing secret (a computed, sensitive attribute).
  { meta: webhookMeta, spec: WebhookSpec, resource: WebhookCreated },
];

export type ShieldSite = FromSchema<typeof ShieldSiteResource>;
export type VirtualPatch = FromSchema<typeof VirtualPatchResource>;
export type IpAccessRule = FromSchema<typeof IpAccessRuleResource>;
export type RateLimitRule = FromSchema<typeof RateLimitRuleResource>;
export type ShieldSchema = FromSchema<typeof ShieldSchemaResource>;
export type ShieldCertificate = FromSchema<typeof ShieldCertificateResource>;
export type ScanSchedule = FromSchema<typeof ScanScheduleResource>;
export type Webhook = FromSchema<typeof WebhookResource>;
