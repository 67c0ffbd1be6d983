// The kind registry: every managed kind, in dependency order (a parent before its children; see
// KindEntry.order). Adding a kind: its schema in schemas/ (and KINDS), its API routes, a module
// here built with defineKind, and one line in KIND_REGISTRY. test/reconciler/kind-registry.test.ts
// fails while schemas/ and the registry disagree.
import type { KindEntry } from './kind.ts';
import { ipAccessRule } from './ip-access-rule.ts';
import { rateLimitRule } from './rate-limit-rule.ts';
import { scanSchedule } from './scan-schedule.ts';
import { shieldCertificate } from './shield-certificate.ts';
import { shieldSchema } from './shield-schema.ts';
import { shieldSite } from './shield-site.ts';
import { virtualPatch } from './virtual-patch.ts';
import { webhook } from './webhook.ts';

export type { DumpLayout, Endpoint, FieldChange, FieldNote, Fields, KindConfig, KindEntry, KindOperations, ListNesting, SingleNesting } from './kind.ts';

export const KIND_REGISTRY = [shieldSite, virtualPatch, ipAccessRule, rateLimitRule, shieldSchema, shieldCertificate, scanSchedule, webhook] as const;

/** A managed kind's name (the YAML `kind`). */
export type Kind = (typeof KIND_REGISTRY)[number]['kind'];

export type Entry = KindEntry<Kind>;

const BY_KIND: ReadonlyMap<string, Entry> = new Map(KIND_REGISTRY.map((entry) => [entry.kind, entry]));

export const ALL_KINDS: readonly Kind[] = KIND_REGISTRY.map((entry) => entry.kind);

/** Kinds that live under a Shield site (their config names the site with `spec.site`). */
export const SITE_KINDS: readonly Kind[] = KIND_REGISTRY.filter((entry) => entry.parent !== null).map((entry) => entry.kind);

export const isKind = (name: string): name is Kind => BY_KIND.has(name);

export function kindEntry(kind: Kind): Entry {
  const entry = BY_KIND.get(kind);
  if (!entry) throw new Error(`no registry entry for kind ${kind}`);
  return entry;
}

const PARENTS: ReadonlySet<string> = new Set(KIND_REGISTRY.flatMap((entry) => (entry.parent === null ? [] : [entry.parent])));

/** Whether other kinds live under this one (a site): plans track its live id for its children. */
export const isParentKind = (kind: Kind): boolean => PARENTS.has(kind);

/** The kinds that live under `parent`, in registry order. */
export const childrenOf = (parent: Kind): readonly Entry[] => KIND_REGISTRY.filter((entry) => entry.parent === parent);

/** Kinds at the top (no parent), in registry order. */
export const TOP_LEVEL: readonly Entry[] = KIND_REGISTRY.filter((entry) => entry.parent === null);

/** The entry of a Terraform resource type (`aegis_shield_site`), if it is a managed kind's. */
export const entryForTerraformType = (type: string): Entry | undefined => KIND_REGISTRY.find((entry) => entry.definition.meta.terraformType === type);
