// REST API traffic from stripe/openapi's fixtures3.json: its API objects sent as JSON create and
// update bodies, Stripe-style form bodies with bracketed keys, list queries, object paths, webhook
// deliveries, SDK headers, and a SOAP-style envelope for a legacy integration.
import { Deck, Rng } from './benign-rng.ts';
import { Mirror } from './benign-mirror.ts';
import { type Draft, generate, type Template } from './benign-gen.ts';
import { apiHeaders, browserHeaders, cookieHeader, pickBrowser, queryEncode, seg, xmlEscape } from './benign-http.ts';
import type { EvalRequest } from './types.ts';

const REPO = 'stripe/openapi';
const FILE = 'openapi/fixtures3.json';
const SHOP = 'https://shop.example.com';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

interface Resource {
  /** The fixture's name (`checkout.session`). */
  name: string;
  /** Its collection path (`/v1/checkout/sessions`). */
  collection: string;
  object: JsonObject;
}

interface Nested {
  resource: Resource;
  key: string;
  value: JsonObject;
}

interface Pools {
  resources: Deck<Resource>;
  nested: Deck<Nested>;
  urls: Deck<string>;
  fields: Deck<[string, string]>;
}

const isObject = (v: Json | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

function plural(word: string): string {
  if (/[^aeiou]y$/.test(word)) return word.slice(0, -1) + 'ies';
  if (/(s|x|ch|sh)$/.test(word)) return word + 'es';
  return word + 's';
}

function collectionOf(name: string): string {
  const parts = name.split('.');
  const last = parts.pop() as string;
  return `/v1/${[...parts, plural(last)].join('/')}`;
}

function load(mirrors: string, rng: Rng): Pools | null {
  const text = new Mirror(mirrors, REPO).readOne(FILE);
  if (!text) return null;
  let parsed: Json;
  try {
    parsed = JSON.parse(text) as Json;
  } catch {
    return null;
  }
  const all = isObject(parsed) && isObject(parsed['resources']) ? parsed['resources'] : {};
  const resources: Resource[] = [];
  const nested: Nested[] = [];
  const urls: string[] = [];
  const fields: [string, string][] = [];
  for (const [name, object] of Object.entries(all)) {
    if (!isObject(object) || name.startsWith('deleted_')) continue;
    const resource = { name, collection: collectionOf(name), object };
    resources.push(resource);
    const walk = (key: string, v: Json): void => {
      if (typeof v === 'string') {
        if (v.startsWith('/v1/')) urls.push(v);
        else if (key !== 'object') fields.push([key, v]);
      } else if (Array.isArray(v)) v.forEach((x) => walk(key, x));
      else if (isObject(v)) {
        if (key && Object.keys(v).length >= 2) nested.push({ resource, key, value: v });
        for (const [k, x] of Object.entries(v)) walk(k, x);
      }
    };
    for (const [k, v] of Object.entries(object)) walk(k, v);
  }
  if (resources.length === 0) return null;
  return {
    resources: new Deck(rng, resources),
    nested: new Deck(rng, nested.length ? nested : resources.map((r) => ({ resource: r, key: r.name, value: r.object }))),
    urls: new Deck(rng, urls.length ? urls : resources.map((r) => r.collection)),
    fields: new Deck(rng, fields.length ? fields : [['currency', 'usd']]),
  };
}

const idOf = (r: Resource, rng: Rng): string => (typeof r.object['id'] === 'string' ? r.object['id'] : `${r.name.replace(/\W/g, '_')}_${rng.alnum(24)}`);

/** The object as a create or update body: server-set fields dropped, metadata added. */
function writable(rng: Rng, o: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(o)) if (!['id', 'object', 'created', 'livemode'].includes(k)) out[k] = v;
  if (rng.chance(0.6)) out['metadata'] = { order_id: rng.digits(6), customer_ref: `CUST-${rng.alnum(6).toUpperCase()}`, ...(rng.chance(0.3) ? { note: 'gift wrap' } : {}) };
  return out;
}

