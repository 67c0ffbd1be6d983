// Unit tests of the plugin-protocol layer: the DynamicValue codecs (msgpack and JSON), exact
// numbers, attribute paths, the server certificate, and RPC handling without gRPC.
import { X509Certificate } from 'node:crypto';
import { decode, encode, ExtData } from '@msgpack/msgpack';
import { describe, expect, it } from 'vitest';
import { TfNumber, UNKNOWN, type ProviderDefinition, type TfValue } from '../../provider/framework/contract.ts';
import { attributePathMessage } from '../../provider/server/convert.ts';
import { createServerCertificate } from '../../provider/server/certificate.ts';
import { createProviderService } from '../../provider/server/provider-service.ts';
import { decodeDynamicValue } from '../../provider/values/dynamic-value.ts';
import { decodeJson } from '../../provider/values/json.ts';
import { decodeMsgpack, encodeMsgpack } from '../../provider/values/msgpack.ts';
import { exactDecimalOfDouble, numberToWire } from '../../provider/values/number.ts';
import { ValueError, type ValueType } from '../../provider/values/types.ts';
import { aegisProvider } from '../../provider/main.ts';
import { loadProtocol } from '../../provider/protocol/load.ts';
import type { AttributeMessage, GetProviderSchemaResponse } from '../../provider/protocol/messages.ts';
import { blockType } from '../../provider/values/types.ts';
import { echoProvider } from './fixtures/echo-provider.ts';

const n = (text: string): TfNumber => new TfNumber(text);

const everything: ValueType = [
  'object',
  {
    s: 'string',
    num: 'number',
    b: 'bool',
    list: ['list', 'number'],
    set: ['set', 'string'],
    map: ['map', ['object', { x: 'string', y: ['list', 'bool'] }]],
    obj: ['object', { inner: 'string', deep: ['map', 'number'] }],
    dyn: 'dynamic',
  },
];

describe('msgpack DynamicValue', () => {
  it('round-trips nested values with unknowns and nulls', () => {
    const value: TfValue = {
      s: 'text',
      num: n('42'),
      b: false,
      list: [n('1'), UNKNOWN, n('-3')],
      set: ['a', 'b'],
      map: { k: { x: UNKNOWN, y: [true, false] }, empty: { x: null, y: [] } },
      obj: { inner: null, deep: { big: n('9223372036854775807') } },
      dyn: { name: 'x', tags: ['p', 'q'] },
    };
    expect(decodeMsgpack(encodeMsgpack(value, everything), everything)).toEqual(value);
    const allNull = { s: null, num: null, b: null, list: null, set: null, map: null, obj: null, dyn: null };
    expect(decodeMsgpack(encodeMsgpack(allNull, everything), everything)).toEqual(allNull);
    expect(decodeMsgpack(encodeMsgpack(UNKNOWN, everything), everything)).toBe(UNKNOWN);
    expect(decodeMsgpack(encodeMsgpack(null, everything), everything)).toBeNull();
  });

  it('writes unknown as fixext1 type 0 payload 0 and reads any extension as unknown', () => {
    expect([...encodeMsgpack(UNKNOWN, 'string')]).toEqual([0xd4, 0x00, 0x00]);
    // Newer Terraform sends refined unknowns as other extension types.
    expect(decodeMsgpack(encode(new ExtData(12, Uint8Array.of(1, 2, 3))), 'string')).toBe(UNKNOWN);
    expect(decodeMsgpack(encode([new ExtData(-1, new Uint8Array(4))]), ['list', 'number'])).toEqual([UNKNOWN]);
  });

  it('writes exactly one key per attribute: absent ones as nil, extra ones refused with their path', () => {
    const type: ValueType = ['object', { a: 'string', b: ['object', { c: 'number' }] }];
    expect(decode(encodeMsgpack({ a: 'x', b: {} }, type))).toEqual({ a: 'x', b: { c: null } });
    expect(() => encodeMsgpack({ a: 'x', b: { c: n('1'), d: 'no' } }, type)).toThrow(ValueError);
    try {
      encodeMsgpack({ b: { d: 'no' } }, type);
    } catch (error) {
      expect((error as ValueError).path).toEqual(['b', 'd']);
    }
    expect(() => encodeMsgpack({ a: n('1') }, type)).toThrow(/a: expected a string/);
  });

  it('encodes and decodes dynamic values as [type JSON, value]', () => {
    const wire = decode(encodeMsgpack({ k: 'v' }, 'dynamic')) as [Uint8Array, unknown];
    expect(Buffer.from(wire[0]).toString()).toBe('["object",{"k":"string"}]');
    expect(wire[1]).toEqual({ k: 'v' });
    const fromTerraform = encode([Buffer.from('["list","number"]'), [1, 2.5]]);
    expect(decodeMsgpack(fromTerraform, 'dynamic')).toEqual([n('1'), n('2.5')]);
  });
});

