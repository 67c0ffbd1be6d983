// Terraform types as the value codecs walk them. TfType (the contract) has no tuple, but a value of
// `dynamic` type can be one on the wire, so the codecs work on this wider ValueType.
import type { AttributePath, BlockSchema, TfType } from '../framework/contract.ts';

export type ValueType =
  | 'string'
  | 'number'
  | 'bool'
  | 'dynamic'
  | readonly ['list' | 'set' | 'map', ValueType]
  | readonly ['object', { readonly [attribute: string]: ValueType }]
  | readonly ['tuple', readonly ValueType[]];

/** A value that does not fit its type; `path` says where. */
export class ValueError extends Error {
  constructor(
    readonly path: AttributePath,
    message: string,
  ) {
    super(path.length ? `${formatPath(path)}: ${message}` : message);
  }
}

export function formatPath(path: AttributePath): string {
  return path.map((step, i) => (typeof step === 'number' ? `[${step}]` : i === 0 ? step : `.${step}`)).join('');
}

/** The object type of a block: one attribute per schema attribute. */
export function blockType(block: BlockSchema): ValueType {
  const attributes: { [name: string]: TfType } = {};
  for (const attribute of block.attributes) attributes[attribute.name] = attribute.type;
  return ['object', attributes];
}

/** The JSON text Terraform uses for a type (`"string"`, `["list","number"]`, …). */
export function typeToJson(type: ValueType): string {
  return JSON.stringify(type);
}

/** Parses a type as Terraform writes it (dynamic values carry their type this way). */
export function typeFromJson(text: string): ValueType {
  return checkType(JSON.parse(text) as unknown);
}

function checkType(raw: unknown): ValueType {
  if (raw === 'string' || raw === 'number' || raw === 'bool' || raw === 'dynamic') return raw;
  if (Array.isArray(raw) && raw.length === 2) {
    const [kind, inner] = raw as [unknown, unknown];
    if (kind === 'list' || kind === 'set' || kind === 'map') return [kind, checkType(inner)];
    if (kind === 'tuple' && Array.isArray(inner)) return ['tuple', inner.map(checkType)];
    if (kind === 'object' && inner !== null && typeof inner === 'object' && !Array.isArray(inner)) {
      const attributes: { [name: string]: ValueType } = {};
      for (const [name, attributeType] of Object.entries(inner)) attributes[name] = checkType(attributeType);
      return ['object', attributes];
    }
  }
  throw new Error(`unsupported type ${JSON.stringify(raw)}`);
}
