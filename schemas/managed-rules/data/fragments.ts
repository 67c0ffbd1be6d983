// Pieces of RE2 syntax shared by several rules. Everything here is matched against the canonical
// text (canonicalise.ts): lower case, block comments already turned into spaces, whitespace runs
// collapsed (a run holding a line break is one `\n`), so the fragments need not repeat that work.

/** Word alternation: `alt(['a', 'b'])` → `(?:a|b)`. Words are written as RE2 already. */
export const alt = (words: readonly string[]): string => `(?:${words.join('|')})`;

/** Targets most content rules read: wherever a parameter, a path or a logged header can carry input. */
export const ALL_INPUT = ['value', 'name', 'path', 'user_agent', 'referer', 'header', 'body'] as const;
/** Inputs an application reads as data (not headers that only end up in logs). */
export const DATA_INPUT = ['value', 'name', 'path', 'body'] as const;

/** Not inside a word. RE2's `\b` is ASCII-only: `réunion` must not hold the word `union`. */
export const WORD_START = String.raw`(?:^|[^a-z0-9_\x{80}-\x{10ffff}])`;
/** The end of a word, in the same sense. */
export const WORD_END = String.raw`(?:[^a-z0-9_\x{80}-\x{10ffff}]|$)`;

// --- SQL ---------------------------------------------------------------------------------------

/**
 * One unit of SQL whitespace: a space, or a line comment that ends at a line break (`#…\n`,
 * `--…\n`), which MySQL and others read as whitespace between keywords (`union#x\nselect`).
 */
export const SQL_SP = String.raw`(?:\s|#[^\n]*\n|--[^\n]*\n)`;
/** Whitespace or opening parentheses between SQL tokens (`union(select`, `or(1=1)`). */
export const SQL_GAP = String.raw`(?:\s|\(|#[^\n]*\n|--[^\n]*\n)`;
/**
 * A SQL literal: number, quoted string, boolean/null, hex — or a name in SQL Server's brackets
 * (`[id]`), which compared with itself is as true as 1=1.
 */
export const SQL_LITERAL = String.raw`(?:-?\d+(?:\.\d+)?|'[^'\n]*'|"[^"\n]*"|true|false|null|0x[0-9a-f]+|\[[a-z_]\w{0,30}\])`;
/** The right-hand literal of a comparison may be an unterminated string: the query supplies the quote. */
export const SQL_LITERAL_OPEN = String.raw`(?:-?\d+(?:\.\d+)?|'[^'\n]*'?|"[^"\n]*"?|true|false|null|0x[0-9a-f]+|\[[a-z_]\w{0,30}\])`;
/** Comparison operators, the word ones needing space around them. */
export const SQL_COMPARE = String.raw`(?:=|==|<=>|!=|<>|<=|>=|<|>|\s(?:not\s+)?(?:like|rlike|regexp|between|glob)\s|\s(?:not\s+)?in\s*\()`;
/** Boolean operators that join an injected condition. */
export const SQL_BOOL = String.raw`(?:or|and|xor|\|\||&&)`;
/** A quote that ends the string the application opened, then closing parentheses. */
export const QUOTE_BREAK = String.raw`['"\x60][\s)]*`;

// --- HTML / JavaScript ---------------------------------------------------------------------------

/**
 * DOM event handler attribute names without `on` (HTML, SVG, legacy IE and vendor-prefixed ones).
 * A list rather than `on\w+` so that attribute-looking prose (`once=`, `online=`) is not an event.
 */
