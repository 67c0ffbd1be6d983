// OS command injection (and Log4Shell-style lookups, which end in code execution the same way).
// Most rules read the `shell` form of the text (canonicalise.ts: quotes, backslashes, `$@`, `^`
// and brace expansion undone, `${IFS}` a space), which is only built when the text holds a shell
// metacharacter — an injected command needs one to start. Level 1 needs a separator followed by a
// command as a shell would run it (a distinct command name, or a common word with a shell-only
// argument), command substitution of a command, or a reverse-shell / download idiom. Prose with
// `&` and `;` ("Tom & Jerry; more to come") passes.
import type { RuleDefinition } from '../types.ts';
import { ALL_INPUT, alt, BRACKET_GLOB, COMMAND, COMMAND_LINE, COMMAND_PROBE, COMMAND_PROBE_ALONE, COMMAND_PROBE_DISTINCT, COMMAND_WORD, RECON_COMMANDS, spelledWith, WILDCARD_ROOT } from './fragments.ts';

const T = ALL_INPUT;
const SEPARATOR = String.raw`(?:[;|&]\s*)+`;
/**
 * A program that runs the command given after its own options and arguments (time, timeout 5,
 * nice -n 10, flock -u /, chroot jail; the shell form has dropped trap's quotes).
 */
const COMMAND_RUNNER =
  alt(['time', 'timeout', 'nice', 'flock', 'setsid', 'stdbuf', 'ionice', 'taskset', 'chrt', 'watch', 'trap', 'xargs', 'sudo', 'doas', 'unbuffer', 'nohup', 'strace', 'ltrace', 'env', 'exec', 'busybox', String.raw`chroot\s+\S+`]) +
  String.raw`(?:\s+(?:-{1,2}[a-z][\w-]*(?:=\S+)?|\d+[smhd]?|/[\w./-]*))*`;
/** What a batch file's IF runs: its own commands, bracketed or not. */
const BATCH_COMMAND = String.raw`\(?\s*@?(?:echo|set|goto|call|cmd|del|copy|move|type|start|exit)\b`;

/** What a shell drops inside a word: quotes, a backslash, `$@` and `$*` (empty without arguments), cmd.exe's `^`. */
const IN_WORD_JUNK = String.raw`(?:['"\\^]|\$[@*])`;
/**
 * Commands an injection runs that no word of prose turns into when a quote or backslash inside it is
 * dropped: `i'd` is English, so `id` is not here, nor other two-letter commands.
 */
const SPLIT_COMMANDS = [
  ...RECON_COMMANDS, 'wget', 'curl', 'cat', 'bash', 'python', 'perl', 'ping', 'nslookup', 'passwd', 'time', 'echo', 'chmod', 'sleep', 'telnet', 'nmap',
  'base64', 'busybox', 'powershell', 'netcat', 'ncat', 'socat', 'hostname', 'cmd', 'certutil', 'wmic', 'bitsadmin', 'mshta', 'rundll32',
];
/** `word` with junk a shell drops between its letters, at least once (`wh'o'ami`, `c\at`, `cu$@rl`); junk before it too (`'i'fconfig`). */
const spelledWithJunk = (word: string): string => `${IN_WORD_JUNK}*${spelledWith(word, IN_WORD_JUNK)}`;

