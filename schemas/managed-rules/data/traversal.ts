// Path traversal and local file inclusion. Level 1: `..` followed by a separator (in any encoding
// the canonical text resolves), files that only an attacker asks for by absolute path (/etc/passwd,
// /proc/self/environ, win.ini, SAM), PHP and Java stream wrappers, XML external entities, and — in
// the request path — dot-directories of version control and secrets. `../` never appears in the
// benign traffic this engine is tuned on; a relative path with `../` is treated as an attack.
import type { RuleDefinition } from '../types.ts';
import { COMPONENT_START, SEP, alt } from './fragments.ts';

// The User-Agent too: browsers and bots name themselves there, and a file path or a parent step in it is
// an inclusion tried through a header the application logs or reads.
const T = ['value', 'name', 'path', 'header', 'user_agent', 'body'] as const;

const ETC_FILES = alt([
  'passwd', 'shadow', 'group', 'gshadow', 'hosts', 'hostname', 'issue', 'sudoers', 'crontab', 'fstab', 'motd', 'os-release',
  'lsb-release', String.raw`resolv\.conf`, String.raw`master\.passwd`, `security${SEP}`, `ssh${SEP}`, `ssl${SEP}private`, 'shells',
  String.raw`environment\b`, 'aliases', 'inittab', 'mtab', 'exports', String.raw`ld\.so\.preload`, `httpd${SEP}`, `apache2?${SEP}`,
  `nginx${SEP}`, String.raw`my\.cnf`, `mysql${SEP}`, String.raw`php[\d.]*${SEP}`, `pam\\.d${SEP}`, `init\\.d${SEP}`, String.raw`rc\.local`,
  `sysconfig${SEP}`, `network${SEP}interfaces`, `kubernetes${SEP}`, String.raw`shadow-`, String.raw`passwd-`, String.raw`pwd\.db`, String.raw`spwd\.db`,
]);

const PROC_ENTRIES = alt([
  `(?:self|thread-self|curproc|\\d+)${SEP}(?:environ|cmdline|maps|smaps|mem|fd|status|stat|cwd|exe|root|mounts|mountinfo|net|attr|auxv|limits|sched|loginuid|task)`,
  'version', 'cpuinfo', 'meminfo', 'mounts', 'partitions', `net${SEP}(?:tcp|udp|arp|route|fib_trie|unix)`, 'sched_debug', 'kallsyms',
  String.raw`config\.gz`, 'cmdline', 'modules', 'filesystems', 'iomem', 'kcore',
]);

const WINDOWS_FILES = alt([
  String.raw`(?:win|system|boot)\.ini\b`,
  `(?:system32|syswow64)${SEP}(?:config${SEP}(?:sam|system|security|software|regback)|drivers${SEP}etc${SEP}(?:hosts|networks|lmhosts)|inetsrv${SEP}config|license\\.rtf|eula\\.txt)`,
  `(?:windows|winnt|%systemroot%|%windir%)${SEP}(?:repair${SEP}|panther${SEP}|debug${SEP}netsetup|(?:php|my|system|win)\\.ini)`,
  `inetpub${SEP}(?:wwwroot|logs|temp)${SEP}`,
  String.raw`applicationhost\.config`,
]);

/**
 * The root of a Windows absolute path: a drive (`C:\`, `/C:/` as some URLs write it), a leading
 * backslash, or a slash-rooted path that goes on with backslashes (`/apache\php\php.ini`; its first
 * segment is then taken as part of the root).
 */
const WINDOWS_ROOT = String.raw`(?:/?[a-z]:[\\/]+|\\+|/[^\n/\\]*\\)`;

/** Top-level Unix directories holding system and server software (not an application's own tree). */
const UNIX_TOP = String.raw`(?:var|usr|opt|srv|home|private|applications|library|volumes|etc|apache\d*|xampp|lampp|nginx|www)`;

/** A value that is only a path (directories optional) to one of the dotfiles `names` spells. */
const dotfileValue = (names: string): string => String.raw`^[\s./\\]*(?:[\w.-]+[/\\])*\.(?:${names})\s*$`;

