// File-manager and upload traffic from github/gitignore: the templates' patterns and the file names
// they name, uploaded in multipart forms, browsed and searched in file managers, renamed through
// JSON APIs, stored through WebDAV and contents APIs (base64), and named in upload headers.
import { Buffer } from 'node:buffer';
import { Deck, Rng } from './benign-rng.ts';
import { Mirror } from './benign-mirror.ts';
import { type Draft, generate, type Template } from './benign-gen.ts';
import { apiHeaders, browserHeaders, cookieHeader, formEncode, multipart, pickBrowser, queryEncode, seg, xmlEscape } from './benign-http.ts';
import type { EvalRequest } from './types.ts';

const REPO = 'github/gitignore';
const FILES = 'https://files.example.com';
const GIT = 'https://git.example.com';
const CLOUD = 'https://cloud.example.com';

interface IgnoreTemplate {
  /** `Node`, `Global/macOS`. */
  name: string;
  text: string;
}

interface Pattern {
  template: IgnoreTemplate;
  pattern: string;
}

interface Pools {
  templates: Deck<IgnoreTemplate>;
  patterns: Deck<Pattern>;
  comments: Deck<string>;
}

function load(mirrors: string, rng: Rng): Pools | null {
  const mirror = new Mirror(mirrors, REPO);
  if (!mirror.present) return null;
  const files = mirror.read((p) => p.endsWith('.gitignore'));
  const templates: IgnoreTemplate[] = files.map((f) => ({ name: f.path.replace(/\.gitignore$/, ''), text: f.text }));
  const patterns: Pattern[] = [];
  const comments: string[] = [];
  for (const t of templates) {
    for (const raw of t.text.split(/\r?\n/)) {
      const line = raw.trimEnd();
      if (line.trim() === '') continue;
      if (line.startsWith('#')) comments.push(line);
      else patterns.push({ template: t, pattern: line });
    }
  }
  if (patterns.length === 0) return null;
  return { templates: new Deck(rng, templates), patterns: new Deck(rng, patterns), comments: new Deck(rng, comments.length ? comments : ['# files']) };
}

const projectOf = (t: IgnoreTemplate): string => `${(t.name.split('/').pop() as string).toLowerCase()}-app`;

/** The pattern as a path under a project: negation and anchoring slashes dropped, globs kept. */
const asPath = (pattern: string): string => pattern.replace(/^!/, '').replace(/^\/+/, '').replace(/\/+$/, '');

/** A name segment with its glob parts filled in, as a file on disk that the pattern matches. */
function fill(rng: Rng, segment: string): string {
  return segment
    .replace(/\[([^\]]+)\]/g, (_m, set: string) => (set.startsWith('0-9') ? '0' : set.charAt(0) === '!' ? 'x' : set.charAt(0)))
    .replace(/\*+/g, () => rng.pick(['app', 'main', 'debug', 'build', 'output', '2024-06-01', 'test']))
    .replace(/\?/g, '1');
}

/** A concrete path the pattern matches (`**` levels dropped). */
function concretePath(rng: Rng, pattern: string): string {
  const path = asPath(pattern)
    .split('/')
    .filter((s) => s !== '**' && s !== '')
    .map((s) => fill(rng, s))
    .join('/');
  return path || '.gitignore';
}

/** The file name a pattern matches. */
const fileName = (rng: Rng, pattern: string): string => concretePath(rng, pattern).split('/').pop() || 'file';

const TYPES: Record<string, string> = { json: 'application/json', xml: 'text/xml', txt: 'text/plain', log: 'text/plain', md: 'text/markdown', html: 'text/html', js: 'text/javascript', csv: 'text/csv', zip: 'application/zip', pdf: 'application/pdf', png: 'image/png', jpg: 'image/jpeg', yml: 'application/x-yaml', yaml: 'application/x-yaml' };
const typeOf = (name: string): string => TYPES[(name.split('.').pop() ?? '').toLowerCase()] ?? 'application/octet-stream';

/** A few consecutive lines of a template, as a small text file's content. */
function excerpt(rng: Rng, t: IgnoreTemplate): string {
  const lines = t.text.split('\n');
  const start = rng.int(Math.max(1, lines.length - 5));
  return lines.slice(start, start + rng.range(3, 20)).join('\n') + '\n';
}

