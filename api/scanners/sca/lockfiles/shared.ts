// Small helpers the lockfile parsers share.

export type JsonObject = { [key: string]: unknown };

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

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
