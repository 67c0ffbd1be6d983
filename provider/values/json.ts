// DynamicValue and RawState in JSON (cty's JSON form): requests may carry JSON instead of msgpack,
// and UpgradeResourceState always brings the stored state as JSON.
import { TfNumber, type AttributePath, type TfValue } from '../framework/contract.ts';
import { JsonNumberText, parseJsonText, type JsonTextValue } from './json-text.ts';
import { parseDecimal } from './number.ts';
import { typeFromJson, ValueError, type ValueType } from './types.ts';

export function decodeJson(bytes: Uint8Array, type: ValueType): TfValue {
  return fromJson(parseJsonText(Buffer.from(bytes).toString('utf8')), type, []);
}

function isJsonObject(raw: JsonTextValue): raw is { [key: string]: JsonTextValue } {
  return raw !== null && typeof raw === 'object' && !Array.isArray(raw) && !(raw instanceof JsonNumberText);
}

function fromJson(raw: JsonTextValue | undefined, type: ValueType, path: AttributePath): TfValue {
  if (raw === null || raw === undefined) return null;
  if (type === 'dynamic') {
    // cty writes a dynamic value as {"value": …, "type": …}.
    if (!isJsonObject(raw) || !('type' in raw)) throw new ValueError(path, 'dynamic value without a type');
    return fromJson(raw.value, typeFromJson(JSON.stringify(toPlainJson(raw.type))), path);
  }
  if (type === 'string') {
    if (typeof raw !== 'string') throw new ValueError(path, 'expected a string');
    return raw;
  }
  if (type === 'bool') {
    if (typeof raw !== 'boolean') throw new ValueError(path, 'expected a bool');
    return raw;
  }
  if (type === 'number') {
    if (raw instanceof JsonNumberText) return new TfNumber(raw.text);
    if (typeof raw === 'string' && parseDecimal(raw)) return new TfNumber(raw);
    throw new ValueError(path, 'expected a number');
  }
  const [kind, inner] = type;
  if (kind === 'list' || kind === 'set' || kind === 'tuple') {
    if (!Array.isArray(raw)) throw new ValueError(path, `expected a ${kind}`);
    if (kind === 'tuple') return raw.map((item, i) => fromJson(item, inner[i] ?? 'dynamic', [...path, i]));
    return raw.map((item, i) => fromJson(item, inner, [...path, i]));
  }
  if (!isJsonObject(raw)) throw new ValueError(path, `expected a ${kind}`);
  const result: { [key: string]: TfValue } = {};
  if (kind === 'map') {
    for (const [key, item] of Object.entries(raw)) result[key] = fromJson(item, inner, [...path, key]);
    return result;
  }
  // Attributes removed from the schema since the state was written are dropped here.
  for (const [name, attributeType] of Object.entries(inner)) result[name] = fromJson(raw[name], attributeType, [...path, name]);
  return result;
}

function toPlainJson(raw: JsonTextValue | undefined): unknown {
  if (raw instanceof JsonNumberText) return Number(raw.text);
  if (Array.isArray(raw)) return raw.map(toPlainJson);
  if (raw !== null && typeof raw === 'object') return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, toPlainJson(v)]));
  return raw ?? null;
}
