// Reading one object by id. ResourceApi (shared with the reconciler) lists whole collections, which
// is right for a plan over everything but wasteful for Terraform's one-object ReadResource, so
// this uses each kind's single-object GET from the kind registry, over the same typed client.
import { kindEntry, type Kind } from '../../reconciler/kinds/index.ts';
import type { Fields } from '../../reconciler/live/resources.ts';
import { isNotFound, type Connection } from './context.ts';

/** The object, or null when the API answers 404 (deleted outside Terraform, or its site is gone). */
export async function getObject(connection: Connection, kind: Kind, id: string, siteId: string | undefined): Promise<Fields | null> {
  try {
    return await kindEntry(kind).operations.get(connection.client, id, siteId);
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}
