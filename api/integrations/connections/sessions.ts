// A live session with a connection's provider, for one piece of work: the access token opened from
// its sealed form and, when it expires within REFRESH_MARGIN_MS, refreshed first. Concurrent
// callers (several jobs at once, several workers) refresh once: the row is locked while the
// refresh runs, and whoever comes second finds fresh tokens. A provider that refuses the
// credential puts the connection in `error` with the reason (and an `integration.error` event).
import type { SecretBox } from '../../../platform/crypto/secret-box.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { IntegrationRow } from '../../../platform/db/schema.ts';
import { announceEnqueued } from '../../../platform/jobs/signals.ts';
import { ProviderAuthError, ProviderError } from '../providers/errors.ts';
import type { Connectors } from './connectors.ts';
import type { ProviderConnector, ProviderName, ProviderSession } from '../providers/types.ts';
import { openAccessToken, openRefreshToken, setIntegrationStatus, storeRefreshedTokens } from './store.ts';

/** Tokens expiring within this window are refreshed before use (GitHub's user tokens live 8 hours, Atlassian's 1 hour). */
export const REFRESH_MARGIN_MS = 5 * 60 * 1000;

export interface IntegrationDeps {
  db: Db;
  secretBox: SecretBox;
  connectors: Connectors;
}

export class IntegrationUnavailableError extends Error {
  override name = 'IntegrationUnavailableError';
}

const expiresSoon = (row: IntegrationRow, now: number): boolean => row.token_expires_at !== null && row.token_expires_at.getTime() - now <= REFRESH_MARGIN_MS;

function sessionOf(connector: ProviderConnector, box: SecretBox, row: IntegrationRow): ProviderSession {
  const token = openAccessToken(box, row);
  if (!token) throw new IntegrationUnavailableError(`integration ${row.id} has no token (status ${row.status})`);
  if (row.auth_type === 'token') return connector.tokenSession({ token, ...tokenFields(row) }).session;
  return connector.oauthSession(token, { apiBaseUrl: row.api_base_url, metadata: row.metadata });
}

/** What a pasted token came with, kept in metadata (Jira's e-mail and site, a GitLab instance). */
function tokenFields(row: IntegrationRow): { email?: string; url?: string } {
  const { email, url } = row.metadata as { email?: unknown; url?: unknown };
  return { ...(typeof email === 'string' ? { email } : {}), ...(typeof url === 'string' ? { url } : {}) };
}

/** Refreshes under a row lock; returns the row with fresh tokens (another caller's, when it was faster). */
async function refreshTokens(deps: IntegrationDeps, connector: ProviderConnector, id: string): Promise<IntegrationRow> {
  const refresh = connector.oauth?.refresh;
  return deps.db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('integrations').selectAll().where('id', '=', id).forUpdate().executeTakeFirstOrThrow();
    if (!expiresSoon(row, Date.now())) return row;
    const refreshToken = openRefreshToken(deps.secretBox, row);
    if (!refresh || !refreshToken) {
      // Nothing to refresh with: use the token until the provider refuses it.
      if (row.token_expires_at && row.token_expires_at.getTime() <= Date.now()) throw new ProviderAuthError(row.provider, 'the access token expired and cannot be refreshed; connect again');
      return row;
    }
    return storeRefreshedTokens(trx, deps.secretBox, row, await refresh(refreshToken));
  });
}

export function connectorFor(connectors: Connectors, row: Pick<IntegrationRow, 'provider'>): ProviderConnector {
  const connector = connectors[row.provider as ProviderName];
  if (!connector) throw new IntegrationUnavailableError(`unknown provider ${row.provider}`);
  return connector;
}

/** Marks the connection `error` when the provider refused its credential; announces the event's deliveries. */
export async function noteProviderFailure(deps: IntegrationDeps, row: IntegrationRow, err: unknown): Promise<void> {
  if (!(err instanceof ProviderAuthError)) return;
  const updated = await setIntegrationStatus(deps.db, row, 'error', err.message);
  if (updated !== row) announceEnqueued(deps.db);
}

/**
 * Runs `work` with a session of the connection `row`, refreshing its tokens first when they expire
 * soon. A ProviderAuthError (from the refresh or from `work`) marks the connection `error` and is
 * rethrown; other errors pass through unchanged.
 */
export async function withProviderSession<T>(deps: IntegrationDeps, row: IntegrationRow, work: (session: ProviderSession, connector: ProviderConnector) => Promise<T>): Promise<T> {
  if (row.status !== 'active') throw new IntegrationUnavailableError(`integration ${row.id} is ${row.status}${row.error ? `: ${row.error}` : ''}`);
  const connector = connectorFor(deps.connectors, row);
  try {
    const current = expiresSoon(row, Date.now()) ? await refreshTokens(deps, connector, row.id) : row;
    return await work(sessionOf(connector, deps.secretBox, current), connector);
  } catch (err) {
    if (err instanceof ProviderError) await noteProviderFailure(deps, row, err);
    throw err;
  }
}
