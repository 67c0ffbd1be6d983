// Raw-HTML sinks of component templates, which the TypeScript parser does not see: Vue's `v-html`
// (and `:innerHTML` bindings), Svelte's `{@html …}`, and React's `dangerouslySetInnerHTML` in JSX.
// None of them escapes what it is given, unlike text interpolation, so a non-constant value there
// is stored or reflected XSS unless it went through a sanitizer. Angular's `[innerHTML]` is left out
// on purpose: Angular sanitizes it, and the way around that (bypassSecurityTrust*) is a rule of its own.
//
// A `.vue` or `.svelte` file is also code: its `<script>` blocks are analysed like any source file,
// with everything outside them blanked (newlines kept) so findings keep the file's line numbers.
import { createHash } from 'node:crypto';
import ts from 'typescript';
import type { Finding, Severity } from '../types.ts';

export const COMPONENT_FILE = /\.(?:vue|svelte)$/i;
export const RAW_HTML_PROP = 'dangerouslySetInnerHTML';

interface TemplateRule {
  id: string;
  title: string;
  message: string;
  severity: Severity;
  cwe: string;
}

const RAW_HTML: TemplateRule = {
  id: 'js-template-raw-html',
  title: 'Non-constant value rendered as raw HTML',
  message:
    'v-html, {@html} and dangerouslySetInnerHTML insert markup without escaping it. If any part of the value comes ' +
    'from users (a comment, a profile field, a query parameter), it runs script in the page (XSS). Render it as text, ' +
    'or sanitize it first (DOMPurify.sanitize).',
  severity: 'medium',
  cwe: 'CWE-79',
};

/** Calls that make a value safe to render as HTML, or that only yield developer-written text (i18n). */
const SAFE_CALL = /^(?:[\w$.]*\.)?(?:sanitize\w*|purify|xss|escape\w*|\$?t|\$?tc)\s*\(/i;
const STRING_LITERAL = /^(?:'[^'\\]*'|"[^"\\]*"|`[^`$\\]*`)$/;

function isConstantOrSafe(expression: string): boolean {
  const e = expression.trim();
  return e === '' || STRING_LITERAL.test(e) || SAFE_CALL.test(e);
}

// Attribute values in a template: v-html="…", v-html='…', :innerHTML="…", v-bind:innerHTML="…".
const VUE_RAW = /(?:\bv-html|(?:\bv-bind)?:(?:innerHTML|outerHTML))\s*=\s*(?:"([^"]*)"|'([^']*)')/g;
const SVELTE_RAW = /\{@html\s+([^}]*)\}/g;
const SCRIPT_BLOCK = /(<script\b[^>]*>)([\s\S]*?)<\/script\s*>/gi;

function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < index; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

function fingerprint(ruleId: string, path: string, expression: string, occurrence: number): string {
  return createHash('sha256').update(`${ruleId}\n${path}\n${expression}\n<template>\n${occurrence}`).digest('hex');
}

function finding(rule: TemplateRule, path: string, line: number, evidence: string, expression: string, occurrence: number, construct: string): Finding {
  const shown = evidence.trim();
  return {
    rule_id: rule.id,
    title: rule.title,
    severity: rule.severity,
    cwe: rule.cwe,
    location: { kind: 'file', path, line, end_line: line },
    evidence: shown.length > 200 ? `${shown.slice(0, 199)}…` : shown,
    fingerprint: fingerprint(rule.id, path, expression, occurrence),
    details: { message: rule.message, construct, expression },
  };
}

/** The source of a component file with everything but its `<script>` blocks blanked, lines kept. */
export function componentScript(text: string): string | undefined {
  let out = '';
  let last = 0;
  let found = false;
  for (const m of text.matchAll(SCRIPT_BLOCK)) {
    found = true;
    const bodyStart = m.index + m[1]!.length;
    out += text.slice(last, bodyStart).replace(/[^\n]/g, ' ') + m[2]!;
    last = bodyStart + m[2]!.length;
  }
  if (!found) return undefined;
  return out + text.slice(last).replace(/[^\n]/g, ' ');
}

/** Raw-HTML sinks in a Vue or Svelte component's markup (outside its scripts and styles). */
export function templateFindings(path: string, text: string): Finding[] {
  const markup = text.replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, (block) => block.replace(/[^\n]/g, ' '));
  const findings: Finding[] = [];
  const occurrences = new Map<string, number>();
  const pattern = /\.svelte$/i.test(path) ? SVELTE_RAW : VUE_RAW;
  for (const m of markup.matchAll(pattern)) {
    const expression = (m[1] ?? m[2] ?? '').replace(/\s+/g, ' ').trim();
    if (isConstantOrSafe(expression)) continue;
    const occurrence = occurrences.get(expression) ?? 0;
    occurrences.set(expression, occurrence + 1);
    const line = lineAt(markup, m.index);
    const lineText = text.split('\n', line)[line - 1] ?? m[0];
    findings.push(finding(RAW_HTML, path, line, lineText, expression, occurrence, pattern === SVELTE_RAW ? '{@html}' : 'v-html'));
  }
  return findings;
}

/** `dangerouslySetInnerHTML={{ __html: value }}` with a value that is neither constant nor sanitized. */
export function jsxRawHtmlFindings(sf: ts.SourceFile, path: string): Finding[] {
  if (!sf.text.includes(RAW_HTML_PROP)) return [];
  const findings: Finding[] = [];
  const occurrences = new Map<string, number>();
  const visit = (node: ts.Node): void => {
    if (ts.isJsxAttribute(node) && ts.isIdentifier(node.name) && node.name.text === RAW_HTML_PROP && node.initializer && ts.isJsxExpression(node.initializer)) {
      const value = rawHtmlValue(node.initializer.expression);
      if (value && !isConstantOrSafe(value.getText(sf))) {
        const expression = value.getText(sf).replace(/\s+/g, ' ').trim();
        const occurrence = occurrences.get(expression) ?? 0;
        occurrences.set(expression, occurrence + 1);
        const { line } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
        const lineText = sf.text.split('\n', line + 1)[line] ?? '';
        findings.push(finding(RAW_HTML, path, line + 1, lineText, expression, occurrence, 'dangerouslySetInnerHTML'));
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return findings;
}

/**
 * The `__html` value of `{{ __html: value }}`. Anything else (`={createMarkup()}`, `={props.html}`)
 * is left alone: where its markup comes from is not visible here, and guessing is noise.
 */
function rawHtmlValue(expression: ts.Expression | undefined): ts.Expression | undefined {
  if (!expression) return undefined;
  let e = expression;
  while (ts.isParenthesizedExpression(e)) e = e.expression;
  if (!ts.isObjectLiteralExpression(e)) return undefined;
  for (const p of e.properties) {
    if (ts.isPropertyAssignment(p) && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) && p.name.text === '__html') return p.initializer;
  }
  return undefined;
}
