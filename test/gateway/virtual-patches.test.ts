import { describe, expect, it } from 'vitest';
import { scanJson } from '../../gateway/inspect/json-fields.ts';
import { LazyInspectedRequest, type BodyState, type InspectedRequest } from '../../gateway/inspected-request.ts';
import { compileVirtualPatches, type VirtualPatchSource } from '../../gateway/rules/virtual-patches.ts';

let counter = 0;
function patch(fields: Partial<VirtualPatchSource> & Pick<VirtualPatchSource, 'match_param' | 'match_regex'>): VirtualPatchSource {
  counter++;
  return { id: `vp_${String(counter).padStart(6, '0')}`, url_pattern: '/*', method: 'ANY', action: 'block', expires_at: null, ...fields };
}

/** A request as the gateway reads it; a JSON or form body is read unless `bodyState` says it was not. */
function request(target: string, options: { method?: string; json?: unknown; form?: string; bodyState?: BodyState } = {}): InspectedRequest {
  const q = target.indexOf('?');
  const contentType = options.json !== undefined ? 'application/json' : options.form !== undefined ? 'application/x-www-form-urlencoded' : '';
  const inspected = new LazyInspectedRequest(options.method ?? 'GET', q < 0 ? target : target.slice(0, q), q < 0 ? '' : target.slice(q + 1), {}, contentType);
  if (options.bodyState && options.bodyState !== 'json' && options.bodyState !== 'form') {
    inspected.bodyState = options.bodyState;
  } else if (options.json !== undefined) {
    const text = JSON.stringify(options.json);
    scanJson(text, inspected.collector.jsonSink());
    inspected.setBody({ state: 'json', refusal: null, jsonText: text, text: null });
  } else if (options.form !== undefined) {
    inspected.collector.addUrlEncoded(options.form, 'form');
    inspected.setBody({ state: 'form', refusal: null, text: null });
  }
  return inspected;
}

