// A cloud connection as the connector sees it: the role, the external id and the regions, read
// from the integration row (metadata and settings).
import type { IntegrationRow } from '../../platform/db/schema.ts';
import type { CloudAccount } from './providers/types.ts';

export const DEFAULT_REGIONS: readonly string[] = ['us-east-1'];
export const DEFAULT_INTERVAL_HOURS = 24;

export const regionsOf = (row: Pick<IntegrationRow, 'settings'>): string[] => [...(row.settings.discovery?.regions ?? DEFAULT_REGIONS)];
export const intervalHoursOf = (row: Pick<IntegrationRow, 'settings'>): number => row.settings.discovery?.interval_hours ?? DEFAULT_INTERVAL_HOURS;

/** The account of a connected (or connecting) row; null when the row holds no role yet. */
export function cloudAccountOf(row: Pick<IntegrationRow, 'metadata' | 'settings'>): CloudAccount | null {
  const { role_arn: roleArn, external_id: externalId } = row.metadata as { role_arn?: unknown; external_id?: unknown };
  if (typeof roleArn !== 'string' || typeof externalId !== 'string') return null;
  return { roleArn, externalId, regions: regionsOf(row) };
}