describe('numbers', () => {
  it('keeps int64 beyond 2^53 exact, as int64 on the wire', () => {
    const big = n('9007199254740993'); // 2^53 + 1: not a double
    const bytes = encodeMsgpack(big, 'number');
    expect([0xcf, 0xd3]).toContain(bytes[0]); // a 64-bit integer (cty reads uint64 and int64), not a double
    expect(decodeMsgpack(bytes, 'number')).toEqual(big);
    expect(decodeMsgpack(encodeMsgpack(n('-9223372036854775808'), 'number'), 'number')).toEqual(n('-9223372036854775808'));
    // A uint64 from the wire (beyond int64) still decodes exactly.
    expect(decodeMsgpack(Buffer.from('cfffffffffffffffff', 'hex'), 'number')).toEqual(n('18446744073709551615'));
  });

  it('sends doubles only when exact and decimal text otherwise', () => {
    expect(numberToWire('1.5')).toBe(1.5);
    expect(numberToWire('42')).toBe(42);
    expect(numberToWire('1e3')).toBe(1000);
    expect(numberToWire('0.1')).toBe('0.1'); // no double is 0.1: Terraform would see another number
    expect(numberToWire('123456789012345678901234567890')).toBe('123456789012345678901234567890');
    expect(numberToWire('1e400')).toBe('1e400');
    expect(numberToWire('100000000000000000000')).toBe(1e20); // beyond int64, exact as a double
    expect(decodeMsgpack(encodeMsgpack(n('0.1'), 'number'), 'number')).toEqual(n('0.1'));
    expect(decodeMsgpack(encodeMsgpack(n('3.14159265358979323846264338327950288'), 'number'), 'number')).toEqual(n('3.14159265358979323846264338327950288'));
  });

  it('reads a double as its exact value, which goes back as the same double', () => {
    expect(exactDecimalOfDouble(0.5)).toBe('0.5');
    expect(exactDecimalOfDouble(-2.25)).toBe('-2.25');
    expect(exactDecimalOfDouble(0.1)).toBe('0.1000000000000000055511151231257827021181583404541015625');
    expect(exactDecimalOfDouble(5e-324)).toMatch(/^0\.0{323}49406564584124654/);
    const third = decodeMsgpack(encode(1 / 3), 'number');
    expect(third).toBeInstanceOf(TfNumber);
    expect(numberToWire((third as TfNumber).text)).toBe(1 / 3);
    expect((third as TfNumber).toNumber()).toBe(1 / 3);
  });
});

describe('JSON DynamicValue and state', () => {
  it('keeps big integers and long decimals exact', () => {
    const type: ValueType = ['object', { a: 'number', b: 'number', c: ['list', 'number'] }];
    const json = Buffer.from('{"a": 12345678901234567890123, "b": 0.30000000000000000001, "c": [1e2, -0]}');
    expect(decodeJson(json, type)).toEqual({ a: n('12345678901234567890123'), b: n('0.30000000000000000001'), c: [n('1e2'), n('-0')] });
  });

  it('drops attributes no longer in the schema and reads missing ones as null', () => {
    const type: ValueType = ['object', { kept: 'string', added: 'bool' }];
    expect(decodeJson(Buffer.from('{"kept":"é\\u00e9","removed":1}'), type)).toEqual({ kept: 'éé', added: null });
  });

  it('reads dynamic values in cty JSON form and accepts JSON in requests', () => {
    expect(decodeJson(Buffer.from('{"value":["a"],"type":["list","string"]}'), 'dynamic')).toEqual(['a']);
    expect(decodeDynamicValue({ json: Buffer.from('{"k":"v"}') }, ['map', 'string'])).toEqual({ k: 'v' });
    expect(decodeDynamicValue({}, 'string')).toBeNull();
    expect(() => decodeJson(Buffer.from('{"a":}'), ['object', { a: 'string' }])).toThrow(SyntaxError);
  });
});

describe('attribute paths', () => {
  const block = {
    description: '',
    attributes: [
      { name: 'labels', type: ['map', 'string'] as const, description: '' },
      { name: 'rules', type: ['list', ['object', { name: 'string' }]] as const, description: '' },
    ],
  };
  it('tells map keys from attribute names by the schema', () => {
    expect(attributePathMessage(['labels', 'team'], block).steps).toEqual([{ attribute_name: 'labels' }, { element_key_string: 'team' }]);
    expect(attributePathMessage(['rules', 2, 'name'], block).steps).toEqual([
      { attribute_name: 'rules' },
      { element_key_int: 2 },
      { attribute_name: 'name' },
    ]);
  });
});

