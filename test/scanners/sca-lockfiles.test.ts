// Lockfile parsers, one format at a time, on small inline files written the way each tool writes them.
import { describe, expect, it } from 'vitest';
import {
  lockfileKind,
  mergeGoModules,
  parseCargoLock,
  parseGoMod,
  parseGoSum,
  parsePackageLock,
  parsePnpmLock,
  parsePoetryLock,
  parseRequirements,
  parseToml,
  parseYarnLock,
  TomlError,
} from '../../scanners/sca/lockfiles/index.ts';
import type { LockPackage, ParseResult } from '../../scanners/sca/lockfiles/types.ts';

const ids = (r: ParseResult): string[] => r.packages.map((p) => `${p.name}@${p.version}`).sort();
const find = (r: ParseResult, name: string, version?: string): LockPackage | undefined => r.packages.find((p) => p.name === name && (version === undefined || p.version === version));

describe('package-lock.json', () => {
  it('v1: walks the nested tree, resolves npm: aliases and skips git sources', () => {
    const r = parsePackageLock(
      JSON.stringify({
        lockfileVersion: 1,
        dependencies: {
          express: { version: '4.16.0', resolved: 'https://registry.npmjs.org/express/-/express-4.16.0.tgz', dependencies: { qs: { version: '6.5.1' }, debug: { version: '2.6.9', dependencies: { ms: { version: '2.0.0', dev: true } } } } },
          'string-lib': { version: 'npm:@scope/lodash@4.17.21' },
          fork: { version: 'github:acme/fork#abc123' },
          tarball: { version: 'https://example.com/tarball-1.0.0.tgz' },
          local: { version: 'file:../local' },
          mocha: { version: '10.0.0', dev: true },
        },
      }),
      'package-lock.json',
    );
    expect(ids(r)).toEqual(['@scope/lodash@4.17.21', 'debug@2.6.9', 'express@4.16.0', 'mocha@10.0.0', 'ms@2.0.0', 'qs@6.5.1']);
    expect(find(r, 'mocha')?.dev).toBe(true);
    expect(find(r, 'ms')?.dev).toBe(true);
    expect(find(r, 'qs')?.dev).toBe(false);
    expect(r.packages.every((p) => p.ecosystem === 'npm' && p.path === 'package-lock.json')).toBe(true);
    expect(r.issues.map((i) => i.reason)).toEqual(['unsupported', 'unsupported', 'unsupported']);
  });

  it('v2/v3: reads the packages map, not the legacy tree; skips the root, links and workspace sources; marks direct and dev', () => {
    const r = parsePackageLock(
      JSON.stringify({
        lockfileVersion: 2,
        packages: {
          '': { name: 'app', dependencies: { a: '^1', alias: 'npm:real@^2' }, devDependencies: { d: '^1' } },
          'node_modules/a': { version: '1.0.0' },
          'node_modules/a/node_modules/@s/b': { version: '3.0.0' },
          'node_modules/alias': { name: 'real', version: '2.1.0' },
          'node_modules/d': { version: '1.1.0', dev: true },
          'node_modules/t': { version: '0.1.0', dev: true },
          'node_modules/ws-link': { resolved: 'packages/ws', link: true },
          'packages/ws': { name: 'ws-local', version: '0.0.1' },
          'node_modules/git-dep': { version: '1.0.0', resolved: 'git+ssh://git@github.com/a/b.git#0123' },
          'node_modules/mirror': { version: '5.0.0', resolved: 'https://npm.internal.example/mirror/-/mirror-5.0.0.tgz' },
        },
        dependencies: { legacy: { version: '9.9.9' } },
      }),
      'app/package-lock.json',
    );
    expect(ids(r)).toEqual(['@s/b@3.0.0', 'a@1.0.0', 'd@1.1.0', 'mirror@5.0.0', 'real@2.1.0', 't@0.1.0']);
    expect(find(r, 'a')?.direct).toBe(true);
    expect(find(r, 'real')?.direct).toBe(true);
    expect(find(r, '@s/b')?.direct).toBe(false);
    expect(find(r, 'd')).toMatchObject({ direct: true, dev: true });
    expect(find(r, 't')).toMatchObject({ direct: false, dev: true });
    expect(r.issues).toHaveLength(1);
  });

  it('reports invalid JSON as a parse error instead of throwing', () => {
    const r = parsePackageLock('{"lockfileVersion": 3,', 'package-lock.json');
    expect(r.packages).toEqual([]);
    expect(r.issues[0]?.reason).toBe('parse_error');
  });
});

