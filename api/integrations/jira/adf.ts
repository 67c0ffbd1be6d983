// Jira Cloud's v3 API takes rich text (descriptions, comments) only as Atlassian Document Format,
// not as markdown or wiki markup. Aegis writes markdown-ish text; this turns it into the small ADF
// subset we need: paragraphs (one per blank-line-separated block, line breaks kept as hardBreak)
// and fenced code blocks. Jira refuses empty text nodes, so none are emitted.

export interface AdfText {
  type: 'text';
  text: string;
}
export interface AdfHardBreak {
  type: 'hardBreak';
}
export interface AdfParagraph {
  type: 'paragraph';
  content: (AdfText | AdfHardBreak)[];
}
export interface AdfCodeBlock {
  type: 'codeBlock';
  attrs?: { language: string };
  content: AdfText[];
}
export interface AdfDocument {
  type: 'doc';
  version: 1;
  content: (AdfParagraph | AdfCodeBlock)[];
}

function paragraph(lines: string[]): AdfParagraph | null {
  const content: (AdfText | AdfHardBreak)[] = [];
  for (const line of lines) {
    if (content.length > 0) content.push({ type: 'hardBreak' });
    if (line.length > 0) content.push({ type: 'text', text: line });
  }
  while (content.at(-1)?.type === 'hardBreak') content.pop();
  return content.length > 0 ? { type: 'paragraph', content } : null;
}

export function markdownToAdf(markdown: string): AdfDocument {
  const blocks: (AdfParagraph | AdfCodeBlock)[] = [];
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  let prose: string[] = [];
  const flush = (): void => {
    const node = paragraph(prose);
    if (node) blocks.push(node);
    prose = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const fence = /^\s*```\s*([\w+-]*)\s*$/.exec(line);
    if (fence) {
      flush();
      const code: string[] = [];
      for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i] ?? ''); i++) code.push(lines[i] ?? '');
      const text = code.join('\n');
      const language = fence[1];
      blocks.push({ type: 'codeBlock', ...(language ? { attrs: { language } } : {}), content: text ? [{ type: 'text', text }] : [] });
    } else if (line.trim() === '') flush();
    else prose.push(line);
  }
  flush();
  // An empty document is valid ADF, but an issue description of nothing reads better as a dash.
  if (blocks.length === 0) blocks.push({ type: 'paragraph', content: [{ type: 'text', text: '-' }] });
  return { type: 'doc', version: 1, content: blocks };
}
