// An identity provider's SAML 2.0 metadata (spec 5.4): its entity id, where to send the browser
// to sign in (SingleSignOnService, HTTP-Redirect preferred, else HTTP-POST) and the certificates
// its signatures must verify against. Read with an XML parser (namespace-aware), never with
// regular expressions. A metadata URL is fetched with the fetch the caller gives — the routes pass
// guardedFetch, the same private-address guard as URL scans.
import { createRequire } from 'node:module';
import { errorMessage } from '../../../schemas/json-value.ts';

const MD_NS = 'urn:oasis:names:tc:SAML:2.0:metadata';
const DS_NS = 'http://www.w3.org/2000/09/xmldsig#';
const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
const POST_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST';
const SAML2_PROTOCOL = 'urn:oasis:names:tc:SAML:2.0:protocol';
const MAX_METADATA_CHARS = 1024 * 1024;

export interface IdpMetadata {
  idpEntityId: string;
  ssoUrl: string;
  /** Signing certificates, base64 DER without PEM headers or whitespace. */
  certificates: string[];
  metadataXml: string;
}

/** The little of a DOM element that reading SAML needs (from @xmldom/xmldom). */
export interface XmlElement {
  localName: string | null;
  namespaceURI: string | null;
  getAttribute(name: string): string | null;
  childNodes: { length: number; [i: number]: unknown };
  textContent: string | null;
  nodeType: number;
}
type El = XmlElement;

interface XmlErrorHandler {
  warning?: (message: string) => void;
  error?: (message: string) => void;
  fatalError?: (message: string) => void;
}
// @xmldom/xmldom (node-saml's parser) is loaded without its type declarations: they reference the
// DOM library, which would change the global types (fetch, Blob) of the whole program.
const { DOMParser } = createRequire(import.meta.url)('@xmldom/xmldom') as {
  DOMParser: new (options?: { errorHandler?: XmlErrorHandler }) => { parseFromString(xml: string, mimeType: string): { documentElement: XmlElement | null } | undefined };
};

const ELEMENT_NODE = 1;

/** Child elements of `el` with the given namespace and local name. */
export function childElements(el: El, ns: string, localName: string): El[] {
  const out: El[] = [];
  for (let i = 0; i < el.childNodes.length; i++) {
    const node = el.childNodes[i] as El;
    if (node.nodeType === ELEMENT_NODE && node.namespaceURI === ns && node.localName === localName) out.push(node);
  }
  return out;
}
const children = childElements;

/** Descendants (any depth) with the given namespace and local name, in document order. */
export function descendantElements(el: El, ns: string, localName: string): El[] {
  const out: El[] = [];
  const walk = (node: El) => {
    for (let i = 0; i < node.childNodes.length; i++) {
      const child = node.childNodes[i] as El;
      if (child.nodeType !== ELEMENT_NODE) continue;
      if (child.namespaceURI === ns && child.localName === localName) out.push(child);
      walk(child);
    }
  };
  walk(el);
  return out;
}
const descendants = descendantElements;

/**
 * Parses XML into its root element, namespace-aware. Refuses a DOCTYPE (never legitimate in SAML;
 * refusing it rules out entity tricks) and anything not well-formed, naming the first problem.
 */
export function parseXmlElement(xml: string, what: string): El {
  if (/<!DOCTYPE/i.test(xml)) throw new Error(`${what} must not contain a DOCTYPE`);
  const problems: string[] = [];
  const record = (message: string) => problems.push(String(message).split('\n')[0] ?? '');
  const doc = new DOMParser({ errorHandler: { warning: () => undefined, error: record, fatalError: record } }).parseFromString(xml, 'text/xml');
  const root = doc?.documentElement ?? null;
  if (problems.length > 0 || !root) throw new Error(`${what} is not well-formed XML${problems[0] ? `: ${problems[0]}` : ''}`);
  return root;
}

function parseXml(xml: string): El {
  if (xml.length > MAX_METADATA_CHARS) throw new Error('SAML metadata is larger than 1 MiB');
  return parseXmlElement(xml, 'SAML metadata');
}

