// The rule table of the fallback engine: one entry per weakness family (a group of CWEs), with the
// explanation and fix templates Aegis shows for it. Templates name the finding's specifics as
// `{var}` (VAR_NAMES); ./text.ts fills them. Order matters only for rule-id hints: the first
// family whose hint matches wins.

export const VAR_NAMES = ['where', 'input', 'sink', 'param', 'package', 'version', 'fixed', 'cve', 'rule'] as const;
export type VarName = (typeof VAR_NAMES)[number];
export type Vars = Record<VarName, string>;

export interface Family {
  id: string;
  /** Shown in explanations: "SQL injection (CWE-89)". */
  name: string;
  cwes: readonly number[];
  /** Matches a rule id when the finding names no CWE (e.g. an imported SARIF rule). */
  ruleHint?: RegExp;
  /**
   * The matched code is the defect by itself (a disabled certificate check, a weak algorithm, a
   * literal key): unlike an injection sink, it needs no attacker-controlled data flow to be real.
   */
  patternIsDefect: boolean;
  explain: string;
  fix: string;
}

export const FAMILIES: readonly Family[] = [
  {
    id: 'sql-injection',
    name: 'SQL injection',
    cwes: [89, 564],
    ruleHint: /sql-?i|sql[-_]injection/i,
    patternIsDefect: false,
    explain: 'Untrusted data ({input}) becomes part of an SQL statement at {where}; an attacker can change the query to read or modify other rows.',
    fix: 'Pass {input} to {sink} as a bound parameter (placeholder plus values array) instead of concatenating it into the SQL text at {where}.',
  },
  {
    id: 'nosql-injection',
    name: 'NoSQL injection',
    cwes: [943],
    ruleHint: /nosql/i,
    patternIsDefect: false,
    explain: 'Untrusted data ({input}) reaches a NoSQL query at {where}; an object such as {"$ne": null} can turn an equality check into an operator.',
    fix: 'Coerce {input} to the expected scalar type (String(), Number()) or validate it against a schema before it reaches {sink} at {where}; reject objects where a value is expected.',
  },
  {
    id: 'ldap-injection',
    name: 'LDAP injection',
    cwes: [90],
    ruleHint: /ldap/i,
    patternIsDefect: false,
    explain: 'Untrusted data ({input}) is built into an LDAP filter or DN at {where}; filter metacharacters can widen the search or bypass a bind check.',
    fix: 'Escape {input} with an LDAP filter/DN escaping function (RFC 4515) before building the filter at {where}, or use the library\'s parameterised filter builder.',
  },
  {
    id: 'command-injection',
    name: 'OS command injection',
    cwes: [78, 77, 88],
    ruleHint: /cmdi|command[-_]injection|shell/i,
    patternIsDefect: false,
    explain: 'Untrusted data ({input}) reaches an operating-system command at {where}; shell metacharacters let an attacker run commands of their own.',
    fix: 'Call the program with execFile/spawn and an argument array (no shell) at {where}, and validate {input} against an allow-list of expected values.',
  },
  {
    id: 'code-injection',
    name: 'Code injection',
    cwes: [94, 95],
    ruleHint: /code[-_]injection|\beval\b/i,
    patternIsDefect: false,
    explain: 'A string built from {input} is evaluated as code at {where}; whoever controls it runs code inside the application.',
    fix: 'Replace {sink} at {where} with data handling: JSON.parse for data, a lookup table for dispatch; never evaluate text that can come from outside.',
  },
  {
    id: 'template-injection',
    name: 'Server-side template injection',
    cwes: [1336],
    ruleHint: /ssti|template[-_]injection/i,
    patternIsDefect: false,
    explain: 'Input is rendered as part of a server-side template at {where}; template expressions run on the server.',
    fix: 'Pass {input} to the template as a variable (context data) instead of concatenating it into the template source at {where}; enable the engine\'s sandbox where it has one.',
  },
  {
    id: 'xss',
    name: 'Cross-site scripting',
    cwes: [79, 80, 83],
    ruleHint: /xss|cross[-_]site[-_]scripting|innerhtml|dangerously/i,
    patternIsDefect: false,
    explain: 'Untrusted data ({input}) is written into an HTML response or the DOM at {where} without encoding; a script in it runs in the victim\'s browser.',
    fix: 'Encode {input} for its HTML context at {where} (the template engine\'s auto-escaping, textContent instead of innerHTML), or sanitise HTML with DOMPurify; add a Content-Security-Policy as defence in depth.',
  },
  {
    id: 'path-traversal',
    name: 'Path traversal',
    cwes: [22, 23, 36, 73],
    ruleHint: /traversal|zip-?slip|lfi/i,
    patternIsDefect: false,
    explain: 'A file path is built from {input} at {where}; "../" sequences or an absolute path reach files outside the intended directory.',
    fix: 'Resolve the path at {where} against a fixed base directory and reject it unless the result still starts with that base (path.resolve + startsWith), or map {input} to a file name with path.basename and an allow-list.',
  },
  {
    id: 'ssrf',
    name: 'Server-side request forgery',
    cwes: [918],
    ruleHint: /ssrf/i,
    patternIsDefect: false,
    explain: 'The server sends a request to a URL built from {input} at {where}; an attacker can reach internal services or cloud metadata endpoints.',
    fix: 'Allow-list the hosts {sink} may contact at {where}, resolve the host and refuse private, loopback and link-local addresses, and do not follow redirects to other hosts.',
  },
  {
    id: 'open-redirect',
    name: 'Open redirect',
    cwes: [601],
    ruleHint: /redirect/i,
    patternIsDefect: false,
    explain: 'The application redirects to a location taken from {input} at {where}; links on your domain can send users to a phishing site.',
    fix: 'Redirect only to relative paths or to an allow-list of hosts at {where}; reject values starting with "//" or a scheme.',
  },
  {
    id: 'xxe',
    name: 'XML external entity (XXE) processing',
    cwes: [611, 776],
    ruleHint: /xxe|external[-_]entit/i,
    patternIsDefect: true,
    explain: 'The XML parser at {where} resolves external entities; a document can make the server read local files or send requests.',
    fix: 'Disable DTD and external-entity processing for the parser at {where} (e.g. noent: false in libxmljs, defusedxml in Python, FEATURE_DISALLOW_DOCTYPE in Java).',
  },
  {
    id: 'deserialization',
    name: 'Insecure deserialisation',
    cwes: [502],
    ruleHint: /deserial|pickle|yaml[-_.]?load|unserialize/i,
    patternIsDefect: false,
    explain: 'Data is deserialised with a format that can instantiate arbitrary objects at {where}; crafted input can run code.',
    fix: 'Use a data-only parser at {where}: JSON.parse, yaml.safe_load (PyYAML), or a schema-validating decoder; never deserialise untrusted data with pickle, node-serialize or a full YAML loader.',
  },
  {
    id: 'prototype-pollution',
    name: 'Prototype pollution',
    cwes: [1321],
    ruleHint: /prototype/i,
    patternIsDefect: false,
    explain: 'Keys taken from {input} are assigned recursively at {where}; a "__proto__" or "constructor" key changes Object.prototype for the whole process.',
    fix: 'Skip "__proto__", "constructor" and "prototype" keys in the merge at {where}, use Object.create(null) or a Map for the target, or validate {input} against a schema first.',
  },
  {
    id: 'redos',
    name: 'Regular-expression denial of service',
    cwes: [1333, 400, 730],
    ruleHint: /redos|regex/i,
    patternIsDefect: false,
    explain: 'A regular expression at {where} is built from or applied to {input}; a crafted string can make matching take exponential time and block the event loop.',
    fix: 'Do not build regular expressions from {input} at {where} (escape it, or use a plain string comparison); use a linear-time engine (RE2) or bound the input length.',
  },
  {
    id: 'hardcoded-secret',
    name: 'Hard-coded credential',
    cwes: [798, 259, 321, 522, 547],
    ruleHint: /hard-?coded|leaked|secret[-_]?key|api[-_]?key|private[-_]key|password|credential/i,
    patternIsDefect: true,
    explain: 'A credential ({rule}) is stored in the source at {where}; anyone with read access to the repository or its history can use it.',
    fix: 'Revoke and rotate the credential found at {where} first (removing it from the code does not remove it from git history), then load it at run time from the environment or a secrets manager.',
  },
  {
    id: 'weak-crypto',
    name: 'Weak cryptography',
    cwes: [327, 328, 916, 326, 329, 759, 760],
    ruleHint: /md5|sha1|weak[-_](hash|cipher|crypto)|cipher/i,
    patternIsDefect: true,
    explain: 'A broken or too-fast algorithm (or a missing/static IV) is used at {where}; protected data or password hashes can be recovered.',
    fix: 'At {where}: hash passwords with bcrypt, scrypt or argon2; use SHA-256 or better for integrity; encrypt with AES-GCM (createCipheriv) and a random IV per message.',
  },
  {
    id: 'jwt',
    name: 'Improper JWT signature verification',
    cwes: [347],
    ruleHint: /jwt/i,
    patternIsDefect: true,
    explain: 'A JSON Web Token is decoded or verified without pinning the signature algorithm at {where}; forged tokens can be accepted.',
    fix: 'Verify tokens with jwt.verify and an explicit algorithms list at {where}; never trust jwt.decode output for authorisation.',
  },
  {
    id: 'insecure-randomness',
    name: 'Insecure randomness',
    cwes: [330, 338, 331],
    ruleHint: /random/i,
    patternIsDefect: true,
    explain: 'A security value (token, nonce, identifier) is generated with a predictable generator such as Math.random() at {where}; it can be guessed.',
    fix: 'Generate the value at {where} with a cryptographic generator: crypto.randomBytes(16).toString(\'hex\'), crypto.randomUUID() or crypto.randomInt() (secrets.token_hex in Python).',
  },
  {
    id: 'tls-verification',
    name: 'Improper certificate validation',
    cwes: [295, 297],
    ruleHint: /tls|certificate|reject[-_]?unauthorized/i,
    patternIsDefect: true,
    explain: 'TLS certificate verification is turned off at {where}; anyone on the network path can impersonate the server.',
    fix: 'Remove rejectUnauthorized: false / NODE_TLS_REJECT_UNAUTHORIZED=0 (verify=False in Python) at {where}; trust a private CA by passing its certificate (ca option) instead.',
  },
  {
    id: 'cleartext-transport',
    name: 'Cleartext transport / missing HSTS',
    cwes: [319, 311],
    ruleHint: /hsts|cleartext|plaintext/i,
    patternIsDefect: true,
    explain: 'The site at {where} does not enforce HTTPS (no Strict-Transport-Security); a network attacker can downgrade a first visit to HTTP.',
    fix: 'Send Strict-Transport-Security: max-age=31536000; includeSubDomains from {where} (after every subdomain serves HTTPS) and redirect HTTP to HTTPS.',
  },
  {
    id: 'security-headers',
    name: 'Missing security headers / clickjacking protection',
    cwes: [693, 1021, 16],
    ruleHint: /header|csp|clickjack|frame|nosniff/i,
    patternIsDefect: true,
    explain: 'The response from {where} lacks a protective header ({param}); browsers then allow framing, MIME sniffing or inline script that the header would block.',
    fix: 'Add the missing header ({param}) to every HTML response, e.g. with helmet() in Express or the reverse proxy: Content-Security-Policy with frame-ancestors \'self\', X-Frame-Options: DENY, X-Content-Type-Options: nosniff.',
  },
  {
    id: 'cors',
    name: 'Permissive CORS policy',
    cwes: [942, 346],
    ruleHint: /cors/i,
    patternIsDefect: true,
    explain: 'The endpoint {where} allows any (or a reflected) origin together with credentials; another site can read authenticated responses.',
    fix: 'Answer Access-Control-Allow-Origin only for an allow-list of trusted origins at {where}; never reflect the Origin header while Access-Control-Allow-Credentials is true.',
  },
  {
    id: 'cookie-flags',
    name: 'Cookie without security flags',
    cwes: [614, 1004, 1275],
    ruleHint: /cookie/i,
    patternIsDefect: true,
    explain: 'A cookie ({param}) is set at {where} without Secure, HttpOnly or SameSite; it can leak over HTTP, be read by scripts, or ride along on cross-site requests.',
    fix: 'Set the cookie ({param}) with Secure; HttpOnly; SameSite=Lax (or Strict) at {where}, e.g. cookie: { secure: true, httpOnly: true, sameSite: \'lax\' } in express-session.',
  },
  {
    id: 'csrf',
    name: 'Cross-site request forgery',
    cwes: [352],
    ruleHint: /csrf|xsrf/i,
    patternIsDefect: false,
    explain: 'A state-changing request at {where} is accepted without a CSRF token or origin check; another site can submit it with the victim\'s cookies.',
    fix: 'Require a per-session CSRF token (or a double-submit cookie) for state-changing requests at {where}, check Origin/Referer, and set SameSite on session cookies.',
  },
  {
    id: 'authorization',
    name: 'Broken authorisation',
    cwes: [285, 639, 862, 863, 284],
    ruleHint: /bola|idor|authz|authori[sz]/i,
    patternIsDefect: false,
    explain: 'An object at {where} is returned for an identifier without checking that the caller may access it; changing the id exposes other users\' data.',
    fix: 'Check at {where} that the authenticated caller owns or may access the requested object (scope the lookup by user or tenant), not only that they are logged in.',
  },
  {
    id: 'authentication',
    name: 'Missing authentication',
    cwes: [306, 287],
    ruleHint: /auth[-_]bypass|unauthenticated/i,
    patternIsDefect: false,
    explain: 'The operation {where} answered a request that carried no credentials; unless it is public by design, anyone can call it.',
    fix: 'Require authentication on {where} (the same middleware as the other protected routes); if the operation is meant to be public, mark it so in the API description.',
  },
  {
    id: 'vulnerable-dependency',
    name: 'Vulnerable dependency',
    cwes: [1104, 937, 1035, 1395],
    ruleHint: /^(GHSA|CVE|OSV|PYSEC|GO|RUSTSEC)-/i,
    patternIsDefect: true,
    explain: 'The project uses {package} {version}, which a published advisory ({cve}) lists as affected.',
    fix: 'Upgrade {package} from {version} to {fixed} or later (update the lockfile), then re-run the tests.',
  },
  {
    id: 'known-cve',
    name: 'Known vulnerability in deployed software',
    cwes: [],
    patternIsDefect: true,
    explain: 'The service at {where} matched the detection template for {cve}: it runs a version or configuration known to be vulnerable.',
    fix: 'Apply the vendor\'s fix for {cve} to the service behind {where} (upgrade or the published mitigation), then verify the fix with a re-scan.',
  },
  {
    id: 'information-exposure',
    name: 'Information exposure',
    cwes: [200, 209, 497, 548, 532, 215],
    ruleHint: /disclosure|banner|listing|stack[-_]?trace|exposure/i,
    patternIsDefect: true,
    explain: 'The response at {where} reveals internal details (error messages, stack traces, software versions or a directory index) that help an attacker plan further attacks.',
    fix: 'Return generic error pages at {where} and log details server-side only; remove version banners (e.g. app.disable(\'x-powered-by\'), server_tokens off) and turn off directory listing.',
  },
  {
    id: 'error-handling',
    name: 'Unhandled server error',
    cwes: [755, 754, 248],
    ruleHint: /server[-_]error/i,
    patternIsDefect: true,
    explain: 'The operation {where} answered with a 5xx status to a request the API description allows; unhandled errors often reveal internals or a missing validation.',
    fix: 'Validate input at {where} and map expected failures to 4xx responses; catch the error that produced the 5xx and log it server-side.',
  },
  {
    id: 'api-contract',
    name: 'API response does not match its description',
    cwes: [684],
    ruleHint: /schema[-_]violation|undeclared/i,
    patternIsDefect: true,
    explain: 'The operation {where} answered differently from its OpenAPI description; clients and validators relying on the contract can misbehave.',
    fix: 'Either fix the response of {where} or update the API description so both agree.',
  },
];

const BY_CWE = new Map<number, Family>();
for (const f of FAMILIES) for (const c of f.cwes) BY_CWE.set(c, f);

export function familyById(id: string): Family | undefined {
  return FAMILIES.find((f) => f.id === id);
}

/** The family of a CWE number, else the first whose rule-id hint matches; undefined: unknown. */
export function familyFor(cwe: number | null, ruleId: string): Family | undefined {
  if (cwe !== null) {
    const f = BY_CWE.get(cwe);
    if (f) return f;
  }
  return FAMILIES.find((f) => f.ruleHint?.test(ruleId));
}
