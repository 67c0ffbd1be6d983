// Types of build.mjs for the TypeScript that imports it (provider/cdktf/generate.ts, the tests).

/** The first input changed since dist/ was built, `(no build)`, or undefined when dist/ is fresh. */
export function cdktfStaleInput(): string | undefined;
/** Compiles index.ts and gen/ into dist/ (JavaScript and .d.ts); throws when tsc fails. */
export function buildCdktfPackage(options?: { quiet?: boolean }): void;
