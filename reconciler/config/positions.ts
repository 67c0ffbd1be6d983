// From a path inside a parsed YAML (or JSON, which the `yaml` parser reads too) document back to a
// line and column, so that every problem points at the text the user has to change.
import { isAlias, isMap, isPair, isScalar, isSeq, type Document, type LineCounter, type Node, type Pair } from 'yaml';
import type { SourceLocation } from '../model.ts';
import type { Anchor, PathSegment } from './schema-check.ts';

export interface DocumentPositions {
  /** The node at `path`: its key (`key`), its value (`value`), or the key naming the mapping it is (`container`). */
  locate(path: readonly PathSegment[], anchor?: Anchor): SourceLocation;
  /** Where the document's content starts. */
  start(): SourceLocation;
}

type Located = { range?: [number, number, number] | null | undefined };

function offsetOf(node: unknown): number | null {
  const range = (node as Located | null | undefined)?.range;
  return range ? range[0] : null;
}

/** Positions in one document of a file; `fallbackOffset` is used when nothing better is known. */
export function documentPositions(doc: Document.Parsed | Document, lineCounter: LineCounter, file: string, fallbackOffset = 0): DocumentPositions {
  const at = (offset: number | null): SourceLocation => {
    const { line, col } = lineCounter.linePos(offset ?? fallbackOffset);
    return { file, line, column: col };
  };
  const resolve = (node: unknown): unknown => (isAlias(node) ? node.resolve(doc) : node);

  const child = (node: unknown, segment: PathSegment): { pair?: Pair; value: unknown } | null => {
    const target = resolve(node);
    if (isMap(target)) {
      const pair = target.items.find((p) => isPair(p) && String(isScalar(p.key) ? p.key.value : p.key) === String(segment));
      return pair ? { pair, value: pair.value } : null;
    }
    if (isSeq(target) && typeof segment === 'number') {
      const item = target.items[segment];
      return item === undefined ? null : { value: item };
    }
    return null;
  };

  return {
    start: () => at(offsetOf(doc.contents)),
    locate(path, anchor = 'value') {
      let node: unknown = doc.contents;
      let pair: Pair | undefined;
      for (const segment of path) {
        const next = child(node, segment);
        // A path the document does not have (a default, a missing field): the deepest known place.
        if (!next) return at(offsetOf(pair?.key) ?? offsetOf(node));
        pair = next.pair;
        node = next.value;
      }
      if (anchor === 'key' || anchor === 'container') {
        // A mapping that is a value points at its key (`spec:`); an item or the root at itself.
        const keyOffset = pair ? offsetOf(pair.key) : null;
        if (anchor === 'key' || keyOffset !== null) return at(keyOffset ?? offsetOf(node));
        return at(offsetOf(node));
      }
      return at(offsetOf(node as Node | null) ?? offsetOf(pair?.key));
    },
  };
}
