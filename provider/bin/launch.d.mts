// Types for launch.mjs (plain JavaScript: it runs before any TypeScript loader).
/** Builds the provider bundle when stale; returns its path. */
export function ensureBundle(): Promise<string>;
/** The plugin's entry point. */
export function main(): Promise<void>;
