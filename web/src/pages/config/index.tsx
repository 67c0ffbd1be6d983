// The Config-as-code section (admins: the config-repos API needs `admin`): repositories and their
// status (/config), adding one (/config/new), one repository with its sync history
// (/config/repos/<id>) and one sync's plan (/config/repos/<id>/syncs/<syncId>).
import { Route, Switch } from 'wouter';
import { useCan } from '../../api/session.ts';
import { PageHeader } from '../../components/page.tsx';
import { AddRepo } from './repo-form.tsx';
import { RepoDetail } from './repo-detail.tsx';
import { ManagedExplanation, RepoList } from './repo-list.tsx';
import { SyncPlan } from './sync-plan.tsx';
import '../scans/scans.css';
import './config.css';

export default function ConfigAsCode() {
  const isAdmin = useCan('admin');
  if (!isAdmin) return <NotAdmin />;
  return (
    <Switch>
      <Route path="/">{() => <RepoList />}</Route>
      <Route path="/new">{() => <AddRepo />}</Route>
      <Route path="/repos/:id">{(params) => <RepoDetail id={params.id} />}</Route>
      <Route path="/repos/:id/syncs/:syncId">{(params) => <SyncPlan repoId={params.id} syncId={params.syncId} />}</Route>
    </Switch>
  );
}

/** Members and viewers may not read config repositories; they still learn what "managed" means. */
function NotAdmin() {
  return (
    <>
      <PageHeader title="Config as code" />
      <p className="notice">Config repositories are managed by the organisation's owners and admins. Ask one to add or sync a repository.</p>
      <ManagedExplanation />
    </>
  );
}
