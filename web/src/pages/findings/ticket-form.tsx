// A ticket from a finding: a Jira, Linear or GitHub connection, and the project (Jira key, GitHub
// owner/repo, Linear team). Listing connections is for admins (GET /api/v1/integrations needs
// `admin`); others type the connection id an admin gave them. A 409 carries the existing ticket:
// its link is shown.
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ApiError, api, ok } from '../../api/client.ts';
import { useCan } from '../../api/session.ts';
import { Field, useWrite } from '../../components/forms.tsx';
import { ErrorMessage } from '../../components/status.tsx';
import { findingsKey, type Finding } from './model.ts';

const TRACKERS = ['jira', 'linear', 'github'];
const PROJECT_HINT: Record<string, string> = { jira: 'Jira project key, e.g. SEC', github: 'owner/repo', linear: 'Linear team key or id' };

function useTrackers(enabled: boolean) {
  return useQuery({
    queryKey: ['integrations', 'ticket-trackers'],
    enabled,
    // One page of 200 connections: an organisation has a handful.
    queryFn: async () => (await ok(api.GET('/api/v1/integrations', { params: { query: { limit: 200 } } }))).data.filter((c) => TRACKERS.includes(c.provider) && c.status === 'active'),
  });
}

function existingTicketUrl(error: unknown): string | null {
  if (!(error instanceof ApiError) || error.status !== 409) return null;
  const ticket = error.details.ticket as { url?: unknown } | undefined;
  return typeof ticket?.url === 'string' ? ticket.url : null;
}

export function TicketForm({ finding, onDone, onCancel }: { finding: Finding; onDone(): void; onCancel(): void }) {
  const isAdmin = useCan('admin');
  const trackers = useTrackers(isAdmin);
  const [connection, setConnection] = useState('');
  const [project, setProject] = useState('');
  const [assignee, setAssignee] = useState('');
  const chosen = trackers.data?.find((c) => c.id === connection);
  const create = useWrite(
    () =>
      ok(
        api.POST('/api/v1/vulnerabilities/{id}/ticket', {
          params: { path: { id: finding.id } },
          body: { connection: connection.trim(), project: project.trim(), ...(assignee.trim() ? { assignee: assignee.trim() } : {}) },
        }),
      ),
    [findingsKey],
    onDone,
  );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate(undefined);
  };
  const link = existingTicketUrl(create.error);
  return (
    <form onSubmit={submit}>
      {isAdmin ? (
        <Field label="Connection" hint={trackers.data?.length === 0 ? 'No Jira, Linear or GitHub connection yet: connect one under Settings, Integrations.' : undefined}>
          {(props) => (
            <select {...props} required value={connection} onChange={(e) => setConnection(e.target.value)}>
              <option value="">{trackers.isPending ? 'Loading…' : 'Choose a connection'}</option>
              {trackers.data?.map((c) => (
                <option key={c.id} value={c.id}>{c.provider} · {c.account ?? c.id}</option>
              ))}
            </select>
          )}
        </Field>
      ) : (
        <Field label="Connection id" hint="The id of a Jira, Linear or GitHub connection (an admin can find it under Settings, Integrations).">
          {(props) => <input {...props} required value={connection} onChange={(e) => setConnection(e.target.value)} />}
        </Field>
      )}
      {trackers.error && <ErrorMessage error={trackers.error} title="Connections could not be loaded" />}
      <Field label="Project" hint={chosen ? PROJECT_HINT[chosen.provider] : 'Jira project key, GitHub owner/repo or Linear team'}>
        {(props) => <input {...props} required maxLength={200} value={project} onChange={(e) => setProject(e.target.value)} />}
      </Field>
      <Field label="Assignee (optional)">
        {(props) => <input {...props} maxLength={200} value={assignee} onChange={(e) => setAssignee(e.target.value)} />}
      </Field>
      {create.error && <ErrorMessage error={create.error} title="The ticket was not created" />}
      {link && (
        <p>
          Existing ticket: <a href={link} target="_blank" rel="noreferrer">{link}</a>
        </p>
      )}
      <div className="actions">
        <button type="button" onClick={onCancel}>Cancel</button>
        <button type="submit" className="button-primary" disabled={create.isPending}>{create.isPending ? 'Creating…' : 'Create ticket'}</button>
      </div>
    </form>
  );
}
