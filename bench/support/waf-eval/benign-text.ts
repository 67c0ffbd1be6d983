// Splits the source texts into the pieces sites receive: Markdown into paragraphs, headings, code
// blocks and inline code; a play into speeches and lines; prose into sentences. The pieces are kept
// as they are written (line breaks, markup, quotes); only the splitting is ours.

export interface CodeBlock {
  /** The fence's info string's first word (`rust`, `js`, `console`), or '' when none. */
  lang: string;
  code: string;
}

export interface MarkdownParts {
  /** Front-matter `title` and `description` (docs sites), when present. */
  title?: string;
  description?: string;
  headings: string[];
  /** Blocks of non-code text between blank lines, line breaks kept. */
  paragraphs: string[];
  code: CodeBlock[];
  inlineCode: string[];
}

const FENCE = /^\s*(`{3,}|~{3,})\s*(.*)$/;
const HEADING = /^#{1,6}\s+(.*?)\s*#*\s*$/;

function frontMatter(lines: string[]): { end: number; fields: Map<string, string> } {
  const fields = new Map<string, string>();
  if (lines[0]?.trim() !== '---') return { end: 0, fields };
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.trim() === '---') return { end: i + 1, fields };
    const m = /^([A-Za-z_]+):\s*(.*)$/.exec(line);
    if (m) fields.set(m[1] as string, (m[2] as string).replace(/^(['"])(.*)\1$/, '$2'));
  }
  return { end: 0, fields: new Map() };
}

export function parseMarkdown(text: string): MarkdownParts {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  const { end, fields } = frontMatter(lines);
  const parts: MarkdownParts = { headings: [], paragraphs: [], code: [], inlineCode: [] };
  const title = fields.get('title');
  const description = fields.get('description');
  if (title) parts.title = title;
  if (description) parts.description = description;

  let block: string[] = [];
  const flush = (): void => {
    if (block.length === 0) return;
    const para = block.join('\n');
    // MDX module lines (`import X from '...'`) are code, not prose.
    if (block.every((l) => /^(import|export)\s/.test(l))) parts.code.push({ lang: 'js', code: para });
    else {
      parts.paragraphs.push(para);
      for (const m of para.matchAll(/`([^`\n]+)`/g)) parts.inlineCode.push(m[1] as string);
    }
    block = [];
  };

  for (let i = end; i < lines.length; i++) {
    const line = lines[i] as string;
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const marker = fence[1] as string;
      const lang = (fence[2] as string).split(/[\s,{]/)[0] ?? '';
      const body: string[] = [];
      let j = i + 1;
      for (; j < lines.length; j++) {
        const close = lines[j] as string;
        if (close.trim().startsWith(marker) && close.trim().replace(/[`~]/g, '') === '') break;
        body.push(close);
      }
      if (body.some((l) => l.trim() !== '')) parts.code.push({ lang, code: body.join('\n') });
      i = j;
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      flush();
      if (heading[1]) parts.headings.push(heading[1]);
      continue;
    }
    if (line.trim() === '') flush();
    else block.push(line);
  }
  flush();
  return parts;
}

/** Sentences of a prose paragraph: lines joined, split after . ! ? (and the CJK full stops). */
export function sentences(paragraph: string): string[] {
  return paragraph
    .replace(/\s*\n\s*/g, ' ')
    .split(/(?<=[.!?])\s+|(?<=[。！？])/u)
    .map((s) => s.trim())
    .filter((s) => s.length >= 3);
}

/** A URL slug the way blog and shop engines make one from a title (letters of any script kept). */
export function slugify(title: string, maxChars = 80): string {
  const slug = title
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '');
  const cut = Array.from(slug).slice(0, maxChars).join('').replace(/-+$/, '');
  return cut || 'post';
}

export interface Speech {
  speaker: string;
  lines: string[];
}

/** A play's speeches: blocks between blank lines that open with `NAME:`. */
export function parseSpeeches(text: string): Speech[] {
  const speeches: Speech[] = [];
  for (const block of text.replace(/\r\n/g, '\n').split(/\n\s*\n/)) {
    const lines = block.split('\n').filter((l) => l.trim() !== '');
    const head = lines[0];
    if (!head || !head.endsWith(':') || lines.length < 2) continue;
    speeches.push({ speaker: head.slice(0, -1), lines: lines.slice(1) });
  }
  return speeches;
}

/** The items with repeats removed (first one kept): translations and book editions share much text. */
export function distinct<T>(items: readonly T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const k = key(item);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