describe('yarn.lock', () => {
  it('classic: reads quoted and scoped multi-spec headers, aliases and skips non-registry sources', () => {
    const text = [
      '# yarn lockfile v1',
      '',
      '',
      '"@babel/code-frame@^7.0.0", "@babel/code-frame@^7.10.4":',
      '  version "7.12.13"',
      '  resolved "https://registry.yarnpkg.com/@babel/code-frame/-/code-frame-7.12.13.tgz#dcfc826beef65e75c50e21d3837d7d95798dd658"',
      '  dependencies:',
      '    "@babel/highlight" "^7.12.13"',
      '',
      'lodash@^4.17.15, lodash@^4.17.20:',
      '  version "4.17.21"',
      '',
      '"my-lodash@npm:lodash@4.17.11":',
      '  version "4.17.11"',
      '',
      'local@file:../local:',
      '  version "1.0.0"',
      '',
      'tar@https://example.com/tar-1.0.0.tgz:',
      '  version "1.0.0"',
      '  resolved "https://example.com/tar-1.0.0.tgz"',
      '',
      'gitdep@git+https://github.com/a/b.git#v1:',
      '  version "0.1.0"',
      '',
    ].join('\n');
    const r = parseYarnLock(text, 'yarn.lock');
    expect(ids(r)).toEqual(['@babel/code-frame@7.12.13', 'lodash@4.17.11', 'lodash@4.17.21']);
    expect(r.issues.map((i) => i.line)).toEqual([16, 19, 23]);
  });

  it('berry: uses resolution, keeps npm: resolutions only, strips archive URLs', () => {
    const text = [
      '__metadata:',
      '  version: 6',
      '  cacheKey: 8',
      '',
      '"app@workspace:.":',
      '  version: 0.0.0-use.local',
      '  resolution: "app@workspace:."',
      '',
      '"lodash@npm:^4.17.15, lodash@npm:^4.17.20":',
      '  version: 4.17.21',
      '  resolution: "lodash@npm:4.17.21"',
      '',
      '"@types/node@npm:^20":',
      '  version: 20.10.0',
      '  resolution: "@types/node@npm:20.10.0::__archiveUrl=https%3A%2F%2Fmirror%2F"',
      '',
      '"left-pad@https://github.com/a/left-pad.git#commit=abc":',
      '  version: 1.3.0',
      '  resolution: "left-pad@https://github.com/a/left-pad.git#commit=abc"',
      '',
      '"pkg@npm:1.10":',
      '  version: 1.10.0',
      '  resolution: "pkg@npm:1.10.0"',
      '',
    ].join('\n');
    const r = parseYarnLock(text, 'yarn.lock');
    expect(ids(r)).toEqual(['@types/node@20.10.0', 'lodash@4.17.21', 'pkg@1.10.0']);
    expect(r.issues).toHaveLength(1);
  });
});

