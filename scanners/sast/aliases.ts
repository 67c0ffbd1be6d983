// Resolves what a callee or member expression names, through the file's imports: with
// `import { exec as run } from 'node:child_process'`, `run(...)` is child_process.exec; with
// `const cp = require('child_process')`, `cp.exec(...)` is too. Only top-level bindings are
// collected (imports can only be there, and requires nearly always are): one pass over the
// file's statements, not its whole tree.
import ts from 'typescript';

/** Local name → the path it stands for. */
export type AliasMap = Map<string, string[]>;

/**
 * The project's own modules are not aliased: `import { deepMerge } from './merge'` keeps the
 * name `deepMerge`, which is what rules about local helpers match.
 */
function isRelative(specifier: string): boolean {
  return specifier.startsWith('.') || specifier.startsWith('/');
}

/** `node:fs/promises` → [fs, promises]; `lodash.merge` → [lodash, merge]; `@scope/pkg` → [@scope, pkg]. */
export function moduleSegments(specifier: string): string[] {
  return specifier.replace(/^node:/, '').split(/[./]/).filter((s) => s.length > 0);
}

function requiredModule(node: ts.Expression): string | undefined {
  if (
    ts.isCallExpression(node) &&
    ts.isIdentifier(node.expression) &&
    node.expression.text === 'require' &&
    node.arguments.length === 1 &&
    ts.isStringLiteralLike(node.arguments[0]!)
  ) {
    const specifier = (node.arguments[0] as ts.StringLiteralLike).text;
    return isRelative(specifier) ? undefined : specifier;
  }
  // `await import('x')` names the module namespace too.
  if (ts.isAwaitExpression(node)) {
    const inner = node.expression;
    if (ts.isCallExpression(inner) && inner.expression.kind === ts.SyntaxKind.ImportKeyword && inner.arguments.length === 1) {
      const arg = inner.arguments[0]!;
      if (ts.isStringLiteralLike(arg) && !isRelative(arg.text)) return arg.text;
    }
  }
  return undefined;
}

function isPromisify(node: ts.CallExpression, aliases: AliasMap): boolean {
  return node.arguments.length === 1 && lastName(node.expression, aliases) === 'promisify';
}

/**
 * The segments an expression names, or undefined when it is no name at all (a literal, an
 * arrow function…). Receivers that are calls keep their name with `()` (`res.status().send`);
 * computed members with a non-literal key become `[]`.
 */
export function pathOf(node: ts.Expression, aliases: AliasMap): string[] | undefined {
  switch (node.kind) {
    case ts.SyntaxKind.Identifier: {
      const name = (node as ts.Identifier).text;
      return aliases.get(name) ?? [name];
    }
    case ts.SyntaxKind.ThisKeyword:
      return ['this'];
    case ts.SyntaxKind.SuperKeyword:
      return ['super'];
    case ts.SyntaxKind.PropertyAccessExpression: {
      const p = node as ts.PropertyAccessExpression;
      return [...(pathOf(p.expression, aliases) ?? ['?']), p.name.text];
    }
    case ts.SyntaxKind.ElementAccessExpression: {
      const e = node as ts.ElementAccessExpression;
      const key = ts.isStringLiteralLike(e.argumentExpression) ? e.argumentExpression.text : '[]';
      return [...(pathOf(e.expression, aliases) ?? ['?']), key];
    }
    case ts.SyntaxKind.CallExpression: {
      const c = node as ts.CallExpression;
      const module = requiredModule(c);
      if (module !== undefined) return moduleSegments(module);
      const callee = pathOf(c.expression, aliases);
      if (!callee) return ['?()'];
      // util.promisify(fn) behaves like fn for every rule here.
      if (callee[callee.length - 1] === 'promisify' && c.arguments.length === 1) return pathOf(c.arguments[0]!, aliases);
      return [...callee.slice(0, -1), `${callee[callee.length - 1]}()`];
    }
    case ts.SyntaxKind.AwaitExpression: {
      const module = requiredModule(node);
      return module !== undefined ? moduleSegments(module) : pathOf((node as ts.AwaitExpression).expression, aliases);
    }
    case ts.SyntaxKind.ParenthesizedExpression:
    case ts.SyntaxKind.AsExpression:
    case ts.SyntaxKind.NonNullExpression:
    case ts.SyntaxKind.TypeAssertionExpression:
    case ts.SyntaxKind.SatisfiesExpression:
      return pathOf((node as ts.ParenthesizedExpression).expression, aliases);
    case ts.SyntaxKind.BinaryExpression: {
      // `(0, child_process_1.exec)(cmd)`: how TypeScript's CommonJS output calls imports.
      const b = node as ts.BinaryExpression;
      return b.operatorToken.kind === ts.SyntaxKind.CommaToken ? pathOf(b.right, aliases) : undefined;
    }
    default:
      return undefined;
  }
}

