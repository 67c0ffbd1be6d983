// The concrete type of a value placed in a `dynamic` attribute: Terraform needs one on the wire.
import { TfNumber, UNKNOWN, type TfValue } from '../framework/contract.ts';
import type { ValueType } from './types.ts';

export function inferType(value: TfValue): ValueType {
  if (value === null || value === UNKNOWN) return 'dynamic';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'bool';
  if (value instanceof TfNumber) return 'number';
  if (Array.isArray(value)) return ['tuple', value.map(inferType)];
  const attributes: { [name: string]: ValueType } = {};
  for (const [name, attribute] of Object.entries(value)) attributes[name] = inferType(attribute);
  return ['object', attributes];
}