describe('pnpm-lock.yaml', () => {
  it('v5: /name/version keys with _peer suffixes', () => {
    const text = [
      'lockfileVersion: 5.4',
      'specifiers:',
      '  react-dom: ^17.0.2',
      'dependencies:',
      '  react-dom: 17.0.2_react@17.0.2',
      'devDependencies:',
      '  jest: 29.0.0',
      'packages:',
      '  /react-dom/17.0.2_react@17.0.2:',
      '    resolution: {integrity: sha512-x}',
      '    dev: false',
      '  /@babel/core/7.12.3_supports-color@5.5.0:',
      '    resolution: {integrity: sha512-y}',
      '    dev: true',
      '  /jest/29.0.0:',
      '    resolution: {integrity: sha512-z}',
      '    dev: true',
      '  github.com/acme/fork/0123456789abcdef:',
      '    resolution: {tarball: https://codeload.github.com/acme/fork/tar.gz/0123456789abcdef}',
      '    name: fork',
      '    version: 1.0.0',
    ].join('\n');
    const r = parsePnpmLock(text, 'pnpm-lock.yaml');
    expect(ids(r)).toEqual(['@babel/core@7.12.3', 'jest@29.0.0', 'react-dom@17.0.2']);
    expect(find(r, 'react-dom')).toMatchObject({ direct: true, dev: false });
    expect(find(r, 'jest')).toMatchObject({ direct: true, dev: true });
    expect(find(r, '@babel/core')).toMatchObject({ direct: false, dev: true });
    expect(r.issues).toHaveLength(1);
  });

  it('v6: /name@version(peer) keys and importer objects', () => {
    const text = [
      "lockfileVersion: '6.0'",
      'importers:',
      '  .:',
      '    dependencies:',
      '      next:',
      '        specifier: 14.1.0',
      '        version: 14.1.0(react@18.2.0)',
      '      my-alias:',
      '        specifier: npm:lodash@4.17.11',
      '        version: /lodash@4.17.11',
      'packages:',
      '  /next@14.1.0(react@18.2.0):',
      '    resolution: {integrity: sha512-a}',
      '    dev: false',
      '  /lodash@4.17.11:',
      '    resolution: {integrity: sha512-b}',
      '    dev: false',
      '  /@scope/pkg@1.0.0-beta.1(@types/react@18.0.0)(react@18.2.0):',
      '    resolution: {integrity: sha512-c}',
      '    dev: true',
      '  /foo@file:../foo:',
      '    resolution: {directory: ../foo, type: directory}',
    ].join('\n');
    const r = parsePnpmLock(text, 'pnpm-lock.yaml');
    expect(ids(r)).toEqual(['@scope/pkg@1.0.0-beta.1', 'lodash@4.17.11', 'next@14.1.0']);
    expect(find(r, 'lodash')?.direct).toBe(true);
    expect(find(r, '@scope/pkg')?.direct).toBe(false);
    expect(r.issues).toHaveLength(1);
  });

  it('v9: packages and snapshots, counted once, non-registry versions skipped', () => {
    const text = [
      "lockfileVersion: '9.0'",
      'importers:',
      '  .:',
      '    dependencies:',
      '      react-dom:',
      '        specifier: ^18',
      '        version: 18.2.0(react@18.2.0)',
      'packages:',
      '  react-dom@18.2.0:',
      '    resolution: {integrity: sha512-a}',
      '  react@18.2.0:',
      '    resolution: {integrity: sha512-b}',
      "  '@x/y@2.0.0':",
      '    resolution: {integrity: sha512-c}',
      '  tarball@https://example.com/tarball-1.0.0.tgz:',
      '    resolution: {tarball: https://example.com/tarball-1.0.0.tgz}',
      '    version: 1.0.0',
      'snapshots:',
      '  react-dom@18.2.0(react@18.2.0):',
      '    dependencies:',
      '      react: 18.2.0',
      '  react@18.2.0: {}',
      "  '@x/y@2.0.0': {}",
      '  tarball@https://example.com/tarball-1.0.0.tgz: {}',
    ].join('\n');
    const r = parsePnpmLock(text, 'pnpm-lock.yaml');
    expect(ids(r)).toEqual(['@x/y@2.0.0', 'react-dom@18.2.0', 'react@18.2.0']);
    expect(find(r, 'react-dom')?.direct).toBe(true);
    expect(r.issues).toHaveLength(1);
  });

  it('refuses lockfile versions it does not know', () => {
    expect(parsePnpmLock("lockfileVersion: '3'\npackages: {}", 'pnpm-lock.yaml').issues[0]?.reason).toBe('unsupported');
  });
});

