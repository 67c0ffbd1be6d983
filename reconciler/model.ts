// The reconciler's vocabulary, shared by its parts: what config files ask for (desired objects),
// where each came from, and the problems found in them.
import type { KindMeta } from '../schemas/index.ts';
import type { Kind } from './kinds/index.ts';

// Both come from the kind registry (reconciler/kinds), the one list of managed kinds.
export { SITE_KINDS, type Kind } from './kinds/index.ts';

export interface SourceLocation {
  /** Path relative to the config directory (or the input file), with forward slashes. */
  file: string;
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
}

/** One object a config file asks for, in the API's terms. */
export interface DesiredObject {
  kind: Kind;
  /**
   * Identity within the config: `metadata.name` (or the nested entry's name). Unique per kind,
   * and for site kinds per kind and site.
   */
  name: string;
  /** `metadata.name` of the ShieldSite, for site kinds. */
  site?: string;
  /**
   * The fields the API takes for this kind (schemas/<Kind>Spec, without `site`), with the schema's
   * defaults filled in. `labels` holds the user's labels only; ownership labels are the planner's.
   * For ShieldSchema: `document` (the OpenAPI text) and `strictness`.
   */
  spec: Record<string, unknown>;
  location: SourceLocation;
}

export interface ConfigProblem {
  location: SourceLocation;
  kind?: Kind;
  name?: string;
  message: string;
}

/** `path/to/file.yaml:LINE:COL kind/name: message` */
export function formatProblem(problem: ConfigProblem): string {
  const where = `${problem.location.file}:${problem.location.line}:${problem.location.column}`;
  const what = problem.kind ? ` ${problem.kind}/${problem.name ?? '?'}` : '';
  return `${where}${what}: ${problem.message}`;
}

export interface LoadResult {
  objects: DesiredObject[];
  problems: ConfigProblem[];
}

export type { KindMeta };