export const DOM_EVENTS = [
  'abort', 'activate', 'afterprint', 'afterscriptexecute', 'afterupdate', 'animationcancel', 'animationend', 'animationiteration',
  'animationstart', 'auxclick', 'beforeactivate', 'beforecopy', 'beforecut', 'beforedeactivate', 'beforeeditfocus', 'beforeinput',
  'beforematch', 'beforepaste', 'beforeprint', 'beforescriptexecute', 'beforetoggle', 'beforeunload', 'beforeupdate', 'begin', 'blur',
  'bounce', 'cancel', 'canplay', 'canplaythrough', 'cellchange', 'change', 'click', 'close', 'command', 'contentvisibilityautostatechange',
  'contextlost', 'contextmenu', 'contextrestored', 'controlselect', 'copy', 'cuechange', 'cut', 'dataavailable', 'datasetchanged',
  'datasetcomplete', 'dblclick', 'deactivate', 'drag', 'dragdrop', 'dragend', 'dragenter', 'dragexit', 'dragleave', 'dragover',
  'dragstart', 'drop', 'durationchange', 'emptied', 'end', 'ended', 'error', 'errorupdate', 'filterchange', 'finish', 'focus',
  'focusin', 'focusout', 'formdata', 'fullscreenchange', 'fullscreenerror', 'gotpointercapture', 'hashchange', 'help', 'input',
  'invalid', 'keydown', 'keypress', 'keyup', 'layoutcomplete', 'load', 'loadeddata', 'loadedmetadata', 'loadend', 'loadstart',
  'losecapture', 'lostpointercapture', 'message', 'messageerror', 'mousedown', 'mouseenter', 'mouseleave', 'mousemove', 'mouseout',
  'mouseover', 'mouseup', 'mousewheel', 'move', 'moveend', 'movestart', 'mozfullscreenchange', 'offline', 'online', 'pagehide',
  'pagereveal', 'pageshow', 'paste', 'pause', 'play', 'playing', 'pointercancel', 'pointerdown', 'pointerenter', 'pointerleave',
  'pointermove', 'pointerout', 'pointerover', 'pointerrawupdate', 'pointerup', 'popstate', 'progress', 'propertychange', 'ratechange',
  'readystatechange', 'repeat', 'reset', 'resize', 'resume', 'rowenter', 'rowexit', 'rowsdelete', 'rowsinserted', 'scroll',
  'scrollend', 'scrollsnapchange', 'search', 'securitypolicyviolation', 'seeked', 'seeking', 'select', 'selectionchange',
  'selectstart', 'show', 'slotchange', 'stalled', 'start', 'stop', 'storage', 'submit', 'suspend', 'timeupdate', 'toggle',
  'touchcancel', 'touchend', 'touchmove', 'touchstart', 'transitioncancel', 'transitionend', 'transitionrun', 'transitionstart',
  'unhandledrejection', 'unload', 'volumechange', 'waiting', 'webkitanimationend', 'webkitanimationiteration', 'webkitanimationstart',
  'webkitmouseforcechanged', 'webkitmouseforcedown', 'webkitmouseforceup', 'webkitmouseforcewillbegin', 'webkitplaybacktargetavailabilitychanged',
  'webkittransitionend', 'webkitwillrevealbottom', 'wheel', 'zoom',
] as const;

/**
 * `javascript:`, `vbscript:`, `livescript:` with the whitespace browsers strip inside a scheme
 * (tab, line feed: the canonical text has them as spaces) allowed between the letters.
 */
export const SCRIPT_SCHEME = String.raw`(?:(?:j\s*a\s*v\s*a|v\s*b|l\s*i\s*v\s*e)\s*s\s*c\s*r\s*i\s*p\s*t|m\s*o\s*c\s*h\s*a)\s*:`;

/** What follows a script scheme when it is code rather than prose ("javascript: the good parts"). */
export const SCRIPT_CODE = String.raw`(?:[a-z_$][\w$.]*(?:\(|\x60|\s*\[|\s*=[^=])|//|/\*|void\b|\{|\\|!|\+|~|\(\s*[a-z_$][\w$.]*\s*\()`;

/** Attributes (and CSS `url(`) whose value the browser loads or navigates to. */
export const URL_ATTRIBUTES = [
  'href', 'src', 'action', 'formaction', 'data', 'code', 'codebase', 'background', 'poster', 'lowsrc', 'dynsrc', 'xlink:href', 'to',
  'from', 'values', 'by', 'srcdoc', 'ping', 'cite', 'longdesc', 'icon', 'manifest', 'profile', 'classid', 'url', 'location', 'archive',
] as const;

// --- paths ---------------------------------------------------------------------------------------

/** A path separator as file systems read it: `/` or `\`, repeated, with `./` segments in between. */
export const SEP = String.raw`[/\\]+(?:\.[/\\]+)*`;
/** Start of a path component: not inside a longer word. */
export const COMPONENT_START = String.raw`(?:^|[^a-z0-9_.-])`;

// --- shell ---------------------------------------------------------------------------------------