describe('requirements.txt', () => {
  it('reads exact pins with extras, markers, hashes and continuations; reports everything else by line', () => {
    const text = [
      '# comment',
      'Django==3.2.11 ; python_version >= "3.8"  # trailing comment',
      'requests[security,socks] == 2.25.1 \\',
      '    --hash=sha256:aaaa \\',
      '    --hash=sha256:bbbb',
      'zope.interface===5.4.0',
      'six (==1.16.0)',
      'idna>=2.5,==3.4',
      'flask>=2.0',
      'numpy==1.*',
      'gunicorn',
      'pkg @ https://example.com/pkg-1.0.tar.gz',
      '-e git+https://github.com/a/b.git#egg=b',
      '--index-url https://pypi.org/simple',
      '-c constraints.txt',
      'attrs==21.4.0 --hash sha256:cccc',
    ].join('\n');
    const r = parseRequirements(text, 'svc/requirements.txt');
    expect(ids(r)).toEqual(['Django@3.2.11', 'attrs@21.4.0', 'idna@3.4', 'requests@2.25.1', 'six@1.16.0', 'zope.interface@5.4.0']);
    expect(r.packages.every((p) => p.ecosystem === 'PyPI' && p.direct === true)).toBe(true);
    expect(r.issues.map((i) => [i.line, i.reason])).toEqual([
      [9, 'unsupported'],
      [10, 'unsupported'],
      [11, 'unsupported'],
      [12, 'unsupported'],
      [13, 'unsupported'],
      [15, 'excluded'],
    ]);
  });

  it('resolves -r includes relative to the file and never outside the root', () => {
    const r = parseRequirements(['-r base.txt', '--requirement=../shared/common.txt', '-r ../../../etc/passwd', '-r /abs/path.txt', '-r https://example.com/r.txt', '-rdev.txt'].join('\n'), 'svc/requirements.txt');
    expect(r.includes).toEqual(['svc/base.txt', 'shared/common.txt', 'svc/dev.txt']);
    expect(r.issues.map((i) => i.reason)).toEqual(['excluded', 'excluded', 'unsupported']);
  });
});

describe('poetry.lock', () => {
  it('reads [[package]] tables, category and groups, and skips non-PyPI sources', () => {
    const text = [
      '[[package]]',
      'name = "pyyaml"',
      'version = "5.3.1"',
      'category = "main"',
      'files = [',
      '    {file = "PyYAML-5.3.1.tar.gz", hash = "sha256:b8ea"},',
      ']',
      '',
      '[package.dependencies]',
      'colorama = {version = "*", markers = "sys_platform == \\"win32\\""}',
      '',
      '[[package]]',
      'name = "pytest"',
      'version = "7.0.0"',
      'category = "dev"',
      '',
      '[[package]]',
      'name = "black"',
      'version = "24.1.0"',
      'groups = ["dev", "lint"]',
      '',
      '[[package]]',
      'name = "local-lib"',
      'version = "0.1.0"',
      '',
      '[package.source]',
      'type = "directory"',
      'url = "../local-lib"',
      '',
      '[metadata]',
      'lock-version = "2.1"',
    ].join('\n');
    const r = parsePoetryLock(text, 'poetry.lock');
    expect(ids(r)).toEqual(['black@24.1.0', 'pytest@7.0.0', 'pyyaml@5.3.1']);
    expect(find(r, 'pyyaml')?.dev).toBe(false);
    expect(find(r, 'pytest')?.dev).toBe(true);
    expect(find(r, 'black')?.dev).toBe(true);
    expect(r.issues).toHaveLength(1);
  });

  it('reports broken TOML with its line', () => {
    const r = parsePoetryLock('[[package]]\nname = "a"\nversion = "1.0\n', 'poetry.lock');
    expect(r.issues[0]).toMatchObject({ reason: 'parse_error', line: 3 });
  });
});

