// Small syntax-tree helpers shared by the taint engine, the pattern walker and the findings.
import ts from 'typescript';
import { pathOf, type AliasMap } from './aliases.ts';

/** Strips parentheses and type-only wrappers (`as`, `!`, `<T>`, `satisfies`). */
export function skipOuter(node: ts.Expression): ts.Expression {
  while (
    ts.isParenthesizedExpression(node) ||
    ts.isAsExpression(node) ||
    ts.isNonNullExpression(node) ||
    ts.isTypeAssertionExpression(node) ||
    ts.isSatisfiesExpression(node)
  ) {
    node = node.expression;
  }
  return node;
}

export function propertyNameText(name: ts.PropertyName | ts.BindingName): string | undefined {
  if (ts.isIdentifier(name) || ts.isStringLiteralLike(name) || ts.isNumericLiteral(name) || ts.isPrivateIdentifier(name)) return name.text;
  return undefined;
}

/** A string, number, boolean or null literal, once wrappers are stripped. */
export function isLiteral(node: ts.Expression): boolean {
  const n = skipOuter(node);
  return (
    ts.isStringLiteralLike(n) ||
    ts.isNumericLiteral(n) ||
    n.kind === ts.SyntaxKind.TrueKeyword ||
    n.kind === ts.SyntaxKind.FalseKeyword ||
    n.kind === ts.SyntaxKind.NullKeyword
  );
}

/** Normalised text of a node: whitespace runs collapsed, cut to `max` characters. */
export function nodeText(node: ts.Node, sf: ts.SourceFile, max = 120): string {
  const text = node.getText(sf).replace(/\s+/g, ' ').trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A name for a function from where it appears, for messages and fingerprints. */
export function functionName(node: ts.Node, sf: ts.SourceFile, aliases: AliasMap): string {
  const f = node as ts.FunctionLikeDeclaration;
  const parent = node.parent;
  const own = f.name && propertyNameText(f.name);
  if (ts.isFunctionDeclaration(node)) return own ?? 'default';
  if (ts.isMethodDeclaration(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node) || ts.isConstructorDeclaration(node)) {
    const method = ts.isConstructorDeclaration(node) ? 'constructor' : (own ?? '[computed]');
    const cls = parent && (ts.isClassDeclaration(parent) || ts.isClassExpression(parent)) ? parent.name?.text : undefined;
    return cls ? `${cls}.${method}` : method;
  }
  if (parent) {
    if (ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
    if (ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return propertyNameText(parent.name) ?? '[computed]';
    if (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken) return nodeText(parent.left, sf, 60);
    if (ts.isCallExpression(parent) || ts.isNewExpression(parent)) {
      const callee = pathOf(parent.expression, aliases)?.join('.') ?? 'call';
      const first = parent.arguments?.[0];
      const label = first && ts.isStringLiteralLike(first) ? first.text : '';
      return `${callee}(${label})`;
    }
  }
  return own ?? '<anonymous>';
}
