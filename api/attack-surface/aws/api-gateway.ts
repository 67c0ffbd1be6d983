// API Gateway endpoints of one region: each stage of a REST API (v1) is served at
// https://<id>.execute-api.<region>.amazonaws.com/<stage>; an HTTP or WebSocket API (v2) at its
// ApiEndpoint. APIs whose default endpoint is disabled, and private REST APIs (reachable only
// from a VPC), expose nothing on the internet and are skipped.
import { APIGatewayClient, GetStagesCommand, paginateGetRestApis, type RestApi } from '@aws-sdk/client-api-gateway';
import { ApiGatewayV2Client, GetApisCommand } from '@aws-sdk/client-apigatewayv2';
import type { DiscoveredAsset } from '../providers/types.ts';
import { clientConfig, sendOptions, type ScopeContext } from './clients.ts';
import { mapLimit } from './concurrency.ts';

/** GetStages calls in flight at once within a region. */
const STAGE_CONCURRENCY = 4;

const isPublicRestApi = (api: RestApi): boolean => Boolean(api.id) && api.disableExecuteApiEndpoint !== true && !(api.endpointConfiguration?.types ?? []).includes('PRIVATE');

async function restApiStages(ctx: ScopeContext, region: string): Promise<DiscoveredAsset[]> {
  const client = new APIGatewayClient(clientConfig(ctx.settings, region, ctx.credentials));
  try {
    const apis: RestApi[] = [];
    for await (const page of paginateGetRestApis({ client, pageSize: 500 }, {}, sendOptions(ctx.signal))) apis.push(...(page.items ?? []).filter(isPublicRestApi));
    const perApi = await mapLimit(apis, STAGE_CONCURRENCY, async (api) => {
      const id = api.id!;
      const stages = await client.send(new GetStagesCommand({ restApiId: id }), sendOptions(ctx.signal));
      return (stages.item ?? [])
        .filter((s) => s.stageName)
        .map(
          (s): DiscoveredAsset => ({
            kind: 'api_gateway',
            host: `${id}.execute-api.${region}.amazonaws.com`.toLowerCase(),
            resourceId: `arn:aws:apigateway:${region}::/restapis/${id}/stages/${s.stageName}`,
            resourceName: api.name ?? null,
            region,
            details: { api_type: 'rest', api_id: id, stage: s.stageName, path: `/${s.stageName}`, endpoint_types: api.endpointConfiguration?.types ?? [] },
          }),
        );
    });
    return perApi.flat();
  } finally {
    client.destroy();
  }
}

async function httpApis(ctx: ScopeContext, region: string): Promise<DiscoveredAsset[]> {
  const client = new ApiGatewayV2Client(clientConfig(ctx.settings, region, ctx.credentials));
  const assets: DiscoveredAsset[] = [];
  try {
    // GetApis has no SDK paginator: follow nextToken by hand.
    let nextToken: string | undefined;
    do {
      const page = await client.send(new GetApisCommand({ MaxResults: '500', ...(nextToken ? { NextToken: nextToken } : {}) }), sendOptions(ctx.signal));
      for (const api of page.Items ?? []) {
        if (!api.ApiId || !api.ApiEndpoint || api.DisableExecuteApiEndpoint === true) continue;
        let host: string;
        try {
          host = new URL(api.ApiEndpoint).hostname.toLowerCase();
        } catch {
          continue;
        }
        assets.push({
          kind: 'api_gateway',
          host,
          resourceId: `arn:aws:apigateway:${region}::/apis/${api.ApiId}`,
          resourceName: api.Name ?? null,
          region,
          details: { api_type: (api.ProtocolType ?? 'HTTP').toLowerCase(), api_id: api.ApiId, endpoint: api.ApiEndpoint },
        });
      }
      nextToken = page.NextToken || undefined;
    } while (nextToken);
  } finally {
    client.destroy();
  }
  return assets;
}

export async function listApiGateways(ctx: ScopeContext, region: string): Promise<DiscoveredAsset[]> {
  const [rest, http] = await Promise.all([restApiStages(ctx, region), httpApis(ctx, region)]);
  return [...rest, ...http];
}
