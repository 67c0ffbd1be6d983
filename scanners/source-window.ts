// A bounded, redacted window of source around each file finding, kept in `details.source_window` so
// AI triage (and people) see the code around the problem without reading the checkout again — the
// checkout is gone once the scan ends. Files are read the way the scanners read them: inside the
// root only, the last component not a symlink, no directory on the way leaving the root, size- and
// binary-checked. Each file is redacted as a whole (full context, its real path for path-gated
// rules) before any window is cut from it, so a window cannot hold a secret the secrets scan would
// have found; a secrets finding whose own secret is not among the masked ones gets no window.
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { secretDigest } from './secrets/redact.ts';
import { applySpans, redactSecrets, secretSpans } from './secrets/redact-text.ts';
import type { Finding } from './types.ts';

export interface SourceWindow {
  start_line: number;
  end_line: number;
  text: string;
}

export interface SourceWindowOptions {
  /** Lines either side of the finding's line (default 6). */
  radius?: number;
  /** Bytes of window text at most (default 3000). */
  maxBytes?: number;
  /** Findings given a window per call at most (default 2000). */
  maxFindings?: number;
}

export const DEFAULT_RADIUS = 6;
export const DEFAULT_MAX_BYTES = 3000;
export const DEFAULT_MAX_FINDINGS = 2000;
/** Larger files get no window: redacting them whole would cost more than a window is worth. */
export const MAX_FILE_BYTES = 2 * 1024 * 1024;
export const MAX_LINE_CHARS = 400;
const BINARY_SNIFF_BYTES = 8192;

interface RedactedFile {
  /** Lines of the redacted text (multi-line secrets keep their line breaks, so numbers hold). */
  lines: string[];
  /** SHA-256 digests of the secrets the scanner's rules found (and masked) in it. */
  digests: Set<string>;
  /** 1-based lines on which something was masked. */
  maskedLines: Set<number>;
}

/** The real path of `rel` under `root`, or undefined when it would leave the root. */
function insideRoot(realRoot: string, rel: string): string | undefined {
  if (rel === '' || rel.includes('\0') || isAbsolute(rel)) return undefined;
  const abs = resolve(realRoot, rel);
  if (!abs.startsWith(realRoot + sep)) return undefined;
  let dir: string;
  try {
    dir = realpathSync(dirname(abs)); // a symlinked directory on the way must not lead out
  } catch {
    return undefined;
  }
  if (dir !== realRoot && !dir.startsWith(realRoot + sep)) return undefined;
  return join(dir, basename(abs));
}

function readFile(path: string): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_FILE_BYTES) return undefined;
    const buf = Buffer.alloc(st.size);
    let off = 0;
    while (off < st.size) {
      const n = readSync(fd, buf, off, st.size - off, off);
      if (n === 0) break;
      off += n;
    }
    const out = buf.subarray(0, off);
    return out.subarray(0, BINARY_SNIFF_BYTES).indexOf(0) === -1 ? out : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** 1-based line of ascending offsets, counting forward from the previous call. */
function lineCounter(buf: Buffer): (offset: number) => number {
  let pos = 0;
  let line = 1;
  return (offset) => {
    for (let i = buf.indexOf(0x0a, pos); i >= 0 && i < offset; i = buf.indexOf(0x0a, i + 1)) {
      line++;
      pos = i + 1;
    }
    return line;
  };
}

function redactFile(buf: Buffer, path: string): RedactedFile {
  const ruleSecrets: string[] = [];
  const spans = secretSpans(buf, { path, ruleSecrets });
  const digests = new Set(ruleSecrets.map((s) => secretDigest(s)));
  const maskedLines = new Set<number>();
  const lineAt = lineCounter(buf);
  for (const s of spans) {
    // spans are sorted and disjoint, so offsets only grow
    const first = lineAt(s.start);
    const last = lineAt(Math.max(s.start, s.end - 1));
    for (let l = first; l <= last; l++) maskedLines.add(l);
  }
  const lines = applySpans(buf, spans, true).split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop(); // the final newline ends a line, it does not start one
  return { lines: lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l)), digests, maskedLines };
}

