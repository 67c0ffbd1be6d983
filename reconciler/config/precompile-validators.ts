// Writes every config validator as ajv standalone code (see validators.ts) into a directory; the
// build runs this into dist/validators/. Every schema the config checks use is listed here.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { ALL_KINDS } from '../kinds/index.ts';
import { apiSpecSchema, configDocumentSchema, terraformAttributesSchema } from './envelope-schema.ts';
import { createAjv, validatorFileName, type Flavour } from './validators.ts';

const require = createRequire(import.meta.url);

export function precompiledSchemas(): { flavour: Flavour; schema: object }[] {
  return [
    { flavour: 'checking', schema: configDocumentSchema },
    ...ALL_KINDS.map((kind) => ({ flavour: 'checking' as const, schema: terraformAttributesSchema(kind) })),
    ...ALL_KINDS.map((kind) => ({ flavour: 'defaulting' as const, schema: apiSpecSchema(kind) })),
  ];
}

export function writePrecompiledValidators(dir: string): number {
  const standalone = (require('ajv/dist/standalone/index.js') as { default: typeof import('ajv/dist/standalone/index.js').default }).default;
  mkdirSync(dir, { recursive: true });
  const schemas = precompiledSchemas();
  for (const { flavour, schema } of schemas) {
    const ajv = createAjv(flavour, true);
    writeFileSync(join(dir, validatorFileName(flavour, schema)), standalone(ajv, ajv.compile(schema)));
  }
  return schemas.length;
}
