// PLACEHOLDER (foundation): a bounded, redacted window of source around each file finding.
import type { Finding } from './types.ts';

export interface SourceWindow {
  start_line: number;
  end_line: number;
  text: string;
}

/** Sets `details.source_window` on file findings of `root` (not on history findings). */
export function attachSourceWindows(_root: string, _findings: Finding[]): void {}
