// Pull-request feedback on GitHub: a check run on the head commit (findings as annotations) and one
// summary comment on the pull request, edited in place on later scans. Clones use the token as the
// password of `x-access-token`, as GitHub documents for app and user tokens.
//
// GitHub lets only GitHub Apps write check runs: "Create a check run" works with GitHub App
// installation and user access tokens (permission "Checks: write"); personal access tokens and
// OAuth-app tokens get 403 "Resource not accessible by personal access token" / "… by integration"
// (docs.github.com/rest/checks/runs: "OAuth apps and authenticated users can view check runs and
// check suites, but they are not able to create them … you might be interested in … commit
// statuses"). So a pasted token reports a commit status instead (POST /repos/{o}/{r}/statuses/{sha},
// context `Aegis`, the same pass/fail), and an OAuth token that is refused a check run on one
// repository falls back to a status there too. A status has no annotations: the summary comment,
// posted either way, lists the new findings. The check id kept for a status is `status:<context>`;
// posting the same context again replaces the status GitHub shows for that commit.
import { redactUrl } from '../../../platform/git/url.ts';
import { ProviderError, ProviderRequestError } from '../providers/errors.ts';
import type { ProviderSettings } from '../providers/settings.ts';
import type { AnnotationInput, CheckInput, ProviderSession, PullRequestRef, SourceControlClient } from '../providers/types.ts';
import { call, octokitFor, PROVIDER, providerErrorOf, splitRepository, tokenOf } from './client.ts';

/** GitHub takes at most 50 annotations per create or update request; further ones are appended by more updates. */
export const ANNOTATIONS_PER_REQUEST = 50;

/** Check ids of commit statuses: `status:<context>` (check run ids are numbers). */
export const COMMIT_STATUS_PREFIX = 'status:';
/** GitHub refuses commit status descriptions over 140 characters (422). */
const MAX_STATUS_DESCRIPTION = 140;

/** What the GitHub connector puts in the session of a pasted token (a personal access token): GitHub refuses it check runs. */
export const PASTED_TOKEN = 'pasted_token';

const clip = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

/** GitHub's answer to a token that may not write check runs (a PAT, an OAuth app, an app without "Checks: write" here). */
const refusesCheckRuns = (err: unknown): boolean => err instanceof ProviderRequestError && err.status === 403 && /resource not accessible by/i.test(err.message);

function statusStateOf(check: CheckInput): 'pending' | 'success' | 'failure' {
  if (check.status === 'in_progress') return 'pending';
  // neutral (superseded, could not scan): nothing that should block the merge.
  return check.conclusion === 'failure' ? 'failure' : 'success';
}

/** Sets the commit status `context` on the head; returns its check id. */
async function postStatus(session: ProviderSession, pr: PullRequestRef, context: string, check: CheckInput): Promise<string> {
  const { owner, repo } = splitRepository(pr.repository);
  await call(() =>
    octokitFor(session).rest.repos.createCommitStatus({
      owner,
      repo,
      sha: pr.headSha,
      state: statusStateOf(check),
      context,
      description: clip(check.title, MAX_STATUS_DESCRIPTION),
      ...(check.detailsUrl ? { target_url: check.detailsUrl } : {}),
    }),
  );
  return `${COMMIT_STATUS_PREFIX}${context}`;
}

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
      if (session.metadata[PASTED_TOKEN] === true) return postStatus(session, pr, check.name, check);
      const { owner, repo } = splitRepository(pr.repository);
      const first = check.annotations.slice(0, ANNOTATIONS_PER_REQUEST);
      let created;
      try {
        created = await call(() => octokitFor(session).rest.checks.create({ owner, repo, head_sha: pr.headSha, ...runFields(check), output: output(check, first) }));
      } catch (err) {
        if (refusesCheckRuns(err)) return postStatus(session, pr, check.name, check);
        throw err;
      }
      await appendAnnotations(session, pr.repository, created.data.id, check, check.annotations.slice(ANNOTATIONS_PER_REQUEST));
      return String(created.data.id);
    },

    async updateCheck(session, pr, checkId, check) {
      if (checkId.startsWith(COMMIT_STATUS_PREFIX)) {
        await postStatus(session, pr, checkId.slice(COMMIT_STATUS_PREFIX.length) || check.name, check);
        return;
      }
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