/** The last segment of `pathOf` without building the path: the index lookup key. */
export function lastName(node: ts.Expression, aliases: AliasMap): string | undefined {
  switch (node.kind) {
    case ts.SyntaxKind.Identifier: {
      const name = (node as ts.Identifier).text;
      const alias = aliases.get(name);
      return alias ? alias[alias.length - 1] : name;
    }
    case ts.SyntaxKind.PropertyAccessExpression:
      return (node as ts.PropertyAccessExpression).name.text;
    case ts.SyntaxKind.ElementAccessExpression: {
      const arg = (node as ts.ElementAccessExpression).argumentExpression;
      return ts.isStringLiteralLike(arg) ? arg.text : '[]';
    }
    case ts.SyntaxKind.ParenthesizedExpression:
    case ts.SyntaxKind.AsExpression:
    case ts.SyntaxKind.NonNullExpression:
    case ts.SyntaxKind.TypeAssertionExpression:
    case ts.SyntaxKind.SatisfiesExpression:
      return lastName((node as ts.ParenthesizedExpression).expression, aliases);
    case ts.SyntaxKind.BinaryExpression:
    case ts.SyntaxKind.CallExpression:
    case ts.SyntaxKind.AwaitExpression: {
      const path = pathOf(node, aliases);
      return path?.[path.length - 1];
    }
    default:
      return undefined;
  }
}

function bindPattern(name: ts.BindingName, base: string[], aliases: AliasMap): void {
  if (ts.isIdentifier(name)) {
    aliases.set(name.text, base);
    return;
  }
  if (ts.isObjectBindingPattern(name)) {
    for (const element of name.elements) {
      if (element.dotDotDotToken) continue;
      const key = element.propertyName ?? element.name;
      const keyText = ts.isIdentifier(key) || ts.isStringLiteralLike(key) ? key.text : undefined;
      if (keyText !== undefined) bindPattern(element.name, [...base, keyText], aliases);
    }
  }
}

/** Collects the aliases a file's top-level imports and `require`s introduce. */
export function collectAliases(sf: ts.SourceFile): AliasMap {
  const aliases: AliasMap = new Map();
  for (const stmt of sf.statements) {
    if (ts.isImportDeclaration(stmt)) {
      if (!ts.isStringLiteral(stmt.moduleSpecifier) || !stmt.importClause || isRelative(stmt.moduleSpecifier.text)) continue;
      const module = moduleSegments(stmt.moduleSpecifier.text);
      const clause = stmt.importClause;
      // A default import of a CommonJS module (every node: built-in) is the module object.
      if (clause.name) aliases.set(clause.name.text, module);
      const bindings = clause.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) aliases.set(bindings.name.text, module);
      else if (bindings) {
        for (const spec of bindings.elements) {
          const imported = (spec.propertyName ?? spec.name).text;
          aliases.set(spec.name.text, imported === 'default' ? module : [...module, imported]);
        }
      }
    } else if (ts.isImportEqualsDeclaration(stmt)) {
      const ref = stmt.moduleReference;
      if (ts.isExternalModuleReference(ref) && ts.isStringLiteral(ref.expression) && !isRelative(ref.expression.text)) {
        aliases.set(stmt.name.text, moduleSegments(ref.expression.text));
      }
    } else if (ts.isVariableStatement(stmt)) {
      for (const decl of stmt.declarationList.declarations) {
        if (!decl.initializer) continue;
        const path = aliasTarget(decl.initializer, aliases);
        if (path) bindPattern(decl.name, path, aliases);
      }
    }
  }
  return aliases;
}

/**
 * What a top-level initializer aliases: a require/import, `promisify(...)` of something that
 * resolves, or a member chain rooted at an existing alias (`const exec = cp.exec`). Anything
 * else is an ordinary value, not an alias.
 */
function aliasTarget(init: ts.Expression, aliases: AliasMap): string[] | undefined {
  let root: ts.Expression = init;
  while (ts.isPropertyAccessExpression(root) || ts.isParenthesizedExpression(root) || ts.isAsExpression(root)) root = root.expression;
  if (ts.isAwaitExpression(root) && requiredModule(root) !== undefined) return pathOf(init, aliases);
  if (ts.isCallExpression(root) && (requiredModule(root) !== undefined || isPromisify(root, aliases))) return pathOf(init, aliases);
  if (ts.isIdentifier(root) && aliases.has(root.text)) return pathOf(init, aliases);
  return undefined;
}
