import { readFileSync, readdirSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { JSON_DIR, renderSchemas } from '../schemas/export-json.ts';
import { KINDS } from '../schemas/index.ts';

/** Every property at every depth, with its path. */
function* properties(schema: unknown, path = ''): Generator<[string, Record<string, unknown>]> {
  if (!schema || typeof schema !== 'object') return;
  const props = (schema as { properties?: Record<string, Record<string, unknown>> }).properties;
  for (const [name, prop] of Object.entries(props ?? {})) {
    yield [`${path}${name}`, prop];
    yield* properties(prop, `${path}${name}.`);
  }
}

describe('schemas/', () => {
  it('the committed JSON files are up to date (npm run schemas:json)', () => {
    const rendered = renderSchemas();
    expect(readdirSync(JSON_DIR).sort()).toEqual([...rendered.keys()].sort());
    for (const [name, text] of rendered) expect(readFileSync(JSON_DIR + name, 'utf8'), name).toBe(text);
  });

  it('every kind is a valid JSON Schema with a description on every property', () => {
    const ajv = new Ajv2020({ strict: false });
    for (const { meta, spec, resource } of KINDS) {
      expect(() => ajv.compile({ ...spec, $id: undefined }), meta.kind).not.toThrow();
      for (const [path, prop] of [...properties(spec), ...properties(resource)]) {
        expect(typeof prop.description === 'string' && prop.description.length > 0, `${meta.kind}.${path} has a description`).toBe(true);
      }
    }
  });

  it('metadata names only fields the schemas have', () => {
    for (const { meta, spec, resource } of KINDS) {
      const specFields = Object.keys(spec.properties);
      for (const field of [...meta.mutable, ...meta.identity]) expect(specFields, `${meta.kind}.${field}`).toContain(field);
      for (const field of meta.computed) expect(Object.keys(resource.properties), `${meta.kind}.${field}`).toContain(field);
    }
  });
});
