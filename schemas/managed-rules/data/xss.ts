// Cross-site scripting. Level 1 needs something that executes: a script element, an event handler
// attribute, a script URL where a browser loads or navigates, an element that loads active content,
// a breakout from a JavaScript string into a call of a dialog or eval, template-expression escapes.
// Ordinary rich text (<p>, <b>, <a href="https://…">, <img src alt>) and prose about JavaScript
// ("JavaScript: The Good Parts") pass. Higher levels flag more HTML.
import type { RuleDefinition } from '../types.ts';
import { ALL_INPUT, DOM_EVENTS, SCRIPT_CODE, SCRIPT_SCHEME, URL_ATTRIBUTES, alt } from './fragments.ts';

const T = ALL_INPUT;
/** Where a probe goes: not the request path (documentation URLs name these APIs) nor a text body (XML documents hold <xml> and <svg>). */
const PROBE_INPUT = ['value', 'name', 'user_agent', 'referer', 'header'] as const;
/** The dialogs an XSS probe opens to show it ran. */
const DIALOG = '(?:alert|confirm|prompt)';
/** The document's and window's members a stolen session reads. */
const DOCUMENT_SECRET = String.raw`document\s*\.\s*(?:cookie|domain|location)`;
const WINDOW_MEMBER = String.raw`window\s*\.\s*(?:location|name)`;
/** Calls that run a string as script or build one from character codes. */
const STRING_CODE = String.raw`fromcharcode\s*\(|\b(?:settimeout|setinterval)\s*\(\s*['"\x60]|\bnew\s+function\s*\(`;
/** Elements that load another document or a style sheet by themselves (xss.embedded_document). */
const LOADING_ELEMENTS = ['iframe', 'frame', 'portal', 'style', 'xss'];
const ATTRS = alt(URL_ATTRIBUTES.map((a) => a.replace(':', '\\s*:\\s*')));

/**
 * `word` with whitespace somewhere inside it (browsers drop tabs and line breaks from a URL's
 * scheme: ja&Tab;vascript:), but not only at `wordBreak`, where prose splits it into two words.
 */
function splitWord(word: string, wordBreak: number): string {
  const spaced = (part: string): string => [...part].join(String.raw`\s*`);
  const alternatives: string[] = [];
  for (let k = 1; k < word.length; k++) if (k !== wordBreak) alternatives.push(`${spaced(word.slice(0, k))}\\s+${spaced(word.slice(k))}`);
  return alt(alternatives);
}

