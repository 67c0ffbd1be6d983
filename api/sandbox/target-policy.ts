// What a test-mode URL scan may probe: hosts the organisation listed as sandbox targets (a live
// admin lists them: the sandbox cannot widen its own reach), or the deliberately vulnerable demo
// target Aegis serves itself. Checked when the scan is asked for, in addition to the private-address
// policy; a live scan is not affected.
import type { Db } from '../../platform/db/database.ts';
import { validationFailed } from '../../platform/http/errors.ts';
import { environmentOf } from '../../platform/db/environments.ts';
import { DEMO_TARGET_PATH } from './demo-target.ts';

export interface SandboxScope {
  /** Hosts (`name` or `name:port`, lower case) the organisation allows test scans to probe. */
  targets: readonly string[];
  /** The demo target's URL (`<public url>/sandbox/demo/`). */
  demoUrl: string;
}

/** The demo target under Aegis's public URL. */
export const demoTargetUrl = (publicUrl: string): string => `${publicUrl}${DEMO_TARGET_PATH}/`;

export async function sandboxTargets(db: Db, dataSpace: string): Promise<string[]> {
  const row = await db.selectFrom('organizations').select('sandbox_targets').where('id', '=', dataSpace).executeTakeFirst();
  return row?.sandbox_targets ?? [];
}

/** The scope a data space's URL scans are held to; undefined for live data (no sandbox rule). */
export async function sandboxScopeOf(db: Db, dataSpace: string, publicUrl: string): Promise<SandboxScope | undefined> {
  if (environmentOf(dataSpace) === 'live') return undefined;
  return { targets: await sandboxTargets(db, dataSpace), demoUrl: demoTargetUrl(publicUrl) };
}

export function isDemoTarget(scope: SandboxScope, url: URL): boolean {
  const demo = new URL(scope.demoUrl);
  return url.origin === demo.origin && url.pathname.startsWith(demo.pathname);
}

/** Throws 422 unless every host the scan may reach is a listed sandbox target. */
export function checkSandboxHosts(scope: SandboxScope, hosts: readonly string[], field: string): void {
  for (const host of hosts) {
    const name = host.replace(/:\d+$/, '');
    if (scope.targets.includes(host) || scope.targets.includes(name)) continue;
    const message = `${host} is not a sandbox target: test-mode scans may probe only the hosts listed by PUT /api/v1/sandbox/targets, or the demo target ${scope.demoUrl}`;
    throw validationFailed(`request body is invalid: ${field} ${message}`, { fields: [{ field, message }] });
  }
}
