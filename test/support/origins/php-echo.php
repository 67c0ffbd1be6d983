<?php
// A PHP origin that answers what it parsed (test/support/origins/parsed-view.ts): the router
// script of `php -S 127.0.0.1:0 php-echo.php` (Debian's php-cli; started by php-echo.ts).
//
// What it reports is what PHP code reads:
//   - $_GET, $_POST, $_COOKIE and $_FILES as PHP's own parsers filled them ($_POST only for POST
//     with a form or multipart body; PHP ignores the charset a Content-Type names and undoes no
//     Content-Encoding);
//   - the JSON of php://input, decoded whatever the Content-Type says: the usual
//     `json_decode(file_get_contents('php://input'), true)` of PHP endpoints;
//   - the method as Symfony's Request::getMethod() (and so Laravel, which turns on the `_method`
//     parameter) dispatches it: for POST, X-HTTP-Method-Override, else `_method` from the body, else
//     from the query. Plain PHP honours no override; the big frameworks do.
//   - the base URL from X-Forwarded-Host, else Host, as hand-written PHP behind a proxy builds it.
declare(strict_types=1);

/** Nested PHP arrays as [path, value] pairs, paths in bracket form. */
function pairs(mixed $value, string $prefix, array &$out): void
{
    if (is_array($value)) {
        foreach ($value as $key => $item) pairs($item, $prefix === '' ? (string)$key : $prefix . '[' . $key . ']', $out);
        return;
    }
    $out[] = [$prefix, is_string($value) ? $value : json_encode($value)];
}

/** $_FILES in both of its layouts (one file per field, or arrays of name/size under `f[]` names). */
function files(array $uploads): array
{
    $out = [];
    $walk = function (string $field, mixed $names, mixed $sizes) use (&$walk, &$out): void {
        if (is_array($names)) {
            foreach ($names as $key => $name) $walk($field . '[' . $key . ']', $name, is_array($sizes) ? ($sizes[$key] ?? 0) : 0);
            return;
        }
        $out[] = ['field' => $field, 'filename' => (string)$names, 'size' => (int)$sizes];
    };
    foreach ($uploads as $field => $upload) $walk((string)$field, $upload['name'] ?? '', $upload['size'] ?? 0);
    return $out;
}

/** Symfony's Request::getMethod() with httpMethodParameterOverride on (Laravel's setting). */
function routedMethod(string $wire): string
{
    if ($wire !== 'POST') return $wire;
    $method = $_SERVER['HTTP_X_HTTP_METHOD_OVERRIDE'] ?? null;
    if ($method === null || $method === '') $method = $_POST['_method'] ?? $_GET['_method'] ?? 'POST';
    if (!is_string($method)) return $wire;
    $method = strtoupper($method);
    if (in_array($method, ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'PATCH', 'PURGE', 'TRACE'], true)) return $method;
    // Symfony throws SuspiciousOperationException for anything but letters; the request then fails.
    return preg_match('/^[A-Z]++$/D', $method) ? $method : $wire;
}

$input = file_get_contents('php://input');
$body = [];
pairs($_POST, '', $body);
$document = json_decode($input === false ? '' : $input, true);
if (is_array($document)) pairs($document, '', $body);
$query = [];
pairs($_GET, '', $query);
$cookies = [];
pairs($_COOKIE, '', $cookies);
$headers = [];
foreach (getallheaders() as $name => $value) $headers[] = [(string)$name, (string)$value];
$wire = $_SERVER['REQUEST_METHOD'] ?? '';
$uri = $_SERVER['REQUEST_URI'] ?? '/';
$host = $_SERVER['HTTP_X_FORWARDED_HOST'] ?? $_SERVER['HTTP_HOST'] ?? '';

$answer = json_encode([
    'framework' => 'php',
    'tag' => $_SERVER['HTTP_X_SHAPE'] ?? '',
    'method' => routedMethod($wire),
    'wireMethod' => $wire,
    'path' => (string)parse_url('http://x' . $uri, PHP_URL_PATH),
    'baseUrl' => 'http://' . $host,
    'query' => $query,
    'body' => $body,
    'cookies' => $cookies,
    'files' => files($_FILES),
    'headers' => $headers,
    // php://input is empty for multipart/form-data (PHP consumed it); CONTENT_LENGTH is what came.
    'bodyBytes' => (int)($_SERVER['CONTENT_LENGTH'] ?? strlen($input === false ? '' : $input)),
    'refused' => null,
], JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE | JSON_PARTIAL_OUTPUT_ON_ERROR);

header('Content-Type: application/json');
header('Content-Length: ' . strlen($answer));
echo $answer;
