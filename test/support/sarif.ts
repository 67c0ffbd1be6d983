// The official SARIF 2.1.0 JSON Schema (test/fixtures/sarif, draft-04) as an ajv validator.
import { readFileSync } from 'node:fs';
import type { Options, ValidateFunction } from 'ajv';
import * as AjvDraft04 from 'ajv-draft-04';

let compiled: ValidateFunction | undefined;

export function sarifValidator(): ValidateFunction {
  if (compiled) return compiled;
  const schema = JSON.parse(readFileSync('test/fixtures/sarif/sarif-schema-2.1.0.json', 'utf8')) as Record<string, unknown>;
  // ajv-draft-04 is CommonJS: its class is the default export's `default` under NodeNext typing.
  type AjvClass = new (options: Options) => { compile(schema: object): ValidateFunction };
  const mod = AjvDraft04 as unknown as { default: AjvClass | { default: AjvClass } };
  const Ajv = 'default' in mod.default ? mod.default.default : mod.default;
  compiled = new Ajv({ allErrors: true, strict: false, validateFormats: false }).compile(schema);
  return compiled;
}
