// How the API shows people's organisations and names e-mail domains: schemas the members, sessions
// and SSO routes share.
import { timestampSchema } from '../../../platform/http/schemas.ts';

export const organizationSchema = {
  type: 'object',
  required: ['id', 'slug', 'name', 'plan', 'created_at'],
  properties: {
    id: { type: 'string' },
    slug: { type: 'string', description: 'Short unique name, e.g. `default`.' },
    name: { type: 'string' },
    plan: { type: 'string', enum: ['trial', 'pro', 'enterprise'], description: 'Billing plan: `admin` API keys need `pro` or above, SSO needs `enterprise`.' },
    created_at: timestampSchema,
  },
} as const;

/** An e-mail domain: DNS labels, a dot, a top-level name (lower-cased when stored). */
export const domainSchema = {
  type: 'string',
  minLength: 3,
  maxLength: 253,
  pattern: '^(?=.{3,253}$)([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}$',
  description: 'An e-mail domain (example.com).',
} as const;