/** Commands that are not English words: any word boundary after them will do. */
export const COMMANDS_DISTINCT = [
  'whoami', 'uname', 'ifconfig', 'ipconfig', 'netstat', 'nslookup', 'systeminfo', 'tasklist', 'taskkill', 'powershell', 'pwsh',
  'certutil', 'bitsadmin', 'wmic', 'mshta', 'rundll32', 'regsvr32', 'cscript', 'wscript', 'wget', 'ncat', 'netcat', 'socat', 'nohup',
  'busybox', 'mkfifo', 'chmod', 'chown', 'chgrp', 'crontab', 'useradd', 'usermod', 'userdel', 'groupadd', 'xxd', 'hexdump', 'tftp',
  'nmap', 'printenv', 'getent', 'dmesg', 'lsb_release', 'lsof', 'iptables', 'tracert', 'traceroute', 'passwd', 'netsh', 'vssadmin',
  'wevtutil', 'schtasks', 'phpinfo', 'invoke-webrequest', 'invoke-restmethod', 'invoke-expression', 'invoke-wmimethod', 'invoke-command',
  'start-bitstransfer', 'new-object', 'visudo', 'lastlog', 'base32', 'cpulimit', 'strace', 'ltrace', 'gdb', String.raw`ansible(?:-[a-z]+)?`,
  String.raw`chef-(?:client|solo|shell|run|vault|apply)`, 'htop', 'zstdcat', 'bsdtar', 'regedit', 'bcdboot', 'bcdedit', 'icacls', 'takeown',
  'ssh-copy-id', 'ssh-keygen', 'lastlogin', 'setenforce', String.raw`aa-(?:disable|teardown|complain)`, 'cscli', 'uconv',
] as const;

/** Commands that are also words (or too short to stand alone): they need a shell-looking argument. */
export const COMMANDS_WITH_ARGS = [
  'cat', 'more', 'less', 'head', 'tail', 'type', 'find', 'grep', 'egrep', 'fgrep', 'export', 'kill', 'killall', 'touch', 'sort', 'nl',
  'tac', 'strings', 'rev', 'dir', 'ls', 'env', 'ps', 'rm', 'cp', 'mv', 'mkdir', 'rmdir', 'ln', 'file', 'stat', 'which', 'whereis',
  'locate', 'base64', 'od', 'dd', 'tee', 'xargs', 'awk', 'gawk', 'sed', 'perl', String.raw`python[23]?(?:\.\d+)?`, 'ruby', 'php', 'node', 'lua',
  'java', 'gcc', 'cc', 'make', 'bash', 'sh', 'zsh', 'ksh', 'csh', 'tcsh', 'dash', 'fish', 'su', 'sudo', 'telnet', 'ssh', 'scp', 'ftp',
  'sftp', 'rsync', 'tar', 'zip', 'unzip', 'gzip', 'gunzip', 'chattr', 'openssl', 'timeout', 'expr', 'eval', 'exec', 'source', 'call',
  'start', 'copy', 'move', 'del', 'erase', 'ren', 'rename', 'reg', 'sc', 'at', 'attrib', 'cmd', 'hostname',
  'uptime', 'date', 'id', 'curl', 'set', 'ver', 'pwd', 'nc', 'ping', 'sleep', 'echo', 'net', 'printf', 'cut', 'dig', 'host', 'whois',
] as const;

/** Commands that, alone at the end of the injected text, are a probe (`;id`, `|ls`, `&&whoami`). */
export const COMMANDS_ALONE = ['id', 'ls', 'pwd', 'env', 'dir', 'ver', 'hostname', 'sh', 'bash', 'zsh', 'ksh', 'ps', 'who'] as const;
/** Probe commands that are no word of prose either: a separator and a space before them will do. */
export const COMMANDS_ALONE_DISTINCT = ['ls', 'pwd'] as const;

/**
 * An argument only a shell command takes: an option, an absolute or home path, a variable, a
 * Windows `%variable%`, a wildcard, a relative `./` path, a drive. Not `$5` or `->` (prices, arrows).
 */
const SHELL_ARG = String.raw`\s+(?:-{1,2}[a-z]|/|\\|~/|\$[a-z_{(]|%[a-z]|\*|\.{1,2}[/\\]|[a-z]:[\\/])`;
/** The end of an injected command: end of text, a further separator, a comment, a closing backtick. */
export const COMMAND_END = String.raw`\s*(?:$|[;&\n#)\x60]|\|(?:[^\s]|$))`;

