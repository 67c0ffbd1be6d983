// The dashboard's frame: who is signed in decides between the sign-in page and the app; the app
// is a navigation, a header and the page of the current section. Sections load on first visit
// (their code is split: sections.ts), so the first load carries only the frame and the overview.
import { Suspense, lazy, useEffect, useState } from 'react';
import { Redirect, Route, Switch, useLocation } from 'wouter';
import { useMe } from '../api/session.ts';
import { ErrorMessage, Loading } from '../components/status.tsx';
import { Layout } from './Layout.tsx';
import { ConfigAsCode, Findings, Scans, Settings, Shield, preloadSectionOf } from './sections.ts';
// The landing page is in the first bundle: a lazily loaded first page would wait for its chunk
// and for React's reveal throttle (300 ms) before it could even ask for its data.
import Overview from '../pages/overview/index.tsx';

const SignIn = lazy(() => import('../pages/sign-in/index.tsx'));
const AcceptInvite = lazy(() => import('../pages/sign-in/accept-invite.tsx'));

/** Whether the code of the section the page opened on has arrived (fetched alongside the session probe, GET /auth/session). */
function useFirstSectionLoaded(): boolean {
  const [loaded, setLoaded] = useState(false);
  useEffect(() => {
    void preloadSectionOf(window.location.pathname).then(() => setLoaded(true));
  }, []);
  return loaded;
}

export function App() {
  const me = useMe();
  const [location] = useLocation();
  const firstSectionLoaded = useFirstSectionLoaded();
  if (me.isPending || (me.data && !firstSectionLoaded)) return <Loading label="Loading Aegis" />;
  if (me.isError) return <ErrorMessage error={me.error} />;
  if (!me.data) {
    return (
      <Suspense fallback={<Loading />}>
        <Switch>
          <Route path="/sign-in" nest component={SignIn} />
          <Route>
            <Redirect to={`/sign-in?return_to=${encodeURIComponent(location)}`} />
          </Route>
        </Switch>
      </Suspense>
    );
  }
  return (
    <Layout me={me.data}>
      <Suspense fallback={<Loading />}>
        <Switch>
          <Route path="/" component={Overview} />
          <Route path="/findings" nest component={Findings} />
          <Route path="/scans" nest component={Scans} />
          <Route path="/shield" nest component={Shield} />
          <Route path="/config" nest component={ConfigAsCode} />
          <Route path="/settings" nest component={Settings} />
          {/* An invite link followed by someone already signed in: accept it into this account. */}
          <Route path="/sign-in/invite" component={AcceptInvite} />
          <Route path="/sign-in" nest>
            <Redirect to="~/" />
          </Route>
          <Route>
            <ErrorMessage error={new Error('There is no such page.')} title="Not found" />
          </Route>
        </Switch>
      </Suspense>
    </Layout>
  );
}
