// Validation of a git source taken from a request: the repository URL and the optional ref.
//
// The URL later becomes an argument of `git clone` (after `--`, never through a shell), so the
// dangers are git's own: transport helpers (`ext::sh -c …` runs a command), values git would read as
// options (`--upload-pack=…`, `ssh://-oProxyCommand=…`) and local repositories of the server. The
// parser is an allow-list of a few forms checked with strict grammars rather than a general URL
// parser: WHATWG `URL` and git/curl disagree on backslashes, percent-encoded hosts and repeated `@`,
// and such a disagreement would let a URL that names one host be compared as another.
//
// Accepted forms (all ASCII, no whitespace, no query or fragment):
//   https://[user[:token]@]host[:port]/path      http:// too: plain HTTP is common on internal git
//   ssh://[user@]host[:port]/path                servers; it is unauthenticated and readable on the
//   git://host[:port]/path                       wire, which is the operator's choice to make.
//   [user@]host:path                             scp-like ssh
//   file:///abs/path, /abs/path                  only with allowLocal (AEGIS_ALLOW_LOCAL_SOURCES)
//
// `target` is the identity used to compare scans of one repository: the URL without credentials,
// with the host lower-cased, the scheme's default port, `.`-free path, duplicate slashes, trailing
// `/` and trailing `.git` removed; scp-like addresses become `ssh://host/path`. Transports stay
// distinct (an https and an ssh clone of one repository are two targets).
import { isIPv6 } from 'node:net';

export interface GitSource {
  kind: 'git';
  /** As given, credentials included (needed to clone); never log or display it — use redactUrl. */
  url: string;
  /** Branch, tag or full commit id (lower-case hex); null for the remote's default branch. */
  ref: string | null;
  target: string;
}

export type ParseGitSourceResult = { ok: true; source: GitSource } | { ok: false; field: 'url' | 'ref'; reason: string };

type Scheme = 'https' | 'http' | 'ssh' | 'git' | 'file';

interface ParsedUrl {
  form: 'url' | 'scp' | 'path';
  scheme: Scheme;
  /** Raw (still percent-encoded) userinfo, or null. */
  userinfo: string | null;
  host: string;
  port: string | null;
  path: string;
}

const MAX_URL_LENGTH = 2048;
const MAX_REF_LENGTH = 255;
const DEFAULT_PORTS: Record<Scheme, string | null> = { https: '443', http: '80', ssh: '22', git: '9418', file: null };
const NETWORK_SCHEMES: ReadonlySet<string> = new Set(['https', 'http', 'ssh', 'git']);

// RFC 3986 character sets (ASCII only).
const USERINFO = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:]|%[0-9A-Fa-f]{2})*$/;
const PATH = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*$/;
const REG_NAME = /^[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?)*$/;
const SCP_USER = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;
// git's rule (transport.c): `<scheme chars>::` at the start selects a remote helper.
const TRANSPORT_HELPER = /^[A-Za-z][A-Za-z0-9+.-]*::/;
const SCHEME_PREFIX = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;

