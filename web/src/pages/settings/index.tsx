// Settings: one sub-page per concern, each at its own URL under /settings.
import { Suspense, lazy } from 'react';
import { Redirect, Route, Switch } from 'wouter';
import { PageHeader, SubNav } from '../../components/page.tsx';
import { Loading } from '../../components/status.tsx';

const ApiKeys = lazy(() => import('./api-keys.tsx'));
const Sessions = lazy(() => import('./sessions.tsx'));
const AuditLog = lazy(() => import('./audit-log.tsx'));
const Members = lazy(() => import('./members.tsx'));
const Sso = lazy(() => import('./sso.tsx'));
const Integrations = lazy(() => import('./integrations.tsx'));
const Webhooks = lazy(() => import('./webhooks.tsx'));
const Plan = lazy(() => import('./plan.tsx'));

const PAGES = [
  { href: '/settings/api-keys', label: 'API keys' },
  { href: '/settings/sessions', label: 'Sessions' },
  { href: '/settings/audit-log', label: 'Audit log' },
  { href: '/settings/members', label: 'Members' },
  { href: '/settings/sso', label: 'SSO' },
  { href: '/settings/integrations', label: 'Integrations' },
  { href: '/settings/webhooks', label: 'Webhooks' },
  { href: '/settings/plan', label: 'Plan' },
] as const;

export default function Settings() {
  return (
    <>
      <PageHeader title="Settings" />
      <SubNav label="Settings" items={PAGES} />
      <Suspense fallback={<Loading />}>
        <Switch>
          <Route path="/api-keys" nest component={ApiKeys} />
          <Route path="/sessions" nest component={Sessions} />
          <Route path="/audit-log" nest component={AuditLog} />
          <Route path="/members" nest component={Members} />
          <Route path="/sso" nest component={Sso} />
          <Route path="/integrations" nest component={Integrations} />
          <Route path="/webhooks" nest component={Webhooks} />
          <Route path="/plan" nest component={Plan} />
          <Route>
            <Redirect to="/api-keys" />
          </Route>
        </Switch>
      </Suspense>
    </>
  );
}
