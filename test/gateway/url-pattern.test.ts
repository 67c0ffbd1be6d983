import { describe, expect, it } from 'vitest';
import { compileUrlPattern, firstSegment, methodMatches, normalisePath, patternScope, ScopeIndex } from '../../gateway/rules/url-pattern.ts';

describe('normalisePath', () => {
  it.each([
    ['/', '/'],
    ['/admin', '/admin'],
    ['/%61dmin', '/admin'],
    ['/x/../admin', '/admin'],
    ['/x/%2e%2e/admin', '/admin'],
    ['/x/..%2Fadmin', '/admin'],
    ['/./admin/.', '/admin/'],
    ['//admin///panel', '/admin/panel'],
    ['/../../admin', '/admin'],
    ['/a/b/..', '/a/'],
    ['/admin?x=/../y', '/admin'],
    ['/admin#frag', '/admin'],
    ['/%2561dmin', '/%61dmin'],
    ['/100%', '/100%'],
    ['/caf%C3%A9', '/café'],
    ['/bad%FF/%61', '/bad%FF/a'],
    ['/Admin', '/Admin'],
    ['http://example.com/admin', '/admin'],
    ['https://example.com', '/'],
    ['admin', '/admin'],
    ['/.well-known/x', '/.well-known/x'],
  ])('%s → %s', (raw, expected) => {
    expect(normalisePath(raw)).toBe(expected);
  });

  it('gives the same answer when called repeatedly and alternately', () => {
    for (let i = 0; i < 3; i++) {
      expect(normalisePath('/%61')).toBe('/a');
      expect(normalisePath('/b/../c')).toBe('/c');
    }
  });
});

describe('compileUrlPattern', () => {
  it('matches a pattern without stars exactly, on the normalised path', () => {
    const admin = compileUrlPattern('/admin');
    for (const path of ['/admin', '/%61dmin', '/x/../admin', '//admin', '/admin/', '/admin?debug=1']) expect(admin(path), path).toBe(true);
    for (const path of ['/Admin', '/admin/x', '/adminx', '/x/admin', '/admin//x', '/', '/%2561dmin']) expect(admin(path), path).toBe(false);
  });

  it('is case-sensitive', () => {
    expect(compileUrlPattern('/api/*')('/API/items')).toBe(false);
    expect(compileUrlPattern('/api/*')('/api/items')).toBe(true);
  });

  it('lets * match any run of characters, slashes included', () => {
    const api = compileUrlPattern('/api/*');
    expect(api('/api/')).toBe(true);
    expect(api('/api/items')).toBe(true);
    expect(api('/api/a/b/c')).toBe(true);
    expect(api('/api')).toBe(false);
    expect(api('/apix/items')).toBe(false);
    expect(api('/x/../api/%69tems')).toBe(true);

    const orders = compileUrlPattern('/api/*/orders');
    expect(orders('/api/v1/orders')).toBe(true);
    expect(orders('/api/v1/eu/orders')).toBe(true);
    expect(orders('/api/v1/orders/')).toBe(true);
    expect(orders('/api//orders')).toBe(false); // the empty segment is merged away: /api/orders
    expect(orders('/api/v1/orders/7')).toBe(false);

    const multi = compileUrlPattern('/a*b*c');
    expect(multi('/abc')).toBe(true);
    expect(multi('/a/x/b/y/c')).toBe(true);
    expect(multi('/acb')).toBe(false);
    expect(multi('/abcb')).toBe(false);
    expect(multi('/abcbc')).toBe(true);

    expect(compileUrlPattern('*')('/anything/at/all')).toBe(true);
    expect(compileUrlPattern('/*')('/')).toBe(true);
    expect(compileUrlPattern('*.php')('/x/index.php')).toBe(true);
    expect(compileUrlPattern('*.php')('/x/index.php5')).toBe(false);
    expect(compileUrlPattern('/**')('/x')).toBe(true);
  });

  it('does not let prefix and suffix share characters', () => {
    expect(compileUrlPattern('/ab*ba')('/aba')).toBe(false);
    expect(compileUrlPattern('/ab*ba')('/abba')).toBe(true);
  });

  it('treats everything but * literally (no regex meaning)', () => {
    const dots = compileUrlPattern('/file.txt');
    expect(dots('/file.txt')).toBe(true);
    expect(dots('/fileXtxt')).toBe(false);
    expect(compileUrlPattern('/a+b/(x)|[y]$')('/a+b/(x)|[y]$')).toBe(true);
    expect(compileUrlPattern('/a+b/(x)|[y]$')('/aab/x')).toBe(false);
    expect(compileUrlPattern('/what?')('/what')).toBe(false);
    expect(compileUrlPattern('/what?')('/what%3F')).toBe(true);
  });

  it('decodes percent-escapes in the pattern the same way', () => {
    expect(compileUrlPattern('/caf%C3%A9')('/café')).toBe(true);
    expect(compileUrlPattern('/caf%C3%A9/*')('/caf%c3%a9/menu')).toBe(true);
    expect(compileUrlPattern('/a%2Ab')('/a*b')).toBe(true);
    expect(compileUrlPattern('/a%2Ab')('/axb')).toBe(false);
  });

  it('stays quick and correct on a long hostile path', () => {
    const pattern = compileUrlPattern('/*a*a*a*a*a*a*a*a*b');
    expect(pattern(`/${'a'.repeat(100_000)}`)).toBe(false);
    expect(pattern(`/${'a'.repeat(100_000)}b`)).toBe(true);
  });
});

