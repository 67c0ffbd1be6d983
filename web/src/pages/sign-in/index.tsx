// Sign-in (shown to anyone not signed in): an e-mail link, Google, SSO by work e-mail or
// organisation; and /sign-in/invite?token=… to accept an invite. Wherever the person was going
// (`?return_to=`, a path of this dashboard only) is where the e-mail link brings them back.
import { Route, Switch, useSearch } from 'wouter';
import { PageHeader } from '../../components/page.tsx';
import AcceptInvite from './accept-invite.tsx';
import { GoogleButton } from './google-button.tsx';
import { MagicLinkForm } from './magic-link-form.tsx';
import { returnToFrom } from './return-to.ts';
import { SsoForm } from './sso-form.tsx';
import './sign-in.css';

function SignInPage() {
  const returnTo = returnToFrom(useSearch());
  return (
    <div className="sign-in">
      <PageHeader title="Sign in to Aegis" />
      <section aria-labelledby="sign-in-email">
        <h2 id="sign-in-email">With an e-mail link</h2>
        <MagicLinkForm returnTo={returnTo} />
      </section>
      <section aria-labelledby="sign-in-google">
        <h2 id="sign-in-google">With Google</h2>
        <GoogleButton returnTo={returnTo} />
      </section>
      <section aria-labelledby="sign-in-sso">
        <h2 id="sign-in-sso">With single sign-on</h2>
        <SsoForm returnTo={returnTo} />
      </section>
      <p className="muted">Invited? Open the link in your invite mail to join the organisation.</p>
    </div>
  );
}

export default function SignIn() {
  return (
    <Switch>
      <Route path="/invite" component={AcceptInvite} />
      <Route component={SignInPage} />
    </Switch>
  );
}