export const CMDI_RULES: readonly RuleDefinition[] = [
  {
    id: 'cmdi.shellshock',
    category: 'cmdi',
    paranoia_level: 1,
    description: 'A Shellshock function definition (() { :; };) at the start of a value or header, or with its no-op body anywhere',
    targets: T,
    pattern: String.raw`^\s*\(\s*\)\s*\{|\(\s*\)\s*\{\s*[:_]\s*;\s*\}`,
  },
  {
    id: 'cmdi.ifs_expansion',
    category: 'cmdi',
    paranoia_level: 1,
    description: '$IFS / ${IFS} used as a space to smuggle a command past space filtering',
    targets: T,
    pattern: String.raw`\$\{?ifs\b`,
  },
  {
    id: 'cmdi.ssi_directive',
    category: 'cmdi',
    paranoia_level: 1,
    description: 'A server-side or edge-side include directive (<!--#exec cmd=…-->, <!--#include …-->, <esi:include src=…>, <esi:vars>)',
    targets: T,
    pattern: String.raw`<!--\s*#\s*(?:exec|include|echo|config|printenv|fsize|flastmod)\b|<\s*esi\s*:\s*(?:include|debug|assign|vars|eval|inline|choose|when|otherwise|try|attempt|except|remove|comment)\b`,
  },
  {
    id: 'cmdi.jndi_lookup',
    category: 'cmdi',
    paranoia_level: 1,
    description: 'Log4j lookups that lead to remote code loading (${jndi:ldap://…}, nested ${${lower:j}ndi:…}, ${::-j})',
    targets: T,
    pattern: String.raw`\$\{\s*(?:jndi\b|\$\{|(?:(?:lower|upper)\s*:|::-)[^}\n]*\})|\$\{[a-z:-]{0,8}\$\{[^}\n]*:-[^}\n]*\}|jndi\s*:\s*(?:ldaps?|rmi|dns|iiop|corba|nds|nis|https?)\s*:`,
  },
  {
    id: 'cmdi.command_chain',
    category: 'cmdi',
    paranoia_level: 1,
    description: "A command separator (; | || & &&) followed by a command with a shell-looking argument (;cat /etc/passwd, | nc -e, && whoami), maybe after variables that expand to nothing (|$u wget …) or a program that runs the command it is given (;timeout 5 whoami, ;flock -u / id, ;trap 'rm -rf x' EXIT)",
    targets: T,
    form: 'shell',
    pattern: String.raw`${SEPARATOR}(?:(?:\$[a-z_]\w{0,30}\s+)*${COMMAND}|${COMMAND_RUNNER}\s+(?:${COMMAND}|${COMMAND_PROBE}))`,
  },
  {
    id: 'cmdi.command_probe',
    category: 'cmdi',
    paranoia_level: 1,
    description: "A separator glued to a probe command ending the injection (;id, |ls, &&pwd, ||whoami;), or with a space for probes that are no word (| pwd), or any program asked only its version or help after a separator (;rmt --version, ;'perf' --help): whether a command exists",
    targets: T,
    form: 'shell',
    pattern: String.raw`[;|&]+${COMMAND_PROBE}|[;|&]+\s+${COMMAND_PROBE_DISTINCT}|[;|&]\s*[a-z][\w.-]{0,30}\s+--(?:version|help)\s*(?:$|[;|&#\n])`,
  },
  {
    id: 'cmdi.command_substitution',
    category: 'cmdi',
    paranoia_level: 1,
    in_prose: 'warning',
    description: 'Command substitution of a command: $(…) anywhere, backticks glued to the value, or passed to a call as PHP, Perl and Ruby run them ($(id), 1`whoami`, print(`echo x;id`))',
    targets: T,
    form: 'shell',
    pattern: String.raw`\$\([\s\x60]*(?:${COMMAND_WORD}|(?:/usr)?(?:/local)?/s?bin/)|(?:^|[;|&=:]|[a-z_]\w*\(\s*)\x60\s*(?:${COMMAND_WORD}|(?:/usr)?(?:/local)?/s?bin/)|[a-z0-9_.]\x60(?:${COMMAND_WORD}|(?:/usr)?(?:/local)?/s?bin/)`,
  },
  {
    id: 'cmdi.newline_command',
    category: 'cmdi',
    paranoia_level: 1,
    description: 'A one-token value followed by a line break and a command (127.0.0.1%0acat /etc/passwd)',
    targets: T,
    form: 'shell',
    pattern: String.raw`^\s*[^\s]*\n\s*(?:${COMMAND}|${COMMAND_PROBE})`,
  },
  {
    id: 'cmdi.reverse_shell',
    category: 'cmdi',
    paranoia_level: 1,
    description: 'Reverse-shell and download-to-disk idioms (/dev/tcp/, or $d/tcp/host/port with /dev in a variable, nc -e, bash -i, mkfifo, socat exec:, wget -O /tmp/…, PowerShell download cradles)',
    targets: T,
    form: 'shell',
    pattern:
      String.raw`/dev/(?:tcp|udp)/|\$\{?[a-z_]\w*\}?/(?:tcp|udp)/[\w.-]+/\d{1,5}\b|\bn(?:c|cat)(?:\.exe)?\s[^\n;|&]*-[a-z]*[ec]\s|\b(?:ba|z|k)?sh\s+-i\b|\bmkfifo\s|\bsocat\s[^\n]*\bexec:|\bexec\s+\d+\s*<>|[0-9]\s*<&\s*\d+|>&\s*/dev/|` +
      String.raw`\b(?:python[23]?|perl|ruby|php|lua)\s+-[a-z]*[ecr]\b[^\n]*\b(?:socket|fsockopen|tcpsocket|pty\.spawn|subprocess)|\b(?:wget|curl)\s[^\n;|&]*(?:-o|--output(?:-document)?)\s*/(?:tmp|dev/shm|var/tmp)/|` +
      String.raw`\bpowershell[^\n]*(?:net\.sockets\.tcpclient|net\.webclient|downloadstring|downloadfile|invoke-webrequest|\biwr\b|\biex\b|invoke-expression|-enc(?:odedcommand)?\s)`,
  },
  {
    id: 'cmdi.windows_shell',
    category: 'cmdi',
    paranoia_level: 1,
    description: 'Windows command interpreters and living-off-the-land binaries with their attack options (cmd /c, %comspec%, powershell -enc, certutil -urlcache, bitsadmin /transfer)',
    targets: T,
    form: 'shell',
    pattern: String.raw`\bcmd(?:\.exe)?\s*/[ckr]\b|%comspec%|\bpowershell(?:\.exe)?\s+-(?:c|command|e|enc|encodedcommand|nop|noprofile|w|windowstyle|ep|executionpolicy|exec|noni|noninteractive)\b|\bcertutil(?:\.exe)?\s+-(?:urlcache|decode|encode|split)\b|\bbitsadmin(?:\.exe)?\s+/transfer\b|\bmshta(?:\.exe)?\s+(?:https?:|vbscript:|javascript:)|\brundll32(?:\.exe)?\s+[\w.]+,|\bregsvr32(?:\.exe)?\s+/s\b`,
  },
  {
    id: 'cmdi.brace_expansion',
    category: 'cmdi',
    paranoia_level: 1,
    in_prose: 'notice',
    description: 'Bash brace expansion that spells a command: a list with an empty item ({,ifconfig}, {id,}) or one glued to letters on both sides, or first and glued to one after ({l,-lh}s, c{a,oun}t); lists like {1,2,3} and *.{js,ts} pass',
    targets: T,
    // Items start with a letter: {2,} and {,5} are regular-expression counts.
    pattern: String.raw`\{,[a-z][\w./-]*(?:,[\w./-]*)*\}|\{[a-z][\w./-]*(?:,[\w./-]+)*,\}|(?:^\s*|[a-z])\{[\w./-]*,[\w./,-]*\}[a-z]`,
  },
  {
    id: 'cmdi.glob_command',
    category: 'cmdi',
    paranoia_level: 1,
    description: 'A path written with wildcards after a separator (;/???/c?t /???/p??s??), or opening the value or a word with `?` or bracket wildcards in its first two segments (/???/b??h, cat /[e//]tc/[p//]asswd, /[e]tc/); globs like /**/*.js and /[Ll]ibrary/ pass',
    targets: T,
    form: 'shell',
    pattern: String.raw`${SEPARATOR}/[a-z?*]*[?*][a-z?*]*/|${WILDCARD_ROOT}(?:[a-z]*\?|${BRACKET_GLOB}[a-z])`,
  },
  {
    id: 'cmdi.windows_for_loop',
    category: 'cmdi',
    paranoia_level: 1,
    description: "cmd.exe's FOR loop (for /f %a in ('command') do …): iterates over files, strings or a command's output and runs a command for each",
    targets: ['value', 'header', 'body'],
    pattern: String.raw`\bfor\s+(?:[^%\n]{0,80}\s)?(?:%%?[^\s%]{1,32}|%%)\s+in\s*\([^)\n]*\)\s*do\b`,
  },
  {
    id: 'cmdi.windows_if',
    category: 'cmdi',
    paranoia_level: 1,
    description: "cmd.exe's IF with what only batch files test: EXIST of a file, DEFINED before a command, ERRORLEVEL, CMDEXTVERSION, a %variable% or %1 compared (if \"%1\"==\"\" goto x), or a comparison (==, GEQ, NEQ…) that runs a batch command (if /i a==b cmd, if (2 geq 15) echo x)",
    targets: ['value', 'header', 'body'],
    pattern:
      String.raw`\bif\s+(?:/i\s+)?(?:not\s+)?(?:exist\s+"?(?:[a-z]:\\|%|[^\s"]+\.[a-z0-9]{2,4}\b|\(?[^\s"]+\)?\s+${BATCH_COMMAND})|defined\s+[\w.]+\s+(?:\((?:\b|\s*$)|${BATCH_COMMAND})|errorlevel\s+\d|cmdextversion\s+\d|[^\s]*%(?:~?\d|[a-z_][\w]*%)[^\s]*\s*(?:==|\s(?:equ|neq|lss|leq|gtr|geq)\s))|` +
      String.raw`\bif\s+(?:/i\s+)?(?:not\s+)?\(?\s*(?:"[^"\n]*"|[^\s"(=]+)\s*(?:={2,3}|\s(?:equ|neq|lss|leq|gtr|geq)\s)\s*(?:"[^"\n]*"|[^\s"=)]+)\s*\)?\s+${BATCH_COMMAND}|` +
      // The case-insensitive switch is cmd.exe's alone: with it any comparison is a batch IF.
      String.raw`\bif\s*/i\s+(?:not\s+)?(?:"[^"\n]*"|[^\s"=]+)\s*==`,
  },
  {
    id: 'cmdi.command_line',
    category: 'cmdi',
    paranoia_level: 1,
    description: 'A value that is a command line on its own: a reconnaissance command alone (uname -a, whoami), a command with a shell-looking argument (ls -la /etc/, net user x /add, reg add HKLM\\…, netsh firewall …, perl -e …), or a separator and a probe ending the value (; id, | dir)',
    targets: ['value', 'header', 'user_agent'],
    form: 'shell',
    pattern: String.raw`^\s*(?:${COMMAND_LINE})|[;|&]\s*${COMMAND_PROBE_ALONE}\s*$`,
  },
  {
    id: 'cmdi.deserialization',
    category: 'cmdi',
    paranoia_level: 1,
    description: 'Serialized objects that instantiate classes on load: YAML language tags (!!python/object, !!ruby/object, !!javax.script), PHP object notation (O:8:"stdClass":1:{…}); Java serialization in base64 is java.serialized_base64',
    targets: T,
    pattern: String.raw`!!(?:python/(?:object|name|module)|ruby/(?:object|hash|struct)|javax?\.|com\.sun\.|org\.(?:springframework|apache))|tag:yaml\.org,2002:python/|(?:^|[;{])o:\d{1,4}:"[a-z_\\][\w\\]*":\d{1,4}:\{`,
  },
  {
    id: 'cmdi.vbscript',
    category: 'cmdi',
    paranoia_level: 1,
    description: 'VBScript/ASP run from input: Execute/Eval of a string, statements joined with colons (…:On Error Resume Next:…), CreateObject of a shell',
    targets: T,
    pattern: String.raw`(?:^|[\s:;(])(?:execute(?:global)?|eval)\s*\(\s*"[^"\n]{0,80}(?:server\.|createobject|wscript|request\s*\(|on\s+error\s+resume|response\.write)|:\s*on\s+error\s+resume\s+next\s*:|createobject\s*\(\s*"(?:wscript\.shell|shell\.application|scripting\.filesystemobject)"`,
  },
  {
    id: 'cmdi.code_injection',
    category: 'cmdi',
    paranoia_level: 1,
    description: "Server-side code that runs commands or request input: exec functions given a command after a separator or as the whole value (;system('id'), system(whoami)), another language's process API given a literal command (Process.spawn(\"id\"), subprocess.call(['ls'])), request superglobals passed to exec/include (system($_GET[…])), PHP complex-syntax calls ({${sleep(3)}}, ${@print(…)})",
    targets: T,
    pattern:
      String.raw`(?:^|[;|&'"]\s*)(?:system|exec|shell_exec|passthru|popen|proc_open|pcntl_exec|eval|assert)\s*\(\s*['"\x60]\s*(?:${COMMAND_WORD}|/)|(?:^|[;|&'"]\s*)phpinfo\s*\(\s*\)|` +
      // The command unquoted, the call the whole injection (system(whoami), exec(cat /etc/passwd);).
      String.raw`(?:^|[;|&]\s*)(?:system|exec|shell_exec|passthru|popen|proc_open|pcntl_exec)\s*\(\s*${COMMAND_WORD}[^()\n]{0,60}\)\s*(?:$|[;#]|//)|` +
      // Another language's process API given a literal command (Process.spawn("id"), IO.popen('ls'), subprocess.check_output(['cat', …])).
      String.raw`(?:^|[;|&'"]\s*)(?:os|io|kernel|process|open3|subprocess|commands|pty|child_process)\s*(?:\.|::)\s*(?:system|popen\d?|spawn\w*|exec\w*|capture\w*|pipeline\w*|call|run|check_output|check_call|getoutput|getstatusoutput)\s*\(\s*\[?\s*['"\x60]\s*(?:${COMMAND_WORD}|/)|` +
      String.raw`\b(?:system|exec|shell_exec|passthru|popen|proc_open|eval|assert|include|require|include_once|require_once|file_get_contents|fopen|readfile)\s*\(\s*\$_(?:get|post|request|cookie|server|files)\b|` +
      String.raw`\{\s*\$\{\s*@?[a-z_]+\s*\(|\$\{\s*@[a-z_]+\s*\(`,
  },
  {
    id: 'cmdi.node_code',
    category: 'cmdi',
    paranoia_level: 1,
    in_prose: 'notice',
    description: "Node.js code that reaches the process or a shell: node-serialize's and funcster's function markers (_$$ND_FUNC$$_, __js_function), require('child_process') used, process.binding / process.mainModule / process['env'], require.main's module loader, a React Server Components reference walking to a constructor ($3:constructor:constructor)",
    targets: T,
    pattern:
      String.raw`_\$\$nd_func\$\$_|\b__js_function\b|\brequire\s*\(\s*['"\x60]child_process['"\x60]\s*\)\s*\.\s*(?:exec|execsync|spawn|spawnsync|execfile|fork)\b|\bprocess\s*\.\s*(?:binding\s*\(|mainmodule\b)|\brequire\s*\.\s*main\s*\.\s*constructor\b|\bprocess\s*\[\s*(?:['"\x60](?:mainmodule|binding|env)|mainmodule)\b|` +
      // React Server Components' flight references walking a chunk to a constructor (CVE-2025-55182: '$3:constructor:constructor').
      String.raw`(?:^|['"\s])\$[0-9a-f]{1,4}:(?:[\w$]+:){0,6}(?:constructor|prototype|__proto__)\b`,
  },
  {
    id: 'cmdi.fork_bomb',
    category: 'cmdi',
    paranoia_level: 1,
    in_prose: 'notice',
    description: 'A shell function whose body pipes into itself in the background (:(){ :|:& };:, f(){ f|f& };f): a fork bomb',
    targets: T,
    pattern: String.raw`\(\s*\)\s*\{\s*[^\s{}|&;]+\s*\|\s*[^\s{}|&;]+\s*&\s*;?\s*\}`,
  },
  {
    id: 'cmdi.split_command_name',
    category: 'cmdi',
    paranoia_level: 1,
    description: "A command's name broken by what the shell drops inside a word — quotes, a backslash, $@, cmd.exe's ^ — to slip past filters ('wh'oami, c''at /etc/passwd, w\\get, cu$@rl, p^o^w^e^r^s^h^e^l^l), or kept in a variable and run from it (a=nc&&$a -e sh); contractions such as i'd and it's spell no command",
    targets: T,
    pattern:
      `(?:^|[\\s;|&(\\x60=])${alt(SPLIT_COMMANDS.map(spelledWithJunk))}(?:$|[\\s;|&)\\x60'"])|` +
      // The name kept in a variable, then run from it (a=nc&&$a -nlvp 4444).
      String.raw`(?:^|[\s;|&(])[a-z_]\w*=${COMMAND_WORD}\s*(?:;|&&|\|\||\n)\s*\$\{?[a-z_]\w*\}?(?:\s|$)`,
  },
  {
    id: 'cmdi.alias_definition',
    category: 'cmdi',
    paranoia_level: 1,
    in_prose: 'notice',
    description: "A shell alias defined first in the value or after a separator (alias a=curl&a x.example, alias 'l'=env, alias -p x=id): renames a command to slip it past a filter",
    targets: T,
    pattern: String.raw`(?:^|[;&|\n\x60])\s*alias\s+(?:[-+][a-z+]+\s+)*['"]?[\w.-]+['"]?=['"]?[\w\${}/.-]`,
  },
  {
    id: 'cmdi.endless_loop',
    category: 'cmdi',
    paranoia_level: 1,
    in_prose: 'notice',
    description: "A loop on a constant condition (while(!0), while(true), while(Infinity), while(!![]), while(new Date)): code injected into a server-side eval to hang its event loop",
    targets: T,
    pattern: String.raw`\bwhile\s*\(+\s*(?:!\s*(?:[-+]?0|false|null|undefined|nan|''|""|\x60\x60|\[\]\s*\.\s*length)|!!\s*(?:\{\s*\}|\[\s*\]|''|""|\x60\x60)|true|[-+]?infinity|[-+]?[1-9]\d*|new\s+date|this|string)\s*\)`,
  },
  {
    id: 'cmdi.shell_escape',
    category: 'cmdi',
    paranoia_level: 1,
    description: "A program told to run a shell command for the attacker: an editor's or debugger's ! escape (vim -c ':!id', gdb -ex '!whoami'), a compiler's -wrapper (c99 -wrapper sh,-c,id), a cd into the root's system directories chained to more commands (cd /;cd etc;…)",
    targets: T,
    pattern: String.raw`\b(?:vim?|ex|gdb|less|man|ftp)\s[^\n;|&]*?(?:-ex|-c|\+)[^!\n]{0,16}?['":\\]\s*!\s*[a-z]|-wrapper\s+['"]?(?:ba|da|z|k)?sh\s*,\s*-c\s*,|(?:^|[;&|\n])\s*cd\s+/+\s*(?:;|&&)\s*cd\s+(?:etc|proc|root|var|home|usr|bin|tmp)\b`,
  },
  {
    id: 'cmdi.perl_interpolation',
    category: 'cmdi',
    paranoia_level: 1,
    in_prose: 'notice',
    description: "Perl's expression interpolation (@{[ system 'id' ]}), which runs code wherever input reaches a Perl string or template that is evaluated",
    targets: T,
    // Unclosed, it still runs when a command is called in it (@{[system 'id']…).
    pattern: String.raw`@\{\s*\[[^\]\n]{0,200}\]\s*\}|@\{\s*\[\s*(?:system|exec|qx|readpipe|eval)\b`,
  },
  {
    id: 'cmdi.glob_class_path',
    category: 'cmdi',
    paranoia_level: 1,
    description: 'A path whose name is spelt with one-character glob classes, which the shell expands back to the name (/bi[n]/bash, /[?]tc/pa[?]swd, /usr/bin/[u]name, /[e///]tc)',
    targets: T,
    // Also a class of junk holding a slash (/[e///]tc), which matches nothing and leaves the name.
    pattern: String.raw`/[a-z0-9._-]*(?:[a-z0-9_-]\[(?:[a-z0-9?*]|[a-z0-9]-[a-z0-9])\]|\[(?:[a-z0-9?*]|[a-z0-9]-[a-z0-9])\][a-z0-9_-]|\[[^\]\n]{0,6}/[^\]\n]{0,6}\][a-z0-9_-])`,
  },
  {
    id: 'cmdi.shell_c',
    category: 'cmdi',
    paranoia_level: 1,
    in_prose: 'notice',
    description: 'A shell started to run a command string, first in the value, after a separator or after a wrapper (time sh -c whoami, ${SHELL} -c "…", strace bash -c …)',
    targets: T,
    pattern: String.raw`(?:^|[;|&\n(\x60]|\b${COMMAND_RUNNER})\s*['"]?(?:\$\{?shell\}?|(?:ba|da|k|z|c|tc)?sh|busybox\s+sh)['"]?\s+-c\s+['"]?[a-z$/]`,
  },
  {
    id: 'cmdi.process_substitution',
    category: 'cmdi',
    paranoia_level: 1,
    description: "Bash process substitution of a command (<(cat file), >(tee log)), which runs it and hands its output on as a file, or a here-string fed to a command after a separator (;irb<<<'1+1')",
    targets: T,
    pattern: String.raw`(?:^|[\s;|&=])[<>]\(\s*${COMMAND_WORD}|[;|&]\s*[a-z][\w.+-]{0,20}\s*<<<`,
  },
  {
    id: 'cmdi.terminal_escape',
    category: 'cmdi',
    paranoia_level: 1,
    description: 'A terminal escape sequence right before a command (\\033[2Acurl …, \\x1b[1Kwget …, \\033[2Asleep 5\\n): it moves the cursor or clears the line, so a terminal or log viewer shows something else than what runs',
    targets: T,
    // Any command name after a cursor move or line erase; after a colour (`m`), only a command line, as a word printed in colour may be one.
    pattern: String.raw`(?:\\(?:033|e)|\x1b)\[[\d;]{0,8}(?:[a-z]\s*(?:${COMMAND}|${COMMAND_PROBE})|[a-ln-z]\s*${COMMAND_WORD})`,
  },
  // --- level 2 -------------------------------------------------------------------------------------
  {
    id: 'cmdi.spaced_probe',
    category: 'cmdi',
    paranoia_level: 2,
    signal: { from: 1, severity: 'warning' },
    description: 'A separator, a space and a probe command ending the value (; id, & ver, | pwd)',
    targets: T,
    form: 'shell',
    pattern: String.raw`[;|&]\s+${COMMAND_PROBE}`,
  },
  {
    id: 'cmdi.line_command',
    category: 'cmdi',
    paranoia_level: 2,
    signal: { from: 1, severity: 'warning' },
    description: 'A command at the start of a value or of any line (cat /etc/passwd, a second line "wget …")',
    targets: T,
    form: 'shell',
    pattern: String.raw`(?:^|\n)\s*(?:${COMMAND}|${COMMAND_PROBE})`,
  },
  {
    id: 'cmdi.backtick_command',
    category: 'cmdi',
    paranoia_level: 2,
    signal: { from: 1, severity: 'warning' },
    description: 'Backticks around a command anywhere (`ls -la`)',
    targets: T,
    form: 'shell',
    pattern: String.raw`\x60\s*${COMMAND_WORD}[^\x60\n]*\x60`,
  },
  {
    id: 'cmdi.pipe_to_shell',
    category: 'cmdi',
    paranoia_level: 2,
    description: 'A download piped into a shell (curl … | sh) and echo with anything after a separator',
    targets: T,
    form: 'shell',
    pattern: String.raw`\b(?:curl|wget)\s[^\n]*\|\s*(?:sudo\s+)?(?:ba|z|k|da)?sh\b|[;|&]\s*echo\s`,
  },
  {
    id: 'cmdi.code_execution_call',
    category: 'cmdi',
    paranoia_level: 2,
    signal: { from: 1, severity: 'warning' },
    description: "Code that runs commands anywhere (system('…'), shell_exec(, os.system(, Runtime.getRuntime().exec, <?php, /bin/sh, /usr/bin/id)",
    targets: T,
    pattern: String.raw`\b(?:shell_exec|passthru|proc_open|popen|pcntl_exec|phpinfo)\s*\(|\b(?:system|exec|eval)\s*\(\s*['"\x60$]|<\?php\b|\{\s*\$_(?:get|post|request|cookie)\b|(?:/usr)?(?:/local)?/s?bin/${COMMAND_WORD}|\bos\s*\.\s*(?:system|popen|exec[lv]p?e?)\s*\(|__import__\s*\(\s*['"]os|\bsubprocess\s*\.\s*(?:call|run|popen|check_output)\s*\(|\bruntime\s*\.\s*getruntime\s*\(\s*\)\s*\.\s*exec\b|\bchild_process\b`,
  },
  {
    id: 'cmdi.lookup_expression',
    category: 'cmdi',
    paranoia_level: 2,
    description: 'Log4j lookups that read the environment or system properties (${env:…}, ${sys:…}, ${java:…})',
    targets: T,
    pattern: String.raw`\$\{\s*(?:env|sys|java|main|bundle|k8s|docker|ctx|base64|web|spring|date|jvmrunargs|log4j|event|marker|sd)\s*:`,
  },
  // --- level 3 -------------------------------------------------------------------------------------
  {
    id: 'cmdi.separator_option',
    category: 'cmdi',
    paranoia_level: 3,
    description: 'A separator followed by any word and an option (; foo -x), or $( / backtick followed by any word',
    targets: T,
    form: 'shell',
    pattern: String.raw`[;|&]\s*[a-z][\w.-]*\s+-{1,2}[a-z]|\$\(\s*[a-z]|\x60\s*[a-z][\w.-]*\s*\x60`,
  },
  // --- level 4 -------------------------------------------------------------------------------------
  {
    id: 'cmdi.metacharacter',
    category: 'cmdi',
    paranoia_level: 4,
    description: 'Any command substitution or a separator glued to a word',
    targets: T,
    form: 'shell',
    pattern: String.raw`\$\(|\x60|[;|&][a-z]`,
  },
];
