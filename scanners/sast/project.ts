// What the taint engine needs to follow calls into named functions: per file, an index of its
// functions, exports and relative imports (`FileModel`), and per scan, the project's files so an
// import of `./util` finds `util.ts` (`Project`). Everything is lazy: a module is read, parsed and
// indexed only when a tainted value is passed to a function imported from it.
import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import ts from 'typescript';
import { collectAliases, type AliasMap } from './aliases.ts';
import { propertyNameText, skipOuter } from './ast.ts';
import { looksBinary, looksMinified } from './files.ts';

export type FunctionNode = ts.FunctionLikeDeclaration;

/** What an imported local name stands for: an export of another module, or the module itself (`*`). */
interface ImportRef {
  module: string;
  name: string;
}

type ExportRef = { kind: 'fn'; node: FunctionNode } | { kind: 'local'; name: string } | { kind: 're'; module: string; name: string };

const EXTENSIONS = ['.ts', '.tsx', '.js', '.jsx', '.mjs', '.cjs', '.mts', '.cts'];
/** Bounds: modules kept parsed at once (cleared, with their summaries, beyond it) and re-export hops. */
export const MAX_CACHED_MODULES = 2000;
const MAX_REEXPORT_HOPS = 4;

function isFunctionValue(node: ts.Expression | undefined): node is ts.ArrowFunction | ts.FunctionExpression {
  if (!node) return false;
  const n = skipOuter(node);
  return ts.isArrowFunction(n) || ts.isFunctionExpression(n);
}

function fnValue(node: ts.Expression): FunctionNode {
  return skipOuter(node) as FunctionNode;
}

function relativeSpecifier(node: ts.Expression | undefined): string | undefined {
  if (!node) return undefined;
  const n = skipOuter(node);
  if (ts.isStringLiteralLike(n) && (n.text.startsWith('./') || n.text.startsWith('../') || n.text === '.' || n.text === '..')) return n.text;
  return undefined;
}

/** `require('./x')` → './x'. */
function requireOf(node: ts.Expression): string | undefined {
  const n = skipOuter(node);
  if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === 'require' && n.arguments.length === 1) return relativeSpecifier(n.arguments[0]);
  return undefined;
}

function hasModifier(node: ts.Node, kind: ts.SyntaxKind): boolean {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === kind);
}

/** `module.exports` or `exports`. */
function isExportsObject(node: ts.Expression): boolean {
  const n = skipOuter(node);
  if (ts.isIdentifier(n)) return n.text === 'exports';
  return ts.isPropertyAccessExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === 'module' && n.name.text === 'exports';
}

export class FileModel {
  /** Name → function: declarations, `const f = () => …`, `obj.f` of object literals, `Class.m`. */
  readonly functions = new Map<string, FunctionNode | null>();
  readonly exports = new Map<string, ExportRef>();
  readonly imports = new Map<string, ImportRef>();
  /**
   * Instances: `d` / `this.d` → the class or constructor function `X` of `d = new X(…)` anywhere in
   * the file (by name, like variables; bound to two different constructors: ambiguous, null).
   */
  readonly instances = new Map<string, string | null>();

  constructor(
    readonly path: string,
    readonly sf: ts.SourceFile,
    readonly aliases: AliasMap,
  ) {
    this.index();
  }

  private addFunction(name: string, node: FunctionNode): void {
    // The same name bound twice (in different scopes): ambiguous, so not followed.
    this.functions.set(name, this.functions.has(name) ? null : node);
  }

  private addInstance(key: string, init: ts.Expression): void {
    const n = skipOuter(init);
    if (!ts.isNewExpression(n) || !ts.isIdentifier(n.expression)) return;
    const cls = n.expression.text;
    this.instances.set(key, this.instances.has(key) && this.instances.get(key) !== cls ? null : cls);
  }

