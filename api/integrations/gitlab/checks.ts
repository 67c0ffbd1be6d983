// Merge request feedback on GitLab: commit statuses and one summary note.
//
// Statuses (POST /projects/:id/statuses/:sha) have a name, a state, a description of at most 255
// characters and a link; no annotations. Posting the same name again for the same commit moves
// that status to the new state (GitLab looks up the running or pending status of that name), so
// the check id Aegis keeps is the status *name*: an update, or a retry after an unknown outcome,
// posts under that name and never leaves a second status behind. A state GitLab already holds
// (a retried `running`) is refused with 400 "Cannot transition status via :run from :running"; when
// the state named after "from" is the one asked for, the status is as asked and that is success. Annotations cannot be shown on
// GitLab; the caller lists them in the summary note instead, so they are ignored here.
import { redactUrl, parseGitSource } from '../../../platform/git/url.ts';
import { ProviderError, ProviderRequestError } from '../providers/errors.ts';
import type { CheckInput, ProviderSession, PullRequestRef, SourceControlClient } from '../providers/types.ts';
import { api, PROVIDER, projectId, tokenOf } from './api.ts';

const MAX_DESCRIPTION = 255;

type StatusState = 'running' | 'success' | 'failed';

function stateOf(check: CheckInput): StatusState {
  if (check.status === 'in_progress') return 'running';
  // neutral: nothing that should block the merge request.
  return check.conclusion === 'failure' ? 'failed' : 'success';
}

const clip = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

async function postStatus(session: ProviderSession, pr: PullRequestRef, name: string, check: CheckInput): Promise<void> {
  const state = stateOf(check);
  const body: Record<string, unknown> = { state, name, description: clip(check.title, MAX_DESCRIPTION) };
  if (check.detailsUrl) body.target_url = check.detailsUrl;
  try {
    await api(session, 'POST', `/projects/${projectId(pr.repository)}/statuses/${encodeURIComponent(pr.headSha)}`, body);
  } catch (err) {
    // Only "from :<the state asked for>" means done; from another state the status is not as asked.
    const from = err instanceof ProviderError && err.status === 400 ? /cannot transition status via :\w+ from :(\w+)/i.exec(err.message) : null;
    if (from?.[1] === state) return;
    throw err;
  }
}

/** `scheme://host[:port]` of a git or API URL, as url.ts normalises it (lower-case host, default port dropped). */
function originOf(url: string): string | null {
  const parsed = parseGitSource(url, undefined, { allowLocal: false });
  if (!parsed.ok) return null;
  const match = /^(https?:\/\/[^/]+)\//.exec(parsed.source.target);
  return match ? match[1]! : null;
}

/**
 * The clone URL with `oauth2:<token>` as credentials (GitLab takes OAuth and personal tokens alike
 * as the password). Only for a repository on the connection's own GitLab: the token must never be
 * sent to a host someone else named.
 */
function authenticatedCloneUrl(session: ProviderSession, repositoryUrl: string): string {
  const origin = originOf(repositoryUrl);
  if (origin === null) throw new ProviderRequestError(PROVIDER, `not an http(s) git URL: ${redactUrl(repositoryUrl)}`);
  if (origin !== originOf(`${session.apiBaseUrl}/`)) throw new ProviderRequestError(PROVIDER, `${redactUrl(repositoryUrl)} is not on this connection's GitLab (${session.apiBaseUrl.replace(/\/api\/v4$/, '')})`);
  // The URL parsed as valid above: scheme://[userinfo@]host[:port]/path.
  const rest = repositoryUrl.slice(repositoryUrl.indexOf('://') + 3);
  const slash = rest.indexOf('/');
  const hostPort = rest.slice(rest.slice(0, slash).lastIndexOf('@') + 1, slash);
  const scheme = origin.slice(0, origin.indexOf('://') + 3);
  return `${scheme}oauth2:${encodeURIComponent(tokenOf(session))}@${hostPort}${rest.slice(slash)}`;
}

interface Note {
  id: number;
}

export const gitlabSourceControl: SourceControlClient = {
  authenticatedCloneUrl,

  async createCheck(session, pr, check) {
    await postStatus(session, pr, check.name, check);
    return check.name;
  },

  async updateCheck(session, pr, checkId, check) {
    await postStatus(session, pr, checkId, check);
  },

  async upsertComment(session, pr, body, commentId) {
    const notes = `/projects/${projectId(pr.repository)}/merge_requests/${pr.number}/notes`;
    if (commentId !== null) {
      try {
        const note = await api<Note>(session, 'PUT', `${notes}/${encodeURIComponent(commentId)}`, { body });
        return String(note.id);
      } catch (err) {
        // Deleted by someone on GitLab: post a new note rather than lose the summary.
        if (!(err instanceof ProviderRequestError && err.status === 404)) throw err;
      }
    }
    const note = await api<Note>(session, 'POST', notes, { body });
    return String(note.id);
  },
};
