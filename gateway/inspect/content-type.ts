// Content-Type headers read strictly. Parsers disagree about a malformed one: PHP and Werkzeug cut
// the media type at `,` or a space (`application/x-www-form-urlencoded, text/plain` is a form to
// them) and look for `boundary=` anywhere, Node reads up to `;`. A body the gateway inspects must
// therefore name its type as `type/subtype` followed only by `; name=value` parameters; anything
// else is refused as ambiguous rather than read one way here and another at the origin.

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const MEDIA_TYPE = new RegExp(`^\\s*${TOKEN}/${TOKEN}\\s*$`);

export interface HeaderParams {
  value: string;
  params: Map<string, string[]>;
}

const PARAM = new RegExp(`^\\s*(${TOKEN})\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|(${TOKEN}))\\s*(?:;|$)`);

/**
 * `type; a=b; c="d"` split into the value and its parameters (names lower case, every occurrence
 * kept); null when a parameter is not `token=token` or `token="quoted"`.
 */
export function headerParams(header: string): HeaderParams | null {
  const params = new Map<string, string[]>();
  const semi = header.indexOf(';');
  const value = (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
  let rest = semi === -1 ? '' : header.slice(semi + 1);
  while (rest.trim() !== '') {
    const match = PARAM.exec(rest);
    if (!match) return null;
    const name = match[1]!.toLowerCase();
    const text = match[2] !== undefined ? match[2].replace(/\\(.)/g, '$1') : match[3]!;
    params.set(name, [...(params.get(name) ?? []), text]);
    rest = rest.slice(match[0].length);
  }
  return { value, params };
}

/** Whether a Content-Type is `type/subtype` and well-formed parameters, nothing else. */
export function wellFormedContentType(header: string): boolean {
  const semi = header.indexOf(';');
  if (!MEDIA_TYPE.test(semi === -1 ? header : header.slice(0, semi))) return false;
  return headerParams(header) !== null;
}
