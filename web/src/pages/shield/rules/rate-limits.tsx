// Rate-limit rules of a site: a request budget per client identity on matching requests, with an
// optional escalation to a temporary deny. Every field can change; the form previews the change's
// impact on recorded traffic before it is saved.
import { api, ok } from '../../../api/client.ts';
import type { BodyOf } from '../../../api/types.ts';
import { ManagedEditWarning, StatusBadge } from '../../../components/badges.tsx';
import { Field, useWrite } from '../../../components/forms.tsx';
import { rulesKey, type RateLimit } from '../shared/api.ts';
import { ErrorMessage } from '../../../components/status.tsx';
import { FormActions, HTTP_METHODS, LabelsField } from '../shared/form-parts.tsx';
import { optionalNumber, text } from '../shared/form-values.ts';
import { operationOf, useImpactPreview, type RuleWrite } from '../shared/impact.ts';
import { ImpactButton, ImpactResult } from '../shared/impact-report.tsx';
import { textToLabels } from '../shared/labels.ts';
import { RuleTab, type Column, type FormProps } from '../shared/rule-tab.tsx';

const ACTIONS = ['block', 'challenge', 'log'] as const satisfies ReadonlyArray<RateLimit['action']>;
const FIELD_LABELS = { identity: 'Counted by', url_pattern: 'URL pattern', method: 'Method', budget: 'Budget', window_seconds: 'Window (seconds)', action: 'Action', escalate_to_deny_minutes: 'Deny for (minutes)', labels: 'Labels' };

const describe = (r: RateLimit) => `${r.method} ${r.url_pattern} per ${r.identity}`;

const columns: ReadonlyArray<Column<RateLimit>> = [
  { header: 'Request', cell: (r) => <code className="shield-cell-code">{r.method} {r.url_pattern}</code> },
  { header: 'Counted by', cell: (r) => <code>{r.identity}</code> },
  { header: 'Budget', cell: (r) => `${r.budget.toLocaleString()} per ${r.window_seconds.toLocaleString()} s` },
  { header: 'Action', cell: (r) => <StatusBadge status={r.action} /> },
  { header: 'Escalation', cell: (r) => (r.escalate_to_deny_minutes > 0 ? `deny for ${r.escalate_to_deny_minutes} min` : 'none') },
];

type RateLimitCreate = BodyOf<'/api/v1/shield/sites/{id}/rate-limits', 'post'>;
type RateLimitUpdate = BodyOf<'/api/v1/shield/sites/{id}/rate-limits/{rule_id}', 'patch'>;

/** What Save sends for the form: the new rule, or `row` with every field as the form has it. The impact preview proposes the same. */
function rateLimitWrite(form: FormData, row: RateLimit | undefined): RuleWrite<RateLimitCreate, RateLimitUpdate> {
  const body = {
    identity: text(form, 'identity'),
    url_pattern: text(form, 'url_pattern'),
    method: text(form, 'method') as RateLimit['method'],
    budget: Number(text(form, 'budget')),
    window_seconds: Number(text(form, 'window_seconds')),
    action: text(form, 'action') as RateLimit['action'],
    escalate_to_deny_minutes: optionalNumber(form, 'escalate_to_deny_minutes'),
    labels: textToLabels(text(form, 'labels')),
  };
  return row ? { op: 'update', id: row.id, body } : { op: 'create', body };
}

function RateLimitForm({ siteId, row, onDone, onCancel }: FormProps<RateLimit> & { siteId: string }) {
  const save = useWrite(
    (form: FormData) => {
      const write = rateLimitWrite(form, row);
      return write.op === 'update'
        ? ok(api.PATCH('/api/v1/shield/sites/{id}/rate-limits/{rule_id}', { params: { path: { id: siteId, rule_id: write.id } }, body: write.body }))
        : ok(api.POST('/api/v1/shield/sites/{id}/rate-limits', { params: { path: { id: siteId } }, body: write.body }));
    },
    [rulesKey(siteId, 'rate-limits')],
    onDone,
  );
  const preview = useImpactPreview(siteId);
  return (
    <form className="shield-form" onChange={() => preview.reset()} onSubmit={(e) => { e.preventDefault(); save.mutate(new FormData(e.currentTarget)); }}>
      {row && <ManagedEditWarning labels={row.labels} />}
      <div className="grid-2">
        <Field label="URL pattern" hint="Starts with /; * matches any run of characters.">
          {(p) => <input {...p} name="url_pattern" required defaultValue={row?.url_pattern ?? ''} placeholder="/login" />}
        </Field>
        <Field label="Method">
          {(p) => (
            <select {...p} name="method" defaultValue={row?.method ?? 'ANY'}>
              {HTTP_METHODS.map((m) => <option key={m} value={m}>{m}</option>)}
            </select>
          )}
        </Field>
        <Field label="Counted by" hint="ip, api_key or header:X-Name.">
          {(p) => <input {...p} name="identity" required defaultValue={row?.identity ?? 'ip'} spellCheck={false} />}
        </Field>
        <Field label="Action" hint="Over budget.">
          {(p) => (
            <select {...p} name="action" defaultValue={row?.action ?? 'block'}>
              {ACTIONS.map((a) => <option key={a} value={a}>{a}</option>)}
            </select>
          )}
        </Field>
        <Field label="Budget" hint="Requests per window.">
          {(p) => <input {...p} name="budget" type="number" required min={1} inputMode="numeric" defaultValue={row?.budget ?? 100} />}
        </Field>
        <Field label="Window (seconds)" hint="1 to 86 400.">
          {(p) => <input {...p} name="window_seconds" type="number" required min={1} max={86400} inputMode="numeric" defaultValue={row?.window_seconds ?? 60} />}
        </Field>
      </div>
      <Field label="Deny for (minutes)" hint="Once over budget, deny the client outright this long; 0 disables escalation.">
        {(p) => <input {...p} name="escalate_to_deny_minutes" type="number" min={0} max={10080} inputMode="numeric" defaultValue={row?.escalate_to_deny_minutes ?? 0} />}
      </Field>
      <LabelsField labels={row?.labels} />
      <ImpactResult preview={preview} fieldLabels={FIELD_LABELS} />
      <ErrorMessage title="Not saved" error={save.error} fieldLabels={FIELD_LABELS} />
      <FormActions
        busy={save.isPending}
        onCancel={onCancel}
        label={row ? 'Save rule' : 'Create rule'}
        extra={<ImpactButton preview={preview} propose={(form) => ({ operations: [operationOf('rate_limit_rule', rateLimitWrite(form, row))] })} />}
      />
    </form>
  );
}

export function RateLimits({ siteId }: { siteId: string }) {
  return (
    <RuleTab<RateLimit>
      siteId={siteId}
      kind="rate-limits"
      title="Rate limits"
      noun="rate limit"
      emptyText="No rate limits on this site."
      intro={<p className="muted">A request budget per client (address, API key or header) on matching requests, over a sliding window.</p>}
      fetchPage={(cursor) => ok(api.GET('/api/v1/shield/sites/{id}/rate-limits', { params: { path: { id: siteId }, query: { cursor } } }))}
      columns={columns}
      describe={describe}
      remove={(r) => ok(api.DELETE('/api/v1/shield/sites/{id}/rate-limits/{rule_id}', { params: { path: { id: siteId, rule_id: r.id } } }))}
      renderForm={(props) => <RateLimitForm key={props.row?.id ?? 'new'} siteId={siteId} {...props} />}
    />
  );
}