/** Stripe's form encoding: nested keys in brackets, arrays by index, nulls left out. */
function bracketFields(prefix: string, v: Json, out: [string, string][]): void {
  if (v === null) return;
  if (Array.isArray(v)) v.forEach((x, i) => bracketFields(`${prefix}[${i}]`, x, out));
  else if (isObject(v)) for (const [k, x] of Object.entries(v)) bracketFields(prefix ? `${prefix}[${k}]` : k, x, out);
  else out.push([prefix, String(v)]);
}

/** stripe-node encodes the pairs, then puts the brackets back unencoded. */
const literalBrackets = (s: string): string => s.replace(/%5B/g, '[').replace(/%5D/g, ']');

function toXml(name: string, v: Json, indent: string): string {
  const tag = /^[A-Za-z_][\w.-]*$/.test(name) ? name : 'field';
  if (v === null) return `${indent}<${tag} xsi:nil="true"/>`;
  if (Array.isArray(v)) return `${indent}<${tag}>${v.map((x) => '\n' + toXml('item', x, indent + '  ')).join('')}\n${indent}</${tag}>`;
  if (isObject(v)) return `${indent}<${tag}>${Object.entries(v).map(([k, x]) => '\n' + toXml(k, x, indent + '  ')).join('')}\n${indent}</${tag}>`;
  return `${indent}<${tag}>${xmlEscape(String(v))}</${tag}>`;
}

const SDKS: readonly { lang: string; ua: string; version: string }[] = [
  { lang: 'node', ua: 'NodeBindings', version: 'v20.14.0' },
  { lang: 'python', ua: 'PythonBindings', version: '3.12.4' },
  { lang: 'ruby', ua: 'RubyBindings', version: '3.3.2 p78 (2024-05-30)' },
  { lang: 'php', ua: 'PhpBindings', version: '8.3.8' },
  { lang: 'go', ua: 'GoBindings', version: 'go1.22.4' },
];

/** What a Stripe SDK adds: its user agent, a JSON description of itself, version and idempotency. */
function stripeClientHeaders(rng: Rng): Record<string, string> {
  const sdk = rng.pick(SDKS);
  const bindings = `${rng.range(10, 16)}.${rng.range(0, 9)}.0`;
  const darwin = rng.chance(0.3);
  const h: Record<string, string> = {
    'user-agent': `Stripe/v1 ${sdk.ua}/${bindings}`,
    'stripe-version': rng.pick(['2024-06-20', '2024-04-10', '2023-10-16']),
    'x-stripe-client-user-agent': JSON.stringify({
      bindings_version: bindings,
      lang: sdk.lang,
      lang_version: sdk.version,
      platform: darwin ? 'darwin' : 'linux',
      publisher: 'stripe',
      uname: darwin ? 'Darwin MacBook-Pro.local 23.5.0 Darwin Kernel Version 23.5.0: Wed May  1 20:12:58 PDT 2024; root:xnu-10063.121.3~5/RELEASE_ARM64_T6000 arm64' : `Linux ${rng.pick(['ip-10-0-1-23', 'web-1', 'worker-3'])} 6.1.0-21-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.90-1 (2024-05-03) x86_64 GNU/Linux`,
    }),
  };
  if (rng.chance(0.5)) h['idempotency-key'] = rng.uuid();
  return h;
}

