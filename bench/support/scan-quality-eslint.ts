// ESLint 9 with the maintained security plugins, the SAST peers of bench/scan-quality.ts, run
// in-process with a flat config built here (no config file is read: overrideConfigFile: true):
//   security        eslint-plugin-security, its `recommended` config
//   sdl             @microsoft/eslint-plugin-sdl, its `recommended` config (which also enables a few
//                   core rules, eslint-plugin-n's no-deprecated-api and eslint-plugin-react's rules;
//                   in 1.1.0 its `typescript` part is a copy of the `react` one, so the type-aware
//                   @typescript-eslint/no-implied-eval it was meant to add is not among them)
//   no-unsanitized  eslint-plugin-no-unsanitized, its `recommended` config
// TypeScript is parsed with @typescript-eslint/parser (no type information: none of these rules
// needs it). Inline `eslint-disable` comments are not honoured (noInlineConfig), as Aegis honours
// none either and the corpus silences some of these rules on purpose; the notices ESLint gives for
// them, and parse errors, are not findings (parse errors are counted apart).
import { createRequire } from 'node:module';
import { join, relative, sep } from 'node:path';
import tsParser from '@typescript-eslint/parser';
import { ESLint, type Linter } from 'eslint';
import type { ToolFinding } from './scan-quality-score.ts';

export const ESLINT_PLUGINS = ['security', 'sdl', 'no-unsanitized'] as const;
export type EslintPlugin = (typeof ESLINT_PLUGINS)[number];

/** The part of a plugin these configs use; the plugins ship no type declarations. */
interface PluginWithConfigs<C> {
  configs: { recommended: C };
}

const require = createRequire(import.meta.url);
const security = require('eslint-plugin-security') as PluginWithConfigs<Linter.Config>;
const sdl = require('@microsoft/eslint-plugin-sdl') as PluginWithConfigs<Linter.Config[]>;
const noUnsanitized = require('eslint-plugin-no-unsanitized') as PluginWithConfigs<Linter.Config>;

const TS_FILES = ['**/*.ts', '**/*.tsx', '**/*.mts', '**/*.cts'];

/**
 * SDL's recommended config registers its own copy of eslint-plugin-security (1.4) under the name
 * `security`, enabling none of its rules; ESLint refuses two different plugins under one name, so
 * next to eslint-plugin-security 4 that registration is dropped.
 */
function sdlConfig(withSecurity: boolean): Linter.Config[] {
  if (!withSecurity) return sdl.configs.recommended;
  return sdl.configs.recommended.flatMap((c): Linter.Config[] => {
    if (!c.plugins || !('security' in c.plugins)) return [c];
    const { security: _dropped, ...plugins } = c.plugins;
    return Object.keys(plugins).length > 0 || c.rules ? [{ ...c, plugins }] : [];
  });
}

export function eslintConfig(plugins: readonly EslintPlugin[]): Linter.Config[] {
  const config: Linter.Config[] = [
    { files: ['**/*.{js,mjs,cjs,jsx}', ...TS_FILES] },
    { files: TS_FILES, languageOptions: { parser: tsParser } },
    { linterOptions: { noInlineConfig: true, reportUnusedDisableDirectives: 'off' } },
    // eslint-plugin-react (through SDL) warns on every run when it cannot tell the React version.
    { settings: { react: { version: '19.0' } } },
  ];
  if (plugins.includes('security')) config.push(security.configs.recommended);
  if (plugins.includes('sdl')) config.push(...sdlConfig(plugins.includes('security')));
  if (plugins.includes('no-unsanitized')) config.push(noUnsanitized.configs.recommended);
  return config;
}

export interface EslintRun {
  findings: ToolFinding[];
  parseErrors: Array<{ path: string; message: string }>;
  /** Files ESLint left out ("File ignored …"): none are expected, every file is matched by the config. */
  ignored: string[];
  ms: number;
}

/** Lints `files` (relative to `root`) with the given plugins; the time covers building the linter and linting. */
export async function runEslint(root: string, files: readonly string[], plugins: readonly EslintPlugin[]): Promise<EslintRun> {
  const t0 = performance.now();
  const eslint = new ESLint({ cwd: root, overrideConfigFile: true, overrideConfig: eslintConfig(plugins), errorOnUnmatchedPattern: false });
  const results = await eslint.lintFiles(files.map((f) => join(root, f)));
  const ms = performance.now() - t0;
  const findings: ToolFinding[] = [];
  const parseErrors: EslintRun['parseErrors'] = [];
  const ignored: string[] = [];
  for (const result of results) {
    const path = relative(root, result.filePath).split(sep).join('/');
    for (const m of result.messages) {
      if (m.fatal) parseErrors.push({ path, message: m.message });
      else if (!m.ruleId && m.message.startsWith('File ignored')) ignored.push(path);
      else if (m.ruleId) findings.push({ rule: m.ruleId, path, line: m.line, ...(m.endLine !== undefined ? { endLine: m.endLine } : {}) });
    }
  }
  return { findings, parseErrors, ignored, ms };
}
