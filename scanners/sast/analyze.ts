// One file: prefilter, parse, run the taint engine and the pattern walker for the rules that can
// apply, and turn their hits into findings. Pure: text in, findings out.
import { createHash } from 'node:crypto';
import ts from 'typescript';
import type { Finding } from '../types.ts';
import { collectAliases } from './aliases.ts';
import { nodeText } from './ast.ts';
import { PatternWalker } from './patterns.ts';
import { activeRules, sinkRules } from './prefilter.ts';
import type { RuleMeta, RuleSet } from './rules.ts';
import { relativeSpecifiers, type Project } from './project.ts';
import { newCallContext, TaintEngine } from './taint.ts';
import { jsxRawHtmlFindings, RAW_HTML_PROP } from './templates.ts';

const MAX_EVIDENCE = 200;

export function scriptKind(path: string): ts.ScriptKind {
  if (/\.tsx$/i.test(path)) return ts.ScriptKind.TSX;
  if (/\.[cm]?ts$/i.test(path)) return ts.ScriptKind.TS;
  if (/\.jsx$/i.test(path)) return ts.ScriptKind.JSX;
  return ts.ScriptKind.JS;
}

interface Hit {
  meta: RuleMeta;
  /** Where the finding is, when not in the analysed file (a sink inside an imported module's function). */
  at?: { sf: ts.SourceFile; path: string };
  node: ts.Node;
  functionName: string;
  details: Record<string, unknown>;
  secret?: ts.Node;
}

function lineOf(sf: ts.SourceFile, pos: number): number {
  return sf.getLineAndCharacterOfPosition(pos).line + 1;
}

/** The line a finding starts on, trimmed and cut, with a secret literal on it masked. */
function evidence(sf: ts.SourceFile, node: ts.Node, secret: ts.Node | undefined): string {
  const start = node.getStart(sf);
  const { line } = sf.getLineAndCharacterOfPosition(start);
  const lineStart = sf.getLineStarts()[line]!;
  const lineEnd = sf.getLineEndOfPosition(start);
  let text = sf.text.slice(lineStart, lineEnd);
  if (secret) {
    const s = secret.getStart(sf) - lineStart;
    const e = secret.getEnd() - lineStart;
    if (s >= 0 && e <= text.length) {
      const raw = text.slice(s, e);
      const masked = `${raw[0]}${raw.slice(1, 3)}${'*'.repeat(Math.max(3, Math.min(8, raw.length - 4)))}${raw[raw.length - 1]}`;
      text = text.slice(0, s) + masked + text.slice(e);
    }
  }
  text = text.trim();
  return text.length > MAX_EVIDENCE ? `${text.slice(0, MAX_EVIDENCE - 1)}…` : text;
}

/**
 * sha256 of rule, path, the sink's normalised text and its enclosing function, plus how many
 * identical ones precede it there: stable when code above moves, distinct for repeated sinks.
 */
function fingerprint(ruleId: string, path: string, text: string, fn: string, occurrence: number): string {
  return createHash('sha256').update(`${ruleId}\n${path}\n${text}\n${fn}\n${occurrence}`).digest('hex');
}

export function toFindings(sf: ts.SourceFile, path: string, hits: Hit[]): Finding[] {
  const elsewhere = new Map<string, { sf: ts.SourceFile; hits: Hit[] }>();
  const here: Hit[] = [];
  for (const h of hits) {
    if (!h.at || h.at.path === path) here.push(h);
    else {
      const group = elsewhere.get(h.at.path) ?? { sf: h.at.sf, hits: [] };
      group.hits.push(h);
      elsewhere.set(h.at.path, group);
    }
  }
  const out = fileFindings(sf, path, here);
  for (const [p, g] of elsewhere) out.push(...fileFindings(g.sf, p, g.hits));
  return out;
}