  /** A constructor function's `this.m = function/arrow` statements in its body: `X.m`. */
  private constructorMembers(name: string, fn: FunctionNode): void {
    if (!fn.body || !ts.isBlock(fn.body)) return;
    for (const st of fn.body.statements) {
      if (!ts.isExpressionStatement(st) || !ts.isBinaryExpression(st.expression) || st.expression.operatorToken.kind !== ts.SyntaxKind.EqualsToken) continue;
      const { left, right } = st.expression;
      if (ts.isPropertyAccessExpression(left) && left.expression.kind === ts.SyntaxKind.ThisKeyword && isFunctionValue(right)) this.addFunction(`${name}.${left.name.text}`, fnValue(right));
    }
  }

  private objectMembers(prefix: string, obj: ts.ObjectLiteralExpression, exported: boolean): void {
    for (const p of obj.properties) {
      const key = p.name && propertyNameText(p.name);
      if (key === undefined) continue;
      if (ts.isMethodDeclaration(p)) {
        this.addFunction(`${prefix}.${key}`, p);
        if (exported) this.exports.set(key, { kind: 'fn', node: p });
      } else if (ts.isPropertyAssignment(p)) {
        if (isFunctionValue(p.initializer)) {
          this.addFunction(`${prefix}.${key}`, fnValue(p.initializer));
          if (exported) this.exports.set(key, { kind: 'fn', node: fnValue(p.initializer) });
        } else if (exported && ts.isIdentifier(skipOuter(p.initializer))) this.exports.set(key, { kind: 'local', name: (skipOuter(p.initializer) as ts.Identifier).text });
      } else if (ts.isShorthandPropertyAssignment(p) && exported) this.exports.set(key, { kind: 'local', name: p.name.text });
    }
  }

