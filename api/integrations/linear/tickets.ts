// Linear issues for findings. The description ends with a marker naming the finding
// (`aegis-finding:<id>` in code span, kept verbatim by Linear's markdown), so a retry after an
// unknown outcome finds the issue with a description filter instead of filing a second one.
// Labels are matched by name among the workspace's and the team's labels; names Linear does not
// know are skipped rather than created, so a typo never litters the workspace with labels.
import { ProviderRequestError } from '../providers/errors.ts';
import type { ProviderSession, TicketInput, TicketRef, TicketTrackerClient } from '../providers/types.ts';
import { graphql, PROVIDER } from './graphql.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What the description carries; the closing backtick keeps `fnd_1` from matching `fnd_12`. */
export const findingMarker = (findingId: string): string => `\`aegis-finding:${findingId}\``;

interface IssueNode {
  id: string;
  identifier: string;
  url: string;
}

const toRef = (issue: IssueNode): TicketRef => ({ externalId: issue.id, key: issue.identifier, url: issue.url });

async function teamId(session: ProviderSession, project: string): Promise<string> {
  if (UUID.test(project)) {
    const data = await graphql<{ team: { id: string } }>(session, 'query AegisTeam($id: String!) { team(id: $id) { id } }', { id: project });
    return data.team.id;
  }
  const data = await graphql<{ teams: { nodes: { id: string }[] } }>(
    session,
    'query AegisTeamByKey($key: String!) { teams(filter: { key: { eq: $key } }, first: 1) { nodes { id } } }',
    { key: project },
  );
  const team = data.teams.nodes[0];
  if (!team) throw new ProviderRequestError(PROVIDER, `linear has no team with key ${project}`);
  return team.id;
}

async function labelIds(session: ProviderSession, team: string, names: string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const data = await graphql<{ issueLabels: { nodes: { id: string; name: string; team: { id: string } | null }[] } }>(
    session,
    'query AegisLabels($names: [String!]) { issueLabels(filter: { name: { in: $names } }, first: 100) { nodes { id name team { id } } } }',
    { names },
  );
  // A label of another team cannot go on this team's issue.
  return data.issueLabels.nodes.filter((l) => l.team === null || l.team.id === team).map((l) => l.id);
}

export function createLinearTickets(): TicketTrackerClient {
  return {
    async createTicket(session, input: TicketInput): Promise<TicketRef> {
      const team = await teamId(session, input.project);
      const labels = await labelIds(session, team, [...new Set(input.labels)]);
      const data = await graphql<{ issueCreate: { success: boolean; issue: IssueNode | null } }>(
        session,
        `mutation AegisIssueCreate($input: IssueCreateInput!) {
          issueCreate(input: $input) { success issue { id identifier url } }
        }`,
        {
          input: {
            teamId: team,
            title: input.title,
            description: `${input.description.trimEnd()}\n\n---\n${findingMarker(input.findingId)}`,
            ...(labels.length ? { labelIds: labels } : {}),
            ...(input.assignee ? { assigneeId: input.assignee } : {}),
          },
        },
      );
      if (!data.issueCreate.success || !data.issueCreate.issue) throw new ProviderRequestError(PROVIDER, 'linear did not create the issue');
      return toRef(data.issueCreate.issue);
    },

    async findTicket(session, project, findingId): Promise<TicketRef | null> {
      const team = await teamId(session, project);
      const data = await graphql<{ issues: { nodes: IssueNode[] } }>(
        session,
        `query AegisFindIssue($teamId: ID!, $marker: String!) {
          issues(filter: { team: { id: { eq: $teamId } }, description: { contains: $marker } }, first: 1) { nodes { id identifier url } }
        }`,
        { teamId: team, marker: findingMarker(findingId) },
      );
      const issue = data.issues.nodes[0];
      return issue ? toRef(issue) : null;
    },

    async closeTicket(session, ticket, comment): Promise<void> {
      const { issue } = await graphql<{ issue: { id: string; state: { type: string }; team: { id: string } } }>(
        session,
        'query AegisIssueState($id: String!) { issue(id: $id) { id state { type } team { id } } }',
        { id: ticket.externalId },
      );
      const commented = await graphql<{ commentCreate: { success: boolean } }>(
        session,
        'mutation AegisComment($input: CommentCreateInput!) { commentCreate(input: $input) { success } }',
        { input: { issueId: issue.id, body: comment } },
      );
      if (!commented.commentCreate.success) throw new ProviderRequestError(PROVIDER, 'linear did not add the comment');
      if (issue.state.type === 'completed' || issue.state.type === 'canceled') return;
      const { workflowStates } = await graphql<{ workflowStates: { nodes: { id: string; position: number }[] } }>(
        session,
        `query AegisDoneState($teamId: ID!) {
          workflowStates(filter: { team: { id: { eq: $teamId } }, type: { eq: "completed" } }) { nodes { id position } }
        }`,
        { teamId: issue.team.id },
      );
      // A team may have several completed states; the first in its board order is "Done".
      const done = [...workflowStates.nodes].sort((a, b) => a.position - b.position)[0];
      if (!done) throw new ProviderRequestError(PROVIDER, 'the Linear team has no completed workflow state');
      const updated = await graphql<{ issueUpdate: { success: boolean } }>(
        session,
        'mutation AegisIssueDone($id: String!, $input: IssueUpdateInput!) { issueUpdate(id: $id, input: $input) { success } }',
        { id: issue.id, input: { stateId: done.id } },
      );
      if (!updated.issueUpdate.success) throw new ProviderRequestError(PROVIDER, 'linear did not move the issue to done');
    },
  };
}
