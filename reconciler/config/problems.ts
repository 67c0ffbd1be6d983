// Ordering and classifying ConfigProblems: output reads file by file, top to bottom, and lint
// findings (which never fail `aegis validate`) are told apart by their prefix.
import type { ConfigProblem, SourceLocation } from '../model.ts';

export const WARNING_PREFIX = 'warning: ';

export const isWarning = (problem: ConfigProblem): boolean => problem.message.startsWith(WARNING_PREFIX);

export function compareLocations(a: SourceLocation, b: SourceLocation): number {
  if (a.file !== b.file) return a.file < b.file ? -1 : 1;
  return a.line - b.line || a.column - b.column;
}

/** Sorted by file, line, column; problems at the same place keep their order (the sort is stable). */
export function sortProblems(problems: readonly ConfigProblem[]): ConfigProblem[] {
  return [...problems].sort((a, b) => compareLocations(a.location, b.location));
}
