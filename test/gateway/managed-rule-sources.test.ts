// The rule data is RE2 syntax written in TypeScript strings. In a plain string literal a regex
// escape loses its backslash without a word (`'python\.\d+'` is the pattern `python.d+`), so every
// pattern piece that holds one must be a String.raw template. This reads the data files as
// TypeScript and fails on any string literal whose escapes JavaScript would drop.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { expect, it } from 'vitest';

const DATA = join(import.meta.dirname, '../../schemas/managed-rules/data');
/** Escapes JavaScript gives a meaning in a string literal; any other `\x` is `x`. */
const MEANINGFUL_ESCAPE = /^\\(?:[nrtbfv0'"\\\n]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|u\{[0-9a-fA-F]+\})/;

function droppedEscapes(source: ts.SourceFile): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    // String.raw`…` keeps every backslash: only its substitutions are read.
    if (ts.isTaggedTemplateExpression(node)) {
      if (ts.isTemplateExpression(node.template)) for (const span of node.template.templateSpans) visit(span.expression);
      return;
    }
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
      const raw = node.getText(source);
      for (let i = raw.indexOf('\\'); i >= 0; i = raw.indexOf('\\', i + 2)) {
        if (!MEANINGFUL_ESCAPE.test(raw.slice(i))) {
          const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
          found.push(`${source.fileName}:${line + 1}: ${raw.slice(Math.max(0, i - 20), i + 10)}`);
          break;
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

it('rule data holds no regex escape in a plain string (it would lose its backslash)', () => {
  const files = readdirSync(DATA).filter((name) => name.endsWith('.ts'));
  expect(files.length).toBeGreaterThan(10);
  const dropped = files.flatMap((name) => droppedEscapes(ts.createSourceFile(name, readFileSync(join(DATA, name), 'utf8'), ts.ScriptTarget.Latest, true)));
  expect(dropped).toEqual([]);
});