describe('patternScope and firstSegment', () => {
  it('name the first segment every matching path shares', () => {
    expect(patternScope('/api/*')).toBe('api');
    expect(patternScope('/login')).toBe('login');
    expect(patternScope('/')).toBe('');
    expect(patternScope('/%61pi/v1/*')).toBe('api');
    expect(patternScope('/*')).toBeNull();
    expect(patternScope('/ap*')).toBeNull();
    expect(patternScope('*')).toBeNull();
    expect(firstSegment('/api/items')).toBe('api');
    expect(firstSegment('/login')).toBe('login');
    expect(firstSegment('/')).toBe('');
  });
});

describe('methodMatches', () => {
  it('matches ANY, equal methods ignoring case, and HEAD for GET', () => {
    expect(methodMatches('ANY', 'DELETE')).toBe(true);
    expect(methodMatches('any', 'GET')).toBe(true);
    expect(methodMatches('POST', 'POST')).toBe(true);
    expect(methodMatches('post', 'POST')).toBe(true);
    expect(methodMatches('POST', 'get')).toBe(false);
    expect(methodMatches('GET', 'HEAD')).toBe(true); // servers answer HEAD with the GET handler
    expect(methodMatches('HEAD', 'GET')).toBe(false);
    expect(methodMatches('POST', 'HEAD')).toBe(false);
  });
});

describe('ScopeIndex', () => {
  it('returns the items whose pattern can match the path, scoped and open ones merged in insertion order', () => {
    const index = new ScopeIndex<string>();
    const patterns = ['/api/*', '/*', '/login', '/api/v1/*', '/ap*', '/%61pi/x'];
    for (const pattern of patterns) index.add(pattern, pattern);
    expect(index.candidates('/api/items')).toEqual(['/api/*', '/*', '/api/v1/*', '/ap*', '/%61pi/x']);
    expect(index.candidates('/%61pi/items')).toEqual(['/api/*', '/*', '/api/v1/*', '/ap*', '/%61pi/x']);
    expect(index.candidates('/login')).toEqual(['/*', '/login', '/ap*']);
    expect(index.candidates('/other')).toEqual(['/*', '/ap*']);
    // Every pattern that matches a path is among its candidates.
    for (const path of ['/api/items', '/login', '/apx', '/api/v1/a', '/other', '/']) {
      const matching = patterns.filter((p) => compileUrlPattern(p)(path));
      expect(index.candidates(path)).toEqual(expect.arrayContaining(matching));
    }
  });
});
