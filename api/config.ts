// Server settings: command-line flags over environment variables over defaults (DESIGN §2).
import { loadCloudSettings, type CloudSettings } from './attack-surface/providers/settings.ts';
import { loadProviderSettings, type ProvidersSettings } from './integrations/providers/settings.ts';
import type { DestinationStream } from 'pino';
import type { AcmeChallengeType } from '../platform/db/schema.ts';
import { DEFAULT_RETRY_DELAYS_MS } from './webhooks/retry-schedule.ts';
import { DEFAULT_BODY_ADMISSION, type BodyBudget } from '../gateway/proxy/body-admission.ts';
import type { SignupMode } from './accounts/sign-in/accounts.ts';

export interface ServerConfig {
  host: string;
  port: number;
  shieldPort: number;
  /** Where the sandbox's gateway listens (test-mode sites only); unset: no sandbox listener. */
  sandboxShieldPort: number | undefined;
  /** Where the gateway terminates TLS (HTTPS and HTTP/2, by SNI); unset: plain HTTP only. */
  shieldTlsPort: number | undefined;
  /** The ACME directory sites in `tls.mode: acme` get certificates from (Let's Encrypt by default). */
  acmeDirectoryUrl: string;
  /** The contact address of the ACME account; none by default. */
  acmeEmail: string | undefined;
  /** PEM file of CA certificates trusted for the ACME directory's HTTPS (a private ACME server, or pebble in tests). */
  acmeCaCertsPath: string | undefined;
  /** ACME challenge types to answer, in order of preference (AEGIS_ACME_CHALLENGES, default `http-01,tls-alpn-01`). */
  acmeChallenges: readonly AcmeChallengeType[];
  /** An ACME certificate is renewed this many days before it expires (AEGIS_ACME_RENEW_BEFORE_DAYS, 30). */
  acmeRenewBeforeDays: number;
  /** How often the scheduler looks for sites whose certificate is missing or due (AEGIS_ACME_CHECK_INTERVAL_MS, 60 000). */
  acmeCheckIntervalMs: number;
  /**
   * `contested` (a self-hosted install): a site serves at once; when organisations share a domain,
   * only a verified one gets its traffic. `required` (a multi-tenant service): a site serves only once
   * its organisation proved control of the domain.
   */
  shieldDomainProof: 'required' | 'contested';
  /**
   * The port an HTTP domain proof is fetched from (`http://<domain>:<port>/.well-known/aegis-verify/…`).
   * 80 everywhere but in tests, whose stand-in servers cannot bind it (pebble's `httpPort`, likewise).
   */
  shieldDomainProofHttpPort: number;
  dataDir: string;
  databaseUrl: string | undefined;
  /** Redis for state shared between processes (rate-limit counters); in process when unset. */
  redisUrl: string | undefined;
  bootstrapApiKey: string | undefined;
  /** AEGIS_SECRET_KEY: the key that seals stored secrets; else <data-dir>/secret-key (platform/crypto/secret-box.ts). */
  secretKey: string | undefined;
  /** Default per-key request budget per minute (spec 8). */
  rateLimitPerMinute: number;
  /** The budget of a signed-in person (the dashboard: several calls per page), per minute. */
  sessionRateLimitPerMinute: number;
  /**
   * How long a budget lasts (AEGIS_RATE_LIMIT_WINDOW_MS, 60 000: the "per minute" of the budgets).
   * Shorter windows smooth bursts; the SDK suites use one second so that a 429 is cheap to wait out.
   */
  rateLimitWindowMs: number;
  /** Proxies whose X-Forwarded-For is believed, as addresses or CIDRs. */
  trustedProxies: string[];
  logLevel: string;
  /** Where log lines go (stdout by default); tests capture them. */
  logStream?: DestinationStream;
  /** How long a key lookup is cached; bounds cross-process revocation delay. */
  keyCacheTtlMs: number;
  /** How often last-used times of keys are written back. */
  keyUsageFlushMs: number;
  /** How often expired rules and idempotency keys are deleted. */
  sweepIntervalMs: number;
  /** Whether this process runs the Shield gateway on `shieldPort` (`aegis serve` and `aegis shield` do). */
  shieldEnabled: boolean;
  /** ip2asn TSV file giving ASN and country per address (`--asn-db`); ASN and country rules need it. */
  asnDbPath: string | undefined;
  /** How often the gateway re-reads site configuration (ms). */
  shieldRefreshMs: number;
  /** Decoded request-body bytes the gateway inspects; a larger body a rule needs to read is refused. */
  shieldInspectBytes: number;
  /** Raw bytes of a multipart body (files included) the gateway buffers to inspect its text parts. */
  shieldMultipartBytes: number;
  /** What request bodies may hold of the gateway while they arrive (gateway/proxy/body-admission.ts). */
  shieldBodyBudget: BodyBudget;
  /** Largest expansion of a compressed request body (past 64 KiB decoded) before it counts as a bomb. */
  shieldMaxDecompressionRatio: number;
  /** Leading zero bits the challenge proof-of-work needs (16 ≈ 65 000 hashes). */
  challengeDifficultyBits: number;
  /** How long the gateway waits for an origin's response headers (ms). */
  upstreamTimeoutMs: number;
  /** A WebSocket through the gateway with no bytes either way for this long is closed (ms). */
  shieldWsIdleMs: number;
  /** Open WebSocket connections one site may have on one gateway process; past it an upgrade is answered 503. */
  shieldWsMaxPerSite: number;
  /** Share of allowed decisions stored as events (0–1); every decision is counted in the rollups. */
  shieldAllowSampleRate: number;
  /** How often the decision recorder writes a batch (ms); it also writes once 500 events wait. */
  shieldFlushMs: number;
  /** Days Shield events and their rollups are kept; 0 keeps them forever. */
  shieldEventRetentionDays: number;
  /** Whether the gateway keeps the traffic record impact previews replay (docs/impact-preview.md). */
  shieldTrafficRecord: boolean;
  /** Share of unflagged requests whose parameter values the traffic record keeps (0–1). */
  shieldTrafficValueSampleRate: number;
  /** Days the traffic record keeps request metadata. */
  shieldTrafficRetentionDays: number;
  /** Hours the traffic record keeps parameter values (sealed). */
  shieldTrafficValueHours: number;
  /** Interval of the heartbeat comment on live decision streams (ms). */
  shieldLiveHeartbeatMs: number;
  /** Per-key budget of the analytics route per minute (DESIGN §4: 30). */
  analyticsRateLimitPerMinute: number;
  /** Code scans may read `file://` URLs and local paths (AEGIS_ALLOW_LOCAL_SOURCES; off: a server should not scan its own disk for callers). */
  allowLocalSources: boolean;
  /** Start a scan thread (scanners loaded) with the job worker, so even the first code scan starts warm (AEGIS_WARM_SCAN_THREADS). */
  warmScanThreads: boolean;
  /** Tenant URLs (URL scans, git clones, webhooks, provider and identity-provider URLs) may reach private, loopback and link-local addresses (AEGIS_ALLOW_PRIVATE_TARGETS; off: no reaching the server's own network). docs/security.md, "Outbound requests". */
  allowPrivateTargets: boolean;
  /** DNS servers (`ip`, `ip:port`) that resolve the names of tenant URLs where the server connects through the outbound policy — git clones, provider and AI APIs, provider URL checks — and of webhooks unless AEGIS_WEBHOOK_DNS_SERVERS is set (AEGIS_DNS_SERVERS; empty: the system resolver). */
  dnsServers: string[];
  /** Shield origins may be cloud metadata and link-local addresses (AEGIS_ALLOW_METADATA_ORIGINS; off: the API refuses such an origin_url and the gateway never connects to one). */
  allowMetadataOrigins: boolean;
  /** DNS servers (`ip`, `ip:port`) that resolve Shield origin names, for the API's origin check and the gateway's connections (AEGIS_SHIELD_DNS_SERVERS; empty: the system resolver). */
  shieldDnsServers: string[];
  /** Default poll interval of config repositories, seconds (AEGIS_CONFIG_REPO_POLL_SECONDS, 180). */
  configRepoPollSeconds: number;
  /** Port of the Prometheus endpoint GET /metrics (AEGIS_METRICS_PORT; unset: no metrics served, 0: any free port). */
  metricsPort: number | undefined;
  /** Address the metrics port binds (AEGIS_METRICS_HOST, default 127.0.0.1: not reachable from other hosts). */
  metricsHost: string;
  /** Bearer token scrapes must send (AEGIS_METRICS_TOKEN; unset: none, the bind address is the guard). */
  metricsToken: string | undefined;
  /** Where people reach Aegis (AEGIS_PUBLIC_URL): links in mail, identity-provider callbacks, the CSRF origin. Unset: http://localhost:<port>. */
  publicUrl: string | undefined;
  /** SMTP server for mail (SMTP_URL, e.g. smtp://user:pass@host:587); unset: mail goes to the log and <data-dir>/outbox.log. */
  smtpUrl: string | undefined;
  /** Sender of mail (AEGIS_MAIL_FROM). */
  mailFrom: string;
  /** Google sign-in (OpenID Connect): client id and secret (AEGIS_GOOGLE_CLIENT_ID/SECRET); unset: Google sign-in is off. */
  googleClientId: string | undefined;
  googleClientSecret: string | undefined;
  /** The OpenID issuer Google sign-in uses (AEGIS_GOOGLE_ISSUER); tests point it at a local provider. */
  googleIssuer: string;
  /**
   * Who may get an account by signing in (AEGIS_SIGNUP). `invite` (a self-hosted server): members,
   * addresses with a pending invite, and the first owner; `open` (the hosted service): every new
   * address also gets a trial organisation of its own.
   */
  signup: SignupMode;
  /** AEGIS_OWNER_EMAIL: made the owner of `default` at start-up while it has none (instead of the owner link). */
  ownerEmail: string | undefined;
  /** Gateway worker processes (`--workers`/`--shield-workers`, AEGIS_SHIELD_WORKERS); unset: the command's default (gateway/cluster). */
  shieldWorkers: number | undefined;
  /** Signing secret of the Stripe webhook endpoint (STRIPE_WEBHOOK_SECRET, `whsec_…`); unset: POST /api/v1/webhooks/stripe answers 503 (docs/billing.md). */
  stripeWebhookSecret: string | undefined;
  /** How long a webhook delivery may take before it counts as failed (AEGIS_WEBHOOK_TIMEOUT_MS, 10 000). */
  webhookTimeoutMs: number;
  /** Delays between a failed delivery's attempts (AEGIS_WEBHOOK_RETRY_DELAYS_MS, comma-separated ms; default api/webhooks/retry-schedule.ts, about 3 days). */
  webhookRetryDelaysMs: readonly number[];
  /** An endpoint whose deliveries have all failed for this long is disabled (AEGIS_WEBHOOK_DISABLE_AFTER_MS, 3 days). */
  webhookDisableAfterMs: number;
  /** DNS servers (`ip`, `ip:port`) that resolve webhook hosts, at save and at delivery (AEGIS_WEBHOOK_DNS_SERVERS, else AEGIS_DNS_SERVERS; empty: the system resolver). */
  webhookDnsServers: string[];
  /** Shield blocks and challenges are counted per site and rule over windows this long, each becoming one event (AEGIS_SHIELD_ALERT_WINDOW_MS, 10 000). */
  shieldAlertWindowMs: number;
  /** Source control and ticket-tracker providers: OAuth clients and endpoints (api/integrations/providers/settings.ts). */
  providers: ProvidersSettings;
  /** Cloud accounts: endpoints and Aegis's own credentials (api/attack-surface/providers/settings.ts). */
  cloud: CloudSettings;
  /** DNS servers (`ip`, `ip:port`) asked for domain-proof TXT records (AEGIS_VERIFICATION_DNS_SERVERS; empty: the system resolver). */
  verificationDnsServers: string[];
  /** How often a verified domain's TXT record is checked again (AEGIS_DOMAIN_RECHECK_INTERVAL_MS, a day); a record gone unverifies it. */
  domainRecheckIntervalMs: number;
  /** AI triage limits (docs/triage.md). */
  triage: {
    /** Triages per organisation and month the bundled fallback gives an organisation with no AI connection (AEGIS_TRIAGE_FALLBACK_QUOTA, 50). */
    fallbackMonthlyQuota: number;
    /** Tokens per month an AI connection may spend when its settings name no budget (AEGIS_AI_MONTHLY_TOKEN_BUDGET, 1 000 000). */
    defaultMonthlyTokenBudget: number;
  };
}

