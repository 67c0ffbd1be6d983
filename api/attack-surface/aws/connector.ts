// PLACEHOLDER (foundation): AWS discovery through a role assumed with an external id.
import type { AwsSettings } from '../providers/settings.ts';
import type { CloudConnector } from '../providers/types.ts';

export function createAwsConnector(_settings: AwsSettings): CloudConnector {
  const notYet = (): never => {
    throw new Error('not built yet');
  };
  return { name: 'aws', setup: notYet, verify: notYet, discover: notYet };
}
