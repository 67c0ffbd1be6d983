// Settings, Plan: the organisation's plan and what each plan unlocks (the gates in api/accounts/keys and
// api/accounts/sso: admin API keys need pro, SSO needs enterprise). Aegis has no checkout route: plans follow
// the Stripe subscription (docs/billing.md) or are set by the operator, so this page says how.
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../../api/client.ts';
import type { Answer } from '../../api/types.ts';
import { Time } from '../../components/badges.tsx';
import { ErrorMessage, Loading } from '../../components/status.tsx';
import './api-keys.css';

type Plan = Answer<'/api/v1/orgs/current'>['plan'];

const PLANS: readonly Plan[] = ['trial', 'pro', 'enterprise'];

/** Features and the plans they come with; everything not listed is on every plan. */
const FEATURES: ReadonlyArray<{ feature: string; plans: readonly Plan[] }> = [
  { feature: 'Scans, findings, Shield, config as code, webhooks, integrations', plans: ['trial', 'pro', 'enterprise'] },
  { feature: 'API keys with read and write scopes', plans: ['trial', 'pro', 'enterprise'] },
  { feature: 'API keys with the admin scope', plans: ['pro', 'enterprise'] },
  { feature: 'Single sign-on (OIDC or SAML) and enforcing it', plans: ['enterprise'] },
];

export default function PlanPage() {
  const org = useQuery({ queryKey: ['orgs', 'current'], queryFn: () => ok(api.GET('/api/v1/orgs/current')) });
  return (
    <section aria-labelledby="plan-heading">
      <h2 id="plan-heading">Plan</h2>
      {org.isPending ? (
        <Loading label="Loading the plan" />
      ) : org.error ? (
        <ErrorMessage error={org.error} title="The plan could not be loaded" />
      ) : (
        <>
          <div className="cards">
            <div className="card">
              <h3>Current plan</h3>
              <p className="stat" data-testid="current-plan">{org.data.plan}</p>
            </div>
          </div>
          <p className="muted">
            {org.data.name} (<code>{org.data.slug}</code>), created <Time at={org.data.created_at} />.
          </p>
          <h3>What each plan unlocks</h3>
          <div className="table-wrap" tabIndex={0} role="region" aria-label="Features by plan">
            <table>
              <caption className="visually-hidden">Features by plan</caption>
              <thead>
                <tr>
                  <th scope="col">Feature</th>
                  {PLANS.map((plan) => (
                    <th scope="col" key={plan}>{plan}{plan === org.data.plan ? ' (yours)' : ''}</th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {FEATURES.map(({ feature, plans }) => (
                  <tr key={feature}>
                    <th scope="row">{feature}</th>
                    {PLANS.map((plan) => <td key={plan}>{plans.includes(plan) ? 'Included' : '—'}</td>)}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <h3>Changing plan</h3>
          {org.data.plan === 'enterprise' ? (
            <p>This organisation is on the highest plan.</p>
          ) : (
            <p>Aegis has no checkout of its own. To upgrade:</p>
          )}
          <ul>
            <li>
              <strong>Hosted with Stripe billing:</strong> subscribe (or change your subscription's price) with the plan as the
              price's lookup key and <code>aegis_organization_id</code> = <code>{org.data.id}</code> in the subscription's
              metadata. The plan changes as soon as Stripe tells Aegis.
            </li>
            <li>
              <strong>Self-hosted:</strong> the operator runs <code>aegis orgs set-plan --org {org.data.slug} --plan pro</code>{' '}
              (or <code>enterprise</code>).
            </li>
          </ul>
          <p className="muted">A plan change takes effect at once and is recorded in the audit log.</p>
        </>
      )}
    </section>
  );
}
