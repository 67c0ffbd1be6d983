// The impact preview (POST /api/v1/shield/sites/:id/impact): what a change a form is about to save
// would have done to the site's recorded traffic. A form builds its proposal with the very body
// builder its save uses, so the preview judges exactly what Save would send; nothing is stored.
import { useMutation } from '@tanstack/react-query';
import { api, ApiError, ok } from '../../../api/client.ts';
import type { Answer, BodyOf } from '../../../api/types.ts';

export type ImpactProposal = BodyOf<'/api/v1/shield/sites/{id}/impact', 'post'>;
export type Impact = Answer<'/api/v1/shield/sites/{id}/impact', 'post'>;
export type ImpactChange = Impact['totals']['newly_blocked'];
type ImpactOperation = NonNullable<ImpactProposal['operations']>[number];

/** A rule form's save: a create (POST body) or an update of rule `id` (PATCH body). */
export type RuleWrite<Create, Update> = { op: 'create'; body: Create } | { op: 'update'; id: string; body: Update };

/** A rule write as one operation of the batch the preview takes (the batch's `spec` is the single route's body). */
export function operationOf(kind: ImpactOperation['kind'], write: RuleWrite<Record<string, unknown>, Record<string, unknown>>): ImpactOperation {
  return write.op === 'create' ? { op: 'create', kind, spec: write.body } : { op: 'update', kind, id: write.id, spec: write.body };
}

/** The preview as a mutation: asked for on demand, its answer kept until the form changes (`reset`). */
export function useImpactPreview(siteId: string) {
  return useMutation({
    mutationFn: (proposal: ImpactProposal) => ok(api.POST('/api/v1/shield/sites/{id}/impact', { params: { path: { id: siteId } }, body: proposal })),
  });
}

export type ImpactPreview = ReturnType<typeof useImpactPreview>;

/**
 * Whether the preview's refusal is about the proposal itself (invalid: 422; clashing with an
 * existing rule: 409), which Save would meet too and the form shows the same way. Anything else
 * (rate limit, outage) only means the preview is unavailable.
 */
export const refusesProposal = (error: unknown): error is ApiError => error instanceof ApiError && (error.status === 422 || error.status === 409);
