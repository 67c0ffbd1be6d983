// Cloning a private repository through a source-control connection: the scan or config repository
// names the connection (`"connection": "<id>"`) and an HTTPS URL without credentials; the token is
// put into the URL only at clone time, in the worker, and never stored or logged. The URL must be
// on the connection's own provider (its web origin, or the self-managed instance it was made for):
// otherwise a member could send the organisation's token to a host of their choosing.
import type { IntegrationRow } from '../../../platform/db/schema.ts';
import { validationFailed } from '../../../platform/http/errors.ts';
import type { ProvidersSettings } from '../providers/settings.ts';
import type { ProviderName } from '../providers/types.ts';
import { withProviderSession, type IntegrationDeps } from './sessions.ts';
import { findIntegration } from './store.ts';

/** The connection cannot be used for this URL; the message is safe to show. */
export class CloneConnectionError extends Error {
  override name = 'CloneConnectionError';
}

function allowedOrigins(row: IntegrationRow, settings: ProvidersSettings): string[] {
  const origins = [new URL(settings[row.provider as ProviderName].webUrl).origin];
  const instance = row.metadata.url;
  if (typeof instance === 'string' && URL.canParse(instance)) origins.push(new URL(instance).origin);
  return origins;
}

export function cloneAccess(deps: IntegrationDeps, settings: ProvidersSettings) {
  /** The connection `id` of `orgId`, checked for cloning `url`. */
  async function connectionFor(orgId: string, id: string, url: string): Promise<IntegrationRow> {
    const row = await findIntegration(deps.db, orgId, id);
    if (!row) throw new CloneConnectionError(`connection ${id} does not exist in this organisation`);
    if (!deps.connectors[row.provider as ProviderName]?.sourceControl) throw new CloneConnectionError(`connection ${id} is a ${row.provider} connection, which cannot clone repositories`);
    if (row.status !== 'active') throw new CloneConnectionError(`connection ${id} is ${row.status}${row.error ? `: ${row.error}` : ''}`);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new CloneConnectionError('a repository cloned through a connection needs its HTTPS URL (https://host/owner/repo.git)');
    }
    if (parsed.username || parsed.password) throw new CloneConnectionError('the URL must not carry credentials when a connection is named: the connection provides them');
    const origins = allowedOrigins(row, settings);
    if (!origins.includes(parsed.origin)) throw new CloneConnectionError(`connection ${id} (${row.provider}) clones only from ${origins.join(' or ')}, not ${parsed.origin}`);
    return row;
  }

  return {
    /** Checks at save time, so a request naming an unusable connection is refused at once: 422 on the `connection` field. */
    async checkRequest(orgId: string, id: string, url: string): Promise<void> {
      try {
        await connectionFor(orgId, id, url);
      } catch (err) {
        if (err instanceof CloneConnectionError) throw validationFailed(`request body is invalid: connection: ${err.message}`, { fields: [{ field: 'connection', message: err.message }] });
        throw err;
      }
    },
    /** The URL with the connection's current token (refreshed when it expires soon), for one clone. */
    async authenticatedUrl(orgId: string, id: string, url: string): Promise<string> {
      const row = await connectionFor(orgId, id, url);
      return withProviderSession(deps, row, async (session, connector) => connector.sourceControl!.authenticatedCloneUrl(session, url));
    },
  };
}

export type CloneAccess = ReturnType<typeof cloneAccess>;
