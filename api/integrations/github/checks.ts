// Pull-request feedback on GitHub: a check run on the head commit (findings as annotations) and one
// summary comment on the pull request, edited in place on later scans. Clones use the token as the
// password of `x-access-token`, as GitHub documents for app and user tokens.
import { redactUrl } from '../../git/url.ts';
import { ProviderError, ProviderRequestError } from '../providers/errors.ts';
import type { ProviderSettings } from '../providers/settings.ts';
import type { AnnotationInput, CheckInput, ProviderSession, SourceControlClient } from '../providers/types.ts';
import { call, octokitFor, PROVIDER, providerErrorOf, splitRepository, tokenOf } from './client.ts';

/** GitHub takes at most 50 annotations per create or update request; further ones are appended by more updates. */
export const ANNOTATIONS_PER_REQUEST = 50;

const originOf = (url: string): string | null => {
  if (!/^https?:\/\//i.test(url)) return null;
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
};

function annotationOf(a: AnnotationInput) {
  return {
    path: a.path,
    start_line: a.startLine,
    end_line: Math.max(a.endLine, a.startLine),
    annotation_level: a.level,
    // GitHub caps the title at 255 characters and the message at 64 KB.
    title: a.title.slice(0, 255),
    message: a.message.slice(0, 64 * 1024),
  };
}

function runFields(check: CheckInput) {
  return {
    name: check.name,
    status: check.status,
    ...(check.status === 'completed' ? { conclusion: check.conclusion ?? 'neutral', completed_at: new Date().toISOString() } : {}),
    ...(check.detailsUrl ? { details_url: check.detailsUrl } : {}),
  };
}

// GitHub refuses output summaries over 65535 characters.
const output = (check: CheckInput, annotations: AnnotationInput[]) => ({
  title: check.title.slice(0, 255),
  summary: check.summary.slice(0, 65_535),
  ...(annotations.length > 0 ? { annotations: annotations.map(annotationOf) } : {}),
});

/** Sends the annotations past the first batch, 50 per update (GitHub appends them). */
async function appendAnnotations(session: ProviderSession, repository: string, checkRunId: number, check: CheckInput, rest: AnnotationInput[]): Promise<void> {
  const { owner, repo } = splitRepository(repository);
  const octokit = octokitFor(session);
  for (let i = 0; i < rest.length; i += ANNOTATIONS_PER_REQUEST) {
    const batch = rest.slice(i, i + ANNOTATIONS_PER_REQUEST);
    await call(() => octokit.rest.checks.update({ owner, repo, check_run_id: checkRunId, output: output(check, batch) }));
  }
}

function checkRunIdOf(checkId: string): number {
  if (!/^\d+$/.test(checkId)) throw new ProviderRequestError(PROVIDER, `not a GitHub check run id: ${checkId.slice(0, 40)}`);
  return Number(checkId);
}

export function createGithubSourceControl(settings: ProviderSettings): SourceControlClient {
  return {
    authenticatedCloneUrl(session, repositoryUrl) {
      const origin = originOf(repositoryUrl);
      if (origin === null) throw new ProviderRequestError(PROVIDER, `not an http(s) git URL: ${redactUrl(repositoryUrl)}`);
      // github.com clones from the web host while its API is api.github.com; Enterprise serves both on one host.
      const allowed = [originOf(`${settings.webUrl}/`), originOf(`${session.apiBaseUrl}/`)];
      if (!allowed.includes(origin)) throw new ProviderRequestError(PROVIDER, `${redactUrl(repositoryUrl)} is not on this connection's GitHub (${settings.webUrl})`);
      const url = new URL(repositoryUrl);
      url.username = 'x-access-token';
      url.password = encodeURIComponent(tokenOf(session));
      return url.toString();
    },

    async createCheck(session, pr, check) {
      const { owner, repo } = splitRepository(pr.repository);
      const first = check.annotations.slice(0, ANNOTATIONS_PER_REQUEST);
      const created = await call(() => octokitFor(session).rest.checks.create({ owner, repo, head_sha: pr.headSha, ...runFields(check), output: output(check, first) }));
      await appendAnnotations(session, pr.repository, created.data.id, check, check.annotations.slice(ANNOTATIONS_PER_REQUEST));
      return String(created.data.id);
    },

    async updateCheck(session, pr, checkId, check) {
      const { owner, repo } = splitRepository(pr.repository);
      const id = checkRunIdOf(checkId);
      const first = check.annotations.slice(0, ANNOTATIONS_PER_REQUEST);
      await call(() => octokitFor(session).rest.checks.update({ owner, repo, check_run_id: id, ...runFields(check), output: output(check, first) }));
      await appendAnnotations(session, pr.repository, id, check, check.annotations.slice(ANNOTATIONS_PER_REQUEST));
    },

    async upsertComment(session, pr, body, commentId) {
      const { owner, repo } = splitRepository(pr.repository);
      const octokit = octokitFor(session);
      if (commentId !== null && /^\d+$/.test(commentId)) {
        try {
          await octokit.rest.issues.updateComment({ owner, repo, comment_id: Number(commentId), body });
          return commentId;
        } catch (err) {
          const error = providerErrorOf(err);
          // Someone deleted the comment: post a new one rather than fail the scan's feedback.
          if (!(error instanceof ProviderError) || error.status !== 404) throw error;
        }
      }
      const created = await call(() => octokit.rest.issues.createComment({ owner, repo, issue_number: pr.number, body }));
      return String(created.data.id);
    },
  };
}