const positiveInt = (name: string, value: string | undefined, fallback: number): number => {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535 * 1000) throw new Error(`${name} must be a non-negative integer, got "${value}"`);
  return n;
};

/** A whole number of milliseconds, up to a year (retry schedules and day-long limits overflow positiveInt). */
const millis = (name: string, value: string, fallback: number): number => {
  if (value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 366 * 86_400_000) throw new Error(`${name} must be a whole number of milliseconds up to a year, got "${value}"`);
  return n;
};

/** A size in bytes, up to 64 GiB. */
const bytes = (name: string, value: string | undefined, fallback: number): number => {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 64 * 1024 ** 3) throw new Error(`${name} must be a whole number of bytes, got "${value}"`);
  return n;
};

const millisList = (name: string, value: string | undefined, fallback: readonly number[]): readonly number[] =>
  value === undefined || value.trim() === '' ? fallback : value.split(',').map((part) => millis(name, part.trim(), 0));

const bool = (name: string, value: string | undefined, fallback: boolean): boolean => {
  if (value === undefined || value === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  throw new Error(`${name} must be true or false, got "${value}"`);
};

const fraction = (name: string, value: string | undefined, fallback: number): number => {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new Error(`${name} must be a number from 0 to 1, got "${value}"`);
  return n;
};

export interface ConfigFlags {
  host?: string | undefined;
  port?: string | undefined;
  shieldPort?: string | undefined;
  sandboxShieldPort?: string | undefined;
  shieldTlsPort?: string | undefined;
  dataDir?: string | undefined;
  asnDb?: string | undefined;
  shieldWorkers?: string | undefined;
}

/** A count of processes: an integer from 1 up; unset stays unset. */
const workerCount = (name: string, value: string | undefined): number | undefined => {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1024) throw new Error(`${name} must be an integer from 1 to 1024, got "${value}"`);
  return n;
};

