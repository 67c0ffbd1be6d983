// `npm run sdks:generate`: regenerates the Node, Python and Go SDKs from the OpenAPI document the
// server serves (fetched from a throwaway server, as `npm run client:types` does). The document is
// kept as sdks/openapi.json; sdks/codegen/model.ts turns it into one language-neutral model; each
// emitter renders its SDK's generated files. The hand-written layer of each SDK (transport,
// retries, pagination, errors, webhooks, streams) is not touched. test/sdks/generated.test.ts
// renders again from the served document and fails on any difference, so no SDK can go stale.
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetchServedDocument } from './client-types.ts';
import { renderGo } from '../sdks/codegen/emit-go.ts';
import { renderNode } from '../sdks/codegen/emit-node.ts';
import { renderPython } from '../sdks/codegen/emit-python.ts';
import { buildModel, type OpenApiDocument } from '../sdks/codegen/model.ts';
import type { EmitterOutput, GeneratedFile } from '../sdks/codegen/output.ts';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SNAPSHOT = 'sdks/openapi.json';

const EMITTERS = { node: renderNode, python: renderPython, go: renderGo } as const;
export type SdkLanguage = keyof typeof EMITTERS;

/** Every generated file of the three SDKs (or of `only` one), and the directories they own, for a document. */
export function renderSdks(document: OpenApiDocument, only?: SdkLanguage): EmitterOutput {
  const model = buildModel(document);
  const outputs = (only ? [EMITTERS[only]] : Object.values(EMITTERS)).map((emit) => emit(model));
  return {
    owns: outputs.flatMap((o) => o.owns),
    files: [...(only ? [] : [{ path: SNAPSHOT, content: `${JSON.stringify(document, null, 2)}\n` }]), ...outputs.flatMap((o) => o.files)],
  };
}

function filesUnder(dir: string): string[] {
  const absolute = join(REPO_ROOT, dir);
  let names: string[];
  try {
    names = readdirSync(absolute);
  } catch {
    return [];
  }
  // Bytecode caches that running the Python SDK from the checkout writes are not sources.
  return names.filter((name) => name !== '__pycache__' && !name.endsWith('.pyc')).flatMap((name) => {
    const path = join(absolute, name);
    return statSync(path).isDirectory() ? filesUnder(relative(REPO_ROOT, path)) : [relative(REPO_ROOT, path).split('\\').join('/')];
  });
}

/** What differs between `output` and the files on disk: written differently, missing, or left over. */
export function staleFiles(output: EmitterOutput): string[] {
  const stale: string[] = [];
  const expected = new Set(output.files.map((f) => f.path));
  for (const file of output.files) {
    let current: string | undefined;
    try {
      current = readFileSync(join(REPO_ROOT, file.path), 'utf8');
    } catch {
      current = undefined;
    }
    if (current !== file.content) stale.push(file.path);
  }
  for (const dir of output.owns) for (const path of filesUnder(dir)) if (!expected.has(path)) stale.push(path);
  return stale.sort();
}

function write(output: EmitterOutput): void {
  const expected = new Set(output.files.map((f: GeneratedFile) => f.path));
  for (const dir of output.owns) for (const path of filesUnder(dir)) if (!expected.has(path)) rmSync(join(REPO_ROOT, path));
  for (const file of output.files) {
    const path = join(REPO_ROOT, file.path);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, file.content);
  }
}

async function main(): Promise<void> {
  // `--from-snapshot`: regenerate from sdks/openapi.json without starting a server (emitter work).
  const document = process.argv.includes('--from-snapshot')
    ? (JSON.parse(readFileSync(join(REPO_ROOT, SNAPSHOT), 'utf8')) as OpenApiDocument)
    : ((await fetchServedDocument()) as unknown as OpenApiDocument);
  // `--only node|python|go`: one SDK's files.
  const onlyAt = process.argv.indexOf('--only');
  const only = onlyAt > 0 ? (process.argv[onlyAt + 1] as SdkLanguage) : undefined;
  if (only && !(only in EMITTERS)) throw new Error(`--only takes one of ${Object.keys(EMITTERS).join(', ')}`);
  const output = renderSdks(document, only);
  const changed = staleFiles(output);
  write(output);
  console.log(changed.length ? `sdks: ${changed.length} file(s) written or removed:\n  ${changed.join('\n  ')}` : 'sdks: up to date');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}
