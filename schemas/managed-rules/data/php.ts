// PHP code injection: input that reaches eval/include/assert or a PHP file the attacker wrote. The
// payloads carry PHP's own syntax — an opening tag, the request superglobals, variable variables
// (`${'a'}`, `$$b`), variable functions (`$f(1)`, `('sys'.'tem')('id')`), calls to the functions
// that decode, run or write code — or they rewrite PHP's configuration (`allow_url_include=1`,
// `auto_prepend_file=…`) or upload a script. Most of that syntax never appears in a form field;
// PHP written on a developer site comes in prose, which levels 1–2 only count as a signal.
import type { RuleDefinition } from '../types.ts';
import { ALL_INPUT, alt, scriptUploadName, spelledWith } from './fragments.ts';

const T = ALL_INPUT;

/** Functions that decode, run, load or write code, named with a call: rare enough to be decisive. */
const CODE_FUNCTION = alt([
  'base64_decode', 'bzdecompress', 'gzinflate', 'gzuncompress', 'gzdecode', 'str_rot13', 'convert_uudecode', 'hex2bin', 'create_function',
  'call_user_func(?:_array)?', 'forward_static_call(?:_array)?', 'register_(?:shutdown|tick)_function', 'array_map', 'array_filter', 'array_walk',
  'usort', 'uasort', 'preg_replace(?:_callback)?', 'mb_ereg_replace', 'shell_exec', 'passthru', 'proc_open', 'popen', 'pcntl_exec',
  'phpinfo', 'php_uname', 'file_put_contents', 'file_get_contents', 'fputs', 'fwrite', 'move_uploaded_file', 'highlight_file', 'show_source',
  'ini_set', 'ini_get_all', 'ini_restore', 'putenv', 'getenv', String.raw`posix_\w+`, 'unserialize', 'var_dump', 'print_r', 'var_export',
  'include_once', 'require_once', 'get_defined_vars', 'get_defined_functions', 'get_defined_constants', 'get_current_user', 'getcwd',
  'scandir', 'glob', 'readfile', 'fopen', 'fsockopen', 'pfsockopen', 'stream_socket_client', 'curl_exec', 'symlink', 'chmod', 'chown', 'unlink',
  'rmdir', 'apache_setenv', 'mb_send_mail', 'imap_open', 'error_log', 'parse_str', 'func_get_args',
  // Probes of the PHP build an injection runs first.
  'phpversion', 'phpcredits', 'php_ini_loaded_file', 'get_loaded_extensions', 'zend_version',
]);
/**
 * Calls named by words prose also uses (eval, system, chr…): decisive only when given a PHP
 * argument — a string, a variable, a number or nothing — so "solar system (NASA)" passes. Not
 * include/require: JavaScript's require('x') is everywhere on developer sites.
 */
const WORD_FUNCTION = alt(['eval', 'assert', 'system', 'exec', 'chr']);

/** Functions that run a command or code: called through any wrapper, they are the payload. */
const COMMAND_FUNCTIONS = ['system', 'exec', 'passthru', 'shell_exec', 'popen', 'proc_open', 'pcntl_exec', 'assert', 'eval'];
const COMMAND_FUNCTION = alt(COMMAND_FUNCTIONS);
/** A command function's name built from quoted pieces joined by PHP's `.` ('sys'.'tem', "ev"."al"): no other text is spelt so. */
const CONCATENATED_COMMAND_FUNCTION = alt(COMMAND_FUNCTIONS.map((name) => spelledWith(name, String.raw`['"]\s*\.\s*['"]`)));

/** php.ini directives that, set from input (a CGI argument, .user.ini), open the server up; named only by PHP. */
const INI_DIRECTIVE = alt([
  String.raw`allow_url_(?:include|fopen)`, String.raw`auto_(?:prepend|append)_file`, 'disable_functions', 'disable_classes', 'open_basedir',
  String.raw`safe_mode\w*`, 'zend_extension', String.raw`opcache\.[\w.]+`, String.raw`session\.(?:save_path|serialize_handler|upload_progress\.\w+|use_trans_sid)`,
  'include_path', 'sendmail_path', 'register_globals', 'magic_quotes_gpc', String.raw`suhosin\.[\w.]+`, String.raw`cgi\.force_redirect`,
  String.raw`user_ini\.filename`, String.raw`pcre\.(?:backtrack|recursion)_limit`, String.raw`phar\.readonly`, 'upload_tmp_dir', String.raw`mail\.log`,
  String.raw`mbstring\.[\w.]+`, 'unserialize_max_depth', 'extension_dir', 'memory_limit', 'max_execution_time',
]);
/** Directives named by common words: only as the whole value's start, as `php -d engine=0` takes them. */
const INI_WORD = alt(['engine', 'extension', 'display_errors', 'log_errors', 'html_errors', 'error_log', 'file_uploads', 'expose_php', 'doc_root', 'user_dir']);

