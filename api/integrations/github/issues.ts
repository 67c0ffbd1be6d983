// GitHub Issues as a ticket tracker. The project is a repository (`owner/repo`); a ticket's
// external id and key are `owner/repo#number`. The finding id rides in the body as an HTML comment
// (invisible when rendered), which is how a retry after an unknown outcome finds the issue it
// already created.
import { ProviderRequestError } from '../providers/errors.ts';
import type { ProviderSession, TicketRef, TicketTrackerClient } from '../providers/types.ts';
import { call, octokitFor, PROVIDER, splitRepository } from './client.ts';

/** Recent issues read when looking for a marker: a retry follows its create within minutes. */
const FIND_PAGES = 3;
const PER_PAGE = 100;

export const findingMarker = (findingId: string): string => `<!-- aegis-finding: ${findingId} -->`;

function refOf(repository: string, number: number, htmlUrl: string): TicketRef {
  const id = `${repository}#${number}`;
  return { externalId: id, key: id, url: htmlUrl };
}

function parseExternalId(externalId: string): { owner: string; repo: string; number: number } {
  const match = /^([^#\s]+)#(\d+)$/.exec(externalId);
  if (!match) throw new ProviderRequestError(PROVIDER, `not a GitHub issue reference (owner/repo#number): ${externalId.slice(0, 200)}`);
  return { ...splitRepository(match[1]!), number: Number(match[2]) };
}

async function findTicket(session: ProviderSession, project: string, findingId: string): Promise<TicketRef | null> {
  const { owner, repo } = splitRepository(project);
  const marker = findingMarker(findingId);
  const octokit = octokitFor(session);
  // The repository's issue list rather than the search API: search is indexed with a delay, so
  // an issue created seconds ago may not be found there.
  for (let page = 1; page <= FIND_PAGES; page++) {
    const { data } = await call(() => octokit.rest.issues.listForRepo({ owner, repo, state: 'all', sort: 'created', direction: 'desc', per_page: PER_PAGE, page }));
    const found = data.find((issue) => !issue.pull_request && (issue.body ?? '').includes(marker));
    if (found) return refOf(`${owner}/${repo}`, found.number, found.html_url);
    if (data.length < PER_PAGE) break;
  }
  return null;
}

export const githubTickets: TicketTrackerClient = {
  async createTicket(session, input) {
    const { owner, repo } = splitRepository(input.project);
    const body = `${input.description}\n\n${findingMarker(input.findingId)}`;
    const { data } = await call(() =>
      octokitFor(session).rest.issues.create({
        owner,
        repo,
        title: input.title,
        body,
        ...(input.labels.length > 0 ? { labels: input.labels } : {}),
        ...(input.assignee ? { assignees: [input.assignee] } : {}),
      }),
    );
    return refOf(`${owner}/${repo}`, data.number, data.html_url);
  },

  findTicket,

  async closeTicket(session, ticket, comment) {
    const { owner, repo, number } = parseExternalId(ticket.externalId);
    const octokit = octokitFor(session);
    await call(() => octokit.rest.issues.createComment({ owner, repo, issue_number: number, body: comment }));
    const { data } = await call(() => octokit.rest.issues.get({ owner, repo, issue_number: number }));
    if (data.state === 'closed') return;
    await call(() => octokit.rest.issues.update({ owner, repo, issue_number: number, state: 'closed', state_reason: 'completed' }));
  },
};