function fileFindings(sf: ts.SourceFile, path: string, hits: Hit[]): Finding[] {
  hits.sort((a, b) => a.node.getStart(sf) - b.node.getStart(sf) || a.meta.id.localeCompare(b.meta.id));
  const occurrences = new Map<string, number>();
  return hits.map((h) => {
    const start = h.node.getStart(sf);
    const { line, character } = sf.getLineAndCharacterOfPosition(start);
    const text = nodeText(h.node, sf, 4000);
    const key = `${h.meta.id}\n${text}\n${h.functionName}`;
    const occurrence = occurrences.get(key) ?? 0;
    occurrences.set(key, occurrence + 1);
    return {
      rule_id: h.meta.id,
      title: h.meta.title,
      severity: h.meta.severity,
      cwe: h.meta.cwe,
      location: { kind: 'file', path, line: line + 1, column: character + 1, end_line: lineOf(sf, h.node.getEnd()) },
      evidence: evidence(sf, h.node, h.secret),
      fingerprint: fingerprint(h.meta.id, path, text, h.functionName, occurrence),
      details: { message: h.meta.message, function: h.functionName, ...h.details },
    };
  });
}

export interface FileAnalysis {
  findings: Finding[];
  /** False when the prefilter showed no rule could match, so the file was not parsed. */
  parsed: boolean;
}

// `import … from './x'`, `require('../x')`: the file may pass request data to the project's modules.
const RELATIVE_IMPORT = /(?:\bfrom\s*|\brequire\s*\(\s*|\bimport\s*\(\s*)['"]\.\.?\//;

/**
 * Analyses one file's text; `path` is the repository-relative path used in findings. With the
 * scan's `project`, calls into the project's modules are followed (function summaries).
 */
export function analyzeSource(path: string, text: string, rules: RuleSet, project?: Project): FileAnalysis {
  const active = activeRules(rules, text);
  let taint = active.taint;
  // A source here and the sink in an imported module: the prefilter cannot see that from this text.
  // Only for rules one of whose sinks occurs in an imported module (or the modules it imports).
  if (project && (active.sources & ~taint) !== 0n && RELATIVE_IMPORT.test(text)) {
    let reach = 0n;
    for (const spec of relativeSpecifiers(text)) {
      const target = project.resolvePath(path, spec);
      if (target !== undefined) reach |= project.reachableSinks(target, (t) => sinkRules(rules, t));
    }
    taint |= active.sources & reach;
  }
  const rawHtml = text.includes(RAW_HTML_PROP);
  if (!active.any && taint === 0n && !rawHtml) return { findings: [], parsed: false };
  // Already parsed as a module another file called into: reuse that tree.
  const known = project?.cached(path);
  const model = known && known.sf.text === text ? known : undefined;
  const sf = model?.sf ?? ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, scriptKind(path));
  const aliases = model?.aliases ?? collectAliases(sf);
  const hits: Hit[] = [];
  const walker = active.patterns.some(Boolean) ? new PatternWalker(sf, rules.patterns, aliases, active.patterns) : undefined;
  if (taint !== 0n) {
    // One walk: the taint engine feeds the pattern walker the nodes it evaluates.
    for (const h of new TaintEngine(sf, rules.taint, aliases, taint, walker?.onNode, newCallContext(project), model).run()) {
      hits.push({
        meta: rules.taint.rules[h.rule]!,
        node: h.node,
        functionName: h.functionName,
        ...(h.sf !== sf ? { at: { sf: h.sf, path: h.path } } : {}),
        details: {
          source: h.origin,
          sink: { line: lineOf(h.sf, h.node.getStart(h.sf)), expression: nodeText(h.node, h.sf), callee: h.callee },
          path: h.steps,
        },
      });
    }
  } else walker?.run();
  // Where a taint rule reports the same call, a pattern rule that it subsumes adds nothing.
  const taintAt = new Set(hits.filter((h) => !h.at).map((h) => `${h.meta.id}@${h.node.getStart(sf)}`));
  for (const h of walker?.results() ?? []) {
    const meta = rules.patterns.rules[h.rule]!;
    if (meta.subsumedBy?.some((id) => taintAt.has(`${id}@${h.node.getStart(sf)}`))) continue;
    hits.push({
      meta: rules.patterns.rules[h.rule]!,
      node: h.node,
      functionName: h.functionName,
      details: { matcher: h.matcher },
      ...(h.secret ? { secret: h.secret } : {}),
    });
  }
  const findings = toFindings(sf, path, hits);
  if (rawHtml) findings.push(...jsxRawHtmlFindings(sf, path));
  return { findings, parsed: true };
}
