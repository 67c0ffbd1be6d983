// The Settings tab of a site: its facts, mode, edit and delete, and its managed rules.
import { useState } from 'react';
import { useLocation } from 'wouter';
import { api, ok } from '../../../api/client.ts';
import { useCan } from '../../../api/session.ts';
import { Time } from '../../../components/badges.tsx';
import { ConfirmDialog, Modal } from '../../../components/dialog.tsx';
import { useWrite } from '../../../components/forms.tsx';
import { ErrorMessage } from '../../../components/status.tsx';
import { sitesKey, type Site } from '../shared/api.ts';
import { Facts } from '../../../components/facts.tsx';
import { labelsToText } from '../shared/labels.ts';
import { ManagedRules } from './managed-rules.tsx';
import { ModeControl } from './mode.tsx';
import { SiteForm } from './site-form.tsx';

export function SiteSettings({ site }: { site: Site }) {
  const canWrite = useCan('shield:write');
  const [, navigate] = useLocation();
  const [editing, setEditing] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const remove = useWrite(() => ok(api.DELETE('/api/v1/shield/sites/{id}', { params: { path: { id: site.id } } })), [sitesKey], () => navigate('~/shield'));
  return (
    <>
      <section aria-labelledby="site-settings-title">
        <div className="shield-section-head">
          <h2 id="site-settings-title">Settings</h2>
          {canWrite && (
            <div className="actions">
              <button type="button" onClick={() => setEditing(true)}>Edit site</button>
              <button type="button" className="button-danger" onClick={() => setDeleting(true)}>Delete site</button>
            </div>
          )}
        </div>
        <Facts
          layout="grid"
          items={[
            ['Origin', <code key="o" className="shield-cell-code">{site.origin_url}</code>],
            ['Path matching', site.path_case === 'insensitive' ? 'ignores case' : 'exact case'],
            ['Labels', Object.keys(site.labels).length > 0 ? <code key="l" className="shield-cell-code">{labelsToText(site.labels).split('\n').join(', ')}</code> : 'none'],
            ['Created', <Time key="c" at={site.created_at} />],
            ['Updated', <Time key="u" at={site.updated_at} />],
          ]}
        />
        <ModeControl site={site} />
        {remove.error && <ErrorMessage error={remove.error} title="The site was not deleted" />}
      </section>
      <ManagedRules site={site} />
      <Modal open={editing} title={`Edit ${site.domain}`} onClose={() => setEditing(false)}>
        <SiteForm site={site} onDone={() => setEditing(false)} onCancel={() => setEditing(false)} />
      </Modal>
      <ConfirmDialog open={deleting} title={`Delete ${site.domain}?`} confirmLabel="Delete site" danger busy={remove.isPending} onConfirm={() => remove.mutate(undefined)} onCancel={() => setDeleting(false)}>
        <p>The site, all its rules and its schema are deleted, and Shield stops protecting {site.domain}. This cannot be undone.</p>
      </ConfirmDialog>
    </>
  );
}