  private index(): void {
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionDeclaration(node) && node.name && node.body) {
        this.addFunction(node.name.text, node);
        this.constructorMembers(node.name.text, node);
      } else if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
        this.addInstance(node.name.text, node.initializer);
        if (isFunctionValue(node.initializer)) {
          this.addFunction(node.name.text, fnValue(node.initializer));
          this.constructorMembers(node.name.text, fnValue(node.initializer));
        } else if (ts.isObjectLiteralExpression(skipOuter(node.initializer))) this.objectMembers(node.name.text, skipOuter(node.initializer) as ts.ObjectLiteralExpression, false);
      } else if ((ts.isClassDeclaration(node) || ts.isClassExpression(node)) && node.name) {
        for (const m of node.members) {
          const key = m.name && propertyNameText(m.name);
          if (key === undefined) continue;
          if (ts.isMethodDeclaration(m) && m.body) this.addFunction(`${node.name.text}.${key}`, m);
          else if (ts.isPropertyDeclaration(m) && isFunctionValue(m.initializer)) this.addFunction(`${node.name.text}.${key}`, fnValue(m.initializer));
        }
      } else if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
        const left = skipOuter(node.left);
        // `d = new X()`, `this.d = new X()`; `X.prototype.m = function …`.
        if (ts.isIdentifier(left)) this.addInstance(left.text, node.right);
        else if (ts.isPropertyAccessExpression(left)) {
          const base = skipOuter(left.expression);
          if (base.kind === ts.SyntaxKind.ThisKeyword) this.addInstance(`this.${left.name.text}`, node.right);
          else if (ts.isPropertyAccessExpression(base) && base.name.text === 'prototype' && ts.isIdentifier(base.expression) && isFunctionValue(node.right)) {
            this.addFunction(`${base.expression.text}.${left.name.text}`, fnValue(node.right));
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(this.sf);
    for (const s of this.sf.statements) this.topLevel(s);
  }

  private topLevel(s: ts.Statement): void {
    if (ts.isImportDeclaration(s)) {
      const spec = relativeSpecifier(s.moduleSpecifier as ts.Expression);
      const clause = s.importClause;
      if (!spec || !clause || clause.isTypeOnly) return;
      if (clause.name) this.imports.set(clause.name.text, { module: spec, name: 'default' });
      const nb = clause.namedBindings;
      if (nb && ts.isNamespaceImport(nb)) this.imports.set(nb.name.text, { module: spec, name: '*' });
      else if (nb) for (const el of nb.elements) this.imports.set(el.name.text, { module: spec, name: (el.propertyName ?? el.name).text });
    } else if (ts.isImportEqualsDeclaration(s)) {
      const ref = s.moduleReference;
      if (ts.isExternalModuleReference(ref)) {
        const spec = relativeSpecifier(ref.expression);
        if (spec) this.imports.set(s.name.text, { module: spec, name: '*' });
      }
    } else if (ts.isVariableStatement(s)) {
      const exported = hasModifier(s, ts.SyntaxKind.ExportKeyword);
      for (const d of s.declarationList.declarations) {
        if (exported && ts.isIdentifier(d.name)) this.exports.set(d.name.text, { kind: 'local', name: d.name.text });
        if (!d.initializer) continue;
        // `require('./x')`, `require('./x').f`, `const { f } = require('./x')`.
        const init = skipOuter(d.initializer);
        let spec = requireOf(init);
        let member: string | undefined;
        if (!spec && ts.isPropertyAccessExpression(init)) {
          spec = requireOf(init.expression);
          member = init.name.text;
        }
        if (!spec) continue;
        if (ts.isIdentifier(d.name)) this.imports.set(d.name.text, { module: spec, name: member ?? '*' });
        else if (ts.isObjectBindingPattern(d.name) && !member) {
          for (const el of d.name.elements) {
            const key = propertyNameText(el.propertyName ?? el.name);
            if (key !== undefined && ts.isIdentifier(el.name)) this.imports.set(el.name.text, { module: spec, name: key });
          }
        }
      }
    } else if (ts.isFunctionDeclaration(s) && hasModifier(s, ts.SyntaxKind.ExportKeyword) && s.body) {
      if (hasModifier(s, ts.SyntaxKind.DefaultKeyword)) this.exports.set('default', { kind: 'fn', node: s });
      if (s.name) this.exports.set(s.name.text, { kind: 'fn', node: s });
    } else if (ts.isExportAssignment(s)) {
      const e = skipOuter(s.expression);
      const name = s.isExportEquals ? '=' : 'default';
      if (isFunctionValue(e)) this.exports.set(name, { kind: 'fn', node: fnValue(e) });
      else if (ts.isIdentifier(e)) this.exports.set(name, { kind: 'local', name: e.text });
      else if (ts.isObjectLiteralExpression(e)) this.objectMembers('<export>', e, true);
    } else if (ts.isExportDeclaration(s) && s.exportClause && ts.isNamedExports(s.exportClause) && !s.isTypeOnly) {
      const spec = s.moduleSpecifier ? relativeSpecifier(s.moduleSpecifier as ts.Expression) : undefined;
      if (s.moduleSpecifier && !spec) return;
      for (const el of s.exportClause.elements) {
        const local = (el.propertyName ?? el.name).text;
        this.exports.set(el.name.text, spec ? { kind: 're', module: spec, name: local } : { kind: 'local', name: local });
      }
    } else if (ts.isExpressionStatement(s) && ts.isBinaryExpression(s.expression) && s.expression.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
      const { left, right } = s.expression;
      const r = skipOuter(right);
      if (isExportsObject(left)) {
        // `module.exports = { f, g: h, k() {} }` or `module.exports = f`.
        if (ts.isObjectLiteralExpression(r)) this.objectMembers('<export>', r, true);
        else if (isFunctionValue(r)) this.exports.set('=', { kind: 'fn', node: fnValue(r) });
        else if (ts.isIdentifier(r)) this.exports.set('=', { kind: 'local', name: r.text });
      } else if (ts.isPropertyAccessExpression(left) && isExportsObject(left.expression)) {
        // `exports.f = …`, `module.exports.f = …`.
        const key = left.name.text;
        if (isFunctionValue(r)) this.exports.set(key, { kind: 'fn', node: fnValue(r) });
        else if (ts.isIdentifier(r)) this.exports.set(key, { kind: 'local', name: r.text });
      }
    }
  }

  /** A function of this file by the name a call uses (`f`, `obj.f`, `Class.m`). */
  local(name: string): FunctionNode | undefined {
    return this.functions.get(name) ?? undefined;
  }
}

