// EC2 of one region: running instances with a public IPv4 address, and Elastic IPs (allocated
// addresses answer on the internet whether or not an instance is attached).
import { DescribeAddressesCommand, EC2Client, paginateDescribeInstances } from '@aws-sdk/client-ec2';
import type { DiscoveredAsset } from '../providers/types.ts';
import { clientConfig, sendOptions, type ScopeContext } from './clients.ts';

export async function listEc2(ctx: ScopeContext, region: string): Promise<DiscoveredAsset[]> {
  const client = new EC2Client(clientConfig(ctx.settings, region, ctx.credentials));
  const assets: DiscoveredAsset[] = [];
  try {
    const filters = [{ Name: 'instance-state-name', Values: ['running'] }];
    for await (const page of paginateDescribeInstances({ client, pageSize: 1000 }, { Filters: filters }, sendOptions(ctx.signal))) {
      for (const reservation of page.Reservations ?? []) {
        const owner = reservation.OwnerId ?? ctx.accountId;
        for (const instance of reservation.Instances ?? []) {
          if (!instance.InstanceId || !instance.PublicIpAddress || instance.State?.Name !== 'running') continue;
          const name = instance.Tags?.find((t) => t.Key === 'Name')?.Value ?? null;
          assets.push({
            kind: 'ec2_instance',
            host: instance.PublicIpAddress,
            resourceId: `arn:aws:ec2:${region}:${owner}:instance/${instance.InstanceId}`,
            resourceName: name,
            region,
            details: { instance_id: instance.InstanceId, public_dns_name: instance.PublicDnsName || null, name, state: instance.State.Name, instance_type: instance.InstanceType ?? null },
          });
        }
      }
    }
    // DescribeAddresses is not paginated: one answer holds every address of the region.
    const addresses = await client.send(new DescribeAddressesCommand({}), sendOptions(ctx.signal));
    for (const address of addresses.Addresses ?? []) {
      if (!address.PublicIp) continue;
      const id = address.AllocationId ?? address.PublicIp;
      assets.push({
        kind: 'elastic_ip',
        host: address.PublicIp,
        resourceId: address.AllocationId && ctx.accountId ? `arn:aws:ec2:${region}:${ctx.accountId}:elastic-ip/${address.AllocationId}` : id,
        resourceName: address.Tags?.find((t) => t.Key === 'Name')?.Value ?? null,
        region,
        details: { allocation_id: address.AllocationId ?? null, instance_id: address.InstanceId ?? null, network_interface_id: address.NetworkInterfaceId ?? null },
      });
    }
  } finally {
    client.destroy();
  }
  return assets;
}
