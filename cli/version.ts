// Aegis's version, from package.json (beside cli/ in the sources, beside dist/ in the build: chunks
// sit flat in dist/, so one `..` reaches it from both). Imported by cli/program.ts, so it stays tiny.
import { readFileSync } from 'node:fs';

export function aegisVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}
