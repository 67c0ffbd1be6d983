// secretlint, the peer of the secrets scanner in bench/scan-quality.ts: its recommended preset run
// in-process through its Node API (`@secretlint/node`, what its CLI calls after globbing), given the
// list of files to scan, with the JSON formatter parsed back into findings. Secrets are masked in its
// output; nothing is printed.
import { join } from 'node:path';
import { createEngine } from '@secretlint/node';
import type { ToolFinding } from './scan-quality-score.ts';

export const SECRETLINT_PRESET = '@secretlint/secretlint-rule-preset-recommend';

/** What the `json` formatter prints: one result per file (a subset of @secretlint/types' SecretLintCoreResult). */
interface SecretlintResult {
  filePath: string;
  messages: Array<{
    type: string;
    ruleId: string;
    loc: { start: { line: number }; end: { line: number } };
  }>;
}

export interface SecretlintRun {
  findings: ToolFinding[];
  ms: number;
}

/** Lints `files` (relative to `root`); the time covers loading the preset and linting. */
export async function runSecretlint(root: string, files: readonly string[]): Promise<SecretlintRun> {
  const t0 = performance.now();
  const engine = await createEngine({
    cwd: root,
    configFileJSON: { rules: [{ id: SECRETLINT_PRESET }] },
    formatter: 'json',
    color: false,
    maskSecrets: true,
  });
  const { output } = await engine.executeOnFiles({ filePathList: files.map((f) => join(root, f)) });
  const ms = performance.now() - t0;
  const results = JSON.parse(output) as SecretlintResult[];
  const byAbsolute = new Map(files.map((f) => [join(root, f), f]));
  const findings: ToolFinding[] = [];
  for (const result of results) {
    const path = byAbsolute.get(result.filePath) ?? result.filePath;
    for (const m of result.messages) {
      if (m.type !== 'message') continue; // "ignore" entries record secretlint-disable comments, not findings
      findings.push({ rule: m.ruleId, path, line: m.loc.start.line, endLine: m.loc.end.line });
    }
  }
  return { findings, ms };
}
