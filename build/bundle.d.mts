// Types for build.mjs (plain JavaScript: bin/aegis.mjs imports it before any TypeScript loader).
/** Builds dist/ (see build.mjs); resolves to how many inputs and output files it has. */
export function buildDist(options?: { quiet?: boolean }): Promise<{ inputs: number; outputs: number }>;
/** The first input changed since dist/ (or `dir`) was built, '(no build)', or undefined when it is fresh. */
export function staleInput(dir?: string): string | undefined;
/** size:mtime of a file relative to the project root; undefined when it does not exist. */
export function stampOf(file: string): string | undefined;