export interface ResolvedFunction {
  model: FileModel;
  node: FunctionNode;
}

/**
 * The scanned project: its files by repository-relative path and the modules parsed so far.
 * One per scan; analyses of the project's files share it (and its summaries).
 */
export class Project {
  private readonly models = new Map<string, FileModel | null>();
  /** Memoised summaries, keyed by file, function and the shape of the tainted arguments. */
  readonly summaries = new Map<string, unknown>();

  constructor(
    /** Repository-relative POSIX path → absolute path. */
    private readonly files: ReadonlyMap<string, string>,
  ) {}

  /** Per module, from its text alone: the taint rules whose sinks may be in it, and the project modules it imports. */
  private readonly sinkInfo = new Map<string, { mask: bigint; imports: string[] }>();

  private moduleSinks(path: string, sinksOf: (text: string) => bigint): { mask: bigint; imports: string[] } {
    let info = this.sinkInfo.get(path);
    if (info) return info;
    info = { mask: 0n, imports: [] };
    const absolute = this.files.get(path);
    if (absolute) {
      try {
        const text = readFileSync(absolute, 'utf8');
        info.mask = sinksOf(text);
        for (const spec of relativeSpecifiers(text)) {
          const p = this.resolvePath(path, spec);
          if (p !== undefined) info.imports.push(p);
        }
      } catch {
        // unreadable: nothing reachable
      }
    }
    this.sinkInfo.set(path, info);
    return info;
  }

  /**
   * Taint rules whose sinks may be in a module or in the relative modules it imports (up to
   * `hops`), from their text alone (the prefilter's test): what a file passing request data to
   * that module could reach. Each module is read and tokenised once per scan.
   */
  reachableSinks(path: string, sinksOf: (text: string) => bigint, hops = 2): bigint {
    let mask = 0n;
    let frontier = [path];
    const seen = new Set(frontier);
    for (let h = 0; h <= hops && frontier.length > 0; h++) {
      const next: string[] = [];
      for (const p of frontier) {
        const info = this.moduleSinks(p, sinksOf);
        mask |= info.mask;
        for (const q of info.imports) if (!seen.has(q)) (seen.add(q), next.push(q));
      }
      frontier = next;
    }
    return mask;
  }

  /** A module parsed already, if any (no parsing here). */
  cached(path: string): FileModel | undefined {
    return this.models.get(path) ?? undefined;
  }

  /** Registers an already-parsed file (the one being analysed) so it is not parsed again. */
  adopt(model: FileModel): void {
    if (this.models.has(model.path)) return;
    this.bound();
    this.models.set(model.path, model);
  }

  /** Parsed modules hold their syntax trees: drop them (and the summaries pointing into them) beyond the cap. */
  private bound(): void {
    if (this.models.size < MAX_CACHED_MODULES) return;
    this.models.clear();
    this.summaries.clear();
  }

  resolvePath(from: string, specifier: string): string | undefined {
    const base = posix.normalize(posix.join(posix.dirname(from), specifier));
    if (base.startsWith('../')) return undefined;
    const candidates = [base];
    // TypeScript's ESM convention: `import './x.js'` names `x.ts`.
    const js = /\.(m|c)?js$/.exec(base);
    if (js) {
      const stem = base.slice(0, -js[0].length);
      candidates.push(`${stem}.${js[1] ?? ''}ts`, `${stem}.tsx`);
    }
    for (const ext of EXTENSIONS) candidates.push(base + ext);
    for (const ext of EXTENSIONS) candidates.push(`${base}/index${ext}`);
    return candidates.find((c) => this.files.has(c));
  }

