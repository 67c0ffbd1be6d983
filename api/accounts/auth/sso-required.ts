import { ApiError } from '../../../platform/http/errors.ts';

/** 403 `sso_required`: the organisation admits its members only through its identity provider. */
export const ssoRequired = (org: { name: string; slug: string }) =>
  new ApiError(403, 'sso_required', `${org.name} requires signing in through its identity provider`, { sso_url: `/auth/sso?org=${encodeURIComponent(org.slug)}` });