export const XSS_RULES: readonly RuleDefinition[] = [
  {
    id: 'xss.script_tag',
    category: 'xss',
    paranoia_level: 1,
    description: 'A <script> or </script> tag, also with a namespace prefix (<x:script xmlns:x="http://www.w3.org/1999/xhtml">)',
    targets: T,
    pattern: String.raw`<\s*/?\s*(?:[a-z][\w-]{0,20}\s*:\s*)?script\b`,
  },
  {
    id: 'xss.event_handler',
    category: 'xss',
    paranoia_level: 1,
    description: 'A DOM event handler attribute (onerror=, onload=, onmouseover=, …) where an attribute can start',
    targets: T,
    pattern: String.raw`(?:^|[\s/"'\x60;,+])on${alt([...DOM_EVENTS])}[\s/]*=`,
  },
  {
    id: 'xss.any_event_attribute',
    category: 'xss',
    paranoia_level: 1,
    description: 'Any on…= attribute inside a tag, also after quoted attribute values holding `>` or right after one (<x 1=">" onxxx=1, <x 1="1"onxxx=1): in HTML every such attribute is an event handler (custom events, probes like onxxx=)',
    targets: T,
    pattern: String.raw`<[a-z](?:[^>"']|"[^"]*"|'[^']*')*(?:[\s/\x60\]]|"[^"]*"|'[^']*')on[a-z]{3,}\s*=`,
  },
  {
    id: 'xss.script_url',
    category: 'xss',
    paranoia_level: 1,
    description: 'A javascript:, vbscript:, livescript:, mocha: or data:text/html URL in an attribute or CSS url(), a data:application/x-… URL (which a browser hands to a plug-in or a certificate store) in one, or a script URL followed by code',
    targets: T,
    pattern:
      String.raw`(?:${ATTRS}\s*=|url\s*\()\s*["'\x60]?\s*(?:${SCRIPT_SCHEME}|data\s*:\s*(?:text/html|application/x-))|${SCRIPT_SCHEME}\s*${SCRIPT_CODE}|` +
      String.raw`\bdata\s*:\s*(?:text/html|text/xml|application/xhtml\+xml|text/javascript|application/(?:x-)?javascript|application/ecmascript)\b`,
  },
  {
    id: 'xss.active_element',
    category: 'xss',
    paranoia_level: 1,
    in_prose: 'warning',
    description: 'Elements that load active content or change how the page is read (<object>, <embed>, <applet>, <base>, <meta>, <layer>, <?import>, <?xml:namespace>, srcdoc=, SVG animation of on… or href)',
    targets: T,
    pattern: String.raw`<\s*(?:applet|object|embed|base|isindex|frameset|bgsound|import|meta|i?layer|(?:[a-z]*\s*:\s*)?vmlframe)\b|<\?\s*(?:import\b|xml\s*:\s*namespace\b)|[\s/"']srcdoc\s*=|[\s/"']datasrc\s*=|\battributename\s*=\s*["'\x60]?\s*(?:on[a-z]+|(?:xlink\s*:\s*)?href)\b`,
  },
  {
    id: 'xss.string_breakout',
    category: 'xss',
    paranoia_level: 1,
    description: "A quote ending a JavaScript string then a dialog, eval, a timer given code (window.name, a string) or cookie access (';alert(1)//, \"-prompt(1)-\", \";setTimeout(name,1)//)",
    targets: T,
    pattern: String.raw`['"\x60][\s)\]}]*(?:;|[-+*/%^|&,?:]+)\s*(?:(?:alert|confirm|prompt|eval)\s*[(\x60]|set(?:timeout|interval)\s*\(\s*(?:name\b|location\b|atob\b|['"\x60])|document\s*\.\s*(?:cookie|domain)\b|(?:top|self|window|parent|this|globalthis)\s*\[)|^[^'"\x60\n]{0,20}['"\x60][\s)\]}]*;[^\n]{0,80}\b(?:alert|confirm|prompt|eval)\s*[(\x60]`,
  },
  {
    id: 'xss.template_expression',
    category: 'xss',
    paranoia_level: 1,
    description: 'Client-side template escapes to the Function constructor ({{constructor.constructor(…)()}}, this.constructor.constructor, [\'constructor\'])',
    targets: T,
    pattern: String.raw`\bconstructor\s*\.\s*constructor\b|\[\s*['"]constructor['"]\s*\]|\{\{[^}\n]*(?:\$eval|\$on\b|\$emit|alert\s*\(|fromcharcode)`,
  },
  {
    id: 'xss.sink_call',
    category: 'xss',
    paranoia_level: 1,
    description: 'A dialog or eval sink called the ways filters miss: alert?.(…), confirm.call(…), prompt.apply(…), (alert)(1), eval(atob(…)), document["cookie"], (document)["cookie"], top["al"+"ert"], a function\'s call or apply run as a tagged template ([].sort.call`${alert}1`)',
    targets: T,
    pattern: String.raw`\b(?:alert|confirm|prompt|eval|settimeout|setinterval|print)\s*(?:\?\.\s*\(|\.\s*(?:call|apply|bind)\s*\()|\(\s*(?:alert|confirm|prompt|eval)\s*\)\s*\(|\beval\s*\(\s*(?:atob|unescape|decodeuricomponent|string\.fromcharcode)\b|\b(?:document|window|self|top|parent|globalthis)\s*\)?\s*\[\s*['"\x60](?:cookie|domain|location|write|writeln|alert|eval|al|ev)|\.\s*(?:call|apply)\s*\x60|\.\s*(?:find|map|foreach|filter|some|every|reduce|then|sort)\s*\(\s*(?:alert|confirm|prompt|eval)\s*\)|&\{[^}\n]{0,80}\b(?:alert|confirm|prompt|eval)\s*\(`,
  },
  {
    id: 'xss.prototype_pollution',
    category: 'xss',
    paranoia_level: 1,
    description: 'Prototype pollution of client or server objects (__proto__[…], constructor.prototype, _c.constructor(…) in Vue templates)',
    targets: T,
    pattern: String.raw`__proto__\s*(?:\[|\]|\.\s*[a-z_$]|['"]\s*:)|[\[.]\s*__proto__\b|\bconstructor\s*(?:\.\s*prototype|\]?\s*\[\s*['"]?prototype\b)|\b_c\s*\.\s*constructor\s*\(`,
  },
  {
    id: 'xss.css_script',
    category: 'xss',
    paranoia_level: 1,
    description: "Script in CSS (expression(…), -moz-binding, binding: or behavior: url(…), url(javascript…), a style attribute's url() of a .js or .htc file) and a style sheet imported from a style tag (<style>@import 'http://…')",
    targets: T,
    pattern: String.raw`[:=]\s*["']?\s*expression\s*\(|-moz-binding\s*:|(?:[{;="']|^)\s*(?:binding|behaviou?r)\s*:\s*url\s*\(|\bstyle\s*=\s*["']?[^"'>\n]*\burl\s*\(\s*['"]?[^)'"\n]*\.(?:js|htc)\b|\burl\s*\(\s*['"]?\s*(?:java|vb)script\b|<\s*style\b[^>\n]*>\s*@import\b`,
  },
  {
    id: 'xss.jsfuck',
    category: 'xss',
    paranoia_level: 1,
    description: 'JavaScript written with six characters only (JSFuck: [][(![]+[])[+[]]…]), which builds any code out of coerced empty arrays; also with its + read as a space, as a form body decodes an unescaped one',
    targets: T,
    pattern: String.raw`\(\s*!\s*\[\s*\]\s*\+?\s*\[\s*\]\s*\)\s*\[|\[\s*\+\s*!\s*\+\s*\[\s*\]\s*\]`,
  },
  {
    id: 'xss.utf7_markup',
    category: 'xss',
    paranoia_level: 1,
    description: 'A tag written in UTF-7 (+ADw-script+AD4-, +ADw-img …), which browsers that sniff the charset read as markup',
    targets: T,
    pattern: String.raw`\+adw-\s*(?:\+ac8-\s*)?(?:script|img|svg|iframe|body|style|object|embed|input|a|div|p|meta|link)(?:\+ad4-|[\s/+]|$)`,
  },
  {
    id: 'xss.dialog_probe',
    category: 'xss',
    paranoia_level: 1,
    description: "A statement of its own calling a dialog with a marker, as injection probes do (;alert(1)//, x;confirm('xss');, =alert(document.cookie)), or a global object's member computed and called (top[/al/.source+/ert/.source](1))",
    targets: T,
    pattern: String.raw`(?:^|[;)}\]=?>])\s*(?:alert|prompt|confirm)\s*(?:\(\s*(?:-?\d+|['"\x60][^'"\x60\n]{0,40}['"\x60]|/[^/\n]{1,40}/|document\s*\.\s*(?:cookie|domain|location)|)\s*\)|\x60[^\x60\n]{0,40}\x60)\s*(?://|;|$|-->|[<>'",])|\b(?:top|self|window|parent|frames|globalthis)\s*\[[^\]\n]{1,80}\]\s*\(\s*(?:-?\d+|['"\x60][^'"\x60\n]{0,40}['"\x60]|document\s*\.\s*cookie)?\s*\)`,
  },
  {
    id: 'xss.obfuscated_script',
    category: 'xss',
    paranoia_level: 1,
    description:
      'Script words spelled so that filters miss them and browsers still read them: a javascript: or vbscript: scheme with whitespace inside the word (ja&Tab;vascript:), a script element in the high-bit bytes old IE read as ASCII (¼script¾…¼/script¾), a DOM property reached across spaces or a comment (document /**/ . cookie)',
    targets: T,
    // NFKC has made ¼ and ¾ into 1/4 and 3/4 (canonicalise.ts).
    pattern: String.raw`\b(?:${splitWord('javascript', 4)}|${splitWord('vbscript', 2)})\s*:|1/4script3/4[^\n]{0,200}?1/4/script3/4|\bdocument\s+\.\s*(?:cookie|domain|location|write)\b`,
  },
  {
    id: 'xss.escaped_bracket_probe',
    category: 'xss',
    paranoia_level: 1,
    description:
      'A value that is nothing but an escaped angle bracket (&lt, &#0060;, &#x3C, \\x3c, \\u003c, %3C left after decoding): a probe for which escape the application decodes back into markup. A bare < or > is a filter operator and passes',
    targets: ['value', 'header'],
    form: 'raw',
    pattern: String.raw`^\s*(?:&(?:lt|gt|#0*6[02]|#x0*3[ce]);?|\\(?:x3[ce]|u0{0,4}3[ce]|u\{0*3[ce]\})|%(?:u00)?3[ce])\s*$`,
  },
  {
    id: 'xss.embedded_document',
    category: 'xss',
    paranoia_level: 1,
    in_prose: 'warning',
    description: 'A one-line value with an element that loads another document or style sheet into the page (<iframe>, <frame>, <portal>, <style>, <link href=…>, <xml src=…>, <xss>); XML bodies, SVG images and MathML (formula editors post it) are level 2 (xss.embedding_element)',
    targets: PROBE_INPUT,
    pattern: String.raw`<\s*${alt(LOADING_ELEMENTS)}\b|<\s*link\b[^>\n]*\b(?:href|rel)\s*=|<\s*xml\b[^>\n]*\bsrc\s*=`,
  },
  {
    id: 'xss.script_call',
    category: 'xss',
    paranoia_level: 1,
    in_prose: 'warning',
    description: "A one-line value that opens a dialog or uses what a stolen session needs, as XSS probes do (alert(1), prompt`1`, (document.cookie), window.name+, document.write(…) or document.write`…`, String.fromCharCode(…), setTimeout('…'), a=alert,a(1), eval(a+b), {onerror=alert}throw 1); prose naming them (an alert (daily), document.cookie is…) passes, and eval( and innerHTML= are level 2 (xss.dom_sink)",
    targets: PROBE_INPUT,
    pattern:
      String.raw`\b${DIALOG}\(|(?:^|[^\x60\w])${DIALOG}\x60|[(=+,:;]\s*(?:${DOCUMENT_SECRET}|${WINDOW_MEMBER})\b|\b(?:${DOCUMENT_SECRET}|window\s*\.\s*name)\s*[)+;,]|` +
      String.raw`\bdocument\s*\.\s*write(?:ln)?\s*[(\x60]|${STRING_CODE}|=\s*(?:${DIALOG}|eval)\s*[,;]\s*[a-z_$][\w$]*\s*\(|\beval\s*\(\s*[a-z_$][\w$]*\s*\+\s*[\w$'"]|` +
      // The error handler set to a dialog or eval, then an error thrown: a call with no parentheses.
      String.raw`\bonerror\s*=\s*(?:${DIALOG}|eval)\b[^\n]{0,40}\bthrow\b`,
  },
  // --- level 2 -------------------------------------------------------------------------------------
  {
    id: 'xss.embedding_element',
    category: 'xss',
    paranoia_level: 2,
    signal: { from: 1, severity: 'warning' },
    description: 'Elements that embed documents, vector graphics or styles (<iframe>, <frame>, <svg>, <math>, <style>, <link>)',
    targets: T,
    pattern: String.raw`<\s*${alt([...LOADING_ELEMENTS, 'svg', 'math', 'link', 'xml'])}\b`,
  },
  {
    id: 'xss.dom_sink',
    category: 'xss',
    paranoia_level: 2,
    signal: { from: 1, severity: 'warning' },
    description: 'Script sinks and dialogs (alert(, document.cookie, innerHTML=, eval(, String.fromCharCode, location=)',
    targets: T,
    pattern:
      String.raw`\b${DIALOG}\s*(?:\(|\x60)|\b${DOCUMENT_SECRET}\b|\bdocument\s*\.\s*write(?:ln)?\b|\b${WINDOW_MEMBER}\b|\.\s*(?:inner|outer)html\s*=|` +
      String.raw`\binsertadjacenthtml|${STRING_CODE}|\beval\s*\(|\blocation\s*(?:\.\s*href\s*)?=\s*['"\x60]?\s*(?:${SCRIPT_SCHEME}|//)`,
  },
  {
    id: 'xss.script_scheme',
    category: 'xss',
    paranoia_level: 2,
    signal: { from: 1, severity: 'warning' },
    description: 'A script or SVG/data URL anywhere (javascript: at the start of a value, data:image/svg+xml, data:…;base64)',
    targets: T,
    pattern: String.raw`^\s*${SCRIPT_SCHEME}|\bdata\s*:\s*image/svg\+xml|\bdata\s*:[\w/+.-]*;base64,`,
  },
  {
    id: 'xss.utf7',
    category: 'xss',
    paranoia_level: 2,
    description: 'UTF-7 encoded angle brackets (+ADw-, +AD4-), read as markup by old browsers',
    targets: T,
    pattern: String.raw`\+ad[w4]-`,
  },
  // --- level 3 -------------------------------------------------------------------------------------
  {
    id: 'xss.html_element',
    category: 'xss',
    paranoia_level: 3,
    description: 'Interactive or media elements and document structure (<form>, <input>, <img>, <video>, <body>, <details>, <marquee>, <template>)',
    targets: T,
    pattern: String.raw`<\s*(?:form|input|button|textarea|select|keygen|details|marquee|video|audio|source|track|body|html|head|title|img|image|template|dialog|set|animate\w*|use|foreignobject|noscript|noembed|xmp|plaintext|listing|object|picture)\b`,
  },
  {
    id: 'xss.attribute_breakout',
    category: 'xss',
    paranoia_level: 3,
    signal: { from: 1, severity: 'warning' },
    description: 'A quote closing an attribute followed by a new tag ("><, \'/><)',
    targets: T,
    pattern: String.raw`["'\x60]\s*/?>\s*<\s*[a-z/!]`,
  },
  // --- level 4 -------------------------------------------------------------------------------------
  {
    id: 'xss.markup',
    category: 'xss',
    paranoia_level: 4,
    description: 'Any tag, comment or processing instruction',
    targets: T,
    pattern: String.raw`<[a-z!/?]`,
  },
];
