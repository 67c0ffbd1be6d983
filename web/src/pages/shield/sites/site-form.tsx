// Creating a site (domain, origin, mode, path case, labels) and editing one (everything but the
// domain, which is the site's identity). The mode is set here on create only: on an existing site
// it changes through ModeControl, which asks before weakening.
import { api, ok } from '../../../api/client.ts';
import { ManagedEditWarning } from '../../../components/badges.tsx';
import { Field, useWrite } from '../../../components/forms.tsx';
import { siteKey, sitesKey, type Site } from '../shared/api.ts';
import { ErrorMessage } from '../../../components/status.tsx';
import { Facts } from '../../../components/facts.tsx';
import { FormActions, LabelsField } from '../shared/form-parts.tsx';
import { text } from '../shared/form-values.ts';
import { textToLabels } from '../shared/labels.ts';
import { MODES } from './modes.ts';

const FIELD_LABELS = { domain: 'Domain', origin_url: 'Origin URL', mode: 'Mode', path_case: 'Path matching', labels: 'Labels', managed_rules: 'Managed rules' };

export function SiteForm({ site, onDone, onCancel }: { site?: Site; onDone(site: Site): void; onCancel(): void }) {
  const save = useWrite(
    (form: FormData) => {
      const common = {
        origin_url: text(form, 'origin_url'),
        path_case: text(form, 'path_case') as Site['path_case'],
        labels: textToLabels(text(form, 'labels')),
      };
      return site
        ? ok(api.PATCH('/api/v1/shield/sites/{id}', { params: { path: { id: site.id } }, body: common }))
        : ok(api.POST('/api/v1/shield/sites', { body: { domain: text(form, 'domain').toLowerCase(), mode: text(form, 'mode') as Site['mode'], ...common } }));
    },
    site ? [sitesKey, siteKey(site.id)] : [sitesKey],
    onDone,
  );
  return (
    <form className="shield-form" onSubmit={(e) => { e.preventDefault(); save.mutate(new FormData(e.currentTarget)); }}>
      {site ? (
        <>
          <ManagedEditWarning labels={site.labels} />
          <Facts layout="grid" items={[['Domain', site.domain]]} />
        </>
      ) : (
        <Field label="Domain" hint="Lower case, e.g. shop.example.com. It cannot change later.">
          {(p) => <input {...p} name="domain" required autoComplete="off" spellCheck={false} placeholder="shop.example.com" />}
        </Field>
      )}
      <Field label="Origin URL" hint="Where Shield forwards allowed traffic: http:// or https://.">
        {(p) => <input {...p} name="origin_url" type="url" required defaultValue={site?.origin_url ?? ''} spellCheck={false} placeholder="https://origin.example.net" />}
      </Field>
      <div className="grid-2">
        {!site && (
          <Field label="Mode" hint="Start with log to see what rules would do.">
            {(p) => (
              <select {...p} name="mode" defaultValue="log">
                {MODES.map((m) => <option key={m.value} value={m.value}>{m.label}</option>)}
              </select>
            )}
          </Field>
        )}
        <Field label="Path matching" hint="How rule URL patterns compare with paths.">
          {(p) => (
            <select {...p} name="path_case" defaultValue={site?.path_case ?? 'insensitive'}>
              <option value="insensitive">Ignore case</option>
              <option value="sensitive">Exact case</option>
            </select>
          )}
        </Field>
      </div>
      <LabelsField labels={site?.labels} />
      <ErrorMessage title="Not saved" error={save.error} fieldLabels={FIELD_LABELS} />
      <FormActions busy={save.isPending} onCancel={onCancel} label={site ? 'Save site' : 'Create site'} />
    </form>
  );
}
