// The certificates this gateway serves, one per site, as ready TLS contexts built from
// `shield_certificates` (uploaded or obtained by ACME; the key sealed with the server key, context
// `shield-certificate:<site id>`). The table is polled cheaply (row count and latest update) on the
// registry's interval; when it changed, only the rows whose fingerprint or update time moved are
// read in full and rebuilt. A new context replaces the old one in one map assignment: handshakes
// that start afterwards get it, connections already open keep theirs, nothing is dropped. A row
// that cannot be opened or built (wrong server key, damaged PEM) is reported once and the site
// keeps its previous certificate, if it had one. The key exists here only inside the context.
import { X509Certificate } from 'node:crypto';
import type { SecureContext } from 'node:tls';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { nameCovers, namesOf } from '../../platform/crypto/certificates.ts';
import { open } from '../../platform/crypto/secret-box.ts';
import type { Db } from '../../platform/db/database.ts';
import { inEnvironment, type Environment } from '../../platform/db/environments.ts';
import type { CompiledSite } from '../sites/compile.ts';
import type { SiteRegistry } from '../sites/registry.ts';
import { certificateContext } from './tls-options.ts';

export interface ServedCertificate {
  siteId: string;
  context: SecureContext;
  /** DNS names the leaf covers. */
  names: readonly string[];
  notAfter: Date;
  fingerprint: string;
  /** The leaf, and the certificate that issued it (the chain's second), for OCSP stapling. */
  leaf: X509Certificate;
  issuer: X509Certificate | null;
}

export interface CertificateCacheOptions {
  serverKey: Buffer;
  log: Logger;
  refreshMs?: number | undefined;
  environment?: Environment | undefined;
  /** Told when a site's served certificate changes (null: none any more): metrics, OCSP. */
  onChange?: ((siteId: string, certificate: ServedCertificate | null) => void) | undefined;
}

interface RowVersion {
  site_id: string;
  fingerprint: string;
  updated_at: Date;
}

const versionOf = (row: RowVersion): string => `${row.fingerprint}@${new Date(row.updated_at).getTime()}`;

export const certificateKeyContext = (siteId: string): string => `shield-certificate:${siteId}`;

export class CertificateCache {
  #bySite = new Map<string, ServedCertificate>();
  /** Site id → the row version now served (or that failed: not retried until the row changes). */
  #versions = new Map<string, string>();
  #signature = '';
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<void> | undefined;
  #closed = false;

  constructor(
    private readonly db: Db,
    private readonly options: CertificateCacheOptions,
  ) {}

  async start(): Promise<void> {
    await this.#poll();
    this.#schedule();
  }

  /** The certificate served for a site, if any. */
  forSite(siteId: string): ServedCertificate | undefined {
    return this.#bySite.get(siteId);
  }

  get size(): number {
    return this.#bySite.size;
  }

  /** Polls now and waits for it (tests, instead of sleeping). */
  refresh(): Promise<void> {
    const run = (this.#polling ?? Promise.resolve()).then(() => this.#poll());
    this.#polling = run;
    void run.finally(() => {
      if (this.#polling === run) this.#polling = undefined;
    });
    return run;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#polling;
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => void this.refresh().finally(() => this.#schedule()), this.options.refreshMs ?? 250);
    this.#timer.unref();
  }

  async #poll(): Promise<void> {
    try {
      const summary = await this.db
        .selectFrom('shield_certificates')
        .select([sql<number>`count(*)::int`.as('rows'), sql<string | null>`max(updated_at)::text`.as('latest')])
        .executeTakeFirstOrThrow();
      const signature = `${summary.rows}/${summary.latest ?? ''}`;
      if (signature === this.#signature) return;
      await this.#reload();
      this.#signature = signature;
    } catch (err) {
      this.options.log.warn({ err }, 'shield: certificate refresh failed; serving the certificates already loaded');
    }
  }

  async #reload(): Promise<void> {
    const rows = await this.db
      .selectFrom('shield_certificates as c')
      .innerJoin('shield_sites as s', 's.id', 'c.site_id')
      .select(['c.site_id', 'c.fingerprint', 'c.updated_at'])
      .where(inEnvironment('s.org_id', this.options.environment ?? 'live'))
      .execute();
    const present = new Set<string>();
    const changed: string[] = [];
    for (const row of rows) {
      present.add(row.site_id);
      if (this.#versions.get(row.site_id) !== versionOf(row)) changed.push(row.site_id);
    }
    for (const siteId of [...this.#versions.keys()]) {
      if (present.has(siteId)) continue;
      this.#versions.delete(siteId);
      if (this.#bySite.delete(siteId)) this.options.onChange?.(siteId, null);
    }
    if (changed.length === 0) return;
    const full = await this.db.selectFrom('shield_certificates').select(['site_id', 'certificate_pem', 'private_key_sealed', 'fingerprint', 'updated_at']).where('site_id', 'in', changed).execute();
    for (const row of full) {
      this.#versions.set(row.site_id, versionOf(row));
      const served = this.#build(row);
      if (!served) continue;
      this.#bySite.set(row.site_id, served);
      this.options.onChange?.(row.site_id, served);
    }
  }

  #build(row: { site_id: string; certificate_pem: string; private_key_sealed: string; fingerprint: string }): ServedCertificate | null {
    try {
      const chain = new X509Certificate(row.certificate_pem);
      const issuerPem = secondCertificate(row.certificate_pem);
      const context = certificateContext(row.certificate_pem, open(this.options.serverKey, row.private_key_sealed, certificateKeyContext(row.site_id)));
      return {
        siteId: row.site_id,
        context,
        names: namesOf(chain),
        notAfter: new Date(chain.validTo),
        fingerprint: chain.fingerprint256,
        leaf: chain,
        issuer: issuerPem ? new X509Certificate(issuerPem) : null,
      };
    } catch (err) {
      // Never the error's detail from the key: only that it failed, and which row.
      const reason = err instanceof Error ? err.name : 'error';
      this.options.log.error({ site_id: row.site_id, fingerprint: row.fingerprint, reason }, 'shield: a stored certificate cannot be served (wrong server key, or a damaged row); the site keeps its previous certificate');
      return null;
    }
  }
}

const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

function secondCertificate(pem: string): string | null {
  return [...pem.matchAll(CERTIFICATE_BLOCK)][1]?.[0] ?? null;
}

/** What a TLS connection for `serverName` is served with: the site serving that name, and its certificate when TLS is on for it. */
export interface NameResolution {
  site: CompiledSite;
  certificate: ServedCertificate;
}

export function resolveServerName(registry: SiteRegistry, certificates: CertificateCache, serverName: string | null | undefined): NameResolution | null {
  if (!serverName) return null;
  const site = registry.lookup(serverName);
  if (!site || site.tls.mode === 'off') return null;
  const certificate = certificates.forSite(site.id);
  if (!certificate || !certificate.names.some((name) => nameCovers(name, serverName))) return null;
  return { site, certificate };
}