/** Commands whose argument shape is specific enough to recognise without a generic shell argument. */
const COMMAND_SHAPES = [
  String.raw`sleep\s+\d+(?:\.\d+)?\s*(?:$|[;|&#\n\x60)])`,
  String.raw`ping\s+(?:-[a-z]|\d{1,3}(?:\.\d{1,3}){3}|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\s*(?:$|[;|&#\n\x60]))`,
  String.raw`net\s+(?:user|users|localgroup|group|view|share|use|session|start|stop|config|accounts)\b`,
  String.raw`nc\s+(?:-[a-z]|\d{1,3}(?:\.\d{1,3}){3}|[a-z0-9.-]+\s+\d{2,5}\b)`,
  String.raw`curl\s+(?:https?:|ftp:|file:|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}[/:])`,
  String.raw`echo\s+(?:-[a-z]|[^;|&\n]*>\s*[\w/~.$-])`,
  String.raw`reg(?:\.exe)?\s+(?:add|query|delete|save|export|import|load)\b`,
  String.raw`ps\s+(?:-?[aefuxl]+|aux)\b`,
  // PowerShell's short aliases: Invoke-WebRequest, Invoke-RestMethod, Invoke-Expression, Invoke-WmiMethod.
  String.raw`(?:iwr|irm|iex|iwmi)\s*(?:\(|-[a-z]|https?:|\$)`,
];

/**
 * A command as an injection runs it: a path into a bin directory, a distinct command name, a
 * word-command with a shell argument, or one of the specific shapes. `echo` only counts with a
 * redirect or an option: `; echo $x` is every PHP snippet. After a separator, also a DNS lookup of
 * a host name (`;dig x.oast.example`, how blind injections call home), which a value on its own
 * ("whois example.com" typed in a search box) is not.
 */
export const COMMAND = alt([
  // After a separator, also relative to the root (|usr/bin/id: the working directory is often /).
  String.raw`(?:/?usr)?(?:/local)?/s?bin/[a-z]`,
  `${alt([...COMMANDS_DISTINCT])}\\b`,
  `${alt(COMMANDS_WITH_ARGS.filter((c) => c !== 'echo'))}${SHELL_ARG}`,
  ...COMMAND_SHAPES,
  String.raw`(?:dig|host|whois)\s+(?:@[\w.-]+\s+)?[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\s*(?:$|[;|&#\n\x60)])`,
]);

/** A probe command alone (`id`, `ls`) up to the end of the injected text. */
export const COMMAND_PROBE = `${alt([...COMMANDS_ALONE])}${COMMAND_END}`;
/** The same, for the probes that are no word: `| pwd`, `; ls`. */
export const COMMAND_PROBE_DISTINCT = `${alt([...COMMANDS_ALONE_DISTINCT])}${COMMAND_END}`;

/** Any command word, where the context alone (`$(`, a backtick) says a command follows. */
export const COMMAND_WORD = `${alt([...COMMANDS_DISTINCT, ...COMMANDS_WITH_ARGS])}\\b`;

/**
 * A bracket wildcard a shell expands inside a path segment: one letter (`/[e]tc`) or junk holding a
 * slash (`/[e//]tc`). gitignore's case classes (`/[Ll]ibrary/`) are neither.
 */
export const BRACKET_GLOB = String.raw`\[(?:[a-z]|[^\]\n]{0,6}[/\\][^\]\n]{0,6})\]`;
/** A root path whose first segment is spelled with `?` or bracket wildcards (`/???/`, `/[e//]tc/`), opening the text, a word or a brace expansion's item ({,/?s?/?i?/c?t,}). */
export const WILDCARD_ROOT = String.raw`(?:^|[\s{,])/(?:[a-z]*\?[a-z?]*|${BRACKET_GLOB}[a-z]+)/`;

/**
 * Reconnaissance commands no word of prose spells, which a value holding only one of them (with
 * options, or behind a wrapper such as `time`) runs to learn the host (`uname -a`, `ipconfig /all`,
 * `time ifconfig`). Words for the fast path too (prefilter.ts).
 */
export const RECON_COMMANDS = ['whoami', 'uname', 'ifconfig', 'ipconfig', 'netstat', 'systeminfo', 'tasklist', 'printenv', 'dmesg', 'lsb_release', 'sysinfo'] as const;
export const RECON_COMMAND_VALUE = String.raw`(?:(?:time|strace|nohup|sudo|exec)\s+)?${alt([...RECON_COMMANDS])}(?:\s+(?:-{1,2}[a-z]+|/[a-z?]+))*\s*$`;

