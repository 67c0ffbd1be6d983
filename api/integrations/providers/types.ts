// What Aegis needs from an external provider, whichever it is. Each provider (../github,
// ../gitlab, ../jira, ../linear) implements these against its documented API; the connections
// routes, the pull-request checks and the ticket sync use only these interfaces, so adding a
// provider touches no caller.
//
// Every call takes a `ProviderSession`: where the provider's API is and the Authorization header to
// send. Tokens are opened from their sealed form only to build a session, right before a call
// (../tokens.ts), and never logged.

/** Providers connected by OAuth or a pasted token/API key. Cloud accounts (a role, no token) are ../../attack-surface. */
export type ProviderName = 'github' | 'gitlab' | 'jira' | 'linear' | 'openai' | 'anthropic';
export type { IntegrationKind } from '../../../platform/db/schema.ts';
/** Any connection's provider: the above, or a cloud (../../attack-surface). */
export type IntegrationProvider = ProviderName | 'aws';
import type { IntegrationKind } from '../../../platform/db/schema.ts';

/** A live credential for one call. */
export interface ProviderSession {
  /** The provider API's base URL, without a trailing slash (https://api.github.com, https://gitlab.com/api/v4, a Jira site or https://api.atlassian.com/ex/jira/<cloud id>, https://api.linear.app). */
  apiBaseUrl: string;
  /** The whole Authorization header value (`Bearer …`, `Basic …`, or a Linear API key as is); AI providers: the API key itself, which their SDKs send. */
  authorization: string;
  /** The integration's non-secret metadata (Jira cloud id and site, …). */
  metadata: Record<string, unknown>;
  /**
   * How the session's calls reach the provider: the connector's outbound fetch (net/outbound.ts) —
   * tenant rule for a base URL an admin gave, operator endpoints for the configured ones, redirects
   * followed hop by hop under the same rules. Never the global fetch.
   */
  fetch: typeof fetch;
}

/** Tokens as the provider issued them. */
export interface TokenSet {
  accessToken: string;
  refreshToken: string | null;
  /** Absent: the token does not expire. */
  expiresAt: Date | null;
  /** Scopes granted, as the provider names them (may be fewer than asked for). */
  scopes: string[];
}

/** Who the credential belongs to, and what it can do. */
export interface AccountInfo {
  /** The provider's stable id of the account (user id, Jira cloud id, Linear organisation id). */
  id: string;
  /** A name a person recognises: a login, a site name, a workspace. */
  name: string;
  /** Scopes, when the provider reports them on the identify call (GitHub's X-OAuth-Scopes). */
  scopes?: string[];
  /** Non-secret specifics to keep with the connection (merged into its metadata). */
  metadata?: Record<string, unknown>;
  /** When identification moves the API base (Jira OAuth: the site's cloud id). */
  apiBaseUrl?: string;
}

/** OAuth 2.0 authorization code flow of one provider, configured with Aegis's client id and secret. */
export interface OAuthFlow {
  /** Whether the provider takes a PKCE code challenge (S256). */
  pkce: boolean;
  /** The URL to send the admin's browser to. */
  authorizeUrl(input: { state: string; redirectUri: string; codeChallenge: string | null }): string;
  exchangeCode(input: { code: string; redirectUri: string; codeVerifier: string | null }): Promise<TokenSet>;
  /** Absent when the provider's tokens do not expire. */
  refresh?(refreshToken: string): Promise<TokenSet>;
  /** Revokes the grant at the provider; absent where the provider has no endpoint for it. */
  revoke?(tokens: { accessToken: string; refreshToken: string | null }): Promise<void>;
}

/** The outcome of revoking a pasted token (ProviderConnector.revokeToken). */
export interface TokenRevocation {
  revoked: boolean;
  /** Why it was not revoked: the provider's answer and what to do instead. */
  reason?: string;
}

/** A token an admin pastes (personal access token, API key, Jira API token with e-mail and site). */
export interface TokenInput {
  token: string;
  /** Jira API tokens: the Atlassian account e-mail. */
  email?: string;
  /** Jira: the site (https://<name>.atlassian.net); GitLab self-managed: the instance URL. */
  url?: string;
}

export interface ProviderConnector {
  name: ProviderName;
  kind: IntegrationKind;
  /** Null when Aegis has no OAuth client for this provider (AEGIS_<PROVIDER>_CLIENT_ID unset). */
  oauth: OAuthFlow | null;
  /** A session for pasted credentials (not yet checked: `identify` checks them). */
  tokenSession(input: TokenInput): { session: ProviderSession; metadata: Record<string, unknown> };
  /** A session for OAuth tokens (`apiBaseUrl` and `metadata` come from the stored integration). */
  oauthSession(accessToken: string, stored: { apiBaseUrl: string | null; metadata: Record<string, unknown> }): ProviderSession;
  /** Checks the credential against the provider and says whose it is. Throws ProviderAuthError when refused. */
  identify(session: ProviderSession): Promise<AccountInfo>;
  /**
   * Revokes a pasted credential at the provider, on disconnect, where a token can revoke itself
   * (GitLab personal access tokens). `revoked: false` with a reason when the provider cannot revoke
   * this kind of token (nothing to retry); throws a ProviderError when it failed (down, rate limit).
   */
  revokeToken?(session: ProviderSession): Promise<TokenRevocation>;
  /** Source control capabilities (GitHub, GitLab). */
  sourceControl?: SourceControlClient;
  /** Ticket tracker capabilities (Jira, Linear, and GitHub's issues). */
  tickets?: TicketTrackerClient;
  /** Model calls (OpenAI-compatible Chat Completions, Anthropic Messages). */
  ai?: AiModelClient;
  /** The provider's webhooks to Aegis (pull requests, ticket state changes). */
  webhooks: InboundWebhooks;
}

