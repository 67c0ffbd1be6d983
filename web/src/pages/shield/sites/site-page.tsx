// One site (/shield/sites/:id/…): its domain as the page's heading, and a tab per concern, each at
// its own URL; a site whose traffic Shield does not serve says so under the heading. Analytics and
// Live are another part's components, mounted here.
import { Link, Redirect, Route, Switch } from 'wouter';
import { configSourceOf, ManagedBadge, StatusBadge } from '../../../components/badges.tsx';
import { PageHeader, SubNav } from '../../../components/page.tsx';
import { ErrorMessage, Loading } from '../../../components/status.tsx';
import { IpAccess } from '../rules/ip-access.tsx';
import { RateLimits } from '../rules/rate-limits.tsx';
import { VirtualPatches } from '../rules/virtual-patches.tsx';
import { SiteEdge } from '../edge/edge-tab.tsx';
import { SchemaTab } from '../schema/schema.tsx';
import { sitePath, useSite } from '../shared/api.ts';
import { SiteAnalytics } from '../traffic/analytics.tsx';
import { SiteLive } from '../traffic/live.tsx';
import { SiteSettings } from './settings.tsx';

const TABS = [
  { tab: 'settings', label: 'Settings' },
  { tab: 'tls', label: 'TLS & domain' },
  { tab: 'virtual-patches', label: 'Virtual patches' },
  { tab: 'ip-access', label: 'IP access' },
  { tab: 'rate-limits', label: 'Rate limits' },
  { tab: 'schema', label: 'Schema' },
  { tab: 'analytics', label: 'Analytics' },
  { tab: 'live', label: 'Live' },
] as const;

export function SitePage({ id }: { id: string }) {
  const site = useSite(id);
  if (site.isPending) return <Loading label="Loading the site" />;
  if (site.isError) return <ErrorMessage error={site.error} title="This site could not be loaded" />;
  const source = configSourceOf(site.data.labels);
  return (
    <>
      <PageHeader title={site.data.domain}>
        <p className="muted">
          <Link href="~/shield">All sites</Link> · mode <StatusBadge status={site.data.mode} />
          {source && <> <ManagedBadge by={source} /></>}
          {site.data.status !== 'active' && (
            <> · traffic <StatusBadge status={site.data.status} /> <Link href={`~${sitePath(id, 'tls')}`}>{site.data.status === 'pending' ? 'Verify the domain' : 'Why'}</Link></>
          )}
        </p>
      </PageHeader>
      <SubNav label="Site" items={TABS.map((t) => ({ href: sitePath(id, t.tab), label: t.label }))} />
      <Switch>
        <Route path="/settings"><SiteSettings site={site.data} /></Route>
        <Route path="/tls"><SiteEdge site={site.data} /></Route>
        <Route path="/virtual-patches"><VirtualPatches siteId={id} /></Route>
        <Route path="/ip-access"><IpAccess siteId={id} /></Route>
        <Route path="/rate-limits"><RateLimits siteId={id} /></Route>
        <Route path="/schema"><SchemaTab siteId={id} /></Route>
        <Route path="/analytics"><SiteAnalytics siteId={id} /></Route>
        <Route path="/live"><SiteLive siteId={id} /></Route>
        <Route><Redirect to="/settings" replace /></Route>
      </Switch>
    </>
  );
}