describe('compileVirtualPatches', () => {
  it('matches a query parameter, a form field and a JSON field by name', () => {
    const sqli = patch({ url_pattern: '/api/*', match_param: 'id', match_regex: '(?i)union\\s+select' });
    const set = compileVirtualPatches([sqli]);
    expect(set.skipped).toEqual([]);
    const hit = { patchId: sqli.id, action: 'block' };
    expect(set.match(request(`/api/items?id=${encodeURIComponent('1 UNION SELECT password')}`))).toEqual(hit);
    expect(set.match(request('/api/items', { method: 'POST', form: 'id=1+union+select+1' }))).toEqual(hit);
    expect(set.match(request('/api/items', { method: 'POST', json: { id: '1 union  select 2' } }))).toEqual(hit);
    expect(set.match(request('/api/items?id=42'))).toBeNull();
    expect(set.match(request('/api/items', { method: 'POST', json: { id: '42', note: 'union select' } }))).toBeNull();
    expect(set.match(request(`/other?id=${encodeURIComponent('1 union select')}`))).toBeNull();
    expect(set.match(request(`/api/items?other=${encodeURIComponent('1 union select')}`))).toBeNull();
  });

  it('looks at the body only when it was parsed as that kind', () => {
    const set = compileVirtualPatches([patch({ match_param: 'q', match_regex: 'evil' })]);
    expect(set.match(request('/', { method: 'POST', json: { q: 'evil' }, bodyState: 'too_large' }))).toBeNull();
    expect(set.match(request('/', { method: 'POST', form: 'q=evil', bodyState: 'not_inspected' }))).toBeNull();
  });

  it('checks method and the normalised path of the patch', () => {
    const p = patch({ url_pattern: '/admin', method: 'POST', match_param: 'cmd', match_regex: 'rm' });
    const set = compileVirtualPatches([p]);
    expect(set.match(request('/admin?cmd=rm', { method: 'POST' }))?.patchId).toBe(p.id);
    expect(set.match(request('/%61dmin?cmd=rm', { method: 'POST' }))?.patchId).toBe(p.id);
    expect(set.match(request('/x/../admin/?cmd=rm', { method: 'POST' }))?.patchId).toBe(p.id);
    expect(set.match(request('/admin?cmd=rm', { method: 'GET' }))).toBeNull();
    expect(set.match(request('/Admin?cmd=rm', { method: 'POST' }))).toBeNull();
  });

  it('tests JSON numbers, booleans and null as their text, every array element, and every scalar below a key', () => {
    const number = patch({ match_param: 'n', match_regex: '^4[0-9]{2}$' });
    const bool = patch({ match_param: 'flag', match_regex: '^true$' });
    const nil = patch({ match_param: 'gone', match_regex: '^null$' });
    const list = patch({ match_param: 'tags', match_regex: '^<script' });
    const role = patch({ match_param: 'user', match_regex: '^admin$' });
    const set = compileVirtualPatches([number, bool, nil, list, role]);
    const body = (json: unknown) => set.match(request('/', { method: 'POST', json }))?.patchId ?? null;
    expect(body({ n: 404 })).toBe(number.id);
    expect(body({ n: 40 })).toBeNull();
    expect(body({ flag: true })).toBe(bool.id);
    expect(body({ flag: false })).toBeNull();
    expect(body({ gone: null })).toBe(nil.id);
    expect(body({ tags: ['ok', 'fine', '<script>alert(1)</script>'] })).toBe(list.id);
    expect(body({ tags: ['ok', ['<script>']] })).toBe(list.id); // nested arrays too
    expect(body({ user: { name: 'x', role: 'admin' } })).toBe(role.id); // a key sees the scalars below it
    expect(body({ user: { name: 'x', role: 'user' } })).toBeNull();
    expect(body({ data: { attributes: { flag: true } } })).toBe(bool.id); // a key at any depth
  });

  it('follows a dotted name into nested JSON, and applies names to the objects of a top-level array', () => {
    const nested = patch({ match_param: 'user.name', match_regex: 'drop\\s+table' });
    const indexed = patch({ match_param: 'items.1.sku', match_regex: '^\\.\\./' });
    const set = compileVirtualPatches([nested, indexed]);
    const body = (json: unknown) => set.match(request('/', { method: 'POST', json }))?.patchId ?? null;
    expect(body({ user: { name: 'x; drop table users' } })).toBe(nested.id);
    expect(body({ 'user.name': 'drop  table' })).toBe(nested.id);
    expect(body({ user: { name: 'alice' } })).toBeNull();
    expect(body({ user: 'drop table' })).toBeNull();
    expect(body({ items: [{ sku: '../x' }, { sku: '../etc/passwd' }] })).toBe(indexed.id);
    expect(body({ items: [{ sku: '../x' }] })).toBeNull();
    expect(body([{ other: 1 }, { user: { name: 'drop table' } }])).toBe(nested.id);
    expect(body({ user: Object.create(null) as object })).toBeNull();
  });

  it('reports patterns RE2 refuses as skipped and keeps the others working', () => {
    const backref = patch({ match_param: 'a', match_regex: '(a)\\1' });
    const lookahead = patch({ match_param: 'a', match_regex: 'x(?=y)' });
    const badAction = patch({ match_param: 'a', match_regex: 'x', action: 'explode' });
    const good = patch({ match_param: 'a', match_regex: 'bad' });
    const set = compileVirtualPatches([backref, lookahead, badAction, good]);
    expect(set.skipped.map((s) => s.id)).toEqual([backref.id, lookahead.id, badAction.id]);
    expect(set.skipped[0]!.reason).toMatch(/RE2/);
    expect(set.match(request('/?a=aa'))).toBeNull();
    expect(set.match(request('/?a=bad'))?.patchId).toBe(good.id);
  });

  it('answers a catastrophic-backtracking input in linear time', () => {
    const redos = patch({ match_param: 'q', match_regex: '(a+)+$' });
    const anchored = patch({ match_param: 'q', match_regex: '^(a|aa)+b' });
    const set = compileVirtualPatches([redos, anchored]);
    // A backtracking engine would take ages on these; RE2 says no at once, on the whole value.
    expect(set.match(request('/', { method: 'POST', json: { q: `${'a'.repeat(100_000)}!` } }))).toBeNull();
    expect(set.match(request(`/?q=${'a'.repeat(5000)}!`))).toBeNull();
    expect(set.match(request('/', { method: 'POST', json: { q: 'aaaa' } }))?.patchId).toBe(redos.id);
  });

  it('picks the first matching patch in the order given, across parameters', () => {
    const first = patch({ url_pattern: '/api/*', match_param: 'b', match_regex: 'x' });
    const second = patch({ match_param: 'a', match_regex: 'x' });
    const third = patch({ match_param: 'a', match_regex: 'xx', action: 'challenge' });
    const set = compileVirtualPatches([first, second, third]);
    expect(set.match(request('/api/z?a=xx&b=x'))).toEqual({ patchId: first.id, action: 'block' });
    expect(set.match(request('/other?a=xx&b=x'))).toEqual({ patchId: second.id, action: 'block' });
    const reordered = compileVirtualPatches([third, second]);
    expect(reordered.match(request('/?a=xx'))).toEqual({ patchId: third.id, action: 'challenge' });
    expect(reordered.match(request('/?a=x'))).toEqual({ patchId: second.id, action: 'block' });
  });

  it('tests a value whole: an attack after 100 KB of padding is found', () => {
    const set = compileVirtualPatches([patch({ match_param: 'q', match_regex: 'evil' })]);
    const padded = (pad: number) => set.match(request('/', { method: 'POST', form: new URLSearchParams({ q: `${'x'.repeat(pad)}evil` }).toString() }));
    expect(padded(10)).not.toBeNull();
    expect(padded(100_000)).not.toBeNull();
  });

  it('tests every value of a repeated name, and the values joined as ASP.NET reads them', () => {
    const set = compileVirtualPatches([patch({ match_param: 'q', match_regex: 'evil' }), patch({ match_param: 'q', match_regex: 'union,select' })]);
    const at = (position: number, count: number) => {
      const values = Array.from({ length: count }, (_, i) => (i === position ? 'evil' : 'fine'));
      return set.match(request(`/?${values.map((v) => `q=${v}`).join('&')}`));
    };
    for (const position of [0, 31, 45, 99]) expect(at(position, 100)).not.toBeNull();
    expect(at(-1, 100)).toBeNull();
    expect(set.match(request('/?q=union&Q=select'))).not.toBeNull();
    const list = Array.from({ length: 100 }, (_, i) => (i === 77 ? 'evil' : 'fine'));
    expect(set.match(request('/', { method: 'POST', json: { q: list } }))).not.toBeNull();
  });

  it('matches parameter names without case and bracket suffixes, and paths without case when folding', () => {
    const p = patch({ url_pattern: '/Search', method: 'GET', match_param: 'Q', match_regex: 'evil' });
    const folded = compileVirtualPatches([p], Date.now(), true);
    for (const target of ['/search?q=evil', '/SEARCH?Q=evil', '/search?q[]=evil', '/search?q[0]=evil', '/search?q[k]=evil', '/search;x?q=evil'])
      expect(folded.match(request(target))?.patchId, target).toBe(p.id);
    expect(folded.match(request('/search?q=evil', { method: 'HEAD' }))?.patchId).toBe(p.id);
    const exact = compileVirtualPatches([p], Date.now(), false);
    expect(exact.match(request('/search?q=evil'))).toBeNull();
    expect(exact.match(request('/Search?Q=evil'))?.patchId).toBe(p.id);
  });

  it('also tests a value without its NUL characters', () => {
    const set = compileVirtualPatches([patch({ match_param: 'q', match_regex: 'union select' })]);
    expect(set.match(request('/?q=uni%00on%20sel%00ect'))).not.toBeNull();
  });

  it('ignores expired patches', () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    const expired = patch({ match_param: 'q', match_regex: 'x', expires_at: new Date(now - 1) });
    const live = patch({ match_param: 'q', match_regex: 'x', action: 'log', expires_at: new Date(now + 1000) });
    expect(compileVirtualPatches([expired, live], now).match(request('/?q=x'))).toEqual({ patchId: live.id, action: 'log' });
    expect(compileVirtualPatches([expired], now).match(request('/?q=x'))).toBeNull();
    expect(compileVirtualPatches([expired], now).skipped).toEqual([]);
  });

  it('says whether the body is worth reading for a method and path', () => {
    const set = compileVirtualPatches([
      patch({ url_pattern: '/api/*', method: 'POST', match_param: 'q', match_regex: 'x' }),
      patch({ url_pattern: '/login', method: 'ANY', match_param: 'user', match_regex: 'x' }),
      patch({ url_pattern: '*.php', method: 'PUT', match_param: 'f', match_regex: 'x' }),
    ]);
    expect(set.inspectsBody('POST', '/api/items')).toBe(true);
    expect(set.inspectsBody('POST', '/%61pi/items')).toBe(true);
    expect(set.inspectsBody('PUT', '/api/items')).toBe(false);
    expect(set.inspectsBody('PATCH', '/login/')).toBe(true);
    expect(set.inspectsBody('POST', '/logins')).toBe(false);
    expect(set.inspectsBody('PUT', '/up/x.php')).toBe(true);
    expect(set.inspectsBody('POST', '/up/x.php')).toBe(false);
    expect(set.inspectsBody('POST', '/')).toBe(false);
  });

  it('gives the same answers as a one-by-one evaluation with 1 000 patches', () => {
    const rows: VirtualPatchSource[] = [];
    const params = ['id', 'q', 'name', 'file', 'cmd'];
    for (let i = 0; i < 1000; i++) {
      rows.push({
        id: `vp_${String(i).padStart(4, '0')}`,
        url_pattern: i % 4 === 0 ? '/*' : `/app${i % 25}/*`,
        method: i % 3 === 0 ? 'POST' : 'ANY',
        match_param: params[i % params.length]!,
        match_regex: i % 50 === 7 ? '(x)\\1' : `tok${i}(?:[^0-9]|$)`,
        action: 'block',
        expires_at: null,
      });
    }
    const set = compileVirtualPatches(rows);
    expect(set.skipped).toHaveLength(20);
    const pathOk = (row: VirtualPatchSource, path: string) => row.url_pattern === '/*' || path.startsWith(row.url_pattern.slice(0, -1));
    for (let k = 0; k < 300; k++) {
      const i = (k * 37) % 1000;
      const path = `/app${(k * 7) % 25}/x`;
      const method = k % 2 === 0 ? 'POST' : 'GET';
      const param = params[k % params.length]!;
      const value = `pre tok${i} post`;
      const expected =
        rows.find((row) => row.match_regex !== '(x)\\1' && row.match_param === param && new RegExp(row.match_regex).test(value) && (row.method === 'ANY' || row.method === method) && pathOk(row, path))?.id ?? null;
      const viaQuery = set.match(request(`${path}?${param}=${encodeURIComponent(value)}`, { method }));
      const viaJson = set.match(request(path, { method, json: { [param]: value } }));
      expect(viaQuery?.patchId ?? null, `${method} ${path} ${param}=${value}`).toBe(expected);
      expect(viaJson?.patchId ?? null).toBe(expected);
    }
  });
});
