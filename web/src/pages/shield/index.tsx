// The Shield section: the list of sites, and each site's pages under /shield/sites/:id/….
import { Route, Switch } from 'wouter';
import { ErrorMessage } from '../../components/status.tsx';
import { SiteList } from './sites/list.tsx';
import { SitePage } from './sites/site-page.tsx';
import './shield.css';

export default function Shield() {
  return (
    <div className="shield-section">
      <Switch>
        <Route path="/sites/:id" nest>
          {(params) => <SitePage key={params.id} id={params.id} />}
        </Route>
        <Route path="/" component={SiteList} />
        <Route>
          <ErrorMessage error={new Error('There is no such Shield page.')} title="Not found" />
        </Route>
      </Switch>
    </div>
  );
}
