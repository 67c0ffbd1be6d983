// ---- framework heuristics ----
// Where request data enters without a source call: parameters of callbacks a rule names
// (`callback_param`), decorated or selected parameters (`decorated_param`, `function_param`:
// NestJS, Next.js server actions and route handlers), and route handlers, whether passed to a
// router or only shaped like one. Kept apart from the walk: these follow the frameworks, the walk
// follows the language.
import ts from 'typescript';
import { lastName, pathOf } from './aliases.ts';
import { propertyNameText, skipOuter } from './ast.ts';
import type { ParamSource } from './rules.ts';
import { TaintSummaries } from './taint-summaries.ts';
import { isFunctionNode, type FunctionNode, type Taint } from './taint-values.ts';

// What makes a function outside a router call look like a route handler (see `handlerShaped`).
const REQUEST_TYPE = /(^|\.)(\w*Request|Context|\w+Context|Ctx)$/;
const RESPONSE_NAME = /^(res|resp|response|reply|next)$/;
const RESPONSE_TYPE = /(^|\.)(\w*Response|\w*Reply|NextFunction)$/;

export abstract class TaintFrameworks extends TaintSummaries {
  /** Callbacks whose parameters are `callback_param` sources, found at the call they are passed to. */
  protected readonly callbackSeeds = new Map<ts.Node, Array<Taint | undefined>>();

  protected seedCallbacks(node: ts.CallExpression): void {
    const path = pathOf(node.expression, this.aliases);
    if (!path) return;
    for (const spec of this.rules.callbackSources.match(path)) {
      const mask = spec.mask & this.active;
      if (!mask) continue;
      if (!spec.argMatches.every(([i, re]) => {
        const a = node.arguments[i];
        const e = a && skipOuter(a);
        return e !== undefined && ts.isStringLiteralLike(e) && re.test(e.text);
      })) continue;
      const fns: FunctionNode[] = [];
      for (const a of node.arguments) {
        const e = skipOuter(a);
        if (!spec.options) {
          if (isFunctionNode(e)) fns.push(e);
        } else if (ts.isObjectLiteralExpression(e)) {
          for (const p of e.properties) {
            const key = p.name ? propertyNameText(p.name) : undefined;
            if (key === undefined || !spec.options.includes(key)) continue;
            if (ts.isMethodDeclaration(p)) fns.push(p);
            else if (ts.isPropertyAssignment(p) && isFunctionNode(skipOuter(p.initializer))) fns.push(skipOuter(p.initializer) as FunctionNode);
          }
        }
      }
      for (const f of fns) {
        const seeds = this.callbackSeeds.get(f) ?? [];
        for (const j of spec.params) {
          const p = f.parameters[j];
          if (!p) continue;
          const t = this.origin(p.name, mask, true, spec.strings);
          seeds[j] = seeds[j] ? { ...seeds[j]!, rules: seeds[j]!.rules | mask } : t;
        }
        this.callbackSeeds.set(f, seeds);
      }
    }
  }

  /**
   * `decorated_param` / `function_param` sources: the taint each parameter starts with, or nothing
   * when no parameter of this function is a source.
   */
  protected paramSourceTaints(node: FunctionNode): Array<Taint | undefined> | undefined {
    const specs = this.rules.paramSources;
    if (specs.length === 0 || node.parameters.length === 0) return undefined;
    let out: Array<Taint | undefined> | undefined;
    const add = (j: number, p: ts.ParameterDeclaration, mask: bigint, strings: boolean, container: boolean): void => {
      mask &= this.active;
      if (!mask) return;
      out ??= [];
      const prev = out[j];
      const t = this.origin(p.name, mask, container, strings && (!prev || prev.strings === true));
      out[j] = prev ? { ...t, rules: prev.rules | mask, container: prev.container || container } : t;
    };
    let fnSelected: ((s: Extract<ParamSource, { kind: 'function' }>) => boolean) | undefined;
    for (const spec of specs) {
      if (spec.kind === 'decorated') {
        node.parameters.forEach((p, j) => {
          for (const d of (ts.canHaveDecorators(p) ? ts.getDecorators(p) : undefined) ?? []) {
            const call = ts.isCallExpression(d.expression) ? d.expression : undefined;
            const name = lastName(call ? call.expression : d.expression, this.aliases);
            if (!name || !spec.decorators.has(name)) continue;
            const args = call?.arguments ?? [];
            // A pipe that converts or rejects (`@Param('id', ParseIntPipe)`, `new ParseUUIDPipe()`).
            const piped = args.some((a) => {
              const e = skipOuter(a);
              const n = ts.isNewExpression(e) ? lastName(e.expression, this.aliases) : ts.isIdentifier(e) || ts.isPropertyAccessExpression(e) ? lastName(e, this.aliases) : undefined;
              return n !== undefined && spec.unlessArg.has(n);
            });
            if (piped) continue;
            // No argument, or only pipes: the whole bag (`@Body() dto`); a name picks one value.
            const named = args.length > 0 && ts.isStringLiteralLike(skipOuter(args[0]!));
            add(j, p, spec.mask, spec.strings, !named);
          }
        });
      } else {
        fnSelected ??= this.functionSelector(node);
        if (!fnSelected(spec)) continue;
        node.parameters.forEach((p, j) => {
          if (spec.index === 'any' || spec.index.includes(j)) add(j, p, spec.mask, spec.strings, true);
        });
      }
    }
    return out;
  }

