// The JSON shapes GitHub answers and delivers with (users, repositories, issues, check runs, commit
// statuses, comments), built from the stand-in's records. Full shapes, not just the fields Aegis
// reads: the stand-in's webhook payloads are validated against GitHub's published schemas.
import { type StandInContext, userOf } from './context.ts';
import type { CheckRunRecord, CommentRecord, CommitStatusRecord, GithubUser, IssueRecord } from './types.ts';

/** A user as GitHub's payloads carry it (simple-user). */
export function userJson(ctx: StandInContext, u: GithubUser) {
  const api = `${ctx.standIn.settings.apiUrl}/users/${u.login}`;
  return {
    login: u.login,
    id: u.id,
    node_id: `U_${u.id}`,
    avatar_url: `${ctx.standIn.url}/avatars/u/${u.id}`,
    gravatar_id: '',
    url: api,
    html_url: `${ctx.standIn.url}/${u.login}`,
    followers_url: `${api}/followers`,
    following_url: `${api}/following{/other_user}`,
    gists_url: `${api}/gists{/gist_id}`,
    starred_url: `${api}/starred{/owner}{/repo}`,
    subscriptions_url: `${api}/subscriptions`,
    organizations_url: `${api}/orgs`,
    repos_url: `${api}/repos`,
    events_url: `${api}/events{/privacy}`,
    received_events_url: `${api}/received_events`,
    type: 'User',
    site_admin: false,
  };
}

/** A repository as GitHub's payloads carry it (every URL template the webhook schemas require). */
export function repositoryJson(ctx: StandInContext, repository: string) {
  const known = ctx.standIn.repositories.get(repository);
  const [owner, name] = repository.split('/') as [string, string];
  const host = new URL(ctx.standIn.url).host;
  const api = `${ctx.standIn.settings.apiUrl}/repos/${repository}`;
  const id = known?.id ?? 1;
  const created = '2026-01-01T00:00:00Z';
  return {
    id,
    node_id: `R_${id}`,
    name,
    full_name: repository,
    private: known?.private ?? false,
    owner: userJson(ctx, userOf(ctx, owner)),
    html_url: `${ctx.standIn.url}/${repository}`,
    description: null,
    fork: false,
    url: api,
    archive_url: `${api}/{archive_format}{/ref}`,
    assignees_url: `${api}/assignees{/user}`,
    blobs_url: `${api}/git/blobs{/sha}`,
    branches_url: `${api}/branches{/branch}`,
    collaborators_url: `${api}/collaborators{/collaborator}`,
    comments_url: `${api}/comments{/number}`,
    commits_url: `${api}/commits{/sha}`,
    compare_url: `${api}/compare/{base}...{head}`,
    contents_url: `${api}/contents/{+path}`,
    contributors_url: `${api}/contributors`,
    deployments_url: `${api}/deployments`,
    downloads_url: `${api}/downloads`,
    events_url: `${api}/events`,
    forks_url: `${api}/forks`,
    git_commits_url: `${api}/git/commits{/sha}`,
    git_refs_url: `${api}/git/refs{/sha}`,
    git_tags_url: `${api}/git/tags{/sha}`,
    hooks_url: `${api}/hooks`,
    issue_comment_url: `${api}/issues/comments{/number}`,
    issue_events_url: `${api}/issues/events{/number}`,
    issues_url: `${api}/issues{/number}`,
    keys_url: `${api}/keys{/key_id}`,
    labels_url: `${api}/labels{/name}`,
    languages_url: `${api}/languages`,
    merges_url: `${api}/merges`,
    milestones_url: `${api}/milestones{/number}`,
    notifications_url: `${api}/notifications{?since,all,participating}`,
    pulls_url: `${api}/pulls{/number}`,
    releases_url: `${api}/releases{/id}`,
    stargazers_url: `${api}/stargazers`,
    statuses_url: `${api}/statuses/{sha}`,
    subscribers_url: `${api}/subscribers`,
    subscription_url: `${api}/subscription`,
    tags_url: `${api}/tags`,
    teams_url: `${api}/teams`,
    trees_url: `${api}/git/trees{/sha}`,
    clone_url: `${ctx.standIn.url}/${repository}.git`,
    git_url: `git://${host}/${repository}.git`,
    ssh_url: `git@${host}:${repository}.git`,
    svn_url: `${ctx.standIn.url}/${repository}`,
    mirror_url: null,
    homepage: null,
    language: null,
    forks: 0,
    forks_count: 0,
    stargazers_count: 0,
    watchers: 0,
    watchers_count: 0,
    size: 0,
    default_branch: known?.defaultBranch ?? 'main',
    open_issues: 0,
    open_issues_count: 0,
    is_template: false,
    topics: [],
    has_issues: true,
    has_projects: false,
    has_wiki: false,
    has_pages: false,
    has_downloads: true,
    has_discussions: false,
    archived: false,
    disabled: false,
    visibility: known?.private ? 'private' : 'public',
    license: null,
    pushed_at: created,
    created_at: created,
    updated_at: created,
    allow_forking: true,
    web_commit_signoff_required: false,
  };
}

