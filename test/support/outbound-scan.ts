// Finds the outbound primitives in a source file — what can open a connection to another host:
// fetch(), undici, node:http(s) requests and agents, node:net / node:tls connects, node:dgram,
// spawning git / ssh / curl, and the network clients this code base uses (OpenAI, Anthropic,
// Octokit, the AWS SDK, openid-client, nodemailer, pg, ioredis, the OTLP exporter, Stripe's API
// client, acme-client). Read from the TypeScript syntax tree, so comments and strings that mention `fetch(` do
// not count, and type-only imports neither. test/security/outbound-inventory.test.ts runs it over
// the code base and compares the result with its table.
import ts from 'typescript';

export type Primitive =
  | 'fetch()'
  | 'undici'
  | 'node:http(s) client'
  | 'node:net connect'
  | 'node:tls connect'
  | 'node:dgram'
  | 'spawn git'
  | 'spawn ssh'
  | 'spawn curl'
  | 'openai'
  | '@anthropic-ai/sdk'
  | '@octokit'
  | '@aws-sdk'
  | 'openid-client'
  | 'nodemailer'
  | 'pg'
  | 'ioredis'
  | 'otlp exporter'
  | 'stripe client'
  | 'acme-client'
  /** A connection primitive obtained from the outbound policy module. */
  | 'outbound policy';

/** Packages whose (value) import alone means network access. */
const PACKAGES: readonly [RegExp, Primitive][] = [
  [/^undici$/, 'undici'],
  [/^openid-client$/, 'openid-client'],
  [/^nodemailer$/, 'nodemailer'],
  [/^pg$/, 'pg'],
  [/^ioredis$/, 'ioredis'],
  [/^@opentelemetry\/exporter-/, 'otlp exporter'],
  [/^node:dgram$|^dgram$/, 'node:dgram'],
];

