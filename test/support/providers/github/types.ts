// The GitHub stand-in's public face: what tests read (records of what was asked of it) and call.
// Kept apart from index.ts so the handler modules can name these types without importing the
// module that wires them together.
import type { ProviderSettings } from '../../../../api/integrations/providers/settings.ts';

export interface GithubStandInOptions {
  /** Lifetime of user access tokens from the OAuth flow (GitHub: 28800, 8 hours). */
  tokenLifetimeSeconds?: number;
}

export interface RecordedRequest {
  method: string;
  /** Path as GitHub documents it: API paths without the `/api` prefix, with the query string. */
  path: string;
  body: unknown;
}

export interface GithubUser {
  id: number;
  login: string;
}

export interface AnnotationRecord {
  path: string;
  start_line: number;
  end_line: number;
  annotation_level: string;
  message: string;
  title?: string;
}

export interface CheckRunRecord {
  id: number;
  repository: string;
  headSha: string;
  name: string;
  status: string;
  conclusion: string | null;
  title: string | null;
  summary: string | null;
  detailsUrl: string | null;
  annotations: AnnotationRecord[];
  /** Create and update calls made for it. */
  calls: number;
}

export interface CommitStatusRecord {
  id: number;
  repository: string;
  sha: string;
  context: string;
  state: string;
  description: string | null;
  targetUrl: string | null;
}

export interface CommentRecord {
  id: number;
  repository: string;
  /** The issue or pull request number. */
  number: number;
  body: string;
  deleted: boolean;
}

export interface IssueRecord {
  id: number;
  repository: string;
  number: number;
  title: string;
  body: string | null;
  labels: string[];
  assignees: string[];
  state: 'open' | 'closed';
  stateReason: string | null;
  author: string;
  comments: CommentRecord[];
  htmlUrl: string;
  createdAt: string;
  updatedAt: string;
}

export interface RepositoryRecord {
  id: number;
  owner: string;
  name: string;
  private: boolean;
  defaultBranch: string;
  /** Branch → head commit. */
  branches: Map<string, string>;
}

export interface PullRequestEventInput {
  owner: string;
  repo: string;
  number: number;
  headSha: string;
  baseSha: string;
  headRef: string;
  baseRef: string;
  action: 'opened' | 'synchronize' | 'reopened' | 'closed' | 'labeled' | 'edited';
  /** The repository the head is in, when it is a fork (`owner/name`). */
  headRepository?: string;
  /** The delivery id (a redelivery repeats it); a new one by default. */
  deliveryId?: string;
}

export interface DeliveryResult {
  status: number;
  body: string;
  deliveryId: string;
  payload: Record<string, unknown>;
}

export interface GithubStandIn {
  url: string;
  settings: ProviderSettings;
  requests: RecordedRequest[];
  rejected: string[];
  checkRuns: CheckRunRecord[];
  /** Commit statuses, one record per POST (GitHub shows the latest of each context). */
  commitStatuses: CommitStatusRecord[];
  comments: CommentRecord[];
  issues: IssueRecord[];
  repositories: Map<string, RepositoryRecord>;
  /** The user OAuth grants belong to. */
  user: GithubUser;
  failNext(count: number, status: number, headers?: Record<string, string>): void;
  /** A personal access token (`ghp_…`) of `login` (default the stand-in's user); classic tokens report their scopes. */
  issueToken(login?: string, options?: { scopes?: string[] }): string;
  revokeToken(token: string): void;
  /** Revokes every token and grant (a user removing the app's authorization). */
  revokeAllTokens(): void;
  /** Whether the API accepts `token` now. */
  tokenWorks(token: string): Promise<boolean>;
  /** Every access and refresh token issued so far. */
  issuedTokens(): string[];
  /** Successful refresh_token grants so far. */
  refreshCount(): number;
  /** Client ids whose grant was revoked through DELETE /applications/{client_id}/grant, one entry per call. */
  revokedGrants(): string[];
  /** Access tokens revoked through DELETE /applications/{client_id}/token, one entry per call. */
  revokedTokens(): string[];
  createRepository(owner: string, name: string, files: Record<string, string>, options?: { private?: boolean }): Promise<RepositoryRecord>;
  /** Commits `files` (added or replaced) on `branch` (a new branch starts from the default one); returns the sha. */
  commit(owner: string, name: string, branch: string, files: Record<string, string>): Promise<string>;
  issueOf(repository: string, number: number): IssueRecord | undefined;
  issuesOf(repository: string): IssueRecord[];
  /** Removes a comment, as a person deleting it on GitHub. */
  deleteComment(id: number): void;
  /** Where `issues` deliveries go (GitHub's repository webhook). */
  setWebhook(url: string, secret: string): void;
  closeIssue(owner: string, repo: string, number: number): Promise<DeliveryResult | null>;
  reopenIssue(owner: string, repo: string, number: number): Promise<DeliveryResult | null>;
  setIssueState(repository: string, number: number, state: 'open' | 'closed'): Promise<DeliveryResult | null>;
  pullRequestPayload(input: PullRequestEventInput): Record<string, unknown>;
  sendPullRequestEvent(url: string, secret: string, input: PullRequestEventInput): Promise<DeliveryResult>;
  close(): Promise<void>;
}
