// Ground truth for bench/scan-quality.ts, in the corpora's own formats.
//
// Secrets: the Leaky Repo's `.leaky-meta/secrets.csv` — `path,num_risk,num_informative` per line,
// blank lines and lines starting with `#` skipped, read as its benchmark.py reads it. A path listed
// twice keeps its last row (benchmark.py keys its table by path, so the last row is what it totals).
//
// SAST: lines carrying a marker comment (Juice Shop's `// vuln-code-snippet vuln-line <challenge>…`).
// The marker must follow a comment opener (`//`, `/*`, `#`), so code that merely mentions it (Juice
// Shop's own snippet extractor builds a RegExp from the text) is no label. One label per line, however
// many challenges it names.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface SecretsLabel {
  path: string;
  risk: number;
  informative: number;
}

export class LabelError extends Error {}

/** One CSV row split as Python's csv.reader does for these files (quoted fields allowed). */
function splitCsvRow(line: string): string[] {
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      fields.push(field);
      field = '';
    } else field += c;
  }
  fields.push(field);
  return fields;
}

export function parseSecretsCsv(text: string, source: string): SecretsLabel[] {
  const byPath = new Map<string, SecretsLabel>();
  text.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === '' || line.startsWith('#')) return;
    const [path, risk, informative] = splitCsvRow(line);
    const r = Number.parseInt(risk ?? '', 10);
    const i = Number.parseInt(informative ?? '', 10);
    if (!path || !Number.isInteger(r) || !Number.isInteger(i)) throw new LabelError(`${source}:${index + 1}: expected path,num_risk,num_informative, got ${JSON.stringify(line)}`);
    byPath.set(path, { path, risk: r, informative: i });
  });
  return [...byPath.values()];
}

export interface LineLabel {
  path: string;
  /** 1-based. */
  line: number;
  /** The labelled line, trimmed, for listings. */
  text: string;
  /** What follows the marker (Juice Shop: the challenge keys). */
  tags: string[];
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Labelled lines of `files` (relative to `root`). */
export function markerLabels(root: string, files: readonly string[], marker: string): LineLabel[] {
  const pattern = new RegExp(`(?:\\/\\/|\\/\\*|#)\\s*${escapeRegExp(marker)}(.*)$`);
  const labels: LineLabel[] = [];
  for (const path of files) {
    const text = readFileSync(join(root, path), 'utf8');
    if (!text.includes(marker)) continue;
    text.split(/\r?\n/).forEach((line, index) => {
      const m = pattern.exec(line);
      if (!m) return;
      const tags = (m[1] ?? '').replace(/\*\/.*$/, '').trim().split(/\s+/).filter(Boolean);
      labels.push({ path, line: index + 1, text: line.trim(), tags });
    });
  }
  return labels;
}