  model(path: string): FileModel | undefined {
    const cached = this.models.get(path);
    if (cached !== undefined) return cached ?? undefined;
    const absolute = this.files.get(path);
    let model: FileModel | null = null;
    if (absolute) {
      try {
        const data = readFileSync(absolute);
        const text = data.toString('utf8');
        if (!looksBinary(data) && !looksMinified(text)) {
          const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, scriptKindOf(path));
          model = new FileModel(path, sf, collectAliases(sf));
        }
      } catch {
        model = null;
      }
    }
    this.bound();
    this.models.set(path, model);
    return model ?? undefined;
  }

  /** What module `from` imports under `spec`, resolved within the project. */
  moduleOf(from: FileModel, spec: string): FileModel | undefined {
    const path = this.resolvePath(from.path, spec);
    return path === undefined ? undefined : this.model(path);
  }

  /** The function a module exports as `name` (`=`/`default` for the module itself). */
  exported(model: FileModel, name: string, hops = 0): ResolvedFunction | undefined {
    if (hops > MAX_REEXPORT_HOPS) return undefined;
    const names = name === '*' ? ['=', 'default'] : name === 'default' ? ['default', '='] : [name];
    for (const n of names) {
      const ref = model.exports.get(n);
      if (!ref) continue;
      if (ref.kind === 'fn') return { model, node: ref.node };
      if (ref.kind === 'local') {
        const node = model.local(ref.name);
        if (node) return { model, node };
        const imp = model.imports.get(ref.name);
        if (imp) {
          const target = this.moduleOf(model, imp.module);
          if (target) return this.exported(target, imp.name, hops + 1);
        }
        continue;
      }
      const target = this.moduleOf(model, ref.module);
      if (target) return this.exported(target, ref.name, hops + 1);
    }
    // `module.exports = { … }` members are indexed as exports directly; `exports.f` too.
    return undefined;
  }

  /** The module and local name of what a module exports as `name` (a class or constructor function). */
  exportedName(model: FileModel, name: string, hops = 0): { model: FileModel; name: string } | undefined {
    if (hops > MAX_REEXPORT_HOPS) return undefined;
    const names = name === '*' ? ['=', 'default'] : name === 'default' ? ['default', '='] : [name];
    for (const n of names) {
      const ref = model.exports.get(n);
      if (!ref) continue;
      if (ref.kind === 'fn') {
        const id = (ts.isFunctionDeclaration(ref.node) || ts.isFunctionExpression(ref.node)) && ref.node.name ? ref.node.name.text : undefined;
        if (id) return { model, name: id };
        continue;
      }
      if (ref.kind === 'local') {
        const imp = model.imports.get(ref.name);
        if (!imp) return { model, name: ref.name };
        const target = this.moduleOf(model, imp.module);
        if (target) return this.exportedName(target, imp.name, hops + 1);
        continue;
      }
      const target = this.moduleOf(model, ref.module);
      if (target) return this.exportedName(target, ref.name, hops + 1);
    }
    return undefined;
  }
}

const SPECIFIER = /(?:\bfrom\s*|\brequire\s*\(\s*|\bimport\s*\(\s*)['"](\.\.?\/[^'"]*)['"]/g;

/** The relative module specifiers a text imports or requires (from the text alone). */
export function relativeSpecifiers(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(SPECIFIER)) out.add(m[1]!);
  return [...out];
}

function scriptKindOf(path: string): ts.ScriptKind {
  if (/\.tsx$/i.test(path)) return ts.ScriptKind.TSX;
  if (/\.[cm]?ts$/i.test(path)) return ts.ScriptKind.TS;
  if (/\.jsx$/i.test(path)) return ts.ScriptKind.JSX;
  return ts.ScriptKind.JS;
}