/**
 * A command line that is the whole value: a bin path, a distinct command with any argument, a word
 * command with a shell argument, one of the specific shapes, or a reconnaissance command alone
 * (`curl` alone, a word, passes).
 */
export const COMMAND_LINE = alt([
  RECON_COMMAND_VALUE,
  String.raw`(?:/usr)?(?:/local)?/s?bin/[a-z]`,
  `${alt([...COMMANDS_DISTINCT])}\\s+[^\\s]`,
  `${alt(COMMANDS_WITH_ARGS.filter((c) => c !== 'echo'))}${SHELL_ARG}`,
  ...COMMAND_SHAPES,
  String.raw`(?:netsh|reg|sc|schtasks|wmic|vssadmin|bcdedit|icacls|takeown)(?:\.exe)?\s+[a-z]`,
  String.raw`(?:perl|python[23]?|ruby|php|node)\s+-[a-z]*[ecr]\s`,
]);

/**
 * The command lines that are attack-shaped even with no metacharacter around them, where a value
 * holds nothing else (canonicalise.ts builds the shell form for them): a bin path, Windows account,
 * registry and firewall administration, an interpreter one-liner, a listing or read of a system
 * location. Not every command line: `mkdir -p src/components` and `chmod +x deploy.sh` are what
 * developers paste.
 */
export const ATTACK_COMMAND_LINE = alt([
  String.raw`(?:/usr)?(?:/local)?/s?bin/[a-z]`,
  String.raw`net\s+(?:user|localgroup|group)\b[^\n]*\s/(?:add|del(?:ete)?|active)\b`,
  String.raw`(?:netsh|reg|schtasks|wmic|vssadmin|bcdedit|icacls|takeown)(?:\.exe)?\s+[a-z]`,
  String.raw`(?:perl|python[23]?|ruby|php|node)\s+-[a-z]*[ecr]\s`,
  RECON_COMMAND_VALUE,
  String.raw`n(?:c|cat)(?:\.exe)?\s[^\n]*-[a-z]*e\s`,
  String.raw`(?:wget|curl)\s+(?:-{1,2}[a-z-]+\s+)*(?:https?|ftp)://[^\s]+\.(?:txt|sh|php\d?|py|pl|exe|ps1|jsp|aspx?|elf|bin)(?:\s|$)`,
  String.raw`invoke-(?:webrequest|restmethod|expression|wmimethod|command)\s+[^\s]|start-bitstransfer\s+[^\s]`,
  String.raw`(?:ls|dir|cat|type|more|less|head|tail|find|tac|nl|od|xxd|strings|base64|zcat|zstdcat|bzcat|xzcat|gunzip)\s+(?:-{1,2}[a-z]+\s+)*(?:/(?:etc|var|proc|root|home|tmp|usr|opt|windows|\s*$|\*)|[a-z]:\\)`,
]);

/** A probe command alone after a separator at the end of a value (`; id`, `| dir`, `& ver`). */
export const COMMAND_PROBE_ALONE = alt([...COMMANDS_ALONE, 'whoami', 'ipconfig', 'ifconfig', 'uname', 'sysinfo', 'systeminfo']);

/** `word` with `junk` between its letters at least once (w|hoami, wh|oami, …: one alternative per gap, as RE2 has no lookahead to say "somewhere"). */
export function spelledWith(word: string, junk: string): string {
  const letters = [...word];
  const spell = (part: readonly string[]): string => part.join(`(?:${junk})*`);
  return alt(letters.slice(1).map((_, gap) => `${spell(letters.slice(0, gap + 1))}(?:${junk})+${spell(letters.slice(gap + 1))}`));
}

/**
 * An uploaded file name that hides a server-side script from an extension check: any of
 * `extensions` followed by dots or spaces (which Windows and some servers drop: a.php.., a.jsp␠) or
 * preceded by a space (photo. php), or one of `rare`, which only a script handler runs, ending the
 * name. Extensions are patterns (`php\d*`).
 */
export function scriptUploadName(extensions: readonly string[], rare: readonly string[]): string {
  const any = alt(extensions);
  return String.raw`\.\s*${any}[\s.]+$|\.\s+${any}\s*$|\.${alt(rare)}\s*$`;
}
