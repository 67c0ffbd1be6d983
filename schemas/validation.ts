// Two validators: request bodies are checked strictly (no type coercion, unknown fields rejected
// by the schemas, every error reported at once); query strings, path parameters and headers arrive
// as text and are coerced to the declared types.
import { Ajv, type Options, type ValidateFunction } from 'ajv';
import formats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS with a default export; under NodeNext the callable is `.default`.
const addFormats = formats.default;

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, useDefaults: true, removeAdditional: false, strict: false, ...options });
  addFormats(ajv);
  // Documentation-only keywords used in route schemas.
  ajv.addKeyword({ keyword: 'example' });
  return ajv;
}

const body = makeAjv({ coerceTypes: false });
const text = makeAjv({ coerceTypes: 'array' });

/** A strict validator for data that arrives some other way than a JSON body (CSV rows, files). */
export function compileStrict(schema: object): ValidateFunction {
  return body.compile(schema);
}

export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  return ({ schema, httpPart }) => (httpPart === 'body' ? body : text).compile(schema as object);
}
