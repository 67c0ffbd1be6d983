// A finding's history (GET /api/v1/vulnerabilities/:id/history), newest first, a page at a time:
// each change with who made it (or Aegis) and each field from → to, and requests such as tickets.
import { api, ok } from '../../api/client.ts';
import { Time } from '../../components/badges.tsx';
import { Pager, usePagedList } from '../../components/list.tsx';
import { Empty, ErrorMessage, Loading } from '../../components/status.tsx';
import { historyKey, type HistoryEntry } from './model.ts';

const ACTIONS: Record<string, string> = {
  'vulnerability.created': 'Found',
  'vulnerability.updated': 'Changed',
  'vulnerability.resolved': 'Resolved',
  'vulnerability.verify_requested': 'Verify-fix requested',
  'vulnerability.ticket_requested': 'Ticket requested',
  'vulnerability.triage_requested': 'AI triage requested',
  'virtual_patch.created': 'Virtual patch deployed',
};

const show = (value: unknown): string => {
  if (value === null || value === undefined || value === '') return '—';
  if (typeof value === 'string') return value.length > 80 ? `${value.slice(0, 79)}…` : value;
  if (typeof value === 'object' && 'status' in value) return String((value as { status: unknown }).status);
  if (typeof value === 'object' && 'id' in value) return String((value as { id: unknown }).id);
  return JSON.stringify(value);
};

function Entry({ entry }: { entry: HistoryEntry }) {
  const who = entry.actor ? (entry.actor.name ?? entry.actor.id) : 'Aegis';
  const project = typeof entry.metadata.project === 'string' ? entry.metadata.project : null;
  return (
    <li className="history-entry">
      <div>
        <strong>{ACTIONS[entry.action ?? entry.type] ?? entry.type}</strong> by {who} · <Time at={entry.at} />
      </div>
      {entry.changes.length > 0 && (
        <ul className="history-changes">
          {entry.changes.map((c) => (
            <li key={c.field}>
              {c.field.replace(/_/g, ' ')}: <span className="muted">{show(c.from)}</span> → {show(c.to)}
            </li>
          ))}
        </ul>
      )}
      {project && <div className="muted">project {project}</div>}
    </li>
  );
}

export function FindingHistory({ id }: { id: string }) {
  const list = usePagedList(historyKey(id), (cursor) => ok(api.GET('/api/v1/vulnerabilities/{id}/history', { params: { path: { id }, query: { cursor, limit: 20 } } })));
  return (
    <section aria-labelledby="history-heading">
      <h2 id="history-heading">History</h2>
      {list.isPending ? (
        <Loading label="Loading history" />
      ) : list.error ? (
        <ErrorMessage error={list.error} title="The history could not be loaded" />
      ) : list.rows.length === 0 ? (
        <Empty>Nothing recorded yet.</Empty>
      ) : (
        <ol className="history" aria-label="History, newest first">
          {list.rows.map((e) => <Entry key={e.id} entry={e} />)}
        </ol>
      )}
      <Pager list={list} label="History pages" />
    </section>
  );
}
