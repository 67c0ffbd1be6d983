// The IAM policies a customer attaches to the role Aegis assumes: the trust policy (who may assume
// it, with which external id) and the permissions policy (exactly the read-only calls discovery
// makes; GetCallerIdentity needs no permission).

/** Shown in the trust policy when Aegis's own principal is not configured. */
export const PRINCIPAL_PLACEHOLDER = '<your Aegis principal ARN>';

export function trustPolicy(principal: string | null, externalId: string): Record<string, unknown> {
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Principal: { AWS: principal ?? PRINCIPAL_PLACEHOLDER },
        Action: 'sts:AssumeRole',
        Condition: { StringEquals: { 'sts:ExternalId': externalId } },
      },
    ],
  };
}

export function permissionsPolicy(): Record<string, unknown> {
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'AegisAttackSurfaceDiscovery',
        Effect: 'Allow',
        Action: [
          'elasticloadbalancing:DescribeLoadBalancers',
          'cloudfront:ListDistributions',
          'ec2:DescribeInstances',
          'ec2:DescribeAddresses',
          'route53:ListHostedZones',
          'route53:ListResourceRecordSets',
        ],
        Resource: '*',
      },
      {
        // API Gateway authorises by HTTP verb on resource paths: GetRestApis, GetStages, GetApis.
        Sid: 'AegisAttackSurfaceApiGateway',
        Effect: 'Allow',
        Action: 'apigateway:GET',
        Resource: ['arn:aws:apigateway:*::/restapis', 'arn:aws:apigateway:*::/restapis/*/stages', 'arn:aws:apigateway:*::/apis'],
      },
    ],
  };
}
