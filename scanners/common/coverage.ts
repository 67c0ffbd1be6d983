// What every code scanner's coverage shares: skipped files summarised by type and reason, so a
// report can say "12 .png files skipped as binary" instead of listing them. In common/ because the
// scanners in subfolders (secrets, SAST) use it and scanners/ itself imports from secrets/.
import type { SkippedByType, SkippedFile } from '../types.ts';

/**
 * A path's file type for the coverage summary: its lower-cased extension (`.png`; `.min.js` is
 * `.js`), or for a name without one (`Makefile`, `.DS_Store`, `id_rsa`) the lower-cased name.
 */
export function fileType(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1).toLowerCase();
  const dot = name.lastIndexOf('.');
  return dot > 0 && dot < name.length - 1 ? name.slice(dot) : name;
}

/** Skipped files counted by type and reason: most files first, then by type and reason. */
export function skippedByType(skipped: readonly SkippedFile[]): SkippedByType[] {
  const counts = new Map<string, SkippedByType>();
  for (const s of skipped) {
    const type = fileType(s.path);
    const key = `${type}\0${s.reason}`;
    const entry = counts.get(key);
    if (entry) entry.files++;
    else counts.set(key, { type, reason: s.reason, files: 1 });
  }
  return [...counts.values()].sort((a, b) => b.files - a.files || (a.type < b.type ? -1 : a.type > b.type ? 1 : 0) || (a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0));
}
