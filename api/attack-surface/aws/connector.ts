// AWS discovery through a role the customer created for Aegis: one AssumeRole (with the
// connection's external id) per run, then every scope — ELBv2, API Gateway and EC2 per region,
// CloudFront and Route 53 globally — listed with the SDK's paginators, four scopes at a time. A
// scope the role may not read is a ScopeResult error, not a failed run.
import type { AwsSettings } from '../providers/settings.ts';
import type { CloudAccount, CloudConnector, DiscoveredAsset, ScopeResult } from '../providers/types.ts';
import { listApiGateways } from './api-gateway.ts';
import type { ScopeContext } from './clients.ts';
import { listDistributions } from './cloudfront.ts';
import { mapLimit } from './concurrency.ts';
import { assumeRole, callerIdentity } from './credentials.ts';
import { listEc2 } from './ec2.ts';
import { listLoadBalancers } from './elb.ts';
import { awsErrorMessage, awsErrorName, isAbort, isAccessDenied } from './errors.ts';
import { permissionsPolicy, trustPolicy } from './policy.ts';
import { listDnsRecords } from './route53.ts';

/** Scopes listed at once. */
export const SCOPE_CONCURRENCY = 4;

interface Scope {
  name: string;
  list(ctx: ScopeContext): Promise<DiscoveredAsset[]>;
}

/** Every scope of an account: the regional services per region, then the global ones. */
export function awsScopes(regions: readonly string[]): Scope[] {
  const scopes: Scope[] = [];
  for (const region of [...new Set(regions)]) {
    scopes.push(
      { name: `elbv2:${region}`, list: (ctx) => listLoadBalancers(ctx, region) },
      { name: `apigateway:${region}`, list: (ctx) => listApiGateways(ctx, region) },
      { name: `ec2:${region}`, list: (ctx) => listEc2(ctx, region) },
    );
  }
  scopes.push({ name: 'cloudfront', list: listDistributions }, { name: 'route53', list: listDnsRecords });
  return scopes;
}

async function runScope(scope: Scope, ctx: ScopeContext): Promise<ScopeResult> {
  try {
    return { scope: scope.name, assets: await scope.list(ctx) };
  } catch (error) {
    // An abort ends the whole run; it is not one scope's outcome.
    if (isAbort(error, ctx.signal)) throw ctx.signal?.reason ?? error;
    const message = awsErrorMessage(error);
    return { scope: scope.name, error: { code: isAccessDenied(error) ? 'access_denied' : awsErrorName(error), message } };
  }
}

export function createAwsConnector(settings: AwsSettings): CloudConnector {
  return {
    name: 'aws',

    setup(externalId) {
      const principal = settings.principalArn ?? null;
      return { principal, trustPolicy: trustPolicy(principal, externalId), permissionsPolicy: permissionsPolicy() };
    },

    async verify(account, signal) {
      const role = await assumeRole(settings, account, signal);
      return callerIdentity(settings, role.credentials, signal);
    },

    async discover(account: CloudAccount, options) {
      const { signal, onScope } = options;
      signal?.throwIfAborted();
      const role = await assumeRole(settings, account, signal);
      const ctx: ScopeContext = { settings, credentials: role.credentials, accountId: role.accountId, ...(signal ? { signal } : {}) };
      const scopes = awsScopes(account.regions);
      let done = 0;
      return mapLimit(scopes, SCOPE_CONCURRENCY, async (scope) => {
        signal?.throwIfAborted();
        const result = await runScope(scope, ctx);
        onScope?.(++done, scopes.length);
        return result;
      });
    },
  };
}
