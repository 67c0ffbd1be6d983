// Internet-facing Application and Network Load Balancers of one region (ELBv2). Internal ones
// answer only inside the VPC, so they are no attack surface.
import { ElasticLoadBalancingV2Client, paginateDescribeLoadBalancers } from '@aws-sdk/client-elastic-load-balancing-v2';
import type { DiscoveredAsset } from '../providers/types.ts';
import { clientConfig, sendOptions, type ScopeContext } from './clients.ts';

export async function listLoadBalancers(ctx: ScopeContext, region: string): Promise<DiscoveredAsset[]> {
  const client = new ElasticLoadBalancingV2Client(clientConfig(ctx.settings, region, ctx.credentials));
  const assets: DiscoveredAsset[] = [];
  try {
    for await (const page of paginateDescribeLoadBalancers({ client, pageSize: 400 }, {}, sendOptions(ctx.signal))) {
      for (const lb of page.LoadBalancers ?? []) {
        if (lb.Scheme !== 'internet-facing' || !lb.DNSName) continue;
        assets.push({
          kind: 'load_balancer',
          host: lb.DNSName.toLowerCase().replace(/\.$/, ''),
          resourceId: lb.LoadBalancerArn ?? lb.LoadBalancerName ?? lb.DNSName,
          resourceName: lb.LoadBalancerName ?? null,
          region,
          details: { scheme: lb.Scheme, type: lb.Type ?? null, state: lb.State?.Code ?? null, ip_address_type: lb.IpAddressType ?? null },
        });
      }
    }
  } finally {
    client.destroy();
  }
  return assets;
}