function templates(p: Pools): Template[] {
  const uploadMultipart = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    let part: { filename: string; type: string; content: string };
    let t: IgnoreTemplate;
    if (rng.chance(0.5)) {
      t = p.templates.draw();
      part = { filename: rng.chance(0.5) ? '.gitignore' : `${t.name.split('/').pop() as string}.gitignore`, type: 'application/octet-stream', content: t.text };
    } else {
      const pat = p.patterns.draw();
      t = pat.template;
      const name = fileName(rng, pat.pattern);
      part = { filename: name, type: typeOf(name), content: excerpt(rng, t) };
    }
    const { body, contentType } = multipart(rng, browser, [
      { name: '_token', value: rng.alnum(40) },
      { name: 'path', value: `/${projectOf(t)}/` },
      { name: 'description', value: p.comments.draw() },
      { name: 'file', ...part },
    ]);
    const headers = browserHeaders(rng, { browser, mode: 'fetch', origin: FILES, refererPath: `/files/${seg(projectOf(t))}/`, cookie: cookieHeader(rng, 'files'), contentType, hasBody: true, extra: { 'x-requested-with': 'XMLHttpRequest' } });
    return { method: 'POST', target: '/api/upload', headers, body, placement: 'multipart', encoding: 'plain' };
  };

  const browsePath = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const pat = p.patterns.draw();
    const segments = concretePath(rng, pat.pattern).split('/').map(seg).join('/');
    const target = `/files/${seg(projectOf(pat.template))}/${segments}${rng.chance(0.3) ? `?view=${rng.pick(['list', 'grid'])}` : ''}`;
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: FILES, refererPath: `/files/${seg(projectOf(pat.template))}/`, cookie: cookieHeader(rng, 'files') });
    return { method: 'GET', target, headers, placement: 'path', encoding: 'plain' };
  };

  const searchQuery = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const pat = p.patterns.draw();
    const fields: [string, string][] = rng.chance(0.5)
      ? [['pattern', pat.pattern], ['path', `/srv/projects/${projectOf(pat.template)}`], ['recursive', '1']]
      : [['q', fileName(rng, pat.pattern)], ['type', rng.pick(['file', 'any'])], ['sort', 'mtime']];
    const headers = browserHeaders(rng, { browser, mode: 'fetch', origin: FILES, refererPath: `/files/${seg(projectOf(pat.template))}/`, cookie: cookieHeader(rng, 'files') });
    return { method: 'GET', target: `/api/files/search?${queryEncode(fields, rng.chance(0.5) ? 'form' : 'script')}`, headers, placement: 'query', encoding: 'plain' };
  };

  // elFinder names a file by volume id + base64url of its path.
  const elfinderTarget = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const pat = p.patterns.draw();
    const hash = (path: string): string => `l1_${Buffer.from(path).toString('base64url')}`;
    const fields: [string, string][] = [['cmd', rng.pick(['open', 'file', 'info', 'ls'])], ['target', hash(`${projectOf(pat.template)}/${concretePath(rng, pat.pattern)}`)]];
    if (rng.chance(0.5)) fields.push(['init', '1'], ['tree', '1']);
    fields.push(['_', `${rng.unixTime()}${rng.digits(3)}`]);
    const headers = browserHeaders(rng, { browser, mode: 'fetch', origin: FILES, refererPath: '/elfinder.html', cookie: cookieHeader(rng, 'files'), extra: { 'x-requested-with': 'XMLHttpRequest' } });
    return { method: 'GET', target: `/php/connector.minimal.php?${queryEncode(fields, 'script')}`, headers, placement: 'query', encoding: 'base64' };
  };

  const fileApiJson = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const pat = p.patterns.draw();
    const root = `/${projectOf(pat.template)}/`;
    const action = rng.pick(['rename', 'move', 'delete', 'copy']);
    const body = JSON.stringify(
      action === 'rename'
        ? { action, path: root + concretePath(rng, pat.pattern), newName: fileName(rng, p.patterns.draw().pattern) }
        : { action, paths: Array.from({ length: rng.range(1, 5) }, () => root + concretePath(rng, p.patterns.draw().pattern)), ...(action === 'delete' ? {} : { destination: `${root}${rng.pick(['archive', 'backup', 'tmp'])}/` }) },
    );
    const headers = browserHeaders(rng, { browser, mode: 'fetch', origin: FILES, refererPath: `/files${root}`, cookie: cookieHeader(rng, 'files'), contentType: 'application/json', hasBody: true, extra: { 'x-csrf-token': rng.alnum(40) } });
    return { method: 'POST', target: `/api/files/${action}`, headers, body, placement: 'json', encoding: 'plain' };
  };

  // Git hosting contents APIs take the file as base64.
  const contentsApi = (rng: Rng): Draft => {
    const t = p.templates.draw();
    const body = JSON.stringify({ message: `Add ${t.name.split('/').pop() as string} .gitignore`, content: Buffer.from(t.text).toString('base64'), branch: rng.pick(['main', 'master', 'develop']), committer: { name: 'Build Bot', email: 'bot@example.com' } });
    const headers = apiHeaders(rng, 'application/json', { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' });
    return { method: 'PUT', target: `/repos/example-org/${seg(projectOf(t))}/contents/.gitignore`, headers, body, placement: 'json', encoding: 'base64' };
  };

  const settingsForm = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const t = p.templates.draw();
    const body = formEncode([
      ['authenticity_token', rng.alnum(86) + '=='],
      ['_method', 'patch'],
      ['project[gitignore_template]', t.name],
      ['project[ignore_rules]', t.text],
      ['commit', 'Save changes'],
    ]);
    const project = seg(projectOf(t));
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: GIT, refererPath: `/example-org/${project}/-/settings/repository`, cookie: cookieHeader(rng, 'dev'), contentType: 'application/x-www-form-urlencoded', hasBody: true });
    return { method: 'POST', target: `/example-org/${project}/-/settings/repository`, headers, body, placement: 'form', encoding: 'plain' };
  };

  const webdavPut = (rng: Rng): Draft => {
    const t = p.templates.draw();
    const target = `/remote.php/dav/files/${rng.pick(['alice', 'bob', 'admin'])}/${seg(projectOf(t))}/.gitignore`;
    const headers = { 'user-agent': rng.pick(['Mozilla/5.0 (Windows) mirall/3.13.0 (build 20240610) (Nextcloud, windows-10.0.22631 ClientArchitecture: x86_64 OsArchitecture: x86_64)', 'Mozilla/5.0 (Macintosh) mirall/3.12.3 (Nextcloud, osx-23.5.0 ClientArchitecture: arm64 OsArchitecture: arm64)', 'davfs2/1.7.0 neon/0.32.5']), 'content-type': 'text/plain', authorization: `Basic ${Buffer.from(`user:${rng.alnum(20)}`).toString('base64')}`, 'oc-checksum': `SHA1:${rng.hex(40)}` };
    return { method: 'PUT', target, headers, body: t.text, placement: 'body', encoding: 'plain' };
  };

  const uploadHeader = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const pat = p.patterns.draw();
    const name = fileName(rng, pat.pattern);
    const headers = browserHeaders(rng, { browser, mode: 'fetch', origin: FILES, refererPath: `/files/${seg(projectOf(pat.template))}/`, cookie: cookieHeader(rng, 'files'), contentType: 'application/octet-stream', hasBody: true, extra: { 'x-file-name': name, 'x-file-path': `/${projectOf(pat.template)}/${concretePath(rng, pat.pattern)}` } });
    return { method: 'PUT', target: '/api/upload/raw', headers, body: excerpt(rng, pat.template), placement: 'header', encoding: 'plain' };
  };

  // tus resumable uploads carry the file name base64-encoded in Upload-Metadata.
  const tusMetadata = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const pat = p.patterns.draw();
    const name = fileName(rng, pat.pattern);
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    const meta = `filename ${b64(name)},filetype ${b64(typeOf(name))},relativePath ${b64(concretePath(rng, pat.pattern))}`;
    const headers = browserHeaders(rng, { browser, mode: 'fetch', origin: FILES, refererPath: '/upload', cookie: cookieHeader(rng, 'files'), hasBody: true, extra: { 'tus-resumable': '1.0.0', 'upload-length': String(rng.range(100, 5_000_000)), 'upload-metadata': meta } });
    return { method: 'POST', target: '/files/tus/', headers, placement: 'header', encoding: 'base64' };
  };

  // WebDAV property updates: the display name and a comment on the file.
  const proppatchXml = (rng: Rng): Draft => {
    const pat = p.patterns.draw();
    const body =
      `<?xml version="1.0" encoding="utf-8" ?>\n<d:propertyupdate xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">\n  <d:set>\n    <d:prop>\n` +
      `      <d:displayname>${xmlEscape(fileName(rng, pat.pattern))}</d:displayname>\n      <oc:comment>${xmlEscape(p.comments.draw())}</oc:comment>\n` +
      `    </d:prop>\n  </d:set>\n</d:propertyupdate>\n`;
    const target = `/remote.php/dav/files/${rng.pick(['alice', 'bob'])}/${seg(projectOf(pat.template))}/${concretePath(rng, pat.pattern).split('/').map(seg).join('/')}`;
    const headers = { 'user-agent': 'Mozilla/5.0 (Windows) mirall/3.13.0 (build 20240610) (Nextcloud, windows-10.0.22631 ClientArchitecture: x86_64 OsArchitecture: x86_64)', 'content-type': 'application/xml; charset=utf-8', authorization: `Basic ${Buffer.from(`user:${rng.alnum(20)}`).toString('base64')}` };
    return { method: 'PROPPATCH', target, headers, body, placement: 'xml', encoding: 'plain' };
  };

  return [
    { what: 'upload-multipart', weight: 3, make: uploadMultipart },
    { what: 'file-manager-path', weight: 2, make: browsePath },
    { what: 'file-search-query', weight: 1.5, make: searchQuery },
    { what: 'elfinder-target', weight: 0.6, make: elfinderTarget },
    { what: 'file-api-json', weight: 1.5, make: fileApiJson },
    { what: 'contents-api-base64', weight: 0.6, make: contentsApi },
    { what: 'settings-form', weight: 1, make: settingsForm },
    { what: 'webdav-put', weight: 0.7, make: webdavPut },
    { what: 'upload-header', weight: 0.4, make: uploadHeader },
    { what: 'tus-metadata', weight: 0.3, make: tusMetadata },
    { what: 'webdav-proppatch-xml', weight: 0.3, make: proppatchXml },
  ];
}

export function gitignoreRequests(mirrors: string, count: number): EvalRequest[] {
  const rng = new Rng(`benign:${REPO}`);
  const pools = load(mirrors, rng);
  return pools ? generate(REPO, rng, templates(pools), count) : [];
}