const reactions = (url: string) => ({ url, total_count: 0, '+1': 0, '-1': 0, laugh: 0, hooray: 0, confused: 0, heart: 0, rocket: 0, eyes: 0 });

export function issueJson(ctx: StandInContext, issue: IssueRecord) {
  return {
    id: issue.id,
    node_id: `I_${issue.id}`,
    url: `${ctx.standIn.settings.apiUrl}/repos/${issue.repository}/issues/${issue.number}`,
    repository_url: `${ctx.standIn.settings.apiUrl}/repos/${issue.repository}`,
    labels_url: `${ctx.standIn.settings.apiUrl}/repos/${issue.repository}/issues/${issue.number}/labels{/name}`,
    comments_url: `${ctx.standIn.settings.apiUrl}/repos/${issue.repository}/issues/${issue.number}/comments`,
    events_url: `${ctx.standIn.settings.apiUrl}/repos/${issue.repository}/issues/${issue.number}/events`,
    html_url: issue.htmlUrl,
    number: issue.number,
    state: issue.state,
    state_reason: issue.stateReason,
    title: issue.title,
    body: issue.body,
    user: userJson(ctx, userOf(ctx, issue.author)),
    labels: issue.labels.map((name, i) => ({
      id: issue.id * 100 + i,
      node_id: `LA_${issue.id * 100 + i}`,
      url: `${ctx.standIn.settings.apiUrl}/repos/${issue.repository}/labels/${encodeURIComponent(name)}`,
      name,
      color: 'ededed',
      default: false,
      description: null,
    })),
    assignee: issue.assignees[0] ? userJson(ctx, userOf(ctx, issue.assignees[0])) : null,
    assignees: issue.assignees.map((a) => userJson(ctx, userOf(ctx, a))),
    milestone: null,
    locked: false,
    active_lock_reason: null,
    comments: issue.comments.filter((c) => !c.deleted).length,
    reactions: reactions(`${ctx.standIn.settings.apiUrl}/repos/${issue.repository}/issues/${issue.number}/reactions`),
    created_at: issue.createdAt,
    updated_at: issue.updatedAt,
    closed_at: issue.state === 'closed' ? issue.updatedAt : null,
    author_association: 'OWNER',
  };
}

export function checkRunJson(ctx: StandInContext, run: CheckRunRecord) {
  return {
    id: run.id,
    node_id: `CR_${run.id}`,
    head_sha: run.headSha,
    external_id: '',
    url: `${ctx.standIn.settings.apiUrl}/repos/${run.repository}/check-runs/${run.id}`,
    html_url: `${ctx.standIn.url}/${run.repository}/runs/${run.id}`,
    details_url: run.detailsUrl,
    status: run.status,
    conclusion: run.conclusion,
    name: run.name,
    output: { title: run.title, summary: run.summary, text: null, annotations_count: run.annotations.length, annotations_url: `${ctx.standIn.settings.apiUrl}/repos/${run.repository}/check-runs/${run.id}/annotations` },
    pull_requests: [],
  };
}

export const commitStatusJson = (ctx: StandInContext, st: CommitStatusRecord, creator: string) => ({
  url: `${ctx.standIn.settings.apiUrl}/repos/${st.repository}/statuses/${st.sha}`,
  avatar_url: null,
  id: st.id,
  node_id: `SC_${st.id}`,
  state: st.state,
  description: st.description,
  target_url: st.targetUrl,
  context: st.context,
  created_at: new Date().toISOString(),
  updated_at: new Date().toISOString(),
  creator: userJson(ctx, userOf(ctx, creator)),
});

export const commentJson = (ctx: StandInContext, c: CommentRecord, author: string) => ({
  id: c.id,
  node_id: `IC_${c.id}`,
  url: `${ctx.standIn.settings.apiUrl}/repos/${c.repository}/issues/comments/${c.id}`,
  html_url: `${ctx.standIn.url}/${c.repository}/issues/${c.number}#issuecomment-${c.id}`,
  issue_url: `${ctx.standIn.settings.apiUrl}/repos/${c.repository}/issues/${c.number}`,
  body: c.body,
  user: userJson(ctx, userOf(ctx, author)),
  created_at: new Date().toISOString(),
  updated_at: new Date().toISOString(),
  author_association: 'OWNER',
});
