// What the impact preview found, as a form shows it under its fields: the headline (requests newly
// blocked, from how many clients), how many of those the origin had answered 2xx, other changes
// when there are any, the top clients and up to three redacted examples per change, and how far
// the counts go. A refusal of the proposal reads like Save's; any other failure stays quiet.
import type { MouseEvent } from 'react';
import { Time } from '../../../components/badges.tsx';
import { ErrorMessage, Loading } from '../../../components/status.tsx';
import { refusesProposal, type Impact, type ImpactChange, type ImpactPreview, type ImpactProposal } from './impact.ts';

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString()} ${n === 1 ? one : many}`;

/** The replayed window in words: "the last 24 h" for the default one. */
function windowText(window: Impact['window']): string {
  const hours = Math.round((Date.parse(window.until) - Date.parse(window.since)) / 3_600_000);
  return `the last ${hours} h`;
}

/**
 * How far the counts go, when they are a lower bound: the coverage of the objects behind the changes
 * (an IP rule's count is exact even though the whole replay, managed rules and all, reads values),
 * or the whole replay's when nothing changed. Null when every request judged kept what it needed.
 */
function partialCoverage(impact: Impact): Impact['totals']['coverage'] | null {
  const coverages = impact.objects.length > 0 ? impact.objects.map((o) => o.coverage) : [impact.totals.coverage];
  return coverages.find((c) => !c.exact && c.with_values < c.records) ?? null;
}

/**
 * The "Preview impact" button: checks the form as Save would (required fields, ranges), then asks
 * for the preview of `propose(form)`. A plain button, so Enter in a field still saves.
 */
export function ImpactButton({ preview, propose, disabled = false }: { preview: ImpactPreview; propose(form: FormData): ImpactProposal; disabled?: boolean }) {
  const run = (event: MouseEvent<HTMLButtonElement>) => {
    const form = event.currentTarget.form;
    if (!form || !form.reportValidity()) return;
    preview.mutate(propose(new FormData(form)));
  };
  return (
    <button type="button" onClick={run} disabled={disabled || preview.isPending}>
      {preview.isPending ? 'Previewing…' : 'Preview impact'}
    </button>
  );
}

/** The preview's state under the form: nothing until asked, then the report or why there is none. */
export function ImpactResult({ preview, fieldLabels = {} }: { preview: ImpactPreview; fieldLabels?: Record<string, string> }) {
  if (preview.isPending) return <div className="shield-impact-quiet"><Loading label="Replaying the recorded traffic" /></div>;
  if (preview.isError) {
    if (refusesProposal(preview.error)) return <ErrorMessage title="Cannot preview this change" error={preview.error} fieldLabels={fieldLabels} />;
    return <p className="shield-impact-quiet muted" role="status">Impact unavailable.</p>;
  }
  if (!preview.data) return null;
  return <ImpactReport impact={preview.data} />;
}

function ImpactReport({ impact }: { impact: Impact }) {
  const { totals } = impact;
  if (impact.covered.recorded_since === null) {
    return (
      <section className="shield-impact" aria-label="Impact preview">
        <p role="status"><strong>No traffic recorded for this site yet</strong>: there is nothing to replay this change against.</p>
      </section>
    );
  }
  const blocked = totals.newly_blocked;
  const answered2xx = blocked.origin_statuses.classes['2xx'] ?? 0;
  const coverage = partialCoverage(impact);
  const partial = impact.covered.since !== null && Date.parse(impact.covered.since) > Date.parse(impact.window.since);
  const changes = (
    [
      ['Newly blocked', blocked],
      ['Newly challenged', totals.newly_challenged],
      ['Newly allowed', totals.newly_allowed],
    ] as const
  ).filter(([, change]) => change.requests > 0);
  return (
    <section className="shield-impact" aria-label="Impact preview">
      <p role="status">
        <strong>Would have newly blocked {plural(blocked.requests, 'request')} from {plural(blocked.clients, 'client')}</strong> in {windowText(impact.window)}.
      </p>
      {blocked.requests > 0 && <p>{answered2xx.toLocaleString()} of them {answered2xx === 1 ? 'was' : 'were'} answered 2xx by the origin.</p>}
      {blocked.warning && <p className="notice">{blocked.warning}.</p>}
      {totals.newly_challenged.requests > 0 && <p>Would have newly challenged {plural(totals.newly_challenged.requests, 'request')} from {plural(totals.newly_challenged.clients, 'client')}.</p>}
      {totals.newly_allowed.requests > 0 && <p>Would have newly allowed {plural(totals.newly_allowed.requests, 'request')} from {plural(totals.newly_allowed.clients, 'client')}.</p>}
      {totals.softened > 0 && <p>{plural(totals.softened, 'blocked request')} would be challenged instead.</p>}
      {partial && impact.covered.since && <p className="muted">Traffic is recorded only since <Time at={impact.covered.since} />: the counts cover that part of the window.</p>}
      {coverage && (
        <p className="muted">
          {coverage.note ?? `A lower bound: only the ${coverage.with_values.toLocaleString()} of ${coverage.records.toLocaleString()} recorded requests that kept their values could be judged.`}
        </p>
      )}
      {impact.warnings.map((warning) => <p key={warning} className="notice">{warning}</p>)}
      {changes.map(([label, change]) => <ChangeDetails key={label} label={label} change={change} />)}
    </section>
  );
}

/** One kind of change: its top clients and a few redacted examples. */
function ChangeDetails({ label, change }: { label: string; change: ImpactChange }) {
  return (
    <div className="shield-impact-change">
      <h3>{label}: top clients</h3>
      <ul aria-label={`${label}: top clients`}>
        {change.top_clients.map((client) => (
          <li key={client.value}><code>{client.value}</code> — {plural(client.requests, 'request')}</li>
        ))}
      </ul>
      {change.examples.length > 0 && (
        <>
          <h3>{label}: examples</h3>
          <ul aria-label={`${label}: examples`} className="shield-impact-examples">
            {change.examples.slice(0, 3).map((example, i) => (
              <li key={i}>
                <code>{example.method} {example.path}{example.query ? `?${example.query}` : ''}</code> — answered {example.status}, from {example.network}, <Time at={example.at} />
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
