// The clouds Aegis discovers in, built from their settings. Callers use only ./types.ts.
import { createAwsConnector } from '../aws/connector.ts';
import type { CloudSettings } from './settings.ts';
import type { CloudConnector, CloudProviderName } from './types.ts';

export type CloudConnectors = Record<CloudProviderName, CloudConnector>;

export function createCloudConnectors(settings: CloudSettings): CloudConnectors {
  return { aws: createAwsConnector(settings.aws) };
}
