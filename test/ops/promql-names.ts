// The metric names a PromQL expression reads, by a small tokenizer rather than a PromQL parser:
// enough for the expressions of ops/ (selectors, functions, aggregations with by/without, vector
// matching, offsets, Grafana's $variables), so the ops test can require every name to be exported.

/** Words that are not metric names where a name could stand. */
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'inf', 'nan']);

/** Blanks a span, keeping the rest of the text where it was. */
const blank = (text: string) => ' '.repeat(text.length);

export function metricNames(expr: string): string[] {
  const text = expr
    // Strings first: a label value or a regex may hold braces, brackets or names.
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, blank)
    // Label matchers, range and subquery brackets.
    .replace(/\{[^}]*\}/g, blank)
    .replace(/\[[^\]]*\]/g, blank)
    // Label lists of aggregations and vector matching.
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, blank)
    // Grafana's variables ($site, ${site}, $__rate_interval).
    .replace(/\$\{[^}]*\}|\$\w+/g, blank);
  const names = new Set<string>();
  // A number (durations and exponents included) is taken whole, so its letters are not read as names.
  const token = /(\d[\w.]*)|([A-Za-z_:][\w:]*)/g;
  for (let m = token.exec(text); m; m = token.exec(text)) {
    const word = m[2];
    if (!word || KEYWORDS.has(word)) continue;
    // A function or aggregation is followed by its parenthesis.
    if (/^\s*\(/.test(text.slice(m.index + word.length))) continue;
    names.add(word);
  }
  return [...names];
}

/**
 * Names a Prometheus text exposition offers to queries: its sample names, and each family's
 * declared name with the suffixes its type adds (a histogram's _bucket, _sum and _count are
 * present even before its first observation, as queries may name them).
 */
export function exposedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const line of exposition.split('\n')) {
    const type = /^# TYPE (\S+) (\w+)/.exec(line);
    if (type?.[1] && type[2]) {
      const name = type[1];
      const kind = type[2];
      names.add(name);
      if (kind === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(name + s);
      if (kind === 'summary') for (const s of ['_sum', '_count']) names.add(name + s);
      continue;
    }
    const sample = /^([A-Za-z_:][\w:]*)/.exec(line);
    if (sample) names.add(sample[1]!);
  }
  return names;
}
