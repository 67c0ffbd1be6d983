// The port through which a config-repo sync job reconciles the directory it checked out. The API
// does not know how a config directory becomes API calls — that is the reconciler's business, and
// the reconciler talks to the API only over HTTP. The reconciler implements this port
// (reconciler/sync/config-repo-sync.ts); the process that starts the server or worker
// (cli/serve.ts, cli/worker.ts) passes the reconciler's implementation in; a process started
// without one does not run config-repo syncs (they wait for one that does).

export type ConfigSyncResult = 'applied' | 'unchanged' | 'planned' | 'refused' | 'invalid' | 'failed';

export interface ConfigSyncRequest {
  /** The API the sync acts through, with the repository's own key: every write is authorised and audited. */
  apiUrl: string;
  apiKey: string;
  userAgent: string;
  /** The config directory inside the checkout. */
  path: string;
  /** Ownership source id written on every object the repository makes. */
  source: string;
  prune: boolean;
  /** False: plan only and report. */
  apply: boolean;
  /** Apply past the thresholds and weakening rules (a person reviewed the plan). */
  force: boolean;
  thresholds: { floor: number; percent: number };
  denyWeakening: boolean;
  /**
   * Preview the plan's impact on recorded traffic over `window` (`24h`: the reconciler's
   * --impact-window grammar), and refuse, unless forced, a plan that makes one site newly block
   * more than `maxNewBlocks` recorded requests (null: no gate). Null: no preview.
   */
  impact: { window: string; maxNewBlocks: number | null } | null;
}

export interface ConfigSyncSummary {
  create: number;
  update: number;
  replace: number;
  delete: number;
  unchanged: number;
  /** Same config + same live state → same checksum; null without a plan. */
  checksum: string | null;
}

export interface ConfigSyncOutcome {
  result: ConfigSyncResult;
  summary: ConfigSyncSummary;
  /** One line per planned change. */
  changes: string[];
  errors: string[];
  warnings: string[];
  /** Present when the plan was applied (steps done and failed). */
  applied?: { steps: number; failed: number };
  /**
   * The impact preview in words, when one was made: each previewed change's line followed by its
   * impact lines (indented), the per-site section, and a `note:` line per reason impact is missing.
   */
  impactLines?: string[];
}

export type ConfigSync = (request: ConfigSyncRequest) => Promise<ConfigSyncOutcome>;
