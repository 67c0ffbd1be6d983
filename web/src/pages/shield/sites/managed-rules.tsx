// Managed rules of a site: on or off, the paranoia level, and the catalogue (GET
// /api/v1/shield/managed-rules, one list for every organisation, not paged by the API) with each
// rule's state on this site. A rule is switched off for the whole site by a site-wide exclusion
// (one without url_pattern or parameter), which is what the per-rule toggle writes. The on/off and
// level form previews its impact on recorded traffic before it is saved.
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ok } from '../../../api/client.ts';
import type { Item } from '../../../api/types.ts';
import { useCan } from '../../../api/session.ts';
import { Field, useWrite } from '../../../components/forms.tsx';
import { ErrorMessage, Loading } from '../../../components/status.tsx';
import { siteKey, sitesKey, type Site, type SiteUpdate } from '../shared/api.ts';
import { useImpactPreview } from '../shared/impact.ts';
import { ImpactButton, ImpactResult } from '../shared/impact-report.tsx';

type ManagedRule = Item<'/api/v1/shield/managed-rules'>;
type Settings = Site['managed_rules'];
type Exclusion = Settings['exclusions'][number];

const siteWide = (e: Exclusion) => e.url_pattern === undefined && e.parameter === undefined;

function stateOf(rule: ManagedRule, settings: Settings): { on: boolean; why: string } {
  if (!settings.enabled) return { on: false, why: 'managed rules are off' };
  if (rule.paranoia_level > settings.paranoia_level) return { on: false, why: `needs paranoia level ${rule.paranoia_level}` };
  const wide = settings.exclusions.filter(siteWide);
  if (wide.some((e) => e.rules.includes(rule.id))) return { on: false, why: 'turned off for this site' };
  if (wide.some((e) => e.rules.includes(rule.category))) return { on: false, why: `category ${rule.category} turned off` };
  const partly = settings.exclusions.some((e) => !siteWide(e) && (e.rules.includes(rule.id) || e.rules.includes(rule.category)));
  return { on: true, why: partly ? 'excluded on some paths or parameters' : '' };
}

/** What the on/off and level form saves (and the impact preview proposes). */
function settingsFrom(form: FormData): NonNullable<SiteUpdate['managed_rules']> {
  return { enabled: form.get('enabled') === 'on', paranoia_level: Number(form.get('paranoia_level')) };
}

/** The exclusions with `ruleId` switched off site-wide, or back on. */
function toggled(exclusions: Settings['exclusions'], ruleId: string, off: boolean): Settings['exclusions'] {
  if (off) return [...exclusions, { rules: [ruleId] }];
  return exclusions.flatMap((e) => {
    if (!siteWide(e) || !e.rules.includes(ruleId)) return [e];
    const rules = e.rules.filter((r) => r !== ruleId);
    return rules.length > 0 ? [{ ...e, rules }] : [];
  });
}

export function ManagedRules({ site }: { site: Site }) {
  const canWrite = useCan('shield:write');
  const settings = site.managed_rules;
  const catalogue = useQuery({ queryKey: ['shield', 'managed-rules'], queryFn: () => ok(api.GET('/api/v1/shield/managed-rules')), staleTime: Infinity });
  const [category, setCategory] = useState('');
  const preview = useImpactPreview(site.id);
  const save = useWrite(
    (managed_rules: NonNullable<SiteUpdate['managed_rules']>) => ok(api.PATCH('/api/v1/shield/sites/{id}', { params: { path: { id: site.id } }, body: { managed_rules } })),
    [sitesKey, siteKey(site.id)],
    // Saved: the preview described the change that is now live.
    () => preview.reset(),
  );
  const rules = (catalogue.data?.data ?? []).filter((r) => category === '' || r.category === category);

  return (
    <section aria-labelledby="managed-title">
      <h2 id="managed-title">Managed rules</h2>
      <p className="muted">Generic detection of SQL injection, XSS, path traversal, command injection, SSRF and protocol anomalies, honouring the site's mode.</p>
      {canWrite ? (
        <form
          className="shield-mode"
          onChange={() => preview.reset()}
          onSubmit={(e) => {
            e.preventDefault();
            save.mutate(settingsFrom(new FormData(e.currentTarget)));
          }}
          key={`${settings.enabled}-${settings.paranoia_level}`}
        >
          <div className="field">
            <label>
              <input type="checkbox" name="enabled" defaultChecked={settings.enabled} /> Managed rules on
            </label>
          </div>
          <Field label="Paranoia level" hint="1 blocks unambiguous attacks; each level catches more and misfires more.">
            {(p) => (
              <select {...p} name="paranoia_level" defaultValue={settings.paranoia_level}>
                {[1, 2, 3, 4].map((n) => <option key={n} value={n}>{n}</option>)}
              </select>
            )}
          </Field>
          <button type="submit" disabled={save.isPending}>Save managed rules</button>
          <ImpactButton preview={preview} propose={(form) => ({ site: { managed_rules: settingsFrom(form) } })} />
          <ImpactResult preview={preview} fieldLabels={{ managed_rules: 'Managed rules' }} />
        </form>
      ) : (
        <p>
          {settings.enabled ? <>On, at paranoia level <strong>{settings.paranoia_level}</strong></> : <strong>Off</strong>}; {settings.exclusions.length} exclusion{settings.exclusions.length === 1 ? '' : 's'}.
        </p>
      )}
      <ErrorMessage title="Not saved" error={save.error} fieldLabels={{ managed_rules: 'Managed rules' }} />
      <details className="shield-catalogue">
        <summary>Catalogue{catalogue.data ? ` (${catalogue.data.data.length} rules)` : ''}</summary>
        {catalogue.isPending ? (
          <Loading label="Loading the managed rules" />
        ) : catalogue.isError ? (
          <ErrorMessage error={catalogue.error} />
        ) : (
          <>
            <div className="filters">
              <Field label="Category">
                {(p) => (
                  <select {...p} value={category} onChange={(e) => setCategory(e.currentTarget.value)}>
                    <option value="">All categories</option>
                    {catalogue.data.categories.map((c) => <option key={c} value={c}>{c}</option>)}
                  </select>
                )}
              </Field>
            </div>
            <div className="table-wrap">
              <table>
                <caption className="visually-hidden">Managed rules</caption>
                <thead>
                  <tr>
                    <th scope="col">Rule</th>
                    <th scope="col">Level</th>
                    <th scope="col">Description</th>
                    <th scope="col">On this site</th>
                  </tr>
                </thead>
                <tbody>
                  {rules.map((rule) => {
                    const state = stateOf(rule, settings);
                    const offHere = settings.exclusions.some((e) => siteWide(e) && e.rules.includes(rule.id));
                    return (
                      <tr key={rule.id}>
                        <td><code>{rule.id}</code></td>
                        <td className="num">{rule.paranoia_level}</td>
                        <td>{rule.description}</td>
                        <td>
                          {state.on ? 'On' : 'Off'}
                          {state.why && <span className="muted"> ({state.why})</span>}
                          {canWrite && (state.on || offHere) && (
                            <>
                              {' '}
                              <button type="button" className="button-quiet" disabled={save.isPending} onClick={() => save.mutate({ exclusions: toggled(settings.exclusions, rule.id, !offHere) })}>
                                {offHere ? 'Turn on' : 'Turn off'}<span className="visually-hidden"> {rule.id}</span>
                              </button>
                            </>
                          )}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          </>
        )}
      </details>
    </section>
  );
}