/** The one EntityDescriptor that has an IDPSSODescriptor (a lone descriptor, or the first in an EntitiesDescriptor). */
function idpEntity(root: El): { entity: El; idp: El } {
  if (root.namespaceURI !== MD_NS || (root.localName !== 'EntityDescriptor' && root.localName !== 'EntitiesDescriptor')) {
    throw new Error('SAML metadata must have an md:EntityDescriptor (urn:oasis:names:tc:SAML:2.0:metadata) at its root');
  }
  const entities = root.localName === 'EntityDescriptor' ? [root] : descendants(root, MD_NS, 'EntityDescriptor');
  for (const entity of entities) {
    const idp = children(entity, MD_NS, 'IDPSSODescriptor').find((d) => (d.getAttribute('protocolSupportEnumeration') ?? '').split(/\s+/).includes(SAML2_PROTOCOL));
    if (idp) return { entity, idp };
  }
  throw new Error('SAML metadata has no IDPSSODescriptor for the SAML 2.0 protocol');
}

function ssoUrlOf(idp: El): string {
  const services = children(idp, MD_NS, 'SingleSignOnService');
  const pick = services.find((s) => s.getAttribute('Binding') === REDIRECT_BINDING) ?? services.find((s) => s.getAttribute('Binding') === POST_BINDING);
  const location = pick?.getAttribute('Location')?.trim();
  if (!location) throw new Error('SAML metadata has no SingleSignOnService with the HTTP-Redirect or HTTP-POST binding');
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    throw new Error(`SAML metadata's SingleSignOnService Location is not a URL: ${location.slice(0, 200)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('SAML metadata\'s SingleSignOnService Location must be an http(s) URL');
  return url.toString();
}

function signingCertificates(idp: El): string[] {
  const certs: string[] = [];
  for (const key of children(idp, MD_NS, 'KeyDescriptor')) {
    const use = key.getAttribute('use');
    if (use !== null && use !== '' && use !== 'signing') continue;
    for (const cert of descendants(key, DS_NS, 'X509Certificate')) {
      const body = (cert.textContent ?? '').replace(/\s+/g, '');
      if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body)) throw new Error('SAML metadata has an X509Certificate that is not base64');
      if (!certs.includes(body)) certs.push(body);
    }
  }
  if (certs.length === 0) throw new Error('SAML metadata has no signing certificate (KeyDescriptor use="signing" with an X509Certificate)');
  return certs;
}

/** Reads the IdP's metadata from `xml`, or fetches it from `url` with `fetcher` (pass the guarded fetch). */
export async function readIdpMetadata(input: { url?: string; xml?: string }, fetcher: typeof fetch): Promise<IdpMetadata> {
  let xml = input.xml;
  if (xml === undefined) {
    if (!input.url) throw new Error('SAML metadata needs a metadata URL or the metadata XML');
    let url: URL;
    try {
      url = new URL(input.url);
    } catch {
      throw new Error('the SAML metadata URL is not a URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('the SAML metadata URL must be http(s)');
    let response: Response;
    try {
      response = await fetcher(url.toString(), { headers: { accept: 'application/samlmetadata+xml, application/xml, text/xml' } });
    } catch (error) {
      // undici reports connection failures (the address guard's refusal among them) as the cause.
      let reason = errorMessage(error);
      for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) reason = e.message;
      throw new Error(`could not fetch the SAML metadata from ${url.origin}: ${reason}`, { cause: error });
    }
    if (!response.ok) throw new Error(`fetching the SAML metadata from ${url.origin} answered HTTP ${response.status}`);
    xml = await response.text();
  }
  const root = parseXml(xml);
  const { entity, idp } = idpEntity(root);
  const idpEntityId = entity.getAttribute('entityID')?.trim();
  if (!idpEntityId) throw new Error('SAML metadata\'s EntityDescriptor has no entityID');
  return { idpEntityId, ssoUrl: ssoUrlOf(idp), certificates: signingCertificates(idp), metadataXml: xml };
}
