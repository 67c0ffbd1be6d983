// The gateway's request reading (gateway/inspect/): decoding, names, JSON, bodies.
import { brotliCompressSync, deflateRawSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { inspectBody, type BodyLimits } from '../../gateway/inspect/body.ts';
import { charsetOf, decodeText } from '../../gateway/inspect/charset.ts';
import { FieldCollector, MAX_FIELDS } from '../../gateway/inspect/collector.ts';
import { contentCodings, decodeContent } from '../../gateway/inspect/content-coding.ts';
import { MAX_JSON_DEPTH, scanJson } from '../../gateway/inspect/json-fields.ts';
import { scanXml } from '../../gateway/inspect/xml-fields.ts';
import { parameterNames } from '../../gateway/inspect/names.ts';
import { decodePercent, newDecodeFlags } from '../../gateway/inspect/percent.ts';
import { LazyInspectedRequest } from '../../gateway/inspected-request.ts';

describe('decodePercent', () => {
  it.each([
    ['plain', 'plain', {}],
    ['a%20b', 'a b', {}],
    ['a+b', 'a b', {}],
    ['caf%C3%A9', 'café', {}],
    ['%C0%AF', '/', { overlong: true }],
    ['%C0%A7or%201=1', "'or 1=1", { overlong: true }],
    ['%E0%80%AE', '.', { overlong: true }],
    ['%u0027%U003C', "'<", { percentU: true }],
    ['%FF%61', '%FFa', { invalid: true }],
    ['%ED%A0%80', '%ED%A0%80', { invalid: true }],
    ['100%', '100%', {}],
    ['%zz%4', '%zz%4', {}],
    ['%F0%9F%98%80', '😀', {}],
  ])('%s → %s', (input, expected, flags) => {
    const seen = newDecodeFlags();
    expect(decodePercent(input, true, seen)).toBe(expected);
    expect(seen).toEqual({ ...newDecodeFlags(), ...flags });
  });

  it('keeps + in paths', () => {
    expect(decodePercent('/a+b', false)).toBe('/a+b');
  });
});

describe('parameterNames', () => {
  it.each([
    ['q', ['q']],
    ['Q', ['q']],
    ['q[]', ['q']],
    ['q[0]', ['q', 'q.0']],
    ['q[Key]', ['q', 'q.key', 'key']],
    ['user[address][city]', ['user', 'user.address.city', 'user.address', 'address', 'address.city', 'city']],
    ['a[a]', ['a', 'a.a']],
    ['[x]', ['[x]']],
    // PHP turns an unclosed `[` into `_`, drops leading spaces and turns spaces and dots into `_`.
    ['q[unclosed', ['q', 'q_unclosed']],
    [' coupon', [' coupon', 'coupon']],
    ['a.b c', ['a.b c', 'a_b_c']],
    ['a.b[c]', ['a.b', 'a.b.c', 'c', 'a_b', 'a_b.c']],
  ])('%s → %j', (raw, names) => {
    expect(parameterNames(raw)).toEqual(names);
  });
});

describe('scanJson', () => {
  function scan(text: string) {
    const values: [string, string][] = [];
    let duplicates = 0;
    const result = scanJson(text, {
      value: (keys, value) => {
        values.push([keys.join('.'), value]);
        return true;
      },
      duplicateKey: () => duplicates++,
    });
    return { result, values, duplicates };
  }

  it('emits every scalar with its path, numbers as written', () => {
    expect(scan('{"a":1,"b":{"c":[true,null,"x\\u0041\\n"]},"d":-1.5e3}')).toEqual({
      result: 'ok',
      values: [
        ['a', '1'],
        ['b.c.0', 'true'],
        ['b.c.1', 'null'],
        ['b.c.2', 'xA\n'],
        ['d', '-1.5e3'],
      ],
      duplicates: 0,
    });
    expect(scan('"top"').values).toEqual([['', 'top']]);
  });

  it('keeps both values of a repeated key and reports it', () => {
    const out = scan('{"note":"first","note":"second"}');
    expect(out.values).toEqual([
      ['note', 'first'],
      ['note', 'second'],
    ]);
    expect(out.duplicates).toBe(1);
  });

  it('refuses what JSON.parse refuses', () => {
    for (const text of ['{a:1}', "{'a':1}", '{"a":1,}', '[1,]', '{"a":01}', '{"a":1} x', '"\t"', '{"a":"\\x"}', '', 'tru', '{"a" /*c*/ :1}', 'NaN']) {
      expect(scan(text).result, text).toBe('invalid');
      expect(() => JSON.parse(text), text).toThrow();
    }
  });

  it('refuses documents nested deeper than MAX_JSON_DEPTH', () => {
    const deep = `${'['.repeat(MAX_JSON_DEPTH + 2)}${']'.repeat(MAX_JSON_DEPTH + 2)}`;
    expect(scan(deep).result).toBe('too_deep');
    const fine = `${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`;
    expect(scan(fine).result).toBe('ok');
  });
});

describe('scanXml', () => {
  const scan = (text: string): string[][] => {
    const out: string[][] = [];
    scanXml(text, (path, name, value) => out.push([path, name, value]) > 0);
    return out;
  };

  it('gives element texts and attribute values under local names, references decoded, CDATA as text', () => {
    expect(scan('<r:root xmlns:r="urn:r"><r:a probe="1 &lt; 2">x &amp; y</r:a><b><![CDATA[<i>]]>&#x41;</b></r:root>')).toEqual([
      ['root.a@probe', 'probe', '1 < 2'],
      ['root.a', 'a', 'x & y'],
      ['root.b', 'b', '<i>A'],
    ]);
  });

  it('skips declarations, comments and DTDs (entities are not expanded), and namespace declarations', () => {
    expect(scan('<?xml version="1.0"?><!DOCTYPE r [<!ENTITY e SYSTEM "file:///etc/passwd">]><!-- <x>no</x> --><r xmlns="urn:x">&e;</r>')).toEqual([['r', 'r', '&e;']]);
  });

  it('reads malformed documents leniently: unquoted attributes, `>` in quotes, unclosed tags', () => {
    expect(scan("<a b='x>y' c=d><e>1<f>2</f>3</e")).toEqual([
      ['a@b', 'b', 'x>y'],
      ['a@c', 'c', 'd'],
      ['a.e', 'e', '1'],
      ['a.e.f', 'f', '2'],
      ['a.e', 'e', '3'],
    ]);
  });

  it('names a deeply nested value by its innermost 16 elements, and scans hostile shapes in linear time', () => {
    expect(scan(`${'<a>'.repeat(300)}<b>x`)).toEqual([[`${'a.'.repeat(15)}b`, 'b', 'x']]);
    // A tag name that never ends, closing tags that match nothing and runs of declarations cost no more than their length.
    expect(scan(`<a ${'x'.repeat(128 * 1024)}`)).toEqual([]);
    expect(scan(`${'<a>'.repeat(10_000)}${'</b>'.repeat(10_000)}<c>1</c>`)).toEqual([[`${'a.'.repeat(15)}c`, 'c', '1']]);
    expect(scan(`${'<!a>'.repeat(30_000)}<d>2</d>`)).toEqual([['d', 'd', '2']]);
  });

  it('stops when the sink says so', () => {
    let seen = 0;
    scanXml('<a>1</a><b>2</b><c>3</c>', () => ++seen < 2);
    expect(seen).toBe(2);
  });
});

describe('decodeContent', () => {
  const text = Buffer.from(JSON.stringify({ note: 'hello' }));

  it('undoes gzip, deflate (zlib and raw), br and stacked codings', () => {
    expect(decodeContent(gzipSync(text), ['gzip'], 1024, 100)).toEqual({ ok: true, bytes: text });
    expect(decodeContent(deflateRawSync(text), ['deflate'], 1024, 100)).toEqual({ ok: true, bytes: text });
    expect(decodeContent(brotliCompressSync(text), ['br'], 1024, 100)).toEqual({ ok: true, bytes: text });
    expect(decodeContent(brotliCompressSync(gzipSync(text)), ['gzip', 'br'], 1024, 100)).toEqual({ ok: true, bytes: text });
    expect(contentCodings('GZIP, identity ,br')).toEqual(['gzip', 'br']);
  });

  it('refuses unknown codings, corrupt data, output past the cap and bomb ratios', () => {
    expect(decodeContent(text, ['compress'], 1024, 100)).toMatchObject({ ok: false, failure: 'unsupported' });
    expect(decodeContent(text, ['gzip', 'gzip', 'gzip', 'gzip'], 1024, 100)).toMatchObject({ ok: false, failure: 'unsupported' });
    expect(decodeContent(Buffer.from('not gzip'), ['gzip'], 1024, 100)).toMatchObject({ ok: false, failure: 'corrupt' });
    const zeros = gzipSync(Buffer.alloc(10 * 1024 * 1024));
    expect(decodeContent(zeros, ['gzip'], 128 * 1024, 100)).toMatchObject({ ok: false, failure: 'too_large' });
    expect(decodeContent(zeros, ['gzip'], 64 * 1024 * 1024, 100)).toMatchObject({ ok: false, failure: 'ratio' });
    const fine = gzipSync(Buffer.from(JSON.stringify(Array.from({ length: 5000 }, (_, i) => ({ id: i, name: `item ${i}` })))));
    expect(decodeContent(fine, ['gzip'], 1024 * 1024, 100).ok).toBe(true);
  });
});

describe('decodeText', () => {
  it('decodes declared charsets and refuses ones the gateway cannot read', () => {
    expect(charsetOf('application/json; charset="UTF-16LE"')).toBe('utf-16le');
    expect(charsetOf('text/plain')).toBeUndefined();
    expect(decodeText(Buffer.from('<script>', 'utf16le'), 'utf-16le')).toBe('<script>');
    expect(decodeText(Buffer.from('\ufeff{"a":1}'), undefined)).toBe('{"a":1}');
    expect(decodeText(Buffer.from([0xe9]), 'iso-8859-1')).toBe('é');
    expect(decodeText(Buffer.from('x'), 'ibm037')).toBeNull();
    expect(decodeText(Buffer.from('x'), 'utf-7')).toBeNull();
  });
});

describe('inspectBody', () => {
  const limits: BodyLimits = { inspectBytes: 4096, multipartBytes: 64 * 1024, maxRatio: 100 };

  async function inspect(body: string | Buffer, contentType: string | undefined, extraHeaders: Record<string, string> = {}, wantsFile = (_: string) => false) {
    const headers: Record<string, string> = { ...extraHeaders };
    if (contentType) headers['content-type'] = contentType;
    const rawHeaders = Object.entries(headers).flat();
    const collector = new FieldCollector();
    const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
    const result = await inspectBody(Buffer.isBuffer(body) ? body : Buffer.from(body), { headers, rawHeaders }, media, limits, collector, wantsFile);
    return { result, fields: collector.fields.map((f) => [f.source, f.raw, f.value]), anomalies: [...collector.anomalies] };
  }

  it('reads JSON, sniffs JSON whatever the type, and reads forms', async () => {
    expect(await inspect('{"note":"x"}', 'application/json')).toMatchObject({ result: { state: 'json', refusal: null }, fields: [['json', 'note', 'x']] });
    expect(await inspect('{"note":"x"}', 'text/plain')).toMatchObject({ result: { state: 'other' }, fields: [['json', 'note', 'x']] });
    expect(await inspect('{"note":"x"}', 'application/octet-stream')).toMatchObject({ fields: [['json', 'note', 'x']] });
    expect(await inspect('a=1&b=%3C', 'application/x-www-form-urlencoded')).toMatchObject({ result: { state: 'form' }, fields: [['form', 'a', '1'], ['form', 'b', '<']] });
    expect(await inspect('a=1', undefined)).toMatchObject({ fields: [['form', 'a', '1']] });
    expect(await inspect('<a>x</a>', 'application/xml')).toMatchObject({ result: { state: 'other', text: '<a>x</a>' }, fields: [['xml', 'a', 'x']] });
  });

  it('reads XML element texts and attribute values, declared or untyped, and keeps the text whole', async () => {
    const soap = '<?xml version="1.0"?><s:Envelope xmlns:s="urn:s"><s:Body><m:Login xmlns:m="urn:m" mode="fast"><m:user>bob</m:user></m:Login></s:Body></s:Envelope>';
    for (const type of ['text/xml', 'application/soap+xml', undefined]) {
      const out = await inspect(soap, type);
      expect(out.result, String(type)).toMatchObject({ state: 'other', text: soap });
      // An untyped body is also read as a form (PHP does), which gives one odd field more.
      expect(out.fields.filter(([source]) => source === 'xml'), String(type)).toEqual([['xml', 'envelope.body.login@mode', 'fast'], ['xml', 'envelope.body.login.user', 'bob']]);
    }
    expect((await inspect('<p>x</p>', 'application/octet-stream')).fields).toEqual([]);
  });

  it('takes an XML document past MAX_FIELDS without refusing it, up to the cap', async () => {
    const big = `<list>${'<i>1</i>'.repeat(MAX_FIELDS + 10)}</list>`;
    const out = await inspect(big, 'application/xml');
    expect(out.result.refusal).toBeNull();
    expect(out.fields).toHaveLength(MAX_FIELDS);
  });

  it('refuses declared JSON that does not parse, and bodies it cannot decode', async () => {
    expect((await inspect('{note: 1}', 'application/json')).result.refusal).toBe('unparsable_body');
    expect((await inspect('x', 'text/plain; charset=ibm037')).result.refusal).toBe('unsupported_charset');
    expect((await inspect('x', 'text/plain', { 'content-encoding': 'compress' })).result.refusal).toBe('unsupported_encoding');
    expect((await inspect(gzipSync(Buffer.alloc(1024 * 1024)), 'text/plain', { 'content-encoding': 'gzip' })).result.refusal).toBe('decompression_limit');
    const twoTypes = new FieldCollector();
    const ambiguous = await inspectBody(Buffer.from('{}'), { headers: { 'content-type': 'text/plain' }, rawHeaders: ['Content-Type', 'text/plain', 'content-type', 'application/json'] }, 'text/plain', limits, twoTypes, () => false);
    expect(ambiguous.refusal).toBe('ambiguous_headers');
  });

  it('reads multipart text parts, file names, and file contents only when wanted', async () => {
    const body = [
      '--b',
      'Content-Disposition: form-data; name="note"',
      '',
      'hello',
      '--b',
      'Content-Disposition: form-data; name="upload"; filename="../../etc/passwd"',
      'Content-Type: application/octet-stream',
      '',
      'file content',
      '--b--',
      '',
    ].join('\r\n');
    const plain = await inspect(body, 'multipart/form-data; boundary=b');
    expect(plain.result).toMatchObject({ state: 'multipart', refusal: null });
    expect(plain.fields).toEqual([
      ['multipart', 'note', 'hello'],
      ['file_name', 'upload', '../../etc/passwd'],
    ]);
    const wanted = await inspect(body, 'multipart/form-data; boundary=b', {}, (name) => name === 'upload');
    expect(wanted.fields).toContainEqual(['multipart', 'upload', 'file content']);
  });

  it('refuses multipart that parsers could split differently, and one that cannot be split', async () => {
    // Without its closing delimiter, some parsers keep the last part and some drop it.
    const unterminated = await inspect('--b\r\nContent-Disposition: form-data; name="note"\r\n\r\nhello', 'multipart/form-data; boundary=b');
    expect(unterminated.result.refusal).toBe('ambiguous_body');
    const noBoundary = await inspect('whatever', 'multipart/form-data');
    expect(noBoundary.result.refusal).toBe('unparsable_body');
  });

  it('refuses a body with more fields than it inspects', async () => {
    const many = Array.from({ length: MAX_FIELDS + 1 }, (_, i) => `f${i}=1`).join('&');
    const out = await inspectBody(Buffer.from(many), { headers: {}, rawHeaders: [] }, 'application/x-www-form-urlencoded', { ...limits, inspectBytes: 1024 * 1024 }, new FieldCollector(), () => false);
    expect(out.refusal).toBe('too_many_parameters');
  });
});

describe('LazyInspectedRequest', () => {
  it('collects query and cookie fields with their names, anomalies and joined repeats', () => {
    const request = new LazyInspectedRequest('GET', '/a%c0%afb', 'Q=1&q=2&x[]=%u0041&n=a%00b', { cookie: 'session=abc; theme="dark"' }, '');
    expect(request.decodedPath).toBe('/a/b');
    expect(request.fields.map((f) => [f.source, f.raw, f.names, f.value])).toEqual([
      ['query', 'Q', ['q'], '1'],
      ['query', 'q', ['q'], '2'],
      ['query', 'x[]', ['x'], 'A'],
      ['query', 'n', ['n'], 'a\0b'],
      ['cookie', 'session', ['session'], 'abc'],
      ['cookie', 'theme', ['theme'], 'dark'],
      ['query', 'Q', ['q'], '1,2'],
    ]);
    expect([...request.anomalies].sort()).toEqual(['nul_byte', 'overlong_utf8', 'parameter_pollution', 'percent_u']);
    const repeated = new LazyInspectedRequest('GET', '/', 'q=a&q=b', {}, '');
    expect(repeated.fields.map((f) => f.value)).toEqual(['a', 'b', 'a,b']);
    expect(repeated.anomalies.has('parameter_pollution')).toBe(true);
  });
});