function templates(p: Pools): Template[] {
  const restJson = (rng: Rng): Draft => {
    const r = p.resources.draw();
    const update = rng.chance(0.5);
    const full = writable(rng, r.object);
    // An update sends the fields that changed; a create sends the whole object.
    const body = JSON.stringify(update ? Object.fromEntries(rng.shuffled(Object.entries(full)).slice(0, rng.range(1, Object.keys(full).length))) : full);
    const target = `/api${r.collection}${update ? `/${seg(idOf(r, rng))}` : ''}`;
    if (rng.chance(0.5)) {
      const headers = apiHeaders(rng, 'application/json', { 'x-request-id': rng.uuid() });
      return { method: update ? 'PUT' : 'POST', target, headers, body, placement: 'json', encoding: 'plain' };
    }
    const browser = pickBrowser(rng);
    const headers = browserHeaders(rng, { browser, mode: 'fetch', origin: SHOP, refererPath: `/admin${r.collection.slice(3)}`, cookie: cookieHeader(rng, 'shop'), contentType: 'application/json', hasBody: true, extra: { 'x-csrf-token': rng.alnum(43) } });
    return { method: update ? 'PUT' : 'POST', target, headers, body, placement: 'json', encoding: 'plain' };
  };

  const nestedPatch = (rng: Rng): Draft => {
    const n = p.nested.draw();
    const patch: JsonObject = { [n.key]: n.value };
    if (rng.chance(0.4)) {
      const more = p.nested.draw();
      patch[more.key] = more.value;
    }
    const body = JSON.stringify(patch);
    const headers = apiHeaders(rng, rng.chance(0.3) ? 'application/merge-patch+json' : 'application/json');
    return { method: 'PATCH', target: `/api${n.resource.collection}/${seg(idOf(n.resource, rng))}`, headers, body, placement: 'json', encoding: 'plain' };
  };

  const formBracketed = (rng: Rng): Draft => {
    const r = p.resources.draw();
    const o = writable(rng, r.object);
    const keys = rng.shuffled(Object.keys(o)).slice(0, rng.range(2, 12));
    const pairs: [string, string][] = [];
    for (const k of keys) bracketFields(k, o[k] as Json, pairs);
    if (rng.chance(0.4)) pairs.push(['expand[]', rng.pick(['customer', 'latest_invoice', 'payment_intent', 'data.balance_transaction'])]);
    if (pairs.length === 0) pairs.push(['metadata[order_id]', rng.digits(6)]);
    const encoded = queryEncode(pairs, 'script');
    const sdk = rng.chance(0.6);
    const body = sdk ? literalBrackets(encoded) : encoded;
    const headers = apiHeaders(rng, 'application/x-www-form-urlencoded', sdk ? stripeClientHeaders(rng) : {});
    const update = rng.chance(0.4);
    return { method: 'POST', target: `${r.collection}${update ? `/${seg(idOf(r, rng))}` : ''}`, headers, body, placement: 'form', encoding: 'plain' };
  };

  const listQuery = (rng: Rng): Draft => {
    const r = p.resources.draw();
    const pairs: [string, string][] = [['limit', String(rng.pick([3, 10, 25, 100]))]];
    if (rng.chance(0.4)) pairs.push(['starting_after', idOf(p.resources.draw(), rng)]);
    if (rng.chance(0.4)) pairs.push(['created[gte]', String(rng.unixTime())]);
    for (let i = rng.range(1, 3); i > 0; i--) pairs.push(p.fields.draw());
    if (rng.chance(0.3)) pairs.push(['expand[]', `data.${rng.pick(Object.keys(r.object))}`]);
    const q = queryEncode(pairs, 'script');
    const headers = apiHeaders(rng, undefined, rng.chance(0.5) ? stripeClientHeaders(rng) : {});
    return { method: 'GET', target: `${r.collection}?${rng.chance(0.6) ? literalBrackets(q) : q}`, headers, placement: 'query', encoding: 'plain' };
  };

  const resourcePath = (rng: Rng): Draft => {
    const target = rng.chance(0.6) ? p.urls.draw() : (() => {
      const r = p.resources.draw();
      return `${r.collection}/${seg(idOf(r, rng))}`;
    })();
    if (rng.chance(0.5)) return { method: 'GET', target, headers: apiHeaders(rng), placement: 'path', encoding: 'plain' };
    const browser = pickBrowser(rng);
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: SHOP, refererPath: '/admin/dashboard', cookie: cookieHeader(rng, 'shop') });
    return { method: 'GET', target: `/admin${target}`, headers, placement: 'path', encoding: 'plain' };
  };

  // Webhook deliveries: the object wrapped in an event, signed in a header.
  const webhook = (rng: Rng): Draft => {
    const r = p.resources.draw();
    const t = rng.unixTime();
    const body = JSON.stringify(
      {
        id: `evt_${rng.alnum(24)}`,
        object: 'event',
        api_version: '2024-06-20',
        created: t,
        data: { object: r.object, ...(rng.chance(0.4) ? { previous_attributes: { metadata: {} } } : {}) },
        livemode: false,
        pending_webhooks: 1,
        request: { id: `req_${rng.alnum(14)}`, idempotency_key: rng.uuid() },
        type: `${r.name}.${rng.pick(['created', 'updated', 'deleted', 'succeeded'])}`,
      },
      null,
      2,
    );
    const headers = { 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)', 'content-type': 'application/json; charset=utf-8', accept: '*/*; q=0.5, application/xml', 'cache-control': 'no-cache', 'stripe-signature': `t=${t},v1=${rng.hex(64)},v0=${rng.hex(64)}` };
    return { method: 'POST', target: rng.pick(['/webhooks/stripe', '/api/webhooks/stripe', '/stripe/webhook']), headers, body, placement: 'json', encoding: 'plain' };
  };

  // Connect platforms name the account in a header; SDKs describe themselves in JSON.
  const sdkHeaders = (rng: Rng): Draft => {
    const r = p.resources.draw();
    const headers = apiHeaders(rng, undefined, { ...stripeClientHeaders(rng), 'stripe-account': `acct_${rng.alnum(16)}` });
    return { method: 'GET', target: `${r.collection}/${seg(idOf(r, rng))}`, headers, placement: 'header', encoding: 'plain' };
  };

  const soapXml = (rng: Rng): Draft => {
    const r = p.resources.draw();
    const op = `Create${r.name.split(/[._]/).map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')}`;
    const body =
      `<?xml version="1.0" encoding="utf-8"?>\n<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:pay="urn:example:payments:v1">\n` +
      `  <soapenv:Header><pay:RequestId>${rng.uuid()}</pay:RequestId></soapenv:Header>\n  <soapenv:Body>\n    <pay:${op}>\n` +
      `${toXml(r.name.replace(/\W/g, '_'), writable(rng, r.object), '      ')}\n    </pay:${op}>\n  </soapenv:Body>\n</soapenv:Envelope>\n`;
    const headers = { 'user-agent': rng.pick(['Apache-HttpClient/4.5.14 (Java/17.0.11)', 'gSOAP/2.8', 'Zeep/4.2.1 (www.python-zeep.org)']), 'content-type': 'text/xml; charset=utf-8', soapaction: `"urn:example:payments:v1/${op}"`, accept: 'text/xml' };
    return { method: 'POST', target: '/services/PaymentService', headers, body, placement: 'xml', encoding: 'plain' };
  };

  return [
    { what: 'rest-json', weight: 3, make: restJson },
    { what: 'nested-json-patch', weight: 1.5, make: nestedPatch },
    { what: 'form-bracketed', weight: 3, make: formBracketed },
    { what: 'list-query', weight: 1.5, make: listQuery },
    { what: 'object-path', weight: 0.6, make: resourcePath },
    { what: 'webhook-json', weight: 1.5, make: webhook },
    { what: 'sdk-headers', weight: 0.5, make: sdkHeaders },
    { what: 'soap-xml', weight: 0.3, make: soapXml },
  ];
}

export function stripeRequests(mirrors: string, count: number): EvalRequest[] {
  const rng = new Rng(`benign:${REPO}`);
  const pools = load(mirrors, rng);
  return pools ? generate(REPO, rng, templates(pools), count) : [];
}
