// Create a webhook (POST /api/v1/webhooks): the endpoint URL, what it is for, and the events it
// receives — picked from the API's catalogue (GET /api/v1/webhooks/event-types) with what each
// means, or a whole family (`scan.*`, `*`). The answer carries the signing secret, once.
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, ok } from '../../api/client.ts';
import type { Answer, BodyOf } from '../../api/types.ts';
import { Field, useWrite } from '../../components/forms.tsx';
import { ErrorMessage, Loading } from '../../components/status.tsx';

export const WEBHOOKS_KEY = ['webhooks'] as const;
export type WebhookCreated = Answer<'/api/v1/webhooks', 'post'>;
type WebhookBody = BodyOf<'/api/v1/webhooks', 'post'>;
type EventName = WebhookBody['events'][number];

export function useEventTypes() {
  return useQuery({ queryKey: ['webhook-event-types'], queryFn: () => ok(api.GET('/api/v1/webhooks/event-types')), staleTime: Infinity });
}

export function WebhookForm({ onCreated }: { onCreated(created: WebhookCreated): void }) {
  const catalogue = useEventTypes();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<EventName[]>([]);
  const create = useWrite((body: WebhookBody) => ok(api.POST('/api/v1/webhooks', { body })), [WEBHOOKS_KEY], onCreated);
  const toggle = (name: EventName, on: boolean) => setEvents(on ? [...events, name] : events.filter((e) => e !== name));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate({ url: url.trim(), description, events });
  };
  return (
    <form onSubmit={submit} aria-label="New webhook">
      <Field label="Endpoint URL" hint="Deliveries are POSTed here, signed with X-Service-Signature. https:// is expected.">
        {(p) => <input {...p} type="url" required value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://example.com/aegis-events" />}
      </Field>
      <Field label="Description">{(p) => <input {...p} value={description} maxLength={500} onChange={(e) => setDescription(e.target.value)} />}</Field>
      <fieldset className="webhook-events">
        <legend>Events</legend>
        {catalogue.isPending && <Loading label="Loading the event catalogue" />}
        {catalogue.isError && <ErrorMessage error={catalogue.error} />}
        {catalogue.data && (
          <>
            <p className="muted">Families</p>
            <ul>
              {catalogue.data.patterns.map((pattern) => (
                <li key={pattern}>
                  <label><input type="checkbox" checked={events.includes(pattern)} onChange={(e) => toggle(pattern, e.target.checked)} /> <code>{pattern}</code>{pattern === '*' ? ' (every event)' : ''}</label>
                </li>
              ))}
            </ul>
            <p className="muted">Event types</p>
            <ul>
              {catalogue.data.types.map((t) => (
                <li key={t.type}>
                  <label><input type="checkbox" checked={events.includes(t.type)} onChange={(e) => toggle(t.type, e.target.checked)} /> <code>{t.type}</code></label>
                  <small className="muted"> — {t.description}</small>
                </li>
              ))}
            </ul>
          </>
        )}
      </fieldset>
      {create.isError && <ErrorMessage error={create.error} title="The webhook was not created" />}
      <button type="submit" className="button-primary" disabled={create.isPending || events.length === 0}>{create.isPending ? 'Creating…' : 'Create webhook'}</button>
    </form>
  );
}