/** host/path, lower-cased, without scheme, user, port or `.git` (file: keeps its path as is). */
export function repoKeyOf(source: Pick<GitSource, 'target'>): string {
  const { target } = source;
  if (target.startsWith('file://')) return target;
  const rest = target.replace(/^[a-z]+:\/\//, '');
  const slash = rest.indexOf('/');
  const host = rest.slice(0, slash).replace(/:\d+$/, '');
  return `${host}${rest.slice(slash)}`.toLowerCase();
}

export function isCommitSha(ref: string): boolean {
  return /^(?:[0-9a-fA-F]{40}|[0-9a-fA-F]{64})$/.test(ref);
}

export function parseGitSource(url: string, ref: string | undefined, options: { allowLocal: boolean }): ParseGitSourceResult {
  const parsed = parseUrl(url, options.allowLocal);
  if (typeof parsed === 'string') return { ok: false, field: 'url', reason: parsed };
  let normalizedRef: string | null = null;
  if (ref !== undefined) {
    const refProblem = checkRef(ref);
    if (refProblem) return { ok: false, field: 'ref', reason: refProblem };
    normalizedRef = isCommitSha(ref) ? ref.toLowerCase() : ref;
  }
  return { ok: true, source: { kind: 'git', url, ref: normalizedRef, target: targetOf(parsed) } };
}

/**
 * Where a network git URL connects: its host (IPv6 without brackets, as given otherwise) and port
 * (the scheme's default when none is written); null for local sources and URLs that do not parse.
 */
export function gitEndpoint(url: string): { host: string; port: number } | null {
  const parsed = parseUrl(url, true);
  if (typeof parsed === 'string' || parsed.scheme === 'file') return null;
  return { host: parsed.host.replace(/^\[(.*)\]$/, '$1'), port: Number(parsed.port ?? DEFAULT_PORTS[parsed.scheme]) };
}

/**
 * Why `ref` is not acceptable, or null. `git check-ref-format --allow-onelevel` rules, and stricter
 * in two ways: printable ASCII only, and no leading `-` (it would read as an option somewhere).
 */
export function checkRef(ref: string): string | null {
  if (typeof ref !== 'string' || ref === '') return 'must not be empty (omit it for the default branch)';
  if (ref.length > MAX_REF_LENGTH) return `must be at most ${MAX_REF_LENGTH} characters`;
  if (/[^\x21-\x7e]/.test(ref)) return 'must be printable ASCII without spaces or control characters';
  if (ref.startsWith('-')) return "must not start with '-'";
  if (/[~^:?*[\\]/.test(ref)) return 'must not contain ~ ^ : ? * [ or \\';
  if (ref.includes('..')) return "must not contain '..'";
  if (ref.includes('@{')) return "must not contain '@{'";
  if (ref === '@') return "must not be '@'";
  if (ref.startsWith('/') || ref.endsWith('/') || ref.includes('//')) return "must not start or end with '/' or contain '//'";
  if (ref.endsWith('.')) return "must not end with '.'";
  for (const component of ref.split('/')) {
    if (component.startsWith('.')) return "no '/'-separated component may start with '.'";
    if (component.endsWith('.lock')) return "no '/'-separated component may end with '.lock'";
  }
  return null;
}

/** The parsed URL, or why it is refused. */
function parseUrl(url: string, allowLocal: boolean): ParsedUrl | string {
  if (typeof url !== 'string' || url === '') return 'must not be empty';
  if (url.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  if (url.startsWith('-')) return "must not start with '-'";
  if (TRANSPORT_HELPER.test(url)) return 'transport helpers (<transport>::<address>) are not allowed';
  if (/[^\x21-\x7e]/.test(url)) return 'must be ASCII without spaces or control characters (percent-encode them, use punycode for hosts)';
  if (url.includes('\\')) return 'must not contain backslashes';
  if (url.includes('?') || url.includes('#')) return 'must not contain a query or fragment';

  const scheme = SCHEME_PREFIX.exec(url);
  if (scheme) return parseSchemeUrl(url, scheme[1]!, allowLocal);
  if (url.startsWith('/')) {
    if (!allowLocal) return 'local paths are not allowed on this server';
    return parseLocalPath(url);
  }
  // git treats `host:path` as scp-like ssh when a ':' comes before any '/'.
  const colon = url.indexOf(':');
  const slash = url.indexOf('/');
  if (colon > 0 && (slash < 0 || colon < slash)) return parseScp(url);
  return 'is not a git URL (expected https://, ssh://, git://, or user@host:path)';
}

function parseSchemeUrl(url: string, scheme: string, allowLocal: boolean): ParsedUrl | string {
  if (scheme === 'file') {
    if (!allowLocal) return 'file:// URLs are not allowed on this server';
  } else if (!NETWORK_SCHEMES.has(scheme)) {
    return `unsupported scheme '${scheme}' (use https, http, ssh or git)`;
  }
  const rest = url.slice(scheme.length + 3);
  const slash = rest.indexOf('/');
  const authority = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? '' : rest.slice(slash);

  if (scheme === 'file') {
    if (authority !== '' && authority !== 'localhost') return 'file:// URLs must not name a host';
    const local = parseLocalPath(path);
    return typeof local === 'string' ? local : { ...local, form: 'url' };
  }

  const at = authority.lastIndexOf('@');
  if (authority.indexOf('@') !== at) return "'@' in credentials must be percent-encoded (%40)";
  const userinfo = at < 0 ? null : authority.slice(0, at);
  const hostPort = authority.slice(at + 1);
  if (userinfo !== null) {
    if (scheme === 'git') return 'git:// URLs do not take credentials';
    if (userinfo === '' || !USERINFO.test(userinfo)) return 'has invalid characters in the credentials';
    // CVE-2017-1000117: an ssh user or host starting with '-' becomes an ssh option.
    if (userinfo.startsWith('-')) return "user name must not start with '-'";
  }
  const hp = parseHostPort(hostPort);
  if (typeof hp === 'string') return hp;
  const pathProblem = checkPath(path, 'url');
  if (pathProblem) return pathProblem;
  return { form: 'url', scheme: scheme as Scheme, userinfo, host: hp.host, port: hp.port, path };
}

function parseHostPort(hostPort: string): { host: string; port: string | null } | string {
  let host: string;
  let portText: string | null = null;
  if (hostPort.startsWith('[')) {
    const close = hostPort.indexOf(']');
    if (close < 0) return 'has an invalid IPv6 host';
    host = hostPort.slice(0, close + 1);
    if (!isIPv6(host.slice(1, -1))) return 'has an invalid IPv6 host';
    const after = hostPort.slice(close + 1);
    if (after !== '') {
      if (!after.startsWith(':')) return 'has an invalid host';
      portText = after.slice(1);
    }
  } else {
    const colon = hostPort.indexOf(':');
    host = colon < 0 ? hostPort : hostPort.slice(0, colon);
    if (colon >= 0) portText = hostPort.slice(colon + 1);
    if (host === '') return 'must name a host';
    if (host.length > 253 || !REG_NAME.test(host)) return 'has an invalid host name';
  }
  if (portText !== null) {
    if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) return 'has an invalid port';
  }
  return { host, port: portText === null ? null : String(Number(portText)) };
}

function parseScp(url: string): ParsedUrl | string {
  let userinfo: string | null = null;
  let rest = url;
  const at = url.indexOf('@');
  const colon = url.indexOf(':');
  if (at >= 0 && at < colon) {
    userinfo = url.slice(0, at);
    rest = url.slice(at + 1);
    if (!SCP_USER.test(userinfo)) return 'has an invalid user name';
  }
  let host: string;
  let path: string;
  if (rest.startsWith('[')) {
    const close = rest.indexOf(']');
    if (close < 0 || rest[close + 1] !== ':') return 'has an invalid IPv6 host';
    host = rest.slice(0, close + 1);
    if (!isIPv6(host.slice(1, -1))) return 'has an invalid IPv6 host';
    path = rest.slice(close + 2);
  } else {
    const c = rest.indexOf(':');
    host = rest.slice(0, c);
    path = rest.slice(c + 1);
    if (host.length > 253 || !REG_NAME.test(host)) return 'has an invalid host name';
  }
  if (path.startsWith('-')) return "repository path must not start with '-'";
  const pathProblem = checkPath(path, 'scp');
  if (pathProblem) return pathProblem;
  return { form: 'scp', scheme: 'ssh', userinfo, host, port: null, path };
}

function parseLocalPath(path: string): ParsedUrl | string {
  if (!path.startsWith('/')) return 'local paths must be absolute';
  const problem = checkPath(path, 'path');
  if (problem) return problem;
  return { form: 'path', scheme: 'file', userinfo: null, host: '', port: null, path };
}

function checkPath(path: string, form: 'url' | 'scp' | 'path'): string | null {
  if (form !== 'scp' && !path.startsWith('/')) return 'must include the repository path';
  if (!PATH.test(path)) return 'has invalid characters in the repository path (percent-encode them)';
  const segments = path.split('/');
  if (segments.some((s) => s === '.' || s === '..')) return "repository path must not contain '.' or '..' segments";
  if (!segments.some((s) => s !== '')) return 'must include the repository path';
  return null;
}

function targetOf(p: ParsedUrl): string {
  const segments = p.path.split('/').filter((s) => s !== '');
  const last = segments.length - 1;
  if (segments[last]!.endsWith('.git') && segments[last]!.length > 4) segments[last] = segments[last]!.slice(0, -4);
  const path = segments.join('/');
  if (p.scheme === 'file') return `file:///${path}`;
  const port = p.port !== null && p.port !== DEFAULT_PORTS[p.scheme] ? `:${p.port}` : '';
  return `${p.scheme}://${p.host.toLowerCase()}${port}/${path}`;
}

const URL_USERINFO = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/]*)@/;