/** A separator as fuzzers mangle it: `0x2f`, a percent escape left undecoded, any punctuation. */
const JUNK = String.raw`(?:0x2f|0x5c|%u[0-9a-f]{4}|%[0-9a-z]{1,2}|[^a-z0-9\s])`;

export const TRAVERSAL_RULES: readonly RuleDefinition[] = [
  {
    id: 'traversal.dot_dot_slash',
    category: 'traversal',
    paranoia_level: 1,
    in_prose: 'warning',
    description: 'A parent-directory step: ../ or ..\\ (also ..;/, ....//, ..././ and a trailing /..), in any encoding',
    targets: T,
    pattern: String.raw`(?:^|[^.])\.\.(?:;[^/\\\n]*)?[/\\]|\.{4,}[/\\]|\.\.\.[/\\]\.[/\\]|[/\\]\.\.(?:;[^/\\\n]*)?$`,
  },
  {
    id: 'traversal.unix_system_file',
    category: 'traversal',
    paranoia_level: 1,
    description: 'Unix system files read by inclusion attacks (/etc/passwd, /etc/shadow, /proc/self/environ, shell histories, /root/…)',
    targets: T,
    pattern:
      String.raw`${COMPONENT_START}etc${SEP}${ETC_FILES}|${COMPONENT_START}proc${SEP}${PROC_ENTRIES}|\.(?:bash|zsh|sh|mysql|psql|sqlite|node_repl|python|lesshst|rediscli)_history\b|` +
      String.raw`(?:^|[/\\])root${SEP}\.[a-z]|secrets${SEP}kubernetes\.io${SEP}serviceaccount|${COMPONENT_START}dev${SEP}(?:mem|kmem|port|fd${SEP}\d)\b`,
  },
  {
    id: 'traversal.windows_system_file',
    category: 'traversal',
    paranoia_level: 1,
    description: 'Windows system files read by inclusion attacks (win.ini, boot.ini, SAM and SYSTEM hives, drivers\\etc\\hosts, IIS configuration)',
    targets: T,
    pattern: `${COMPONENT_START}${WINDOWS_FILES}`,
  },
  {
    id: 'traversal.application_secret',
    category: 'traversal',
    paranoia_level: 1,
    description: 'Application secrets and repository metadata by name (wp-config.php and copies of it such as wp-config-php.bak, .htpasswd, tomcat-users.xml, .git/config, .svn/entries)',
    targets: T,
    pattern: String.raw`\bwp-config[.-]php\b|\.htpasswd\b|\btomcat-users\.xml\b|\.git${SEP}(?:config|head|index|logs|refs|objects|packed-refs)\b|\.svn${SEP}(?:entries|wc\.db)\b|\.git-credentials\b`,
  },
  {
    id: 'traversal.mangled_separator',
    category: 'traversal',
    paranoia_level: 1,
    description: 'Parent-directory steps written with separators some decoder turns into a slash (..0x2f, ..%c0%af, ..%bg%qf, ..%uEFC8) leading to a system directory',
    targets: T,
    pattern: String.raw`\.\.${JUNK}{1,9}?(?:etc${JUNK}{1,9}(?:passwd|shadow|issue|hosts|group|motd)\b|win(?:dows|nt)${JUNK}{1,9}(?:system32|win\.ini|system\.ini|repair)\b|boot\.ini\b|inetpub${JUNK}{1,9}wwwroot)`,
  },
  {
    id: 'traversal.junk_prefixed_file',
    category: 'traversal',
    paranoia_level: 1,
    description: 'A system file reached through a run of encoded or junk characters (fuzzers\' ..%c0%9v, 0x2e0x2e%c1%af, ??%%35%%63 permutations): etc/passwd, boot.ini, win.ini, system32/drivers',
    targets: T,
    pattern: String.raw`(?:%|0x|\?)[^\s]{0,200}?(?:etc(?:0x2f|0x5c|%[0-9a-z]{1,2}|[^a-z0-9\s]){1,9}(?:passwd|shadow|issue|group|hosts)\b|boot\.ini\b|win\.ini\b|system32(?:0x2f|0x5c|%[0-9a-z]{1,2}|[^a-z0-9\s]){1,9}drivers\b)`,
  },
  {
    id: 'traversal.sensitive_file_value',
    category: 'traversal',
    paranoia_level: 2,
    signal: { from: 1, severity: 'warning' },
    description: 'A value that is only a path to a dotfile that configures or unlocks a site (.htaccess, .htpasswd, .env, .git/config, .npmrc), with or without directories: file managers list them; credential files are traversal.credential_file_value',
    targets: ['value', 'header'],
    pattern: dotfileValue(String.raw`htaccess|htpasswd|env(?:\.[a-z]+)?|git[/\\](?:config|head)|npmrc`),
  },
  {
    id: 'traversal.credential_file_value',
    category: 'traversal',
    paranoia_level: 1,
    description: 'A value that is only a path to a file holding credentials (.ssh/id_rsa, .aws/credentials, .docker/config.json, .kube/config, .git-credentials, .netrc, .pgpass, .bash_history, .Xauthority): what file-inclusion lists try; .env and .htaccess, which file managers list, are level 2 (traversal.sensitive_file_value)',
    targets: ['value', 'header'],
    pattern: dotfileValue(String.raw`ssh[/\\](?:id_[a-z0-9]+|authorized_keys\d?|known_hosts)|aws[/\\](?:credentials|config)|docker[/\\](?:config\.json|secrets)|kube[/\\]config|git-credentials|netrc|pgpass|bash_history|xauthority`),
  },
  {
    id: 'traversal.unc_path',
    category: 'traversal',
    paranoia_level: 1,
    description: 'A Windows UNC path to an administrative share or a device (\\\\host\\c$\\, \\\\?\\c:\\, \\\\.\\pipe\\)',
    targets: T,
    pattern: String.raw`^[\s/]*(?:\\\\|//)[^\\/\s]+[\\/][a-z0-9_-]{1,15}\$(?:[\\/]|$)|^[\s/]*\\\\[?.]\\(?:[a-z]:|pipe\\|unc\\|globalroot)`,
  },
  {
    id: 'traversal.stream_wrapper',
    category: 'traversal',
    paranoia_level: 1,
    description: "PHP and Java stream wrappers that read local files or run code (php://filter, phar://, zip://, expect://, data://, jar:, netdoc:), Java's url: prefix before file:, Python's local_file://",
    targets: T,
    pattern: String.raw`\b(?:php|phar|zip|expect|glob|zlib|compress\.zlib|compress\.bzip2|rar|ogg|ssh2\.(?:shell|exec|tunnel|sftp|scp)|data)://|\bjar:(?:file|https?|ftp):|\bnetdoc:/|\burl:\s*file:|\blocal_file:/`,
  },
  {
    id: 'traversal.xml_external_entity',
    category: 'traversal',
    paranoia_level: 1,
    description: 'An XML external entity declaration (<!ENTITY x SYSTEM "file:…">), which makes the parser read files or URLs',
    targets: ['value', 'body'],
    pattern: String.raw`<!\s*entity\s+(?:%\s*)?[\w.:-]+\s+(?:system|public)\b`,
  },
  {
    id: 'traversal.hidden_path',
    category: 'traversal',
    paranoia_level: 1,
    in_prose: 'warning',
    description: "A request path into version-control, credential or environment files (/.git/, /.svn/, /.env, /.aws/, /.ssh/, /.htaccess), AI coding assistants' and automation tools' settings, which hold API keys (/.claude/, /.cursor/mcp.json, /.codex/), or WordPress's debug log",
    targets: ['path'],
    pattern:
      String.raw`/\.(?:git|svn|hg|bzr|aws|ssh|docker|kube|gnupg)(?:/|$)|/\.(?:env|htpasswd|htaccess|npmrc|netrc|pgpass|git-credentials|bash_history|pypirc|dockercfg)(?:[./~]|$)|` +
      String.raw`/\.(?:claude|cursor|continue|aider|codex|gemini|windsurf|cline|roo|kiro|junie|opencode|plandex|n8n|a0proj|rovodev|fabric)/|/wp-content/(?:debug|errors?)\.log$`,
  },
  {
    id: 'traversal.system_path_value',
    category: 'traversal',
    paranoia_level: 1,
    description: 'A value that is nothing but an absolute path into OS configuration, process, log or device directories (/etc/…, /proc/…, /var/log/…, /var/cron/…, /usr/lib/…, /usr/spool/…, /root/…) or to the access or error log of a web server (/logs/access.log, C:\\wamp\\logs\\access.log), or into the system directory of Windows (c:windows/system32/); web roots (/var/www/) and home directories are what file managers show',
    targets: ['value', 'name', 'user_agent', 'body'],
    pattern:
      String.raw`^\s*(?:file:/*)?/+(?:etc|proc|sys|root|dev|boot|var/+(?:log|run|lib|adm|spool|mail|db|cron|lock|saf|cpanel|backups|apache\d*|nginx)|usr/+(?:lib|libexec|spool|ports|pkgsrc)|usr/+local/+(?:etc|apache\d*|nginx|php\d*|lib|cpanel|mysql|pure-?ftpd))(?:/[^\s]*)?$|` +
      // A web server's request or error log at the root or where the server was installed (/logs/access.log, /usr/local/apache/logs/error_log):
      // log poisoning's target. An application's own logs (/app/logs/error.log) pass.
      String.raw`^\s*(?:file:/*)?(?:[a-z]:)?[/\\]+(?:(?:[\w.-]+[/\\]+){0,3}(?:apache\d*|httpd|nginx|lighttpd|lampp|xampp|wamp)[/\\]+(?:[\w.-]+[/\\]+)?)?logs?[/\\]+(?:access|error)[._\s]{0,2}log\s*$|` +
      // Windows' system directory, also drive-relative (c:windows/system32/).
      String.raw`^\s*[/\\]*[a-z]:[/\\]*(?:windows|winnt)[/\\]+(?:system32|syswow64)(?:[/\\][^\s]*)?$`,
  },
  {
    id: 'traversal.server_file_value',
    category: 'traversal',
    paranoia_level: 1,
    description:
      "A value that is nothing but an absolute path to the OS's, a web server's or a database's configuration, logs or installation (C:\\xampp\\apache\\conf\\httpd.conf, C:\\Windows\\…, C:/logs/access_log, …\\ntuser.dat, /var/www/logs/error_log, /usr/local/apache2/conf/httpd.conf, /logs/pure-ftpd.log, PHP's /tmp/sess_<id>): what file-inclusion lists try; a user's own documents are not",
    targets: ['value', 'name', 'user_agent', 'body'],
    pattern:
      // Windows: a drive path into the system, server software or installer answers, or to a log or configuration file.
      String.raw`^\s*${WINDOWS_ROOT}(?:windows|winnt|boot\.ini|inetpub|xampp|wamp\d*|appserv|apache[\w. -]*|php\d*|mysql|mariadb|nginx|tomcat[\w.-]*|filezilla[\w ]*|mercury\w*|sysprep|unattend|programdata[\\/]|` +
      String.raw`program\s*files(?:\s*\(x86\))?[\\/]+(?:apache|mysql|mariadb|php|nginx|tomcat|filezilla|mercury|microsoft\s+sql\s+server|xampp)|system\s+volume\s+information|\$recycle\.bin)|` +
      String.raw`^\s*${WINDOWS_ROOT}[^\n]*(?:\.(?:log|ini|conf|cnf|evt|evtx|inf|sav|reg)|[\\/](?:access|error)_log|ntuser\.dat|metabase\.xml|osdlogs[\\/]variables\.dat)\s*$|` +
      // Unix: from a system top-level directory, a path into a conf/ or logs/ directory, or to a
      // server's log or configuration file by name (an application's own /app/logs/ is not one).
      String.raw`^\s*/+${UNIX_TOP}/+(?:[\w.-]+/+)*(?:conf|logs?)/+[\w.-]+\s*$|` +
      String.raw`^\s*/+${UNIX_TOP}/+(?:[\w.-]+/+)*(?:(?:access|error|ssl_access|ssl_error|php_errors?|mysqld?|mysql-slow|xferlog|auth|syslog|messages)[._-]?log(?:\.\d+)?|(?:httpd|apache2?|nginx|lighttpd|php-fpm|my|php|vsftpd|proftpd|pure-ftpd)\.(?:conf|cnf|ini))\s*$|` +
      // An FTP daemon's log anywhere (log poisoning through the FTP user name), and PHP's session files
      // (sess_<id> in a tmp, sessions or php directory), which an inclusion reads to run code stored in a session.
      String.raw`^\s*(?:[a-z]:)?[/\\]+(?:[\w.-]+[/\\]+)*(?:vsftpd|proftpd|pure-?ftpd|xferlog)(?:\.log)?\s*$|^\s*/+(?:[\w.-]+/+)*(?:tmp|sessions?|php\d*)/+sess_[\w<>%{}$-]+\s*$`,
  },
  {
    id: 'traversal.mangled_dot_dot',
    category: 'traversal',
    paranoia_level: 1,
    description:
      'Parent-directory steps as decoders mangle them: hex without its % (..2f..2f, ..0x2f, 0x2e0x2e0x2f, a dot and 0x2e mixed — 0x5c0x2e./ —, ..2fetc2fpasswd, ..2fapache2flogs), an invalid byte, an undecoded escape or a private-use character between the dots and the separator (..%c0%2f, ..%c0/, ..%uEFC8)',
    targets: ['value', 'name', 'header', 'body'],
    pattern: String.raw`(?:0x2e\.|\.0x2e)(?:%00)?(?:0x2f|0x5c|[/\\])|(?:\.\.(?:0x|%|\\x)?(?:2f|5c)){2}|\.\.(?:2f|5c)(?:etc|var|usr|windows|winnt|boot|proc)(?:2f|5c|\b)|\.\.(?:2f|5c)[a-z][a-z0-9_-]{0,31}(?:2f|5c)[a-z]|\.\.0x(?:2f|5c)|(?:0x2e){2}(?:0x2f|0x5c|[/\\])|\.\.(?:[\x{fffd}\x{e000}-\x{f8ff}]|%[0-9a-f]{2}|%u[0-9a-f]{4}){1,3}(?:[/\\]|\.\.|$)`,
  },
  {
    id: 'traversal.dot_run_segment',
    category: 'traversal',
    paranoia_level: 1,
    description: 'A path segment of three or more dots (/.../, \\...\\), which some servers and archive tools read as two levels up',
    targets: ['value', 'name', 'body'],
    pattern: String.raw`(?:^|[/\\])\.{3,}[/\\]`,
  },
  {
    id: 'traversal.dot_segment_run',
    category: 'traversal',
    paranoia_level: 1,
    description: 'A value made only of current-directory segments with both kinds of slash (/./\\/./, /.\\/\\.\\), the padding fuzzers put before a path to find which separator a server normalises',
    targets: ['value', 'name'],
    pattern: String.raw`^\s*[/\\]*(?:\.[/\\]+)*(?:/\.?\\|\\\.?/)[./\\]*(?:\.[/\\]|[/\\]\.)[./\\]*\s*$`,
  },
  {
    id: 'traversal.shell_dotfile_value',
    category: 'traversal',
    paranoia_level: 1,
    description: "A value that is only a path to a shell's or SSH's own files (/.bashrc, ../.bash_profile, home/x/.profile, /root/.ssh/authorized_keys), what file-inclusion lists try",
    targets: ['value', 'header'],
    // A path, not the bare name (`.bashrc` searched for in a documentation site), and not `~/…`,
    // which people write when they talk about their own shell.
    pattern: String.raw`^\s*(?:\.{0,2}[/\\]|[\w.-]+[/\\])(?:[\w.-]+[/\\])*\.(?:bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zprofile|cshrc|tcshrc|kshrc|login|logout|viminfo|lesshst|mysql_history|psql_history|rhosts|shosts|ssh[/\\][\w.-]+)\s*$`,
  },
  // --- level 2 -------------------------------------------------------------------------------------
  {
    id: 'traversal.sensitive_file_name',
    category: 'traversal',
    paranoia_level: 2,
    signal: { from: 1, severity: 'warning' },
    description: 'Configuration and credential files developers also mention (.ssh/id_rsa, .aws/credentials, web.config, WEB-INF/web.xml, .env, /var/log/…)',
    targets: T,
    pattern:
      String.raw`\.ssh${SEP}(?:id_[a-z0-9]+|authorized_keys\d?|known_hosts|config)\b|\.aws${SEP}(?:credentials|config)\b|\.docker${SEP}config\.json|\.kube${SEP}config\b|\.(?:npmrc|netrc|pgpass|pypirc|my\.cnf)\b|` +
      String.raw`\bweb\.config\b|\bweb-inf${SEP}|\bmeta-inf${SEP}|(?:^|[/\\])\.env(?:\.[a-z]+)?\b|\.htaccess\b|${COMPONENT_START}var${SEP}log${SEP}|\bhttpd\.conf\b|\bphp\.ini\b|\blocalsettings\.php\b|\bconfiguration\.php\b|` +
      String.raw`\bid_(?:rsa|dsa|ecdsa|ed25519)\b|(?:^|[/\\])\.(?:bashrc|profile|zshrc|bash_profile|cshrc|tcshrc|login|logout|forward|rhosts|shosts|k5login)\b`,
  },
  {
    id: 'traversal.absolute_path',
    category: 'traversal',
    paranoia_level: 2,
    signal: { from: 1, severity: 'warning' },
    description: 'A value that is an absolute path into system directories, a UNC share or a Windows system directory',
    targets: ['value', 'name', 'body'],
    pattern: String.raw`^\s*(?:file:/*)?/(?:etc|proc|sys|dev|root|boot|var|usr|bin|sbin|lib|opt|tmp|home)/|^\s*\\\\[\w.$-]+\\|[a-z]:${SEP}(?:windows|winnt|program\s*files|users|inetpub)\b`,
  },
  {
    id: 'traversal.file_url',
    category: 'traversal',
    paranoia_level: 2,
    description: 'A file: URL',
    targets: T,
    pattern: String.raw`\bfile:(?:/|\\)`,
  },
  {
    id: 'traversal.hidden_path_other',
    category: 'traversal',
    paranoia_level: 2,
    description: 'A request path into editor, IDE and OS metadata (/.DS_Store, /.idea/, /.vscode/) or a backup copy (.bak, .old, .swp, ~)',
    targets: ['path'],
    pattern: String.raw`/\.(?:ds_store|idea|vscode|svnignore|project|settings)(?:/|$)|\.(?:bak|old|orig|save|swp|swo|tmp|dist)$|~$`,
  },
  // --- level 3 -------------------------------------------------------------------------------------
  {
    id: 'traversal.path_value',
    category: 'traversal',
    paranoia_level: 3,
    description: 'A value that looks like any absolute path, or a Windows drive path',
    targets: ['value', 'name', 'body'],
    pattern: String.raw`^\s*/[\w.-]+/[\w.-]+|^\s*[a-z]:[\\/]`,
  },
  // --- level 4 -------------------------------------------------------------------------------------
  {
    id: 'traversal.dot_dot',
    category: 'traversal',
    paranoia_level: 4,
    description: 'Two dots next to a separator or at either end of a value',
    targets: T,
    pattern: String.raw`\.\.[/\\]|[/\\]\.\.|^\.\.|\.\.$`,
  },
];
