// CloudFront distributions (global): the distribution's own domain (xxx.cloudfront.net) and each
// alternate domain name (CNAME) it serves, all under the distribution's ARN.
import { CloudFrontClient, paginateListDistributions } from '@aws-sdk/client-cloudfront';
import type { DiscoveredAsset } from '../providers/types.ts';
import { clientConfig, GLOBAL_REGION, sendOptions, type ScopeContext } from './clients.ts';

export async function listDistributions(ctx: ScopeContext): Promise<DiscoveredAsset[]> {
  const client = new CloudFrontClient(clientConfig(ctx.settings, GLOBAL_REGION, ctx.credentials));
  const assets: DiscoveredAsset[] = [];
  try {
    for await (const page of paginateListDistributions({ client, pageSize: 100 }, {}, sendOptions(ctx.signal))) {
      for (const d of page.DistributionList?.Items ?? []) {
        if (!d.DomainName || !d.Id) continue;
        const resourceId = d.ARN ?? d.Id;
        const resourceName = d.Comment ? d.Comment : null;
        const domain = d.DomainName.toLowerCase().replace(/\.$/, '');
        const common = { distribution_id: d.Id, enabled: d.Enabled ?? null, status: d.Status ?? null };
        assets.push({ kind: 'cloudfront_distribution', host: domain, resourceId, resourceName, region: null, details: { ...common, alias: false } });
        for (const alias of d.Aliases?.Items ?? []) {
          const host = alias.toLowerCase().replace(/\.$/, '');
          assets.push({
            kind: 'cloudfront_distribution',
            host,
            resourceId,
            resourceName,
            region: null,
            details: { ...common, alias: true, distribution_domain: domain, ...(host.startsWith('*.') ? { wildcard: true } : {}) },
          });
        }
      }
    }
  } finally {
    client.destroy();
  }
  return assets;
}
