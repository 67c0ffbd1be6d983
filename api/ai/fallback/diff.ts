// A one-line unified diff against a file, built from the finding's source window (the only copy of
// the code the engine has). It refuses whenever the window cannot be trusted to be the file's exact
// text around the line, because a patch that does not apply is worse than none. Stored windows
// drop the CR of CRLF lines (scanners/source-window.ts), so on a CRLF file the patch needs
// `git apply --ignore-whitespace`.
import type { SourceWindow } from './view.ts';

const CONTEXT = 3;
// Paths that are safe to write into `--- a/…` headers unquoted.
const SAFE_PATH = /^(?!\/)(?!.*(?:^|\/)\.\.(?:\/|$))[A-Za-z0-9._@+\-/]+$/;
// What redaction and truncation leave in a window: such a line is not the file's text.
const ALTERED = /…|\[REDACTED|\*{4,}/;

export interface WindowLines {
  /** Lines of the window, each without its `\n` (a `\r` of CRLF files stays). */
  lines: string[];
  start: number;
}

/** The window as lines, or undefined when its line count disagrees with its range. */
export function splitWindow(w: SourceWindow): WindowLines | undefined {
  const lines = w.text.split('\n');
  // A window ending with the file's final newline splits into one empty extra element.
  if (lines.length === w.end_line - w.start_line + 2 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length !== w.end_line - w.start_line + 1) return undefined;
  return { lines, start: w.start_line };
}

/** The line `n` of the window, or undefined. */
export function lineAt(win: WindowLines, n: number): string | undefined {
  return win.lines[n - win.start];
}

/**
 * A unified diff replacing line `n` with `replacement` (the same line ending kept), with up to three
 * context lines on each side. Undefined when the path is unsafe, the line is not in the window, no
 * line follows it in the window (a hunk without trailing context must end the file, which the
 * window cannot tell), or any line used is redacted or cut.
 */
export function replaceLineDiff(path: string, win: WindowLines, n: number, replacement: string): string | undefined {
  if (!SAFE_PATH.test(path)) return undefined;
  const original = lineAt(win, n);
  if (original === undefined || original.replace(/\r$/, '') === replacement.replace(/\r$/, '')) return undefined;
  const last = win.start + win.lines.length - 1;
  if (n >= last) return undefined;
  const from = Math.max(win.start, n - CONTEXT);
  // The window's last line may be the file's last line, possibly without a final newline, which a
  // context line would misstate; leave it out when another line can serve as context.
  const to = Math.min(n + CONTEXT, last - 1 > n ? last - 1 : last);
  const used = win.lines.slice(from - win.start, to - win.start + 1);
  if (used.some((l) => ALTERED.test(l))) return undefined;
  const eol = original.endsWith('\r') ? '\r' : '';
  const body: string[] = [];
  for (let i = from; i <= to; i++) {
    const text = lineAt(win, i)!;
    if (i === n) body.push(`-${text}`, `+${replacement.replace(/\r$/, '')}${eol}`);
    else body.push(` ${text}`);
  }
  const count = to - from + 1;
  return [`--- a/${path}`, `+++ b/${path}`, `@@ -${from},${count} +${from},${count} @@`, ...body, ''].join('\n');
}
