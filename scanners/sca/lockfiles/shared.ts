// Small helpers the lockfile parsers share.
import { parse as parseYaml } from 'yaml';
import { isObject, type JsonObject } from '../../../schemas/json-value.ts';
import type { ParseIssue } from './types.ts';

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** 1-based line of a character offset. */
export function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * Where an npm dependency comes from, judged by its spec or resolved URL: only registry packages
 * have versions that npm advisories speak about; git, file, link and tarball-URL sources carry
 * whatever version their package.json claims.
 */
export function isNonRegistryNpmSource(spec: string): boolean {
  return /^(file:|link:|portal:|workspace:|patch:|exec:|git\+|git:|git@|github:|gitlab:|bitbucket:|gist:|https?:|ssh:)/.test(spec) || /^[\w.-]+\/[\w.-]+(#.*)?$/.test(spec);
}

/**
 * The same judgement for a lockfile's `resolved` URL: registry tarballs are http(s) URLs with the
 * registry's `/-/` tarball path (`https://registry.npmjs.org/a/-/a-1.0.0.tgz`, also on mirrors and
 * private registries); any other URL or scheme is a direct source (a tarball or git dependency).
 */
export function isNonRegistryNpmResolved(resolved: string): boolean {
  // GitHub Packages serves tarballs from /download/ paths instead.
  if (/^https?:\/\//.test(resolved)) return !resolved.includes('/-/') && !resolved.startsWith('https://npm.pkg.github.com/download/');
  return isNonRegistryNpmSource(resolved);
}

/** Splits `name@spec` where name may be scoped (`@scope/name@spec`). */
export function splitNameAt(text: string): { name: string; rest: string } | null {
  const at = text.indexOf('@', text.startsWith('@') ? 1 : 0);
  if (at <= 0) return null;
  return { name: text.slice(0, at), rest: text.slice(at + 1) };
}

/**
 * A YAML lockfile (pnpm-lock.yaml, yarn berry) as a mapping, or the problem as a lockfile issue.
 * failsafe schema: every scalar stays a string, so `version: 1.10` is not read as the number 1.1.
 */
export function yamlMapping(text: string, path: string): { doc: JsonObject } | { issue: ParseIssue } {
  let doc: unknown;
  try {
    doc = parseYaml(text, { schema: 'failsafe', maxAliasCount: 100, logLevel: 'error' });
  } catch (e) {
    return { issue: { path, reason: 'parse_error', message: `invalid YAML: ${(e as Error).message.split('\n')[0]}` } };
  }
  if (!isObject(doc)) return { issue: { path, reason: 'parse_error', message: 'not a YAML mapping' } };
  return { doc };
}
