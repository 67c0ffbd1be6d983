// Route 53 (global): the A, AAAA and CNAME records (plain or alias) of every public hosted zone.
// Private zones resolve only inside VPCs. Route 53 writes `*` in names as the octal escape
// `\052`; a wildcard record is kept as `*.zone` and marked as such.
import { ListResourceRecordSetsCommand, paginateListHostedZones, type ListResourceRecordSetsCommandOutput, Route53Client, type HostedZone, type RRType } from '@aws-sdk/client-route-53';
import type { DiscoveredAsset } from '../providers/types.ts';
import { clientConfig, GLOBAL_REGION, sendOptions, type ScopeContext } from './clients.ts';

const EXPOSED_TYPES = new Set(['A', 'AAAA', 'CNAME']);

/** A DNS name as Route 53 returns it, as a host: octal escapes decoded, no trailing dot, lower case. */
export function recordHost(name: string): string {
  return name
    .replace(/\\(\d{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)))
    .replace(/\.$/, '')
    .toLowerCase();
}

async function zoneRecords(client: Route53Client, zone: HostedZone, ctx: ScopeContext): Promise<DiscoveredAsset[]> {
  const zoneId = (zone.Id ?? '').replace(/^\/hostedzone\//, '');
  const zoneName = recordHost(zone.Name ?? '');
  const assets: DiscoveredAsset[] = [];
  // ListResourceRecordSets has no SDK paginator (its cursor is a name and a type).
  let start: { StartRecordName: string; StartRecordType?: RRType; StartRecordIdentifier?: string } | null = null;
  do {
    const page: ListResourceRecordSetsCommandOutput = await client.send(new ListResourceRecordSetsCommand({ HostedZoneId: zoneId, MaxItems: 300, ...(start ?? {}) }), sendOptions(ctx.signal));
    for (const set of page.ResourceRecordSets ?? []) {
      if (!set.Name || !set.Type || !EXPOSED_TYPES.has(set.Type)) continue;
      const host = recordHost(set.Name);
      const alias = set.AliasTarget?.DNSName ? recordHost(set.AliasTarget.DNSName) : null;
      const values = (set.ResourceRecords ?? []).map((r) => r.Value ?? '').filter(Boolean);
      assets.push({
        kind: 'dns_record',
        host,
        // Records have no ARN: the zone, the name, the type (and the routing-policy identifier) name one.
        resourceId: `hostedzone/${zoneId}/rrset/${host}/${set.Type}${set.SetIdentifier ? `/${set.SetIdentifier}` : ''}`,
        resourceName: zoneName || null,
        region: null,
        details: {
          type: set.Type,
          zone_id: zoneId,
          zone_name: zoneName,
          ...(alias ? { alias_target: alias } : { values }),
          ...(host.startsWith('*.') ? { wildcard: true } : {}),
          ...(set.SetIdentifier ? { set_identifier: set.SetIdentifier } : {}),
        },
      });
    }
    start = page.IsTruncated && page.NextRecordName
      ? { StartRecordName: page.NextRecordName, ...(page.NextRecordType ? { StartRecordType: page.NextRecordType } : {}), ...(page.NextRecordIdentifier ? { StartRecordIdentifier: page.NextRecordIdentifier } : {}) }
      : null;
  } while (start);
  return assets;
}

export async function listDnsRecords(ctx: ScopeContext): Promise<DiscoveredAsset[]> {
  const client = new Route53Client(clientConfig(ctx.settings, GLOBAL_REGION, ctx.credentials));
  const assets: DiscoveredAsset[] = [];
  try {
    for await (const page of paginateListHostedZones({ client, pageSize: 100 }, {}, sendOptions(ctx.signal))) {
      for (const zone of page.HostedZones ?? []) {
        if (zone.Config?.PrivateZone === true || !zone.Id) continue;
        assets.push(...(await zoneRecords(client, zone, ctx)));
      }
    }
  } finally {
    client.destroy();
  }
  return assets;
}
