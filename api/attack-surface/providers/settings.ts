// Where Aegis reaches the clouds and with which credentials of its own, from the environment. In
// production the AWS SDK's default credential chain (environment, shared config, instance or task
// role) gives Aegis's own identity, which then assumes each customer's role; tests point every
// service at a local stand-in and pass fixed keys. Nothing else differs.

export interface AwsSettings {
  /** One endpoint for every AWS service (AEGIS_AWS_ENDPOINT_URL); unset: AWS's own endpoints. */
  endpointUrl: string | undefined;
  /** Region of STS calls (AEGIS_AWS_REGION, default us-east-1). */
  stsRegion: string;
  /** Aegis's principal that customers trust (AEGIS_AWS_PRINCIPAL_ARN), shown in the trust policy at connect. */
  principalArn: string | undefined;
  /** Fixed credentials of Aegis itself (tests); unset: the SDK's default chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
}

export interface CloudSettings {
  aws: AwsSettings;
}

export function loadCloudSettings(env: NodeJS.ProcessEnv): CloudSettings {
  return {
    aws: {
      endpointUrl: env.AEGIS_AWS_ENDPOINT_URL?.replace(/\/+$/, '') || undefined,
      stsRegion: env.AEGIS_AWS_REGION || 'us-east-1',
      principalArn: env.AEGIS_AWS_PRINCIPAL_ARN || undefined,
    },
  };
}
