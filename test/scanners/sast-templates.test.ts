// Raw-HTML sinks in component templates (Vue, Svelte) and JSX: one true and one false example per
// construct, the script blocks of single-file components analysed with their own line numbers, and
// the whole scanner picking .vue/.svelte files up.
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanSast } from '../../scanners/sast/scan.ts';
import { componentScript, jsxRawHtmlFindings, templateFindings } from '../../scanners/sast/templates.ts';

const jsx = (text: string) => jsxRawHtmlFindings(ts.createSourceFile('c.tsx', text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TSX), 'c.tsx');

describe('component templates', () => {
  it('flags v-html and :innerHTML bound to data, not constants, sanitized values or i18n text', () => {
    const vue = [
      '<template>',
      '  <div v-html="comment.body"></div>',
      '  <p :innerHTML="bio"></p>',
      `  <span v-html="'<b>fixed</b>'"></span>`,
      '  <span v-html="DOMPurify.sanitize(comment.body)"></span>',
      `  <span v-html="$t('help.text')"></span>`,
      '  <span>{{ comment.body }}</span>',
      '</template>',
      '<script>export default { data: () => ({ bio: "" }) }</script>',
    ].join('\n');
    const found = templateFindings('Comment.vue', vue);
    expect(found.map((f) => [f.rule_id, (f.location as { line: number }).line, f.details.expression])).toEqual([
      ['js-template-raw-html', 2, 'comment.body'],
      ['js-template-raw-html', 3, 'bio'],
    ]);
    expect(found[0]!.evidence).toBe('<div v-html="comment.body"></div>');
  });

  it('flags Svelte {@html} with data and leaves text interpolation alone', () => {
    const svelte = '<script>export let post;</script>\n<article>{@html post.content}</article>\n<h1>{post.title}</h1>\n{@html "<hr>"}\n';
    const found = templateFindings('Post.svelte', svelte);
    expect(found.map((f) => [(f.location as { line: number }).line, f.details.construct])).toEqual([[2, '{@html}']]);
  });

  it('ignores look-alikes inside script and style blocks', () => {
    const vue = '<template><p>{{ x }}</p></template>\n<script>\nconst doc = `<div v-html="x"></div>`;\n</script>\n';
    expect(templateFindings('A.vue', vue)).toEqual([]);
  });

  it('flags dangerouslySetInnerHTML with a non-constant __html only', () => {
    const found = jsx(
      [
        'export const A = ({ html }) => <div dangerouslySetInnerHTML={{ __html: html }} />;',
        'export const B = () => <div dangerouslySetInnerHTML={{ __html: "<br/>" }} />;',
        'export const C = ({ html }) => <div dangerouslySetInnerHTML={{ __html: DOMPurify.sanitize(html) }} />;',
        'export const D = () => <div dangerouslySetInnerHTML={createMarkup()} />;',
      ].join('\n'),
    );
    expect(found.map((f) => [(f.location as { line: number }).line, f.details.expression])).toEqual([[1, 'html']]);
  });

  it('keeps the line numbers of script blocks when blanking the rest', () => {
    const text = '<template>\n  <p/>\n</template>\n<script setup lang="ts">\nconst a = 1;\n</script>\n';
    const script = componentScript(text)!;
    expect(script.split('\n')[4]).toBe('const a = 1;');
    expect(script.length).toBe(text.length);
    expect(componentScript('<template><p/></template>')).toBeUndefined();
  });
});

describe('scanSast on components', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'aegis-sast-templates-'));
    await mkdir(join(root, 'src'), { recursive: true });
    await writeFile(join(root, 'src/Comment.vue'), '<template>\n  <div v-html="body"></div>\n</template>\n<script>\nimport { exec } from "child_process";\nexport function run(req) {\n  exec("ls " + req.query.dir);\n}\n</script>\n');
    await writeFile(join(root, 'src/Safe.vue'), '<template>\n  <div>{{ body }}</div>\n</template>\n');
    await writeFile(join(root, 'src/View.jsx'), 'export default ({ html }) => <div dangerouslySetInnerHTML={{ __html: html }} />;\n');
    await writeFile(join(root, 'src/vendor.min.js'), 'var a=1;\n');
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('reports template sinks and script findings of .vue files at their own lines, JSX raw HTML, and skipped files by type', async () => {
    const out = await scanSast({ root, signal: new AbortController().signal });
    const got = out.findings.map((f) => [f.rule_id, f.location.path, (f.location as { line: number }).line]).sort();
    expect(got).toContainEqual(['js-template-raw-html', 'src/Comment.vue', 2]);
    expect(got).toContainEqual(['js-template-raw-html', 'src/View.jsx', 1]);
    expect(got.some(([rule, path, line]) => String(rule).includes('command') && path === 'src/Comment.vue' && line === 7)).toBe(true);
    expect(got.filter(([, path]) => path === 'src/Safe.vue')).toEqual([]);
    expect(out.coverage.files_scanned).toBe(3);
    expect(out.coverage.skipped_by_type).toEqual([{ type: '.js', reason: 'unsupported', files: 1 }]);
  });
});

describe('subsumed pattern rules', () => {
  it('reports eval of request data once (code injection), and eval of other data as eval-non-literal', async () => {
    const root = await mkdtemp(join(tmpdir(), 'aegis-sast-subsumed-'));
    try {
      await writeFile(join(root, 'app.js'), 'app.post("/x", (req, res) => {\n  res.json(eval(req.body.expr));\n});\nexport const f = (code) => eval(code);\n');
      const out = await scanSast({ root, signal: new AbortController().signal });
      expect(out.findings.map((f) => [f.rule_id, (f.location as { line: number }).line]).sort()).toEqual([
        ['js-code-injection', 2],
        ['js-eval-non-literal', 4],
      ]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