/** SDKs whose clients open connections: constructing one (`new OpenAI(…)`, `new EC2Client(…)`) counts; their error classes do not. */
const CLIENTS: readonly [RegExp, RegExp, Primitive][] = [
  [/^openai(\/|$)/, /^OpenAI$|^AzureOpenAI$/, 'openai'],
  [/^@anthropic-ai\/sdk(\/|$)/, /^Anthropic$/, '@anthropic-ai/sdk'],
  [/^@octokit\//, /^Octokit$/, '@octokit'],
  [/^@aws-sdk\/client-/, /Client$/, '@aws-sdk'],
];

/** What the outbound policy module (platform/net/outbound.ts, guarded-fetch.ts) hands out to open connections. */
const POLICY_EXPORTS = new Set(['outboundFetch', 'outboundAgent', 'outboundConnector', 'outboundNodeAgents', 'outboundSocket', 'startEgressProxy', 'ruleLookup', 'guardedFetch']);

/** node: modules whose named members open connections. */
const MEMBERS: readonly [RegExp, ReadonlySet<string>, Primitive][] = [
  [/^(node:)?https?$/, new Set(['request', 'get', 'Agent', 'globalAgent']), 'node:http(s) client'],
  [/^(node:)?net$/, new Set(['connect', 'createConnection', 'Socket']), 'node:net connect'],
  [/^(node:)?tls$/, new Set(['connect', 'TLSSocket']), 'node:tls connect'],
  // The ACME client (its own axios instance underneath).
  [/^acme-client$/, new Set(['Client']), 'acme-client'],
];

const SPAWNERS = new Set(['spawn', 'spawnSync', 'execFile', 'execFileSync', 'exec', 'execSync']);
const PROGRAMS: readonly [RegExp, Primitive][] = [
  [/^git(\s|$)/, 'spawn git'],
  [/^ssh(\s|$)/, 'spawn ssh'],
  [/^(curl|wget)(\s|$)/, 'spawn curl'],
];

/** The primitives found in `text` (a .ts or .mjs file's source), each once. */
export function outboundPrimitives(text: string, fileName = 'file.ts'): Set<Primitive> {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true, fileName.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS);
  const found = new Set<Primitive>();
  /** Local names bound to a whole node: module (default or namespace import) → that module's primitive. */
  const namespaces = new Map<string, { members: ReadonlySet<string>; primitive: Primitive }>();
  /** Local names of child_process spawners; Stripe's default import. */
  const spawners = new Set<string>();
  let stripe: string | null = null;
  /** Local names of SDK client classes. */
  const clients = new Map<string, Primitive>();

  const visitImport = (specifier: string, clause: ts.ImportClause | undefined): void => {
    if (!clause || clause.isTypeOnly) return;
    for (const [pattern, primitive] of PACKAGES) if (pattern.test(specifier)) found.add(primitive);
    if (specifier === 'stripe' && clause.name) stripe = clause.name.text;
    const named = clause.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements.filter((e) => !e.isTypeOnly) : [];
    const whole = [clause.name?.text, clause.namedBindings && ts.isNamespaceImport(clause.namedBindings) ? clause.namedBindings.name.text : undefined].filter((n): n is string => n !== undefined);
    if (/(^|\/)net\/(outbound|guarded-fetch)\.ts$/.test(specifier) && named.some((e) => POLICY_EXPORTS.has((e.propertyName ?? e.name).text))) found.add('outbound policy');
    for (const [pattern, className, primitive] of CLIENTS) {
      if (!pattern.test(specifier)) continue;
      if (clause.name) clients.set(clause.name.text, primitive);
      for (const e of named) if (className.test((e.propertyName ?? e.name).text)) clients.set(e.name.text, primitive);
    }
    for (const [pattern, members, primitive] of MEMBERS) {
      if (!pattern.test(specifier)) continue;
      if (named.some((e) => members.has((e.propertyName ?? e.name).text))) found.add(primitive);
      for (const name of whole) namespaces.set(name, { members, primitive });
    }
    if (/^(node:)?child_process$/.test(specifier)) {
      for (const e of named) if (SPAWNERS.has((e.propertyName ?? e.name).text)) spawners.add(e.name.text);
      for (const name of whole) namespaces.set(name, { members: SPAWNERS, primitive: 'spawn git' });
    }
  };

  const programOf = (call: ts.CallExpression): void => {
    const first = call.arguments[0];
    if (!first || !(ts.isStringLiteral(first) || ts.isNoSubstitutionTemplateLiteral(first))) return;
    for (const [pattern, primitive] of PROGRAMS) if (pattern.test(first.text)) found.add(primitive);
  };

  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) visitImport(node.moduleSpecifier.text, node.importClause);
    else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword) {
        const arg = node.arguments[0];
        if (arg && ts.isStringLiteral(arg)) for (const [pattern, primitive] of PACKAGES) if (pattern.test(arg.text)) found.add(primitive);
      } else if (ts.isIdentifier(callee)) {
        if (callee.text === 'fetch') found.add('fetch()');
        if (spawners.has(callee.text)) programOf(node);
      } else if (ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression)) {
        const owner = callee.expression.text;
        if (owner === 'globalThis' && callee.name.text === 'fetch') found.add('fetch()');
        const ns = namespaces.get(owner);
        if (ns?.members === SPAWNERS && SPAWNERS.has(callee.name.text)) programOf(node);
        else if (ns?.members.has(callee.name.text)) found.add(ns.primitive);
      }
    } else if (ts.isNewExpression(node)) {
      const callee = node.expression;
      if (stripe !== null && ts.isIdentifier(callee) && callee.text === stripe) found.add('stripe client');
      const client = ts.isIdentifier(callee) ? clients.get(callee.text) : undefined;
      if (client) found.add(client);
      if (ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression)) {
        const ns = namespaces.get(callee.expression.text);
        if (ns && ns.members !== SPAWNERS && ns.members.has(callee.name.text)) found.add(ns.primitive);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The module specifiers a file imports at least one value from (type-only imports left out). */
export function valueImports(text: string, fileName = 'file.ts'): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, false, fileName.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS);
  const out: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const clause = statement.importClause;
    if (!clause || clause.isTypeOnly) continue;
    const bindings = clause.namedBindings;
    const values = clause.name !== undefined || (bindings !== undefined && (ts.isNamespaceImport(bindings) || bindings.elements.some((e) => !e.isTypeOnly)));
    if (values) out.push(statement.moduleSpecifier.text);
  }
  return out;
}