const ACME_CHALLENGE_TYPES: readonly AcmeChallengeType[] = ['http-01', 'tls-alpn-01'];

/** A comma-separated list of challenge types, each once, in order of preference. */
const acmeChallenges = (value: string | undefined): readonly AcmeChallengeType[] => {
  if (value === undefined || value.trim() === '') return ACME_CHALLENGE_TYPES;
  const types = value.split(',').map((t) => t.trim().toLowerCase());
  for (const t of types) if (!ACME_CHALLENGE_TYPES.includes(t as AcmeChallengeType)) throw new Error(`AEGIS_ACME_CHALLENGES takes ${ACME_CHALLENGE_TYPES.join(', ')} (comma-separated, preferred first), got "${value}"`);
  if (new Set(types).size !== types.length) throw new Error(`AEGIS_ACME_CHALLENGES names a challenge type twice: "${value}"`);
  return types as AcmeChallengeType[];
};

const domainProof = (value: string | undefined): ServerConfig['shieldDomainProof'] => {
  if (value === undefined || value === '') return 'contested';
  if (value === 'required' || value === 'contested') return value;
  throw new Error(`AEGIS_SHIELD_DOMAIN_PROOF must be "required" or "contested", got "${value}"`);
};

const signupMode = (value: string | undefined): SignupMode => {
  if (value === undefined || value === '') return 'invite';
  if (value === 'invite' || value === 'open') return value;
  throw new Error(`AEGIS_SIGNUP must be "invite" or "open", got "${value}"`);
};

