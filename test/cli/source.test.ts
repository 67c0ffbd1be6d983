// The ownership source validate/plan/apply/watch and `serve --config-dir` resolve
// (reconciler/cli/source.ts): --source > AEGIS_SOURCE (not empty) > aegis.yaml `source:` > git remote > directory name.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configDirOf, configPath, resolveSource } from '../../reconciler/cli/source.ts';

let root: string;
let plain: string; // no project file, no repository
let project: string; // aegis.yaml, inside a repository with a remote
let repo: string; // a repository with a remote, no project file

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'aegis-source-'));
  plain = join(root, 'shop-config');
  repo = join(root, 'repo');
  project = join(repo, 'project');
  await mkdir(plain);
  await mkdir(project, { recursive: true });
  execFileSync('git', ['init', '-q', repo]);
  execFileSync('git', ['-C', repo, 'remote', 'add', 'origin', 'git@github.com:acme/security-config.git']);
  await writeFile(join(project, 'aegis.yaml'), 'source: acme/from-project-file\n');
  await writeFile(join(project, 'cdk.tf.json'), '{}');
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe('resolveSource', () => {
  it('--source first', async () => {
    expect(await resolveSource('explicit', project, { AEGIS_SOURCE: 'from-env' })).toBe('explicit');
  });

  it('then AEGIS_SOURCE, unless empty', async () => {
    expect(await resolveSource(undefined, project, { AEGIS_SOURCE: 'from-env' })).toBe('from-env');
    expect(await resolveSource(undefined, project, { AEGIS_SOURCE: '' })).toBe('acme/from-project-file');
  });

  it('then the project file, then the git remote, then the directory name', async () => {
    expect(await resolveSource(undefined, project, {})).toBe('acme/from-project-file');
    expect(await resolveSource(undefined, repo, {})).toBe('github.com:acme/security-config');
    expect(await resolveSource(undefined, plain, {})).toBe('shop-config');
  });

  it('a malformed project file is an error, not skipped', async () => {
    const broken = join(root, 'broken');
    await mkdir(broken);
    await writeFile(join(broken, 'aegis.yaml'), 'source: ""\n');
    await expect(resolveSource(undefined, broken, {})).rejects.toThrow(/source must be a non-empty string/);
  });
});

describe('the config a command reads', () => {
  it('DIR or --terraform-json FILE, whose directory is the one the source comes from', async () => {
    expect(configPath('dir', {})).toBe('dir');
    const file = join(project, 'cdk.tf.json');
    expect(configPath(undefined, { terraformJson: file })).toBe(file);
    expect(await configDirOf(file)).toBe(project);
    expect(await configDirOf(project)).toBe(project);
    expect(await resolveSource(undefined, await configDirOf(file), {})).toBe('acme/from-project-file');
    expect(() => configPath(undefined, {})).toThrow(/missing the config/);
    expect(() => configPath('dir', { terraformJson: file })).toThrow(/not both/);
  });
});