describe('server certificate', () => {
  it('is a self-signed P-256 certificate for localhost, valid now', () => {
    const certificate = createServerCertificate();
    const x509 = new X509Certificate(certificate.der);
    expect(x509.subjectAltName).toBe('DNS:localhost');
    expect(x509.checkHost('localhost')).toBe('localhost');
    expect(x509.verify(x509.publicKey)).toBe(true);
    expect(x509.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(new Date(x509.validFrom).getTime()).toBeLessThan(Date.now() - 30 * 60_000);
    expect(new Date(x509.validTo).getTime()).toBeGreaterThan(Date.now());
    expect(x509.keyUsage).toContain('1.3.6.1.5.5.7.3.1');
    expect(new X509Certificate(certificate.certPem).fingerprint256).toBe(x509.fingerprint256);
  });
});

describe('provider service', () => {
  const service = createProviderService(echoProvider());

  it('describes schemas with JSON types and markdown descriptions', async () => {
    const response = await service.GetProviderSchema({});
    const echo = response.resource_schemas.aegis_echo;
    const labels = echo?.block.attributes.find((a) => a.name === 'labels');
    expect(labels?.type?.toString()).toBe('["map","string"]');
    expect(labels?.description_kind).toBe(1);
    expect(echo?.block.attributes.find((a) => a.name === 'secret')?.sensitive).toBe(true);
    expect(Object.keys(response.data_source_schemas)).toEqual(['aegis_echo_info']);
  });

  it('upgrades state by echoing the stored JSON as msgpack', async () => {
    const json = Buffer.from('{"id":"x","name":"n","greeting":"hi","secret":null,"weight":18446744073709551617,"labels":{"a":"b"},"gone":true}');
    const response = await service.UpgradeResourceState({ type_name: 'aegis_echo', version: '0', raw_state: { json } });
    expect(response.diagnostics).toEqual([]);
    expect(decode(response.upgraded_state?.msgpack ?? new Uint8Array(), { useBigInt64: true })).toEqual({
      id: 'x',
      name: 'n',
      greeting: 'hi',
      secret: null,
      weight: '18446744073709551617', // beyond int64 and not a double: text
      labels: { a: 'b' },
    });
  });

  it('turns validation results and exceptions into diagnostics with attribute paths', async () => {
    const config = encodeMsgpack({ name: 'n', weight: n('-1') }, ['object', { id: 'string', name: 'string', greeting: 'string', secret: 'string', weight: 'number', labels: ['map', 'string'] }]);
    const invalid = await service.ValidateResourceConfig({ type_name: 'aegis_echo', config: { msgpack: config } });
    expect(invalid.diagnostics).toEqual([{ severity: 1, summary: 'weight must be zero or more', detail: 'got -1', attribute: { steps: [{ attribute_name: 'weight' }] } }]);
    const garbage = await service.PlanResourceChange({ type_name: 'aegis_echo', proposed_new_state: { msgpack: Buffer.from([0xc1]) } });
    expect(garbage.diagnostics[0]).toMatchObject({ severity: 1, summary: 'Planning aegis_echo failed' });
    const unknownType = await service.ReadResource({ type_name: 'aegis_nope' });
    expect(unknownType.diagnostics[0]?.summary).toBe('Unknown resource type');
  });

  it('catches a throwing handler', async () => {
    const definition: ProviderDefinition = {
      ...echoProvider(),
      configure: async () => {
        throw new Error('boom');
      },
    };
    const response = await createProviderService(definition).ConfigureProvider({ terraform_version: '1.11.4' });
    expect(response.diagnostics).toEqual([{ severity: 1, summary: 'Configuring the Aegis provider failed', detail: 'boom' }]);
  });
});

describe('nested attributes on the wire', () => {
  const provider = aegisProvider({ env: {} });
  const site = provider.resources.find((r) => r.typeName === 'aegis_shield_site')!;

  it('GetProviderSchema carries nested_type (SINGLE, LIST inside) and no type for nested attributes, through real protobuf encoding', async () => {
    const response = await createProviderService(provider).GetProviderSchema({});
    const method = loadProtocol().provider.GetProviderSchema!;
    const bytes = method.responseSerialize(response);
    const decoded = method.responseDeserialize(bytes) as GetProviderSchemaResponse;
    const attributes = decoded.resource_schemas.aegis_shield_site!.block.attributes;
    const managed = attributes.find((a) => a.name === 'managed_rules')!;
    // Absent, not empty: Terraform parses any `type` it is given as JSON.
    expect(managed.type).toBeUndefined();
    expect(managed).toMatchObject({ optional: true, computed: true, nested_type: { nesting: 1 } });
    const byName = (list: AttributeMessage[]) => Object.fromEntries(list.map((a) => [a.name, a]));
    const subs = byName(managed.nested_type!.attributes);
    expect(subs.paranoia_level?.type?.toString()).toBe('"number"');
    expect(subs.paranoia_level).toMatchObject({ optional: true, computed: true });
    expect(subs.exclusions?.type).toBeUndefined();
    expect(subs.exclusions?.nested_type?.nesting).toBe(2);
    const exclusion = byName(subs.exclusions!.nested_type!.attributes);
    expect(exclusion.rules).toMatchObject({ required: true });
    expect(exclusion.rules?.type?.toString()).toBe('["list","string"]');
    expect(exclusion.url_pattern).toMatchObject({ optional: true });
    expect(exclusion.url_pattern?.computed).toBeFalsy();
    // Plain attributes keep their JSON type and no nested_type; the data source reads the field as a plain object type.
    expect(attributes.find((a) => a.name === 'path_case')?.type?.toString()).toBe('"string"');
    expect(attributes.find((a) => a.name === 'path_case')?.nested_type).toBeUndefined();
    const data = decoded.data_source_schemas.aegis_shield_site!.block.attributes.find((a) => a.name === 'managed_rules')!;
    expect(JSON.parse(data.type!.toString())).toEqual(['object', { enabled: 'bool', paranoia_level: 'number', exclusions: ['list', ['object', { rules: ['list', 'string'], url_pattern: 'string', parameter: 'string' }]] }]);
  });

  it('encodes nested values as the implied object and list types: every key present, nulls and unknowns inside', () => {
    const type = blockType(site.schema);
    const state: { [name: string]: TfValue } = {
      id: 'site_1',
      domain: 'shop.example.com',
      origin_url: 'https://o.example.com',
      mode: 'block',
      path_case: 'insensitive',
      managed_rules: { enabled: true, paranoia_level: n('2'), exclusions: [{ rules: ['sqli.tautology'], url_pattern: '/cms/*', parameter: null }] },
      // A nested attribute inside a nested one (hsts in tls), null here; computed object attributes, one of them null.
      tls: { mode: 'acme', redirect_http: true, hsts: null, min_version: '1.2' },
      status: 'pending',
      domain_verification: {
        status: 'unverified',
        method: null,
        verified_at: null,
        checked_at: UNKNOWN,
        error: null,
        txt_record: { name: '_aegis-verify.shop.example.com', value: 'aegis-verify=t' },
        http_token: { url: 'http://shop.example.com/.well-known/aegis-verify/t', body: 't' },
      },
      certificate: null,
      labels: {},
      created_at: 'a',
      updated_at: UNKNOWN,
    };
    const bytes = encodeMsgpack(state, type);
    expect(decodeMsgpack(bytes, type)).toEqual(state);
    const wire = decode(bytes) as { managed_rules: { exclusions: Record<string, unknown>[] }; tls: Record<string, unknown> };
    expect(Object.keys(wire.managed_rules).sort()).toEqual(['enabled', 'exclusions', 'paranoia_level']);
    expect(wire.managed_rules.exclusions[0]).toEqual({ rules: ['sqli.tautology'], url_pattern: '/cms/*', parameter: null });
    expect(wire.tls).toEqual({ hsts: null, min_version: '1.2', mode: 'acme', redirect_http: true });
    // Partly unknown (a config value known only at apply) and wholly unknown (computed at create).
    const partly: TfValue = { ...state, managed_rules: { enabled: true, paranoia_level: UNKNOWN, exclusions: [] } };
    expect(decodeMsgpack(encodeMsgpack(partly, type), type)).toEqual(partly);
    const unknown: TfValue = { ...state, managed_rules: UNKNOWN };
    expect(decodeMsgpack(encodeMsgpack(unknown, type), type)).toEqual(unknown);
    // A sub-attribute the schema does not have is a provider bug, reported with its path.
    expect(() => encodeMsgpack({ ...state, managed_rules: { ...(state.managed_rules as { [name: string]: TfValue }), extra: true } }, type)).toThrow(/managed_rules\.extra/);
    // State written before the field existed reads it as null (then ReadResource fills it in).
    expect(decodeJson(Buffer.from('{"id":"site_1","domain":"d.example.com","mode":"log","labels":{}}'), type)).toMatchObject({ managed_rules: null, path_case: null });
  });

  it('aims diagnostics inside nested attributes with attribute names and list indexes', () => {
    expect(attributePathMessage(['managed_rules', 'exclusions', 1, 'rules', 0], site.schema).steps).toEqual([
      { attribute_name: 'managed_rules' },
      { attribute_name: 'exclusions' },
      { element_key_int: 1 },
      { attribute_name: 'rules' },
      { element_key_int: 0 },
    ]);
  });
});