/** An e-mail address (the shape sign-in forms accept), lower-cased; unset stays unset. */
const emailAddress = (name: string, value: string | undefined): string | undefined => {
  if (value === undefined || value.trim() === '') return undefined;
  const address = value.trim().toLowerCase();
  if (address.length > 254 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(address)) throw new Error(`${name} must be an e-mail address, got "${value}"`);
  return address;
};

/** An http(s) origin with no path, query or fragment; its trailing slash dropped. */
const publicUrl = (value: string | undefined): string | undefined => {
  if (value === undefined || value === '') return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`AEGIS_PUBLIC_URL must be a URL such as https://aegis.example.com, got "${value}"`);
  }
  if (!/^https?:$/.test(url.protocol) || url.pathname !== '/' || url.search || url.hash) throw new Error(`AEGIS_PUBLIC_URL must be an http(s) origin with no path, got "${value}"`);
  return url.origin;
};

export function loadConfig(flags: ConfigFlags = {}, env: NodeJS.ProcessEnv = process.env): ServerConfig {
  return {
    host: flags.host ?? env.HOST ?? '0.0.0.0',
    port: positiveInt('--port', flags.port ?? env.PORT, 3000),
    shieldPort: positiveInt('--shield-port', flags.shieldPort ?? env.AEGIS_SHIELD_PORT, 8080),
    sandboxShieldPort:
      (flags.sandboxShieldPort ?? env.AEGIS_SANDBOX_SHIELD_PORT) !== undefined && (flags.sandboxShieldPort ?? env.AEGIS_SANDBOX_SHIELD_PORT) !== ''
        ? positiveInt('--sandbox-shield-port', flags.sandboxShieldPort ?? env.AEGIS_SANDBOX_SHIELD_PORT, 8081)
        : undefined,
    shieldTlsPort:
      (flags.shieldTlsPort ?? env.AEGIS_SHIELD_TLS_PORT) !== undefined && (flags.shieldTlsPort ?? env.AEGIS_SHIELD_TLS_PORT) !== ''
        ? positiveInt(flags.shieldTlsPort !== undefined ? '--shield-tls-port' : 'AEGIS_SHIELD_TLS_PORT', flags.shieldTlsPort ?? env.AEGIS_SHIELD_TLS_PORT, 8443)
        : undefined,
    acmeDirectoryUrl: env.AEGIS_ACME_DIRECTORY_URL || 'https://acme-v02.api.letsencrypt.org/directory',
    acmeEmail: env.AEGIS_ACME_EMAIL || undefined,
    acmeCaCertsPath: env.AEGIS_ACME_CA_CERTS || undefined,
    acmeChallenges: acmeChallenges(env.AEGIS_ACME_CHALLENGES),
    acmeRenewBeforeDays: positiveInt('AEGIS_ACME_RENEW_BEFORE_DAYS', env.AEGIS_ACME_RENEW_BEFORE_DAYS, 30),
    acmeCheckIntervalMs: millis('AEGIS_ACME_CHECK_INTERVAL_MS', env.AEGIS_ACME_CHECK_INTERVAL_MS ?? '', 60_000) || 60_000,
    shieldDomainProof: domainProof(env.AEGIS_SHIELD_DOMAIN_PROOF),
    shieldDomainProofHttpPort: positiveInt('AEGIS_SHIELD_DOMAIN_PROOF_HTTP_PORT', env.AEGIS_SHIELD_DOMAIN_PROOF_HTTP_PORT, 80),
    dataDir: flags.dataDir ?? env.AEGIS_DATA_DIR ?? './.aegis',
    databaseUrl: env.DATABASE_URL || undefined,
    redisUrl: env.REDIS_URL || undefined,
    bootstrapApiKey: env.AEGIS_BOOTSTRAP_API_KEY || undefined,
    secretKey: env.AEGIS_SECRET_KEY || undefined,
    rateLimitPerMinute: positiveInt('AEGIS_RATE_LIMIT_PER_MINUTE', env.AEGIS_RATE_LIMIT_PER_MINUTE, 100),
    sessionRateLimitPerMinute: positiveInt('AEGIS_SESSION_RATE_LIMIT_PER_MINUTE', env.AEGIS_SESSION_RATE_LIMIT_PER_MINUTE, 600),
    rateLimitWindowMs: millis('AEGIS_RATE_LIMIT_WINDOW_MS', env.AEGIS_RATE_LIMIT_WINDOW_MS ?? '', 60_000) || 60_000,
    trustedProxies: (env.AEGIS_TRUSTED_PROXIES ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    logLevel: env.AEGIS_LOG_LEVEL ?? 'info',
    keyCacheTtlMs: positiveInt('AEGIS_KEY_CACHE_TTL_MS', env.AEGIS_KEY_CACHE_TTL_MS, 3000),
    keyUsageFlushMs: positiveInt('AEGIS_KEY_USAGE_FLUSH_MS', env.AEGIS_KEY_USAGE_FLUSH_MS, 10_000),
    sweepIntervalMs: positiveInt('AEGIS_SWEEP_INTERVAL_MS', env.AEGIS_SWEEP_INTERVAL_MS, 60_000),
    shieldEnabled: true,
    asnDbPath: flags.asnDb ?? (env.AEGIS_ASN_DB || undefined),
    shieldRefreshMs: positiveInt('AEGIS_SHIELD_REFRESH_MS', env.AEGIS_SHIELD_REFRESH_MS, 250),
    shieldInspectBytes: positiveInt('AEGIS_SHIELD_INSPECT_BYTES', env.AEGIS_SHIELD_INSPECT_BYTES, 128 * 1024),
    shieldMultipartBytes: positiveInt('AEGIS_SHIELD_MULTIPART_BYTES', env.AEGIS_SHIELD_MULTIPART_BYTES, 8 * 1024 * 1024),
    shieldBodyBudget: {
      ...DEFAULT_BODY_ADMISSION,
      bufferBytes: bytes('AEGIS_SHIELD_BUFFER_BYTES', env.AEGIS_SHIELD_BUFFER_BYTES, DEFAULT_BODY_ADMISSION.bufferBytes),
      uploadsPerClient: positiveInt('AEGIS_SHIELD_CLIENT_UPLOADS', env.AEGIS_SHIELD_CLIENT_UPLOADS, DEFAULT_BODY_ADMISSION.uploadsPerClient) || 1,
      bytesPerClient: bytes('AEGIS_SHIELD_CLIENT_BUFFER_BYTES', env.AEGIS_SHIELD_CLIENT_BUFFER_BYTES, DEFAULT_BODY_ADMISSION.bytesPerClient),
      totalBytes: bytes('AEGIS_SHIELD_TOTAL_BUFFER_BYTES', env.AEGIS_SHIELD_TOTAL_BUFFER_BYTES, DEFAULT_BODY_ADMISSION.totalBytes),
      minBytesPerSecond: positiveInt('AEGIS_SHIELD_MIN_BODY_RATE', env.AEGIS_SHIELD_MIN_BODY_RATE, DEFAULT_BODY_ADMISSION.minBytesPerSecond),
      graceMs: millis('AEGIS_SHIELD_BODY_GRACE_MS', env.AEGIS_SHIELD_BODY_GRACE_MS ?? '', DEFAULT_BODY_ADMISSION.graceMs),
    },
    shieldMaxDecompressionRatio: positiveInt('AEGIS_SHIELD_MAX_DECOMPRESSION_RATIO', env.AEGIS_SHIELD_MAX_DECOMPRESSION_RATIO, 100),
    challengeDifficultyBits: positiveInt('AEGIS_CHALLENGE_DIFFICULTY_BITS', env.AEGIS_CHALLENGE_DIFFICULTY_BITS, 16),
    upstreamTimeoutMs: positiveInt('AEGIS_UPSTREAM_TIMEOUT_MS', env.AEGIS_UPSTREAM_TIMEOUT_MS, 60_000),
    shieldWsIdleMs: millis('AEGIS_SHIELD_WS_IDLE_MS', env.AEGIS_SHIELD_WS_IDLE_MS ?? '', 5 * 60_000) || 5 * 60_000,
    shieldWsMaxPerSite: positiveInt('AEGIS_SHIELD_WS_MAX_PER_SITE', env.AEGIS_SHIELD_WS_MAX_PER_SITE, 10_000),
    shieldAllowSampleRate: fraction('AEGIS_SHIELD_ALLOW_SAMPLE_RATE', env.AEGIS_SHIELD_ALLOW_SAMPLE_RATE, 0.01),
    shieldFlushMs: positiveInt('AEGIS_SHIELD_FLUSH_MS', env.AEGIS_SHIELD_FLUSH_MS, 500) || 500,
    shieldEventRetentionDays: positiveInt('AEGIS_SHIELD_EVENT_RETENTION_DAYS', env.AEGIS_SHIELD_EVENT_RETENTION_DAYS, 30),
    shieldTrafficRecord: bool('AEGIS_SHIELD_TRAFFIC_RECORD', env.AEGIS_SHIELD_TRAFFIC_RECORD, true),
    shieldTrafficValueSampleRate: fraction('AEGIS_SHIELD_TRAFFIC_VALUE_SAMPLE_RATE', env.AEGIS_SHIELD_TRAFFIC_VALUE_SAMPLE_RATE, 0.01),
    shieldTrafficRetentionDays: positiveInt('AEGIS_SHIELD_TRAFFIC_RETENTION_DAYS', env.AEGIS_SHIELD_TRAFFIC_RETENTION_DAYS, 7) || 7,
    shieldTrafficValueHours: positiveInt('AEGIS_SHIELD_TRAFFIC_VALUE_HOURS', env.AEGIS_SHIELD_TRAFFIC_VALUE_HOURS, 72) || 72,
    shieldLiveHeartbeatMs: positiveInt('AEGIS_SHIELD_LIVE_HEARTBEAT_MS', env.AEGIS_SHIELD_LIVE_HEARTBEAT_MS, 15_000) || 15_000,
    analyticsRateLimitPerMinute: positiveInt('AEGIS_ANALYTICS_RATE_LIMIT_PER_MINUTE', env.AEGIS_ANALYTICS_RATE_LIMIT_PER_MINUTE, 30),
    allowLocalSources: bool('AEGIS_ALLOW_LOCAL_SOURCES', env.AEGIS_ALLOW_LOCAL_SOURCES, false),
    warmScanThreads: bool('AEGIS_WARM_SCAN_THREADS', env.AEGIS_WARM_SCAN_THREADS, true),
    allowPrivateTargets: bool('AEGIS_ALLOW_PRIVATE_TARGETS', env.AEGIS_ALLOW_PRIVATE_TARGETS, false),
    dnsServers: (env.AEGIS_DNS_SERVERS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    allowMetadataOrigins: bool('AEGIS_ALLOW_METADATA_ORIGINS', env.AEGIS_ALLOW_METADATA_ORIGINS, false),
    shieldDnsServers: (env.AEGIS_SHIELD_DNS_SERVERS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    configRepoPollSeconds: positiveInt('AEGIS_CONFIG_REPO_POLL_SECONDS', env.AEGIS_CONFIG_REPO_POLL_SECONDS, 180),
    metricsPort: env.AEGIS_METRICS_PORT ? positiveInt('AEGIS_METRICS_PORT', env.AEGIS_METRICS_PORT, 9464) : undefined,
    metricsHost: env.AEGIS_METRICS_HOST || '127.0.0.1',
    metricsToken: env.AEGIS_METRICS_TOKEN || undefined,
    publicUrl: publicUrl(env.AEGIS_PUBLIC_URL),
    smtpUrl: env.SMTP_URL || undefined,
    mailFrom: env.AEGIS_MAIL_FROM || 'Aegis <aegis@localhost>',
    googleClientId: env.AEGIS_GOOGLE_CLIENT_ID || undefined,
    googleClientSecret: env.AEGIS_GOOGLE_CLIENT_SECRET || undefined,
    googleIssuer: env.AEGIS_GOOGLE_ISSUER || 'https://accounts.google.com',
    signup: signupMode(env.AEGIS_SIGNUP),
    ownerEmail: emailAddress('AEGIS_OWNER_EMAIL', env.AEGIS_OWNER_EMAIL),
    shieldWorkers: workerCount(flags.shieldWorkers !== undefined ? '--workers' : 'AEGIS_SHIELD_WORKERS', flags.shieldWorkers ?? env.AEGIS_SHIELD_WORKERS),
    stripeWebhookSecret: env.STRIPE_WEBHOOK_SECRET || undefined,
    webhookTimeoutMs: millis('AEGIS_WEBHOOK_TIMEOUT_MS', env.AEGIS_WEBHOOK_TIMEOUT_MS ?? '', 10_000),
    webhookRetryDelaysMs: millisList('AEGIS_WEBHOOK_RETRY_DELAYS_MS', env.AEGIS_WEBHOOK_RETRY_DELAYS_MS, DEFAULT_RETRY_DELAYS_MS),
    webhookDisableAfterMs: millis('AEGIS_WEBHOOK_DISABLE_AFTER_MS', env.AEGIS_WEBHOOK_DISABLE_AFTER_MS ?? '', 3 * 86_400_000),
    webhookDnsServers: (env.AEGIS_WEBHOOK_DNS_SERVERS || env.AEGIS_DNS_SERVERS || '').split(',').map((s) => s.trim()).filter(Boolean),
    shieldAlertWindowMs: millis('AEGIS_SHIELD_ALERT_WINDOW_MS', env.AEGIS_SHIELD_ALERT_WINDOW_MS ?? '', 10_000),
    providers: loadProviderSettings(env),
    cloud: loadCloudSettings(env),
    verificationDnsServers: (env.AEGIS_VERIFICATION_DNS_SERVERS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    domainRecheckIntervalMs: millis('AEGIS_DOMAIN_RECHECK_INTERVAL_MS', env.AEGIS_DOMAIN_RECHECK_INTERVAL_MS ?? '', 86_400_000) || 86_400_000,
    triage: {
      fallbackMonthlyQuota: positiveInt('AEGIS_TRIAGE_FALLBACK_QUOTA', env.AEGIS_TRIAGE_FALLBACK_QUOTA, 50),
      defaultMonthlyTokenBudget: millis('AEGIS_AI_MONTHLY_TOKEN_BUDGET', env.AEGIS_AI_MONTHLY_TOKEN_BUDGET ?? '', 1_000_000),
    },
  };
}