describe('Cargo.lock', () => {
  it('keeps crates.io crates (git and sparse index), skips workspace, path and git crates, reports other registries', () => {
    const text = [
      'version = 3',
      '',
      '[[package]]',
      'name = "app"',
      'version = "0.1.0"',
      'dependencies = [',
      ' "smallvec",',
      ' "time 0.1.43",',
      ']',
      '',
      '[[package]]',
      'name = "smallvec"',
      'version = "1.6.0"',
      'source = "registry+https://github.com/rust-lang/crates.io-index"',
      '',
      '[[package]]',
      'name = "time"',
      'version = "0.1.43"',
      'source = "sparse+https://index.crates.io/"',
      '',
      '[[package]]',
      'name = "helper"',
      'version = "0.2.0"',
      'source = "git+https://github.com/a/helper#0123"',
      '',
      '[[package]]',
      'name = "internal"',
      'version = "1.0.0"',
      'source = "registry+https://my-registry.example/index"',
    ].join('\n');
    const r = parseCargoLock(text, 'Cargo.lock');
    expect(ids(r)).toEqual(['smallvec@1.6.0', 'time@0.1.43']);
    expect(r.packages.every((p) => p.ecosystem === 'crates.io')).toBe(true);
    expect(r.issues).toHaveLength(2);
  });

  it('reads the v1 format with its quoted [metadata] keys', () => {
    const text = ['[[package]]', 'name = "libc"', 'version = "0.2.80"', 'source = "registry+https://github.com/rust-lang/crates.io-index"', '', '[metadata]', '"checksum libc 0.2.80 (registry+https://github.com/rust-lang/crates.io-index)" = "4d58d1b7"'].join('\n');
    expect(ids(parseCargoLock(text, 'Cargo.lock'))).toEqual(['libc@0.2.80']);
  });
});

describe('go.mod and go.sum', () => {
  const goMod = [
    'module example.com/app',
    '',
    'go 1.21',
    '',
    'require (',
    '\tgithub.com/gorilla/websocket v1.4.0',
    '\tgolang.org/x/text v0.3.2',
    '\t"example.com/quoted" v1.0.0',
    '\tgithub.com/pkg/errors v0.9.1 // indirect',
    '\texample.com/local v0.0.0',
    '\texample.com/pinned v1.0.0',
    ')',
    '',
    'require github.com/docker/docker v20.10.7+incompatible',
    '',
    'replace github.com/gorilla/websocket => github.com/gorilla/websocket v1.4.1',
    'replace (',
    '\texample.com/local => ../local',
    '\texample.com/pinned v1.0.0 => example.com/fork v1.0.1',
    '\texample.com/pinned v0.9.0 => example.com/other v0.9.9',
    ')',
    'exclude golang.org/x/text v0.3.0',
  ].join('\n');

  it('applies replace directives and reads // indirect', () => {
    const r = parseGoMod(goMod, 'go.mod');
    expect(ids(r)).toEqual(['example.com/fork@v1.0.1', 'example.com/quoted@v1.0.0', 'github.com/docker/docker@v20.10.7+incompatible', 'github.com/gorilla/websocket@v1.4.1', 'github.com/pkg/errors@v0.9.1', 'golang.org/x/text@v0.3.2']);
    expect(find(r, 'github.com/pkg/errors')?.direct).toBe(false);
    expect(find(r, 'golang.org/x/text')?.direct).toBe(true);
    expect(r.issues).toEqual([expect.objectContaining({ reason: 'excluded', line: 10 })]);
  });

  it('go.sum: ignores /go.mod lines and keeps the highest downloaded version', () => {
    const sum = [
      'golang.org/x/text v0.3.0/go.mod h1:aaa=',
      'golang.org/x/text v0.3.2 h1:bbb=',
      'gopkg.in/yaml.v2 v2.2.2 h1:ccc=',
      'gopkg.in/yaml.v2 v2.2.1 h1:ddd=',
      'gopkg.in/yaml.v2 v2.2.8/go.mod h1:eee=',
      'github.com/only/gomod v1.0.0/go.mod h1:fff=',
    ].join('\n');
    const r = parseGoSum(sum, 'go.sum');
    expect(ids(r)).toEqual(['golang.org/x/text@v0.3.2', 'gopkg.in/yaml.v2@v2.2.2']);
    const merged = mergeGoModules(parseGoMod(goMod, 'go.mod'), r);
    // x/text is go.mod's; yaml.v2 only go.sum knows.
    expect(merged.packages.filter((p) => p.path === 'go.sum').map((p) => p.name)).toEqual(['gopkg.in/yaml.v2']);
    expect(parseGoSum('garbage line\n', 'go.sum').issues[0]?.reason).toBe('parse_error');
  });
});

