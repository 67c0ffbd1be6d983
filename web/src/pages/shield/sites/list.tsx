// The Shield section's first page: the organisation's sites, a page at a time, and for writers a
// New site dialog that opens the created site.
import { useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api, ok } from '../../../api/client.ts';
import { useCan } from '../../../api/session.ts';
import { configSourceOf, ManagedBadge, StatusBadge, Time } from '../../../components/badges.tsx';
import { Modal } from '../../../components/dialog.tsx';
import { Field } from '../../../components/forms.tsx';
import { Pager, usePagedList } from '../../../components/list.tsx';
import { PageHeader } from '../../../components/page.tsx';
import { Empty, ErrorMessage, Loading } from '../../../components/status.tsx';
import { sitesKey, type SiteMode } from '../shared/api.ts';
import { MODES } from './modes.ts';
import { SiteForm } from './site-form.tsx';

export function SiteList() {
  const canWrite = useCan('shield:write');
  const [, navigate] = useLocation();
  const [creating, setCreating] = useState(false);
  const [mode, setMode] = useState<SiteMode | ''>('');
  const list = usePagedList([...sitesKey, { mode }], (cursor) => ok(api.GET('/api/v1/shield/sites', { params: { query: { cursor, mode: mode || undefined } } })));
  return (
    <>
      <PageHeader
        title="Shield"
        actions={canWrite && <button type="button" className="button-primary" onClick={() => setCreating(true)}>New site</button>}
      >
        <p className="muted">Sites Shield protects: the rules in front of each, their mode, their traffic.</p>
      </PageHeader>
      <div className="filters">
        <Field label="Mode">
          {(p) => (
            <select {...p} value={mode} onChange={(e) => setMode(e.currentTarget.value as SiteMode | '')}>
              <option value="">Any mode</option>
              {MODES.map((m) => <option key={m.value} value={m.value}>{m.label}</option>)}
            </select>
          )}
        </Field>
      </div>
      {list.isPending ? (
        <Loading label="Loading sites" />
      ) : list.error ? (
        <ErrorMessage error={list.error} />
      ) : list.rows.length === 0 ? (
        <Empty>{mode ? 'No site is in this mode.' : canWrite ? 'No sites yet: add one with New site.' : 'No sites yet.'}</Empty>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Shield sites</caption>
            <thead>
              <tr>
                <th scope="col">Domain</th>
                <th scope="col">Mode</th>
                <th scope="col">Origin</th>
                <th scope="col">Managed rules</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {list.rows.map((site) => {
                const source = configSourceOf(site.labels);
                return (
                  <tr key={site.id}>
                    <td>
                      <Link href={`/sites/${encodeURIComponent(site.id)}/settings`}>{site.domain}</Link>
                      {source && <> <ManagedBadge by={source} /></>}
                    </td>
                    <td><StatusBadge status={site.mode} /></td>
                    <td><code className="shield-cell-code">{site.origin_url}</code></td>
                    <td>{site.managed_rules.enabled ? `on, level ${site.managed_rules.paranoia_level}` : 'off'}</td>
                    <td><Time at={site.created_at} /></td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <Pager list={list} label="Site pages" />
      <Modal open={creating} title="New site" onClose={() => setCreating(false)}>
        <SiteForm
          onDone={(site) => {
            setCreating(false);
            navigate(`/sites/${encodeURIComponent(site.id)}/settings`);
          }}
          onCancel={() => setCreating(false)}
        />
      </Modal>
    </>
  );
}
