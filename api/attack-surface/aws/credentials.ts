// Aegis's way into a customer's account: AssumeRole on the role they created, with the external
// id of their connection (the confused-deputy guard), for one hour of read-only credentials.
import { AssumeRoleCommand, GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import type { AwsSettings } from '../providers/settings.ts';
import type { CloudAccount, CloudIdentity } from '../providers/types.ts';
import { clientConfig, sendOptions, type AwsCredentials } from './clients.ts';
import { isAbort, stsProviderError } from './errors.ts';

export const ROLE_SESSION_NAME = 'aegis-discovery';
export const SESSION_SECONDS = 3600;

export interface AssumedRole {
  credentials: AwsCredentials;
  /** The customer's account id (from the assumed-role ARN). */
  accountId: string;
  /** arn:aws:sts::<account>:assumed-role/<role>/aegis-discovery */
  arn: string;
}

/** The account id inside an ARN (its fifth field), or null. */
export function arnAccount(arn: string): string | null {
  const account = arn.split(':')[4];
  return account && /^\d{12}$/.test(account) ? account : null;
}

async function withSts<T>(settings: AwsSettings, credentials: AwsCredentials | undefined, signal: AbortSignal | undefined, work: (sts: STSClient) => Promise<T>): Promise<T> {
  const sts = new STSClient(clientConfig(settings, settings.stsRegion, credentials));
  try {
    return await work(sts);
  } catch (error) {
    if (isAbort(error, signal)) throw error;
    throw stsProviderError(error);
  } finally {
    sts.destroy();
  }
}

/** Temporary credentials of the customer's role. Throws ProviderAuthError when AWS refuses (AccessDenied, wrong external id, revoked trust). */
export function assumeRole(settings: AwsSettings, account: CloudAccount, signal?: AbortSignal): Promise<AssumedRole> {
  return withSts(settings, settings.credentials, signal, async (sts) => {
    const answer = await sts.send(
      new AssumeRoleCommand({ RoleArn: account.roleArn, ExternalId: account.externalId, RoleSessionName: ROLE_SESSION_NAME, DurationSeconds: SESSION_SECONDS }),
      sendOptions(signal),
    );
    const c = answer.Credentials;
    if (!c?.AccessKeyId || !c.SecretAccessKey || !c.SessionToken) throw Object.assign(new Error('AssumeRole answered without credentials'), { name: 'InternalFailure', $fault: 'server' });
    const arn = answer.AssumedRoleUser?.Arn ?? '';
    return {
      credentials: { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken, ...(c.Expiration ? { expiration: c.Expiration } : {}) },
      accountId: arnAccount(arn) ?? arnAccount(account.roleArn) ?? '',
      arn,
    };
  });
}

/** Who the temporary credentials are, as STS says. */
export function callerIdentity(settings: AwsSettings, credentials: AwsCredentials, signal?: AbortSignal): Promise<CloudIdentity> {
  return withSts(settings, credentials, signal, async (sts) => {
    const who = await sts.send(new GetCallerIdentityCommand({}), sendOptions(signal));
    return { accountId: who.Account ?? arnAccount(who.Arn ?? '') ?? '', arn: who.Arn ?? '' };
  });
}