  /** Which `function_param` selections (export name, file, directive) a function meets. */
  protected functionSelector(node: FunctionNode): (s: Extract<ParamSource, { kind: 'function' }>) => boolean {
    const directives = (stmts: readonly ts.Statement[] | undefined): string[] => {
      const out: string[] = [];
      for (const st of stmts ?? []) {
        if (ts.isExpressionStatement(st) && ts.isStringLiteral(st.expression)) out.push(st.expression.text);
        else break;
      }
      return out;
    };
    const own = node.body && ts.isBlock(node.body) ? directives(node.body.statements) : [];
    const fileDirectives = directives(this.sf.statements);
    const exportedAs = exportName(node);
    return (s) => {
      if (s.file && !s.file.test(this.file.replace(/\\/g, '/'))) return false;
      const exportOk = exportedAs !== undefined && (!s.exported || s.exported.has('*') || s.exported.has(exportedAs));
      if (s.directive) {
        // Its own directive marks the function (an inline server action); the file's, its exports.
        if (own.includes(s.directive)) return !s.exported || exportOk;
        return fileDirectives.includes(s.directive) && exportOk;
      }
      return exportOk;
    };
  }

  /** Enters a route handler: its destructured first parameter holds request data. */
  protected enterHandler(node: FunctionNode, label: string): void {
    this.enter(node, label, (params) => params.forEach((p, j) => (j === 0 && ts.isObjectBindingPattern(p.name) ? this.bindRouteParam(p.name) : this.bindParam(p, undefined))));
  }

  /**
   * A function not passed straight to a router that still looks like a route handler, so that
   * handlers returned from factories (`return ({ query }: Request, res: Response) => …`) or
   * exported on their own keep their request data: the first parameter is destructured and names
   * a request field, and either that parameter is typed as a request or context, or the next one
   * is the response (`res`, `reply`, typed `Response`) or `next`.
   */
  protected handlerShaped(node: FunctionNode): boolean {
    if (this.rules.routeParams.size === 0) return false;
    const [first, second] = node.parameters;
    if (!first || !ts.isObjectBindingPattern(first.name)) return false;
    const names = (p: ts.ObjectBindingPattern): boolean =>
      p.elements.some((el) => {
        if (el.dotDotDotToken) return false;
        const key = propertyNameText(el.propertyName ?? el.name) ?? '';
        return this.rules.routeParams.has(key) || (key === 'request' && ts.isObjectBindingPattern(el.name) && names(el.name));
      });
    if (!names(first.name)) return false;
    const typeName = (t: ts.TypeNode | undefined): string => (t && ts.isTypeReferenceNode(t) ? t.typeName.getText(this.sf) : '');
    if (REQUEST_TYPE.test(typeName(first.type))) return true;
    if (!second) return false;
    // A declared type decides (`res: number` is no response); untyped or `any`, the name does.
    if (second.type && second.type.kind !== ts.SyntaxKind.AnyKeyword) return RESPONSE_TYPE.test(typeName(second.type));
    return ts.isIdentifier(second.name) && RESPONSE_NAME.test(second.name.text);
  }

  protected bindRouteParam(pattern: ts.ObjectBindingPattern): void {
    for (const el of pattern.elements) {
      const key = el.dotDotDotToken ? undefined : propertyNameText(el.propertyName ?? el.name);
      // Koa: `({ request: { body } }, next)` — the request's fields, one level down.
      if (key === 'request' && ts.isObjectBindingPattern(el.name)) {
        this.bindRouteParam(el.name);
        continue;
      }
      const mask = key !== undefined ? (this.rules.routeParams.get(key) ?? 0n) & this.active : 0n;
      this.bind(el.name, mask ? this.origin(el, mask, true, this.rules.stringRouteParams.has(key!)) : undefined, undefined);
    }
  }

}

/** The name a function is exported under: `export function GET`, `export const POST = …`, `export default`. */
function exportName(node: ts.Node): string | undefined {
  const exported = (n: ts.Node): boolean => ts.canHaveModifiers(n) && (ts.getModifiers(n) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  const isDefault = (n: ts.Node): boolean => ts.canHaveModifiers(n) && (ts.getModifiers(n) ?? []).some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);
  if (ts.isFunctionDeclaration(node)) {
    if (!exported(node)) return undefined;
    return isDefault(node) ? 'default' : node.name?.text;
  }
  let p: ts.Node = node.parent;
  while (p && (ts.isParenthesizedExpression(p) || ts.isAsExpression(p) || ts.isSatisfiesExpression(p) || ts.isCallExpression(p))) p = p.parent;
  if (p && ts.isExportAssignment(p)) return 'default';
  if (p && ts.isVariableDeclaration(p) && ts.isIdentifier(p.name) && ts.isVariableDeclarationList(p.parent) && ts.isVariableStatement(p.parent.parent) && exported(p.parent.parent)) return p.name.text;
  return undefined;
}