describe('TOML reader', () => {
  it('reads the parts of TOML lockfiles use', () => {
    const doc = parseToml(
      [
        '# comment',
        'title = "a \\"q\\" \\u00e9"',
        "lit = 'C:\\path'",
        'ml = """',
        'line1 \\',
        '   line2"""',
        "mll = '''",
        "raw \\n'''",
        'int = 1_000',
        'hex = 0xff',
        'flt = -1.5e2',
        'date = 1979-05-27T07:32:00Z',
        'yes = true',
        'arr = [ 1, [2, 3], "x", ]   # trailing comma',
        'inline = { a.b = 1, "c d" = "e" }',
        '[table.sub]',
        'k = "v"',
        '[[items]]',
        'n = 1',
        '[items.extra]',
        'deep = true',
        '[[items]]',
        'n = 2',
      ].join('\n'),
    );
    expect(doc).toEqual({
      title: 'a "q" é',
      lit: 'C:\\path',
      ml: 'line1 line2',
      mll: 'raw \\n',
      int: 1000,
      hex: 255,
      flt: -150,
      date: '1979-05-27T07:32:00Z',
      yes: true,
      arr: [1, [2, 3], 'x'],
      inline: { a: { b: 1 }, 'c d': 'e' },
      table: { sub: { k: 'v' } },
      items: [{ n: 1, extra: { deep: true } }, { n: 2 }],
    });
  });

  it('rejects duplicate keys, junk after values and unterminated strings', () => {
    for (const bad of ['a = 1\na = 2', 'a = 1 b', 'a = "x', 'a = ', '[a\nb = 1', 'a = [1 2]']) expect(() => parseToml(bad), bad).toThrow(TomlError);
    expect(() => parseToml('a = ' + '['.repeat(100) + ']'.repeat(100))).toThrow(/too deep/);
  });
});

describe('lockfile discovery names', () => {
  it('recognises each format by file name', () => {
    expect(['package-lock.json', 'npm-shrinkwrap.json', 'yarn.lock', 'pnpm-lock.yaml', 'poetry.lock', 'go.mod', 'go.sum', 'Cargo.lock', 'requirements.txt', 'requirements-dev.txt', 'dev-requirements.txt', 'requirements.in', 'package.json', 'Cargo.toml'].map((n) => lockfileKind(n))).toEqual([
      'package-lock', 'package-lock', 'yarn', 'pnpm', 'poetry', 'go.mod', 'go.sum', 'cargo', 'requirements', 'requirements', 'requirements', null, null, null,
    ]);
    expect(lockfileKind('prod.txt', 'requirements')).toBe('requirements');
    expect(lockfileKind('notes.txt', 'docs')).toBeNull();
  });
});
