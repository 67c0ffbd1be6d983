// Jira issues for findings. Each issue carries the label `aegis-<finding id>` so that a retry after
// an unknown outcome finds the issue instead of filing a second one (JQL on labels is exact).
// Closing follows the project's own workflow: whichever transition leads to a status in the `done`
// category, as workflows name their statuses freely.
import { ProviderRequestError } from '../providers/errors.ts';
import type { ProviderSession, TicketInput, TicketRef, TicketTrackerClient } from '../providers/types.ts';
import { markdownToAdf } from './adf.ts';
import { call, PROVIDER } from './http.ts';

/** The issue type Aegis files; a per-connection setting may come later. */
const ISSUE_TYPE = 'Bug';
/** Jira's limit on a summary. */
const SUMMARY_MAX = 255;

interface Transition {
  id: string;
  name: string;
  to?: { statusCategory?: { key?: string } };
}

export const findingLabel = (findingId: string): string => `aegis-${findingId}`;

/** Jira labels are single words: spaces become dashes. */
export const jiraLabel = (label: string): string => label.trim().replace(/\s+/g, '-');

const jqlString = (value: string): string => `"${value.replace(/["\\]/g, (c) => `\\${c}`)}"`;

function siteOf(session: ProviderSession): string {
  const site = session.metadata.site_url ?? session.metadata.url;
  return typeof site === 'string' && site ? site.replace(/\/+$/, '') : session.apiBaseUrl;
}

function ref(session: ProviderSession, issue: { id: string; key: string }): TicketRef {
  return { externalId: issue.id, key: issue.key, url: `${siteOf(session)}/browse/${issue.key}` };
}

export function createJiraTickets(): TicketTrackerClient {
  const rest = (session: ProviderSession, path: string): string => `${session.apiBaseUrl}/rest/api/3${path}`;

  return {
    async createTicket(session: ProviderSession, input: TicketInput): Promise<TicketRef> {
      const labels = [...new Set([...input.labels.map(jiraLabel).filter(Boolean), findingLabel(input.findingId)])];
      const fields: Record<string, unknown> = {
        project: { key: input.project },
        summary: input.title.length > SUMMARY_MAX ? `${input.title.slice(0, SUMMARY_MAX - 1)}…` : input.title,
        description: markdownToAdf(input.description),
        issuetype: { name: ISSUE_TYPE },
        labels,
      };
      if (input.assignee) fields.assignee = { accountId: input.assignee };
      const issue = await call<{ id: string; key: string }>(session.fetch, rest(session, '/issue'), {
        method: 'POST',
        authorization: session.authorization,
        json: { fields },
      });
      return ref(session, issue);
    },

    async findTicket(session: ProviderSession, project: string, findingId: string): Promise<TicketRef | null> {
      // The enhanced JQL search (/search/jql); the old /search is withdrawn on Jira Cloud.
      const answer = await call<{ issues?: { id: string; key: string }[] }>(session.fetch, rest(session, '/search/jql'), {
        method: 'POST',
        authorization: session.authorization,
        json: {
          jql: `project = ${jqlString(project)} AND labels = ${jqlString(findingLabel(findingId))} ORDER BY created ASC`,
          fields: ['summary'],
          maxResults: 1,
        },
      });
      const issue = answer.issues?.[0];
      return issue ? ref(session, issue) : null;
    },

    async closeTicket(session: ProviderSession, ticket: { externalId: string }, comment: string): Promise<void> {
      const id = encodeURIComponent(ticket.externalId);
      await call(session.fetch, rest(session, `/issue/${id}/comment`), {
        method: 'POST',
        authorization: session.authorization,
        json: { body: markdownToAdf(comment) },
      });
      const issue = await call<{ fields?: { status?: { statusCategory?: { key?: string } } } }>(session.fetch, rest(session, `/issue/${id}?fields=status`), {
        authorization: session.authorization,
      });
      if (issue.fields?.status?.statusCategory?.key === 'done') return;
      const { transitions = [] } = await call<{ transitions?: Transition[] }>(session.fetch, rest(session, `/issue/${id}/transitions`), {
        authorization: session.authorization,
      });
      const done = transitions.find((t) => t.to?.statusCategory?.key === 'done');
      if (!done) throw new ProviderRequestError(PROVIDER, `jira issue ${ticket.externalId} has no transition to a done status`);
      await call(session.fetch, rest(session, `/issue/${id}/transitions`), {
        method: 'POST',
        authorization: session.authorization,
        json: { transition: { id: done.id } },
      });
    },
  };
}