/** Where a finding is, for an annotation. */
export interface AnnotationInput {
  path: string;
  startLine: number;
  endLine: number;
  level: 'failure' | 'warning' | 'notice';
  title: string;
  message: string;
}

export interface PullRequestRef {
  /** `owner/name` (GitHub) or the project path or id (GitLab). */
  repository: string;
  number: number;
  headSha: string;
}

export interface CheckInput {
  name: string;
  status: 'in_progress' | 'completed';
  conclusion?: 'success' | 'failure' | 'neutral';
  title: string;
  summary: string;
  annotations: AnnotationInput[];
  /** The check's page in Aegis (the scan). */
  detailsUrl?: string;
}

export interface SourceControlClient {
  /** The HTTPS clone URL with the connection's token in it (never stored, never logged). */
  authenticatedCloneUrl(session: ProviderSession, repositoryUrl: string): string;
  /** Creates a check run (GitHub) or commit status (GitLab); returns its id. */
  createCheck(session: ProviderSession, pr: PullRequestRef, check: CheckInput): Promise<string>;
  /** Updates the check `checkId` created earlier on the same head. */
  updateCheck(session: ProviderSession, pr: PullRequestRef, checkId: string, check: CheckInput): Promise<void>;
  /** Posts the summary comment, or edits `commentId` when given; returns the comment id. */
  upsertComment(session: ProviderSession, pr: PullRequestRef, body: string, commentId: string | null): Promise<string>;
}

export interface TicketInput {
  /** Jira project key, GitHub `owner/repo`, Linear team id or key. */
  project: string;
  title: string;
  /** Markdown. */
  description: string;
  labels: string[];
  assignee?: string;
  /** The finding's id, carried into the ticket where the provider allows (idempotency, lookup). */
  findingId: string;
}

export interface TicketRef {
  /** The provider's id (Jira issue id, GitHub `owner/repo#number`, Linear issue id). */
  externalId: string;
  /** What people call it: PROJ-12, owner/repo#12, ENG-12. */
  key: string;
  url: string;
}

/** A ticket state change read from the tracker's webhook. */
export interface TicketChange {
  externalId: string;
  state: 'open' | 'closed';
}

export interface TicketTrackerClient {
  createTicket(session: ProviderSession, input: TicketInput): Promise<TicketRef>;
  /** A ticket already created for this finding (found by the finding id it carries), for a retry after an unknown outcome. */
  findTicket(session: ProviderSession, project: string, findingId: string): Promise<TicketRef | null>;
  /** Comments on the ticket, then moves it to done / closes it. Already closed: only the comment. */
  closeTicket(session: ProviderSession, ticket: { externalId: string }, comment: string): Promise<void>;
}

/** A pull request (GitHub) or merge request (GitLab) event. */
export interface PullRequestEvent {
  /** opened, synchronize (new commits), reopened; others (closed, labeled…) are ignored by Aegis. */
  action: 'opened' | 'synchronize' | 'reopened' | 'other';
  /** `owner/name` (GitHub) or the project path (GitLab). */
  repository: string;
  /** GitLab's numeric project id (API calls use it); null on GitHub. */
  projectId: string | null;
  /** HTTPS clone URL of the repository the head commit is in (without credentials). */
  cloneUrl: string;
  number: number;
  headSha: string;
  headRef: string;
  baseSha: string;
  baseRef: string;
}

export type InboundEvent = { type: 'pull_request'; event: PullRequestEvent } | { type: 'ticket'; change: TicketChange };

export type WebhookHeaders = Record<string, string | string[] | undefined>;

/** The provider's webhooks to Aegis, as its documentation specifies them (signature scheme, event headers, payloads). */
export interface InboundWebhooks {
  /** Checks the delivery's signature (or token) over the raw body with the connection's secret, in constant time. */
  verify(headers: WebhookHeaders, rawBody: Buffer, secret: string): boolean;
  /** The provider's delivery id (redeliveries repeat it); null when it sends none. */
  deliveryId(headers: WebhookHeaders, body: unknown): string | null;
  /** What a verified delivery means to Aegis; null when it is about something else (a ping, a label change). */
  read(headers: WebhookHeaders, body: unknown): InboundEvent | null;
}

/** One structured request to a model: the answer must be JSON matching `schema`. */
export interface ModelRequest {
  model: string;
  system: string;
  user: string;
  /** Name of the output format (OpenAI `json_schema.name`, Anthropic tool name). */
  schemaName: string;
  /** JSON Schema the answer must match (strict-mode compatible: every property required, no additional properties). */
  schema: Record<string, unknown>;
  maxOutputTokens: number;
  signal?: AbortSignal;
}

export interface ModelReply {
  /** The answer as the model produced it: JSON text (the tool input, serialised, for Anthropic). Not yet validated. */
  text: string;
  /** The model that answered, as the provider names it. */
  model: string;
  usage: { input_tokens: number; output_tokens: number };
}

export interface AiModelClient {
  /** The model used when the connection's settings name none. */
  defaultModel: string;
  /** Throws ProviderAuthError (key refused), ProviderRateLimitError, ProviderUnavailableError or ProviderRequestError. */
  complete(session: ProviderSession, request: ModelRequest): Promise<ModelReply>;
}
