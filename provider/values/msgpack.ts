// DynamicValue in msgpack, as Terraform's cty writes it, converted to and from TfValue under the
// type the schema gives. Objects carry exactly one key per attribute; unknown is an extension
// (Terraform 1.5 writes fixext1 type 0 payload 0, newer ones other types: any extension decodes
// as unknown); numbers keep their exact value (see number.ts); `dynamic` is [type JSON, value].
import { decode, encode, ExtData, type ExtensionCodecType } from '@msgpack/msgpack';
import { TfNumber, UNKNOWN, type AttributePath, type TfValue } from '../framework/contract.ts';
import { inferType } from './infer.ts';
import { numberFromWire, numberToWire, parseDecimal } from './number.ts';
import { typeFromJson, typeToJson, ValueError, type ValueType } from './types.ts';

const unknownCodec: ExtensionCodecType<undefined> = {
  tryToEncode: (object) => (object === UNKNOWN ? new ExtData(0, Uint8Array.of(0)) : null),
  decode: () => UNKNOWN,
};

export function decodeMsgpack(bytes: Uint8Array, type: ValueType): TfValue {
  const raw: unknown = decode(bytes, { extensionCodec: unknownCodec, useBigInt64: true });
  return fromWire(raw, type, []);
}

export function encodeMsgpack(value: TfValue, type: ValueType): Buffer {
  const bytes = encode(toWire(value, type, []), { extensionCodec: unknownCodec, useBigInt64: true });
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function isPlainObject(raw: unknown): raw is { [key: string]: unknown } {
  return raw !== null && typeof raw === 'object' && !Array.isArray(raw) && !(raw instanceof Uint8Array) && !(raw instanceof TfNumber);
}

function fromWire(raw: unknown, type: ValueType, path: AttributePath): TfValue {
  if (raw === UNKNOWN) return UNKNOWN;
  if (raw === null || raw === undefined) return null;
  if (type === 'dynamic') {
    if (!Array.isArray(raw) || raw.length !== 2) throw new ValueError(path, 'dynamic value is not [type, value]');
    const [typeJson, inner] = raw as [unknown, unknown];
    const text = typeJson instanceof Uint8Array ? Buffer.from(typeJson).toString('utf8') : typeJson;
    if (typeof text !== 'string') throw new ValueError(path, 'dynamic value without a type');
    return fromWire(inner, typeFromJson(text), path);
  }
  if (type === 'string') {
    if (typeof raw !== 'string') throw new ValueError(path, `expected a string, got ${typeof raw}`);
    return raw;
  }
  if (type === 'bool') {
    if (typeof raw !== 'boolean') throw new ValueError(path, `expected a bool, got ${typeof raw}`);
    return raw;
  }
  if (type === 'number') {
    if (typeof raw === 'number' || typeof raw === 'bigint') return new TfNumber(numberFromWire(raw));
    if (typeof raw === 'string' && parseDecimal(raw)) return new TfNumber(raw);
    throw new ValueError(path, `expected a number, got ${typeof raw}`);
  }
  const [kind, inner] = type;
  if (kind === 'list' || kind === 'set' || kind === 'tuple') {
    if (!Array.isArray(raw)) throw new ValueError(path, `expected a ${kind}`);
    const items: unknown[] = raw;
    if (kind === 'tuple') {
      if (items.length !== inner.length) throw new ValueError(path, `expected ${inner.length} tuple elements, got ${items.length}`);
      return items.map((item, i) => fromWire(item, inner[i] ?? 'dynamic', [...path, i]));
    }
    return items.map((item, i) => fromWire(item, inner, [...path, i]));
  }
  if (!isPlainObject(raw)) throw new ValueError(path, `expected a ${kind}`);
  const result: { [key: string]: TfValue } = {};
  if (kind === 'map') {
    for (const [key, item] of Object.entries(raw)) result[key] = fromWire(item, inner, [...path, key]);
    return result;
  }
  // Missing attributes read as null and extra ones are ignored: being lenient on input costs nothing.
  for (const [name, attributeType] of Object.entries(inner)) result[name] = fromWire(raw[name], attributeType, [...path, name]);
  return result;
}

function toWire(value: TfValue | undefined, type: ValueType, path: AttributePath): unknown {
  if (value === UNKNOWN) return UNKNOWN;
  if (value === null || value === undefined) return null;
  if (type === 'dynamic') {
    const concrete = inferType(value);
    return [Buffer.from(typeToJson(concrete)), toWire(value, concrete, path)];
  }
  if (type === 'string') {
    if (typeof value !== 'string') throw new ValueError(path, 'expected a string');
    return value;
  }
  if (type === 'bool') {
    if (typeof value !== 'boolean') throw new ValueError(path, 'expected a bool');
    return value;
  }
  if (type === 'number') {
    if (!(value instanceof TfNumber)) throw new ValueError(path, 'expected a TfNumber');
    return numberToWire(value.text);
  }
  const [kind, inner] = type;
  if (kind === 'list' || kind === 'set' || kind === 'tuple') {
    if (!Array.isArray(value)) throw new ValueError(path, `expected a ${kind} (array)`);
    if (kind === 'tuple') {
      if (value.length !== inner.length) throw new ValueError(path, `expected ${inner.length} tuple elements`);
      return value.map((item, i) => toWire(item, inner[i] ?? 'dynamic', [...path, i]));
    }
    return value.map((item, i) => toWire(item, inner, [...path, i]));
  }
  if (!isPlainObject(value)) throw new ValueError(path, `expected a ${kind} (object)`);
  const result: { [key: string]: unknown } = {};
  if (kind === 'map') {
    for (const [key, item] of Object.entries(value)) result[key] = toWire(item, inner, [...path, key]);
    return result;
  }
  // Terraform rejects objects with missing or extra keys: absent attributes become null, extra
  // ones are a provider bug worth a clear message.
  const attributes = type[0] === 'object' ? type[1] : {};
  for (const name of Object.keys(value)) {
    if (!Object.hasOwn(attributes, name)) throw new ValueError([...path, name], 'attribute not in the schema');
  }
  for (const [name, attributeType] of Object.entries(attributes)) result[name] = toWire(value[name], attributeType, [...path, name]);
  return result;
}
