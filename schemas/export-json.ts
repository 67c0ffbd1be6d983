// Writes schemas/json/<Kind>.schema.json from the TypeScript definitions, for editors and other
// tools (`npm run schemas:json`). A test fails when the committed files are stale.
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KINDS } from './index.ts';

export const JSON_DIR = fileURLToPath(new URL('./json/', import.meta.url));

export function renderSchemas(): Map<string, string> {
  const files = new Map<string, string>();
  for (const { meta, spec } of KINDS) {
    const document = { $schema: 'https://json-schema.org/draft/2020-12/schema', ...spec, 'x-aegis': meta };
    files.set(`${meta.kind}.schema.json`, `${JSON.stringify(document, null, 2)}\n`);
  }
  return files;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  mkdirSync(JSON_DIR, { recursive: true });
  for (const [name, text] of renderSchemas()) writeFileSync(JSON_DIR + name, text);
  console.log(`wrote ${KINDS.length} schemas to ${JSON_DIR}`);
}