function truncateLine(line: string): string {
  if (line.length <= MAX_LINE_CHARS) return line;
  const chars = [...line];
  return chars.length <= MAX_LINE_CHARS ? line : `${chars.slice(0, MAX_LINE_CHARS).join('')}…`;
}

/**
 * Lines [line − radius, end + radius] of the file, grown outward from the finding's line while
 * they fit in maxBytes (the finding's own line always comes first, truncated if need be).
 */
function cutWindow(lines: readonly string[], line: number, endLine: number, radius: number, maxBytes: number): SourceWindow | undefined {
  if (line < 1 || line > lines.length) return undefined;
  const last = Math.min(lines.length, Math.max(line, Math.min(endLine, line + radius)) + radius);
  const first = Math.max(1, line - radius);
  // each line redacted again in the window's own context (the file's markers are left alone)
  const text = (n: number): string => truncateLine(redactSecrets(lines[n - 1]!).text);
  let lo = line;
  let hi = line;
  let own = text(line);
  while (Buffer.byteLength(own) > maxBytes) own = [...own].slice(0, Math.max(0, [...own].length - 64)).join('');
  let bytes = Buffer.byteLength(own);
  const parts = new Map<number, string>([[line, own]]);
  // alternate below and above so the finding stays near the middle
  for (let grown = true; grown; ) {
    grown = false;
    for (const n of [hi + 1, lo - 1]) {
      if (n < first || n > last || parts.has(n)) continue;
      const t = text(n);
      const cost = Buffer.byteLength(t) + 1;
      if (bytes + cost > maxBytes) continue;
      parts.set(n, t);
      bytes += cost;
      if (n > hi) hi = n;
      else lo = n;
      grown = true;
    }
  }
  const out: string[] = [];
  for (let n = lo; n <= hi; n++) out.push(parts.get(n)!);
  return { start_line: lo, end_line: hi, text: out.join('\n') };
}

/** Sets `details.source_window` on file findings of `root` (not on history findings). */
export function attachSourceWindows(root: string, findings: Finding[], options: SourceWindowOptions = {}): void {
  const radius = Math.max(0, Math.floor(options.radius ?? DEFAULT_RADIUS));
  const maxBytes = Math.max(1, Math.floor(options.maxBytes ?? DEFAULT_MAX_BYTES));
  let budget = Math.max(0, Math.floor(options.maxFindings ?? DEFAULT_MAX_FINDINGS));
  let realRoot: string;
  try {
    realRoot = realpathSync(root);
  } catch {
    return;
  }
  const files = new Map<string, RedactedFile | undefined>();
  for (const f of findings) {
    if (budget <= 0) return;
    const loc = f.location;
    if (loc.kind !== 'file' || loc.commit !== undefined || !Number.isInteger(loc.line)) continue;
    budget--;
    let file = files.get(loc.path);
    if (!files.has(loc.path)) {
      const abs = insideRoot(realRoot, loc.path);
      const buf = abs === undefined ? undefined : readFile(abs);
      file = buf === undefined ? undefined : redactFile(buf, loc.path);
      files.set(loc.path, file);
    }
    if (file === undefined) continue;
    // fail closed: a secrets finding's secret must be one the file's redaction masked
    const digest = f.details.secret_sha256;
    if (typeof digest === 'string') {
      const keyed = f.details.secret_hash_keyed === true;
      if (keyed ? !file.maskedLines.has(loc.line) : !file.digests.has(digest)) continue;
    }
    const window = cutWindow(file.lines, loc.line, loc.end_line ?? loc.line, radius, maxBytes);
    if (window !== undefined) f.details.source_window = window;
  }
}
