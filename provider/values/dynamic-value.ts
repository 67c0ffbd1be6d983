// The DynamicValue message: msgpack (what Terraform sends) or JSON (also accepted) in, msgpack out.
import type { TfValue } from '../framework/contract.ts';
import { decodeJson } from './json.ts';
import { decodeMsgpack, encodeMsgpack } from './msgpack.ts';
import type { ValueType } from './types.ts';

export interface DynamicValueMessage {
  msgpack?: Buffer | Uint8Array;
  json?: Buffer | Uint8Array;
}

/** An absent or empty DynamicValue decodes as null (e.g. prior_state on create is msgpack nil, but be lenient). */
export function decodeDynamicValue(message: DynamicValueMessage | null | undefined, type: ValueType): TfValue {
  if (message?.msgpack && message.msgpack.length > 0) return decodeMsgpack(message.msgpack, type);
  if (message?.json && message.json.length > 0) return decodeJson(message.json, type);
  return null;
}

export function encodeDynamicValue(value: TfValue, type: ValueType): { msgpack: Buffer } {
  return { msgpack: encodeMsgpack(value, type) };
}
