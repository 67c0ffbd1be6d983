// The gateway's view of every site: host → compiled site. It polls the per-site version table
// (a few hundred bytes per site) every `refreshMs` and recompiles only the sites whose version
// changed, so a rule written through the API applies within about a poll interval, in every gateway
// process. A recompiled site replaces the old one in a single map assignment: requests in flight
// finish on the configuration they started with, none is dropped.
//
// The whole version map is compared on each poll rather than "versions above the last seen",
// because sequence values are not committed in order: a slow transaction can commit a lower
// version after a higher one was already read.
import type { Logger } from 'pino';
import type { Db } from '../../platform/db/database.ts';
import { compileSite, type CompiledSite } from './compile.ts';
import type { Environment } from '../../platform/db/environments.ts';
import { loadSite, loadSiteIds, loadVersions } from './load.ts';

export interface SiteRegistryOptions {
  refreshMs?: number;
  log: Logger;
  /** Which sites this gateway serves: live ones (the production listener) or the sandboxes' (default live). */
  environment?: Environment | undefined;
  /**
   * Who serves a domain (AEGIS_SHIELD_DOMAIN_PROOF). `contested` (default): any site, but when
   * several organisations registered the domain, a verified one wins. `required`: only a verified
   * site. Sandbox sites never need proof.
   */
  domainProof?: 'required' | 'contested' | undefined;
  /** The gateway records traffic: managed rules are judged at every level for it (compile.ts). */
  everyManagedLevel?: boolean | undefined;
}

export class SiteRegistry {
  /** Site id → compiled site. */
  readonly #sites = new Map<string, CompiledSite>();
  /** Host → the site serving it (#rebuildHosts decides between sites that share a domain). */
  #byHost = new Map<string, CompiledSite>();
  #versions = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<void> | undefined;
  #closed = false;

  readonly #environment: Environment;

  constructor(private readonly db: Db, private readonly options: SiteRegistryOptions) {
    this.#environment = options.environment ?? 'live';
  }

  async start(): Promise<void> {
    this.#versions = await loadVersions(this.db, this.#environment);
    const ids = await loadSiteIds(this.db, this.#environment);
    await this.#reload(ids);
    this.#schedule();
  }

  /** The site serving `host` (a Host header: case-insensitive, port and trailing dot ignored). */
  lookup(host: string | undefined): CompiledSite | undefined {
    if (!host) return undefined;
    return this.#byHost.get(normaliseHost(host));
  }

  get size(): number {
    return this.#sites.size;
  }

  /**
   * Polls now and waits for it; tests and benchmarks use it instead of sleeping. A poll already
   * running may have read versions before the caller's write, so this one runs after it.
   */
  refresh(): Promise<void> {
    return this.#pollInTurn();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#polling;
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      void this.#pollInTurn().finally(() => this.#schedule());
    }, this.options.refreshMs ?? 250);
    this.#timer.unref();
  }

  /** One poll at a time: each starts after the one before it has finished. */
  #pollInTurn(): Promise<void> {
    const run = (this.#polling ?? Promise.resolve()).then(() => this.#poll());
    this.#polling = run;
    void run.finally(() => {
      if (this.#polling === run) this.#polling = undefined;
    });
    return run;
  }

  async #poll(): Promise<void> {
    try {
      const versions = await loadVersions(this.db, this.#environment);
      const now = Date.now();
      const changed: string[] = [];
      for (const [id, version] of versions) if (this.#versions.get(id) !== version) changed.push(id);
      for (const [id, site] of this.#sites) {
        if (!versions.has(id) || (site.nextExpiry !== null && site.nextExpiry <= now)) changed.push(id);
      }
      this.#versions = versions;
      if (changed.length > 0) await this.#reload([...new Set(changed)]);
    } catch (err) {
      this.options.log.warn({ err }, 'shield: configuration refresh failed; serving the last good configuration');
    }
  }

  async #reload(ids: readonly string[]): Promise<void> {
    // Bounded concurrency: a cold start with thousands of sites should not open thousands of queries.
    const queue = [...ids];
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        const config = await loadSite(this.db, id, this.#environment);
        if (!config) {
          this.#sites.delete(id);
          continue;
        }
        const compiled = await compileSite(config, { everyManagedLevel: this.options.everyManagedLevel ?? false });
        for (const warning of compiled.warnings) this.options.log.warn({ site_id: id }, `shield: ${warning}`);
        this.#sites.set(id, compiled);
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, queue.length) }, worker));
    this.#rebuildHosts();
  }

  /**
   * Which site serves each domain: a verified one before any unverified one (so an organisation
   * that proves control takes a domain over from one that did not, and never from one that did),
   * the oldest first among equals (ids are ULIDs: ascending is creation order). With proof
   * required, an unverified site serves nothing; the sandbox needs no proof.
   */
  #rebuildHosts(): void {
    const byHost = new Map<string, CompiledSite>();
    const proofRequired = this.options.domainProof === 'required' && this.#environment === 'live';
    const ordered = [...this.#sites.values()].sort((a, b) => (a.verified !== b.verified ? (a.verified ? -1 : 1) : a.id < b.id ? -1 : 1));
    for (const site of ordered) {
      if (proofRequired && !site.verified) continue;
      const existing = byHost.get(site.domain);
      if (existing) this.options.log.warn({ site_id: site.id, domain: site.domain, serving: existing.id }, 'shield: domain registered by more than one site; another serves it');
      else byHost.set(site.domain, site);
    }
    this.#byHost = byHost;
  }

  /** Every site this gateway knows (serving or not), e.g. to find the certificates it may need. */
  sites(): IterableIterator<CompiledSite> {
    return this.#sites.values();
  }
}

export function normaliseHost(host: string): string {
  let h = host.toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  const colon = h.lastIndexOf(':');
  if (colon !== -1) h = h.slice(0, colon);
  return h.endsWith('.') ? h.slice(0, -1) : h;
}
