// Remote file inclusion: a parameter the application passes to include/require (or a template or
// image loader that fetches) given a URL of the attacker's server. Benign values hold URLs too — a
// website field, a return address, a health-check URL on an IP address — so level 1 reads the
// shapes inclusion needs and a link does not: a script or text file fetched from a bare IP address
// (payload servers seldom have names; a monitoring URL names no file), a non-web scheme to an IP
// address, and a URL ending in `?` (or `%00`), which turns the suffix the application appends
// (`.php`) into a query string the attacker's server ignores.
import type { RuleDefinition } from '../types.ts';

const T = ['value', 'header', 'body'] as const;
const FETCH_SCHEME = String.raw`(?:https?|ftps?|file|gopher|dict|tftp|ldap|jar:https?)`;
/** An IPv4 or IPv6 address (in brackets, or bare as lenient URL parsers take it: `https://2001:db8::1/x.php`). */
const IP_HOST = String.raw`(?:[^/@\s]*@)?(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:.]+\]|[0-9a-f]{1,4}(?::[0-9a-f]{0,4}){2,7})(?::\d+)?`;
/** What an included payload is stored as: a script, or text/images a loose include still runs. */
const PAYLOAD_FILE = String.raw`[^\s?#"'<]*\.(?:php\d?|phtml|inc|txt|jsp|aspx?|pl|cgi|sh|py|gif|jpe?g|png|ico)`;

export const RFI_RULES: readonly RuleDefinition[] = [
  {
    id: 'rfi.ip_address_url',
    category: 'rfi',
    paranoia_level: 1,
    description: 'A script or text file fetched from an IP address (http://66.240.183.75/crash.php, https://[2001:db8::1]/gecko.php), or another scheme to one (ftp://1.1.1.1)',
    targets: T,
    pattern: String.raw`(?:^|[\s"'=>(])(?:https?://${IP_HOST}/${PAYLOAD_FILE}(?:[?#\s"'<]|$)|(?:ftps?|file|gopher|dict|tftp|ldap)://${IP_HOST}(?:[/?#\s"'<]|$))`,
  },
  {
    id: 'rfi.suffix_cut',
    category: 'rfi',
    paranoia_level: 1,
    description: 'A value that is a URL ending in ? or a NUL byte, which cuts off the suffix the application appends (http://evil/shell.txt?)',
    targets: T,
    pattern: String.raw`^\s*${FETCH_SCHEME}://[^\s]*(?:\?+|\x00)\s*$`,
  },
];
