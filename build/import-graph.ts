// The repository's import graph: which of our files import which, by value, and the folders that
// form. test/architecture.test.ts checks its layers, cycles and file sizes against it; run directly
// (npm run arch:graph [-- ROOT]) it prints the counts: folders, edges between them, cycles, and the
// largest hand-written files.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** Where the product's code lives (tests and benchmarks import anything and are not layered). */
export const PRODUCT = ['schemas', 'client', 'platform', 'gateway', 'scanners', 'api', 'reconciler', 'provider', 'cli', 'web/src', 'build', 'bin', 'sdks/codegen', 'sdks/cdktf'];
/** Everything written in this repository: the product, the SDKs' hand-written layers, tests, benchmarks, ops scripts. */
export const ALL_CODE = [...PRODUCT, 'sdks/node', 'sdks/python', 'sdks/go', 'sdks/testing', 'test', 'bench', 'ops'];
/** Written by generators (npm run client:types, sdks:generate, provider:cdktf), not by hand. */
export const GENERATED = [/^client\/api-types\.ts$/, /^sdks\/cdktf\/gen\//, /^sdks\/node\/src\/generated\//, /^sdks\/python\/aegis_sdk\/_generated\//, /^sdks\/go\/zz_generated_/];

export const CODE = /\.(ts|tsx|mts|mjs|js)$/;
/** Sources whose length counts: ours in any language (the SDKs are Python and Go too). */
export const SOURCE = /\.(ts|tsx|mts|mjs|js|py|go)$/;
const SKIPPED_DIRS = /(^|\/)(node_modules|dist|\.build|\.[^/]+)(\/|$)/;

export interface Import {
  file: string;
  specifier: string;
  /** The imported path, relative to the root. */
  target: string;
}

export class ImportGraph {
  constructor(readonly root: string) {}

  /** Files under `dir` (relative to the root) whose names match `kind`; generated outputs left out. */
  files(dir: string, kind = CODE): string[] {
    if (!existsSync(join(this.root, dir))) return [];
    return readdirSync(join(this.root, dir), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && kind.test(entry.name) && !entry.name.endsWith('.d.ts') && !entry.name.endsWith('.d.mts'))
      .map((entry) => relative(this.root, join(entry.parentPath, entry.name)))
      .filter((file) => !SKIPPED_DIRS.test(dirname(file)));
  }

  /**
   * The relative value imports of a file: static imports and re-exports, dynamic `import('…')`,
   * and modules started by URL (`new URL('./x.ts', import.meta.url)`: worker threads, helper
   * scripts). Type-only imports are erased at build time and do not count; packages are not ours.
   */
  valueImports(file: string): Import[] {
    const text = readFileSync(join(this.root, file), 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
    const specifiers: string[] = [];
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node)) {
        if (!isTypeOnly(node) && ts.isStringLiteral(node.moduleSpecifier)) specifiers.push(node.moduleSpecifier.text);
        return;
      }
      if (ts.isExportDeclaration(node)) {
        if (!node.isTypeOnly && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) specifiers.push(node.moduleSpecifier.text);
        return;
      }
      if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const [argument] = node.arguments;
        if (argument && ts.isStringLiteralLike(argument)) specifiers.push(argument.text);
      }
      if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'URL') {
        const [argument, base] = node.arguments ?? [];
        if (argument && ts.isStringLiteralLike(argument) && CODE.test(argument.text) && base && isImportMetaUrl(base)) specifiers.push(argument.text);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    return specifiers.filter((s) => s.startsWith('.')).map((specifier) => ({ file, specifier, target: relative(this.root, resolve(this.root, dirname(file), specifier)) }));
  }

  /** Folders (directories of `files`) and the folders each imports from. */
  folders(files: readonly string[], imports: readonly Import[]): Map<string, Set<string>> {
    const graph = new Map<string, Set<string>>();
    for (const file of files) if (!graph.has(dirname(file))) graph.set(dirname(file), new Set());
    for (const i of imports) {
      const from = dirname(i.file);
      const to = dirname(i.target);
      if (from !== to && graph.has(to)) graph.get(from)!.add(to);
    }
    return graph;
  }

  /** Hand-written sources under `dirs` with their line counts, longest first. */
  lengths(dirs: readonly string[]): { file: string; lines: number }[] {
    return dirs
      .flatMap((dir) => this.files(dir, SOURCE))
      .filter((file) => !GENERATED.some((pattern) => pattern.test(file)))
      .map((file) => ({ file, lines: readFileSync(join(this.root, file), 'utf8').split('\n').length }))
      .sort((a, b) => b.lines - a.lines);
  }
}

const isTypeOnly = (node: ts.ImportDeclaration): boolean => {
  const clause = node.importClause;
  if (!clause) return false;
  if (clause.isTypeOnly) return true;
  const bindings = clause.namedBindings;
  return !clause.name && bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
};

const isImportMetaUrl = (node: ts.Expression): boolean =>
  ts.isPropertyAccessExpression(node) && node.name.text === 'url' && ts.isMetaProperty(node.expression) && node.expression.keywordToken === ts.SyntaxKind.ImportKeyword;

/** The strongly connected components with more than one node (Tarjan's algorithm), each sorted. */
export function cycles(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) connect(v);
  return found;
}

/** Prints the counts for the repository at `root` (this one by default). */
function report(root: string): void {
  const graph = new ImportGraph(root);
  const files = PRODUCT.flatMap((dir) => graph.files(dir));
  const folders = graph.folders(files, files.flatMap((file) => graph.valueImports(file)));
  const found = cycles(folders);
  const edges = [...folders.values()].reduce((n, targets) => n + targets.size, 0);
  console.log(`${files.length} files in ${folders.size} folders, ${edges} edges between folders`);
  console.log(`${found.length} cycles, ${found.reduce((n, c) => n + c.length, 0)} folders in them${found.length ? ':' : ''}`);
  for (const component of found) console.log(`  ${component.length}: ${component.join(' ')}`);
  console.log('largest hand-written files:');
  for (const { file, lines } of graph.lengths(ALL_CODE).slice(0, 8)) console.log(`  ${String(lines).padStart(5)}  ${file}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) report(resolve(process.argv[2] ?? '.'));