export const PHP_RULES: readonly RuleDefinition[] = [
  {
    id: 'php.open_tag',
    category: 'php',
    paranoia_level: 1,
    in_prose: 'warning',
    description: 'A PHP opening tag followed by code that runs commands, evaluates, writes files or reads the request (<?php system(…), <? exec(…), <?= `id` ?>)',
    targets: T,
    pattern: String.raw`<\?(?:php\b|=|\s)[^\n]{0,200}?(?:\b(?:eval|assert|system|exec|passthru|shell_exec|popen|proc_open|pcntl_exec|base64_decode|gzinflate|str_rot13|file_put_contents|fwrite|fputs|include|require|include_once|require_once|create_function|call_user_func)\s*\(|\$_(?:get|post|request|cookie|server|files)\b|\x60)`,
  },
  {
    id: 'php.open_tag_probe',
    category: 'php',
    paranoia_level: 1,
    in_prose: 'warning',
    description: 'A PHP opening tag that echoes or prints a literal (<?php echo "test", <?= 1 ?>, <? print(123*456), "><?php echo md5(…)): how scanners test whether input reaches PHP; a template line that echoes a variable (<?php echo htmlspecialchars($name); ?>) and a tag in a sentence pass',
    targets: T,
    pattern: String.raw`(?:^|[^\w\s,.!?])\s*(?:<\?=\s*\(?\s*["'\d]|<\?(?:\s*php\b)?\s*(?:echo|print)\b\s*\(?\s*(?:["'\d]|md5\s*\(|sha1\s*\())`,
  },
  {
    id: 'php.any_open_tag',
    category: 'php',
    paranoia_level: 2,
    signal: { from: 1, severity: 'warning' },
    description: 'Any PHP opening tag or BBCode php block (<?php, <?=, [php]…[/php]): code snippets on developer sites carry them',
    targets: T,
    pattern: String.raw`<\?(?:php\b|=|\s+[a-z_$@(])|\[/?php\]`,
  },
  {
    id: 'php.superglobal',
    category: 'php',
    paranoia_level: 1,
    in_prose: 'warning',
    description: "PHP's request and environment superglobals ($_GET, $_POST, $_SERVER['…'], $GLOBALS, $HTTP_…_VARS)",
    targets: T,
    pattern: String.raw`\$_(?:get|post|cookie|request|server|files|env|session)\b|\$globals\b|\$http_(?:get|post|cookie|server|env|session|post_files)_vars\b`,
  },
  {
    id: 'php.variable_variable',
    category: 'php',
    paranoia_level: 1,
    description: "Variable variables and complex syntax (${'name'}, $ {$a}, ${@a}, ${_.__}(…), $$b(…), $$x = …); a password like P@$$w0rd passes",
    targets: T,
    pattern: String.raw`\$\s*\{\s*(?:'[^'\n]*'|"[^"\n]*"|\$|@|_[\w.]*\s*\}\s*\()|(?:^|[^\w$@])\$\$+[a-z_]\w*\s*(?:\(|\[|->|=|;)`,
  },
  {
    id: 'php.variable_function',
    category: 'php',
    paranoia_level: 1,
    in_prose: 'warning',
    description: "A variable, a string or a PHP expression called as a function ($a(1), $_GET['f']($x), $__[$_[1]](7), $O0{0}(1), (system)('id'), ('system')('id'), ($f)('id'), (system)(ls), \"system\"(ls), return\"system\"(ls).\"\", [system][0](ls), ('sy'.'stem')('id'), (string)\"system\"('id')), or a command function's name spelt in pieces anywhere ('sys' .'tem')",
    targets: T,
    pattern:
      String.raw`\$+[a-z_]\w*\s*(?:(?:\[[^\]\n]{0,40}\]+|\{[^}\n]{1,40}\})\s*)*\(|\(\s*\$?[a-z_]\w*\s*\)\s*\(\s*['"$]|['"][a-z_]\w*['"]\s*\(\s*['"$]|` +
      // PHP 7's uniform syntax calls a command function however it is wrapped: (system)(ls), [system][0](ls), (['system'])[0]('id').
      String.raw`\(\s*['"]?${COMMAND_FUNCTION}['"]?\s*\)\s*\(|['"]${COMMAND_FUNCTION}['"]\([^()\n]*\)\s*(?:[;.]|$)|\[\s*['"]?${COMMAND_FUNCTION}['"]?\s*\](?:\s*\))?\s*(?:\[\s*\d+\s*\]|\{\s*\d+\s*\})[\s)}]*(?:\{\s*\d+\s*\}\s*)?\(|` +
      // A parenthesised callee built with PHP's `.` concatenation (JavaScript's curried require('a')('b') has none).
      String.raw`\((?:[^()\n]|\([^()\n]*\)){0,60}(?:['")]\s*\.\s*['"(a-z_]|[a-z_]\s*\.\s*['"(])(?:[^()\n]|\([^()\n]*\)){0,60}\)\s*\(\s*['"$]|` +
      // The name spelt in pieces, however it is then called (define('z', [['sys'.'tem']]); (z)[0][0]('id')).
      String.raw`['"]${CONCATENATED_COMMAND_FUNCTION}['"]`,
  },
  {
    id: 'php.code_function',
    category: 'php',
    paranoia_level: 1,
    in_prose: 'warning',
    description: 'Calls to PHP functions that decode, run, load or write code (base64_decode(, gzinflate(, call_user_func(, file_put_contents(, eval($x), chr(123))',
    targets: T,
    pattern: String.raw`(?:^|[^\w$>.])${CODE_FUNCTION}\s*\(|(?:^|[^\w$>.])${WORD_FUNCTION}\s*\(\s*(?:['"$]|\d|\))`,
  },
  {
    id: 'php.ini_directive',
    category: 'php',
    paranoia_level: 1,
    description: 'A php.ini directive set in a value (allow_url_include=1, auto_prepend_file=…, opcache.jit…=, engine=true)',
    targets: T,
    pattern: String.raw`(?:^|[\s;&"'-])${INI_DIRECTIVE}\s*=|^\s*${INI_WORD}\s*=`,
  },
  {
    id: 'php.filter_chain',
    category: 'php',
    paranoia_level: 1,
    in_prose: 'notice',
    description: "Conversion filters of php://filter, the pieces of a filter chain that writes PHP code out of charset conversions (convert.iconv.UTF8.CSISO2022KR, convert.base64-decode, convert.quoted-printable-encode)",
    targets: T,
    pattern: String.raw`\bconvert\.iconv\.[a-z0-9_:-]+\.[a-z0-9_:-]+|[|/=]\s*convert\.(?:base64|quoted-printable)-(?:en|de)code\b`,
  },
  {
    id: 'php.session_file_upload',
    category: 'php',
    paranoia_level: 1,
    description: 'An uploaded file named as a PHP session file (sess_<id>), which overwrites a session on servers that keep them beside uploads',
    targets: ['file_name'],
    pattern: String.raw`(?:^|[/\\])sess_[a-z0-9,-]{20,}\s*$`,
  },
  {
    id: 'php.disguised_script_upload',
    category: 'php',
    paranoia_level: 1,
    description: 'An uploaded PHP script named to slip past an extension check: dots or spaces after the extension (a.php.., photo.php␠, which Windows and some servers drop), a space before it (photo. php), or an extension only a PHP handler serves and no project keeps its files under (.php3–.php8, .pht, .phps, .pgif); a plain .php, a Magento template (.phtml), a PHP test (.phpt) or an archive (composer.phar) is php.script_upload',
    targets: ['file_name'],
    pattern: scriptUploadName(['php\\d*', 'phtml', 'pht', 'phpt', 'phps', 'phar', 'pgif'], ['php[3-8]', 'pht', 'phps', 'pgif']),
  },
  {
    id: 'php.script_upload',
    category: 'php',
    paranoia_level: 2,
    signal: { from: 1, severity: 'warning' },
    description: 'An uploaded file PHP or the web server would run or obey (.php, .phtml, .phar, .php7.gif, a.php.., photo. php, .htaccess, .user.ini): file-sharing and sync apps take such files as data, so level 1 only counts it',
    targets: ['file_name'],
    pattern: String.raw`\.\s*(?:php\d*|phtml|pht|phpt|phps|phar|pgif)[\s.]*$|\.(?:php\d?|phtml|pht|phps|phar|pgif|inc)\.[a-z0-9]{1,5}\s*$|(?:^|[/\\])\.(?:htaccess|user\.ini)\s*$`,
  },
];
