// The generated layer is complete and current: a method for every operation of the model, and the
// files on disk are what the emitter renders from sdks/openapi.json.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderNode } from '../../codegen/emit-node.ts';
import { buildModel, type OpenApiDocument } from '../../codegen/model.ts';
import { camelCase } from '../../codegen/names.ts';
import { staleFiles } from '../../../build/sdks.ts';
import { Aegis, OPERATIONS } from '../src/index.ts';

const document = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8')) as OpenApiDocument;
const model = buildModel(document);

describe('generated Node SDK', () => {
  it('has a method for every operation of the model', () => {
    const aegis = new Aegis({ apiKey: 'unused', baseUrl: 'http://127.0.0.1:9' });
    const missing: string[] = [];
    let count = 0;
    for (const resource of model.resources) {
      const namespace = (aegis as unknown as Record<string, Record<string, unknown> | undefined>)[camelCase(resource.name)];
      for (const op of resource.operations) {
        count++;
        if (typeof namespace?.[op.name] !== 'function') missing.push(op.id);
        expect(OPERATIONS[`${camelCase(resource.name)}.${op.name}`]).toEqual({ method: op.httpMethod, path: op.path });
      }
    }
    expect(missing).toEqual([]);
    expect(count).toBe(Object.keys(OPERATIONS).length);
    expect(count).toBeGreaterThan(100);
  });

  it('declares every named type of the model', () => {
    const types = readFileSync(new URL('../src/generated/types.ts', import.meta.url), 'utf8');
    const missing = model.types.filter((t) => !types.includes(`export interface ${t.name} {`)).map((t) => t.name);
    expect(missing).toEqual([]);
  });

  it('is up to date with sdks/openapi.json', () => {
    expect(staleFiles(renderNode(model))).toEqual([]);
  });
});