/**
 * The URL for display: https/http credentials are replaced entirely (a token is as often the user
 * name as the password), ssh keeps the user name and hides a password; query values are hidden.
 * Works on any string, valid URL or not.
 */
export function redactUrl(url: string): string {
  let out = url.replace(/\?.*$/s, '?***');
  const m = URL_USERINFO.exec(out);
  if (m) {
    const scheme = m[1]!.slice(0, -3).toLowerCase();
    const userinfo = m[2]!;
    const colon = userinfo.indexOf(':');
    const isSsh = scheme === 'ssh' || scheme === 'git+ssh' || scheme === 'ssh+git';
    const kept = !isSsh || colon === 0 ? '***' : colon < 0 ? userinfo : `${userinfo.slice(0, colon)}:***`;
    out = `${m[1]}${kept}@${out.slice(m[0].length)}`;
  }
  return out;
}

/** The URL without any secret, for storing where git keeps it (`remote.origin.url`). */
export function withoutCredentials(url: string): string {
  const m = URL_USERINFO.exec(url);
  if (!m) return url;
  const scheme = m[1]!.slice(0, -3).toLowerCase();
  const user = m[2]!.split(':')[0]!;
  return scheme === 'ssh' && user !== '' ? `${m[1]}${user}@${url.slice(m[0].length)}` : `${m[1]}${url.slice(m[0].length)}`;
}

/**
 * `text` (git's stderr, an error message) with the URL's secrets removed: the URL itself, each
 * credential part in raw and percent-decoded form, and any other `scheme://user:pass@` in it.
 */
export function redactText(text: string, url: string): string {
  let out = text.split(url).join(redactUrl(url));
  const m = URL_USERINFO.exec(url);
  if (m) {
    const scheme = m[1]!.slice(0, -3).toLowerCase();
    const parts = m[2]!.split(':');
    // ssh user names are not secret; every http(s) userinfo part may be a token.
    const secrets = scheme === 'ssh' ? parts.slice(1) : parts;
    for (const secret of secrets) {
      for (const form of new Set([secret, safeDecode(secret)])) {
        if (form.length >= 3) out = out.split(form).join('***');
      }
    }
  }
  return out.replace(/\b([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/\s@]*)@/g, (_all, prefix: string, userinfo: string) => redactUrl(`${prefix}${userinfo}@`));
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
