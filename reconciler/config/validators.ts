// The config's JSON Schema validators. ajv turns a schema into JavaScript when it compiles it —
// about 100 ms for the config document schema, most of a cold `aegis validate` or `aegis plan`. The
// build (build/bundle.mjs) writes that JavaScript ahead of time (ajv "standalone" code) into
// dist/validators/, one CommonJS file per schema named by a digest of the schema, its flavour and
// ajv's version; a validator is loaded from there when its file exists and compiled otherwise
// (running from the sources, or a schema changed since the build), so a stale file is never used.
// ajv itself is only loaded when something must be compiled.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Ajv2020 as Ajv2020Type, Options, ValidateFunction } from 'ajv/dist/2020.js';

/** `checking` reports problems; `defaulting` also fills in schema defaults (ajv's useDefaults). */
export type Flavour = 'checking' | 'defaulting';

const require = createRequire(import.meta.url);
const PRECOMPILED_DIR = fileURLToPath(new URL('../../dist/validators/', import.meta.url));
let ajvVersion: string | undefined;

/** The file name a schema's precompiled validator has (and is looked up by). */
export function validatorFileName(flavour: Flavour, schema: object): string {
  ajvVersion ??= (require('ajv/package.json') as { version: string }).version;
  const digest = createHash('sha256').update(`${ajvVersion}\u0000${flavour}\u0000${JSON.stringify(schema)}`).digest('hex').slice(0, 32);
  return `${digest}.cjs`;
}

/** An ajv instance of the flavour; `source` keeps the generated code for writing it out. */
export function createAjv(flavour: Flavour, source = false): Ajv2020Type {
  const { Ajv2020 } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  const addFormats = (require('ajv-formats') as typeof import('ajv-formats')).default;
  const { _ } = require('ajv/dist/compile/codegen/index.js') as typeof import('ajv/dist/compile/codegen/index.js');
  // strictRequired is off because `oneOf: [{required: [document]}, …]` names properties declared
  // beside it, not inside the branch; the rest of strict mode stays on to catch schema mistakes.
  // verbose: the `oneOf` error needs its schema to say which fields are meant.
  const options: Options = { allErrors: true, verbose: true, strictRequired: false, useDefaults: flavour === 'defaulting' };
  // Standalone code names the formats it uses by this expression.
  if (source) options.code = { source: true, formats: _`require("ajv-formats/dist/formats").fullFormats` };
  const ajv = new Ajv2020(options);
  addFormats(ajv);
  return ajv;
}

const compilers = new Map<Flavour, Ajv2020Type>();

/** The validator of `schema`: precompiled by the build when available, compiled here otherwise. */
export function validatorFor(flavour: Flavour, schema: object): ValidateFunction {
  const file = PRECOMPILED_DIR + validatorFileName(flavour, schema);
  if (existsSync(file)) return require(file) as ValidateFunction;
  let ajv = compilers.get(flavour);
  if (!ajv) compilers.set(flavour, (ajv = createAjv(flavour)));
  return ajv.compile(schema);
}
